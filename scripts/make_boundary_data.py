"""Build the sentence-boundary training and dev data of ``attn_senter`` (``.spacy`` files);
what they hold: ``paper.boundary_data``.

Usage::

    python scripts/make_boundary_data.py corpus/boundaries \
        --ewt data/UD_English-EWT/en_ewt-ud-dev.conllu --wikitext data/wikitext-2/wiki.test.raw
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.boundary_data import build  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="writes train.spacy, dev.spacy, stats.json")
    parser.add_argument(
        "--ewt", type=Path, default=Path("data/UD_English-EWT/en_ewt-ud-dev.conllu")
    )
    parser.add_argument(
        "--ewt-train",
        type=Path,
        default=None,
        help="a treebank (UD English EWT train) whose every document is training data",
    )
    parser.add_argument("--wikitext", type=Path, default=Path("data/wikitext-2/wiki.test.raw"))
    parser.add_argument("--no-wikitext", action="store_true", help="EWT dev only")
    parser.add_argument("--dev-fraction", type=float, default=0.2)
    parser.add_argument(
        "--wiki-words", type=int, default=100000, help="WikiText words to use (both variants)"
    )
    parser.add_argument("--wiki-min-words", type=int, default=40)
    parser.add_argument("--wiki-max-words", type=int, default=300)
    parser.add_argument(
        "--wiki-raw-fraction",
        type=float,
        default=0.3,
        help="share of the WikiText documents kept raw; the rest lose their punctuation",
    )
    parser.add_argument(
        "--short-share",
        type=float,
        default=0.0,
        help="share of 2-3-sentence runs of the EWT training documents added as documents "
        "of their own (0: none, the shipped recipe)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        stats = build(
            args.out_dir,
            ewt=args.ewt,
            wikitext=None if args.no_wikitext else args.wikitext,
            dev_fraction=args.dev_fraction,
            wiki_words=args.wiki_words,
            wiki_min_words=args.wiki_min_words,
            wiki_max_words=args.wiki_max_words,
            wiki_raw_fraction=args.wiki_raw_fraction,
            seed=args.seed,
            short_share=args.short_share,
            ewt_train=args.ewt_train,
        )
    except ValueError as error:
        parser.error(str(error))
    for name, row in stats.items():
        counts = f"{row['docs']:6d} docs {row['sentences']:7d} sents {row['words']:8d} words"
        print(f"{name:18s} {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
