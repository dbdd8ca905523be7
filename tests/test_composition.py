"""Components compose: any order after one transformer gives each component the same
results as alone; captured data outlives its last reader only; a removed or disabled
component captures nothing; config overrides at ``spacy.load`` take effect."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy
import pytest
import spacy
from conftest import DATA
from spacy.language import Language
from spacy.training import Example

import spacy_attnseg
from spacy_attnseg.capture import COLSUMS, CONTEXT, LOCAL

COMPONENTS = ("attn_segmenter", "attn_senter", "attn_head_pairs")
TEXTS = [
    "The war ended in 1945. The airport police left the airport. Nobody came back.",
    "It rained all day. We stayed inside and read. The next morning was clear.",
]


def _starts(doc: Any) -> List[int]:
    return [t.i for t in doc if t.is_sent_start]


def _pipeline(order: Tuple[str, ...], senter_bytes: bytes) -> Language:
    nlp = spacy_attnseg.load_pipeline("attention")
    nlp.remove_pipe("attn_segmenter")
    for name in order:
        if name == "attn_segmenter":
            # the shipped calibration, and the sentences it sets are not overwritten
            nlp.add_pipe(name, config={"layers": [3], "heads": [0, 5], "threshold": 0.1305})
        elif name == "attn_senter":
            senter = nlp.add_pipe(name).from_bytes(senter_bytes)
            senter.cfg["overwrite"] = True
        else:
            nlp.add_pipe(name, config={"layers": [1, -1]})
    return nlp


@pytest.fixture(scope="module")
def senter_bytes() -> bytes:
    """An initialized (untrained, deterministic) attn_senter's state."""
    nlp = spacy_attnseg.load_pipeline("attention")
    senter = nlp.add_pipe("attn_senter")
    docs = [nlp.make_doc(t) for t in TEXTS]
    senter.initialize(lambda: [Example(d, d.copy()) for d in docs], nlp=nlp)
    return senter.to_bytes()


@pytest.fixture(scope="module")
def alone(senter_bytes: bytes) -> Dict[str, List[Any]]:
    """What each component gives when it is the only one after the transformer."""
    out: Dict[str, List[Any]] = {}
    for name in COMPONENTS:
        nlp = _pipeline((name,), senter_bytes)
        out[name] = [_result(name, doc) for doc in nlp.pipe(TEXTS)]
    return out


def _result(name: str, doc: Any) -> Any:
    if name == "attn_segmenter":
        return (tuple(doc._.separator_scores),)
    if name == "attn_senter":
        return None  # compared through the sentences it sets (it overwrites)
    pairs = doc._.head_pairs
    return (pairs.to_dict()["layer"].tolist(), pairs.to_dict()["i"].tolist())


@pytest.mark.parametrize("order", list(itertools.permutations(COMPONENTS)))
def test_every_order_gives_each_component_its_own_results(
    order: Tuple[str, ...], senter_bytes: bytes, alone: Dict[str, List[Any]]
) -> None:
    nlp = _pipeline(order, senter_bytes)
    docs = list(nlp.pipe(TEXTS))
    for name in COMPONENTS:
        if name != "attn_senter":
            assert [_result(name, d) for d in docs] == alone[name], (order, name)
    # attn_senter overwrites, so the sentences are its own, whatever came before
    reference = _pipeline(("attn_senter",), senter_bytes)
    assert [_starts(d) for d in docs] == [_starts(d) for d in reference.pipe(TEXTS)]
    assert not nlp.analyze_pipes()["problems"] or all(
        not v for v in nlp.analyze_pipes()["problems"].values()
    )


def test_head_pairs_before_segmenter_keeps_the_segmenter_sentences() -> None:
    alone_nlp = spacy_attnseg.load_pipeline("attention")
    both = spacy_attnseg.load_pipeline("attention")
    both.add_pipe("attn_head_pairs", before="attn_segmenter")
    for a, b in zip(alone_nlp.pipe(TEXTS), both.pipe(TEXTS), strict=True):
        assert _starts(a) == _starts(b)
        assert len(b._.head_pairs) > 0
    problems = both.analyze_pipes()["problems"]
    assert all(not v for v in problems.values()), problems


def test_two_head_pairs_with_different_layers() -> None:
    nlp = spacy_attnseg.load_pipeline("attention")
    nlp.add_pipe("attn_head_pairs", name="first", config={"layers": [0]})
    nlp.add_pipe("attn_head_pairs", name="last", config={"layers": [-1]})
    # each writes doc._.head_pairs, so the second one's layers are what is left
    doc = nlp(TEXTS[0])
    assert set(doc._.head_pairs.to_dict()["layer"].tolist()) <= {5}
    assert len(doc._.head_pairs) > 0
    # captured head outputs are gone after the last reader
    assert CONTEXT not in doc._.trf_data.model_output


def test_removed_or_disabled_component_captures_nothing() -> None:
    nlp = spacy_attnseg.load_pipeline("attention")
    nlp.add_pipe("attn_head_pairs", config={"layers": []})
    assert CONTEXT not in nlp(TEXTS[0])._.trf_data.model_output  # released after use
    with nlp.select_pipes(disable=["attn_head_pairs"]):
        doc = nlp(TEXTS[0])
    assert CONTEXT not in doc._.trf_data.model_output
    assert COLSUMS in doc._.trf_data.model_output  # the segmenter still reads its heads
    nlp.remove_pipe("attn_head_pairs")
    nlp.remove_pipe("attn_segmenter")
    output = nlp(TEXTS[0])._.trf_data.model_output
    assert CONTEXT not in output and COLSUMS not in output


def test_config_override_at_load_takes_effect(tmp_path: Path) -> None:
    nlp = spacy_attnseg.load_pipeline("attention")
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p", config={"components.attn_segmenter.threshold": 0.9})
    assert loaded.get_pipe("attn_segmenter").threshold == 0.9
    assert loaded.config["components"]["attn_segmenter"]["threshold"] == 0.9
    plain = spacy.load(tmp_path / "p")
    assert plain.get_pipe("attn_segmenter").threshold == pytest.approx(0.1305)
    # a higher threshold keeps a subset of the separators
    a, b = plain(TEXTS[0]), loaded(TEXTS[0])
    assert set(_starts(b)) <= set(_starts(a))
    assert numpy.allclose(a._.separator_scores, b._.separator_scores)


def test_components_sourced_into_another_pipeline_run_there(default_nlp: Language) -> None:
    """Components added to a new pipeline with ``add_pipe(..., source=...)`` (the same
    objects) give the sentences and segments of the pipeline they came from, also after
    that pipeline removes them; where it disables them, they stop with E006 (not
    segments from other vectors) until ``attach`` ties them to the pipeline that runs
    them; a component removed and dropped stops capturing."""
    text = (DATA / "wikipedia" / "three_leads.txt").read_text("utf8")

    def result(doc: Any) -> Tuple[List[int], List[Tuple[int, int]]]:
        segments = [(span.start, span.end) for span in doc.spans["attn_segments"]]
        return _starts(doc), segments

    expected = result(default_nlp(text))
    assert len(expected[1]) > 1
    source = spacy_attnseg.load_pipeline()
    nlp = spacy.blank("en")
    for name in source.pipe_names:
        nlp.add_pipe(name, source=source)
    assert result(nlp(text)) == expected
    for name in ("attn_senter", "attn_segmenter"):
        error = rf"\[E006\].*'{name}'.*attach\(nlp\)"
        with source.select_pipes(disable=[name]), pytest.raises(ValueError, match=error):
            nlp(text)
    source.remove_pipe("attn_segmenter")
    assert result(nlp(text)) == expected
    for name in ("attn_senter", "attn_segmenter"):
        nlp.get_pipe(name).attach(nlp)
    with source.select_pipes(disable=["attn_senter"]):
        assert result(nlp(text)) == expected
    # removed from the pipeline that runs it and dropped: it no longer captures
    nlp.remove_pipe("attn_segmenter")
    output = nlp(text)._.trf_data.model_output
    assert LOCAL not in output
