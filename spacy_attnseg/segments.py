"""Semantic segments from separator tokens and a token similarity matrix (Fig. 5).

In the paper's Fig. 5, high-attention separator tokens of the last layer are marked on
both axes of the context similarity matrix, cutting it into rectangular regions; the
bottom-right panel shows each region replaced by its average. Here the separators cut
the Doc into *blocks* (a block ends at, and includes, a separator token; tokens after
the last separator form a final block), :func:`block_average` computes the region
averages, and :func:`semantic_segments` merges consecutive blocks whose mutual
similarity is comparable to their internal similarity.

Pure numpy; the caller provides the token-level similarity, either as a dense matrix
or, for long Docs, as a :class:`BandedSimilarity`: the similarity of tokens that share
a transformer window is all there is, so only a band along the diagonal is stored and
memory grows linearly with the Doc (e.g. the mean over heads of max-normalised context
similarities mapped to tokens, ``similarity.layer_token_pairs``).
"""

from __future__ import annotations

from typing import Any, List, Tuple, Union

import numpy

from .errors import invalid_array

__all__ = [
    "BandedSimilarity",
    "block_average",
    "block_starts",
    "blocks_from_separators",
    "merges",
    "neighbour_similarities",
    "semantic_segments",
]


class BandedSimilarity:
    """A symmetric token similarity ``S`` that is 0 for tokens ``band`` or more apart,
    stored as its upper band: ``values[t, d] = S[t, t + d]`` for ``0 <= d < band``
    (``values[t, d]`` for ``t + d >= n`` is 0). An asymmetric dense matrix is stored as
    its symmetric part ``(S + S.T) / 2``, which is all :func:`semantic_segments` reads.
    """

    def __init__(self, values: Any) -> None:
        self.values = numpy.asarray(values)
        if self.values.ndim != 2:
            raise invalid_array(
                "segments.BandedSimilarity",
                f"values must be (n_tokens, band), got shape {self.values.shape}",
            )
        self.refresh()

    @classmethod
    def zeros(cls, n_tokens: int, band: int) -> BandedSimilarity:
        """An all-zero similarity to fill in place (call :meth:`refresh` after)."""
        return cls(numpy.zeros((n_tokens, max(1, band)), dtype=numpy.float32))

    def refresh(self) -> BandedSimilarity:
        """(Re)compute the row sums that :meth:`pair_sum` reads, after ``values`` was
        written in place: each row's sum over ``d >= 1`` and their running total."""
        row = self.values[:, 1:].sum(axis=1, dtype=numpy.float64)
        self._running = numpy.concatenate([[0.0], numpy.cumsum(row)])
        return self

    @classmethod
    def from_dense(cls, S: Any) -> BandedSimilarity:
        """The symmetric part of a dense ``(n, n)`` matrix, with a band of ``n``."""
        sim = numpy.asarray(S, dtype=numpy.float64)
        n = sim.shape[0]
        if sim.ndim != 2 or sim.shape != (n, n):
            raise invalid_array(
                "segments.BandedSimilarity.from_dense",
                f"S must be a square matrix, got shape {sim.shape}",
            )
        sym = 0.5 * (sim + sim.T)
        values = numpy.zeros((n, max(1, n)), dtype=numpy.float64)
        rows, cols = numpy.triu_indices(n)
        values[rows, cols - rows] = sym[rows, cols]
        return cls(values)

    def __len__(self) -> int:
        return self.values.shape[0]

    @property
    def band(self) -> int:
        return self.values.shape[1]

    def to_dense(self) -> numpy.ndarray:
        """The ``(n, n)`` matrix (for small Docs: tests, figures)."""
        n, band = self.values.shape
        out = numpy.zeros((n, n), dtype=self.values.dtype)
        rows, offsets = numpy.nonzero(numpy.ones((n, band), dtype=bool))
        cols = rows + offsets
        inside = cols < n
        rows, cols, offsets = rows[inside], cols[inside], offsets[inside]
        out[rows, cols] = self.values[rows, offsets]
        out[cols, rows] = self.values[rows, offsets]
        return out

    def pair_sum(self, start: int, end: int) -> float:
        """The sum of ``S[t, j]`` over ``start <= t < j < end``."""
        if end - start < 2:
            return 0.0
        band = self.band
        # rows whose whole band lies inside [start, end)
        full_end = max(start, end - band + 1)
        total = self._running[full_end] - self._running[start]
        tail = self.values[full_end:end, 1:]
        if len(tail):
            room = end - numpy.arange(full_end, end)  # columns t + 1 .. end - 1
            inside = numpy.arange(1, band)[None, :] < room[:, None]
            total += float(tail.sum(where=inside, dtype=numpy.float64))
        return float(total)


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
        raise invalid_array(
            "segments.block_average", f"S must be ({n}, {n}) to match block_ids, got {sim.shape}"
        )
    if not n:
        return numpy.zeros((0, 0), dtype=numpy.float64)
    if ids.min() < 0:
        raise invalid_array("segments.block_average", "block_ids must be non-negative")
    n_blocks = int(ids.max()) + 1
    onehot = numpy.zeros((n, n_blocks), dtype=numpy.float64)
    onehot[numpy.arange(n), ids] = 1.0
    if exclude_diagonal:
        # zeroed rather than subtracted afterwards: a subtraction leaves rounding noise
        # (a block whose other similarities are all 0 would average 1e-17, not 0)
        sim = sim.copy()
        numpy.fill_diagonal(sim, 0.0)
    sums = onehot.T @ sim @ onehot
    sizes = onehot.sum(axis=0)
    counts = numpy.outer(sizes, sizes)
    if exclude_diagonal:
        idx = numpy.arange(n_blocks)
        counts[idx, idx] -= sizes
    out = numpy.full((n_blocks, n_blocks), numpy.nan, dtype=numpy.float64)
    numpy.divide(sums, counts, out=out, where=counts > 0)
    return out


def semantic_segments(
    separators: Any,
    S: Union[Any, BandedSimilarity],
    *,
    merge_threshold: float = 0.75,
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

    Only the regions of neighbouring blocks are read, as sums over the
    :class:`BandedSimilarity` of ``S`` (time and memory linear in the Doc's length
    for a banded ``S``).

    separators: ``(n_tokens,)`` bool, True for the token that ends a unit.
    S: ``(n_tokens, n_tokens)`` token similarity matrix or a :class:`BandedSimilarity`.
    RETURNS: ``[(start, end, score), ...]`` covering ``0..n_tokens`` contiguously
        (empty list for an empty Doc).
    """
    blocks = blocks_from_separators(separators)
    n = len(blocks)
    if isinstance(S, BandedSimilarity):
        sim = S
        if len(sim) != n:
            raise invalid_array(
                "segments.semantic_segments", f"S has {len(sim)} tokens, separators {n}"
            )
    else:
        dense = numpy.asarray(S, dtype=numpy.float64)
        if dense.shape != (n, n):
            raise invalid_array(
                "segments.semantic_segments",
                f"S must be ({n}, {n}) to match separators, got {dense.shape}",
            )
        sim = BandedSimilarity.from_dense(dense)
    if not n:
        return []
    block_start = block_starts(blocks)
    cross, ref = neighbour_similarities(sim, block_start)
    merge = merges(cross, ref, merge_threshold)
    bounds = [0] + [int(block_start[a + 1]) for a in numpy.flatnonzero(~merge)] + [n]
    segments: List[Tuple[int, int, float]] = []
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        score = _mean_pairs(sim.pair_sum(start, end), end - start)
        segments.append((start, end, 0.0 if score is None else score))
    return segments


def block_starts(blocks: numpy.ndarray) -> numpy.ndarray:
    """The first token of every block and, last, the number of tokens: block ``a`` spans
    tokens ``[starts[a], starts[a + 1])``."""
    n_blocks = int(blocks[-1]) + 1 if len(blocks) else 0
    return numpy.searchsorted(blocks, numpy.arange(n_blocks + 1), side="left")


def neighbour_similarities(
    sim: BandedSimilarity, block_start: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """For each pair of neighbouring blocks ``(a, a+1)`` (``block_start`` as
    :func:`block_starts` gives it): ``cross``, the mean similarity between their tokens,
    and ``ref``, the mean of the blocks' finite within-block means (NaN where both blocks
    are single tokens), which :func:`merges` compares."""
    sizes = numpy.diff(block_start)
    inner = numpy.array(
        [
            sim.pair_sum(int(a), int(b))
            for a, b in zip(block_start[:-1], block_start[1:], strict=True)
        ],
        dtype=numpy.float64,
    )
    within = numpy.full(len(sizes), numpy.nan)
    pairs = sizes * sizes - sizes
    numpy.divide(2.0 * inner, pairs, out=within, where=pairs > 0)
    outer = numpy.array(
        [
            sim.pair_sum(int(a), int(b))
            for a, b in zip(block_start[:-2], block_start[2:], strict=True)
        ],
        dtype=numpy.float64,
    )
    cross = (outer - inner[:-1] - inner[1:]) / (sizes[:-1] * sizes[1:])
    pair = numpy.stack([within[:-1], within[1:]])
    finite = numpy.isfinite(pair)
    counts = finite.sum(axis=0)
    ref = numpy.full(len(cross), numpy.nan)
    numpy.divide(numpy.where(finite, pair, 0.0).sum(axis=0), counts, out=ref, where=counts > 0)
    return cross, ref


def merges(cross: numpy.ndarray, ref: numpy.ndarray, merge_threshold: float) -> numpy.ndarray:
    """The Fig. 5 merge rule on :func:`neighbour_similarities`: block ``a+1`` joins the
    segment of block ``a`` iff ``ref > 0`` and ``cross >= merge_threshold * ref``."""
    return (ref > 0) & (cross >= merge_threshold * ref)


def _mean_pairs(pair_sum: float, size: int) -> float | None:
    """The mean of a symmetric region's off-diagonal elements from the sum over its
    upper triangle; None for a region of one token (it has none)."""
    if size < 2:
        return None
    return 2.0 * pair_sum / (size * size - size)
