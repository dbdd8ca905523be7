"""Context similarity matrices of self-attention head outputs (Halevi et al. 2026, Sec. 2-3).

For one layer, the output of head ``h`` is ``softmax(QK^T / sqrt(d)) V`` with shape
``(L, d)``; its *context similarity matrix* is ``H @ H.T`` (``L x L``). The paper's
Sec. 3 selects the "most significant" elements by zeroing the diagonal, normalising
the matrix by its maximum and keeping the elements ``>= 0.3``.

Inputs follow the pipeline's per-Doc layout:

- ``context``: xp array ``(n_win, L, n_heads * d)``, the head outputs concatenated over
  heads (head ``h`` is columns ``h*d:(h+1)*d``), one row block per transformer window.
- ``wp_mask``: ``(n_win, L)`` bool, True for wordpieces that may take part.
- ``wp2tok``: numpy ``(n_win, L)`` int, the spaCy token index of each wordpiece or -1.

All heavy computation happens on the array's device (numpy or cupy); only the kept
pairs are copied to the host.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, List, Union

import numpy
from thinc.api import get_array_module, to_numpy
from thinc.types import Floats3d, Floats4d

from .pairs import HeadPairs

#: numpy or cupy input array (thinc-typed or plain ndarray).
ArrayIn = Union[Floats3d, numpy.ndarray]

__all__ = [
    "WordpiecePairs",
    "context_similarity",
    "high_similarity_pairs",
    "map_pairs_to_tokens",
]


@dataclass
class WordpiecePairs:
    """Kept wordpiece pairs of one Doc: window index, head index, wordpiece positions
    ``i < j`` inside the window (int32) and the normalised similarity ``score``
    (float32). Host numpy arrays of equal length, ordered by (head, window, i, j)."""

    window: numpy.ndarray
    head: numpy.ndarray
    i: numpy.ndarray
    j: numpy.ndarray
    score: numpy.ndarray

    @classmethod
    def empty(cls) -> WordpiecePairs:
        z = numpy.zeros((0,), dtype=numpy.int32)
        return cls(z, z.copy(), z.copy(), z.copy(), numpy.zeros((0,), dtype=numpy.float32))

    def __len__(self) -> int:
        return len(self.window)


def _head_list(n_heads: int, heads: Sequence[int] | None) -> List[int]:
    if n_heads <= 0:
        raise ValueError(f"n_heads must be positive, got {n_heads}")
    if heads is None:
        return list(range(n_heads))
    out = [int(h) for h in heads]
    bad = [h for h in out if not 0 <= h < n_heads]
    if bad:
        raise ValueError(f"head indices {bad} out of range for n_heads={n_heads}")
    return out


def _split_heads(context: Any, n_heads: int) -> Any:
    """``(n_win, L, n_heads*d)`` -> ``(n_win, n_heads, L, d)`` in float32/float64."""
    if context.ndim != 3:
        raise ValueError(f"context must be (n_win, L, n_heads*d), got shape {context.shape}")
    n_win, length, width = context.shape
    if width % n_heads:
        raise ValueError(f"context width {width} is not divisible by n_heads={n_heads}")
    if context.dtype.kind != "f" or context.dtype.itemsize < 4:
        context = context.astype("float32")
    per_head = context.reshape(n_win, length, n_heads, width // n_heads)
    return per_head.transpose(0, 2, 1, 3)


def context_similarity(
    context: ArrayIn, n_heads: int, heads: Sequence[int] | None = None
) -> Floats4d:
    """Per window and head, the context similarity matrix ``H_h @ H_h.T``.

    context: ``(n_win, L, n_heads * d)`` head outputs of one layer (numpy or cupy).
    n_heads: number of heads concatenated in the last axis.
    heads: which heads to compute (default all), in the given order.
    RETURNS: ``(n_win, len(heads), L, L)`` array on the same device; float16 input is
        computed in float32. Nothing is masked or normalised here.
    """
    xp = get_array_module(context)
    head_idx = _head_list(n_heads, heads)
    per_head = _split_heads(context, n_heads)
    if head_idx != list(range(n_heads)):
        per_head = per_head[:, xp.asarray(head_idx, dtype="int64")]
    return xp.matmul(per_head, per_head.transpose(0, 1, 3, 2))


def high_similarity_pairs(
    context: ArrayIn,
    wp_mask: Any,
    *,
    n_heads: int,
    heads: Sequence[int] | None = None,
    threshold: float = 0.3,
) -> WordpiecePairs:
    """The paper's high context-similarity wordpiece pairs, per window and head.

    For every window ``w`` and head ``h`` (one head at a time, all windows at once):

    1. ``S = H @ H.T`` (see :func:`context_similarity`);
    2. zero the diagonal and every row/column whose ``wp_mask`` is False;
    3. divide by ``max(S)`` over that masked matrix; if the maximum is ``<= 0`` the
       window/head yields no pairs (no division, no NaN);
    4. keep the elements ``>= threshold`` with ``i < j`` whose two wordpieces are
       both in ``wp_mask`` (masked and diagonal elements are never returned, even
       for ``threshold <= 0``).

    Returns host arrays (:class:`WordpiecePairs`), ordered by head (in the order of
    ``heads``), then window, i, j;
    ``head`` holds the original head indices. Only the kept pairs leave the device.
    """
    xp = get_array_module(context)
    head_idx = _head_list(n_heads, heads)
    per_head = _split_heads(context, n_heads)
    n_win, _, length, _ = per_head.shape
    mask = xp.asarray(wp_mask).astype(bool)
    if mask.shape != (n_win, length):
        raise ValueError(f"wp_mask shape {mask.shape} does not match context ({n_win}, {length})")
    if not head_idx or n_win == 0 or length == 0:
        return WordpiecePairs.empty()
    # Masked matrix: both wordpieces in the mask, diagonal excluded.
    off_diag = ~xp.eye(length, dtype=bool)
    both = mask[:, :, None] & mask[:, None, :] & off_diag[None]
    # Pairs that may be returned: the strict upper triangle (i < j) of the above.
    upper = both & xp.triu(xp.ones((length, length), dtype=bool), k=1)[None]
    zero = xp.zeros((), dtype=per_head.dtype)

    windows: List[Any] = []
    rows: List[Any] = []
    cols: List[Any] = []
    scores: List[Any] = []
    head_ids: List[numpy.ndarray] = []
    for h in head_idx:
        out = per_head[:, h]
        sim = xp.where(both, xp.matmul(out, out.transpose(0, 2, 1)), zero)
        peak = sim.reshape(n_win, length * length).max(axis=1)
        positive = peak > 0
        denom = xp.where(positive, peak, xp.ones_like(peak))
        norm = sim / denom[:, None, None]
        keep = upper & positive[:, None, None] & (norm >= threshold)
        w, i, j = xp.nonzero(keep)
        windows.append(w)
        rows.append(i)
        cols.append(j)
        scores.append(norm[w, i, j])
        head_ids.append(numpy.full((int(w.shape[0]),), h, dtype=numpy.int32))

    def _host(parts: List[Any], dtype: Any) -> numpy.ndarray:
        return numpy.asarray(to_numpy(xp.concatenate(parts)), dtype=dtype)

    return WordpiecePairs(
        window=_host(windows, numpy.int32),
        head=numpy.concatenate(head_ids),
        i=_host(rows, numpy.int32),
        j=_host(cols, numpy.int32),
        score=_host(scores, numpy.float32),
    )


def map_pairs_to_tokens(wp_pairs: WordpiecePairs, wp2tok: Any, layer: int) -> HeadPairs:
    """Map wordpiece pairs to spaCy token pairs of one layer.

    ``tok = wp2tok[window, i]`` / ``wp2tok[window, j]``; pairs with an unmapped
    wordpiece (-1) or whose two wordpieces belong to the same token are dropped, and
    each pair is ordered so that ``tok_i < tok_j``. When several wordpiece pairs map
    to the same (layer, head, tok_i, tok_j) -- multi-wordpiece tokens, or the same
    pair seen in overlapping windows -- only the one with the highest score is kept.
    Vectorised (one sort by score, one by pair key); returns a :class:`HeadPairs` sorted by
    (layer, head, i, j).
    """
    table = numpy.asarray(to_numpy(wp2tok), dtype=numpy.int64)
    if table.ndim != 2:
        raise ValueError(f"wp2tok must be (n_win, L), got shape {table.shape}")
    if not len(wp_pairs):
        return HeadPairs.empty()
    win = numpy.asarray(wp_pairs.window, dtype=numpy.int64)
    wi = numpy.asarray(wp_pairs.i, dtype=numpy.int64)
    wj = numpy.asarray(wp_pairs.j, dtype=numpy.int64)
    if (
        win.min() < 0
        or win.max() >= table.shape[0]
        or min(wi.min(), wj.min()) < 0
        or max(wi.max(), wj.max()) >= table.shape[1]
    ):
        raise ValueError("wordpiece pairs index outside wp2tok")
    ti = table[win, wi]
    tj = table[win, wj]
    ok = (ti >= 0) & (tj >= 0) & (ti != tj)
    a = numpy.minimum(ti, tj)[ok]
    b = numpy.maximum(ti, tj)[ok]
    head = numpy.asarray(wp_pairs.head, dtype=numpy.int64)[ok]
    score = numpy.asarray(wp_pairs.score, dtype=numpy.float32)[ok]
    if not len(a):
        return HeadPairs.empty()
    # One int64 key per (head, a, b); visiting pairs by descending score, the first
    # occurrence of each key is its highest-scoring pair.
    n_tok = int(max(a.max(), b.max())) + 1
    key = (head * n_tok + a) * n_tok + b
    by_score = numpy.argsort(-score, kind="stable")
    _, first_seen = numpy.unique(key[by_score], return_index=True)
    keep = by_score[first_seen]
    return HeadPairs(
        layer=numpy.full((len(keep),), layer, dtype=numpy.int32),
        head=head[keep],
        i=a[keep],
        j=b[keep],
        score=score[keep],
    )
