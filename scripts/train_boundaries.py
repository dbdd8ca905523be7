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
the time counts as training time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

THRESHOLD_GRID = [round(0.05 + 0.025 * i, 3) for i in range(31)]  # 0.05 .. 0.8


def best_threshold(
    decide: Callable[[float], Sequence[Any]], gold: Sequence[Any]
) -> Optional[Tuple[float, float]]:
    """The grid threshold with the best boundary F1 (first token of a doc not counted),
    F1 smoothed over each grid point and its two neighbours, and the F1 (unsmoothed) at
    it; None without gold starts.
    ``decide(threshold)`` gives the predicted starts of every doc (``AttnSenter.decide``,
    so that the threshold is chosen for the decisions the component makes)."""
    import numpy

    if not gold or not sum(int(g[1:].sum()) for g in gold):
        return None
    scores = []
    for threshold in THRESHOLD_GRID:
        tp = n_pred = n_gold = 0
        for pred, g in zip(decide(threshold), gold, strict=True):
            pred = numpy.asarray(pred, dtype=bool)[1:]
            tp += int((pred & g[1:]).sum())
            n_pred += int(pred.sum())
            n_gold += int(g[1:].sum())
        scores.append(2 * tp / max(1, n_pred + n_gold))
    padded = numpy.pad(numpy.asarray(scores), 1, mode="edge")
    smoothed = (padded[:-2] + padded[1:-1] + padded[2:]) / 3
    best = int(numpy.argmax(smoothed))
    return THRESHOLD_GRID[best], round(100 * float(scores[best]), 1)


def tune_thresholds(model_dir: Path, dev_path: Path, name: str = "attn_senter") -> Dict[str, Any]:
    """Choose the attn_senter thresholds of a saved pipeline on dev data and save them."""
    import numpy
    import spacy
    from spacy.training import Corpus
    from spacy.util import load_config

    from spacy_attnseg.features import lacks_final_punct

    nlp = spacy.load(model_dir)
    senter = nlp.get_pipe(name)
    examples = list(Corpus(str(dev_path))(nlp))
    trf = nlp.get_pipe(senter.cfg["transformer"])
    docs = list(trf.pipe([eg.predicted for eg in examples]))
    probs = senter.predict_proba(docs)
    gold = [
        numpy.array([tag == 1 for tag in eg.get_aligned("SENT_START")], dtype=bool)
        for eg in examples
    ]
    groups: Dict[bool, List[int]] = {False: [], True: []}
    for i, doc in enumerate(docs):
        groups[lacks_final_punct(doc)].append(i)
    chosen: Dict[str, Any] = {
        "n_docs": {"punct": len(groups[False]), "no_punct": len(groups[True])}
    }
    chosen["dev_f1"] = {}
    for key, unpunct in (("threshold", False), ("threshold_no_punct", True)):
        group = groups[unpunct]
        best = best_threshold(
            lambda threshold, group=group: [
                senter.decide(docs[i], probs[i], threshold) for i in group
            ],
            [gold[i] for i in group],
        )
        chosen[key] = None if best is None else best[0]
        if best is not None:
            senter.cfg[key] = best[0]
            chosen["dev_f1"]["no_punct" if unpunct else "punct"] = best[1]
    nlp.to_disk(model_dir)
    # nlp.config is a copy: write the chosen values into the saved config.cfg too (the
    # component's cfg file, which from_disk reads last, already holds them).
    config_path = model_dir / "config.cfg"
    config = load_config(config_path, interpolate=False)
    for key in ("threshold", "threshold_no_punct"):
        if chosen[key] is not None:
            config["components"][name][key] = chosen[key]
    config.to_disk(config_path)
    return chosen


def parse_overrides(args: List[str]) -> Dict[str, Any]:
    """``--a.b value`` pairs into a dict of config overrides (JSON values where they parse)."""
    overrides: Dict[str, Any] = {}
    i = 0
    while i < len(args):
        key = args[i]
        if not key.startswith("--") or "." not in key:
            raise SystemExit(f"unexpected argument {key!r}: use --section.key value")
        if "=" in key:
            key, value = key.split("=", 1)
            i += 1
        else:
            if i + 1 >= len(args):
                raise SystemExit(f"missing value for {key}")
            value = args[i + 1]
            i += 2
        try:
            overrides[key[2:]] = json.loads(value)
        except json.JSONDecodeError:
            overrides[key[2:]] = value
    return overrides


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
    overrides = parse_overrides(rest)
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

        dev = overrides.get("paths.dev") or load_config(args.config)["paths"]["dev"]
        thresholds = tune_thresholds(best_dir, Path(dev))
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
