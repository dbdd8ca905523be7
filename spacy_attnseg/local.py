"""Sentence vectors from one layer's attention computed again within each sentence.

In the transformer's pass every wordpiece attends to the whole window, so a sentence's
hidden states carry its neighbours, across a topic change too. The capture hooks keep
one layer's input hidden state, queries, keys and values (``capture.LOCAL``); here that
layer's attention is computed again with each wordpiece attending only to the wordpieces
of its own sentence (and the window's special tokens, as in a pass over the sentence
alone), and a sentence's vector is what the layer's attention block adds to its input
before the block's layer normalisation::

    vector(s) = mean_{i in s} input_i + W_o mean_{i in s} context_i + b_o

(the mean over the sentence's wordpiece rows, as ``topics.mean_vectors``; ``W_o``,
``b_o`` the layer's attention output projection). The same queries, keys and values,
a mask instead of a second model pass. Each window's whole attention map is computed
and masked (a sentence's own block would do): on short documents the segments cost
about a tenth of the transformer's time (``metrics/benchmark_speed_topics.md``).
"""

import math
from typing import Any, Optional, Sequence

import numpy
import torch

from .windows import group_sums

#: Windows whose attention is computed at a time (their ``(heads, L, L)`` scores in
#: memory at once).
WINDOWS_PER_CHUNK = 64


def row_units(rows: numpy.ndarray, row_unit: numpy.ndarray, shape: Sequence[int]) -> numpy.ndarray:
    """The unit (sentence) of each wordpiece of ``shape = (n_windows, L)`` windows, -1 for
    rows of no unit (special tokens, padding). ``rows`` are flat row indices
    (``window * L + position``)."""
    units = numpy.full(int(shape[0]) * int(shape[1]), -1, dtype="int64")
    units[numpy.asarray(rows, dtype="int64")] = row_unit
    return units.reshape(tuple(shape))


def relative_bias(after: torch.Tensor, before: torch.Tensor) -> torch.Tensor:
    """``(n, heads, L, L)`` attention bias from its values at each key offset: ``after``
    ``(n, heads, L)`` at offsets 0, 1, ... after the query, ``before`` at offsets 0, 1,
    ... before it (a relative position bias, MPNet's)."""
    length = after.shape[-1]
    offset = torch.arange(length)[None, :] - torch.arange(length)[:, None]
    index = offset.abs()[None, None].expand(after.shape[0], after.shape[1], -1, -1)
    ahead = torch.gather(after[:, :, None, :].expand(-1, -1, length, -1), 3, index)
    behind = torch.gather(before[:, :, None, :].expand(-1, -1, length, -1), 3, index)
    return torch.where(offset[None, None] >= 0, ahead, behind)


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
    L, width)`` queries, keys and values, each wordpiece attending only to the
    wordpieces of its own unit (``units``, ``(n_windows, L)``) and to those of no unit
    (-1: the special tokens); padding (``attention_mask`` 0) is never attended to.
    ``bias``: ``(after, before)`` of ``relative_bias``, or None."""
    n_windows, length, width = query.shape
    head_dim = width // n_heads

    def heads(x: torch.Tensor) -> torch.Tensor:
        return x.float().view(n_windows, length, n_heads, head_dim).transpose(1, 2)

    scores = (heads(query) * (1.0 / math.sqrt(head_dim))) @ heads(key).transpose(-1, -2)
    if bias is not None:
        scores += relative_bias(bias[0].float(), bias[1].float())
    allowed = (units[:, :, None] == units[:, None, :]) | (units[:, None, :] < 0)
    allowed &= (attention_mask > 0)[:, None, :]
    scores.masked_fill_(~allowed[:, None], torch.finfo(scores.dtype).min)
    context = torch.softmax(scores, dim=-1) @ heads(value)
    return context.transpose(1, 2).reshape(n_windows, length, width)


def local_means(
    parts: Sequence[Any],
    attention_mask: Any,
    output_weight: torch.Tensor,
    output_bias: Optional[torch.Tensor],
    rows: numpy.ndarray,
    row_unit: numpy.ndarray,
    n_units: int,
    n_heads: int,
) -> numpy.ndarray:
    """``(n_units, width)`` float32 vectors of the units (module docstring).

    parts: one layer's ``(input, query, key, value)`` arrays of ``capture.LOCAL``, then
        its two position bias arrays where the model has them.
    attention_mask: ``(n_windows, L)`` of the windows.
    output_weight, output_bias: the layer's attention output projection.
    rows, row_unit: the doc's wordpiece rows (``window * L + position``) and the unit of
        each (``topics.mean_vectors``). A unit without wordpieces gets zeros.

    The windows are read ``WINDOWS_PER_CHUNK`` at a time, each chunk's rows summed per
    unit at once, so what this adds to the memory of the captured arrays does not grow
    with the document beyond one vector per unit.
    """
    hidden, query, key, value = (torch.as_tensor(p) for p in parts[:4])
    bias = [torch.as_tensor(p) for p in parts[4:6]] if len(parts) > 4 else None
    mask = torch.as_tensor(attention_mask)
    n_windows, length = mask.shape
    width = hidden.shape[-1]
    rows = numpy.asarray(rows, dtype="int64")
    row_unit = numpy.asarray(row_unit, dtype="int64")
    units = torch.as_tensor(row_units(rows, row_unit, (n_windows, length)))
    # per unit: the sum of its rows of the layer's input, then of the head outputs
    sums = numpy.zeros((n_units, 2 * width), dtype="float64")
    for a in range(0, n_windows, WINDOWS_PER_CHUNK):
        b = min(n_windows, a + WINDOWS_PER_CHUNK)
        chosen = (rows >= a * length) & (rows < b * length)
        if not chosen.any():
            continue
        context = local_context(
            query[a:b],
            key[a:b],
            value[a:b],
            units[a:b],
            mask[a:b],
            n_heads,
            [x[a:b] for x in bias] if bias is not None else None,
        )
        local = rows[chosen] - a * length
        pairs = numpy.concatenate(
            [
                hidden[a:b].float().reshape(-1, width).numpy()[local],
                context.reshape(-1, width).numpy()[local],
            ],
            axis=1,
        )
        sums += group_sums(pairs, row_unit[chosen], n_units)
    counts = numpy.bincount(row_unit, minlength=n_units)
    pooled = sums / numpy.maximum(counts, 1)[:, None]
    weight = output_weight.detach().float().cpu().numpy()
    means = pooled[:, :width] + pooled[:, width:] @ weight.T
    if output_bias is not None:
        means += output_bias.detach().float().cpu().numpy()
    return (means * (counts > 0)[:, None]).astype("float32")
