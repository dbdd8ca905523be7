"""Semantic (topic) segments from the transformer pass: sentence vectors -> a partition
of the sentences (or paragraphs) -> segments within the size limits.

1. **Vectors.** A sentence's vector comes from the captured arrays of the pass, pooled
   over the sentence's wordpieces (every window in which they occur): by default the
   last layer's attention computed again within each sentence (``"local"``,
   ``spacy_attnseg.local``), or the mean of the sum of the last layers' hidden states
   (``"hidden"``, ``mean_vectors``; see ``capture``). A sentence whose text (up to
   case, whitespace and digits) occurs three times or more, or which is one of three or
   more lines of a template (texts that differ in one word), shares the mean of its
   group's vectors (``tie_repeats``). A unit of
   segmentation is a sentence or, where the text has paragraph breaks
   (``sentences.paragraph_starts``), a paragraph (the mean of its sentences' vectors;
   in a text of fewer than ``FEW_PARAGRAPHS`` paragraphs, one held mostly by long ones
   (``LONG_SHARE``), or one whose paragraphs read as pieces of unrelated texts
   (``separate_paragraphs``, ``pieces_ratio``), its sentences, with segments starting
   only where paragraphs do or inside a long one); a sentence on one line longer than
   ``long_sentence_tokens`` wordpieces (text without punctuation that a pipeline reads
   as one sentence) is read as pieces of at most ``piece_tokens``
   (``long_sentence_pieces``), each a sentence to what follows.
   Unit vectors are centred by the document's mean, each dimension is divided by its
   spread over the document plus the mean spread (``standardise``, the default), and
   they are scaled to unit length.
2. **Partition** (the default method): the segmentation that minimises the sum, over
   segments, of the squared distances of the segment's unit vectors from their mean,
   plus ``penalty * noise * ln(n_units)`` per boundary (``paragraph_penalty`` in place of
   ``penalty`` where the units are paragraphs; kernel change-point detection
   with a linear kernel and a BIC-style penalty), minus ``drift * noise * m ln m`` per
   segment of ``m`` units (``length_credit``). So splitting a run of ``m`` units into
   ``m1`` and ``m2`` costs ``drift * noise * (m ln m - m1 ln m1 - m2 ln m2)`` more: about
   ``m ln 2`` times ``drift * noise`` for halves, about ``ln m + 1`` times it for one
   unit off an end.
   A text of fewer than ``short_text`` sentences pays for a boundary what a text of that
   many would (``priced_units``: ``n_units`` is at least what ``short_text`` of its
   sentences make in its units): among a few units, the best split of one topic's
   sentences gains about what a boundary of the text's own length costs.
   In-context sentence vectors of one text drift (each carries its neighbours), and
   what splitting a drifting run gains grows with its length; a change to an unrelated
   text gains far more at once. Solved exactly by dynamic programming over runs of at
   most 256 units, linear in the number of units.
   ``noise`` (``scale="noise"``, the default) is the document's own step size: the
   median, over neighbouring units that differ, of half their squared distance. A
   document whose neighbouring sentences differ about as much as distant ones (one topic
   throughout) pays more per boundary than one made of distinct, internally coherent
   pieces.
   ``scale="unit"`` sets ``noise = 1``. With
   ``n_segments``, the segment whose best split lowers the cost most is split until
   there are that many.
   ``method="texttiling"`` instead takes the valleys of the cosine similarity across
   each gap (``window`` sentences each side) whose TextTiling depth exceeds
   ``mean - cutoff * std`` of the document's valley depths.
   Headings marked as such (``breaks``: Markdown's ``#``, an underline, MediaWiki's
   ``== ==``, HTML's ``<h2>``, LaTeX's ``\\section``), and plain ones over prose, start
   segments whatever the vectors; each method works within the sections they make.
3. **Limits.** With ``max_sents`` or ``max_tokens``, the partition's runs are bounded
   by them (``first_fits``; a unit alone always fits): the best segmentation within
   the limits, where one with ``min_sents`` exists. A segment still longer than
   ``max_sents`` sentences or ``max_tokens`` wordpieces (a unit too long by itself,
   ``n_segments``, TextTiling) is split at its best gap (the one that lowers the cost
   most) until it fits; ``split_tokens`` cuts a single sentence that is longer by
   itself.
4. **Scores.** A boundary's score is the drop in cost that splitting there brings
   (between its neighbouring segments, over sentence vectors) less what the split costs
   in ``length_credit``, divided by the penalty a boundary pays in a document of that
   many sentences: chosen boundaries score about 1 or more, ones forced by the size
   limits or by marked headings may score less. The first segment scores 0.

Everything is linear in the number of wordpieces (the pooling) and in the number of
sentences (the partition scans at most 256 runs ending at each unit).
"""

import math
from collections import Counter
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy

from .markup import number_shape
from .windows import WordpieceCounts, aligned_rows, group_sums

METHODS = ("partition", "texttiling")
SCALES = ("noise", "unit")
#: What a sentence's vector is made of: "local", the last layer's attention computed
#: again within each sentence (``spacy_attnseg.local``); "hidden", the sum of the hidden
#: states of the last ``segment_layers`` layers.
VECTORS = ("local", "hidden")
# chosen on the tuning halves (configs/minilm.cfg): the boundary penalty between
# sentences, and where the units are paragraphs (a text with paragraph breaks); the
# credit of a long run (``length_credit``)
PENALTY = 0.45
PARAGRAPH_PENALTY = 0.5
DRIFT = 0.03
# a text of fewer sentences pays for a boundary what a text of this many would
# (``priced_units``): among a few units the best split of one topic's sentences gains
# about what a boundary costs, so short texts were cut where their sentences merely
# differ (chosen on the tuning halves, with the sets of short texts)
SHORT_TEXT = 30
# a text of fewer paragraphs has its sentences as units, and its segments start only at
# paragraph starts: standardised over so few rows, paragraph vectors say nothing (two
# come out as opposite vectors, whatever they hold) and the median of their steps is a
# boundary's own step (chosen on the tuning halves: 3, 4, 5, 6, 10 and a text of fewer
# than SHORT_TEXT sentences tried)
FEW_PARAGRAPHS = 5
# but in such a text a paragraph of LONG_PARAGRAPH sentences or more may be cut at any of
# its sentences: breaks so seldom say nothing of where topics change (a title above a
# text of many topics, a blank line every few pages). No document of the tuning sets
# changes its segments with it (WikiText-2's paragraphs are up to 16-19 sentences long,
# as " . " or spaCy's sentencizer counts them). With more paragraphs a long one stays a
# unit: read by its sentences in every text, the tuning half's hard-wrapped articles,
# whose layout rules miss some paragraph breaks, went from Pk 0.302 to 0.334 over the
# 23 of 30 with a paragraph of 14 sentences or more. TextTiling and a number of
# segments, whose units are the paragraphs whatever their number, read such a
# paragraph's sentences as units (a text below a title line came out whole, one unit
# after the title, with ``n_segments`` 10).
LONG_PARAGRAPH = 20
# and a text whose paragraphs of LONG_PARAGRAPH sentences or more hold LONG_SHARE of its
# sentences or more is partitioned as one of few paragraphs, whatever their number: most
# of it has no breaks to say where its topics change (a page whose front matter kept its
# blank lines and whose body lost them: WikiText pieces below five short paragraphs, Pk
# 0.419 -> 0.053 on the tuning half). Chosen on the tuning halves' sets with paragraphs:
# a half changes none of their documents, a third only hard-wrapped articles (where
# layout rules miss breaks): those without indents 0.2972 -> 0.2959, indented 0.2956 ->
# 0.2912
LONG_SHARE = 1 / 3
# and so is a text whose paragraphs read as pieces of unrelated texts (a digest, a page
# of abstracts): where each paragraph is a topic of its own, the median step between
# paragraphs is a boundary's own step, and none pays for itself (ten WikiText pieces,
# each a paragraph: 1.57 segments, Pk 0.422 on the tuning half). Its sentences tell it:
# the median step between neighbouring sentences across a paragraph start is
# PIECES_RATIO times the median within paragraphs or more (``separate_paragraphs``,
# over MIN_WITHIN steps within paragraphs or more: a median of a few moves by chance;
# 3, 6 and 10 segment every document of the tuning sets alike). Chosen on the tuning
# half's sets: 1.25 takes those pieces to 0.045 and the same of the synthetic set 0.333 -> 0.130,
# and costs no article set more than Wikipedia's 0.305 -> 0.312 (WikiText-2's with
# blank lines 0.281 -> 0.274); 1.2 ties it on the mean over every set (0.027 and 0.102)
# but costs the hard-wrapped articles 0.016 and 0.017; 1.3 leaves the synthetic set at
# 0.171. Chosen on MiniLM's vectors: a model's own is a setting of the component
# (``segment_pieces_ratio``), as its penalties are
PIECES_RATIO = 1.25
MIN_WITHIN = 10
# a sentence on one line of more wordpieces than LONG_SENTENCE (text without punctuation
# read as one sentence) is read as units of at most PIECE wordpieces: PIECE chosen on the
# tuning half's WikiText pieces without punctuation (``spacy project run tune-pieces``:
# pieces of 8, 12 and 24 are no clear difference from 16, which has half the units of 8),
# LONG_SENTENCE so that punctuated sentences are seldom cut
LONG_SENTENCE = 128
PIECE = 16


def valid_drift(value: float) -> bool:
    """Whether ``value`` can be a ``drift``: a finite number, 0 or more (0: no credit)."""
    return math.isfinite(value) and value >= 0


def length_credit(sizes: Any, drift: float) -> numpy.ndarray:
    """``drift * m ln m`` for each run of ``m`` units in ``sizes``: what the partition
    takes off a run's cost, so that splitting a long run costs more than splitting a
    short one (module docstring)."""
    m = numpy.asarray(sizes, dtype="float64")
    return float(drift) * m * numpy.log(numpy.maximum(m, 1.0))


def valid_penalty(value: float) -> bool:
    """Whether ``value`` can be a boundary penalty: a finite number greater than 0 (a
    boundary's score is measured in penalties; ``max_sents`` 1 gives every sentence a
    segment of its own)."""
    return math.isfinite(value) and value > 0


def mean_vectors(
    hidden: numpy.ndarray, rows: numpy.ndarray, row_unit: numpy.ndarray, n_units: int
) -> numpy.ndarray:
    """Mean hidden state of each unit's wordpieces.

    hidden: ``(n_windows, L, width)``.
    rows: wordpiece rows (``window * L + position``) of the doc's tokens.
    row_unit: the unit (sentence) of each of those rows.
    RETURNS: ``(n_units, width)`` float32; a unit without wordpieces gets zeros.
    """
    flat = numpy.asarray(hidden, dtype="float32").reshape((-1, hidden.shape[-1]))
    rows = numpy.asarray(rows, dtype="int64")
    return group_means(flat[rows], row_unit, n_units).astype("float32")


def long_paragraph_sentences(paragraph_first: Any) -> numpy.ndarray:
    """Per sentence, whether its paragraph (``paragraph_first``: per sentence, whether it
    opens one) holds ``LONG_PARAGRAPH`` sentences or more."""
    first = numpy.asarray(paragraph_first, dtype=bool)
    if not len(first):
        return numpy.zeros(0, dtype=bool)
    paragraph = numpy.maximum(numpy.cumsum(first) - 1, 0)
    return numpy.bincount(paragraph)[paragraph] >= LONG_PARAGRAPH


def valid_ratio(value: Optional[float]) -> bool:
    """Whether ``value`` can be a ``pieces_ratio``: None (paragraphs never read as
    pieces) or, as a penalty, a finite number greater than 0."""
    return value is None or valid_penalty(value)


def separate_paragraphs(
    vectors: numpy.ndarray, paragraph_first: Any, ratio: Optional[float] = PIECES_RATIO
) -> bool:
    """Whether the paragraphs of a text read as pieces of unrelated texts: over its
    sentences' ``vectors`` (``unit_vectors``), the median of half the squared distance
    between neighbours across a paragraph start (``paragraph_first``: per sentence,
    whether it opens one) is ``ratio`` times the median within paragraphs or more,
    over ``MIN_WITHIN`` steps within paragraphs or more (``ratio`` None: never). Equal
    neighbours (a repeated sentence, ``tie_repeats``) count in neither."""
    first = numpy.asarray(paragraph_first, dtype=bool)
    if ratio is None or len(vectors) < 2 or len(first) != len(vectors):
        return False
    steps = neighbour_steps(vectors)
    across = first[1:]
    differ = steps > 0
    within = steps[differ & ~across]
    between = steps[differ & across]
    if len(within) < MIN_WITHIN or not len(between):
        return False
    return float(numpy.median(between)) >= ratio * float(numpy.median(within))


def sentence_index(sent_starts: numpy.ndarray, n_tokens: int) -> numpy.ndarray:
    """The sentence (0, 1, ...) of each of ``n_tokens`` tokens, from the sentences' first
    tokens (sorted, the first one 0)."""
    return numpy.searchsorted(sent_starts, numpy.arange(n_tokens), side="right") - 1


def sentence_means(
    hidden: numpy.ndarray, align: Any, sentence_of_token: numpy.ndarray, n_sents: int
) -> numpy.ndarray:
    """Mean hidden state of each sentence's wordpieces (``mean_vectors``).

    align: spacy-transformers' alignment of the tokens to wordpiece rows
        (``doc._.trf_data.align``: ``dataXd`` the rows, ``lengths`` per token).
    sentence_of_token: ``(n_tokens,)`` sentence of each token (``sentence_index``).
    """
    rows, tokens = aligned_rows(align)
    return mean_vectors(hidden, rows, sentence_of_token[tokens], n_sents)


# a text repeated this often is the text's pattern (a list, a copied line, a log)
MIN_COPIES = 3
# texts that differ in one word are lines of one template ("Item one: check the valve.",
# "Item two: check the valve.", ...) where they hold at least this many words with
# letters ("= = = Other storms = = =" holds two) and at most this many words in all (so
# that the keys stay linear in the text)
TEMPLATE_WORDS = (5, 64)


def repeat_groups(texts: Sequence[str], min_copies: int = MIN_COPIES) -> numpy.ndarray:
    """The group (0, 1, ... in order of first appearance) of each text. Texts are compared
    up to case, whitespace and the digits of their numbers. Texts with letters share a
    group where ``min_copies`` or more of them are equal, or are lines of one template
    (``TEMPLATE_WORDS``: equal but for the same one word); groups that share a text
    merge. Every other text is a group of its own (a sentence quoted once more, or a bare
    number, means what its context gives it)."""
    words = [number_shape(text.lower()).split() for text in texts]
    keys: Dict[Tuple[Any, ...], List[int]] = {}
    low, high = TEMPLATE_WORDS
    lines = []  # the texts that may be lines of a template
    for i, w in enumerate(words):
        lettered = sum(any(map(str.isalpha, word)) for word in w)
        if lettered == 0:
            continue
        keys.setdefault(("=", *w), []).append(i)
        if lettered >= low and len(w) <= high:
            lines.append(i)
    # lines of one template share their length and their first word (or, where the first
    # word is the one that differs, their last): only texts that share one of these with
    # enough others get the one key per word
    ends = Counter(key for i in lines for key in _ends(words[i]))
    for i in lines:
        w = words[i]
        if any(ends[key] >= min_copies for key in _ends(w)):
            for j in range(len(w)):
                keys.setdefault((j, *w[:j], *w[j + 1 :]), []).append(i)
    parent = list(range(len(words)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in keys.values():
        if len(members) >= min_copies:
            first = root(members[0])
            for i in members[1:]:
                parent[root(i)] = first
    order: Dict[int, int] = {}
    return numpy.array(
        [order.setdefault(root(i), len(order)) for i in range(len(words))], dtype="int64"
    )


def _ends(words: List[str]) -> Tuple[Tuple[int, str, str], Tuple[int, str, str]]:
    """The length and first word, and the length and last word, of a text's words."""
    return (len(words), "first", words[0]), (len(words), "last", words[-1])


def tie_repeats(means: numpy.ndarray, groups: numpy.ndarray) -> numpy.ndarray:
    """Each row of ``means`` replaced by the mean of its group's rows (``repeat_groups``):
    a repeated sentence means the same wherever it stands, so it gets one vector, not one
    per position in the model's windows."""
    groups = numpy.asarray(groups, dtype="int64")
    if len(groups) == 0 or int(groups.max()) + 1 == len(groups):
        return means
    return group_means(means, groups)[groups].astype(numpy.asarray(means).dtype)


def repeated_headers(
    groups: Any, own_line: Any, paragraph_first: Any, below: Any, ended: Any
) -> numpy.ndarray:
    """For each sentence, whether it is a header that repeats above its text: its text
    repeats (``groups``: ``repeat_groups``), it is a line of its own (``own_line``), and
    every copy that is a line of its own stands as it does: above the rest of its
    paragraph (``paragraph_first`` of it and not of the next sentence: a speaker's name
    and time above each turn, ``"Ann Lee  0:09"``, or ``"Step 3"`` above its text), or,
    where the copies of two texts or more stand so, in turns, directly above a line of
    text without closing punctuation of their own (``below``: the next sentence starts a
    line; ``ended``: the sentence ends with closing punctuation), as a chat's
    ``"Ann Lee  9:02 AM"`` above each message. Not a signature, whose last copy may end
    the text, nor a list's or a dialogue's repeated lines, which are one text or end
    their sentences."""
    groups = numpy.asarray(groups, dtype="int64")
    own = numpy.asarray(own_line, dtype=bool)
    if not len(groups):
        return numpy.zeros(0, dtype=bool)
    repeated = numpy.bincount(groups)[groups] > 1

    def standing(over: numpy.ndarray) -> numpy.ndarray:
        return over & repeated & ~numpy.isin(groups, groups[repeated & own & ~over])

    first = numpy.asarray(paragraph_first, dtype=bool)
    headers = standing(own & first & ~numpy.append(first[1:], True))
    lined = standing(own & numpy.asarray(below, dtype=bool) & ~numpy.asarray(ended, dtype=bool))
    # (speakers take turns: two texts or more whose copies interleave, not a list's
    # runs of one text after another, "SM UB-2" ... "SM UB-9", "SM UB-10" ...)
    order = groups[lined]
    if numpy.count_nonzero(numpy.diff(order)) >= len(numpy.unique(order)) >= 2:
        headers |= lined
    return headers


ROUND_OFF = 1e-9


def unit_vectors(means: numpy.ndarray, *, standardise: bool) -> numpy.ndarray:
    """``means`` centred by their mean and scaled to unit length (0 rows stay 0; a
    centred value within ``ROUND_OFF`` of the largest magnitude counts as 0).

    standardise: before the length, divide each dimension by its spread over the rows
    plus the mean spread of all dimensions (``std + mean(std)``), so that a few
    dimensions of large variance (common in transformer hidden states) do not decide
    every distance, while a dimension of tiny variance gains at most twice the weight
    of an average one.
    """
    values = numpy.asarray(means, dtype="float64")
    vectors = values - values.mean(axis=0, keepdims=True)
    # a difference at round-off level of the values (identical rows) is no difference
    vectors[numpy.abs(vectors) <= ROUND_OFF * numpy.abs(values).max(initial=0.0)] = 0.0
    if standardise and len(vectors) > 1:
        spread = vectors.std(axis=0)
        if spread.mean() > 0:
            vectors = vectors / (spread + spread.mean())
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / numpy.maximum(norms, 1e-12)


def group_means(values: numpy.ndarray, groups: numpy.ndarray, n_groups: int = 0) -> numpy.ndarray:
    """Mean of the rows of ``values`` in each group (``groups``: 0, 1, ... per row;
    at least ``n_groups`` groups, an empty one gets zeros), in float64."""
    groups = numpy.asarray(groups, dtype="int64")
    sums = group_sums(values, groups, n_groups)
    return sums / numpy.maximum(numpy.bincount(groups, minlength=len(sums)), 1)[:, None]


class Cost:
    """Within-segment cost ``sum ||v - mean||^2`` of any run ``[a, b)`` of ``vectors``
    in O(width), from prefix sums."""

    def __init__(self, vectors: numpy.ndarray) -> None:
        v = numpy.asarray(vectors, dtype="float64")
        self.cum = numpy.vstack([numpy.zeros((1, v.shape[1])), numpy.cumsum(v, axis=0)])
        self.sq = numpy.concatenate([[0.0], numpy.cumsum((v * v).sum(axis=1))])

    def __call__(self, a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
        a, b = numpy.asarray(a), numpy.asarray(b)
        s = self.cum[b] - self.cum[a]
        sizes = numpy.maximum(b - a, 1)
        return (self.sq[b] - self.sq[a]) - (s * s).sum(axis=-1) / sizes

    def drop(self, a: int, split: numpy.ndarray, b: int) -> numpy.ndarray:
        """The cost that splitting ``[a, b)`` at each of ``split`` removes."""
        split = numpy.asarray(split)
        left = numpy.full(split.shape, a)
        right = numpy.full(split.shape, b)
        return self(numpy.array(a), numpy.array(b)) - self(left, split) - self(split, right)

    def gains(self, a: int, b: int, min_len: int = 1) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Split points of ``[a, b)`` (``min_len`` or more units each side) and the cost
        each removes."""
        splits = numpy.arange(a + min_len, b - min_len + 1)
        return splits, self.drop(a, splits, b)


MAX_UNITS = 256


def partition(
    vectors: numpy.ndarray,
    penalty: float,
    min_len: int = 1,
    max_len: int = MAX_UNITS,
    drift: float = 0.0,
    allowed: Optional[numpy.ndarray] = None,
    fits: Optional[numpy.ndarray] = None,
) -> List[int]:
    """Starts (0 excluded) of the segmentation of ``vectors`` into runs of at least
    ``min_len`` and at most ``max_len`` units that minimises the total ``Cost`` plus
    ``penalty`` per segment minus ``length_credit`` (``drift``, in the units of the cost)
    per segment. Exact for that problem: optimal partitioning by dynamic programming
    over every run that may end at each unit. ``max_len`` bounds the work per unit, so
    the time is linear in ``len(vectors)``; a run longer than that (256 sentences by
    default, thousands of tokens) is cut where the cost is lowest.
    allowed: per unit, whether a segment may start there (None: at every unit; the first
    unit always does). A run then holds at most ``max_len`` of the allowed starts, not of
    the units, so that a long stretch without one is never the only way through.
    fits: per end ``t`` of a run, 0 to ``len(vectors)``, the first unit a run ending there
    may start at (``first_fits``: the size limits); with ``allowed``, a run without a
    start allowed inside it fits too, as a unit alone does. Where no segmentation has
    every run within its limits and ``min_len`` long, the segmentation without them.
    """
    n = len(vectors)
    min_len = max(1, int(min_len))
    max_len = max(int(max_len), 2 * min_len)
    if n < 2 * min_len:
        return []
    cost = Cost(vectors)
    best = numpy.full(n + 1, numpy.inf)
    best[0] = -penalty
    back = numpy.zeros(n + 1, dtype="int64")
    may_start = numpy.ones(n + 1, dtype=bool)
    if allowed is not None:
        may_start[:n] = numpy.asarray(allowed, dtype=bool)
        may_start[0] = True
    # where runs may start: from the first unit, or after a run of min_len or more
    firsts = numpy.flatnonzero(may_start[:n])
    firsts = firsts[(firsts == 0) | (firsts >= min_len)]
    for t in range(min_len, n + 1):
        if not may_start[t]:
            continue  # (no run ends where none may start; best[t] stays infinite)
        if allowed is None:
            lowest = t - max_len if fits is None else max(t - max_len, int(fits[t]))
            runs = numpy.arange(max(lowest, min_len), t - min_len + 1)
            if lowest <= 0:
                runs = numpy.concatenate([[0], runs])
        else:
            last = int(numpy.searchsorted(firsts, t - min_len, side="right"))
            runs = firsts[max(0, last - max_len) : last]
            if fits is not None and len(runs):
                # (a run with no start allowed inside it fits, as a unit alone does)
                whole = not may_start[runs[-1] + 1 : t].any()
                runs = runs[(runs >= fits[t]) | ((runs == runs[-1]) & whole)]
        if not len(runs):
            continue
        totals = best[runs] + cost(runs, numpy.full(len(runs), t))
        totals -= length_credit(t - runs, drift)
        k = int(numpy.argmin(totals))
        best[t] = totals[k] + penalty
        back[t] = runs[k]
    if fits is not None and not numpy.isfinite(best[n]):
        return partition(vectors, penalty, min_len, max_len, drift, allowed)
    starts: List[int] = []
    t = n
    while t > 0:
        t = int(back[t])
        if t > 0:
            starts.append(t)
    return sorted(starts)


def first_fits(
    sizes: numpy.ndarray,
    max_sents: int = 0,
    max_tokens: int = 0,
    counts: Optional[numpy.ndarray] = None,
) -> numpy.ndarray:
    """Per end ``t`` (0 to ``len(sizes)``) of a run of units with wordpiece ``sizes``
    and sentence ``counts`` (None: one each), the first unit a run ending there may
    start at to hold at most ``max_sents`` sentences and ``max_tokens`` wordpieces (0:
    no limit); a unit alone always fits."""
    ends = numpy.arange(len(sizes) + 1)
    first = numpy.zeros(len(ends), dtype="int64")
    for most, values in ((max_sents, counts), (max_tokens, sizes)):
        if most > 0:
            if values is None:
                values = numpy.ones(len(sizes), dtype="int64")
            cum = numpy.concatenate([[0], numpy.cumsum(numpy.asarray(values, dtype="int64"))])
            first = numpy.maximum(first, numpy.searchsorted(cum, cum - most, side="left"))
    return numpy.minimum(first, numpy.maximum(ends - 1, 0))


def binary_segments(
    vectors: numpy.ndarray, n_segments: int, min_len: int = 1, fixed: Sequence[int] = ()
) -> List[int]:
    """Starts (0 excluded) of up to ``n_segments`` segments: from the ``fixed`` starts
    (which count), repeatedly split, at its best point, the segment whose split lowers
    the cost most."""
    cost = Cost(vectors)
    starts: List[int] = sorted(set(fixed) - {0})
    bounds = [0, *starts, len(vectors)]
    while len(starts) + 1 < n_segments:
        best: Optional[Tuple[float, int]] = None
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            splits, gains = cost.gains(a, b, min_len)
            if len(splits):
                k = int(numpy.argmax(gains))
                if best is None or gains[k] > best[0]:
                    best = (float(gains[k]), int(splits[k]))
        if best is None:
            break
        starts.append(best[1])
        bounds = sorted(bounds + [best[1]])
    return sorted(starts)


def gap_similarities(vectors: numpy.ndarray, window: int) -> numpy.ndarray:
    """Cosine similarity across each of the ``n - 1`` gaps of the mean vectors of up to
    ``window`` sentences on either side."""
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
    """TextTiling's boundaries: sentence indices where a new segment starts (never 0),
    sorted. Valleys deeper than ``mean - cutoff * std`` of the valley depths (or, with
    ``n_segments``, the deepest gaps), deepest first; one closer than ``min_sents`` to a
    chosen boundary or to the document's ends is dropped."""
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
        if len(chosen) >= wanted:
            break
        start = gap + 1
        if start < min_sents or n_sents - start < min_sents:
            continue
        if any(abs(start - other) < min_sents for other in chosen):
            continue
        chosen.append(start)
    return sorted(chosen)


def away_from(starts: Sequence[int], fixed: Sequence[int], distance: int) -> List[int]:
    """The ``starts`` at least ``distance`` from every one of ``fixed`` (both sorted)."""
    if not len(fixed):
        return list(starts)
    anchors = numpy.asarray(fixed, dtype="int64")
    points = numpy.asarray(starts, dtype="int64")
    k = numpy.searchsorted(anchors, points)
    after = numpy.abs(anchors[numpy.minimum(k, len(anchors) - 1)] - points)
    before = numpy.abs(points - anchors[numpy.maximum(k - 1, 0)])
    return points[numpy.minimum(after, before) >= distance].tolist()


def before_headings(starts: Sequence[int], headings: numpy.ndarray) -> List[int]:
    """Segment starts (sentence indices, 0 excluded) with each start that follows one
    or more headings moved back before them; a segment of headings alone joins the next
    one."""
    out: List[int] = []
    for start in starts:
        while start > 0 and headings[start - 1]:
            start -= 1
        if start > (out[-1] if out else 0):
            out.append(start)
    return out


def enforce_limits(
    starts: List[int],
    vectors: numpy.ndarray,
    sent_sizes: numpy.ndarray,
    *,
    max_sents: int = 0,
    max_tokens: int = 0,
    allowed: Optional[numpy.ndarray] = None,
    min_sents: int = 1,
) -> List[int]:
    """Split segments (sentence starts ``starts``, 0 excluded) that hold more than
    ``max_sents`` sentences or ``max_tokens`` wordpieces at their best gap (the split
    that lowers the cost of ``vectors`` most; of equal ones, the nearest to the middle
    in wordpieces) until each fits or is one sentence. The gap leaves ``min_sents``
    sentences or more on each side where the segment has such a gap: otherwise a short
    sentence unlike its neighbours (a fragment, a line of figures) is cut off on both
    sides, a chunk of its own. With ``allowed`` (per sentence),
    a split goes before a sentence where it is True, if the segment has one. A segment
    without one (headings and the one sentence they head: ``allowed`` is False after a
    heading) that holds too many wordpieces, but not too many sentences, stays whole
    where its headings alone fit, for the caller to cut inside the sentence
    (``split_tokens``): a heading stays with its text."""
    if max_sents <= 0 and max_tokens <= 0:
        return sorted(starts)
    n = len(sent_sizes)
    cost = Cost(vectors)
    cum = numpy.concatenate([[0], numpy.cumsum(sent_sizes)])
    may_start = numpy.ones(n, dtype=bool) if allowed is None else numpy.asarray(allowed, bool)
    bounds = [0] + list(starts) + [n]
    out: List[int] = []
    stack = list(zip(bounds[:-1], bounds[1:], strict=True))[::-1]
    while stack:
        a, b = stack.pop()
        too_many = max_sents > 0 and b - a > max_sents
        too_long = max_tokens > 0 and cum[b] - cum[a] > max_tokens
        if (too_many or too_long) and b - a > 1:
            splits, gains = cost.gains(a, b)
            keep = may_start[splits]
            if not keep.any() and not too_many:
                # headings and the one sentence they head: whole where the headings
                # fit, for the caller to cut inside that sentence
                if cum[b - 1] - cum[a] <= max_tokens:
                    out += [a] if a > 0 else []
                    continue
                keep = splits < b - 1  # headings too long themselves: among them
            if keep.any():
                splits, gains = splits[keep], gains[keep]
            wide = (splits - a >= min_sents) & (b - splits >= min_sents)
            if wide.any():
                splits, gains = splits[wide], gains[wide]
            # among equally good gaps (repeated text), the one nearest the middle
            best = numpy.flatnonzero(gains >= gains.max() - 1e-9 * max(1.0, abs(gains.max())))
            middle = (cum[a] + cum[b]) / 2
            split = int(splits[best[numpy.argmin(numpy.abs(cum[splits[best]] - middle))]])
            stack.extend([(split, b), (a, split)])
            continue
        if a > 0:
            out.append(a)
    return sorted(out)


def split_tokens(
    sizes: WordpieceCounts, max_tokens: int, lines: Optional[numpy.ndarray] = None
) -> List[int]:
    """Offsets (in tokens, 0 excluded) that cut a run of tokens with wordpiece ``sizes``
    into pieces of at most ``max_tokens`` wordpieces (a single token longer than that
    stays whole: it cannot be cut; a piece that starts inside a wordpiece reads it too,
    ``WordpieceCounts.span``). With ``lines`` (True where a token starts a line), a
    piece ends before the last line start that fits, where it has one."""
    values = numpy.asarray(sizes.counts).tolist()
    extra = numpy.asarray(sizes.inside).tolist()
    starts_line = [False] * len(values) if lines is None else numpy.asarray(lines).tolist()
    cuts: List[int] = []
    # where the piece starts, its size, its last line start
    piece, total, line = 0, extra[0] if values else 0, -1
    for i, size in enumerate(values):
        while total + size > max_tokens and total > extra[piece]:
            cut = line if line > piece else i
            cuts.append(cut)
            piece, total = cut, extra[cut] + sum(values[cut:i])
            line = max((j for j in range(cut + 1, i) if starts_line[j]), default=-1)
        if starts_line[i] and i > piece:
            line = i
        total += size
    return cuts


def long_sentence_pieces(
    starts: numpy.ndarray,
    sizes: WordpieceCounts,
    long_sentence_tokens: int,
    piece_tokens: int,
    starts_line: Optional[Callable[[int], bool]] = None,
    is_word: Optional[Callable[[int], bool]] = None,
) -> numpy.ndarray:
    """The units of segmentation: ``starts`` (True where a token starts a sentence) with
    every sentence of more than ``long_sentence_tokens`` wordpieces (``sizes``) cut into
    pieces of at most ``piece_tokens`` (``split_tokens``), as TextTiling reads text in
    pseudo-sentences. Text without punctuation can be one sentence for a pipeline whose
    sentences come from punctuation; its pieces give the partition something to
    segment. A sentence with a line start after its first token (``starts_line(i)``:
    whether token ``i`` starts a line) stays whole: a table, list or code block that the
    sentence rules keep as one sentence. Pieces without a word (``is_word(i)``: whether
    token ``i`` is one) next to each other are one piece: numbers, marks or codes in a
    run, whose pieces would differ only by where they stand in the model's windows (so
    a sentence without a word stays whole). ``long_sentence_tokens`` 0: the
    sentences as they are."""
    units = numpy.array(starts, dtype=bool)
    if long_sentence_tokens <= 0:
        return units
    bounds = [*numpy.flatnonzero(units).tolist(), len(units)]
    for start, end in zip(bounds[:-1], bounds[1:], strict=True):
        if sizes.span(start, end) <= long_sentence_tokens or (
            starts_line is not None and any(starts_line(i) for i in range(start + 1, end))
        ):
            continue
        pieces = [
            start,
            *(start + cut for cut in split_tokens(sizes.part(start, end), piece_tokens)),
        ]
        worded = [
            is_word is None or any(is_word(i) for i in range(a, b))
            for a, b in zip(pieces, [*pieces[1:], end], strict=True)
        ]
        for k in range(1, len(pieces)):
            if worded[k - 1] or worded[k]:
                units[pieces[k]] = True
    return units


def neighbour_steps(vectors: numpy.ndarray) -> numpy.ndarray:
    """Half the squared distance between each row of ``vectors`` and the next
    (``len(vectors) - 1`` of them, float64)."""
    v = numpy.asarray(vectors, dtype="float64")
    return ((v[1:] - v[:-1]) ** 2).sum(axis=1) / 2


def step_noise(vectors: numpy.ndarray) -> float:
    """Median, over neighbouring rows of ``vectors`` that differ, of half their squared
    distance (``neighbour_steps``; 1.0 where no two neighbours differ, at least 1e-6).
    Equal neighbours (a repeated sentence, ``tie_repeats``) say nothing about how much
    sentences vary."""
    steps = neighbour_steps(vectors)
    steps = steps[steps > 0]
    if len(steps) == 0:
        return 1.0
    return max(float(numpy.median(steps)), 1e-6)


def priced_units(n_units: int, n_sents: int = 0, short_text: int = 0) -> float:
    """The number of units whose logarithm a boundary's price is multiplied by: the
    ``n_units`` of a text of ``n_sents`` sentences (0: as many as units), and at least
    what ``short_text`` sentences make in the text's units (``short_text * n_units /
    n_sents``), and at least 2."""
    floor = short_text * n_units / max(n_sents or n_units, 1) if short_text > 0 else 0.0
    return max(float(n_units), floor, 2.0)


def prices(
    penalty: float,
    drift: float,
    vectors: numpy.ndarray,
    scale: str = "noise",
    *,
    n_sents: int = 0,
    short_text: int = 0,
) -> Tuple[float, float]:
    """What one boundary costs among the units ``vectors`` of a text of ``n_sents``
    sentences, ``penalty * ln(n_units)`` (``n_units`` at least what ``short_text``
    sentences make, ``priced_units``), and the ``drift`` of ``length_credit``, both
    times the document's step noise (``step_noise(vectors)``) with ``scale="noise"``, as
    they are with ``scale="unit"``."""
    noise = step_noise(vectors) if scale == "noise" else 1.0
    n_units = priced_units(len(vectors), n_sents, short_text)
    boundary = float(penalty) * noise * math.log(n_units)
    return boundary, float(drift) * noise


def boundary_scores(
    vectors: numpy.ndarray,
    starts: Sequence[int],
    penalty: float,
    scale: str = "noise",
    drift: float = 0.0,
    short_text: int = 0,
) -> List[float]:
    """Per segment (``starts``, 0 first): the cost its start's boundary removes between
    the neighbouring segments, less what the split costs in ``length_credit``
    (``drift``), over the boundary penalty (``prices``, with ``short_text``; 0.0 for the
    first)."""
    if len(starts) < 2:
        return [0.0]
    cost = Cost(vectors)
    bounds = list(starts) + [len(vectors)]
    unit, credit = prices(penalty, drift, vectors, scale, short_text=short_text)
    scores = [0.0]
    for i in range(1, len(starts)):
        a, split, b = bounds[i - 1], bounds[i], bounds[i + 1]
        drop = cost.drop(a, numpy.array(split), b)
        loss = length_credit(b - a, credit) - length_credit([split - a, b - split], credit).sum()
        scores.append(round(float(drop - loss) / unit, 6))
    return scores


def may_split(
    n_sents: int,
    *,
    min_sents: int,
    n_paragraphs: int = 1,
    max_sents: int = 0,
    n_wordpieces: int = 0,
    max_tokens: int = 0,
    n_breaks: int = 0,
) -> bool:
    """Whether a text of ``n_sents`` sentences can come out of ``segment`` (and the
    component's split of an overlong sentence) as more than one segment: it has two
    paragraphs, or room for two segments of ``min_sents`` sentences, or it breaks a
    size limit, or ``n_breaks`` sentences after its first are marked headings (``breaks``
    of ``segment``). Where it cannot, its one segment needs no sentence vectors."""
    return (
        n_breaks > 0
        or n_paragraphs > 1
        or n_sents >= 2 * max(1, min_sents)
        or 0 < max_sents < n_sents
        or 0 < max_tokens < n_wordpieces
    )


def segment(
    means: numpy.ndarray,
    *,
    method: str = "partition",
    penalty: float = PENALTY,
    paragraph_penalty: Optional[float] = None,
    drift: float = DRIFT,
    short_text: int = SHORT_TEXT,
    pieces_ratio: Optional[float] = PIECES_RATIO,
    scale: str = "noise",
    standardise: bool = True,
    window: int = 2,
    cutoff: float = 0.5,
    min_sents: int = 2,
    max_sents: int = 0,
    max_tokens: int = 0,
    n_segments: int = 0,
    sent_sizes: Optional[numpy.ndarray] = None,
    paragraphs: Optional[numpy.ndarray] = None,
    headings: Optional[numpy.ndarray] = None,
    joined: Optional[numpy.ndarray] = None,
    breaks: Optional[numpy.ndarray] = None,
    closing: Optional[numpy.ndarray] = None,
) -> Tuple[List[int], List[float]]:
    """Segment starts (sentence indices, 0 first) and their scores.

    means: ``(n_sents, width)`` mean hidden state of each sentence (``mean_vectors``).
    penalty: what a boundary costs (module docstring) where the units are sentences.
    paragraph_penalty: the same where they are paragraphs (None: ``penalty``).
    short_text: a text of fewer sentences pays for a boundary what a text of this many
        would (``priced_units``; 0: none).
    pieces_ratio: the ratio of steps across and within paragraphs from which they read
        as pieces of unrelated texts (``separate_paragraphs``; None: never).
    scale: ``"noise"`` or ``"unit"``: what ``penalty`` is relative to (module docstring).
    standardise: scale each dimension by its spread first (``unit_vectors``).
    paragraphs: the paragraph (0, 1, ...) of each sentence, or None. With more than one
        paragraph, segments start only at paragraphs (``min_sents`` then does not apply:
        a segment holds at least one whole paragraph), except where the size limits
        split a paragraph. The paragraphs are the units, but with fewer than
        ``FEW_PARAGRAPHS`` of them, where paragraphs of ``LONG_PARAGRAPH`` sentences
        or more hold ``LONG_SHARE`` of the sentences, or where the paragraphs read as
        pieces of unrelated texts (``separate_paragraphs``), the partition's units are
        the sentences (and its price ``penalty``'s), cut only where paragraphs start or
        at any sentence of such a long paragraph (``min_sents`` applies then).
        TextTiling and ``n_segments`` read such a paragraph's sentences as units.
    headings: per sentence, whether it heads what follows (``sentences.heading_sentences``):
        a boundary right after headings moves before them (``before_headings``), and
        the size limits split elsewhere where they can, so a heading stays with its
        text. Headings stay units of their own for the partition: a heading unlike
        the text before it is a clear sign of a new topic.
    joined: per sentence, whether a heading joins the unit after it instead, adding
        nothing to its vector: one whose text repeats up to its numbers ("Part 2", "Step
        3"), which says nothing of its section's topic (its copies share one vector,
        ``tie_repeats``), or a line without letters or digits (``"---"``, ``"* * *"``).
        Those that end the text join the unit before them.
    breaks: per sentence, whether it is a heading marked as one (``sentences.
        MARKED_HEADING``) or a plain one over prose (``sentences.heads_prose``): the
        first of each run of headings that holds one starts a
        segment, whatever the vectors, ``min_sents`` or the method (an author's own
        sections); the partition (or TextTiling, or the split to ``n_segments``, which
        counts them) then works within the sections they make.
    closing: per sentence, whether it closes the text before it
        (``sentences.closing_sentences``: an attribution, a signature, a valediction):
        it joins the unit before it, so no segment starts on it, and the size limits
        split elsewhere where they can.
    """
    n = len(means)
    if n == 0:
        return [], []
    vectors = unit_vectors(means, standardise=standardise)
    min_len = max(1, min_sents)
    heads = numpy.zeros(n, dtype=bool)
    if headings is not None and len(headings) == n:
        heads = numpy.asarray(headings, dtype=bool)
    unit_first = numpy.ones(n, dtype=bool)  # where a unit starts, sentences as units
    unused = numpy.zeros(n, dtype=bool)  # sentences whose vectors play no part
    if joined is not None and len(joined) == n:
        unused = numpy.asarray(joined, dtype=bool) & heads
        if unused.all():  # (nothing to join)
            unused[:] = False
        # each joins the unit after it; a run of them that ends the text, the one before
        unit_first[1:] &= ~unused[:-1]
        unit_first[n - int(numpy.argmin(unused[::-1])) :] = False
    forced = numpy.zeros(n, dtype=bool)
    if breaks is not None and len(breaks) == n and numpy.any(breaks):
        marked = numpy.asarray(breaks, dtype=bool)
        runs = marked | heads
        firsts = runs & ~numpy.concatenate([[False], runs[:-1]])
        run_of = numpy.cumsum(firsts) - 1
        holds_marked = numpy.bincount(run_of[marked], minlength=int(firsts.sum())) > 0
        forced = firsts & holds_marked[numpy.maximum(run_of, 0)]
        forced[0] = False
        unit_first |= forced
    closes = numpy.zeros(n, dtype=bool)
    if closing is not None and len(closing) == n:
        closes[1:] = numpy.asarray(closing, dtype=bool)[1:]
        forced &= ~closes
        unit_first &= ~closes
        heads = heads & ~closes  # (a start does not move back onto one)
    cuts_first = None  # with few paragraphs: the only sentences a segment may start at
    if paragraphs is not None and len(paragraphs) == n and int(numpy.max(paragraphs)) > 0:
        paragraph_start = numpy.diff(numpy.asarray(paragraphs), prepend=-1) != 0
        paragraph_first = unit_first & (paragraph_start | forced)
        partitioned = method == "partition" and n_segments <= 0
        in_long = long_paragraph_sentences(paragraph_start)
        few = partitioned and (
            int(paragraph_first.sum()) < FEW_PARAGRAPHS
            or in_long.mean() >= LONG_SHARE
            or separate_paragraphs(vectors, paragraph_start, pieces_ratio)
        )
        # a long paragraph's sentences: where a segment may start among few paragraphs,
        # units of their own for TextTiling and a number of segments (none for the
        # partition of more paragraphs)
        long = unit_first & in_long
        if partitioned and not few:
            long[:] = False
        if not long.any():
            min_len = 1  # (a segment holds whole paragraphs)
        if few:
            cuts_first = paragraph_first | long
        else:
            unit_first = paragraph_first | long
            if paragraph_penalty is not None:
                penalty = paragraph_penalty
    units, first = vectors, numpy.arange(n)
    if not unit_first.all():
        groups = numpy.cumsum(unit_first) - 1
        # (a joined heading adds nothing to its unit's vector)
        kept = group_means(means[~unused], groups[~unused], int(groups[-1]) + 1)
        units = unit_vectors(kept, standardise=standardise)
        first = numpy.flatnonzero(unit_first)
    allowed = None if cuts_first is None else cuts_first[first]
    sizes = sent_sizes if sent_sizes is not None else numpy.ones(n, dtype="int64")
    fixed = numpy.flatnonzero(forced[first]).tolist()
    if method == "texttiling":
        sims = gap_similarities(units, window)
        chosen = choose_boundaries(
            depth_scores(sims), sims, cutoff=cutoff, min_sents=min_len, n_segments=n_segments
        )
        chosen = sorted(set(fixed) | set(away_from(chosen, fixed, min_len)))
    elif n_segments > 0:
        chosen = binary_segments(units, n_segments, min_len, fixed=fixed)
    else:
        boundary, credit = prices(penalty, drift, units, scale, n_sents=n, short_text=short_text)
        chosen = list(fixed)
        # the size limits bound the partition's runs (where a segmentation within them
        # exists), so the limits below seldom split a segment at all
        limited = max_sents > 0 or max_tokens > 0
        if limited:
            unit_sizes = numpy.add.reduceat(numpy.asarray(sizes, dtype="int64"), first)
            unit_counts = numpy.diff(numpy.append(first, n))
        for a, b in zip([0, *fixed], [*fixed, len(units)], strict=True):
            cuts = None if allowed is None else allowed[a:b]
            fits = None
            if limited:
                fits = first_fits(unit_sizes[a:b], max_sents, max_tokens, unit_counts[a:b])
            inner = partition(units[a:b], boundary, min_len, drift=credit, allowed=cuts, fits=fits)
            chosen += [a + s for s in inner]
        chosen.sort()
    starts = before_headings([int(first[s]) for s in chosen], heads)
    allowed = numpy.concatenate([[True], ~heads[:-1]]) & ~closes
    starts = enforce_limits(
        starts,
        vectors,
        sizes,
        max_sents=max_sents,
        max_tokens=max_tokens,
        allowed=allowed,
        min_sents=max(1, min_sents),
    )
    starts = [0] + starts
    return starts, boundary_scores(vectors, starts, penalty, scale, drift, short_text)
