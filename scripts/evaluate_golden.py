"""Score pipelines and rule-based sentence splitters on the English Golden Rules.

Usage (the default pipeline, the calibrated ``attn_segmenter`` and every available
splitter)::

    python scripts/evaluate_golden.py --out metrics/golden_rules

writes ``OUT.json`` and ``OUT.md`` (protocol: ``paper.golden``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.evaluation import SPLITTERS  # noqa: E402
from paper.golden import evaluate  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pipeline",
        action="append",
        help="a shipped pipeline name, folder or config (repeatable; default: "
        "default and attention)",
    )
    parser.add_argument("--splitters", nargs="*", default=list(SPLITTERS), choices=list(SPLITTERS))
    parser.add_argument("--out", type=Path, default=Path("metrics/golden_rules"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    pipelines = args.pipeline or ["default", "attention"]
    evaluate(pipelines, args.splitters, args.out, threads=args.threads)
    print(Path(f"{args.out}.md").read_text(encoding="utf8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
