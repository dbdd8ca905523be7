"""Boundary P/R/F1 of a pipeline when the same sentences are joined by spaces, written one
per line, or hard-wrapped at 72 characters, with or without a blank line below every line;
protocol: ``paper.trained.evaluate_layouts``.

Usage (the held-out EWT dev part of the boundary data, as written and without final
punctuation)::

    python scripts/evaluate_layouts.py corpus/boundaries/dev.spacy --out metrics/layouts
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.trained import evaluate_layouts  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help=".spacy file with gold sentence starts")
    parser.add_argument("--pipeline", default="default", help="a pipeline name, folder or config")
    parser.add_argument("--out", type=Path, default=Path("metrics/layouts"))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    evaluate_layouts(
        args.data,
        args.out,
        pipeline=args.pipeline,
        batch_size=args.batch_size,
        threads=args.threads,
    )
    print(Path(f"{args.out}.md").read_text(encoding="utf8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
