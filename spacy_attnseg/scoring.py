"""Pk and WindowDiff: error rates of a linear segmentation against a reference, and the
scorer that reports them for ``attn_segmenter`` (``nlp.evaluate``, ``spacy evaluate``).

Representation
--------------
A segmentation of a sequence of ``N`` units (tokens, sentences) is given by its
**gaps**: a sequence of ``N - 1`` zeros and ones where element ``i`` is 1 iff a
segment boundary lies between unit ``i`` and unit ``i + 1``. No element stands
for the start or the end of the document. :func:`boundaries_from_starts` (indices of
the units that start a segment) builds it.

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

Scoring a pipeline
------------------
``spacy-attnseg.segmenter_scorer.v1``, ``attn_segmenter``'s scorer, reports spaCy's
sentence scores (``sents_p``, ``sents_r``, ``sents_f``, as ``spacy.senter_scorer.v1``)
and, over the examples whose reference Doc holds topic segments in
``doc.spans[spans_key]``, the mean per document of Pk and WindowDiff in the
reference's tokens (``segments_pk``, ``segments_windowdiff``; None where no reference
holds any): gold segments in a ``DocBin`` are scored by ``spacy evaluate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Callable, Dict, List, Optional

import numpy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from .errors import Errors

__all__ = [
    "boundaries_from_starts",
    "default_k",
    "pk",
    "score_segments",
    "segmenter_score",
    "window_diff",
]


def boundaries_from_starts(starts: Sequence[int], n_units: int) -> List[int]:
    """Gap sequence from the indices of the units that start a segment.

    Index 0 (the document start) is allowed and ignored; so are duplicates.
    ``boundaries_from_starts([0, 3], 5)`` gives ``[0, 0, 1, 0]``.
    """
    gaps = [0] * max(n_units - 1, 0)
    for start in starts:
        start = int(start)
        if not 0 <= start < n_units:
            raise ValueError(Errors.E137.format(start=start, last=n_units - 1))
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
        raise ValueError(Errors.E138.format(name=name))
    return (array != 0).astype(numpy.int64)


def default_k(reference: Sequence[Any]) -> int:
    """Half the mean segment length of ``reference`` (gap sequence), in units.

    ``N / (2 * n_segments)`` with ``N = len(reference) + 1`` units and
    ``n_segments = sum(reference) + 1``, rounded half up, clamped to
    ``1 .. N - 1``. Raises ``ValueError`` when there is no gap (``N < 2``).
    """
    ref = _as_gaps("reference", reference)
    if len(ref) == 0:
        raise ValueError(Errors.E139)
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
        raise ValueError(Errors.E140.format(reference=len(ref), hypothesis=len(hyp)))
    if k is None:
        k = default_k(ref.tolist())
    if not 1 <= k <= len(ref):
        raise ValueError(Errors.E141.format(k=k, n_gaps=len(ref)))
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


def segment_starts(doc: Doc, key: str, on: Doc) -> List[int]:
    """The tokens of ``on`` (a Doc of the same text, tokenized its own way) at which the
    spans of ``doc.spans[key]`` start (none without that group): the token of ``on``
    that holds each span's first character, or ``on``'s first token."""
    token_starts = numpy.asarray([token.idx for token in on], dtype=numpy.int64)
    chars = [doc[span.start].idx for span in doc.spans.get(key, ()) if len(span)]
    found = numpy.searchsorted(token_starts, chars, side="right") - 1
    return sorted({max(0, int(i)) for i in found})


def score_segments(
    examples: Iterable[Example], spans_key: str = "", **cfg: Any
) -> Dict[str, Optional[float]]:
    """``segments_pk`` and ``segments_windowdiff``: the mean over the examples whose
    reference holds a non-empty ``doc.spans[spans_key]`` (the gold topic segments) of
    Pk and WindowDiff of the predicted Doc's ``spans_key`` group, in the reference's
    tokens, ``k`` from :func:`default_k`; a predicted Doc without the group is one
    segment. None where no example has gold segments (or ``spans_key`` is empty); a
    reference of fewer than two tokens is passed over. A gold segment starts at each
    span after the first (tokens before the first span, or between two spans, belong to
    the segment before them); spans that overlap or are out of order are E143."""
    scores: Dict[str, List[float]] = {"segments_pk": [], "segments_windowdiff": []}
    for number, example in enumerate(examples):
        reference, predicted = example.reference, example.predicted
        if not spans_key or len(reference) < 2 or not len(reference.spans.get(spans_key, ())):
            continue
        n = len(reference)
        group = [span for span in reference.spans[spans_key] if len(span)]
        for before, span in zip(group[:-1], group[1:], strict=True):
            if span.start < before.end:
                raise ValueError(
                    Errors.E143.format(
                        number=number,
                        key=spans_key,
                        start=span.start,
                        end=span.end,
                        previous=before.end,
                    )
                )
        gold = boundaries_from_starts([span.start for span in group[1:]], n)
        hypothesis = boundaries_from_starts(segment_starts(predicted, spans_key, reference), n)
        scores["segments_pk"].append(pk(gold, hypothesis))
        scores["segments_windowdiff"].append(window_diff(gold, hypothesis))
    return {key: float(numpy.mean(values)) if values else None for key, values in scores.items()}


def segmenter_score(examples: Iterable[Example], **cfg: Any) -> Dict[str, Any]:
    """``attn_segmenter``'s scores: ``spacy.senter_scorer.v1``'s sentence scores and
    :func:`score_segments` (its ``spans_key`` from the component's config)."""
    examples = list(examples)
    senter: Callable[..., Dict[str, Any]] = registry.scorers.get("spacy.senter_scorer.v1")()
    return {**senter(examples, **cfg), **score_segments(examples, **cfg)}


@registry.scorers("spacy-attnseg.segmenter_scorer.v1")
def make_segmenter_scorer() -> Callable[..., Dict[str, Any]]:
    """The scorer of ``attn_segmenter`` (:func:`segmenter_score`)."""
    return segmenter_score
