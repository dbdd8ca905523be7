"""Sentence-boundary P/R/F1 of attn_segmenter (as configured, controls, the paper preset
with its threshold chosen on dev) and the rule-based splitters on UD EWT test; protocol:
``paper.boundaries``.

    python scripts/evaluate_boundaries.py --config configs/minilm.cfg \
        --dev data/UD_English-EWT/en_ewt-ud-dev.conllu \
        --test data/UD_English-EWT/en_ewt-ud-test.conllu --out metrics/boundaries
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.boundaries import evaluate  # noqa: E402
from paper.evaluation import SPLITTERS  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/minilm.cfg", help="config or pipeline dir")
    parser.add_argument(
        "--dev", type=Path, default=Path("data/UD_English-EWT/en_ewt-ud-dev.conllu")
    )
    parser.add_argument(
        "--test", type=Path, default=Path("data/UD_English-EWT/en_ewt-ud-test.conllu")
    )
    parser.add_argument(
        "--out", type=Path, default=Path("metrics/boundaries"), help="writes OUT.json, OUT.md"
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument(
        "--paper-threshold",
        type=float,
        default=None,
        help="use this threshold for the paper preset instead of sweeping it on dev",
    )
    parser.add_argument("--splitters", nargs="*", default=list(SPLITTERS), choices=list(SPLITTERS))
    args = parser.parse_args(argv)
    evaluate(
        args.config,
        args.dev,
        args.test,
        args.out,
        threads=args.threads,
        batch_size=args.batch_size,
        paper_threshold=args.paper_threshold,
        splitters=args.splitters,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
