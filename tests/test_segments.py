"""Tests for spacy_attnseg.segments (block averages and Fig. 5 semantic segments)."""

from __future__ import annotations

import numpy
import pytest

from spacy_attnseg.segments import block_average, blocks_from_separators, semantic_segments


def _block_matrix(sizes, values, diag=9.0):
    """Token matrix whose (a, b) block is constant values[a][b]; diagonal set to diag."""
    ids = numpy.repeat(numpy.arange(len(sizes)), sizes)
    S = numpy.asarray(values, dtype=float)[ids[:, None], ids[None, :]]
    numpy.fill_diagonal(S, diag)
    return S, ids


def test_blocks_from_separators():
    sep = numpy.array([0, 0, 1, 0, 1, 1, 0, 0], dtype=bool)
    assert blocks_from_separators(sep).tolist() == [0, 0, 0, 1, 1, 2, 3, 3]
    assert blocks_from_separators([]).tolist() == []
    assert blocks_from_separators([True]).tolist() == [0]


def test_block_average_excludes_diagonal():
    values = [[1.0, 0.2, 0.1], [0.2, 0.8, 0.3], [0.1, 0.3, 0.5]]
    S, ids = _block_matrix([3, 2, 1], values)
    M = block_average(S, ids)
    assert M.shape == (3, 3)
    numpy.testing.assert_allclose(M[0], [1.0, 0.2, 0.1])
    numpy.testing.assert_allclose(M[1, :2], [0.2, 0.8])
    # Single-token block: its own region has no off-diagonal element.
    assert numpy.isnan(M[2, 2])
    # With the diagonal included, the 9.0 entries are averaged in.
    M2 = block_average(S, ids, exclude_diagonal=False)
    assert M2[0, 0] == pytest.approx((6 * 1.0 + 3 * 9.0) / 9)
    assert M2[2, 2] == pytest.approx(9.0)


def test_block_average_matches_loop():
    rng = numpy.random.default_rng(0)
    S = rng.random((7, 7))
    ids = numpy.array([0, 0, 1, 1, 1, 2, 2])
    M = block_average(S, ids)
    for a in range(3):
        for b in range(3):
            vals = [
                S[x, y]
                for x in range(7)
                for y in range(7)
                if ids[x] == a and ids[y] == b and x != y
            ]
            assert M[a, b] == pytest.approx(numpy.mean(vals))
    with pytest.raises(ValueError, match=r"\[E110\] segments.block_average: S must be"):
        block_average(S, ids[:5])


def test_semantic_segments_known_merge():
    # Blocks of sizes 3, 2, 3, 2. Blocks 0 and 1 belong together (cross 0.9 vs
    # within 1.0/0.9, ratio 0.947), block 2 is a new topic (cross 0.1), block 3 joins block 2
    # (cross 0.6 vs within 0.7/0.7, ratio 0.857 >= 0.75).
    values = [
        [1.0, 0.9, 0.1, 0.1],
        [0.9, 0.9, 0.1, 0.1],
        [0.1, 0.1, 0.7, 0.6],
        [0.1, 0.1, 0.6, 0.7],
    ]
    S, ids = _block_matrix([3, 2, 3, 2], values)
    sep = numpy.zeros(10, dtype=bool)
    sep[[2, 4, 7, 9]] = True
    segs = semantic_segments(sep, S, merge_threshold=0.75)
    assert [(s, e) for s, e, _ in segs] == [(0, 5), (5, 10)]
    # Score = mean of off-diagonal S within the segment.
    block = S[0:5, 0:5]
    expected = (block.sum() - numpy.trace(block)) / 20
    assert segs[0][2] == pytest.approx(expected)
    # A stricter threshold keeps block 3 apart (0.6 < 0.9 * 0.7), but 0.9 >= 0.9 * 0.95.
    segs = semantic_segments(sep, S, merge_threshold=0.9)
    assert [(s, e) for s, e, _ in segs] == [(0, 5), (5, 8), (8, 10)]
    # Threshold 0 merges everything with positive within-similarity.
    assert [(s, e) for s, e, _ in semantic_segments(sep, S, merge_threshold=0.0)] == [(0, 10)]


def test_semantic_segments_compares_last_block_only():
    # Chain: 0~1 and 1~2 similar, 0 and 2 not. Block 2 still joins via block 1.
    values = [[1.0, 0.9, 0.0], [0.9, 1.0, 0.9], [0.0, 0.9, 1.0]]
    S, _ = _block_matrix([2, 2, 2], values)
    sep = numpy.array([0, 1, 0, 1, 0, 1], dtype=bool)
    assert [(s, e) for s, e, _ in semantic_segments(sep, S)] == [(0, 6)]


def test_semantic_segments_cover_doc_contiguously():
    rng = numpy.random.default_rng(1)
    for n in (1, 2, 5, 17, 40):
        X = rng.normal(size=(n, 4))
        S = X @ X.T
        sep = rng.random(n) < 0.3
        segs = semantic_segments(sep, S, merge_threshold=0.5)
        assert segs[0][0] == 0 and segs[-1][1] == n
        for (_s0, e0, _), (s1, _e1, _) in zip(segs[:-1], segs[1:], strict=True):
            assert e0 == s1
        assert all(s < e for s, e, _ in segs)
        # Every segment boundary is right after a separator.
        assert all(sep[s - 1] for s, _, _ in segs[1:])
        assert all(numpy.isfinite(sc) for _, _, sc in segs)


def test_semantic_segments_edge_cases():
    assert semantic_segments(numpy.zeros(0, bool), numpy.zeros((0, 0))) == []
    # No separators: one block, one segment.
    S = numpy.ones((4, 4))
    assert semantic_segments(numpy.zeros(4, bool), S) == [(0, 4, 1.0)]
    # Single-token segment scores 0.0.
    assert semantic_segments([True], [[5.0]]) == [(0, 1, 0.0)]
    # Two singleton blocks: no within-block reference -> not merged.
    assert [(s, e) for s, e, _ in semantic_segments([True, True], numpy.ones((2, 2)))] == [
        (0, 1),
        (1, 2),
    ]
    with pytest.raises(ValueError, match=r"\[E110\] segments.semantic_segments"):
        semantic_segments(numpy.zeros(3, bool), numpy.zeros((4, 4)))
