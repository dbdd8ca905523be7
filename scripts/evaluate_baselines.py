"""Score every available rule-based sentence splitter on a CoNLL-U file.

Usage::

    python scripts/evaluate_baselines.py data/UD_English-EWT/en_ewt-ud-test.conllu \
        metrics/baselines

runs each splitter in ``paper.evaluation.SPLITTERS`` on the raw text
and on the "no punctuation" variant (sentence-final . ! ? removed, lowercased)
and writes ``metrics/baselines.json`` and ``metrics/baselines.md``. Splitters
whose library is not installed are listed as unavailable with the reason.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.evaluation import (  # noqa: E402
    SPLITTERS,
    read_conllu_variants,
    splitter_rows,
    write_table,
)


def main(argv: List[str] | None = None) -> int:
    """Parse arguments, evaluate the splitters, write and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("conllu", type=Path, help="CoNLL-U file with # newdoc / # text")
    parser.add_argument(
        "out_prefix", type=Path, help="output path without suffix; writes .json and .md"
    )
    parser.add_argument(
        "--splitters",
        nargs="+",
        default=list(SPLITTERS),
        choices=list(SPLITTERS),
        help="subset of splitters to run (default: all)",
    )
    args = parser.parse_args(argv)

    corpora = read_conllu_variants(args.conllu)
    rows = splitter_rows(args.splitters, corpora)

    n_docs = len(corpora["raw"])
    title = (
        f"Rule-based sentence splitters on {args.conllu.name} ({n_docs} documents; "
        "boundary P/R/F1 x100, whitespace-insensitive, document start not counted)"
    )
    path_md = Path(f"{args.out_prefix}.md")
    path_json = Path(f"{args.out_prefix}.json")
    write_table(rows, path_md, path_json, title)
    print(path_md.read_text(encoding="utf8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
