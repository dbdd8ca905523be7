"""Long Docs in bounded memory: the transformer runs in chunks of windows when a component
captures from it, ``attn_senter`` reads ranges of tokens, ``token_values`` gathers a
slice of rows at a time and the segment similarity is a band. Each gives the result of
the one-piece computation, checked here against it."""

from __future__ import annotations

from typing import Any, List

import numpy
import pytest
from conftest import long_sample_text
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spacy_attnseg import capture
from spacy_attnseg import windows as windows_module
from spacy_attnseg.capture import CONTEXT, HIDDEN, LOCAL
from spacy_attnseg.components import senter as senter_module
from spacy_attnseg.features import DocRange, doc_features, spec_of
from spacy_attnseg.segments import (
    BandedSimilarity,
    block_average,
    blocks_from_separators,
    semantic_segments,
)


@pytest.fixture(scope="module")
def long_text() -> str:
    return long_sample_text(6000)


def _arrays(doc: Any) -> List[numpy.ndarray]:
    output = doc._.trf_data.model_output
    found = [numpy.asarray(output.last_hidden_state)]
    found += [numpy.asarray(a) for a in output.get(CONTEXT, ())]
    if HIDDEN in output:
        found.append(numpy.asarray(output[HIDDEN]))
    found += [numpy.asarray(a) for a in output.get(LOCAL, ())]
    return found


def test_chunked_forward_gives_the_whole_batch_outputs(
    minilm_nlp: Any, long_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows run in chunks (here 3 windows of ~170 wordpieces at a time) give the
    hidden states and captured arrays of one pass over the whole batch at the windows'
    wordpieces."""
    trf = minilm_nlp.get_pipe("transformer")
    cap = capture.AttentionCapture.attach(trf.model)
    cap.request("test_chunks", capture.CaptureRequest(context_layers=(1, 3), hidden_last=2))
    try:
        monkeypatch.setattr(capture, "CHUNK_WORDPIECES", 10**9)
        monkeypatch.setattr(capture, "CHUNK_LENGTH_SHARE", 0.0)
        whole = trf(minilm_nlp.make_doc(long_text))
        n_windows = whole._.trf_data.wordpieces.input_ids.shape[0]
        assert n_windows > 6
        monkeypatch.setattr(capture, "CHUNK_WORDPIECES", 3 * 180)
        calls = cap.forward_calls
        chunked = trf(minilm_nlp.make_doc(long_text))
        assert cap.forward_calls == calls + 1
        real = numpy.asarray(chunked._.trf_data.wordpieces.attention_mask) > 0
        for a, b in zip(_arrays(whole), _arrays(chunked), strict=True):
            assert a.shape == b.shape
            # float rounding of passes of other sizes, on values up to about 5
            numpy.testing.assert_allclose(a[real], b[real], rtol=1e-4, atol=1e-4)
    finally:
        cap.withdraw("test_chunks")


def test_chunked_column_sums_equal_the_whole_batch(
    minilm_nlp: Any, long_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(capture, "CHUNK_WORDPIECES", 10**9)
    whole = minilm_nlp(long_text)
    monkeypatch.setattr(capture, "CHUNK_WORDPIECES", 400)
    chunked = minilm_nlp(long_text)
    numpy.testing.assert_allclose(
        whole._.separator_scores, chunked._.separator_scores, rtol=1e-5, atol=1e-6
    )
    assert [t.is_sent_start for t in whole] == [t.is_sent_start for t in chunked]


def test_features_of_a_range_are_those_in_the_whole_doc(default_nlp: Any, long_text: str) -> None:
    senter = default_nlp.get_pipe("attn_senter")
    features = senter.model.get_ref("features")
    doc = default_nlp.get_pipe("transformer")(default_nlp.make_doc(long_text))
    spec = spec_of(features)
    heads, layers = features.attrs["n_heads"], features.attrs["n_layers"]
    whole = doc_features(doc, spec, n_heads=heads, n_layers=layers)
    for start, end in ((0, 7), (5, 300), (len(doc) - 40, len(doc)), (150, 151)):
        for part in (DocRange(doc, start, end), doc[start:end]):
            got = doc_features(part, spec, n_heads=heads, n_layers=layers)
            numpy.testing.assert_array_equal(got, whole[start:end])


def test_senter_reads_a_long_doc_in_ranges(
    default_nlp: Any, long_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """P(S) and sentences do not depend on how many tokens the model reads at once."""
    monkeypatch.setattr(senter_module, "PREDICT_TOKENS", 10**9)
    whole = default_nlp(long_text)
    for size in (50, 9):
        monkeypatch.setattr(senter_module, "PREDICT_TOKENS", size)
        doc = default_nlp(long_text)
        assert [t.is_sent_start for t in doc] == [t.is_sent_start for t in whole]
        numpy.testing.assert_allclose(doc._.start_scores, whole._.start_scores, atol=1e-5)


def test_token_values_gathers_in_slices(
    minilm_nlp: Any, long_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = minilm_nlp.get_pipe("transformer")(minilm_nlp.make_doc(long_text))
    data = doc._.trf_data
    values = data.model_output.last_hidden_state
    whole = windows_module.token_values(values, data.align, len(doc))
    monkeypatch.setattr(windows_module, "GATHER_ROWS", 7)
    numpy.testing.assert_array_equal(
        windows_module.token_values(values, data.align, len(doc)), whole
    )


# -- the banded segment similarity ------------------------------------------------------


def _reference_segments(separators: numpy.ndarray, S: numpy.ndarray, merge_threshold: float):
    """The merge rule written out on the dense block averages (segments' docstring)."""
    blocks = blocks_from_separators(separators)
    M = block_average(S, blocks)
    n_blocks = M.shape[0]
    starts = [int(numpy.flatnonzero(blocks == b)[0]) for b in range(n_blocks)]
    bounds = [0]
    for a in range(n_blocks - 1):
        finite = [v for v in (M[a, a], M[a + 1, a + 1]) if numpy.isfinite(v)]
        cross = 0.5 * (M[a, a + 1] + M[a + 1, a])
        ref = sum(finite) / len(finite) if finite else 0.0
        if not (finite and ref > 0 and cross >= merge_threshold * ref):
            bounds.append(starts[a + 1])
    bounds.append(len(blocks))
    out = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        region = S[start:end, start:end]
        n = end - start
        out.append(
            (start, end, 0.0 if n < 2 else (region.sum() - numpy.trace(region)) / (n * n - n))
        )
    return out


@settings(max_examples=60, deadline=None)
@example(n=24, band=1, seed=0, merge=0.0)  # blocks whose other similarities are all 0
@given(
    n=st.integers(1, 40),
    band=st.integers(1, 45),
    seed=st.integers(0, 2**16),
    merge=st.sampled_from([0.0, 0.4, 0.75, 1.0]),
)
def test_banded_segments_equal_the_dense_rule(n: int, band: int, seed: int, merge: float) -> None:
    rng = numpy.random.default_rng(seed)
    dense = rng.random((n, n))
    offsets = numpy.abs(numpy.arange(n)[:, None] - numpy.arange(n)[None, :])
    dense[offsets >= band] = 0.0
    separators = rng.random(n) < 0.3
    banded = BandedSimilarity.from_dense(dense)
    want = _reference_segments(separators, 0.5 * (dense + dense.T), merge)
    got = semantic_segments(separators, banded, merge_threshold=merge)
    assert [(s, e) for s, e, _ in got] == [(s, e) for s, e, _ in want]
    numpy.testing.assert_allclose([x for _, _, x in got], [x for _, _, x in want], atol=1e-9)
    # a band no wider than needed gives the same
    tight = BandedSimilarity(banded.values[:, : max(1, min(band, n))])
    narrow = semantic_segments(separators, tight, merge_threshold=merge)
    assert [(s, e) for s, e, _ in narrow] == [(s, e) for s, e, _ in got]
    numpy.testing.assert_allclose([x for _, _, x in narrow], [x for _, _, x in got], atol=1e-12)
    numpy.testing.assert_allclose(tight.to_dense(), 0.5 * (dense + dense.T), atol=1e-12)
