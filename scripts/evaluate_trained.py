"""Evaluate trained sentence-boundary pipelines and their peers on UD English EWT test;
protocol: ``paper.trained``.

Usage::

    python scripts/evaluate_trained.py \
        --pipeline attn_senter=training/boundaries/model-best \
        --pipeline senter_listener=training/senter_listener/model-best \
        --pipeline senter_listener_window=training/senter_listener_window/model-best \
        --pipeline attn_segmenter=attention \
        --out metrics/trained_boundaries
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.evaluation import SPLITTERS  # noqa: E402
from paper.trained import VARIANT_SETS, evaluate  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a pipeline directory or config to evaluate (repeatable)",
    )
    parser.add_argument(
        "--test", type=Path, default=Path("data/UD_English-EWT/en_ewt-ud-test.conllu")
    )
    parser.add_argument("--out", type=Path, default=Path("metrics/trained_boundaries"))
    parser.add_argument("--splitters", nargs="*", default=list(SPLITTERS), choices=list(SPLITTERS))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--variants",
        choices=list(VARIANT_SETS),
        default="punctuation",
        help="the variants of the documents scored (paper.trained.VARIANT_SETS): with and "
        "without punctuation; laid out by their paragraphs; with footnote markers glued",
    )
    parser.add_argument(
        "--note",
        action="append",
        default=[],
        metavar="TEXT",
        help="a line about the run, written under the table (repeatable)",
    )
    args = parser.parse_args(argv)
    evaluate(
        args.pipeline,
        args.test,
        args.out,
        splitters=args.splitters,
        batch_size=args.batch_size,
        threads=args.threads,
        variants=args.variants,
        notes=args.note,
    )
    print(Path(f"{args.out}.md").read_text(encoding="utf8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
