"""Ship a trained ``attn_senter``: weights, model card and the derived config
(``paper.ship`` says what is written where).

Usage::

    python scripts/ship_senter.py training/boundaries/model-best \
        --data corpus/boundaries/stats.json --metrics metrics/trained_boundaries.json
    python scripts/ship_senter.py training/boundaries_mpnet/model-best --model mpnet \
        --metrics metrics/trained_boundaries_mpnet.json --system attn_senter_mpnet
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.ship import TARGETS, ship  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model_best", type=Path, help="the trained pipeline (model-best)")
    parser.add_argument("--data", type=Path, default=Path("corpus/boundaries/stats.json"))
    parser.add_argument("--metrics", type=Path, default=None, help="evaluate_trained.py JSON")
    parser.add_argument("--system", default="attn_senter", help="its row in --metrics")
    parser.add_argument("--model", choices=sorted(TARGETS), default="minilm")
    args = parser.parse_args(argv)
    target = TARGETS[args.model]
    meta = ship(args.model_best, target, data=args.data, metrics=args.metrics, system=args.system)
    print(f"wrote {target.folder} ({meta['model_bytes'] / 1e6:.1f} MB) and {target.config_out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
