"""Sentence-boundary P/R/F1 of attn_segmenter and the rule-based splitters on UD EWT.

Run by ``scripts/evaluate_boundaries.py`` (``spacy project run evaluate-boundaries``)::

    python scripts/evaluate_boundaries.py --config configs/minilm.cfg \
        --dev data/UD_English-EWT/en_ewt-ud-dev.conllu \
        --test data/UD_English-EWT/en_ewt-ud-test.conllu --out metrics/boundaries

Systems, all scored with the protocol of ``paper.evaluation`` (micro-averaged
boundary P/R/F1, whitespace-insensitive, document start not counted) on the test file,
on the raw text and on the "no-punct" variant (sentence-final . ! ? removed, lowercased):

* ``attn_segmenter`` as the config gives it (the embedded MiniLM config: calibrated
  layer, heads and threshold);
* ``attn_segmenter`` with the paper's recipe (``preset = "paper"``: final layer, all
  heads, any token may be a separator). Its threshold is chosen on the **dev** file only:
  the pipeline runs once over dev, and every threshold of a grid (0.01 .. 1.00, step
  0.01) is applied to the separator scores it stored; the threshold with the best
  boundary F1 on dev raw text is kept (ties: the lowest). The F1 curve on dev no-punct
  is recorded too but is not used. The test run then uses the real component with that
  threshold (``--paper-threshold`` skips the sweep);
* every splitter in ``paper.evaluation.SPLITTERS`` (spaCy's ``sentencizer``
  among them).

Docs/s: the pipelines run with ``nlp.pipe(batch_size=16)`` (``--batch-size``) and torch
limited to ``--threads`` threads (default 2), after one untimed warm-up call; the time
covers the whole pipeline (tokenizer, transformer, segmenter) and reading the sentence
starts. Splitters are timed by ``evaluate_splitter`` (its split calls only).

Writes ``OUT.json`` (rows, the chosen threshold, the dev sweep, settings) and ``OUT.md``
(one table and notes).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from .evaluation import (
    SPLITTERS,
    VARIANTS,
    GoldDocument,
    cpu_seconds,
    doc_sentence_starts,
    machine_settings,
    read_conllu_variants,
    report_row,
    score_boundaries,
    splitter_rows,
    write_table,
)

THRESHOLDS = [round(0.01 * i, 2) for i in range(1, 101)]
PAPER_OVERRIDES = "components.attn_segmenter.preset"
THRESHOLD_OVERRIDE = "components.attn_segmenter.threshold"


# Controls for the config's attention: the same candidates with no attention (every
# candidate ends a sentence), and all punctuation as candidates with the heads calibrated
# for it on EWT dev (reports/calibration_punct).
CONTROL_ROWS: List[Tuple[str, Dict[str, Any]]] = [
    ("attn_segmenter (candidates alone, threshold 1e-6)", {THRESHOLD_OVERRIDE: 1e-6}),
    (
        "attn_segmenter (all punctuation, layer 2 heads 2+9, thr 0.49)",
        {
            "components.attn_segmenter.candidates": "punct",
            "components.attn_segmenter.layers": [2],
            "components.attn_segmenter.heads": [2, 9],
            THRESHOLD_OVERRIDE: 0.49,
        },
    ),
]


def load(config: str, overrides: Dict[str, Any], threads: int) -> Any:
    """The pipeline of ``config`` with ``overrides``; torch limited to ``threads``."""
    import torch

    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(threads)
    nlp = load_pipeline(config, overrides=overrides)
    if "attn_segmenter" not in nlp.pipe_names:
        raise SystemExit(f"{config}: the pipeline has no attn_segmenter ({nlp.pipe_names})")
    nlp("Warm up. Done.")
    return nlp


def run_pipeline(
    nlp: Any, docs: Sequence[GoldDocument], batch_size: int
) -> Tuple[List[List[int]], float, Dict[str, float]]:
    """Sentence starts of every document, the docs/s of the whole pipeline, and the
    wall and CPU seconds it took (CPU time is less sensitive to a shared machine)."""
    t0 = time.perf_counter()
    c0 = cpu_seconds()
    predicted = [
        doc_sentence_starts(doc)
        for doc in nlp.pipe([gold.text for gold in docs], batch_size=batch_size)
    ]
    elapsed = time.perf_counter() - t0
    timing = {"wall_s": round(elapsed, 2), "cpu_s": round(cpu_seconds() - c0, 2)}
    return predicted, len(docs) / elapsed if elapsed > 0 else float("inf"), timing


Collected = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]


def collect_scores(nlp: Any, docs: Sequence[GoldDocument], batch_size: int) -> List[Collected]:
    """Per document: separator scores, the component's decision in sweepable form
    (``sentences.decision_targets``: the start each separator makes and the starts made
    whatever the scores), and the character offset of each token."""
    from spacy_attnseg.sentences import decision_targets

    segmenter = nlp.get_pipe("attn_segmenter")
    out = []
    for doc in nlp.pipe([gold.text for gold in docs], batch_size=batch_size):
        scores = numpy.asarray(doc._.separator_scores or [0.0] * len(doc), dtype="float64")
        idx = numpy.array([token.idx for token in doc], dtype="int64")
        targets, fixed = decision_targets(doc, paragraph_breaks=segmenter.paragraph_breaks)
        out.append((scores, targets, fixed, idx))
    return out


def starts_at(collected: Sequence[Collected], threshold: float) -> List[List[int]]:
    """Character sentence starts at ``threshold``, decided as ``attn_segmenter`` does
    (``sentences.decide_starts``)."""
    from spacy_attnseg.sentences import starts_from_targets

    return [
        idx[starts_from_targets(targets, fixed, scores, threshold)].tolist()
        for scores, targets, fixed, idx in collected
    ]


def sweep(
    collected: Sequence[Collected],
    docs: Sequence[GoldDocument],
) -> List[Dict[str, Any]]:
    """Boundary scores at every threshold of the grid."""
    rows = []
    for threshold in THRESHOLDS:
        scores = score_boundaries(docs, starts_at(collected, threshold))
        rows.append({"threshold": threshold, **scores.to_dict(), "f_exact": scores.f})
    return rows


def choose_paper_threshold(
    config: str,
    dev: Dict[str, List[GoldDocument]],
    threads: int,
    batch_size: int,
) -> Dict[str, Any]:
    """Sweep the paper preset's threshold on dev; keep the best F1 on dev raw text."""
    nlp = load(config, {PAPER_OVERRIDES: "paper", THRESHOLD_OVERRIDE: 0.5}, threads)
    curves: Dict[str, List[Dict[str, Any]]] = {}
    for variant, docs in dev.items():
        t0 = time.perf_counter()
        collected = collect_scores(nlp, docs, batch_size)
        curves[variant] = sweep(collected, docs)
        print(
            f"paper preset dev sweep ({variant}): {time.perf_counter() - t0:.0f}s",
            file=sys.stderr,
        )
    best: Dict[str, Any] = {}
    for variant, curve in curves.items():
        top = max(curve, key=lambda row: (row["f_exact"], -row["threshold"]))
        best[variant] = {k: v for k, v in top.items() if k != "f_exact"}
    for curve in curves.values():
        for row in curve:
            row.pop("f_exact")
    return {
        "selected_on": "dev raw",
        "threshold": best["raw"]["threshold"],
        "dev_at_threshold": {
            variant: next(r for r in curve if r["threshold"] == best["raw"]["threshold"])
            for variant, curve in curves.items()
        },
        "dev_best_per_variant": best,
        "grid": [THRESHOLDS[0], THRESHOLDS[-1], 0.01],
        "dev_curves": curves,
    }


def evaluate_attn(
    name: str,
    config: str,
    overrides: Dict[str, Any],
    test: Dict[str, List[GoldDocument]],
    threads: int,
    batch_size: int,
) -> Tuple[List[Dict[str, Any]], Dict[str, Any]]:
    nlp = load(config, overrides, threads)
    cfg = dict(nlp.get_pipe("attn_segmenter").cfg)
    rows = []
    for variant, docs in test.items():
        predicted, docs_per_s, timing = run_pipeline(nlp, docs, batch_size)
        scores = score_boundaries(docs, predicted)
        scores.docs_per_s = docs_per_s
        rows.append({"system": name, "variant": variant, **scores.to_dict(), **timing})
        report_row(rows[-1])
    return rows, cfg


def evaluate(
    config: str,
    dev_path: Path,
    test_path: Path,
    out: Path,
    *,
    threads: int = 2,
    batch_size: int = 16,
    paper_threshold: Optional[float] = None,
    splitters: Sequence[str] = tuple(SPLITTERS),
) -> Dict[str, Any]:
    """Score every system on ``test_path`` (module docstring), the paper preset's
    threshold chosen on ``dev_path`` unless given; writes ``OUT.json`` and ``OUT.md`` and
    returns what the JSON holds."""
    started = time.perf_counter()
    load_before = os.getloadavg()

    test = read_conllu_variants(test_path)
    rows: List[Dict[str, Any]] = []

    rows_cal, cfg_cal = evaluate_attn(
        "attn_segmenter (config)", config, {}, test, threads, batch_size
    )
    rows += rows_cal
    for name, overrides in CONTROL_ROWS:
        rows += evaluate_attn(name, config, overrides, test, threads, batch_size)[0]

    if paper_threshold is None:
        dev = read_conllu_variants(dev_path)
        selection = choose_paper_threshold(config, dev, threads, batch_size)
    else:
        selection = {"selected_on": "given (--paper-threshold)", "threshold": paper_threshold}
    chosen = float(selection["threshold"])
    rows_paper, cfg_paper = evaluate_attn(
        f"attn_segmenter (paper preset, thr {chosen:.2f})",
        config,
        {PAPER_OVERRIDES: "paper", THRESHOLD_OVERRIDE: chosen},
        test,
        threads,
        batch_size,
    )
    rows += rows_paper

    rows += splitter_rows(splitters, test)

    rows.sort(key=lambda row: list(VARIANTS).index(row["variant"]))
    n_docs = len(test["raw"])
    title = (
        f"Sentence boundaries on {test_path.name} ({n_docs} documents; boundary P/R/F1 x100, "
        "whitespace-insensitive, document start not counted)"
    )
    path_md = Path(f"{out}.md")
    path_json = Path(f"{out}.json")
    write_table(rows, path_md, path_json, title)

    elapsed = time.perf_counter() - started
    settings = {
        "config": str(config),
        "dev": str(dev_path),
        "test": str(test_path),
        "torch_threads": threads,
        "batch_size": batch_size,
        **machine_settings(load_before),
        "runtime_s": round(elapsed, 1),
        "process_cpu_s": round(cpu_seconds(), 1),
    }
    payload = json.loads(path_json.read_text(encoding="utf8"))
    payload.update(
        {
            "settings": settings,
            "attn_segmenter_config": _plain(cfg_cal),
            "paper_preset_config": _plain(cfg_paper),
            "paper_threshold_selection": selection,
        }
    )
    path_json.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf8")

    notes = [
        "",
        "Notes:",
        "",
        f"- attn_segmenter (config): `{config}` as given: layers {cfg_cal['layers']}, "
        f"heads {cfg_cal['heads'] or 'all'}, threshold {cfg_cal['threshold']}, "
        f"candidates {cfg_cal['candidates']!r}.",
        f"- attn_segmenter (paper preset): final layer, all heads, any token may be a "
        f"separator; threshold {chosen:.2f}, {_selection_note(selection)}",
        f"- docs/s: whole pipeline, `nlp.pipe(batch_size={batch_size})`, "
        f"{threads} torch threads, CPU; splitters: their split calls only. "
        f"attn_segmenter wall/CPU seconds for the {n_docs} documents: "
        + "; ".join(
            f"{row['system'].split(' (')[1].split(',')[0].rstrip(')')} {row['variant']} "
            f"{row['wall_s']:.0f}/{row['cpu_s']:.0f}"
            for row in rows
            if "cpu_s" in row
        )
        + ".",
        "- no-punct: each sentence's final run of . ! ? removed and the text lowercased "
        "(gold starts recomputed on that text).",
        f"- runtime of the command: {elapsed:.0f} s wall, {settings['process_cpu_s']:.0f} s "
        f"CPU; 1-min load average before/after {settings['load_average_before'][0]}/"
        f"{settings['load_average_after'][0]} on {settings['machine']} (the machine is shared: "
        "a load above the number of CPUs slows every docs/s figure).",
    ]
    with path_md.open("a", encoding="utf8") as handle:
        handle.write("\n".join(notes) + "\n")
    print(path_md.read_text(encoding="utf8"))
    return payload


def _selection_note(selection: Dict[str, Any]) -> str:
    if "dev_at_threshold" not in selection:
        return "given on the command line."
    raw = selection["dev_at_threshold"]["raw"]
    nop = selection["dev_at_threshold"]["no-punct"]
    best_nop = selection["dev_best_per_variant"]["no-punct"]
    return (
        f"chosen on EWT dev raw text by a sweep over 0.01..1.00 (step 0.01): dev F1 "
        f"{raw['f']:.1f} raw, {nop['f']:.1f} no-punct at that threshold (the best dev "
        f"no-punct F1, {best_nop['f']:.1f}, would be at {best_nop['threshold']:.2f}; not used)."
    )


def _plain(cfg: Dict[str, Any]) -> Dict[str, Any]:
    return json.loads(json.dumps(cfg, default=str))
