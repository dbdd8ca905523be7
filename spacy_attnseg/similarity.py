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
from typing import Any, List, Optional, Tuple, Union

import numpy
from thinc.api import get_array_module, to_numpy
from thinc.types import Floats3d, Floats4d

from .errors import invalid_array
from .pairs import HeadPairs
from .segments import BandedSimilarity

#: numpy or cupy input array (thinc-typed or plain ndarray).
ArrayIn = Union[Floats3d, numpy.ndarray]

__all__ = [
    "WordpiecePairs",
    "context_similarity",
    "high_similarity_pairs",
    "layer_token_pairs",
    "map_pairs_to_tokens",
    "segment_similarity",
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


def _head_list(n_heads: int, heads: Sequence[int] | None, function: str) -> List[int]:
    if n_heads <= 0:
        raise invalid_array(f"similarity.{function}", f"n_heads must be positive, got {n_heads}")
    if heads is None:
        return list(range(n_heads))
    out = [int(h) for h in heads]
    bad = [h for h in out if not 0 <= h < n_heads]
    if bad:
        raise invalid_array(
            f"similarity.{function}", f"head indices {bad} out of range for n_heads={n_heads}"
        )
    return out


def _split_heads(context: Any, n_heads: int, function: str) -> Any:
    """``(n_win, L, n_heads*d)`` -> ``(n_win, n_heads, L, d)`` in float32/float64."""
    if context.ndim != 3:
        raise invalid_array(
            f"similarity.{function}", f"context must be (n_win, L, n_heads*d), got {context.shape}"
        )
    n_win, length, width = context.shape
    if width % n_heads:
        raise invalid_array(
            f"similarity.{function}", f"context width {width} is not divisible by n_heads={n_heads}"
        )
    if context.dtype.kind != "f" or context.dtype.itemsize < 4:
        context = context.astype("float32")
    per_head = context.reshape(n_win, length, n_heads, width // n_heads)
    return per_head.transpose(0, 2, 1, 3)


def pair_mask(mask: Any) -> Any:
    """The pairs the paper's rule may return (sec. 3): ``(..., L, L)`` True where both
    positions are in ``mask`` (``(..., L)`` bool) and off the diagonal."""
    xp = get_array_module(mask)
    length = mask.shape[-1]
    off_diagonal = ~xp.eye(length, dtype=bool)
    return mask[..., :, None] & mask[..., None, :] & off_diagonal


def peak_scale(sims: Any) -> Tuple[Any, Any]:
    """The paper's normalisation (sec. 3): each ``(..., L, L)`` similarity matrix, with
    the pairs outside ``pair_mask`` already 0, is divided by its maximum; a matrix whose
    maximum is not positive has no pairs (and is not divided). RETURNS: the divisor and
    whether the maximum is positive, both ``(...,)``."""
    xp = get_array_module(sims)
    peak = sims.reshape(sims.shape[:-2] + (-1,)).max(axis=-1)
    positive = peak > 0
    return xp.where(positive, peak, xp.ones_like(peak)), positive


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
    head_idx = _head_list(n_heads, heads, "context_similarity")
    per_head = _split_heads(context, n_heads, "context_similarity")
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
    head_idx = _head_list(n_heads, heads, "high_similarity_pairs")
    per_head = _split_heads(context, n_heads, "high_similarity_pairs")
    n_win, _, length, _ = per_head.shape
    mask = xp.asarray(wp_mask).astype(bool)
    if mask.shape != (n_win, length):
        raise invalid_array(
            "similarity.high_similarity_pairs",
            f"wp_mask shape {mask.shape} does not match context ({n_win}, {length})",
        )
    if not head_idx or n_win == 0 or length == 0:
        return WordpiecePairs.empty()
    both = pair_mask(mask)
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
        denom, positive = peak_scale(sim)
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
        raise invalid_array(
            "similarity.map_pairs_to_tokens", f"wp2tok must be (n_win, L), got shape {table.shape}"
        )
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
        raise invalid_array(
            "similarity.map_pairs_to_tokens", "wordpiece pairs index outside wp2tok"
        )
    ti = table[win, wi]
    tj = table[win, wj]
    ok = (ti >= 0) & (tj >= 0) & (ti != tj)
    a = numpy.minimum(ti, tj)[ok]
    b = numpy.maximum(ti, tj)[ok]
    head = numpy.asarray(wp_pairs.head, dtype=numpy.int64)[ok]
    score = numpy.asarray(wp_pairs.score, dtype=numpy.float32)[ok]
    if not len(a):
        return HeadPairs.empty()
    return _highest_per_pair(layer, head, a, b, score)


def _highest_per_pair(
    layer: int, head: numpy.ndarray, a: numpy.ndarray, b: numpy.ndarray, score: numpy.ndarray
) -> HeadPairs:
    """The highest-scoring row of every (head, a, b), as a sorted :class:`HeadPairs`."""
    # One int64 key per (head, a, b); visiting pairs by descending score, the first
    # occurrence of each key is its highest-scoring pair.
    n_tok = int(max(a.max(), b.max())) + 1
    key = (head.astype(numpy.int64) * n_tok + a) * n_tok + b
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


#: Windows whose similarity matrices the general path of :func:`layer_token_pairs`
#: holds at a time.
GROUP_WINDOWS = 16


# --- token pairs of one layer in one pass ----------------------------------------------


@dataclass
class _WindowPlan:
    """One window's wordpieces for :func:`layer_token_pairs`.

    ``q``: the window positions in ``wp_mask`` (a slice when contiguous), ``n_q`` their
    number; ``first``: per token of the window (a run of consecutive mapped
    wordpieces), the index among ``q`` of its first wordpiece (None: every position of
    ``q`` is a one-wordpiece token); ``extra``: per offset ``o >= 1``, the runs longer
    than ``o`` and the index among ``q`` of their ``o``-th wordpiece; ``tokens``: the
    token of each run (strictly increasing); ``start``/``end``: the token range.
    """

    window: int
    q: Union[slice, numpy.ndarray]
    n_q: int
    first: Optional[numpy.ndarray]
    extra: List[Tuple[numpy.ndarray, numpy.ndarray]]
    tokens: numpy.ndarray
    start: int
    end: int


def _plan_windows(mask: numpy.ndarray, table: numpy.ndarray) -> Optional[List[_WindowPlan]]:
    """Per window with a mapped, unmasked wordpiece, its plan; None when a window's
    tokens are not in wordpiece order or the windows' token ranges do not move forward
    (the general, sort-based path handles those)."""
    plans: List[_WindowPlan] = []
    for w in range(mask.shape[0]):
        positions = numpy.flatnonzero(mask[w])
        if not len(positions):
            continue
        toks = table[w, positions]
        mapped = numpy.flatnonzero(toks >= 0)
        if not len(mapped):
            continue
        toks = toks[mapped]
        step = toks[1:] - toks[:-1]
        if (step < 0).any():
            return None
        first_pos, last_pos = int(positions[0]), int(positions[-1]) + 1
        q: Union[slice, numpy.ndarray] = (
            slice(first_pos, last_pos) if last_pos - first_pos == len(positions) else positions
        )
        starts = numpy.flatnonzero(numpy.concatenate(([True], step != 0)))
        lengths = numpy.diff(numpy.append(starts, len(toks)))
        extra = []
        for offset in range(1, int(lengths.max())):
            runs = numpy.flatnonzero(lengths > offset)
            extra.append((runs, mapped[starts[runs] + offset]))
        toks = toks[starts]
        first = None if len(toks) == len(positions) else mapped[starts]
        start, end = int(toks[0]), int(toks[-1]) + 1
        if plans and (start < plans[-1].start or end < plans[-1].end):
            return None
        plans.append(
            _WindowPlan(
                window=w,
                q=q,
                n_q=len(positions),
                first=first,
                extra=extra,
                tokens=toks,
                start=start,
                end=end,
            )
        )
    return plans


def _to_runs(values: numpy.ndarray, plan: _WindowPlan) -> numpy.ndarray:
    """``(n, n_q, n_q)`` values of a window's wordpieces -> ``(n, n_tok, n_tok)`` values
    of its tokens: the maximum over each token's wordpieces on both axes (unmapped
    wordpieces left out). Returns a new array (possibly a transposed view), or
    ``values`` itself when every wordpiece is a token."""
    if plan.first is None:
        return values
    # Reduce along axis 1 (contiguous rows) twice, transposing in between.
    rows = _reduce_rows(values, plan)
    return _reduce_rows(numpy.ascontiguousarray(rows.transpose(0, 2, 1)), plan).transpose(0, 2, 1)


def _reduce_rows(values: numpy.ndarray, plan: _WindowPlan) -> numpy.ndarray:
    assert plan.first is not None
    rows = values[:, plan.first]
    for runs, src in plan.extra:
        rows[:, runs] = numpy.maximum(rows[:, runs], values[:, src])
    return rows


def _place(values: numpy.ndarray, plan: _WindowPlan) -> numpy.ndarray:
    """Token values of a window's runs into its dense token range ``[start, end)``."""
    n_range = plan.end - plan.start
    if len(plan.tokens) == n_range:
        return values
    local = plan.tokens - plan.start
    out = numpy.zeros(values.shape[:-2] + (n_range, n_range), dtype=values.dtype)
    out[..., local[:, None], local[None, :]] = values
    return out


def layer_token_pairs(
    context: ArrayIn,
    wp_mask: Any,
    wp2tok: Any,
    *,
    n_heads: int,
    layer: int,
    heads: Sequence[int] | None = None,
    threshold: float = 0.3,
    n_tokens: int | None = None,
    with_segment_similarity: bool = False,
) -> Tuple[HeadPairs, Optional[BandedSimilarity]]:
    """:func:`high_similarity_pairs` followed by :func:`map_pairs_to_tokens`, and
    optionally :func:`segment_similarity`, in one pass over the windows.

    The same results as those functions: per window, the heads' similarity matrices
    are computed over the masked-in wordpieces only, normalised, reduced to tokens with
    a maximum over each token's wordpieces, overlapping windows are combined with a
    maximum where their token ranges overlap, and the threshold is applied to the
    token maxima; no wordpiece pair list is built and nothing is sorted. The float32
    operations are those of the two functions, except that ``H @ H.T`` is taken over
    the masked-in rows rather than the window's padded width: BLAS may round a score
    differently in the last bit for long windows (as the padded width, which depends
    on the other Docs of the batch, already does in the two functions). Falls back to
    them when the inputs are not float32 numpy arrays, ``threshold <= 0``, or a
    window's wordpieces are not in token order.

    n_tokens: number of tokens of the Doc (default: ``wp2tok.max() + 1``); the segment
        similarity is that of ``n_tokens`` tokens.
    RETURNS: the layer's :class:`HeadPairs` (sorted) and, with
        ``with_segment_similarity``, the token similarity of :func:`segment_similarity`
        (a :class:`~spacy_attnseg.segments.BandedSimilarity`; else None).
    """
    head_idx = _head_list(n_heads, heads, "layer_token_pairs")
    per_head = _split_heads(context, n_heads, "layer_token_pairs")
    n_win, _, length, _ = per_head.shape
    table = numpy.asarray(to_numpy(wp2tok), dtype=numpy.int64)
    if table.shape != (n_win, length):
        raise invalid_array(
            "similarity.layer_token_pairs",
            f"wp2tok must be ({n_win}, {length}), got shape {table.shape}",
        )
    if n_tokens is None:
        n_tokens = int(table.max()) + 1 if table.size else 0
    xp = get_array_module(context)
    mask = numpy.asarray(to_numpy(xp.asarray(wp_mask)), dtype=bool)
    if mask.shape != (n_win, length):
        raise invalid_array(
            "similarity.layer_token_pairs",
            f"wp_mask shape {mask.shape} does not match context ({n_win}, {length})",
        )
    # The segment similarity is computed in float32 whatever the input; float64 input
    # (pairs in float64) takes the general path.
    fast = xp is numpy and threshold > 0 and per_head.dtype == numpy.float32
    plans = _plan_windows(mask, table) if fast else None
    if plans is None:
        # a group of windows at a time; a token pair seen in several groups keeps its
        # highest score, as map_pairs_to_tokens does within a group
        groups: List[HeadPairs] = []
        for lo in range(0, n_win, GROUP_WINDOWS):
            rows = slice(lo, lo + GROUP_WINDOWS)
            wp_pairs = high_similarity_pairs(
                context[rows],
                xp.asarray(wp_mask)[rows],
                n_heads=n_heads,
                heads=heads,
                threshold=threshold,
            )
            groups.append(map_pairs_to_tokens(wp_pairs, table[rows], layer))
        joined = HeadPairs.concat(groups)
        found = (
            _highest_per_pair(layer, joined.head, joined.i, joined.j, joined.score)
            if len(joined)
            else joined
        )
        segment = None
        if with_segment_similarity:
            segment = segment_similarity(context, wp_mask, table, n_tokens, n_heads, heads)
        return found, segment

    pair_heads = sorted(set(head_idx))
    # Rows of the per-window stack that give the pairs: each head once, in order.
    pair_rows: Optional[List[int]] = [head_idx.index(h) for h in pair_heads]
    if pair_rows == list(range(len(head_idx))):
        pair_rows = None
    head_rows = None if head_idx == list(range(n_heads)) else numpy.asarray(head_idx)
    n_pair_heads = len(pair_heads)
    band = max((plan.end - plan.start for plan in plans), default=0)
    # A window's block holds, for its token range [start, end), the highest normalised
    # similarity of the token pairs' wordpiece pairs; rows that a later window also
    # covers pass their values on through ``carry``. The rows a window owns (up to the
    # next window's start) are final and thresholded at once, so that only the kept
    # pairs outlive the window; per head, windows emit rows in token order and a block
    # is in (t, c) order, so the kept pairs come out sorted by (head, i, j).
    kept: List[List[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]] = [[] for _ in pair_heads]
    segment = BandedSimilarity.zeros(n_tokens, band) if with_segment_similarity else None
    carry: Optional[numpy.ndarray] = None
    for k, plan in enumerate(plans):
        out = per_head[plan.window][:, plan.q]
        if head_rows is not None:
            out = out[head_rows]
        # The same product as high_similarity_pairs (numpy uses syrk for H @ H.T).
        sims = numpy.matmul(out, out.transpose(0, 2, 1))
        diag = numpy.arange(plan.n_q)
        sims[:, diag, diag] = 0
        # Only masked-in rows are here and the diagonal is 0: the same maximum as
        # high_similarity_pairs takes over its masked matrix.
        denom, positive = peak_scale(sims)
        if segment is not None:
            seg = numpy.where(positive[:, None, None], sims / denom[:, None, None], 0.0)
            seg_tok = _to_runs(seg.mean(axis=0)[None], plan)[0]
            upper_i, upper_j = numpy.triu_indices(len(plan.tokens), 1)
            rows_t = plan.tokens[upper_i]
            offsets = plan.tokens[upper_j] - rows_t
            segment.values[rows_t, offsets] = numpy.maximum(
                segment.values[rows_t, offsets], seg_tok[upper_i, upper_j]
            )
        if pair_rows is not None:
            sims, denom, positive = sims[pair_rows], denom[pair_rows], positive[pair_rows]
        # Token values = maximum over the tokens' wordpieces of the normalised
        # similarity. Rounded division by a positive number is monotone, so the
        # maximum is taken first and divided after: the same float32 values. For
        # tokens a < b every wordpiece pair has i < j (wordpieces are in token
        # order), so thresholding the maximum keeps exactly the token pairs with a
        # kept wordpiece pair, with its highest score.
        tok = _to_runs(sims, plan)
        numpy.divide(tok, denom[:, None, None], out=tok)
        if not positive.all():
            tok[~positive] = 0.0
        block = _place(tok, plan)
        if carry is not None:
            c = carry.shape[1]
            numpy.maximum(block[:, :c, :c], carry, out=block[:, :c, :c])
        n_range = plan.end - plan.start
        emit = n_range if k + 1 == len(plans) else min(n_range, plans[k + 1].start - plan.start)
        owned = block[:, :emit]
        # keep j > i (column c is token start + c, row r token start + r)
        keep = owned >= threshold
        keep &= numpy.arange(n_range)[None, None, :] > numpy.arange(emit)[None, :, None]
        hh, rr, cc = numpy.nonzero(keep)
        if len(hh):
            scores = owned[hh, rr, cc]
            cuts = numpy.searchsorted(hh, numpy.arange(n_pair_heads + 1))
            for h in range(n_pair_heads):
                lo, hi = cuts[h], cuts[h + 1]
                if hi > lo:
                    kept[h].append((rr[lo:hi] + plan.start, cc[lo:hi] + plan.start, scores[lo:hi]))
        carry = block[:, emit:, emit:].copy() if emit < n_range else None
    if segment is not None:
        segment.refresh()
    parts = [(h, part) for h, head_parts in enumerate(kept) for part in head_parts]
    if not parts:
        return HeadPairs.empty(), segment
    return (
        HeadPairs.from_sorted(
            layer=numpy.full((sum(len(p[0]) for _, p in parts),), layer, dtype=numpy.int32),
            head=numpy.concatenate(
                [numpy.full(len(p[0]), pair_heads[h], dtype=numpy.int32) for h, p in parts]
            ),
            i=numpy.concatenate([p[0] for _, p in parts]),
            j=numpy.concatenate([p[1] for _, p in parts]),
            score=numpy.concatenate([p[2] for _, p in parts]),
        ),
        segment,
    )


def segment_similarity(
    context: Any,
    wp_mask: Any,
    wp2tok: numpy.ndarray,
    n_tokens: int,
    n_heads: int,
    heads: Optional[Sequence[int]],
) -> BandedSimilarity:
    """Token x token similarity for the segments: per window, each head's context
    similarity with the diagonal zeroed, masked and divided by its maximum, averaged over
    the heads; wordpieces are mapped to tokens taking the maximum (over wordpieces and
    overlapping windows), negative values give 0. Tokens never in one window together
    stay at 0, so the matrix is returned as the band of the tokens that share one."""
    xp = get_array_module(context)
    n_win, length, width = context.shape
    head_dim = width // n_heads
    chosen = list(heads) if heads else list(range(n_heads))
    mapped = wp2tok >= 0
    spans = [
        int(row[ok].max() - row[ok].min()) + 1
        for row, ok in zip(wp2tok, mapped, strict=True)
        if ok.any()
    ]
    out = BandedSimilarity.zeros(n_tokens, max(spans, default=1))
    for lo in range(0, n_win, GROUP_WINDOWS):
        rows = slice(lo, lo + GROUP_WINDOWS)
        group = context[rows]
        split = group.reshape((group.shape[0], length, n_heads, head_dim))[:, :, chosen]
        split = split.transpose((0, 2, 1, 3)).astype("float32")
        sims = split @ split.transpose((0, 1, 3, 2))
        sims = sims * pair_mask(xp.asarray(wp_mask, dtype=bool)[rows])[:, None]
        denom, positive = peak_scale(sims)
        sims = xp.where(positive[..., None, None], sims / denom[..., None, None], 0.0)
        values = to_numpy(sims.mean(axis=1)).astype("float32")
        table = wp2tok[rows]
        windows, r, c = numpy.nonzero(mapped[rows][:, :, None] & mapped[rows][:, None, :])
        a, b = table[windows, r], table[windows, c]
        upper = a < b
        numpy.maximum.at(
            out.values, (a[upper], (b - a)[upper]), values[windows[upper], r[upper], c[upper]]
        )
    return out.refresh()
