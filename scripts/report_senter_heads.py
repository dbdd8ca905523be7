"""Which attention heads carry the weight in a trained ``attn_senter``; what is measured:
``paper.senter_heads``.

Usage::

    python scripts/report_senter_heads.py training/boundaries/model-best \
        --data corpus/boundaries/dev.spacy --out metrics/senter_heads
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.senter_heads import report  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path, help="a trained pipeline directory")
    parser.add_argument("--data", type=Path, default=None, help=".spacy file for ablation")
    parser.add_argument("--out", type=Path, default=Path("metrics/senter_heads"))
    parser.add_argument("--component", default="attn_senter")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    markdown = report(
        args.model,
        args.out,
        data=args.data,
        component=args.component,
        top=args.top,
        threads=args.threads,
    )
    print(markdown)
    print(f"wrote {args.out}.json, {args.out}.md, {args.out}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
