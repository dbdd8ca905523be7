"""The paper's Fig. 5 segments against WikiText-2 sections: Pk and WindowDiff, tuned on
the first half of the articles and reported on the second (protocol: ``paper.sections``).

    python scripts/evaluate_segments.py --wikitext data/wikitext-2/wiki.test.raw \
        --config configs/minilm.cfg --out metrics/fig5_segments
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.evaluation import SPLITTERS  # noqa: E402
from paper.sections import evaluate  # noqa: E402


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wikitext", type=Path, default=Path("data/wikitext-2/wiki.test.raw"))
    parser.add_argument("--config", default="configs/minilm.cfg", help="config or pipeline dir")
    parser.add_argument("--out", type=Path, default=Path("metrics/fig5_segments"))
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--batch-size", type=int, default=4, help="articles per nlp.pipe batch")
    parser.add_argument("--splitter", default="punkt", choices=list(SPLITTERS))
    parser.add_argument(
        "--max-articles", type=int, default=None, help="use at most N articles of each half"
    )
    parser.add_argument(
        "--subsections", action="store_true", help="sub-sections start reference segments too"
    )
    parser.add_argument(
        "--texttiling-tuning",
        action="store_true",
        help="also run NLTK TextTiling on the tuning half (not tuned; about 1 min more)",
    )
    args = parser.parse_args(argv)
    evaluate(
        args.wikitext,
        args.config,
        args.out,
        threads=args.threads,
        batch_size=args.batch_size,
        splitter=args.splitter,
        max_articles=args.max_articles,
        subsections=args.subsections,
        texttiling_tuning=args.texttiling_tuning,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
