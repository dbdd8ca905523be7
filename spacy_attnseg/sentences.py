"""The sentence decision: separator scores -> sentence starts fitted to the layout.

Per window, the attention maps of the chosen heads are summed, their columns summed over
the real query rows, and the column sums normalised by the window's maximum (the paper's
section 2). A token whose normalised score reaches the threshold (and that may be a
separator) ends a sentence; the next sentence starts after the separator's run of
closing punctuation (``next_starts``), and ``layout_starts`` fits starts to the text's
layout (blank lines, brackets, quotes).

``decision_targets`` states the same decision in a form that can be swept over
thresholds: the start each separator makes, and the starts the layout makes on its own.
``decide_starts`` (used by ``attn_segmenter``), calibration and every evaluation decide
through it.
"""

from typing import Any, List, Sequence, Tuple, Union

import numpy
from spacy.tokens import Doc

from .errors import Errors

# Sentence-final punctuation: tokens that continue a separator run instead of starting
# the next sentence.
SENTENCE_FINAL = frozenset([".", "!", "?", "...", "…", "‼", "‽", "⁇", "⁈", "⁉", "。", "！", "？"])
ANY = "any"
PUNCT = "punct"


def column_scores(sums: Any) -> Any:
    """The paper's column normalisation (sec. 2): column sums ``(..., L)`` divided by
    their maximum over the last axis; a row whose maximum is not positive scores 0
    everywhere. Any array module."""
    top = sums.max(axis=-1, keepdims=True)
    return sums / (top + (top <= 0)) * (top > 0)


def normalised_window_scores(colsums: Any) -> Any:
    """Sum the heads' column sums ``(n_windows, n_heads, L)`` and normalise every window
    (``column_scores``)."""
    return column_scores(colsums.sum(axis=1))


def validate_candidates(candidates: Union[str, Sequence[str]]) -> Union[str, List[str]]:
    if isinstance(candidates, str):
        if candidates not in (ANY, PUNCT):
            raise ValueError(Errors.E008.format(value=candidates))
        return candidates
    if not candidates or not all(isinstance(text, str) for text in candidates):
        raise ValueError(Errors.E008.format(value=candidates))
    return list(candidates)


def candidate_mask(doc: Doc, candidates: Union[str, Sequence[str]]) -> numpy.ndarray:
    """Which tokens may be separators: any non-space token, punctuation only (not
    opening brackets and quotes, which cannot end a sentence), or tokens whose text is
    in a given list."""
    if candidates == ANY:
        return numpy.array([not token.is_space for token in doc], dtype=bool)
    if candidates == PUNCT:
        return numpy.array([token.is_punct and not _opens(token) for token in doc], dtype=bool)
    allowed = set(candidates)
    return numpy.array([token.text in allowed for token in doc], dtype=bool)


def _opens(token: Any) -> bool:
    """An opening bracket or quote: ``(``, ``“``, or a quote that may open or close
    (``"``, ``'``) with whitespace (or the start of the doc) before it."""
    if token.is_left_punct and not token.is_right_punct:
        return True
    attached = token.i > 0 and not token.doc[token.i - 1].whitespace_
    return bool(token.is_quote and token.is_left_punct and not attached)


def _continues_separator(token: Any) -> bool:
    """Tokens after a separator that stay in the ending sentence: more sentence-final
    punctuation, closing quotes and brackets, whitespace. A quote that may open or close
    (``"``, ``'``) closes when it is attached to the previous token, and opens the next
    sentence when whitespace precedes it; an opening-only quote (``“``) always opens."""
    if token.text in SENTENCE_FINAL or token.is_space:
        return True
    if token.is_right_punct and not token.is_left_punct:
        return True
    opening_only = token.is_left_punct and not token.is_right_punct
    attached = token.i > 0 and not token.doc[token.i - 1].whitespace_
    return bool(token.is_quote and not opening_only and attached)


def is_blank_line(token: Any) -> bool:
    """A whitespace token that holds two or more line breaks: a paragraph break."""
    return bool(token.is_space and token.text.count("\n") >= 2)


def paragraph_starts(doc: Doc, sent_starts: Any) -> numpy.ndarray:
    """For each sentence (token index of its start), whether it opens a paragraph: the
    first does, and one whose preceding whitespace tokens hold a blank line."""
    out = numpy.zeros(len(sent_starts), dtype=bool)
    for k, start in enumerate(sent_starts):
        i = int(start) - 1
        blank = k == 0
        while not blank and i >= 0 and doc[i].is_space:
            blank = is_blank_line(doc[i])
            i -= 1
        out[k] = blank
    return out


def next_starts(doc: Doc) -> numpy.ndarray:
    """For every token, the token that starts the next sentence if it is a separator
    (``len(doc)`` if the separator ends the document)."""
    n = len(doc)
    out = numpy.full(n, n, dtype="int64")
    following = n
    for i in range(n - 1, -1, -1):
        out[i] = following
        if not _continues_separator(doc[i]):
            following = i
    return out


def sentence_starts(doc: Doc, separators: numpy.ndarray) -> numpy.ndarray:
    """Boolean sentence starts: the first token, and the token after each separator run."""
    starts = numpy.zeros(len(doc), dtype=bool)
    if len(doc) == 0:
        return starts
    starts[0] = True
    following = next_starts(doc)[separators]
    starts[following[following < len(doc)]] = True
    return starts


def layout_starts(doc: Doc, starts: numpy.ndarray, *, paragraph_breaks: bool) -> numpy.ndarray:
    """Sentence starts (one value per token, nonzero = start) fitted to the text's layout.

    After the first token, no sentence starts on a token that belongs to the end of the
    sentence before it (whitespace, sentence-final punctuation, a closing bracket, a
    closing quote attached to the previous token: what follows a separator in
    ``next_starts``): a start predicted on one moves to the next token that is none of
    these, so ``"Hello!?"`` stays one sentence and whitespace ends the sentence before
    it, as in spaCy's parser. A start predicted just after opening brackets or quotes
    moves back onto them: the sentence ``"Why?"`` starts at its quote. With
    ``paragraph_breaks``, the first token after a blank line (a whitespace token holding
    two or more line breaks) that follows some text always starts a sentence. Returns a
    new array of ``starts``' dtype.
    """
    out = numpy.array(starts, copy=True)
    carry = False
    seen_text = False
    for i, token in enumerate(doc):
        if i == 0:
            seen_text = not token.is_space
            continue
        if _continues_separator(token):
            blank_line = paragraph_breaks and is_blank_line(token)
            carry = carry or bool(out[i]) or (blank_line and seen_text)
            out[i] = 0
        elif carry:
            out[i] = 1
            carry = False
        seen_text = seen_text or not token.is_space
    for start in numpy.flatnonzero(out).tolist():
        first = start
        while first > 0 and _opens(doc[first - 1]):
            first -= 1
        if first != start:
            out[start] = 0
            if first > 0:  # (the first token starts the Doc anyway)
                out[first] = 1
    return out


def back_over_openings(doc: Doc, start: int) -> int:
    """The token a sentence starting at ``start`` really starts on: opening brackets and
    quotes right before it belong to it."""
    first = start
    while first > 0 and first < len(doc) and _opens(doc[first - 1]):
        first -= 1
    return first


def decision_targets(doc: Doc, *, paragraph_breaks: bool) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """What a separator decides, independent of the threshold.

    RETURNS: ``targets``, for every token the sentence start it makes when it is a
    separator (``len(doc)`` when that is past the end, 0 never counts), and ``fixed``,
    True where a sentence starts whatever the scores (the first token, and with
    ``paragraph_breaks`` the first token after a blank line).
    ``layout_starts(doc, sentence_starts(doc, separators))`` equals ``fixed`` plus
    ``targets[separators]``; a test checks it.
    """
    n = len(doc)
    following = next_starts(doc)
    targets = numpy.array(
        [back_over_openings(doc, int(t)) if t < n else n for t in following], dtype="int64"
    )
    fixed = layout_starts(doc, numpy.zeros(n, dtype=bool), paragraph_breaks=paragraph_breaks)
    if n:
        fixed[0] = True
    return targets, fixed.astype(bool)


def decide_starts(
    doc: Doc, scores: numpy.ndarray, threshold: float, *, paragraph_breaks: bool
) -> numpy.ndarray:
    """Sentence starts (bool per token) from separator scores: separators are the tokens
    whose score reaches ``threshold`` (see ``decision_targets``)."""
    targets, fixed = decision_targets(doc, paragraph_breaks=paragraph_breaks)
    return starts_from_targets(targets, fixed, scores, threshold)


def starts_from_targets(
    targets: numpy.ndarray, fixed: numpy.ndarray, scores: Any, threshold: float
) -> numpy.ndarray:
    """Sentence starts (bool per token) from ``decision_targets`` and separator scores."""
    starts = numpy.array(fixed, dtype=bool, copy=True)
    chosen = targets[numpy.asarray(scores) >= threshold]
    starts[chosen[chosen < len(starts)]] = True
    return starts


def sentence_scores(doc: Doc, token_scores: Sequence[float]) -> List[float]:
    """A score per sentence of ``doc.sents``: the highest separator score among the
    tokens that end it (its last token and the run of punctuation before it)."""
    values = numpy.asarray(token_scores, dtype="float32")
    scores = []
    for sent in doc.sents:
        end = sent.end
        start = end - 1
        while start > sent.start and _continues_separator(doc[start]):
            start -= 1
        scores.append(float(values[start:end].max()) if end > start else 0.0)
    return scores
