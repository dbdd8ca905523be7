"""Train a sentence-boundary pipeline with ``spacy train`` on 2 CPU threads and time it.

Usage::

    python scripts/train_boundaries.py configs/attn_senter.cfg training/boundaries \
        --paths.train corpus/boundaries/train.spacy --paths.dev corpus/boundaries/dev.spacy

Runs spaCy's own training loop (``spacy.cli.train.train``, the function behind
``python -m spacy train``) in this process after setting PyTorch to ``--threads`` threads,
so the measured time is the training's alone. Writes ``model-best`` and ``model-last``
under the output directory, as ``spacy train`` does, and ``training.json`` with the
wall-clock and CPU seconds, the machine's load average before and after (other work on
the machine slows the wall clock), the config, the overrides and the best dev score. Extra
``--section.key value`` arguments are config overrides, as for ``spacy train``.

With ``--tune-thresholds`` (on by default for pipelines with an ``attn_senter``) the
saved ``model-best`` then gets its decision thresholds chosen on the dev data (the
``--paths.dev`` file, never the test set): ``threshold`` maximises boundary F1 on the dev
documents with sentence-final punctuation and ``threshold_no_punct`` on those without
(``spacy_attnseg.features.lacks_final_punct``, the rule the component applies), each the
best of a 0.05..0.8 grid after smoothing F1 over neighbouring grid points. They are
written into the component's ``cfg`` (and ``config.cfg``) of ``model-best`` and
recorded in ``training.json`` with the dev F1 at each (the project's boundary protocol);
the time counts as training time (``spacy_attnseg.calibration.tune_senter_thresholds``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import List


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch CPU threads")
    parser.add_argument(
        "--tune-thresholds",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="choose the attn_senter thresholds of model-best on the dev data",
    )
    args, rest = parser.parse_known_args(argv)
    from spacy.cli._util import parse_config_overrides

    overrides = parse_config_overrides(rest)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import torch

    torch.set_num_threads(args.threads)
    from spacy.cli.train import train

    args.output.mkdir(parents=True, exist_ok=True)
    start, cpu_start = time.perf_counter(), time.process_time()
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    train(args.config, args.output, use_gpu=-1, overrides=overrides)
    thresholds = None
    best_dir = args.output / "model-best"
    if args.tune_thresholds and (best_dir / "attn_senter").exists():
        from spacy.util import load_config

        from spacy_attnseg.calibration import tune_senter_thresholds

        dev = overrides.get("paths.dev") or load_config(args.config)["paths"]["dev"]
        thresholds = tune_senter_thresholds(best_dir, Path(dev))
        print(f"thresholds chosen on {dev}: {thresholds}")
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    meta_path = args.output / "model-best" / "meta.json"
    performance = {}
    if meta_path.exists():
        performance = json.loads(meta_path.read_text(encoding="utf8")).get("performance", {})
    record = {
        "config": str(args.config),
        "overrides": overrides,
        "threads": args.threads,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "load_average_1min": [load_start, load_end],
        "best_dev": performance,
        "thresholds": thresholds,
    }
    (args.output / "training.json").write_text(json.dumps(record, indent=2) + "\n", "utf8")
    print(f"training took {seconds / 60:.1f} min; wrote {args.output}/training.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
