"""Wordpieces of overlapping windows <-> spaCy tokens (spacy_attnseg.windows)."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from thinc.types import Ragged

from spacy_attnseg import windows
from spacy_attnseg.windows import (
    TokenPooling,
    doc_wordpiece_counts,
    group_sums,
    token_values,
    token_wordpiece_counts,
    window_length,
    wordpiece_tokens,
)


def ragged(rows_per_token: Sequence[Sequence[int]]) -> Ragged:
    data = numpy.array([r for rows in rows_per_token for r in rows], dtype="int32")
    lengths = numpy.array([len(rows) for rows in rows_per_token], dtype="int32")
    return Ragged(data, lengths)


def naive_token_values(values: numpy.ndarray, rows_per_token: Sequence[Sequence[int]]) -> Any:
    """Loop version: per token, max over its wordpieces within each window, then the
    mean over the windows it appears in; 0 for tokens without wordpieces."""
    n_windows, length, width = values.shape
    out = numpy.zeros((len(rows_per_token), width))
    for token, rows in enumerate(rows_per_token):
        per_window: Dict[int, List[numpy.ndarray]] = {}
        for row in rows:
            window, position = divmod(int(row), length)
            per_window.setdefault(window, []).append(values[window, position])
        if per_window:
            maxima = [numpy.max(numpy.stack(v), axis=0) for v in per_window.values()]
            out[token] = numpy.mean(maxima, axis=0)
    return out


# Three windows of width 5; rows are window * 5 + position.
HAND_ROWS = [
    [0],  # t0: window 0
    [2, 1],  # t1: two wordpieces of window 0, listed out of order
    [],  # t2: whitespace, no wordpiece
    [3, 5],  # t3: end of window 0 and start of window 1 (overlap)
    [7, 4, 10, 6],  # t4: window 0, two pieces of window 1, window 2
    [11, 8],  # t5: windows 1 and 2
    [],  # t6: trailing whitespace
]


def test_token_values_hand_example() -> None:
    values = numpy.array(
        [[[10 * w + p] for p in range(5)] for w in range(3)], dtype="float32"
    )  # values[w, p] = 10 w + p
    out = token_values(values, ragged(HAND_ROWS), len(HAND_ROWS))
    assert out.shape == (7, 1) and out.dtype == numpy.float32
    # t3: mean(3, 10); t4: mean(4, max(11, 12), 20); t5: mean(13, 21)
    assert out[:, 0].tolist() == [0.0, 2.0, 0.0, 6.5, 12.0, 17.0, 0.0]
    numpy.testing.assert_allclose(out, naive_token_values(values, HAND_ROWS))


@pytest.mark.parametrize("seed", range(5))
def test_token_values_random_against_loop(seed: int) -> None:
    rng = numpy.random.default_rng(seed)
    n_windows, length, width, n_tokens = 4, 9, 3, 25
    values = rng.normal(size=(n_windows, length, width)).astype("float32")
    rows_per_token: List[List[int]] = []
    for _ in range(n_tokens):
        n = int(rng.integers(0, 5))
        rows_per_token.append([int(r) for r in rng.choice(n_windows * length, n, replace=False)])
    out = token_values(values, ragged(rows_per_token), n_tokens)
    numpy.testing.assert_allclose(out, naive_token_values(values, rows_per_token), rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_one_pooling_serves_every_array_and_overwrites_out(seed: int) -> None:
    """A TokenPooling worked out once gives every array of the same windows what
    token_values gives it alone, also written into a matrix full of other numbers
    (tokens without wordpieces get 0 there too), and in chunks of a few rows."""
    rng = numpy.random.default_rng(seed)
    n_windows, length, n_tokens = 3, 8, 20
    rows_per_token: List[List[int]] = [
        [int(r) for r in rng.choice(n_windows * length, int(rng.integers(0, 4)), replace=False)]
        for _ in range(n_tokens)
    ]
    align = ragged(rows_per_token)
    arrays = [rng.normal(size=(n_windows, length, w)).astype("float32") for w in (2, 5)]
    pooling = TokenPooling.of(align, length, n_tokens)
    for values in arrays:
        out = numpy.full((n_tokens, values.shape[2]), 7.0, dtype="float32")
        pooling.apply(values, out)
        numpy.testing.assert_array_equal(out, token_values(values, align, n_tokens))
        numpy.testing.assert_allclose(out, naive_token_values(values, rows_per_token), rtol=1e-6)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(windows, "GATHER_ROWS", 3)
        small = TokenPooling.of(align, length, n_tokens)
        assert len(small.chunks) > 1
        numpy.testing.assert_allclose(
            small.apply(arrays[0]), token_values(arrays[0], align, n_tokens), rtol=1e-6
        )


@pytest.mark.parametrize("seed", range(3))
def test_token_values_of_any_layout_and_float_type(seed: int) -> None:
    """The rows are copied to the CPU as C-ordered float32 whatever the array's layout
    and float type (a transposed view, float64, float16), and pooled as the loop does."""
    rng = numpy.random.default_rng(seed)
    n_windows, length, width, n_tokens = 3, 7, 4, 15
    rows_per_token = [
        [int(r) for r in rng.choice(n_windows * length, int(rng.integers(0, 4)), replace=False)]
        for _ in range(n_tokens)
    ]
    values = rng.normal(size=(n_windows, length, width))
    expected = naive_token_values(values, rows_per_token)
    transposed = numpy.ascontiguousarray(values.transpose(2, 1, 0)).transpose(2, 1, 0)
    assert not transposed.flags.c_contiguous
    for array, tolerance in ((transposed, 1e-6), (values, 1e-6), (values.astype("float16"), 2e-3)):
        flat = array.reshape(-1, width)
        gathered = windows.gather_rows(flat, numpy.array([4, 0, 4]))
        assert gathered.dtype == numpy.float32 and gathered.flags.c_contiguous
        numpy.testing.assert_array_equal(gathered, flat[[4, 0, 4]].astype("float32"))
        out = token_values(array, ragged(rows_per_token), n_tokens)
        numpy.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance)


def test_token_values_no_wordpieces() -> None:
    values = numpy.ones((2, 4, 1), dtype="float32")
    out = token_values(values, ragged([[], []]), 2)
    assert out.tolist() == [[0.0], [0.0]]


def test_wordpiece_tokens_hand_example() -> None:
    rows = [r[:] for r in HAND_ROWS]
    rows[5] = [11, 8, 2]  # wordpiece row 2 is shared by t1 and t5: t1 keeps it
    out = wordpiece_tokens(ragged(rows), 3, 5)
    assert out.tolist() == [
        [0, 1, 1, 3, 4],
        [3, 4, 4, 5, -1],
        [4, 5, -1, -1, -1],
    ]


def test_token_wordpiece_counts_hand_example() -> None:
    """A wordpiece that several tokens share counts for the first of them, and a span
    that starts at a later one reads it too; a token counts in its first window."""
    rows = [
        [1],  # t0 "do" ...
        [1, 2, 3],  # t1 "n't": "don" (shared with t0), "'", "t"
        [],  # t2 whitespace
        [4],  # t3, t4, t5: three emoji that the model reads as one [UNK]
        [4],
        [4],
    ]
    sizes = token_wordpiece_counts(ragged(rows), 5, len(rows))
    assert sizes.counts.tolist() == [1, 2, 0, 1, 0, 0]
    assert sizes.inside.tolist() == [0, 1, 0, 0, 1, 1]
    spans = [(0, 2), (1, 2), (3, 6), (4, 6), (5, 6), (2, 3)]
    assert [sizes.span(a, b) for a, b in spans] == [3, 3, 1, 1, 1, 0]
    assert sizes.span(0, 6) == 4 and sizes.span(3, 3) == 0
    # runs from each start to the next: the span of each
    assert sizes.runs(numpy.array([0, 1, 4, 5])).tolist() == [1, 4, 1, 1]
    assert sizes.runs(numpy.array([0, 3])).tolist() == [sizes.span(0, 3), sizes.span(3, 6)]
    assert sizes.runs(numpy.array([], dtype="int64")).tolist() == []
    # over overlapping windows: each token in its first window
    overlapping = token_wordpiece_counts(ragged(HAND_ROWS), 5, len(HAND_ROWS))
    assert overlapping.counts.tolist() == [1, 2, 0, 1, 1, 1, 0]
    assert overlapping.inside.tolist() == [0] * len(HAND_ROWS)


def test_span_wordpieces_are_what_the_tokenizer_reads(minilm_nlp: Any) -> None:
    """Over several windows of real text with contractions and runs of emoji (tokens
    that share wordpieces), every span's count is what the model's tokenizer reads in
    the span's text alone."""
    text = " ".join(
        f"I don't know {i}, you can't say 😂😂😂 and they're here ★★ #{i} too." for i in range(30)
    )
    doc = minilm_nlp(text)
    assert doc._.trf_data.wordpieces.input_ids.shape[0] > 1  # several windows
    tokenizer = minilm_nlp.get_pipe("transformer").model.tokenizer
    sizes = doc_wordpiece_counts(doc)
    assert int(sizes.counts.sum()) == len(tokenizer.tokenize(text))
    assert sizes.inside.sum() >= 90  # "n't", "'re" and the later emoji of each run
    for a in range(len(doc)):
        for b in range(a + 1, min(a + 8, len(doc)) + 1):
            assert sizes.span(a, b) == len(tokenizer.tokenize(doc[a:b].text)), doc[a:b]
    starts = numpy.array([0, *range(3, len(doc), 5)])
    bounds = [*starts.tolist(), len(doc)]
    runs = zip(bounds[:-1], bounds[1:], strict=True)
    expected = [len(tokenizer.tokenize(doc[a:b].text)) for a, b in runs]
    assert sizes.runs(starts).tolist() == expected


def test_real_alignment(minilm_nlp: Any, sample_text: str) -> None:
    """On a real multi-window doc, token_values equals the loop and every token with
    wordpieces is found by wordpiece_tokens."""
    doc = minilm_nlp(sample_text)
    trf_data = doc._.trf_data
    n_windows, length = trf_data.wordpieces.input_ids.shape
    assert window_length(trf_data) == length
    align = trf_data.align
    lengths = numpy.asarray(align.lengths)
    data = numpy.asarray(align.dataXd).ravel()
    rows_per_token = numpy.split(data, numpy.cumsum(lengths)[:-1])
    assert any(len({r // length for r in rows}) > 1 for rows in rows_per_token)
    rng = numpy.random.default_rng(0)
    values = rng.random((n_windows, length, 2)).astype("float32")
    numpy.testing.assert_allclose(
        token_values(values, align, len(doc)),
        naive_token_values(values, rows_per_token),
        rtol=1e-6,
    )
    owners = wordpiece_tokens(align, n_windows, length)
    for token, rows in enumerate(rows_per_token):
        for row in rows:
            assert owners.ravel()[row] <= token
    tokens_found = set(owners[owners >= 0].tolist())
    assert tokens_found == {t for t, rows in enumerate(rows_per_token) if len(rows)}
    # [CLS]/[SEP]/padding belong to no token.
    strings = trf_data.wordpieces.strings
    for w in range(n_windows):
        for p in range(length):
            if p >= len(strings[w]) or strings[w][p] in ("[CLS]", "[SEP]", "[PAD]"):
                assert owners[w, p] == -1


@settings(max_examples=200, deadline=None)
@given(
    groups=st.lists(st.integers(0, 12), max_size=60),
    n_groups=st.integers(0, 15),
    seed=st.integers(0, 2**16),
)
def test_group_sums_equal_unbuffered_addition(groups: List[int], n_groups: int, seed: int) -> None:
    """``group_sums`` (sorted runs, reduceat) equals ``numpy.add.at`` row by row."""
    values = numpy.random.default_rng(seed).normal(size=(len(groups), 3)).astype("float32")
    index = numpy.asarray(groups, dtype="int64")
    n = max(n_groups, int(index.max()) + 1 if len(index) else 0)
    expected = numpy.zeros((n, 3), dtype="float64")
    numpy.add.at(expected, index, values)
    result = group_sums(values, index, n_groups)
    assert result.shape == expected.shape
    numpy.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


def test_fitted_spans_split_only_windows_the_model_cannot_read(minilm_nlp: Any) -> None:
    """Windows within the model's wordpiece budget are kept as they are, even with more
    bytes than the budget; a window over it is cut into consecutive pieces that cover
    it and that each fit (counted by the model's tokenizer on the piece's text)."""
    model = minilm_nlp.get_pipe("transformer").model
    fitted = model.attrs["get_spans"]
    tokenizer = model.tokenizer
    budget = fitted.budget()

    def n_pieces(text: str) -> int:
        return len(tokenizer(text, add_special_tokens=False)["input_ids"])

    plain = minilm_nlp.make_doc(" ".join(["wonderful"] * 300))
    dense = minilm_nlp.make_doc(" ".join(["x9q7z3k1w8v2"] * 300))
    inner = fitted.get_spans([plain, dense])
    assert all(len(s.text.encode("utf8")) > budget and n_pieces(s.text) <= budget for s in inner[0])
    assert any(n_pieces(s.text) > budget for s in inner[1])

    out = fitted([plain, dense])
    assert [(s.start, s.end) for s in out[0]] == [(s.start, s.end) for s in inner[0]]
    pieces = out[1]
    assert len(pieces) > len(inner[1])
    assert all(n_pieces(s.text) <= budget for s in pieces)
    cursor = 0
    for window in inner[1]:
        # the window's pieces come next, in order, and cover it end to end
        own = []
        for piece in pieces[cursor:]:
            if piece.end > window.end:
                break
            own.append(piece)
        assert own[0].start == window.start and own[-1].end == window.end
        assert all(a.end == b.start for a, b in zip(own[:-1], own[1:], strict=True))
        cursor += len(own)
    assert cursor == len(pieces)
