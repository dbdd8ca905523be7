"""Streaming statistics for the paper's claims that :mod:`.stats` does not cover.

* :class:`SimilarityHistogram`: the distribution of normalised context similarities
  (sec. 3: "the vast majority of values ... were below 0.1 ... and a large gap exists
  between the normalised values of 0.1 and 0.6");
* :class:`BlockContrast`: context similarity within vs between the blocks that a
  layer's high-attention (separator) columns delimit (sec. 2, Fig. 5);
* :class:`WindowReference`: per-window reference levels: the mean distance of two random
  distinct positions (what Figs. 7 and 13 compare against) and the sentences per window;
* :func:`near_diagonal_share`: how much of a summed similarity map lies next to the
  diagonal (Fig. 12).

Like :mod:`.stats`, accumulators are fed one window at a time, keep arrays whose size
does not grow with the corpus, ``merge`` and report JSON-able ``result()`` dicts.
"""

from typing import Any, Dict

import numpy as np

from spacy_attnseg.segments import blocks_from_separators

from .stats import Accumulator, _jsonable, _ratio, _vector, top_columns


def separator_columns(column_sums: np.ndarray, threshold: float = 0.3) -> np.ndarray:
    """Separators of one window from a layer's per-head column sums ``(n_heads, L)``:
    summed over heads, normalised by their maximum, ``>= threshold`` (sec. 2)."""
    sums = np.asarray(column_sums, dtype=np.float64)
    return top_columns(sums.reshape(-1, sums.shape[-1]).sum(axis=0), threshold=threshold)


def random_pair_distance(mask: np.ndarray) -> float:
    """Mean ``|i - j|`` over the distinct pairs of positions in ``mask``; 0 below two.

    For ``n`` consecutive positions this is ``(n + 1) / 3``.
    """
    positions = np.flatnonzero(np.asarray(mask, dtype=bool)).astype(np.float64)
    n = positions.size
    if n < 2:
        return 0.0
    weights = 2 * np.arange(n) - n + 1
    return float((positions * weights).sum() / (n * (n - 1) / 2))


def near_diagonal_share(maps: np.ndarray, width: int = 2) -> np.ndarray:
    """Share of each ``(..., L, L)`` map's off-diagonal mass at ``1 <= |i - j| <= width``
    (negative values clipped to 0 first); NaN where a map has no off-diagonal mass."""
    values = np.clip(np.asarray(maps, dtype=np.float64), 0.0, None)
    length = values.shape[-1]
    idx = np.arange(length)
    distance = np.abs(idx[:, None] - idx[None, :])
    near = ((distance >= 1) & (distance <= width)).astype(np.float64)
    off = (distance >= 1).astype(np.float64)
    return _ratio((values * near).sum(axis=(-2, -1)), (values * off).sum(axis=(-2, -1)))


class SimilarityHistogram(Accumulator):
    """Per layer, the normalised context similarities of all pairs ``i < j`` of valid
    non-special positions (pooled over heads and windows) in ``bins`` equal bins over
    ``[0, 1]``, plus a count of negative values."""

    def __init__(self, n_layers: int, bins: int = 20) -> None:
        self.n_layers = n_layers
        self.bins = int(bins)
        self.n_windows = 0
        self.negative = np.zeros(n_layers, dtype=np.int64)
        self.counts = np.zeros((n_layers, self.bins), dtype=np.int64)

    _SETTINGS = ("n_layers", "bins")
    _SUMS = ("negative", "counts")

    def update(self, normalised: np.ndarray, mask: np.ndarray) -> None:
        """``normalised``: ``(n_layers, n_heads, L, L)`` maps of
        :func:`.stats.normalised_similarity`; ``mask``: the ``(L,)`` positions paired."""
        maps = np.asarray(normalised)
        if maps.ndim != 4 or maps.shape[0] != self.n_layers:
            raise ValueError(f"`normalised` must be (n_layers, n_heads, L, L), got {maps.shape}")
        length = maps.shape[-1]
        keep = _vector(mask, length, "mask", bool)
        upper = np.triu(np.outer(keep, keep), k=1)
        values = maps[:, :, upper].reshape(self.n_layers, -1)
        self.negative += (values < 0).sum(axis=1)
        index = np.clip((values * self.bins).astype(np.int64), 0, self.bins - 1)
        offsets = np.arange(self.n_layers)[:, None] * self.bins
        flat = (index + offsets)[values >= 0]
        self.counts += np.bincount(flat, minlength=self.n_layers * self.bins).reshape(
            self.n_layers, self.bins
        )
        self.n_windows += 1

    def share(self, low: float, high: float) -> np.ndarray:
        """Per layer, the share of all values in ``[low, high)`` (bin edges; ``low <= 0``
        includes the negative values)."""
        edges = np.linspace(0.0, 1.0, self.bins + 1)
        inside = (edges[:-1] >= low - 1e-12) & (edges[1:] <= high + 1e-12)
        total = self.counts.sum(axis=1) + self.negative
        part = self.counts[:, inside].sum(axis=1) + (self.negative if low <= 0 else 0)
        return _ratio(part, total)

    def result(self) -> Dict[str, Any]:
        """Keys: ``n_windows``, ``bin_edges``, ``counts`` ``[layer][bin]``,
        ``negative`` ``[layer]``, and per layer the shares ``below_0.1``,
        ``0.1_to_0.6``, ``0.6_and_above`` and ``above_threshold_0.3``, and
        ``gap_density_ratio``: mean share per bin in ``[0.1, 0.6)`` over that in
        ``[0.6, 1]`` (below 1: a dip between the bulk and the high values)."""
        width = 1.0 / self.bins
        middle = self.share(0.1, 0.6)
        high = self.share(0.6, 1.0)
        return {
            "n_windows": self.n_windows,
            "bin_edges": _jsonable(np.linspace(0.0, 1.0, self.bins + 1)),
            "counts": _jsonable(self.counts),
            "negative": _jsonable(self.negative),
            "below_0.1": _jsonable(self.share(0.0, 0.1)),
            "0.1_to_0.6": _jsonable(middle),
            "0.6_and_above": _jsonable(high),
            "above_threshold_0.3": _jsonable(self.share(0.3, 1.0)),
            "gap_density_ratio": _jsonable(
                _ratio(middle / round(0.5 / width), high / round(0.4 / width))
            ),
        }


class BlockContrast(Accumulator):
    """Context similarity within and between separator-delimited blocks (Fig. 5).

    Per window, the separators are a layer's high-attention columns
    (:func:`separator_columns`); every pair ``i < j`` of valid non-special positions is
    *within* when both lie in one block. Per head, pooled over windows: the mean
    normalised similarity of within and of between pairs, their ratio, and the share of
    the high-similarity pairs (``>= threshold``) that are within, against the share of
    all pairs that are (chance).
    """

    def __init__(self, n_heads: int, *, threshold: float = 0.3) -> None:
        self.n_heads = n_heads
        self.threshold = float(threshold)
        self.n_windows = 0
        self.within_sum = np.zeros(n_heads)
        self.between_sum = np.zeros(n_heads)
        self.within_pairs = 0
        self.between_pairs = 0
        self.high_within = np.zeros(n_heads, dtype=np.int64)
        self.high_total = np.zeros(n_heads, dtype=np.int64)
        self.chance_weighted = np.zeros(n_heads)
        self.separators = 0

    _SETTINGS = ("n_heads", "threshold")
    _SUMS = (
        "within_sum",
        "between_sum",
        "within_pairs",
        "between_pairs",
        "high_within",
        "high_total",
        "chance_weighted",
        "separators",
    )

    def update(self, normalised: np.ndarray, mask: np.ndarray, separator_flags: np.ndarray) -> None:
        """``normalised``: ``(n_heads, L, L)`` one layer's normalised similarity maps."""
        maps = np.asarray(normalised, dtype=np.float64)
        if maps.ndim != 3 or maps.shape[0] != self.n_heads:
            raise ValueError(f"`normalised` must be ({self.n_heads}, L, L), got {maps.shape}")
        length = maps.shape[-1]
        keep = _vector(mask, length, "mask", bool)
        flags = _vector(separator_flags, length, "separator_flags", bool)
        blocks = blocks_from_separators(flags)
        upper = np.triu(np.outer(keep, keep), k=1)
        same = upper & (blocks[:, None] == blocks[None, :])
        other = upper & ~same
        n_same, n_pairs = int(same.sum()), int(upper.sum())
        self.within_sum += maps[:, same].sum(axis=1)
        self.between_sum += maps[:, other].sum(axis=1)
        self.within_pairs += n_same
        self.between_pairs += n_pairs - n_same
        high = (maps >= self.threshold) & upper
        n_high = high.sum(axis=(1, 2))
        self.high_within += (high & same).sum(axis=(1, 2))
        self.high_total += n_high
        if n_pairs:
            self.chance_weighted += n_high * (n_same / n_pairs)
        self.separators += int((flags & keep).sum())
        self.n_windows += 1

    def result(self) -> Dict[str, Any]:
        """Keys: ``n_windows``, ``threshold``, ``mean_separators``; per head
        ``within_mean``, ``between_mean``, ``ratio``, ``high_within_share``,
        ``high_within_chance``; pooled over heads ``pooled_within_mean``,
        ``pooled_between_mean``, ``pooled_ratio``, ``pooled_high_within_share``,
        ``pooled_high_within_chance``."""
        within = _ratio(self.within_sum, self.within_pairs)
        between = _ratio(self.between_sum, self.between_pairs)
        pooled_within = _ratio(self.within_sum.sum(), self.within_pairs * self.n_heads)
        pooled_between = _ratio(self.between_sum.sum(), self.between_pairs * self.n_heads)
        return {
            "n_windows": self.n_windows,
            "threshold": self.threshold,
            "mean_separators": _jsonable(_ratio(self.separators, self.n_windows)),
            "within_mean": _jsonable(within),
            "between_mean": _jsonable(between),
            "ratio": _jsonable(_ratio(within, between)),
            "high_within_share": _jsonable(_ratio(self.high_within, self.high_total)),
            "high_within_chance": _jsonable(_ratio(self.chance_weighted, self.high_total)),
            "pooled_within_mean": _jsonable(pooled_within),
            "pooled_between_mean": _jsonable(pooled_between),
            "pooled_ratio": _jsonable(_ratio(pooled_within, pooled_between)),
            "pooled_high_within_share": _jsonable(
                _ratio(self.high_within.sum(), self.high_total.sum())
            ),
            "pooled_high_within_chance": _jsonable(
                _ratio(self.chance_weighted.sum(), self.high_total.sum())
            ),
        }


class WindowReference(Accumulator):
    """Per-window reference levels, averaged over windows: the number of valid
    non-special wordpieces, of sentences among them, and the mean distance of two random
    distinct positions among them."""

    def __init__(self, seq_len: int) -> None:
        self.seq_len = seq_len
        self.n_windows = 0
        self.positions = 0
        self.distance_sum = 0.0
        self.sentence_histogram = np.zeros(seq_len + 1, dtype=np.int64)

    _SETTINGS = ("seq_len",)
    _SUMS = ("positions", "distance_sum", "sentence_histogram")

    def update(self, mask: np.ndarray, sentence_ids: np.ndarray) -> None:
        keep = _vector(mask, self.seq_len, "mask", bool)
        sents = _vector(sentence_ids, self.seq_len, "sentence_ids", np.int64)[keep]
        self.positions += int(keep.sum())
        self.distance_sum += random_pair_distance(keep)
        self.sentence_histogram[np.unique(sents[sents >= 0]).size] += 1
        self.n_windows += 1

    def result(self) -> Dict[str, Any]:
        """Keys: ``n_windows``, ``mean_positions``, ``mean_random_pair_distance``,
        ``mean_sentences``, ``sentence_histogram`` (windows with k sentences)."""
        counts = self.sentence_histogram
        last = int(np.flatnonzero(counts).max()) + 1 if counts.any() else 0
        return {
            "n_windows": self.n_windows,
            "mean_positions": _jsonable(_ratio(self.positions, self.n_windows)),
            "mean_random_pair_distance": _jsonable(_ratio(self.distance_sum, self.n_windows)),
            "mean_sentences": _jsonable(
                _ratio((counts * np.arange(counts.size)).sum(), self.n_windows)
            ),
            "sentence_histogram": _jsonable(counts[:last]),
        }


def all_layer_similarity(context: np.ndarray, mask: np.ndarray, n_heads: int) -> np.ndarray:
    """:func:`.stats.normalised_similarity` of every layer: ``(n_layers, n_heads, L, L)``."""
    from .stats import normalised_similarity

    ctx = np.asarray(context)
    return np.stack([normalised_similarity(layer, mask, n_heads) for layer in ctx])


class SharedComponent(Accumulator):
    """How much of a head's output vectors is one vector shared by the whole window.

    Per window, layer and head: ``|mean_i h_i|^2 / mean_i |h_i|^2`` over the valid
    non-special positions (1: all vectors equal, 0: they average out). A large share
    makes the raw dot products ``h_i . h_j`` of the context similarity large for almost
    every pair. Reported averaged over windows.
    """

    def __init__(self, n_layers: int, n_heads: int) -> None:
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.n_windows = 0
        self.share_sum = np.zeros((n_layers, n_heads))

    _SETTINGS = ("n_layers", "n_heads")
    _SUMS = ("share_sum",)

    def update(self, context: np.ndarray, mask: np.ndarray) -> None:
        """``context``: ``(n_layers, L, n_heads * d)`` head outputs of one window."""
        ctx = np.asarray(context, dtype=np.float64)
        if ctx.ndim != 3 or ctx.shape[0] != self.n_layers or ctx.shape[2] % self.n_heads:
            raise ValueError(
                f"`context` must be ({self.n_layers}, L, {self.n_heads} * d), got {ctx.shape}"
            )
        keep = _vector(mask, ctx.shape[1], "mask", bool)
        if not keep.any():
            return
        heads = ctx[:, keep].reshape(self.n_layers, int(keep.sum()), self.n_heads, -1)
        mean_sq = (heads.mean(axis=1) ** 2).sum(axis=-1)
        energy = (heads**2).sum(axis=-1).mean(axis=1)
        self.share_sum += np.divide(mean_sq, energy, out=np.zeros_like(mean_sq), where=energy > 0)
        self.n_windows += 1

    def result(self) -> Dict[str, Any]:
        """Keys: ``n_windows``, ``share`` ``[layer][head]``, ``layer_share`` ``[layer]``
        (mean over heads)."""
        share = _ratio(self.share_sum, self.n_windows)
        return {
            "n_windows": self.n_windows,
            "share": _jsonable(share),
            "layer_share": _jsonable(share.mean(axis=1)),
        }
