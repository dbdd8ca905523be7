"""Pk and WindowDiff of the reproduction kit: the metrics themselves
(:func:`boundaries_from_starts`, :func:`default_k`, :func:`pk`, :func:`window_diff`, their
definitions in ``spacy_attnseg.scoring``, which ``attn_segmenter``'s scorer uses), the gap
sequence of segment lengths (:func:`boundaries_from_masses`), and a bootstrap interval of
a set's mean score over its documents, or of a paired difference (two systems' scores of
the same documents, subtracted document by document; :func:`mean_interval`).

A set's score is the mean over its documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import List, Union

import numpy

from spacy_attnseg.scoring import boundaries_from_starts, default_k, pk, window_diff

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
    sizes = [int(m) for m in masses]
    return boundaries_from_starts(numpy.cumsum(sizes)[:-1].tolist(), sum(sizes))


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
