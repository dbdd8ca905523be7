"""Semantic segments from separator tokens and a token similarity matrix (Fig. 5).

In the paper's Fig. 5, high-attention separator tokens of the last layer are marked on
both axes of the context similarity matrix, cutting it into rectangular regions; the
bottom-right panel shows each region replaced by its average. Here the separators cut
the Doc into *blocks* (a block ends at, and includes, a separator token; tokens after
the last separator form a final block), :func:`block_average` computes the region
averages, and :func:`semantic_segments` merges consecutive blocks whose mutual
similarity is comparable to their internal similarity.

Pure numpy; the caller provides the token-level similarity matrix (e.g. the mean over
heads of max-normalised context similarities mapped to tokens).
"""

from __future__ import annotations

from typing import Any, List, Tuple

import numpy

__all__ = ["blocks_from_separators", "block_average", "semantic_segments"]


def blocks_from_separators(separators: Any) -> numpy.ndarray:
    """Block index of every token: a block ends at (and includes) each separator.

    separators: ``(n_tokens,)`` bool, True for the token that ends a unit.
    RETURNS: ``(n_tokens,)`` int64 block ids ``0..n_blocks-1``, non-decreasing.
    """
    sep = numpy.asarray(separators, dtype=bool).reshape(-1)
    if not len(sep):
        return numpy.zeros((0,), dtype=numpy.int64)
    return numpy.concatenate([[0], numpy.cumsum(sep[:-1], dtype=numpy.int64)])


def block_average(S: Any, block_ids: Any, *, exclude_diagonal: bool = True) -> numpy.ndarray:
    """Block-averaged similarity matrix (Fig. 5, bottom right).

    S: ``(n, n)`` token similarity matrix.
    block_ids: ``(n,)`` non-negative int block index of each token (need not be
        contiguous; ``n_blocks = max + 1``).
    exclude_diagonal: leave the elements ``S[t, t]`` out of the diagonal blocks'
        means (the paper zeroes the diagonal; here it is excluded, not averaged in).
    RETURNS: ``(n_blocks, n_blocks)`` float64 with ``M[a, b]`` = mean of ``S`` over
        (tokens of block a) x (tokens of block b); NaN where a region has no elements
        (an empty block, or a single-token block's own region when the diagonal is
        excluded).
    """
    sim = numpy.asarray(S, dtype=numpy.float64)
    ids = numpy.asarray(block_ids, dtype=numpy.int64).reshape(-1)
    n = len(ids)
    if sim.shape != (n, n):
        raise ValueError(f"S must be ({n}, {n}) to match block_ids, got {sim.shape}")
    if not n:
        return numpy.zeros((0, 0), dtype=numpy.float64)
    if ids.min() < 0:
        raise ValueError("block_ids must be non-negative")
    n_blocks = int(ids.max()) + 1
    onehot = numpy.zeros((n, n_blocks), dtype=numpy.float64)
    onehot[numpy.arange(n), ids] = 1.0
    sums = onehot.T @ sim @ onehot
    sizes = onehot.sum(axis=0)
    counts = numpy.outer(sizes, sizes)
    if exclude_diagonal:
        diag_sums = numpy.bincount(ids, weights=numpy.diag(sim), minlength=n_blocks)
        idx = numpy.arange(n_blocks)
        sums[idx, idx] -= diag_sums
        counts[idx, idx] -= sizes
    out = numpy.full((n_blocks, n_blocks), numpy.nan, dtype=numpy.float64)
    numpy.divide(sums, counts, out=out, where=counts > 0)
    return out


def _mean_off_diagonal(sim: numpy.ndarray) -> float:
    n = sim.shape[0]
    if n < 2:
        return 0.0
    return float((sim.sum() - numpy.trace(sim)) / (n * n - n))


def semantic_segments(
    separators: Any, S: Any, *, merge_threshold: float = 0.75
) -> List[Tuple[int, int, float]]:
    """Cut the Doc into semantic segments (token offsets ``[start, end)`` and a score).

    Rule (deterministic):

    1. ``blocks_from_separators(separators)`` splits the tokens into blocks
       ``0..K-1``; ``M = block_average(S, blocks)`` (diagonal of ``S`` excluded).
    2. Walk the blocks left to right, starting a segment at block 0. Block ``a+1``
       joins the segment that ends with block ``a`` iff

       ``cross >= merge_threshold * ref`` and ``ref > 0``, where
       ``cross = (M[a, a+1] + M[a+1, a]) / 2`` (equal to ``M[a, a+1]`` for symmetric
       ``S``) and ``ref`` is the mean of the finite within-block means among
       ``M[a, a]`` and ``M[a+1, a+1]`` (a single-token block has none). If neither
       is finite, the blocks are not merged. Otherwise block ``a+1`` starts a new
       segment. Only the segment's *last* block is compared with the next one.
    3. The score of a segment is the mean of ``S`` over segment x segment excluding
       the diagonal; 0.0 for a single-token segment.

    separators: ``(n_tokens,)`` bool, True for the token that ends a unit.
    S: ``(n_tokens, n_tokens)`` token similarity matrix.
    RETURNS: ``[(start, end, score), ...]`` covering ``0..n_tokens`` contiguously
        (empty list for an empty Doc).
    """
    sim = numpy.asarray(S, dtype=numpy.float64)
    blocks = blocks_from_separators(separators)
    n = len(blocks)
    if sim.shape != (n, n):
        raise ValueError(f"S must be ({n}, {n}) to match separators, got {sim.shape}")
    if not n:
        return []
    M = block_average(sim, blocks)
    n_blocks = M.shape[0]
    # Block a spans tokens [block_start[a], block_start[a + 1]).
    block_start = numpy.searchsorted(blocks, numpy.arange(n_blocks + 1), side="left")
    within = numpy.diag(M)
    bounds = [0]
    for a in range(n_blocks - 1):
        pair = within[a : a + 2]
        finite = pair[numpy.isfinite(pair)]
        cross = 0.5 * (M[a, a + 1] + M[a + 1, a])
        merge = False
        if len(finite):
            ref = float(finite.mean())
            merge = ref > 0 and bool(cross >= merge_threshold * ref)
        if not merge:
            bounds.append(int(block_start[a + 1]))
    bounds.append(n)
    segments: List[Tuple[int, int, float]] = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        score = _mean_off_diagonal(sim[start:end, start:end])
        segments.append((start, end, score))
    return segments
