"""Wordpieces of overlapping transformer windows <-> spaCy tokens.

``trf_data.align`` maps every spaCy token to rows of the flattened wordpiece grid
(``window * L + position``, ``L`` the padded width of the transformer batch). A token may
span several wordpieces of a window and, where windows overlap, appear in several windows.
"""

from dataclasses import dataclass
from typing import Any, List, NamedTuple, Optional, Tuple, cast

import numpy
from thinc.api import NumpyOps, get_array_module, to_numpy
from thinc.types import Floats2d, Ints1d, Ragged


def gather_rows(values: Any, rows: numpy.ndarray) -> numpy.ndarray:
    """The rows ``rows`` of the 2-d array ``values`` (on any device), as a C-ordered
    float32 array on the CPU. The rows are picked on the array's device and copied over
    in one transfer; a Doc's pooling is then a few small reductions, which cost less on
    the CPU than a GPU's kernel launches and synchronisations."""
    picked = values[get_array_module(values).asarray(rows)]
    return numpy.ascontiguousarray(to_numpy(picked), dtype="float32")


def group_sums(values: Any, groups: Any, n_groups: int = 0) -> numpy.ndarray:
    """Sum of the rows of ``values`` in each group (``groups``: 0, 1, ... per row; at
    least ``n_groups`` groups, an empty one gets zeros), in float64. Rows are sorted by
    group and each run summed at once (``numpy.add.at`` does the same row by row, many
    times slower)."""
    groups = numpy.asarray(groups, dtype="int64")
    values = numpy.asarray(values, dtype="float64")
    n = max(n_groups, int(groups.max()) + 1 if len(groups) else 0)
    sums = numpy.zeros((n, *values.shape[1:]), dtype="float64")
    if len(groups):
        order = numpy.argsort(groups, kind="stable")
        sorted_groups = groups[order]
        starts = numpy.flatnonzero(numpy.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
        sums[sorted_groups[starts]] = numpy.add.reduceat(values[order], starts, axis=0)
    return sums


def window_length(trf_data: Any) -> int:
    """The padded width ``L`` of the windows in ``trf_data``."""
    return int(trf_data.wordpieces.input_ids.shape[1])


def aligned_rows(align: Ragged) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The wordpiece rows (``window * L + position``) of a spacy-transformers alignment,
    in its order, and the token of each row."""
    rows = numpy.asarray(align.dataXd, dtype="int64").reshape(-1)
    lengths = numpy.asarray(align.lengths, dtype="int64")
    return rows, numpy.repeat(numpy.arange(len(lengths)), lengths)


def _segments(align: Ragged, length: int) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Sort the alignment by (token, row) and cut it into (token, window) segments.

    Returns the sorted wordpiece rows, the length of each (token, window) segment and the
    token of each segment.
    """
    rows, tokens = aligned_rows(align)
    order = numpy.lexsort((rows, tokens))
    rows, tokens = rows[order], tokens[order]
    windows = rows // length
    if len(rows) == 0:
        empty = numpy.zeros((0,), dtype="int64")
        return rows, empty, empty
    new = numpy.ones(len(rows), dtype=bool)
    new[1:] = (tokens[1:] != tokens[:-1]) | (windows[1:] != windows[:-1])
    starts = numpy.flatnonzero(new)
    seg_lengths = numpy.diff(numpy.append(starts, len(rows)))
    return rows, seg_lengths, tokens[starts]


#: Wordpiece rows gathered at a time by :func:`token_values` (bounds its memory on long
#: Docs to this many rows of values, whatever the Doc's length).
GATHER_ROWS = 16384


@dataclass(frozen=True)
class TokenPooling:
    """How :func:`token_values` turns per-wordpiece values into per-token values for one
    alignment, worked out once (from the alignment alone) and applied to any number of
    arrays of the same windows (:meth:`apply`)."""

    rows: numpy.ndarray  # the aligned wordpiece rows, sorted by (token, row)
    seg_lengths: numpy.ndarray  # rows per (token, window) segment
    #: per chunk of at most GATHER_ROWS rows: (first row, end row, first segment, end
    #: segment, the tokens, how many windows hold each)
    chunks: Tuple[Tuple[int, int, int, int, numpy.ndarray, numpy.ndarray], ...]
    missing: numpy.ndarray  # the tokens without wordpieces
    n_tokens: int

    @classmethod
    def of(cls, align: Ragged, length: int, n_tokens: int) -> "TokenPooling":
        rows, seg_lengths, seg_tokens = _segments(align, length)
        chunks = []
        if len(rows):
            # cut between tokens: segments are sorted by token, each token's segments
            # together
            seg_rows = numpy.concatenate([[0], numpy.cumsum(seg_lengths)])
            token_first = numpy.flatnonzero(numpy.r_[True, seg_tokens[1:] != seg_tokens[:-1]])
            chunk = seg_rows[token_first] // GATHER_ROWS
            cuts = [0, *token_first[1:][chunk[1:] != chunk[:-1]].tolist(), len(seg_tokens)]
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                tokens, n_windows = numpy.unique(seg_tokens[lo:hi], return_counts=True)
                chunks.append((int(seg_rows[lo]), int(seg_rows[hi]), lo, hi, tokens, n_windows))
        covered = numpy.zeros(n_tokens, dtype=bool)
        covered[seg_tokens] = True
        return cls(rows, seg_lengths, tuple(chunks), numpy.flatnonzero(~covered), n_tokens)

    def apply(self, values: Any, out: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        """The per-token values of ``values`` ``(n_windows, L, C)`` (see
        :func:`token_values`), written into ``out`` when given."""
        n_windows, length, width = values.shape
        if out is None:
            out = numpy.zeros((self.n_tokens, width), dtype="float32")
        else:
            out[self.missing] = 0.0
        if not self.chunks:
            return out
        ops = NumpyOps()
        flat = values.reshape((n_windows * length, width))
        for row_lo, row_hi, lo, hi, tokens, n_windows_per_token in self.chunks:
            gathered = cast(Floats2d, gather_rows(flat, self.rows[row_lo:row_hi]))
            per_window, _ = ops.reduce_max(gathered, _lengths(self.seg_lengths[lo:hi]))
            out[tokens] = ops.reduce_mean(per_window, _lengths(n_windows_per_token))
        return out


def token_values(
    values: Any, align: Ragged, n_tokens: int, out: Optional[numpy.ndarray] = None
) -> numpy.ndarray:
    """Per-token values from per-wordpiece values ``(n_windows, L, C)``.

    Within a window a token takes the maximum over its wordpieces; a token seen in several
    overlapping windows takes the mean over those windows, so no window counts twice.
    Tokens without wordpieces (whitespace) get 0. The aligned rows are copied to the CPU
    a slice of tokens at a time (:func:`gather_rows`) and pooled there; the
    ``(n_tokens, C)`` result is written into ``out`` when given (e.g. columns of a larger
    matrix). Several arrays of the
    same windows share one :class:`TokenPooling`.
    """
    return TokenPooling.of(align, values.shape[1], n_tokens).apply(values, out)


def _lengths(lengths: numpy.ndarray) -> Ints1d:
    return cast(Ints1d, numpy.asarray(lengths, dtype="int32"))


def wordpiece_tokens(align: Ragged, n_windows: int, length: int) -> numpy.ndarray:
    """The spaCy token of every wordpiece, ``(n_windows, L)``, -1 where none.

    A wordpiece shared by several tokens is given to the first of them.
    """
    out = numpy.full(n_windows * length, -1, dtype="int64")
    rows, tokens = aligned_rows(align)
    out[rows[::-1]] = tokens[::-1]
    return out.reshape((n_windows, length))


class WordpieceCounts(NamedTuple):
    """The model's wordpieces per token of a Doc, in the first window that holds the
    token. ``counts``: the wordpieces a token holds that no earlier token holds (a
    wordpiece that several tokens share, as ``"don"`` for spaCy's ``do`` and ``n't``, or
    one ``[UNK]`` for a run of emoji, counts for the first of them), so they sum to the
    wordpieces of the text. ``inside``: 1 where a token's first wordpiece is also an
    earlier token's, so that a span starting at it reads that wordpiece as well
    (``span``)."""

    counts: numpy.ndarray
    inside: numpy.ndarray

    def span(self, start: int, end: int) -> int:
        """The wordpieces of the tokens ``start`` to ``end``."""
        if end <= start:
            return 0
        return int(self.counts[start:end].sum() + self.inside[start])

    def runs(self, starts: numpy.ndarray) -> numpy.ndarray:
        """The wordpieces of each run of tokens from one of ``starts`` (ascending, the
        first 0) to the next or the end: ``span`` of each run, in one pass."""
        starts = numpy.asarray(starts, dtype="int64")
        if len(starts) == 0:
            return numpy.zeros(0, dtype="int64")
        return numpy.add.reduceat(self.counts, starts) + self.inside[starts]

    def part(self, start: int, end: int) -> "WordpieceCounts":
        """The counts of the tokens ``start`` to ``end``."""
        return WordpieceCounts(self.counts[start:end], self.inside[start:end])


def token_wordpiece_counts(align: Ragged, length: int, n_tokens: int) -> WordpieceCounts:
    """:class:`WordpieceCounts` of ``n_tokens`` tokens from their alignment (0 for tokens
    without wordpieces)."""
    counts = numpy.zeros(n_tokens, dtype="int64")
    inside = numpy.zeros(n_tokens, dtype="int64")
    rows, seg_lengths, seg_tokens = _segments(align, length)
    if len(rows) == 0:
        return WordpieceCounts(counts, inside)
    row_tokens = numpy.repeat(seg_tokens, seg_lengths)
    # the first token that holds each row (rows are sorted by token, so of the writes to
    # a row in reverse order the first token's comes last)
    owner = numpy.full(int(rows.max()) + 1, -1, dtype="int64")
    owner[rows[::-1]] = row_tokens[::-1]
    owned = (owner[rows] == row_tokens).astype("int64")
    seg_starts = numpy.concatenate([[0], numpy.cumsum(seg_lengths)[:-1]])
    first = numpy.ones(len(seg_tokens), dtype=bool)
    first[1:] = seg_tokens[1:] != seg_tokens[:-1]
    tokens = seg_tokens[first]
    counts[tokens] = numpy.add.reduceat(owned, seg_starts)[first]
    inside[tokens] = owner[rows[seg_starts[first]]] < tokens
    return WordpieceCounts(counts, inside)


# the key under which a Hugging Face tokenizer records that it gave its too-long warning
TOO_LONG_WARNING = "sequence-length-is-longer-than-the-specified-maximum"


def mute_too_long_warning(tokenizer: Any) -> None:
    """Record ``tokenizer``'s warning that a sequence longer than the model reads will
    make it fail as given, so that it is not printed: for text that is counted or cut
    to fit, never passed to the model whole."""
    warnings = getattr(tokenizer, "deprecation_warnings", None)
    if isinstance(warnings, dict):
        warnings[TOO_LONG_WARNING] = True


class FittedSpans:
    """A spacy-transformers span getter whose windows fit the model: a window with more
    wordpieces than the model reads (e.g. one holding a 5,000-character token) is split
    into consecutive windows that fit, so that no token after an overlong one loses its
    wordpieces to truncation. A single token longer than the model's limit keeps a
    window of its own (and its first wordpieces). Windows that cannot be too long (no
    more UTF-8 bytes than the budget; a wordpiece covers at least one byte) are not
    tokenized; the others are, in one call with the model's own tokenizer, from their
    text as spacy-transformers will tokenize them. A window found too long is cut where
    its tokens, counted one by one, fill the budget (a tokenizer that splits a token
    differently in context may still overflow by a few wordpieces, which
    spacy-transformers then truncates).
    """

    def __init__(self, get_spans: Any, trf_model: Any) -> None:
        self.get_spans = get_spans
        self.trf_model = trf_model

    def budget(self) -> int:
        tokenizer = self.trf_model.tokenizer
        limit = int(min(tokenizer.model_max_length, 1 << 20))
        config = getattr(self.trf_model.transformer, "config", None)
        positions = getattr(config, "max_position_embeddings", None)
        if positions:
            limit = min(limit, int(positions))
        return max(1, limit - tokenizer.num_special_tokens_to_add())

    def __call__(self, docs: Any) -> Any:
        nested = self.get_spans(docs)
        if not self.trf_model.attrs.get("has_transformer"):
            return nested
        budget = self.budget()
        flat = [span for spans in nested for span in spans]
        texts = [span.text for span in flat]
        # the windows that might be too long, tokenized in one call as spacy-transformers
        # tokenizes them (each window's text)
        maybe = [i for i, text in enumerate(texts) if len(text.encode("utf8")) > budget]
        if not maybe:
            return nested
        encoded = self.trf_model.tokenizer(
            [texts[i] for i in maybe],
            add_special_tokens=False,
            return_attention_mask=False,
            return_token_type_ids=False,
            verbose=False,
        )["input_ids"]
        too_long = {i for i, ids in zip(maybe, encoded, strict=True) if len(ids) > budget}
        if not too_long:
            return nested
        # A too-long window is split below, but a token longer than the model's limit
        # keeps a window of its own: spacy-transformers cuts that one to the model's
        # length after tokenizing it (truncate_oversize_splits), so the tokenizer's
        # warning that the model will hit an indexing error does not apply.
        mute_too_long_warning(self.trf_model.tokenizer)
        fitted, i = [], 0
        for spans in nested:
            pieces = []
            for span in spans:
                pieces += self._split(span, budget) if i in too_long else [span]
                i += 1
            fitted.append(pieces)
        return fitted

    def _split(self, span: Any, budget: int) -> List[Any]:
        """``span`` cut into consecutive pieces of at most ``budget`` wordpieces, its
        tokens counted one by one (an overlong token keeps a piece of its own)."""
        counts = self.trf_model.tokenizer(
            [token.text for token in span], add_special_tokens=False, verbose=False
        )["input_ids"]
        pieces = []
        start, used = span.start, 0
        for i, ids in enumerate(counts):
            if used and used + len(ids) > budget:
                pieces.append(span.doc[start : span.start + i])
                start, used = span.start + i, 0
            used += len(ids)
        pieces.append(span.doc[start : span.end])
        return pieces


def doc_wordpiece_counts(doc: Any) -> WordpieceCounts:
    """:class:`WordpieceCounts` of a Doc annotated by spacy-transformers (0 for every
    token without wordpieces)."""
    trf_data = getattr(doc._, "trf_data", None)
    if trf_data is None or trf_data.wordpieces.input_ids.size == 0:
        zeros = numpy.zeros(len(doc), dtype="int64")
        return WordpieceCounts(zeros, zeros.copy())
    length = int(trf_data.wordpieces.input_ids.shape[1])
    return token_wordpiece_counts(trf_data.align, length, len(doc))


def sorted_runs(
    outer: numpy.ndarray, inner: numpy.ndarray, within: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """Rows sorted by ``(outer, inner, within)`` and cut into runs of one ``(outer,
    inner)`` pair: returns the sorting order, each run's first index in that order
    and each run's length."""
    order = numpy.lexsort((within, inner, outer))
    outer, inner = outer[order], inner[order]
    new = numpy.ones(len(order), dtype=bool)
    new[1:] = (outer[1:] != outer[:-1]) | (inner[1:] != inner[:-1])
    starts = numpy.flatnonzero(new)
    return order, starts, numpy.diff(numpy.append(starts, len(order)))
