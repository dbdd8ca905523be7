"""Pk and WindowDiff: error rates of a linear segmentation against a reference.

Representation
--------------
A segmentation of a sequence of ``N`` units (sentences in
``paper.sections``; tokens work the same way) is given by its
**gaps**: a sequence of ``N - 1`` zeros and ones where element ``i`` is 1 iff a
segment boundary lies between unit ``i`` and unit ``i + 1``. No element stands
for the start or the end of the document. :func:`boundaries_from_masses`
(segment lengths) and :func:`boundaries_from_starts` (indices of the units
that start a segment) build it.

Definitions
-----------
For a window width ``k`` (in units), the positions ``i = 0 .. N - k - 1`` are
compared; the probe pairs units ``i`` and ``i + k``, i.e. the ``k`` gaps
``i .. i + k - 1``.

* **Pk** (Beeferman, Berger and Lafferty 1999): the fraction of probes in which
  reference and hypothesis disagree on whether units ``i`` and ``i + k`` lie in
  the same segment (whether the window holds at least one boundary).
* **WindowDiff** (Pevzner and Hearst 2002): the fraction of probes in which the
  *number* of boundaries inside the window differs between reference and
  hypothesis (``weighted=True`` sums the absolute differences instead, as in
  NLTK's weighted variant).

Both lie in ``[0, 1]``; lower is better. There are ``N - k`` probes, so the
scores equal ``nltk.metrics.segmentation.pk`` and ``windowdiff`` called on the
same gap sequences with the same explicit ``k``.

``k`` defaults to **half the mean reference segment length, in the same units**
(:func:`default_k`): ``N / (2 * n_segments)`` rounded half up, at least 1 and at
most ``N - 1``. (NLTK's own default for ``pk`` divides the number of gaps by
twice the number of boundaries, which is a slightly different number; pass
``k`` explicitly to compare.)

A set's score is the mean over its documents; :func:`mean_interval` gives a bootstrap
interval of that mean over the documents, and of a paired difference (two systems'
scores of the same documents, subtracted document by document).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, List, Optional, Union

import numpy

__all__ = [
    "boundaries_from_masses",
    "boundaries_from_starts",
    "default_k",
    "mean_interval",
    "pk",
    "window_diff",
]


def boundaries_from_masses(masses: Sequence[int]) -> List[int]:
    """Gap sequence of a segmentation given by its segment lengths.

    ``[3, 2]`` (units 0-2, then 3-4) gives ``[0, 0, 1, 0]``. Every mass must be
    positive.
    """
    if any(int(m) <= 0 for m in masses):
        raise ValueError(f"segment lengths must be positive, got {list(masses)}")
    n_units = int(sum(int(m) for m in masses))
    gaps = [0] * max(n_units - 1, 0)
    position = 0
    for mass in list(masses)[:-1]:
        position += int(mass)
        gaps[position - 1] = 1
    return gaps


def boundaries_from_starts(starts: Sequence[int], n_units: int) -> List[int]:
    """Gap sequence from the indices of the units that start a segment.

    Index 0 (the document start) is allowed and ignored; so are duplicates.
    ``boundaries_from_starts([0, 3], 5)`` gives ``[0, 0, 1, 0]``.
    """
    gaps = [0] * max(n_units - 1, 0)
    for start in starts:
        start = int(start)
        if not 0 <= start < n_units:
            raise ValueError(f"segment start {start} outside 0..{n_units - 1}")
        if start > 0:
            gaps[start - 1] = 1
    return gaps


def _as_gaps(name: str, gaps: Sequence[Any]) -> numpy.ndarray:
    """0/1 int64 array of a gap sequence: a list or array of ints or booleans, or a
    string of ``"0"``/``"1"`` characters (as NLTK takes them)."""
    if isinstance(gaps, str):
        array = numpy.asarray([int(char) for char in gaps], dtype=numpy.int64)
    else:
        array = numpy.asarray(gaps)
        if array.dtype.kind not in "biu":
            array = numpy.asarray([int(g) for g in array.ravel()], dtype=numpy.int64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of 0/1 gap values")
    return (array != 0).astype(numpy.int64)


def default_k(reference: Sequence[Any]) -> int:
    """Half the mean segment length of ``reference`` (gap sequence), in units.

    ``N / (2 * n_segments)`` with ``N = len(reference) + 1`` units and
    ``n_segments = sum(reference) + 1``, rounded half up, clamped to
    ``1 .. N - 1``. Raises ``ValueError`` when there is no gap (``N < 2``).
    """
    ref = _as_gaps("reference", reference)
    if len(ref) == 0:
        raise ValueError("Pk/WindowDiff need at least two units (one gap)")
    n_units = len(ref) + 1
    n_segments = int(ref.sum()) + 1
    k = int(numpy.floor(n_units / (2.0 * n_segments) + 0.5))
    return min(max(k, 1), len(ref))


def _window_counts(
    reference: Sequence[Any], hypothesis: Sequence[Any], k: Optional[int]
) -> tuple[numpy.ndarray, numpy.ndarray]:
    ref = _as_gaps("reference", reference)
    hyp = _as_gaps("hypothesis", hypothesis)
    if len(ref) != len(hyp):
        raise ValueError(
            f"reference and hypothesis cover different numbers of gaps: {len(ref)} != {len(hyp)}"
        )
    if k is None:
        k = default_k(ref.tolist())
    if not 1 <= k <= len(ref):
        raise ValueError(f"window width k={k} must lie in 1..{len(ref)} (the number of gaps)")
    ref_cum = numpy.concatenate([[0], numpy.cumsum(ref)])
    hyp_cum = numpy.concatenate([[0], numpy.cumsum(hyp)])
    return ref_cum[k:] - ref_cum[:-k], hyp_cum[k:] - hyp_cum[:-k]


def pk(reference: Sequence[Any], hypothesis: Sequence[Any], k: Optional[int] = None) -> float:
    """Beeferman et al.'s Pk of ``hypothesis`` against ``reference`` (gap sequences).

    ``k`` defaults to :func:`default_k` of the reference.
    """
    ref_counts, hyp_counts = _window_counts(reference, hypothesis, k)
    return float(numpy.mean((ref_counts > 0) != (hyp_counts > 0)))


def window_diff(
    reference: Sequence[Any],
    hypothesis: Sequence[Any],
    k: Optional[int] = None,
    *,
    weighted: bool = False,
) -> float:
    """Pevzner and Hearst's WindowDiff of ``hypothesis`` against ``reference``.

    ``k`` defaults to :func:`default_k` of the reference. With ``weighted`` the
    absolute differences of the boundary counts are averaged instead of the
    indicator that they differ.
    """
    ref_counts, hyp_counts = _window_counts(reference, hypothesis, k)
    diff = numpy.abs(ref_counts - hyp_counts)
    return float(numpy.mean(diff if weighted else diff > 0))


def mean_interval(
    values: Union[Sequence[float], numpy.ndarray],
    *,
    level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (one score per document):
    the documents are drawn with replacement ``n_resamples`` times, and the interval is
    the central ``level`` share of the resampled means. For a paired comparison, pass
    the per-document differences of two systems. The same ``seed`` gives the same
    interval."""
    array = numpy.asarray(values, dtype=numpy.float64)
    if array.ndim != 1 or len(array) == 0:
        raise ValueError("a bootstrap interval needs a flat, non-empty sequence of scores")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    rng = numpy.random.default_rng(seed)
    means = array[rng.integers(0, len(array), size=(n_resamples, len(array)))].mean(axis=1)
    low, high = numpy.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)
