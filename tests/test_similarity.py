"""Tests for spacy_attnseg.similarity (context similarity, high-similarity pairs, mapping)."""

from __future__ import annotations

import numpy
import pytest

from spacy_attnseg.pairs import HeadPairs
from spacy_attnseg.similarity import (
    WordpiecePairs,
    context_similarity,
    high_similarity_pairs,
    layer_token_pairs,
    map_pairs_to_tokens,
    segment_similarity,
)


def _reference_pairs(context, wp_mask, n_heads, heads=None, threshold=0.3):
    """Direct per-window, per-head loop over the paper's recipe (Sec. 3)."""
    n_win, length, width = context.shape
    d = width // n_heads
    heads = range(n_heads) if heads is None else heads
    rows = []
    for h in heads:
        for w in range(n_win):
            H = context[w, :, h * d : (h + 1) * d].astype(numpy.float64)
            S = H @ H.T
            numpy.fill_diagonal(S, 0.0)
            m = wp_mask[w]
            S[~m, :] = 0.0
            S[:, ~m] = 0.0
            mx = S.max()
            if mx <= 0:
                continue
            N = S / mx
            for i in range(length):
                for j in range(i + 1, length):
                    if m[i] and m[j] and N[i, j] >= threshold:
                        rows.append((h, w, i, j, N[i, j]))
    return rows


def _as_rows(p: WordpiecePairs):
    return [
        (int(h), int(w), int(i), int(j), float(s))
        for h, w, i, j, s in zip(p.head, p.window, p.i, p.j, p.score, strict=True)
    ]


def test_context_similarity_matches_per_head_product():
    rng = numpy.random.default_rng(0)
    ctx = rng.normal(size=(2, 5, 3 * 4)).astype("float32")
    sim = numpy.asarray(context_similarity(ctx, 3))
    assert sim.shape == (2, 3, 5, 5)
    for w in range(2):
        for h in range(3):
            H = ctx[w, :, h * 4 : (h + 1) * 4]
            numpy.testing.assert_allclose(sim[w, h], H @ H.T, rtol=1e-5, atol=1e-5)
    sub = numpy.asarray(context_similarity(ctx, 3, heads=[2, 0]))
    numpy.testing.assert_allclose(sub[:, 0], sim[:, 2], rtol=1e-6)
    numpy.testing.assert_allclose(sub[:, 1], sim[:, 0], rtol=1e-6)


def test_context_similarity_validates():
    ctx = numpy.zeros((1, 3, 10), dtype="float32")
    with pytest.raises(ValueError, match=r"\[E110\] similarity.context_similarity: .*divisible"):
        context_similarity(ctx, 3)
    with pytest.raises(ValueError, match=r"\[E110\] .*head indices \[2\] out of range"):
        context_similarity(ctx, 2, heads=[2])


@pytest.mark.parametrize("threshold", [0.3, 0.1, 0.6])
def test_high_similarity_pairs_matches_reference(threshold):
    rng = numpy.random.default_rng(1)
    n_win, length, n_heads, d = 3, 9, 4, 5
    ctx = rng.normal(size=(n_win, length, n_heads * d)).astype("float32")
    mask = numpy.ones((n_win, length), dtype=bool)
    mask[:, 0] = False  # [CLS]
    mask[0, 7:] = False  # padding
    mask[2, 4] = False
    got = high_similarity_pairs(ctx, mask, n_heads=n_heads, threshold=threshold)
    ref = _reference_pairs(ctx, mask, n_heads, threshold=threshold)
    assert len(got) == len(ref) > 0
    got_rows = _as_rows(got)
    for g, r in zip(got_rows, ref, strict=True):
        assert g[:4] == r[:4]
        assert g[4] == pytest.approx(r[4], rel=1e-4)
    assert got.window.dtype == numpy.int32 and got.score.dtype == numpy.float32
    assert numpy.all(got.i < got.j)
    assert numpy.all(mask[got.window, got.i]) and numpy.all(mask[got.window, got.j])


def test_high_similarity_pairs_head_subset_keeps_original_head_ids():
    rng = numpy.random.default_rng(2)
    ctx = rng.normal(size=(2, 6, 3 * 4)).astype("float32")
    mask = numpy.ones((2, 6), dtype=bool)
    got = high_similarity_pairs(ctx, mask, n_heads=3, heads=[2])
    ref = _reference_pairs(ctx, mask, 3, heads=[2])
    assert set(got.head.tolist()) == {2}
    assert [r[:4] for r in _as_rows(got)] == [r[:4] for r in ref]


def test_high_similarity_pairs_known_example():
    # One head, d=2. Tokens 0 and 2 point the same way (similarity 4), token 1 is
    # orthogonal with a small norm, token 3 is masked out and would dominate.
    ctx = numpy.array([[[2.0, 0.0], [0.0, 0.5], [2.0, 0.0], [9.0, 0.0]]], dtype="float32")
    mask = numpy.array([[True, True, True, False]])
    got = high_similarity_pairs(ctx, mask, n_heads=1)
    assert _as_rows(got) == [(0, 0, 0, 2, 1.0)]


def test_high_similarity_pairs_nonpositive_max_gives_no_pairs():
    # Window 0: all zeros. Window 1: only negative off-diagonal similarities.
    ctx = numpy.zeros((2, 3, 2), dtype="float32")
    ctx[1] = [[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0]]
    mask = numpy.ones((2, 3), dtype=bool)
    got = high_similarity_pairs(ctx, mask, n_heads=1, threshold=0.0)
    assert len(got) == 0
    assert not numpy.isnan(got.score).any()
    # Fully masked windows and empty inputs.
    assert len(high_similarity_pairs(ctx, numpy.zeros((2, 3), bool), n_heads=1)) == 0
    empty = high_similarity_pairs(
        numpy.zeros((0, 4, 2), "float32"), numpy.zeros((0, 4), bool), n_heads=1
    )
    assert len(empty) == 0


def test_high_similarity_pairs_threshold_zero_never_returns_masked_or_diagonal():
    rng = numpy.random.default_rng(3)
    ctx = numpy.abs(rng.normal(size=(1, 5, 4))).astype("float32")
    mask = numpy.array([[False, True, True, True, False]])
    got = high_similarity_pairs(ctx, mask, n_heads=2, threshold=0.0)
    pairs = {(int(h), int(i), int(j)) for h, i, j in zip(got.head, got.i, got.j, strict=True)}
    assert pairs == {(h, i, j) for h in (0, 1) for i, j in [(1, 2), (1, 3), (2, 3)]}


def test_high_similarity_pairs_float16_input():
    rng = numpy.random.default_rng(4)
    ctx = rng.normal(size=(1, 6, 8)).astype("float16")
    mask = numpy.ones((1, 6), dtype=bool)
    got = high_similarity_pairs(ctx, mask, n_heads=2)
    ref = _reference_pairs(ctx.astype("float32"), mask, 2)
    assert [r[:4] for r in _as_rows(got)] == [r[:4] for r in ref]


def test_high_similarity_pairs_bad_mask_shape():
    with pytest.raises(ValueError, match=r"\[E110\] similarity.high_similarity_pairs: wp_mask"):
        high_similarity_pairs(
            numpy.zeros((1, 3, 2), "float32"), numpy.ones((1, 4), bool), n_heads=1
        )


def _wp(rows):
    """rows: (window, head, i, j, score)."""
    arr = numpy.array(rows, dtype=numpy.float64).reshape(-1, 5)
    return WordpiecePairs(
        window=arr[:, 0].astype(numpy.int32),
        head=arr[:, 1].astype(numpy.int32),
        i=arr[:, 2].astype(numpy.int32),
        j=arr[:, 3].astype(numpy.int32),
        score=arr[:, 4].astype(numpy.float32),
    )


def test_map_pairs_to_tokens_dedup_and_order():
    # Two overlapping windows of width 6 (position 0 = [CLS], 5 = [SEP]).
    # Window 0 covers tokens 0..2, token 1 has two wordpieces (positions 2, 3).
    # Window 1 covers tokens 1..3 (token 1 again split over positions 1, 2).
    wp2tok = numpy.array(
        [
            [-1, 0, 1, 1, 2, -1],
            [-1, 1, 1, 2, 3, -1],
        ]
    )
    wp = _wp(
        [
            (0, 0, 1, 2, 0.40),  # tok (0, 1)
            (0, 0, 1, 3, 0.70),  # tok (0, 1) again, higher -> kept
            (0, 0, 2, 3, 0.90),  # same token -> dropped
            (0, 0, 0, 4, 0.95),  # unmapped [CLS] -> dropped
            (0, 0, 3, 4, 0.50),  # tok (1, 2) window 0
            (1, 0, 2, 3, 0.80),  # tok (1, 2) window 1, higher -> kept
            (1, 0, 1, 3, 0.60),  # tok (1, 2) window 1, lower
            (1, 1, 3, 4, 0.35),  # head 1: tok (2, 3)
            (0, 1, 4, 1, 0.45),  # head 1: i > j in wordpieces -> tok (0, 2) ordered
            (1, 1, 4, 5, 0.99),  # [SEP] -> dropped
        ]
    )
    got = map_pairs_to_tokens(wp, wp2tok, layer=5)
    expected = HeadPairs(
        layer=[5, 5, 5, 5],
        head=[0, 0, 1, 1],
        i=[0, 1, 0, 2],
        j=[1, 2, 2, 3],
        score=numpy.array([0.70, 0.80, 0.45, 0.35], dtype=numpy.float32),
    )
    assert got == expected
    assert got.layer.dtype == numpy.int32 and got.score.dtype == numpy.float32


def test_map_pairs_to_tokens_empty_and_all_dropped():
    wp2tok = numpy.array([[-1, 0, 0, -1]])
    assert len(map_pairs_to_tokens(WordpiecePairs.empty(), wp2tok, layer=0)) == 0
    got = map_pairs_to_tokens(_wp([(0, 0, 1, 2, 0.9), (0, 0, 0, 1, 0.9)]), wp2tok, layer=0)
    assert got == HeadPairs.empty()
    with pytest.raises(ValueError, match=r"\[E110\] similarity.map_pairs_to_tokens"):
        map_pairs_to_tokens(_wp([(1, 0, 1, 2, 0.9)]), wp2tok, layer=0)


def test_end_to_end_with_reference_dedup():
    """Pairs from random windows mapped to tokens equal a brute-force dict reduction."""
    rng = numpy.random.default_rng(5)
    n_win, length, n_heads, d = 2, 8, 3, 4
    ctx = rng.normal(size=(n_win, length, n_heads * d)).astype("float32")
    wp2tok = numpy.array(
        [
            [-1, 0, 0, 1, 2, 2, 3, -1],
            [-1, 2, 2, 3, 4, 5, 5, -1],
        ]
    )
    mask = wp2tok >= 0
    wp = high_similarity_pairs(ctx, mask, n_heads=n_heads, threshold=0.2)
    got = map_pairs_to_tokens(wp, wp2tok, layer=1)
    best: dict = {}
    for h, w, i, j, s in _reference_pairs(ctx, mask, n_heads, threshold=0.2):
        a, b = sorted((int(wp2tok[w, i]), int(wp2tok[w, j])))
        if a == b:
            continue
        best[(h, a, b)] = max(best.get((h, a, b), -1.0), s)
    keys = sorted(best)
    assert [
        (int(h), int(i), int(j)) for h, i, j in zip(got.head, got.i, got.j, strict=True)
    ] == keys
    numpy.testing.assert_allclose(got.score, [best[k] for k in keys], rtol=1e-4)


def _strided_windows(rng, n_tokens, window, stride, pieces_max=3, gap=None):
    """wp2tok of overlapping windows over ``n_tokens`` tokens, as spacy-transformers'
    strided spans give them: per window [CLS], the tokens' wordpieces (1 to
    ``pieces_max`` each; token ``gap`` has none), [SEP], padding to a common width."""
    pieces = rng.integers(1, pieces_max + 1, size=n_tokens)
    if gap is not None:
        pieces[gap] = 0
    rows = []
    start = 0
    while True:
        toks = range(start, min(start + window, n_tokens))
        rows.append([-1] + [t for t in toks for _ in range(pieces[t])] + [-1])
        if start + window >= n_tokens:
            break
        start += stride
    length = max(len(r) for r in rows) + 2
    return numpy.array([r + [-1] * (length - len(r)) for r in rows])


def _both_ways(ctx, mask, wp2tok, n_heads, n_tokens, **kwargs):
    fast, seg = layer_token_pairs(
        ctx,
        mask,
        wp2tok,
        n_heads=n_heads,
        layer=3,
        n_tokens=n_tokens,
        with_segment_similarity=True,
        **kwargs,
    )
    slow = map_pairs_to_tokens(
        high_similarity_pairs(ctx, mask, n_heads=n_heads, **kwargs), wp2tok, layer=3
    )
    ref_seg = segment_similarity(ctx, mask, wp2tok, n_tokens, n_heads, kwargs.get("heads"))
    return fast, slow, seg, ref_seg


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threshold", [0.3, 0.05, 0.8])
def test_layer_token_pairs_equals_two_step_path(seed, threshold):
    """The one-pass path gives exactly the pairs, scores and segment similarity of
    high_similarity_pairs + map_pairs_to_tokens and segment_similarity."""
    rng = numpy.random.default_rng(seed)
    n_tokens = int(rng.integers(3, 40))
    wp2tok = _strided_windows(
        rng, n_tokens, window=int(rng.integers(2, 12)), stride=int(rng.integers(1, 8)), gap=1
    )
    wp2tok[wp2tok >= n_tokens] = -1
    n_win, length = wp2tok.shape
    n_heads, d = 4, 6
    ctx = rng.normal(size=(n_win, length, n_heads * d)).astype("float32")
    mask = wp2tok >= 0
    mask[0, 0] = True  # an unmapped wordpiece inside the mask ([CLS] with include_special)
    if n_win > 1:
        mask[1, 2] = False  # a mapped wordpiece outside it
    if seed == 0:
        ctx[:, :, :d] = 0.0  # head 0: no positive similarity anywhere
    for heads in (None, [2, 0], [1, 1, 3]):
        fast, slow, seg, ref_seg = _both_ways(
            ctx, mask, wp2tok, n_heads, n_tokens + 2, heads=heads, threshold=threshold
        )
        assert fast == slow
        assert seg is not None and len(seg) == n_tokens + 2
        numpy.testing.assert_array_equal(seg.to_dense(), ref_seg.to_dense())
    assert len(slow) > 0


def test_layer_token_pairs_general_path_cases():
    """Wordpieces out of token order, float64 input and a zero threshold take the
    general path, with the same results."""
    rng = numpy.random.default_rng(7)
    wp2tok = numpy.array([[-1, 0, 2, 1, 1, 3, -1], [-1, 2, 3, 4, 4, 5, -1]])
    ctx = rng.normal(size=(2, 7, 8)).astype("float32")
    mask = wp2tok >= 0
    for c, threshold in ((ctx, 0.3), (ctx.astype("float64"), 0.3), (ctx, 0.0)):
        fast, slow, seg, ref_seg = _both_ways(c, mask, wp2tok, 2, 6, threshold=threshold)
        assert fast == slow and len(fast)
        numpy.testing.assert_array_equal(seg.to_dense(), ref_seg.to_dense())


def test_layer_token_pairs_known_example():
    # Window 0 covers tokens 0-2 (token 1 has two wordpieces), window 1 tokens 1-3.
    # Token pair (1, 2) is in both windows; the higher of its two scores is kept.
    wp2tok = numpy.array([[-1, 0, 1, 1, 2, -1], [-1, 1, 2, 3, -1, -1]])
    h = numpy.zeros((2, 6, 2), dtype="float32")
    h[0, 1:5] = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 0.5]]
    h[1, 1:4] = [[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]
    got, segment = layer_token_pairs(h, wp2tok >= 0, wp2tok, n_heads=1, layer=4, threshold=0.3)
    # Window 0, off the diagonal: S(p1,p2)=0, S(p1,p3)=1, S(p1,p4)=0, S(p2,p3)=1,
    # S(p2,p4)=0.5, S(p3,p4)=0.5; max 1. Tokens (0,1): 1, (0,2): 0, (1,2): 0.5.
    # Window 1: S(1,2)=0.6, S(1,3)=0, S(2,3)=0.8; max 0.8. (1,2): 0.75, (2,3): 1.
    assert segment is None
    assert got.i.tolist() == [0, 1, 2] and got.j.tolist() == [1, 2, 3]
    assert got.score.tolist() == pytest.approx([1.0, 0.75, 1.0], rel=1e-6)
    assert got.layer.tolist() == [4, 4, 4] and got.head.tolist() == [0, 0, 0]
    assert got.i.dtype == numpy.int32 and got.score.dtype == numpy.float32
    assert got == map_pairs_to_tokens(high_similarity_pairs(h, wp2tok >= 0, n_heads=1), wp2tok, 4)


@pytest.mark.parametrize("seed", range(4))
def test_general_path_in_groups_of_windows(seed, monkeypatch):
    """The general path (float64 input) holds a group of windows at a time: the pairs
    and segment similarity do not depend on the group size."""
    from spacy_attnseg import similarity as similarity_module

    rng = numpy.random.default_rng(seed)
    n_tokens = 30
    wp2tok = _strided_windows(rng, n_tokens, window=6, stride=3, gap=1)
    wp2tok[wp2tok >= n_tokens] = -1
    n_win, length = wp2tok.shape
    ctx = rng.normal(size=(n_win, length, 8)).astype("float64")
    mask = wp2tok >= 0
    kwargs = dict(n_heads=2, layer=1, n_tokens=n_tokens, with_segment_similarity=True)
    whole, whole_seg = layer_token_pairs(ctx, mask, wp2tok, **kwargs)
    assert n_win > 2 and len(whole)
    monkeypatch.setattr(similarity_module, "GROUP_WINDOWS", 1)
    grouped, grouped_seg = layer_token_pairs(ctx, mask, wp2tok, **kwargs)
    assert grouped == whole
    numpy.testing.assert_array_equal(grouped_seg.to_dense(), whole_seg.to_dense())
    slow = map_pairs_to_tokens(high_similarity_pairs(ctx, mask, n_heads=2), wp2tok, layer=1)
    assert grouped == slow
