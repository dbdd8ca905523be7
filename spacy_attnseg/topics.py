"""Semantic (topic) segments from the transformer pass: sentence vectors -> gap scores ->
boundaries.

1. **Sentence vectors.** The captured hidden states (the sum of the last layers' outputs,
   see ``capture``) are mean-pooled over a sentence's wordpieces (every window in which
   they occur), centred by the document's mean and scaled to unit length. Several
   middle-to-late layers together separate topics better than the last hidden state
   alone, whose in-context vectors mix neighbouring sentences most.
2. **Gap similarity.** At the gap before sentence ``s``, the cosine similarity of the mean
   vector of the ``window`` sentences before it and of the ``window`` after it.
3. **Depth** (Hearst's TextTiling): how far the similarity at a gap lies below the peaks
   reached climbing left and right from it. Computed in one pass each way.
4. **Boundaries.** The valleys (local minima) whose depth exceeds ``mean - cutoff * std``
   of the document's valley depths; or, with ``n_segments``, the deepest gaps. The
   deepest candidates are taken first, and one closer than ``min_sents`` sentences to a
   chosen boundary or to the document's ends is dropped. A segment longer than
   ``max_sents`` sentences, or ``max_tokens`` wordpieces, is split at its deepest gap
   until it fits (``split_tokens`` cuts a single sentence that is longer by itself).

Everything is linear in the number of sentences (and, for the vectors, wordpieces).
"""

from typing import Any, List, Optional

import numpy


def sentence_vectors(
    hidden: Any, rows: numpy.ndarray, row_sentence: numpy.ndarray, n_sents: int
) -> numpy.ndarray:
    """Centred, normalised sentence vectors from captured hidden states.

    hidden: ``(n_windows, L, width)`` (numpy).
    rows: wordpiece rows (``window * L + position``) of the doc's tokens.
    row_sentence: the sentence of each of those rows.
    RETURNS: ``(n_sents, width)`` float32; a sentence without wordpieces gets the
        document's mean before centring (0 after).
    """
    row_sentence = numpy.asarray(row_sentence, dtype="int64")
    order = numpy.argsort(row_sentence, kind="stable")  # (already sorted for a Doc's rows)
    rows, row_sentence = numpy.asarray(rows)[order], row_sentence[order]
    counts = numpy.bincount(row_sentence, minlength=n_sents).astype("float32")
    present = numpy.flatnonzero(counts)
    offsets = numpy.concatenate([[0], numpy.cumsum(counts[present])[:-1]]).astype("int64")
    flat = numpy.asarray(hidden, dtype="float32").reshape((-1, hidden.shape[-1]))
    vectors = numpy.zeros((n_sents, flat.shape[1]), dtype="float32")
    if len(rows):
        sums = numpy.add.reduceat(flat[rows], offsets, axis=0)
        vectors[present] = sums / counts[present][:, None]
    vectors -= vectors.mean(axis=0, keepdims=True)
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / numpy.maximum(norms, 1e-12)


def gap_similarities(vectors: numpy.ndarray, window: int) -> numpy.ndarray:
    """Cosine similarity across each of the ``n_sents - 1`` gaps of the mean vectors of
    up to ``window`` sentences on either side."""
    n = len(vectors)
    if n < 2:
        return numpy.zeros((0,), dtype="float64")
    cum = numpy.vstack([numpy.zeros((1, vectors.shape[1])), numpy.cumsum(vectors, axis=0)])
    gaps = numpy.arange(1, n)
    lo = numpy.maximum(gaps - window, 0)
    hi = numpy.minimum(gaps + window, n)
    left = (cum[gaps] - cum[lo]) / (gaps - lo)[:, None]
    right = (cum[hi] - cum[gaps]) / (hi - gaps)[:, None]
    norms = numpy.linalg.norm(left, axis=1) * numpy.linalg.norm(right, axis=1)
    return (left * right).sum(axis=1) / numpy.maximum(norms, 1e-12)


def depth_scores(similarities: numpy.ndarray) -> numpy.ndarray:
    """TextTiling depth of every gap: (left peak - s) + (right peak - s), where a peak is
    the highest value reached climbing from the gap while the values do not decrease."""
    s = numpy.asarray(similarities, dtype="float64")
    n = len(s)
    left = s.copy()
    for g in range(1, n):
        if s[g - 1] >= s[g]:
            left[g] = left[g - 1]
    right = s.copy()
    for g in range(n - 2, -1, -1):
        if s[g + 1] >= s[g]:
            right[g] = right[g + 1]
    return left + right - 2 * s


def valleys(similarities: numpy.ndarray) -> numpy.ndarray:
    s = numpy.asarray(similarities)
    out = numpy.ones(len(s), dtype=bool)
    out[1:] &= s[1:] <= s[:-1]
    out[:-1] &= s[:-1] <= s[1:]
    return out


def choose_boundaries(
    depth: numpy.ndarray,
    similarities: numpy.ndarray,
    *,
    cutoff: float,
    min_sents: int,
    n_segments: int = 0,
) -> List[int]:
    """Sentence indices where a new segment starts (never 0), sorted."""
    n_gaps = len(depth)
    if n_gaps == 0:
        return []
    if n_segments > 0:
        candidates = numpy.argsort(-depth, kind="stable")
        wanted = n_segments - 1
    else:
        is_valley = valleys(similarities)
        values = depth[is_valley]
        threshold = values.mean() - cutoff * values.std() if len(values) else 0.0
        keep = numpy.flatnonzero(is_valley & (depth > max(threshold, 1e-9)))
        candidates = keep[numpy.argsort(-depth[keep], kind="stable")]
        wanted = n_gaps
    chosen: List[int] = []
    n_sents = n_gaps + 1
    for gap in candidates.tolist():
        start = gap + 1
        if start < min_sents or n_sents - start < min_sents:
            continue
        if any(abs(start - other) < min_sents for other in chosen):
            continue
        chosen.append(start)
        if len(chosen) >= wanted:
            break
    return sorted(chosen)


def enforce_limits(
    starts: List[int],
    depth: numpy.ndarray,
    sent_sizes: numpy.ndarray,
    *,
    max_sents: int = 0,
    max_tokens: int = 0,
) -> List[int]:
    """Split segments (sentence starts ``starts``, 0 excluded) that hold more than
    ``max_sents`` sentences or ``max_tokens`` wordpieces at their deepest gap, until each
    fits or is one sentence."""
    n = len(sent_sizes)
    bounds = [0] + list(starts) + [n]
    out: List[int] = []
    cum = numpy.concatenate([[0], numpy.cumsum(sent_sizes)])
    stack = list(zip(bounds[:-1], bounds[1:], strict=True))[::-1]
    while stack:
        a, b = stack.pop()
        too_many = max_sents > 0 and b - a > max_sents
        too_long = max_tokens > 0 and cum[b] - cum[a] > max_tokens
        if (too_many or too_long) and b - a > 1:
            inner = depth[a : b - 1]  # gaps before sentences a+1 .. b-1
            split = a + 1 + int(numpy.argmax(inner))
            stack.extend([(split, b), (a, split)])
            continue
        if a > 0:
            out.append(a)
    return sorted(out)


def split_tokens(sizes: numpy.ndarray, max_tokens: int) -> List[int]:
    """Offsets (in tokens, 0 excluded) that cut a run of tokens with wordpiece ``sizes``
    into pieces of at most ``max_tokens`` wordpieces (a single token longer than that
    stays whole: it cannot be cut)."""
    cuts: List[int] = []
    total = 0
    for i, size in enumerate(numpy.asarray(sizes).tolist()):
        if total + size > max_tokens and total > 0:
            cuts.append(i)
            total = 0
        total += size
    return cuts


def segment(
    vectors: numpy.ndarray,
    *,
    window: int,
    cutoff: float,
    min_sents: int,
    max_sents: int = 0,
    max_tokens: int = 0,
    n_segments: int = 0,
    sent_sizes: Optional[numpy.ndarray] = None,
) -> tuple:
    """Segment starts (sentence indices, 0 first) and the depth score of each start's
    gap (1.0 for the first segment)."""
    n = len(vectors)
    if n == 0:
        return [], []
    sims = gap_similarities(vectors, window)
    depth = depth_scores(sims)
    starts = choose_boundaries(
        depth, sims, cutoff=cutoff, min_sents=max(1, min_sents), n_segments=n_segments
    )
    sizes = sent_sizes if sent_sizes is not None else numpy.ones(n, dtype="int64")
    starts = enforce_limits(starts, depth, sizes, max_sents=max_sents, max_tokens=max_tokens)
    scores = [1.0] + [float(depth[s - 1]) for s in starts]
    return [0] + starts, scores
