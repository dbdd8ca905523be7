"""Streaming statistics behind the figures of Halevi et al. (2026).

Every accumulator is fed one text window at a time (``update``), keeps arrays whose size
depends only on ``(n_layers, n_heads, seq_len)`` (constant memory over a corpus), can be
combined with another accumulator fed with other windows (``merge``, the same as one pass
over all windows), and reports:

* ``result()``: a dict of JSON-able numbers (nested lists, ``None`` where a statistic is
  undefined, e.g. a probability over zero pairs);
* ``arrays()``: a dict of NumPy arrays, including the large maps the figures draw.

Per window the inputs are NumPy arrays:

* ``attn``: ``(n_layers, n_heads, L, L)`` attention probabilities, rows are queries;
* ``context``: ``(n_layers, L, n_heads * d)`` head outputs before the output projection
  (head ``h`` is columns ``h*d:(h+1)*d``);
* ``valid``: ``(L,)`` bool, real wordpieces including special tokens (padding False);
* ``token_ids``: ``(L,)`` int wordpiece ids;
* ``categories``: ``(L,)`` int, :data:`CLS`, :data:`SEP`, :data:`PUNCT`, :data:`WORD` or
  :data:`PAD`;
* ``sentence_ids``: ``(L,)`` int sentence index of each wordpiece, -1 for special tokens
  and padding.

Layers and heads are indexed from 0 here; the figures label them from 1.
"""

from collections.abc import Sequence
from typing import Any, Dict, Tuple, TypeVar

import numpy as np

from spacy_attnseg.segments import block_average, blocks_from_separators
from spacy_attnseg.sentences import column_scores
from spacy_attnseg.similarity import pair_mask, peak_scale

#: Wordpiece categories used by ``categories`` arrays.
CLS, SEP, PUNCT, WORD, PAD = 0, 1, 2, 3, 4
#: Display names of the categories, indexed by category.
CATEGORY_NAMES: Tuple[str, ...] = ("[CLS]", "[SEP]", "punctuation", "word", "pad")
N_CATEGORIES = len(CATEGORY_NAMES)
#: Categories that never form high-similarity pairs.
SPECIAL_CATEGORIES: Tuple[int, ...] = (CLS, SEP, PAD)
#: Diagonal offsets reported by :class:`SummedAttention`: the token itself, the next
#: token (``j = i + 1``) and the previous token (``j = i - 1``).
BAND_OFFSETS: Tuple[int, ...] = (0, 1, -1)


# -- helpers ------------------------------------------------------------------------------


def _jsonable(array: Any) -> Any:
    """Nested lists of Python numbers, with NaN and infinities replaced by ``None``."""
    arr = np.asarray(array)
    if arr.dtype.kind in "iub":
        return arr.tolist()
    arr = arr.astype(np.float64)
    out = arr.astype(object)
    out[~np.isfinite(arr)] = None
    return out.tolist()


def _ratio(numerator: Any, denominator: Any) -> np.ndarray:
    """Element-wise ``numerator / denominator``, NaN where the denominator is 0."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.broadcast_to(np.asarray(denominator, dtype=np.float64), num.shape)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _vector(values: Any, length: int, name: str, dtype: Any) -> np.ndarray:
    """``values`` as a 1d array of ``length`` elements of ``dtype``; ValueError otherwise."""
    arr = np.asarray(values)
    if arr.shape != (length,):
        raise ValueError(f"`{name}` must have shape ({length},), got {arr.shape}")
    return arr.astype(dtype, copy=False)


def _check_shape(array: Any, shape: Tuple[int, ...], name: str) -> np.ndarray:
    arr = np.asarray(array)
    if arr.shape != shape:
        raise ValueError(f"`{name}` must have shape {shape}, got {arr.shape}")
    return arr


def _check_same(a: Any, b: Any, attrs: Sequence[str]) -> None:
    """Raise ValueError unless ``a`` and ``b`` are the same class with equal settings."""
    if type(a) is not type(b):
        raise TypeError(f"cannot merge {type(b).__name__} into {type(a).__name__}")
    for attr in attrs:
        if getattr(a, attr) != getattr(b, attr):
            raise ValueError(
                f"cannot merge {type(a).__name__}s with different {attr}: "
                f"{getattr(a, attr)!r} != {getattr(b, attr)!r}"
            )


_Acc = TypeVar("_Acc", bound="Accumulator")


class Accumulator:
    """Sums over windows that merge: accumulators fed with other windows (another
    process, another shard) are added with :meth:`merge` when their ``_SETTINGS`` agree.
    ``n_windows`` and the attributes named in ``_SUMS`` are added."""

    _SETTINGS: Tuple[str, ...] = ()
    _SUMS: Tuple[str, ...] = ()
    n_windows: int

    def merge(self: _Acc, other: _Acc) -> _Acc:
        """Add the sums of ``other`` (fed with other windows) to this one; returns self."""
        _check_same(self, other, self._SETTINGS)
        self.n_windows += other.n_windows
        for name in self._SUMS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self


def band_mass(maps: np.ndarray, offsets: Sequence[int] = BAND_OFFSETS) -> np.ndarray:
    """Sum of each ``(..., L, L)`` map along the diagonals at ``offsets``.

    Offset ``k`` sums the elements ``(i, i + k)``: 0 is the main diagonal, +1 the query's
    next token, -1 its previous token. Returns an array of shape ``(..., len(offsets))``.
    """
    return np.stack(
        [np.diagonal(maps, offset=k, axis1=-2, axis2=-1).sum(axis=-1) for k in offsets],
        axis=-1,
    )


def band_mask(length: int, offsets: Sequence[int]) -> np.ndarray:
    """``(length, length)`` bool mask, True on the diagonals at ``offsets``."""
    idx = np.arange(length)
    diff = idx[None, :] - idx[:, None]
    return np.isin(diff, np.asarray(list(offsets), dtype=np.int64))


def top_columns(column_sums: np.ndarray, *, threshold: float) -> np.ndarray:
    """Columns whose sum, divided by the maximum over the last axis, reaches ``threshold``.

    ``column_sums`` is ``(..., L)``; a row whose maximum is not positive selects nothing.
    This is the paper's section 2 rule ("column sums normalised by their maximal value and
    clipped by a threshold").
    """
    sums = np.asarray(column_sums, dtype=np.float64)
    top = sums.max(axis=-1, keepdims=True)
    return (top > 0) & (column_scores(sums) >= threshold)


def high_attention_columns(
    attn: np.ndarray,
    *,
    queries: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
    threshold: float = 0.3,
) -> np.ndarray:
    """Columns of high attention in one window (the separators of the paper's Fig. 5).

    ``attn`` is ``(..., L, L)`` (one head, a layer's heads, ...): the maps are summed over
    the leading axes and over the query rows in ``queries`` (default all), the column sums
    outside ``candidates`` (default all) are set to 0, then normalised by their maximum;
    columns reaching ``threshold`` are returned as an ``(L,)`` bool mask.
    """
    maps = np.asarray(attn, dtype=np.float64)
    length = maps.shape[-1]
    maps = maps.reshape(-1, length, length).sum(axis=0)
    if queries is not None:
        maps = maps * _vector(queries, length, "queries", bool)[:, None]
    sums = maps.sum(axis=0)
    if candidates is not None:
        sums = sums * _vector(candidates, length, "candidates", bool)
    return top_columns(sums, threshold=threshold)


def block_matrix(
    similarity: np.ndarray,
    separator_flags: np.ndarray,
    *,
    valid: np.ndarray | None = None,
    exclude_diagonal: bool = True,
) -> np.ndarray:
    """Block-average an ``(L, L)`` matrix between separators (the paper's Fig. 5).

    Each separator ends a block (it belongs to the block it closes); a new block starts at
    the position after it. Element ``(i, j)`` of the result is the mean of ``similarity``
    over the rows of ``i``'s block and the columns of ``j``'s block, leaving out positions
    outside ``valid`` and, with ``exclude_diagonal``, the diagonal elements (which the
    paper zeroes). Positions outside ``valid`` and blocks with nothing to average are 0.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    length = sim.shape[0]
    _check_shape(sim, (length, length), "similarity")
    flags = _vector(separator_flags, length, "separator_flags", bool)
    keep = np.ones(length, bool) if valid is None else _vector(valid, length, "valid", bool)
    block = blocks_from_separators(flags)
    if not length:
        return np.zeros((0, 0))
    # the blocks' means over their valid positions (the package's Fig. 5 average)
    means = np.zeros((int(block[-1]) + 1,) * 2)
    if keep.any():
        found = block_average(sim[keep][:, keep], block[keep], exclude_diagonal=exclude_diagonal)
        means[: found.shape[0], : found.shape[1]] = np.nan_to_num(found, nan=0.0)
    return means[block][:, block] * np.outer(keep, keep)


def normalised_similarity(context_layer: np.ndarray, mask: np.ndarray, n_heads: int) -> np.ndarray:
    """Per-head context similarity ``C = H @ H.T`` normalised by its maximum (sec. 3).

    ``context_layer`` is one layer's ``(L, n_heads * d)`` head outputs, ``mask`` the
    ``(L,)`` positions that may pair. ``C`` is restricted to pairs of masked positions,
    its diagonal is zeroed, and each head's ``C`` is divided by its maximum over those
    pairs; a head whose maximum is not positive gives zeros. Returns
    ``(n_heads, L, L)``, symmetric, 0 outside the masked pairs.
    """
    hidden = np.asarray(context_layer, dtype=np.float64)
    if hidden.ndim != 2 or hidden.shape[1] % n_heads:
        raise ValueError(
            f"`context_layer` must be (L, n_heads * d) with n_heads={n_heads}, got {hidden.shape}"
        )
    length = hidden.shape[0]
    keep = _vector(mask, length, "mask", bool)
    heads = hidden.reshape(length, n_heads, -1).transpose(1, 0, 2)
    sim = np.where(pair_mask(keep), heads @ heads.transpose(0, 2, 1), 0.0)
    denom, positive = peak_scale(sim)
    return np.where(positive[:, None, None], sim / denom[:, None, None], 0.0)


def pairs_from_similarity(
    normalised: np.ndarray, threshold: float
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(head, i, j, score)`` of the upper-triangle elements ``i < j`` of normalised
    similarity maps ``(n_heads, L, L)`` that reach ``threshold`` (> 0)."""
    if not threshold > 0:
        raise ValueError(f"the similarity threshold must be positive, got {threshold}")
    length = normalised.shape[-1]
    upper = np.triu(np.ones((length, length), dtype=bool), k=1)
    head, i, j = np.nonzero((normalised >= threshold) & upper)
    return head, i, j, normalised[head, i, j]


def high_similarity_pairs_window(
    context_layer: np.ndarray,
    valid_nonspecial: np.ndarray,
    n_heads: int,
    threshold: float = 0.3,
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """High-similarity pairs of every head of one layer in one window (the paper's sec. 3).

    ``C = H @ H.T`` per head, diagonal zeroed, restricted to the positions in
    ``valid_nonspecial``, normalised by its maximum; pairs ``i < j`` with normalised
    similarity ``>= threshold``. Returns int arrays ``head``, ``i``, ``j`` and the float
    ``score`` (normalised similarity), sorted by (head, i, j).
    """
    normalised = normalised_similarity(context_layer, valid_nonspecial, n_heads)
    return pairs_from_similarity(normalised, threshold)


def nonspecial_mask(valid: np.ndarray, categories: np.ndarray) -> np.ndarray:
    """Valid positions that are neither [CLS], [SEP] nor padding."""
    return np.asarray(valid, dtype=bool) & ~np.isin(categories, SPECIAL_CATEGORIES)


def same_sentence_chance(sentence_ids: np.ndarray, mask: np.ndarray) -> float:
    """Probability that two distinct random positions in ``mask`` share a sentence.

    ``sum_s n_s (n_s - 1) / (n (n - 1))`` with ``n`` the masked positions and ``n_s`` those
    in sentence ``s`` (ids < 0 belong to no sentence); 0 when ``n < 2``.
    """
    ids = np.asarray(sentence_ids)[np.asarray(mask, dtype=bool)]
    n = ids.size
    if n < 2:
        return 0.0
    sizes = np.unique(ids[ids >= 0], return_counts=True)[1].astype(np.float64)
    return float((sizes * (sizes - 1)).sum() / (n * (n - 1)))


def _equal_token_chances(
    token_ids: np.ndarray, sentence_ids: np.ndarray, mask: np.ndarray
) -> Tuple[float, float]:
    """Probabilities that two distinct random masked positions have equal token ids:
    overall, and given that they lie in one sentence (0 where undefined)."""
    tokens = np.asarray(token_ids)[mask]
    sents = np.asarray(sentence_ids)[mask]
    n = tokens.size
    if n < 2:
        return 0.0, 0.0
    counts = np.unique(tokens, return_counts=True)[1].astype(np.float64)
    overall = float((counts * (counts - 1)).sum() / (n * (n - 1)))
    in_sentence = sents >= 0
    pair_counts = np.unique(
        np.stack([sents[in_sentence], tokens[in_sentence]]), axis=1, return_counts=True
    )[1].astype(np.float64)
    sizes = np.unique(sents[in_sentence], return_counts=True)[1].astype(np.float64)
    same = (sizes * (sizes - 1)).sum()
    within = float((pair_counts * (pair_counts - 1)).sum() / same) if same else 0.0
    return overall, within


# -- Figs. 2 and 3 --------------------------------------------------------------------------


class SummedAttention(Accumulator):
    """Attention maps summed over windows (the paper's Figs. 2 and 3).

    Fig. 2: the summed map of every head (``head_maps``) and of every layer (the sum of its
    heads, ``layer_maps``); the fraction of each head's (and layer's) summed mass on the
    diagonal, on the next-token (+1: query ``i`` attends ``i + 1``) and on the
    previous-token (-1) diagonals.

    Fig. 3: per window and head, the most attended columns (column sums over the real
    queries divided by their maximum, ``>= column_threshold``) are zeroed before summing
    (``layer_maps_zeroed_columns``); additionally zeroing the diagonals at
    ``zeroed_diagonals`` gives ``layer_maps_zeroed_columns_diagonals``. The diagonal and
    +1/-1 fractions of the column-zeroed maps are reported per head, too.

    Padding rows and columns (``valid`` False) are zeroed before anything is summed.
    """

    def __init__(
        self,
        n_layers: int,
        n_heads: int,
        seq_len: int,
        *,
        column_threshold: float = 0.3,
        zeroed_diagonals: Sequence[int] = (-1, 0, 1),
    ) -> None:
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.seq_len = seq_len
        self.column_threshold = float(column_threshold)
        self.zeroed_diagonals = tuple(int(k) for k in zeroed_diagonals)
        shape = (n_layers, n_heads)
        self.n_windows = 0
        self.head_maps = np.zeros(shape + (seq_len, seq_len))
        self.layer_maps_zeroed_columns = np.zeros((n_layers, seq_len, seq_len))
        self.layer_maps_zeroed_columns_diagonals = np.zeros((n_layers, seq_len, seq_len))
        self.zeroed_mass = np.zeros(shape)
        self.zeroed_band_mass = np.zeros(shape + (len(BAND_OFFSETS),))
        self.zeroed_column_count = np.zeros(shape, dtype=np.int64)
        self._band = band_mask(seq_len, self.zeroed_diagonals)

    _SETTINGS = ("n_layers", "n_heads", "seq_len", "column_threshold", "zeroed_diagonals")
    _SUMS = (
        "head_maps",
        "layer_maps_zeroed_columns",
        "layer_maps_zeroed_columns_diagonals",
        "zeroed_mass",
        "zeroed_band_mass",
        "zeroed_column_count",
    )

    def update(self, attn: np.ndarray, valid: np.ndarray) -> None:
        """Add one window's ``(n_layers, n_heads, L, L)`` attention probabilities."""
        length = self.seq_len
        maps = _check_shape(attn, (self.n_layers, self.n_heads, length, length), "attn")
        keep = _vector(valid, length, "valid", bool)
        maps = maps.astype(np.float64) * np.outer(keep, keep)
        self.head_maps += maps
        top = top_columns(maps.sum(axis=2), threshold=self.column_threshold)
        zeroed = maps * ~top[:, :, None, :]
        self.zeroed_mass += zeroed.sum(axis=(2, 3))
        self.zeroed_band_mass += band_mass(zeroed)
        self.zeroed_column_count += top.sum(axis=-1)
        layer_zeroed = zeroed.sum(axis=1)
        self.layer_maps_zeroed_columns += layer_zeroed
        self.layer_maps_zeroed_columns_diagonals += layer_zeroed * ~self._band
        self.n_windows += 1

    @property
    def layer_maps(self) -> np.ndarray:
        """``(n_layers, L, L)``: the summed maps of each layer's heads."""
        return self.head_maps.sum(axis=1)

    def result(self) -> Dict[str, Any]:
        """JSON-able summary.

        Keys: ``n_windows``, ``column_threshold``, ``zeroed_diagonals``; per head
        ``[layer][head]``: ``total_mass``, ``diagonal_fraction``, ``next_token_fraction``,
        ``previous_token_fraction``, the same three ``..._after_column_zeroing``, and
        ``mean_zeroed_columns`` (columns zeroed per window); per layer ``[layer]``:
        ``layer_diagonal_fraction``, ``layer_next_token_fraction``,
        ``layer_previous_token_fraction``.
        """
        total = self.head_maps.sum(axis=(2, 3))
        bands = _ratio(band_mass(self.head_maps), total[..., None])
        layer_bands = _ratio(band_mass(self.head_maps).sum(axis=1), total.sum(axis=1)[:, None])
        zeroed = _ratio(self.zeroed_band_mass, self.zeroed_mass[..., None])
        out: Dict[str, Any] = {
            "n_windows": self.n_windows,
            "column_threshold": self.column_threshold,
            "zeroed_diagonals": list(self.zeroed_diagonals),
            "total_mass": _jsonable(total),
        }
        for index, name in enumerate(("diagonal", "next_token", "previous_token")):
            out[f"{name}_fraction"] = _jsonable(bands[..., index])
            out[f"layer_{name}_fraction"] = _jsonable(layer_bands[..., index])
            out[f"{name}_fraction_after_column_zeroing"] = _jsonable(zeroed[..., index])
        out["mean_zeroed_columns"] = _jsonable(
            _ratio(self.zeroed_column_count, np.full(total.shape, self.n_windows))
        )
        return out

    def arrays(self) -> Dict[str, np.ndarray]:
        """``head_maps`` ``(n_layers, n_heads, L, L)``; ``layer_maps``,
        ``layer_maps_zeroed_columns``, ``layer_maps_zeroed_columns_diagonals``
        ``(n_layers, L, L)``."""
        return {
            "head_maps": self.head_maps,
            "layer_maps": self.layer_maps,
            "layer_maps_zeroed_columns": self.layer_maps_zeroed_columns,
            "layer_maps_zeroed_columns_diagonals": self.layer_maps_zeroed_columns_diagonals,
        }


# -- Fig. 4 -------------------------------------------------------------------------------------


class AttentionReceived(Accumulator):
    """Share of attention received by [CLS], [SEP], punctuation and words (Fig. 4).

    Per head: the attention mass that the real queries (``valid``) send to the keys of
    each category, divided by their total mass (pooled over windows); per layer the same
    over the layer's heads. ``token_share`` is the fraction of real wordpieces in each
    category, the level of uniform attention.

    Per layer and window, the separator columns of the paper's section 2: column sums of
    the layer's summed heads over the non-special queries, restricted to candidate columns
    (non-special ones with ``exclude_special_columns``, else all real ones), normalised by
    their maximum, ``>= column_threshold``. Reported averaged over windows: the share of
    the column-sum mass (of all real columns) on those top columns
    (``top_column_share``), on the top columns that are [SEP] or punctuation
    (``top_separator_column_share``), their number (``mean_top_columns``) and the
    fraction of them in each category (``top_column_category_share``).
    """

    def __init__(
        self,
        n_layers: int,
        n_heads: int,
        seq_len: int,
        *,
        column_threshold: float = 0.3,
        exclude_special_columns: bool = True,
    ) -> None:
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.seq_len = seq_len
        self.column_threshold = float(column_threshold)
        self.exclude_special_columns = bool(exclude_special_columns)
        self.n_windows = 0
        self.mass = np.zeros((n_layers, n_heads, N_CATEGORIES))
        self.token_counts = np.zeros(N_CATEGORIES, dtype=np.int64)
        self.top_windows = np.zeros(n_layers, dtype=np.int64)
        self.top_share_sum = np.zeros(n_layers)
        self.top_separator_share_sum = np.zeros(n_layers)
        self.top_category_counts = np.zeros((n_layers, N_CATEGORIES), dtype=np.int64)

    _SETTINGS = ("n_layers", "n_heads", "seq_len", "column_threshold", "exclude_special_columns")
    _SUMS = (
        "mass",
        "token_counts",
        "top_windows",
        "top_share_sum",
        "top_separator_share_sum",
        "top_category_counts",
    )

    def update(self, attn: np.ndarray, valid: np.ndarray, categories: np.ndarray) -> None:
        """Add one window's attention ``(n_layers, n_heads, L, L)``."""
        length = self.seq_len
        maps = _check_shape(attn, (self.n_layers, self.n_heads, length, length), "attn")
        keep = _vector(valid, length, "valid", bool)
        cats = _vector(categories, length, "categories", np.int64)
        if cats.size and (cats.min() < 0 or cats.max() >= N_CATEGORIES):
            raise ValueError(f"`categories` must lie in 0..{N_CATEGORIES - 1}")
        onehot = np.eye(N_CATEGORIES)[cats]
        received = (maps.astype(np.float64) * keep[:, None]).sum(axis=2)
        self.mass += received @ onehot
        self.token_counts += np.bincount(cats[keep], minlength=N_CATEGORIES)

        nonspecial = nonspecial_mask(keep, cats)
        from_words = (maps.astype(np.float64).sum(axis=1) * nonspecial[:, None]).sum(axis=1)
        from_words = from_words * keep
        candidates = nonspecial if self.exclude_special_columns else keep
        top = top_columns(from_words * candidates, threshold=self.column_threshold)
        total = from_words.sum(axis=-1)
        has = total > 0
        separator = np.isin(cats, (SEP, PUNCT))
        share = _ratio((from_words * top).sum(axis=-1), total)
        separator_share = _ratio((from_words * (top & separator)).sum(axis=-1), total)
        self.top_windows += has
        self.top_share_sum += np.where(has, share, 0.0)
        self.top_separator_share_sum += np.where(has, separator_share, 0.0)
        self.top_category_counts += (top.astype(np.int64) @ onehot.astype(np.int64)) * has[:, None]
        self.n_windows += 1

    def result(self) -> Dict[str, Any]:
        """JSON-able summary.

        Keys: ``n_windows``, ``category_names``; ``head_share`` ``[layer][head][category]``;
        ``layer_share`` ``[layer][category]``; ``token_share`` ``[category]``;
        ``top_column_share``, ``top_separator_column_share``, ``mean_top_columns``
        ``[layer]``; ``top_column_category_share`` ``[layer][category]``.
        """
        layer_mass = self.mass.sum(axis=1)
        top_counts = self.top_category_counts.sum(axis=-1)
        return {
            "n_windows": self.n_windows,
            "category_names": list(CATEGORY_NAMES),
            "column_threshold": self.column_threshold,
            "head_share": _jsonable(_ratio(self.mass, self.mass.sum(axis=-1, keepdims=True))),
            "layer_share": _jsonable(_ratio(layer_mass, layer_mass.sum(axis=-1, keepdims=True))),
            "token_share": _jsonable(_ratio(self.token_counts, self.token_counts.sum())),
            "top_column_share": _jsonable(_ratio(self.top_share_sum, self.top_windows)),
            "top_separator_column_share": _jsonable(
                _ratio(self.top_separator_share_sum, self.top_windows)
            ),
            "mean_top_columns": _jsonable(_ratio(top_counts, self.top_windows)),
            "top_column_category_share": _jsonable(
                _ratio(self.top_category_counts, top_counts[:, None])
            ),
        }

    def arrays(self) -> Dict[str, np.ndarray]:
        """``mass`` ``(n_layers, n_heads, n_categories)``: summed attention received."""
        return {"mass": self.mass}


# -- Figs. 6-8, 10-13 ---------------------------------------------------------------------------


class PairStatistics(Accumulator):
    """Statistics of high context-similarity pairs (sec. 3 and 4, Figs. 6-8 and 10-13).

    Per window and layer, the pairs of :func:`high_similarity_pairs_window` over the valid
    non-special positions. Per (layer, head), pooled over windows:

    * ``n_pairs``; ``equal_token_probability``: pairs between equal token ids (Fig. 6a);
      ``same_sentence_equal_token_probability``: the same among pairs within one sentence
      (Fig. 6b); each with its chance level (random distinct positions, weighted by pairs);
    * ``distance_histogram[layer][head][k]``: pairs at distance ``|i - j| = k``,
      ``k = 0..L-1`` (``k = 0`` is always empty), and ``mean_distance`` (Fig. 7);
    * ``same_sentence_probability`` and ``same_sentence_chance``: the probability that two
      random distinct valid non-special positions of the window share a sentence,
      averaged over windows weighted by the head's pairs (Fig. 8);
    * ``count_maps``: ``(n_layers, n_heads, L, L)`` counts of pairs at ``(i, j)``, ``i < j``
      (Fig. 10);
    * anchors (Fig. 11a): per window the head's most common token id among its pairs'
      two ends (ties: the smallest id) and the share of its pairs that include it,
      averaged over the windows in which the head has pairs (``anchor_share_mean``,
      ``anchor_share_std``, ``anchor_share_histogram``);
    * per layer and window, the number of distinct anchor ids over the heads (heads
      without pairs have none), as a distribution over ``0..n_heads`` (Fig. 11b);
    * per layer, ``layer_similarity_sum``: the normalised similarity matrices summed over
      heads and windows (Fig. 12), and the pair distances over the layer's heads with
      their mean (Fig. 13).
    """

    def __init__(
        self,
        n_layers: int,
        n_heads: int,
        seq_len: int,
        *,
        threshold: float = 0.3,
        anchor_bins: int = 20,
    ) -> None:
        if not threshold > 0:
            raise ValueError(f"the similarity threshold must be positive, got {threshold}")
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.seq_len = seq_len
        self.threshold = float(threshold)
        self.anchor_bins = int(anchor_bins)
        shape = (n_layers, n_heads)
        self.n_windows = 0
        self.n_pairs = np.zeros(shape, dtype=np.int64)
        self.equal_pairs = np.zeros(shape, dtype=np.int64)
        self.same_sentence_pairs = np.zeros(shape, dtype=np.int64)
        self.same_sentence_equal_pairs = np.zeros(shape, dtype=np.int64)
        self.distance_sum = np.zeros(shape, dtype=np.int64)
        self.same_sentence_chance_sum = np.zeros(shape)
        self.equal_chance_sum = np.zeros(shape)
        self.same_sentence_equal_chance_sum = np.zeros(shape)
        self.window_chance_sum = 0.0
        self.distance_histogram = np.zeros(shape + (seq_len,), dtype=np.int64)
        self.count_maps = np.zeros(shape + (seq_len, seq_len), dtype=np.int64)
        self.anchor_windows = np.zeros(shape, dtype=np.int64)
        self.anchor_share_sum = np.zeros(shape)
        self.anchor_share_sqsum = np.zeros(shape)
        self.anchor_share_histogram = np.zeros(shape + (self.anchor_bins,), dtype=np.int64)
        self.distinct_anchor_histogram = np.zeros((n_layers, n_heads + 1), dtype=np.int64)
        self.layer_similarity_sum = np.zeros((n_layers, seq_len, seq_len))

    _SETTINGS = ("n_layers", "n_heads", "seq_len", "threshold", "anchor_bins")
    _SUMS = (
        "window_chance_sum",
        "n_pairs",
        "equal_pairs",
        "same_sentence_pairs",
        "same_sentence_equal_pairs",
        "distance_sum",
        "same_sentence_chance_sum",
        "equal_chance_sum",
        "same_sentence_equal_chance_sum",
        "distance_histogram",
        "count_maps",
        "anchor_windows",
        "anchor_share_sum",
        "anchor_share_sqsum",
        "anchor_share_histogram",
        "distinct_anchor_histogram",
        "layer_similarity_sum",
    )

    def update(
        self,
        context: np.ndarray,
        valid: np.ndarray,
        token_ids: np.ndarray,
        categories: np.ndarray,
        sentence_ids: np.ndarray,
    ) -> None:
        """Add one window's head outputs ``(n_layers, L, n_heads * d)``."""
        length = self.seq_len
        ctx = np.asarray(context)
        if ctx.ndim != 3 or ctx.shape[:2] != (self.n_layers, length):
            raise ValueError(
                f"`context` must have shape ({self.n_layers}, {length}, n_heads * d), "
                f"got {ctx.shape}"
            )
        keep = nonspecial_mask(
            _vector(valid, length, "valid", bool),
            _vector(categories, length, "categories", np.int64),
        )
        tokens = _vector(token_ids, length, "token_ids", np.int64)
        sents = _vector(sentence_ids, length, "sentence_ids", np.int64)
        chance_same = same_sentence_chance(sents, keep)
        chance_equal, chance_equal_within = _equal_token_chances(tokens, sents, keep)
        for layer in range(self.n_layers):
            normalised = normalised_similarity(ctx[layer], keep, self.n_heads)
            self.layer_similarity_sum[layer] += normalised.sum(axis=0)
            head, i, j, _ = pairs_from_similarity(normalised, self.threshold)
            self._add_pairs(layer, head, i, j, tokens, sents)
            per_head = np.bincount(head, minlength=self.n_heads)
            same_per_head = np.bincount(
                head, weights=(sents[i] == sents[j]) & (sents[i] >= 0), minlength=self.n_heads
            )
            self.same_sentence_chance_sum[layer] += chance_same * per_head
            self.equal_chance_sum[layer] += chance_equal * per_head
            self.same_sentence_equal_chance_sum[layer] += chance_equal_within * same_per_head
        self.window_chance_sum += chance_same
        self.n_windows += 1

    def _add_pairs(
        self,
        layer: int,
        head: np.ndarray,
        i: np.ndarray,
        j: np.ndarray,
        tokens: np.ndarray,
        sents: np.ndarray,
    ) -> None:
        """Add one layer's pairs of one window to the per-head sums."""
        n_heads, length = self.n_heads, self.seq_len
        equal = tokens[i] == tokens[j]
        same = (sents[i] == sents[j]) & (sents[i] >= 0)
        distance = j - i
        per_head = np.bincount(head, minlength=n_heads)
        self.n_pairs[layer] += per_head
        self.equal_pairs[layer] += np.bincount(head[equal], minlength=n_heads)
        self.same_sentence_pairs[layer] += np.bincount(head[same], minlength=n_heads)
        self.same_sentence_equal_pairs[layer] += np.bincount(head[same & equal], minlength=n_heads)
        self.distance_sum[layer] += np.bincount(head, weights=distance, minlength=n_heads).astype(
            np.int64
        )
        self.distance_histogram[layer] += np.bincount(
            head * length + distance, minlength=n_heads * length
        ).reshape(n_heads, length)
        np.add.at(self.count_maps[layer], (head, i, j), 1)

        # Anchors: per head, the token id included in most pairs (Fig. 11).
        has = per_head > 0
        if not has.any():
            self.distinct_anchor_histogram[layer, 0] += 1
            return
        ends = np.concatenate([tokens[i], tokens[j]])
        ids, index = np.unique(ends, return_inverse=True)
        n_ids = ids.size
        ci, cj = index[: head.size], index[head.size :]
        keys = np.concatenate([head * n_ids + ci, (head * n_ids + cj)[ci != cj]])
        counts = np.bincount(keys, minlength=n_heads * n_ids).reshape(n_heads, n_ids)
        best = counts.argmax(axis=1)
        share = counts.max(axis=1)[has] / per_head[has]
        self.anchor_windows[layer] += has
        self.anchor_share_sum[layer, has] += share
        self.anchor_share_sqsum[layer, has] += share**2
        bins = np.minimum((share * self.anchor_bins).astype(np.int64), self.anchor_bins - 1)
        np.add.at(self.anchor_share_histogram[layer], (np.flatnonzero(has), bins), 1)
        self.distinct_anchor_histogram[layer, np.unique(ids[best[has]]).size] += 1

    @property
    def layer_distance_histogram(self) -> np.ndarray:
        """``(n_layers, L)``: pair distances over each layer's heads (Fig. 13)."""
        return self.distance_histogram.sum(axis=1)

    def result(self) -> Dict[str, Any]:
        """JSON-able summary; ``None`` marks statistics over zero pairs or windows.

        Keys: ``n_windows``, ``threshold``; per head ``[layer][head]``: ``n_pairs``,
        ``mean_pairs_per_window``, ``equal_token_probability``, ``equal_token_chance``,
        ``same_sentence_equal_token_probability``, ``same_sentence_equal_token_chance``,
        ``same_sentence_probability``, ``same_sentence_chance``, ``mean_distance``,
        ``anchor_windows``, ``anchor_share_mean``, ``anchor_share_std``;
        ``distance_histogram`` ``[layer][head][distance]``; ``anchor_share_histogram``
        ``[layer][head][bin]`` with ``anchor_share_bin_edges``; per layer:
        ``layer_n_pairs``, ``layer_equal_token_probability``,
        ``layer_same_sentence_probability``, ``layer_same_sentence_chance``,
        ``layer_mean_distance``, ``layer_distance_histogram`` ``[layer][distance]``,
        ``distinct_anchor_histogram`` (window counts) and ``distinct_anchor_distribution``
        ``[layer][0..n_heads]``, ``mean_distinct_anchors``; and
        ``mean_window_same_sentence_chance`` (unweighted over windows).
        """
        n_pairs = self.n_pairs
        layer_pairs = n_pairs.sum(axis=1)
        anchor_mean = _ratio(self.anchor_share_sum, self.anchor_windows)
        anchor_var = _ratio(self.anchor_share_sqsum, self.anchor_windows) - anchor_mean**2
        distinct = self.distinct_anchor_histogram
        distinct_windows = distinct.sum(axis=1)
        return {
            "n_windows": self.n_windows,
            "threshold": self.threshold,
            "n_pairs": _jsonable(n_pairs),
            "mean_pairs_per_window": _jsonable(
                _ratio(n_pairs, np.full(n_pairs.shape, self.n_windows))
            ),
            "equal_token_probability": _jsonable(_ratio(self.equal_pairs, n_pairs)),
            "equal_token_chance": _jsonable(_ratio(self.equal_chance_sum, n_pairs)),
            "same_sentence_equal_token_probability": _jsonable(
                _ratio(self.same_sentence_equal_pairs, self.same_sentence_pairs)
            ),
            "same_sentence_equal_token_chance": _jsonable(
                _ratio(self.same_sentence_equal_chance_sum, self.same_sentence_pairs)
            ),
            "same_sentence_probability": _jsonable(_ratio(self.same_sentence_pairs, n_pairs)),
            "same_sentence_chance": _jsonable(_ratio(self.same_sentence_chance_sum, n_pairs)),
            "mean_window_same_sentence_chance": _jsonable(
                _ratio(np.float64(self.window_chance_sum), np.float64(self.n_windows))
            ),
            "mean_distance": _jsonable(_ratio(self.distance_sum, n_pairs)),
            "distance_histogram": _jsonable(self.distance_histogram),
            "anchor_windows": _jsonable(self.anchor_windows),
            "anchor_share_mean": _jsonable(anchor_mean),
            "anchor_share_std": _jsonable(np.sqrt(np.maximum(anchor_var, 0.0))),
            "anchor_share_histogram": _jsonable(self.anchor_share_histogram),
            "anchor_share_bin_edges": _jsonable(np.linspace(0.0, 1.0, self.anchor_bins + 1)),
            "distinct_anchor_histogram": _jsonable(distinct),
            "distinct_anchor_distribution": _jsonable(_ratio(distinct, distinct_windows[:, None])),
            "mean_distinct_anchors": _jsonable(
                _ratio(distinct @ np.arange(self.n_heads + 1), distinct_windows)
            ),
            "layer_n_pairs": _jsonable(layer_pairs),
            "layer_equal_token_probability": _jsonable(
                _ratio(self.equal_pairs.sum(axis=1), layer_pairs)
            ),
            "layer_same_sentence_probability": _jsonable(
                _ratio(self.same_sentence_pairs.sum(axis=1), layer_pairs)
            ),
            "layer_same_sentence_chance": _jsonable(
                _ratio(self.same_sentence_chance_sum.sum(axis=1), layer_pairs)
            ),
            "layer_mean_distance": _jsonable(_ratio(self.distance_sum.sum(axis=1), layer_pairs)),
            "layer_distance_histogram": _jsonable(self.layer_distance_histogram),
        }

    def arrays(self) -> Dict[str, np.ndarray]:
        """``count_maps`` ``(n_layers, n_heads, L, L)`` (pairs ``i < j`` only),
        ``layer_similarity_sum`` ``(n_layers, L, L)``, ``distance_histogram``
        ``(n_layers, n_heads, L)`` and ``layer_distance_histogram`` ``(n_layers, L)``."""
        return {
            "count_maps": self.count_maps,
            "layer_similarity_sum": self.layer_similarity_sum,
            "distance_histogram": self.distance_histogram,
            "layer_distance_histogram": self.layer_distance_histogram,
        }
