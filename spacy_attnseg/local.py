"""Sentence vectors from one layer's attention computed again within each sentence.

In the transformer's pass every wordpiece attends to the whole window, so a sentence's
hidden states carry its neighbours, across a topic change too. The capture hooks keep
one layer's input hidden state, queries, keys and values (``capture.LOCAL``; in a large
batch only the input, ``capture.LOCAL_PROJECTION_BYTES``: the queries, keys and values
are then computed again from it on the windows' real rows, as the families' attention
reads the layer's input, post-layer-norm encoders all); here that layer's attention is
computed again with each wordpiece attending only to the wordpieces of its own sentence
(and the window's special tokens, as in a pass over the sentence alone). A sentence's
vector is what the layer's attention block adds to its input before the block's layer
normalisation::

    vector(s) = mean_{i in s} input_i + W_o mean_{i in s} context_i + b_o

(the mean over the sentence's wordpiece rows, as ``topics.mean_vectors``; ``W_o``,
``b_o`` the layer's attention output projection). The same queries, keys and values,
a mask instead of a second model pass. Only each sentence's own block of the
attention map is computed (its rows against its rows and the special tokens), so the
work grows with the sum of the squared sentence lengths, not with the windows'.
"""

import math
from typing import Any, Optional, Sequence, Tuple

import numpy
import torch

from .windows import group_sums, sorted_runs

#: Windows read at a time (their captured rows summed per unit at once).
WINDOWS_PER_CHUNK = 64

#: Attention scores (blocks x heads x queries x keys) computed at a time.
SCORES_PER_STEP = 1 << 22


def unit_blocks(
    units: numpy.ndarray, attention_mask: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The blocks of ``(n_windows, L)`` ``units``: one per unit present in a window.

    Returns ``(window, rows, specials)``: each block's window ``(n_blocks,)``; the
    positions of its rows ``(n_blocks, B)`` (-1 past the block's length, the longest
    block ``B``); the window's special positions (rows of no unit that are not padding)
    ``(n_blocks, S)``, -1 past their count. Blocks come shortest first; padding
    (``attention_mask`` 0) is in none."""
    n_windows, length = units.shape
    flat = numpy.flatnonzero((units >= 0) & (attention_mask > 0))
    window, position = numpy.divmod(flat, length)
    unit = units.reshape(-1)[flat]
    order, starts, sizes = sorted_runs(window, unit, position)
    window, position = window[order], position[order]
    block = numpy.repeat(numpy.arange(len(starts)), sizes)
    rank = numpy.arange(len(flat)) - starts[block]
    by_size = numpy.argsort(sizes, kind="stable")
    place = numpy.empty_like(by_size)
    place[by_size] = numpy.arange(len(by_size))
    rows = numpy.full((len(starts), int(sizes.max(initial=0))), -1, dtype="int64")
    rows[place[block], rank] = position
    special = (units < 0) & (attention_mask > 0)
    n_special = special.sum(axis=1)
    spec = numpy.full((n_windows, int(n_special.max(initial=0))), -1, dtype="int64")
    w_s, p_s = numpy.nonzero(special)
    spec[
        w_s, numpy.arange(len(w_s)) - numpy.repeat(numpy.cumsum(n_special) - n_special, n_special)
    ] = p_s
    block_window = window[starts][by_size]
    return block_window, rows, spec[block_window]


def row_units(rows: numpy.ndarray, row_unit: numpy.ndarray, shape: Sequence[int]) -> numpy.ndarray:
    """The unit (sentence) of each wordpiece of ``shape = (n_windows, L)`` windows, -1 for
    rows of no unit (special tokens, padding). ``rows`` are flat row indices
    (``window * L + position``)."""
    units = numpy.full(int(shape[0]) * int(shape[1]), -1, dtype="int64")
    units[numpy.asarray(rows, dtype="int64")] = row_unit
    return units.reshape(tuple(shape))


def offset_bias(after: torch.Tensor, before: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """``(n, heads, Q, K)`` attention bias at the key offsets ``(n, Q, K)`` (key position
    minus query position) from its values at each offset: ``after`` ``(n, heads, L)`` at
    offsets 0, 1, ... after the query, ``before`` at 0, 1, ... before it (a relative
    position bias, MPNet's)."""
    n, n_heads, _ = after.shape
    index = offsets.abs().reshape(n, 1, -1).expand(-1, n_heads, -1)
    ahead = torch.gather(after, 2, index).view(n, n_heads, *offsets.shape[1:])
    behind = torch.gather(before, 2, index).view(n, n_heads, *offsets.shape[1:])
    return torch.where(offsets[:, None] >= 0, ahead, behind)


def local_context(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    units: torch.Tensor,
    attention_mask: torch.Tensor,
    n_heads: int,
    bias: Optional[Sequence[torch.Tensor]] = None,
) -> torch.Tensor:
    """The concatenated head outputs ``softmax(QK^T / sqrt(d) + bias) V`` of ``(n_windows,
    L, width)`` queries, keys and values, each wordpiece of a unit (``units``,
    ``(n_windows, L)``) attending only to the wordpieces of its own unit and to those of
    no unit (-1: the special tokens); padding (``attention_mask`` 0) is never attended
    to. Rows of no unit and padding get zeros. ``bias``: MPNet's ``(after, before)`` of
    ``offset_bias``, ``(n_windows, heads, L)`` each, or None.

    Only each unit's own block of the attention map is computed: the blocks, shortest
    first, are gathered into batches of similar length (``SCORES_PER_STEP``)."""
    n_windows, length, width = query.shape
    head_dim = width // n_heads
    out = torch.zeros((n_windows * length, width))
    window, rows, specials = unit_blocks(units.numpy(), attention_mask.numpy())
    if not len(window):
        return out.view(n_windows, length, width)
    sizes = (rows >= 0).sum(axis=1)
    n_keys = sizes + specials.shape[1]
    window_t, rows_t, specials_t = (torch.as_tensor(x) for x in (window, rows, specials))

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.float().view(x.shape[0], x.shape[1], n_heads, head_dim).transpose(1, 2)

    start = 0
    while start < len(window):
        # the next blocks up to twice the first's length, within SCORES_PER_STEP
        ends = numpy.arange(start + 1, len(window) + 1)
        cost = (ends - start) * n_heads * sizes[ends - 1] * n_keys[ends - 1]
        fits = (cost <= SCORES_PER_STEP) & (sizes[ends - 1] <= max(8, 2 * sizes[start]))
        end = start + max(1, int(fits.sum()))
        size = int(sizes[end - 1])
        at = window_t[start:end, None]
        q_rows = rows_t[start:end, :size]
        q_valid = q_rows >= 0
        k_rows = torch.cat([q_rows, specials_t[start:end]], dim=1)
        k_rows_at = k_rows.clamp(min=0)
        allowed = (k_rows >= 0)[:, None, None, :]
        mask: torch.Tensor = allowed
        if bias is not None:
            offsets = k_rows_at[:, None, :] - q_rows.clamp(min=0)[:, :, None]
            w = window_t[start:end]
            mask = offset_bias(bias[0][w].float(), bias[1][w].float(), offsets)
            mask = mask.masked_fill(~allowed, -math.inf)
        context = torch.nn.functional.scaled_dot_product_attention(
            heads(query[at, q_rows.clamp(min=0)]),
            heads(key[at, k_rows_at]),
            heads(value[at, k_rows_at]),
            attn_mask=mask,
        )
        context = context.transpose(1, 2).reshape(end - start, size, width)
        out[(at * length + q_rows)[q_valid]] = context[q_valid]
        start = end
    return out.view(n_windows, length, width)


def _weights(module: torch.nn.Linear) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
    """A linear module's weight and bias as float32 CPU tensors (the captured arrays
    are read on the CPU, whatever device the model runs on)."""
    bias = None if module.bias is None else module.bias.detach().float().cpu()
    return module.weight.detach().float().cpu(), bias


def project(
    inputs: torch.Tensor, real: torch.Tensor, weights: Tuple[torch.Tensor, Optional[torch.Tensor]]
) -> torch.Tensor:
    """A linear projection (``weights``: weight and bias) of the ``real`` rows of
    ``(n_windows, L, width)`` ``inputs``; zeros at the others (padding)."""
    weight, bias = weights
    out = inputs.new_zeros((*inputs.shape[:2], weight.shape[0]))
    with torch.no_grad():
        out[real] = torch.nn.functional.linear(inputs[real], weight, bias)
    return out


def local_means(
    parts: Sequence[Any],
    attention_mask: Any,
    projections: Sequence[torch.nn.Linear],
    output: torch.nn.Linear,
    rows: numpy.ndarray,
    row_unit: numpy.ndarray,
    n_units: int,
    n_heads: int,
) -> numpy.ndarray:
    """``(n_units, width)`` float32 vectors of the units (module docstring).

    parts: one layer's ``(input, query, key, value)`` arrays of ``capture.LOCAL``, then
        its two position bias arrays where the model has them. Queries, keys and values
        of 0 rows a window are computed again from the input with ``projections``.
    attention_mask: ``(n_windows, L)`` of the windows.
    projections: the layer's query, key and value modules.
    output: the layer's attention output projection.
    rows, row_unit: the doc's wordpiece rows (``window * L + position``) and the unit of
        each (``topics.mean_vectors``). A unit without wordpieces gets zeros.

    The windows are read ``WINDOWS_PER_CHUNK`` at a time (the queries, keys and values
    that are computed again, a chunk's at a time), each chunk's rows summed per unit at
    once, so what this adds to the memory of the captured arrays does not grow with the
    document beyond one vector per unit.
    """
    hidden = torch.as_tensor(parts[0])
    given = [torch.as_tensor(p) for p in parts[1:4]]
    bias = [torch.as_tensor(p) for p in parts[4:6]] if len(parts) > 4 else None
    mask = torch.as_tensor(attention_mask)
    n_windows, length = mask.shape
    width = hidden.shape[-1]
    rows = numpy.asarray(rows, dtype="int64")
    row_unit = numpy.asarray(row_unit, dtype="int64")
    units = torch.as_tensor(row_units(rows, row_unit, (n_windows, length)))
    weights = [
        _weights(module) if p.shape[1] == 0 else None
        for p, module in zip(given, projections, strict=True)
    ]
    # per unit: the sum of its rows of the layer's input, then of the head outputs
    sums = numpy.zeros((n_units, 2 * width), dtype="float64")
    for a in range(0, n_windows, WINDOWS_PER_CHUNK):
        b = min(n_windows, a + WINDOWS_PER_CHUNK)
        chosen = (rows >= a * length) & (rows < b * length)
        if not chosen.any():
            continue
        inputs = hidden[a:b].float()
        real = mask[a:b] > 0
        query, key, value = (
            project(inputs, real, w) if w is not None else p[a:b]
            for p, w in zip(given, weights, strict=True)
        )
        context = local_context(
            query,
            key,
            value,
            units[a:b],
            mask[a:b],
            n_heads,
            [x[a:b] for x in bias] if bias is not None else None,
        )
        local = rows[chosen] - a * length
        pairs = numpy.concatenate(
            [
                inputs.reshape(-1, width).numpy()[local],
                context.reshape(-1, width).numpy()[local],
            ],
            axis=1,
        )
        sums += group_sums(pairs, row_unit[chosen], n_units)
    counts = numpy.bincount(row_unit, minlength=n_units)
    pooled = sums / numpy.maximum(counts, 1)[:, None]
    out_weight, out_bias = _weights(output)
    means = pooled[:, :width] + pooled[:, width:] @ out_weight.numpy().T
    if out_bias is not None:
        means += out_bias.numpy()
    return (means * (counts > 0)[:, None]).astype("float32")
