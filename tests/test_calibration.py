"""Choosing layer, heads and threshold from gold sentence boundaries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, List, Sequence

import numpy
import pytest
import spacy
from conftest import EWT_DEV
from spacy.training import Example
from thinc.types import Ragged

import spacy_attnseg
from paper.evaluation import read_conllu_documents, to_spacy_examples
from spacy_attnseg.calibration import (
    CalibrationResult,
    Calibrator,
    Sweep,
    _DocData,
    calibrate_segmenter,
    search,
    sweep_threshold,
)
from spacy_attnseg.capture import COLSUM_HEADS
from spacy_attnseg.gold import GoldDocument
from spacy_attnseg.sentences import candidate_mask, decision_targets

# -- sweep_threshold -------------------------------------------------------------------


def f1(tp: int, n_pred: int, n_gold: int) -> float:
    if tp == 0:
        return 0.0
    p, r = tp / n_pred, tp / n_gold
    return 2 * p * r / (p + r)


def brute_force(scores: numpy.ndarray, gold: numpy.ndarray, n_gold: int) -> float:
    """The best F1 of ``scores >= t`` over every threshold t that keeps something."""
    best = 0.0
    for t in numpy.unique(scores[scores > 0]):
        keep = scores >= t
        best = max(best, f1(int((keep & gold).sum()), int(keep.sum()), n_gold))
    return best


@pytest.mark.parametrize("seed", range(30))
def test_sweep_threshold_matches_brute_force(seed: int) -> None:
    rng = numpy.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    # Coarse values give ties; some zeros (non-candidates) too.
    scores = numpy.round(rng.random(n), 1 if seed % 2 else 3)
    scores[rng.random(n) < 0.2] = 0.0
    gold = rng.random(n) < rng.uniform(0.1, 0.6)
    n_gold = int(gold.sum()) + int(rng.integers(0, 3))  # some gold starts are unreachable
    sweep = sweep_threshold(scores, gold, n_gold)
    expected = brute_force(scores, gold, n_gold) if n_gold else 0.0
    assert sweep.f == pytest.approx(expected, abs=1e-12)
    if sweep.f > 0:
        # Applying the returned threshold reproduces the reported scores ...
        keep = scores >= sweep.threshold
        tp = int((keep & gold).sum())
        assert sweep.p == pytest.approx(tp / keep.sum())
        assert sweep.r == pytest.approx(tp / n_gold)
        assert f1(tp, int(keep.sum()), n_gold) == pytest.approx(sweep.f)
        # ... and the threshold sits strictly between two observed scores.
        assert not numpy.isclose(scores, sweep.threshold).any()
        assert 0 < sweep.threshold < scores[keep].min() + 1e-12
    else:
        assert sweep == Sweep(0.0, 0.0, 0.0, 0.5)


def test_sweep_threshold_edge_cases() -> None:
    assert sweep_threshold(numpy.zeros(0), numpy.zeros(0, dtype=bool), 3).f == 0.0
    assert sweep_threshold(numpy.array([0.5]), numpy.array([True]), 0).f == 0.0
    assert sweep_threshold(numpy.zeros(4), numpy.ones(4, dtype=bool), 4).f == 0.0
    perfect = sweep_threshold(
        numpy.array([0.9, 0.1, 0.8, 0.2]), numpy.array([True, False, True, False]), 2
    )
    assert perfect.f == 1.0 and 0.2 < perfect.threshold < 0.8


# -- search on synthetic column sums ------------------------------------------------------


def synthetic_doc(nlp: Any, text: str, good_row: int, n_rows: int, rng: Any) -> _DocData:
    """One window: [CLS] tokens [SEP]; row ``good_row`` peaks exactly on the periods."""
    doc = nlp(text)
    length = len(doc) + 2
    align = Ragged(
        numpy.arange(1, len(doc) + 1, dtype="int32"), numpy.ones(len(doc), dtype="int32")
    )
    colsums = rng.random((1, n_rows, length)).astype("float32")
    colsums[0, :, [0, -1]] = 0.0
    colsums[0, good_row] = 0.1
    for token in doc:
        if token.text == ".":
            colsums[0, good_row, token.i + 1] = 3.0
    gold = numpy.zeros(len(doc), dtype=bool)
    for token in doc[1:]:
        gold[token.i] = doc[token.i - 1].text == "."
    targets, fixed = decision_targets(doc, paragraph_breaks=True)
    return _DocData(
        colsums=colsums,
        align=align,
        candidates=candidate_mask(doc, "punct"),
        targets=targets,
        fixed=fixed,
        gold=gold,
    )


def test_search_finds_the_informative_head(tmp_path: Path) -> None:
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    n_layers, n_heads = 3, 4
    good = 1 * n_heads + 2  # layer 1, head 2
    texts = [
        "We went home . It was late , so we slept . Then , the sun rose , again .",
        "Stop , look , listen . Birds sing ; dogs bark , too . Done .",
        "One , two . Three , four , five . Six .",
    ]
    docs = [synthetic_doc(nlp, text, good, n_layers * n_heads, rng) for text in texts]
    result = search(Calibrator(docs, n_layers, n_heads), max_heads=3)
    assert result.best_layer == 1 and 2 in result.best_heads
    assert result.best.f == pytest.approx(1.0)
    assert result.per_head.shape == (n_layers, n_heads)
    assert result.per_head[1, 2] == pytest.approx(1.0)
    assert numpy.delete(result.per_head.ravel(), good).max() < 1.0
    config = result.best_config()
    assert config["layers"] == [1] and 0 < config["threshold"] <= 1

    # Reports: json, markdown and the heatmap.
    result.write(tmp_path / "out")
    data = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert data["n_layers"] == 3 and data["n_heads"] == 4
    assert data["per_head_f"][1][2] == 100.0
    assert data["best"]["layers"] == [1] and data["best"]["f"] == pytest.approx(1.0)
    markdown = (tmp_path / "out" / "calibration.md").read_text()
    table = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + n_layers and "| h3 |" in table[0]
    assert "Chosen: layer 1" in markdown
    png = (tmp_path / "out" / "head_f1.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000


def test_calibration_result_write_handmade(tmp_path: Path) -> None:
    per_head = numpy.array([[0.5, 0.25], [0.75, 0.125]])
    result = CalibrationResult(
        n_layers=2,
        n_heads=2,
        per_head=per_head,
        per_head_threshold=numpy.full((2, 2), 0.5),
        per_layer_all_heads=[Sweep(0.6, 0.6, 0.6, 0.4), Sweep(0.7, 0.8, 0.6, 0.3)],
        best_layer=1,
        best_heads=[0],
        best=Sweep(0.75, 0.8, 0.7, 0.45),
    )
    result.write(tmp_path / "nested" / "dir")
    data = json.loads((tmp_path / "nested" / "dir" / "calibration.json").read_text())
    assert data["per_head_f"] == [[50.0, 25.0], [75.0, 12.5]]
    assert data["best"] == {
        "layers": [1],
        "heads": [0],
        "threshold": 0.45,
        "f": 0.75,
        "p": 0.8,
        "r": 0.7,
    }
    markdown = (tmp_path / "nested" / "dir" / "calibration.md").read_text()
    assert "| 1 | 75.0 | 12.5 | 70.0 |" in markdown
    assert (tmp_path / "nested" / "dir" / "head_f1.png").stat().st_size > 1000


# -- calibration through nlp.initialize on EWT dev --------------------------------------


def start_f1(nlp: Any, examples: Sequence[Example]) -> float:
    """Boundary F1 over tokens after the first (what calibration optimises)."""
    tp = n_pred = n_gold = 0
    texts: List[str] = [eg.predicted.text for eg in examples]
    for example, doc in zip(examples, nlp.pipe(texts, batch_size=16), strict=True):
        gold = {t.i for t in example.reference if t.i > 0 and t.is_sent_start}
        pred = {t.i for t in doc if t.i > 0 and t.is_sent_start}
        tp += len(gold & pred)
        n_pred += len(pred)
        n_gold += len(gold)
    return f1(tp, n_pred, n_gold)


def test_calibration_on_ewt_dev(tmp_path: Path) -> None:
    nlp = spacy_attnseg.load_pipeline("attention")
    segmenter = nlp.get_pipe("attn_segmenter")
    examples = to_spacy_examples(nlp, read_conllu_documents(EWT_DEV)[:40])
    assert len(examples) == 40
    before_cfg = {k: segmenter.cfg[k] for k in ("layers", "heads", "threshold")}
    before = start_f1(nlp, examples)

    nlp.initialize(lambda: examples)
    cfg = segmenter.cfg
    after_cfg = {k: cfg[k] for k in ("layers", "heads", "threshold")}
    assert after_cfg != before_cfg
    assert len(cfg["layers"]) == 1 and 0 <= cfg["layers"][0] < 6
    assert len(set(cfg["heads"])) == len(cfg["heads"]) <= 4
    assert all(0 <= h < 12 for h in cfg["heads"])
    assert 0 < cfg["threshold"] <= 1 and cfg["preset"] == ""
    assert not any(name.startswith("attnseg_calibration") for name in segmenter.capture.requests)

    nlp.to_disk(tmp_path / "calibrated")
    reloaded = spacy.load(tmp_path / "calibrated")
    got, want = dict(reloaded.get_pipe("attn_segmenter").cfg), dict(cfg)
    # srsly's JSON reader may be off in the last bit (0.3 -> 0.30000000000000004).
    assert got.pop("threshold") == pytest.approx(want.pop("threshold"), abs=1e-12)
    assert got == want
    after = start_f1(reloaded, examples)
    assert after >= before - 1e-12, (before, after, before_cfg, after_cfg)
    assert after > 0.6

    # The reloaded pipeline captures the calibrated heads.
    doc = reloaded(examples[0].predicted.text)
    heads = numpy.asarray(doc._.trf_data.model_output[COLSUM_HEADS])[0].tolist()
    layer = cfg["layers"][0]
    assert heads == sorted([layer, h] for h in (cfg["heads"] or range(12)))


def test_calibration_needs_sentence_starts_inside_documents() -> None:
    """Examples of one sentence each hold no boundary inside a text, and every head
    scores F1 0 on them: ``calibrate`` stops with E009, which says why, and
    ``nlp.initialize`` (as ``spacy train`` runs it on a corpus converted a sentence a
    document) warns W006 and keeps the configured settings (it chose layer 0, head 0,
    threshold 0.5)."""
    nlp = spacy_attnseg.load_pipeline("attention")
    segmenter = nlp.get_pipe("attn_segmenter")
    before = {k: segmenter.cfg[k] for k in ("layers", "heads", "threshold")}
    documents = read_conllu_documents(EWT_DEV)[:3]
    sentences = [GoldDocument(s, [0]) for d in documents for s in d.sentences()]
    single = to_spacy_examples(nlp, sentences)
    assert len(single) > 10 and all(eg.reference.has_annotation("SENT_START") for eg in single)
    n = len(single)
    inside = rf"none of the {n} examples with gold sentences holds a sentence start after its"
    with pytest.raises(ValueError, match=rf"\[E009\] .*{inside}"):
        calibrate_segmenter(segmenter, single)
    with pytest.raises(ValueError, match=r"\[E009\] .*none of the 0 examples has sentence"):
        calibrate_segmenter(segmenter, [])
    bare = [Example(nlp.make_doc(d.text), nlp.make_doc(d.text)) for d in documents]
    with pytest.raises(ValueError, match=r"none of the 3 examples has sentence annotation"):
        calibrate_segmenter(segmenter, bare)
    with pytest.warns(UserWarning, match=r"\[W006\] 'attn_segmenter' was not calibrated"):
        nlp.initialize(lambda: single)
    assert {k: segmenter.cfg[k] for k in before} == before
    # documents of several sentences still calibrate (test_calibration_on_ewt_dev)
    examples = to_spacy_examples(nlp, documents)
    assert len(calibrate_segmenter(segmenter, examples).trail)
    # at most max_heads heads a layer, a whole number of at least 1 (0 summed one head)
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match=re.escape(f"[E015] Invalid `max_heads` {bad!r}:")):
            calibrate_segmenter(segmenter, examples, max_heads=bad)
    result = calibrate_segmenter(segmenter, examples, max_heads=1)
    assert all(len(step["heads"]) == 1 for step in result.trail)


def test_best_threshold_prefers_a_plateau_to_a_spike() -> None:
    """Smoothed over neighbouring thresholds: one perfect threshold between bad ones
    loses to a run of thresholds that each add one false start."""
    from spacy_attnseg.calibration import SENTER_THRESHOLDS, best_threshold

    rng = numpy.random.default_rng(0)
    gold = [rng.random(30) < 0.2 for _ in range(4)]
    for g in gold:
        g[0] = True
    n_gold = sum(int(g[1:].sum()) for g in gold)
    spike = SENTER_THRESHOLDS[5]
    plateau = SENTER_THRESHOLDS[20:24]

    def decide(threshold: float) -> List[numpy.ndarray]:
        if threshold == spike:
            return [g.copy() for g in gold]
        if threshold in plateau:
            preds = [g.copy() for g in gold]
            preds[0][numpy.flatnonzero(~gold[0])[0]] = True  # one false start
            return preds
        return [~g for g in gold]

    threshold, f1 = best_threshold(decide, gold)  # type: ignore[misc]
    assert threshold in plateau[1:-1]
    assert f1 == round(100 * 2 * n_gold / (2 * n_gold + 1), 1)
    assert best_threshold(lambda t: [numpy.zeros(3, bool)], [numpy.zeros(3, bool)]) is None


def test_tune_senter_thresholds_saves_what_it_chose(tmp_path: Path) -> None:
    """The thresholds chosen on dev documents reach the component's cfg and config.cfg
    of the saved pipeline, and the dev F1 recorded is that of the reloaded pipeline's
    sentences on those documents, counted here."""
    from spacy.tokens import DocBin

    from spacy_attnseg import load_pipeline
    from spacy_attnseg.calibration import tune_senter_thresholds
    from spacy_attnseg.features import lacks_final_punct

    nlp = load_pipeline("default")
    nlp.to_disk(tmp_path / "model")
    docs = read_conllu_documents(EWT_DEV)[:8]
    docs += read_conllu_documents(EWT_DEV, strip_final_punct=True)[8:16]
    references = [eg.reference for eg in to_spacy_examples(nlp, docs)]
    DocBin(docs=references).to_disk(tmp_path / "dev.spacy")
    chosen = tune_senter_thresholds(tmp_path / "model", tmp_path / "dev.spacy")
    assert chosen["n_docs"]["punct"] > 0 and chosen["n_docs"]["no_punct"] > 0
    loaded = spacy.load(tmp_path / "model")
    senter = loaded.get_pipe("attn_senter")
    for key in ("threshold", "threshold_no_punct", "threshold_unmarked"):
        # (the properties round away the float noise of the cfg file's JSON reader)
        assert getattr(senter, key) == chosen[key]
        assert loaded.config["components"]["attn_senter"][key] == chosen[key]
    counts = {False: [0, 0, 0], True: [0, 0, 0]}  # tp, predicted, gold
    for reference in references:
        doc = loaded(reference.text)
        pred = {s.start for s in doc.sents} - {0}
        gold = {s.start for s in reference.sents} - {0}
        group = counts[lacks_final_punct(doc)]
        group[0] += len(pred & gold)
        group[1] += len(pred)
        group[2] += len(gold)
    # the pipeline decides with all three thresholds: on documents with punctuation, its
    # F1 is the one recorded for threshold_unmarked
    punct = "punct" if chosen["threshold_unmarked"] is None else "punct_unmarked"
    for unpunct, name in ((False, punct), (True, "no_punct")):
        tp, n_pred, n_gold = counts[unpunct]
        assert chosen["dev_f1"][name] == round(100 * 2 * tp / (n_pred + n_gold), 1)
