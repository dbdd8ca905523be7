"""The sentence decision: separator scores -> sentence starts fitted to the layout.

Per window, the attention maps of the chosen heads are summed, their columns summed over
the real query rows, and the column sums normalised by the window's maximum (the paper's
section 2). A token whose normalised score reaches the threshold (and that may be a
separator) ends a sentence; the next sentence starts after the separator's run of
closing punctuation (``next_starts``), and ``layout_starts`` fits starts to the text's
layout (blank lines, one sentence per line, brackets, quotes).

``decision_targets`` states the same decision in a form that can be swept over
thresholds: the start each separator makes, and the starts that placing them makes on
its own (``placed_starts``). ``decide_starts`` (used by ``attn_segmenter``), calibration
and every evaluation decide through it. The rules about lines and lists, some of which
depend on the decisions themselves (one sentence per line, ``lines_end_sentences``),
run once after the sweepable part (``line_rules``); they change nothing in the CoNLL-U
documents calibration reads (UD EWT dev and test: checked once, document by document).
What the characters say (where lines end, which blocks are one sentence) comes from
``markup``.
"""

import itertools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Set, Tuple, Union

import numpy
from spacy.attrs import IDX, IS_LEFT_PUNCT, IS_QUOTE, IS_RIGHT_PUNCT, IS_SPACE, LENGTH, ORTH, SPACY
from spacy.strings import get_string_id
from spacy.tokens import Doc

from .errors import Errors
from .markup import (
    ADORNMENT,
    BLANK_LINE,
    CUE_LINES,
    HEADING_MARK,
    IN_LINE_SPACE,
    INDENTED_LINE,
    LINE_BREAK,
    LINE_START,
    LINE_TEXT,
    MEDIAWIKI,
    NEXT_LINE,
    OPENING_STAMP,
    OPENING_TAGS,
    PARAGRAPH_SEPARATOR,
    UNDERLINED,
    URL,
    Lines,
    code_spans,
    fenced_code,
    heading_title,
    in_code,
    leading_turns,
    line_bounds,
    literal_blocks,
    number_shape,
    one_line_break,
    org_blocks,
    outside,
    overlined_title,
    page_lines,
    running_lines,
    says_nothing,
    speaker,
    text_blocks,
    transcript_speakers,
)
from .tokenizer import LONG_RUN, SENTENCE_FINAL, UNAMBIGUOUS_FINAL

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
    if not candidates or not all(isinstance(text, str) and text for text in candidates):
        raise ValueError(Errors.E008.format(value=candidates))
    return list(candidates)


def candidate_mask(doc: Doc, candidates: Union[str, Sequence[str]]) -> numpy.ndarray:
    """Which tokens may be separators: any non-space token, punctuation only (not
    opening brackets and quotes, which cannot end a sentence), or tokens whose text is
    in a given list. A list that names sentence-final punctuation (``.``, ``?``, ...)
    also takes the other scripts' terminals (``UNAMBIGUOUS_FINAL``), so that ``。`` or
    ``؟`` ends a sentence where ``.`` or ``?`` does."""
    if candidates == ANY:
        return numpy.array([not token.is_space for token in doc], dtype=bool)
    if candidates == PUNCT:
        punct = numpy.array([token.is_punct for token in doc], dtype=bool)
        return (punct | sentence_final(doc)) & ~token_classes(doc).opens
    allowed = set(candidates)
    if allowed & SENTENCE_FINAL:
        allowed |= UNAMBIGUOUS_FINAL
    return numpy.array([token.text in allowed for token in doc], dtype=bool)


@dataclass(frozen=True)
class TokenClasses:
    """The layout classes of a Doc's tokens, one boolean array each (computed once from
    the lexeme flags with ``Doc.to_array``, not token by token):

    * ``continues``: the token stays in a sentence that a separator before it ends (more
      sentence-final punctuation, whitespace, a closing bracket, a quote that may open
      or close (``"``, ``'``) attached to the previous token, a footnote marker such as
      ``[6]`` after final punctuation (``reference_markers``); an opening-only quote such
      as ``“`` never does);
    * ``opens``: an opening bracket or quote (``(``, ``“``, or a quote that may open or
      close with whitespace or the start of the Doc before it), or a Markdown image's
      ``!`` (``"![alt](src)"``, with whitespace, the start of the Doc or the ``[`` of a
      link around the image before it, ``"[![badge](src)](href)"``: it does not
      continue the sentence before, as final punctuation would);
    * ``blank``: a whitespace token that breaks a paragraph (``paragraph_break_tokens``: a
      blank line, or the line break before a line indented as a paragraph's first or
      below a paragraph's short last line);
    * ``space``: a whitespace token;
    * ``terminal``: an ``UNAMBIGUOUS_FINAL`` mark (``。``, ``؟``, ...), which always ends
      its sentence;
    * ``closes``: a Markdown emphasis marker that closes the word before it (``"a
      *word*: b"``; not after final punctuation, as in ``"*Stop.* Go"``), which
      ``continues``, or a footnote marker after a word on the same line (``"classes
      [17], [18] and"``, ``reference_markers``): a start the model puts on it is dropped
      rather than moved on (``placed_starts``). An emphasis marker that opens the word
      after it (whitespace or the start of the Doc before it) ``opens``;
    * ``numbering``: the full stop of an abbreviation that numbers what follows it
      (``numbered_references``: the ``"."`` of ``"No. 1"``), which ends no sentence;
    * ``numbered``: that number's first token (the ``"1"``), on which no sentence
      starts.
    """

    continues: numpy.ndarray
    opens: numpy.ndarray
    blank: numpy.ndarray
    space: numpy.ndarray
    terminal: numpy.ndarray
    closes: numpy.ndarray
    numbering: numpy.ndarray
    numbered: numpy.ndarray


_CLASS_ATTRS = [ORTH, IS_SPACE, IS_LEFT_PUNCT, IS_RIGHT_PUNCT, IS_QUOTE, SPACY]


def _string_ids(texts: Any) -> numpy.ndarray:
    return numpy.array(sorted(get_string_id(text) for text in texts), dtype="uint64")


_FINAL_IDS = _string_ids(SENTENCE_FINAL)
_TERMINAL_IDS = _string_ids(UNAMBIGUOUS_FINAL)
# Markdown's emphasis markers as spaCy's tokenizer splits them ("**bold**": "*", "*",
# "bold", "*", "*")
EMPHASIS = frozenset(["*", "**", "***", "_", "__", "___"])
_EMPHASIS_IDS = _string_ids(EMPHASIS)
_BANG_ID, _BRACKET_ID = get_string_id("!"), get_string_id("[")


def sentence_final(doc: Doc) -> numpy.ndarray:
    """Which tokens of ``doc`` are sentence-final punctuation (``SENTENCE_FINAL``)."""
    if len(doc) == 0:
        return numpy.zeros(0, dtype=bool)
    return numpy.isin(doc.to_array(ORTH), _FINAL_IDS)


# A reference marker after sentence-final punctuation belongs to the sentence it follows
# (``"... in 1805. [6] An ..."``, ``"[citation needed]"``), as in Wikipedia's footnotes and
# the UD English treebanks: a footnote number or letter, a list or range of them, or
# ``"citation needed"`` in square brackets. (Not an elision, ``"[...]"``: the treebanks
# disagree on which sentence it joins.)
REFERENCE_MARKER = re.compile(
    r"\[(?:\d{1,3}[a-z]?(?:\s*[,\u2013-]\s*\d{1,3}[a-z]?)*|[a-z]|citation needed"
    r"|note \d{1,3})\]"
)
# So does a reference to an issue or a pull request in parentheses after a changelog's
# or a commit message's sentence (``"- Handle mapping ... . (#918)"``, ``"(#918, #920)"``,
# ``"(PR #12)"``, ``"(GH-1234)"``, ``"(bpo-12345)"``), which the model read as a sentence.
# (A number alone, ``"(1)"``, is a list's marker: it opens.)
_ISSUE = r"(?:(?:pr|pull|issue|gh|bpo)[ -]?#?|#)\d{1,7}"
ISSUE_REFERENCE = re.compile(rf"(?i)\({_ISSUE}(?:\s*,\s*{_ISSUE})*\)")
MARKER_SPAN = 8  # tokens from a marker's "[" or "(" to its "]" or ")", at most
_OPEN_SQUARE, _CLOSE_SQUARE = get_string_id("["), get_string_id("]")
_OPEN_ROUND, _CLOSE_ROUND = get_string_id("("), get_string_id(")")


def reference_markers(
    doc: Doc, orths: numpy.ndarray, final: numpy.ndarray, continues: numpy.ndarray
) -> Tuple[List[Tuple[int, int]], List[Tuple[int, int]]]:
    """Token ranges ``[a, b)`` of the ``REFERENCE_MARKER``s and ``ISSUE_REFERENCE``s of
    ``doc``: those that follow sentence-final punctuation on the same line (with only
    whitespace, closing brackets or quotes, or other such markers between), and those
    that follow a word or other text on the same line (``"stops taking classes [17],
    [18] and"``). ``orths``, ``final`` and ``continues``: per token, as in
    ``token_classes``; a marker that starts a line (an entry of a reference list) opens
    its sentence instead, and is in neither list."""
    found: List[Tuple[int, int]] = []
    inline: List[Tuple[int, int]] = []
    continues = continues.copy()  # (a marker found continues, for the next one)
    for a in numpy.flatnonzero((orths == _OPEN_SQUARE) | (orths == _OPEN_ROUND)).tolist():
        square = orths[a] == _OPEN_SQUARE
        closer = _CLOSE_SQUARE if square else _CLOSE_ROUND
        ends = numpy.flatnonzero(orths[a + 1 : a + MARKER_SPAN] == closer)
        if a == 0 or not len(ends):
            continue
        b = a + 2 + int(ends[0])
        if not (REFERENCE_MARKER if square else ISSUE_REFERENCE).fullmatch(doc[a:b].text):
            continue
        k = a - 1
        while k > 0 and continues[k] and not final[k] and not LINE_BREAK.search(doc[k].text):
            k -= 1
        if final[k]:
            found.append((a, b))
            continues[a:b] = True
        elif not continues[k]:
            inline.append((a, b))
    return found, inline


def token_classes(doc: Doc) -> TokenClasses:
    """The :class:`TokenClasses` of ``doc``."""
    n = len(doc)
    if n == 0:
        empty = numpy.zeros(0, dtype=bool)
        return TokenClasses(empty, empty, empty, empty, empty, empty, empty, empty)
    values = doc.to_array(_CLASS_ATTRS).reshape((n, len(_CLASS_ATTRS)))
    final = numpy.isin(values[:, 0], _FINAL_IDS)
    space, left, right, quote = (values[:, k].astype(bool) for k in range(1, 5))
    attached = numpy.zeros(n, dtype=bool)
    # (a quote right after a whitespace token, such as a line break, opens)
    attached[1:] = (values[:-1, 5] == 0) & ~space[:-1]
    opening_only = left & ~right
    continues = final | space | (right & ~left) | (quote & ~opening_only & attached)
    opens = opening_only | (quote & left & ~attached)
    after_final, inline = reference_markers(doc, values[:, 0], final, continues)
    for a, b in after_final:
        continues[a:b] = True
        opens[a:b] = False
    # a Markdown image's "!" ("![alt](src)") after whitespace, at the Doc's start or
    # after the "[" of a link around it ("[![badge](src)](href)") opens, as the "[" after
    # it does
    image = numpy.zeros(n, dtype=bool)
    in_link = numpy.zeros(n, dtype=bool)
    in_link[1:] = values[:-1, 0] == _BRACKET_ID
    image[:-1] = (
        (values[:-1, 0] == _BANG_ID)
        & (values[1:, 0] == _BRACKET_ID)
        & (values[:-1, 5] == 0)
        & (~attached[:-1] | in_link[:-1])
    )
    continues &= ~image
    opens |= image
    closes = numpy.zeros(n, dtype=bool)
    for a, b in emphasis_runs(values[:, 0], values[:, 5] == 0):
        if attached[a]:
            continues[a:b], opens[a:b] = True, False
            closes[a:b] = not final[a - 1]
        elif b < n and values[b - 1, 5] == 0 and not space[b]:
            continues[a:b], opens[a:b] = False, True
    for a, b in inline:  # (a footnote marker after a word starts no sentence)
        closes[a:b], opens[a:b] = True, False
    blank = paragraph_break_tokens(doc, space)
    terminal = numpy.isin(values[:, 0], _TERMINAL_IDS)
    numbering = numpy.zeros(n, dtype=bool)
    numbered = numpy.zeros(n, dtype=bool)
    for stop, number in numbered_references(doc):
        numbering[stop] = numbered[number] = True
    return TokenClasses(continues, opens, blank, space, terminal, closes, numbering, numbered)


def emphasis_runs(orths: numpy.ndarray, joined: numpy.ndarray) -> List[Tuple[int, int]]:
    """``(start, end)`` token ranges of the runs of ``EMPHASIS`` tokens (``orths``: each
    token's ORTH id) with no whitespace between them (``joined``: per token, no
    whitespace after it)."""
    runs: List[Tuple[int, int]] = []
    for i in numpy.flatnonzero(numpy.isin(orths, _EMPHASIS_IDS)).tolist():
        if runs and runs[-1][1] == i and joined[i - 1]:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


# A text whose non-blank lines are this long or longer (median, in characters) is not
# hard-wrapped (wrapped text keeps its lines under about 80 characters): each of its
# line breaks ends a paragraph, as in text with one paragraph per line.
UNWRAPPED_LINE_CHARS = 100


def paragraph_break_tokens(doc: Doc, space: Optional[numpy.ndarray] = None) -> numpy.ndarray:
    """Which tokens of ``doc`` break paragraphs (bool per token): the whitespace tokens
    that hold a blank line (``is_blank_line``; not in text printed double-spaced,
    ``double_spaced``), the line break before each line that opens a paragraph by its
    indentation (``indented_paragraphs``) or, in hard-wrapped text marked neither way,
    below a short line that ends a sentence (``short_line_paragraphs``), and the line
    break below a manual page's section title (``manual_titles``). ``space``: per token,
    whether it is whitespace, where the caller has it."""
    if space is None:
        space = doc.to_array(IS_SPACE).astype(bool) if len(doc) else numpy.zeros(0, dtype=bool)
    out = numpy.zeros(len(doc), dtype=bool)
    text = doc.text
    if not double_spaced(text):
        for i in numpy.flatnonzero(space).tolist():
            out[i] = is_blank_line(doc[i])
    indented = indented_paragraphs(text) or short_line_paragraphs(text)
    indented += [body for _, body in manual_titles(text)]
    if indented:
        firsts = numpy.searchsorted(doc.to_array(IDX), indented)
        before = firsts[firsts > 0] - 1
        out[before[space[before]]] = True
    return out


# A text printed double-spaced (a manuscript's, or a PDF's lines taken with a blank line
# below each): at least DOUBLE_SPACED_LINES lines, none directly below another, shorter
# than UNWRAPPED_LINE_CHARS (median), and in more than DOUBLE_SPACED_SHARE of the blank
# lines a sentence goes on (``carries_on``).
# Chosen on the held-out EWT dev part double-spaced at 72 (boundary F1 as written,
# whole / runs of three / of four sentences): 6 lines 77.7 / 65.2 / 70.9, 4 79.3 / 70.3
# / 75.3, 3 80.3 / 74.1 / 78.6, 2 80.6 / 76.1 / 79.6; 62.0 / 58.6 / 59.6 without the rule.
DOUBLE_SPACED_LINES = 2
DOUBLE_SPACED_SHARE = 1 / 3
# In text of any case, a page's shape alone tells it (``wrapped_page``): at least
# WRAPPED_PAGE_LINES lines, WRAPPED_PAGE_WIDTH characters wide or more, more than
# WRAPPED_PAGE_SHARE of which cut a sentence, hard-wrapped once read one below another.
# Chosen on the same data (the rules reading the page single-spaced, ``single_spaced``;
# F1 as written, whole / runs of 2 / 3 / 4 sentences, then without final punctuation):
# 3 lines and a half 90.2 / 76.6 / 87.8 / 88.8 and 68.8 / 53.0 / 65.2 / 64.8; a third
# 90.2 / 77.3 / 88.2 / 89.8 and 68.8 / 53.0 / 65.4 / 65.0, but then a thread of a
# question and its answers, a line each between blank lines, among the EWT documents
# of the topic sets reads as a page; 2 lines and a third 90.9 / 90.3 / 91.7 / 91.1 and
# 69.7 / 60.9 / 68.9 / 66.4, but then runs of 2-4 paragraphs of EWT dev, GUM dev and
# GENTLE, one a line between blank lines, read as a page 11, 11 and 29 times out of
# 469, 606 and 708 (5, 1 and 7 by capitals alone). By capitals alone, 84.0 / 54.7 /
# 76.1 / 80.2 and 50.4 / 39.1 / 47.6 / 47.2 (as written 80.6 / 54.7 / 76.1 / 79.6
# before the rules read such a page single-spaced).
WRAPPED_PAGE_LINES = 3
WRAPPED_PAGE_WIDTH = 40
WRAPPED_PAGE_SHARE = 1 / 2


def double_spaced(text: str) -> bool:
    """Whether ``text`` is printed double-spaced (``DOUBLE_SPACED_LINES``,
    ``DOUBLE_SPACED_SHARE``): a blank line below every line of a width a page's lines
    have (not a paragraph of a line, ``UNWRAPPED_LINE_CHARS``), across which its sentences
    go on from one line to the next, in a text that opens its sentences with capitals
    (``writes_capitals``), or in text of any case, whose lines have a page's shape
    (``wrapped_page``). Its blank lines are line breaks, not paragraph breaks
    (``paragraph_break_tokens``), and the rules about lines read it as single-spaced
    (``single_spaced``). Linear in the text."""
    lines = list(LINE_TEXT.finditer(text))
    if len(lines) < DOUBLE_SPACED_LINES:
        return False
    if numpy.median([len(line.group()) for line in lines]) >= UNWRAPPED_LINE_CHARS:
        return False  # (paragraphs of a line each)
    pairs = list(itertools.pairwise(lines))
    if any(_below(text, above, line) for above, line in pairs):
        return False
    carried = sum(
        carries_on(
            QUOTE_PREFIX.sub("", above.group(2)).strip(), QUOTE_PREFIX.sub("", line.group(2))
        )
        for above, line in pairs
    )
    if carried > DOUBLE_SPACED_SHARE * len(pairs) and writes_capitals(text):
        return True
    return wrapped_page(lines)


def wrapped_page(lines: Sequence["re.Match[str]"]) -> bool:
    """Whether ``lines`` (``LINE_TEXT`` matches, none directly below another) are a
    hard-wrapped page's by their shape alone, whatever the case of their words (where
    a line opening in lower case says nothing): at least ``WRAPPED_PAGE_LINES`` of
    them, ``WRAPPED_PAGE_WIDTH`` characters wide or more (``text_width``), more than
    ``WRAPPED_PAGE_SHARE`` of those above another cut a sentence (``cuts_sentence``),
    and read one below another they are hard-wrapped (``hard_wrapped``). A list
    of short items between blank lines is not: its lines could take the next line's
    first word."""
    if len(lines) < WRAPPED_PAGE_LINES:
        return False
    words = [QUOTE_PREFIX.sub("", line.group(2)).strip() for line in lines]
    if text_width([len(line) for line in words]) < WRAPPED_PAGE_WIDTH:
        return False
    cut = sum(map(cuts_sentence, words[:-1]))
    if cut <= WRAPPED_PAGE_SHARE * (len(words) - 1):
        return False
    return hard_wrapped("\n".join(line.group(2) for line in lines))


def single_spaced(doc: Doc) -> Doc:
    """``doc`` itself, or where its text is printed double-spaced (``double_spaced``) a
    Doc of the same tokens with one line break less in each whitespace token that holds
    two or more (a blank line below a line becomes a line break; two blank lines, one),
    so that the rules about lines read the page as the hard-wrapped text it is: which
    lines a sentence goes on across, which end a paragraph short of the width. Token
    ``i`` of either is token ``i`` of the other. Linear in the text."""
    text = doc.text
    if not LINE_BREAK.search(text) or not double_spaced(text):
        return doc
    words = []
    for token in doc:
        word = token.text
        breaks = list(LINE_BREAK.finditer(word)) if token.is_space else []
        if len(breaks) >= 2:
            word = word[: breaks[0].start()] + word[breaks[0].end() :]
        words.append(word)
    return Doc(doc.vocab, words=words, spaces=[bool(token.whitespace_) for token in doc])


def _single_spaced_classes(doc: Doc, classes: Optional[TokenClasses]) -> Tuple[Doc, TokenClasses]:
    """``single_spaced(doc)`` and its ``token_classes``: ``classes`` where they are given
    and the Doc is its own single-spaced page."""
    view = single_spaced(doc)
    if view is doc and classes is not None:
        return doc, classes
    return view, token_classes(view)


def is_blank_line(token: Any) -> bool:
    """A whitespace token that holds two or more line breaks, or Unicode's paragraph
    separator: a paragraph break."""
    text = token.text
    return bool(
        token.is_space and (len(LINE_BREAK.findall(text)) >= 2 or PARAGRAPH_SEPARATOR in text)
    )


# A text with at least MIN_LINE_BREAKS single line breaks, of which at least
# LINE_SENTENCE_SHARE already end a sentence, has one sentence per line (a list, a
# transcript, subtitles, a sentence-split corpus): every line break in it ends a
# sentence. Chosen on the held-out EWT dev part with the default pipeline (spacy project
# run evaluate-layouts): one sentence per line, boundary F1 84.4 -> 93.5 as written and
# 67.1 -> 81.8 without final punctuation; hard-wrapped at 72 characters, where under
# half of the line breaks end a sentence in 95% of the documents, 83.9 -> 83.5 and
# 60.3 -> 60.4; joined by spaces, unchanged (no line breaks).
LINE_SENTENCE_SHARE = 0.5
# A short text, of MIN_LINE_BREAKS line breaks (a note, a message, a list of three
# items), takes the rule where it is not hard-wrapped; one that looks hard-wrapped
# needs MIN_WRAPPED_LINE_BREAKS (with two, one line break that happens to end a sentence
# would be half of them). On the same data cut into runs of 2-4 sentences (`spacy
# project run evaluate-layouts`): three sentences one per line 86.3 -> 92.9 as written
# and 63.3 -> 79.6 without final punctuation, four 97.2 -> 97.4 as written, whole
# documents one per line 97.4 -> 97.8 and 90.2 -> 90.8, every other row (hard-wrapped
# at 72, joined by spaces) unchanged; two line breaks in any text instead: three
# sentences one per line 93.5 and 80.8, but three and four sentences wrapped at 72
# 91.6 -> 91.1 and 90.7 -> 90.1 (without punctuation 66.9 -> 66.1, 65.2 -> 64.2); one
# line break: two sentences one per line 85.7 -> 86.8, wrapped 90.0 -> 89.0.
MIN_LINE_BREAKS = 2
MIN_WRAPPED_LINE_BREAKS = 3
# In text that is not hard-wrapped (``hard_wrapped``) every line break is the writer's,
# so a smaller share suffices. Chosen on the same data with the shipped weights, one
# sentence per line without final punctuation: 81.8 at 0.3, 83.6 at 0.2, 84.1 at 0.1 or
# 0 (as written 96.5 at each); 0.2 keeps most of the gain while a text whose line
# breaks mostly fall inside sentences (verse, an address block) still needs one in five
# to end one. Hard-wrapped text keeps the share of one half.
UNWRAPPED_LINE_SENTENCE_SHARE = 0.2
# Where at least this share of the line breaks start a sentence, the lines hold their
# sentences (``short_lines_hold_one``) even in text that looks hard-wrapped: a list of
# items of about one length does (nothing on a line could take the next line's first
# word). With the lines holding their sentences (held-out EWT dev part, `spacy project
# run evaluate-layouts`): one sentence per line 96.5 -> 97.4 as written and 83.6 -> 90.2
# without final punctuation; hard-wrapped at 72 and joined by spaces unchanged (with the
# rule in all hard-wrapped text too, wrapped without punctuation 69.2 -> 69.1).
LINE_HOLD_SHARE = 0.8
# Text is hard-wrapped when under this share of the line breaks inside its paragraphs
# could have taken the next line's first word without the line growing past the text's
# width (the 90th percentile of its line lengths). On the held-out EWT dev part: every
# document hard-wrapped at 40, 60, 72, 80 or 100 characters is (343 of 343), 2 of 82
# written one sentence per line are.
WRAPPED_FIT_SHARE = 0.5
# Text whose lines are this short (the 90th percentile, in characters) is not
# hard-wrapped: nobody wraps text that narrow, and a short list or a note, where no line
# could take the next one's first word, would otherwise look wrapped. Chosen on the
# held-out EWT dev part (spacy project run evaluate-layouts), with the credit for a start
# inside a short line (``lines_end_sentences``): runs of three sentences one per line
# without final punctuation 82.7 with no such width, 82.9 at 20, 83.3 at 30 (as written
# 93.4, 93.6, 93.8); every hard-wrapped row unchanged. 20 keeps text wrapped as narrow as
# a newspaper column's (OCR) hard-wrapped.
MIN_WRAP_WIDTH = 20
# Lines of records (a log, a list of files): at least this share of the lines after the
# first, and at least MIN_RECORD_LINES of them, open with a word without a letter of one
# shape (digits count as one: "2024-01-01" and "1999-12-31" share one). Such text is not
# hard-wrapped prose, whose next word would not have fitted on the line. On UD EWT dev
# and test (whole documents and runs of 2, 3 and 4 sentences, written one per line and
# wrapped at 40, 72 and 100) 3 texts of 22,812 change: a list of files, now not wrapped,
# and one wrapped text twice (its lines open with years), whose sentences stay the same;
# `spacy project run evaluate-layouts` is unchanged to the last digit.
RECORD_LINE_SHARE = 0.8
MIN_RECORD_LINES = 2
LETTER = re.compile(r"[^\W\d_]")


# the quotation marks that open a quoted line of e-mail or Markdown ("> ", ">> ", "> > ")
QUOTE_PREFIX = re.compile(r"^(?:>[ \t]?)+")


def text_width(lengths: Sequence[int]) -> float:
    """A text's width, from its lines' ``lengths``: their 90th percentile, so that a few
    long lines (a URL, a table's row) do not set it (0 without lines)."""
    return float(numpy.percentile(lengths, 90)) if len(lengths) else 0.0


def takes_next_word(line: str, below: str, width: float) -> bool:
    """Whether ``line`` could have taken the first word of the line ``below`` it without
    growing past ``width``: where it could, its line break is the writer's (a
    paragraph's last line, a list's item), not a wrap."""
    return len(line) + 1 + len(below.split()[0]) <= width


def hard_wrapped(text: str, pages: Optional[Tuple[Lines, Lines]] = None) -> bool:
    """Whether ``text`` has its lines cut at a width (``WRAPPED_FIT_SHARE``), as
    ``textwrap.fill``, e-mail and many plain-text files do; never where that width is
    under ``MIN_WRAP_WIDTH`` characters, nor in lines of records (``RECORD_LINE_SHARE``:
    a log whose lines open with a time stamp). The lines of its code blocks and Markdown
    tables (the ``text_blocks`` of more than one line) play no part: their line breaks
    are the writer's whether or not the prose around them is wrapped; nor do the lines
    that may be a page's footers or headers (``page_lines``, ``running_lines``), short
    lines whatever the width of the text around them. (A heading is one line: a wrapped
    line that opens with ``"# "`` stays.) Lines are read without their quotation prefix
    (``QUOTE_PREFIX``: ``"> "``, ``">> "``): quoted text is wrapped or not as its own
    lines are. ``pages``: those footers and headers, where the caller has them."""
    if pages is None:
        pages = _together(page_lines(text), running_lines(text))
    furniture = set(pages[0] + pages[1])
    lined = [
        (a, b)
        for a, b in text_blocks(text, pages)
        if (a, b) in furniture or LINE_BREAK.search(text, a, b)
    ]
    cuts = [0, *(offset for block in lined for offset in block), len(text)]
    prose = "\n\n".join(text[a:b] for a, b in zip(cuts[::2], cuts[1::2], strict=True))
    paragraphs = [
        [QUOTE_PREFIX.sub("", line.strip()).strip() for line in LINE_BREAK.split(p)]
        for p in BLANK_LINE.split(prose)
    ]
    pairs = [(a, b) for lines in paragraphs for a, b in itertools.pairwise(lines) if a and b]
    shapes = Counter(number_shape(b.split()[0]) for _, b in pairs)
    records = max((n for shape, n in shapes.items() if not LETTER.search(shape)), default=0)
    if not pairs or records >= max(MIN_RECORD_LINES, RECORD_LINE_SHARE * len(pairs)):
        return False
    width = text_width([len(line) for lines in paragraphs for line in lines if line])
    if width < MIN_WRAP_WIDTH:
        return False
    fits = sum(takes_next_word(a, b, width) for a, b in pairs)
    return fits < WRAPPED_FIT_SHARE * len(pairs)


def line_break_starts(doc: Doc, classes: Optional[TokenClasses] = None) -> numpy.ndarray:
    """The first token after each single line break (a whitespace token with a line
    break that is not a blank line) that has text before and after it, unless that token
    continues the sentence before (closing punctuation). Sorted token indices."""
    classes = classes or token_classes(doc)
    text_tokens = numpy.flatnonzero(~classes.space)
    if len(text_tokens) < 2:
        return numpy.zeros(0, dtype="int64")
    breaks = [
        i
        for i in numpy.flatnonzero(classes.space & ~classes.blank).tolist()
        if text_tokens[0] < i < text_tokens[-1] and LINE_BREAK.search(doc[i].text)
    ]
    after = text_tokens[numpy.searchsorted(text_tokens, breaks)]
    return numpy.unique(after[~classes.continues[after]]).astype("int64")


def item_continuations(doc: Doc) -> numpy.ndarray:
    """The first tokens of the lines that continue a list item (``continued_item_lines``:
    each line indented under a line that opens an item or continues one, as Markdown and
    reStructuredText write an item's wrapped lines and further paragraphs). Sorted token
    indices."""
    text = doc.text  # (made once: Doc.text joins every token)
    if not INDENTED_LINE.search(text):
        return numpy.zeros(0, dtype="int64")
    lines = list(LINE_TEXT.finditer(text))
    continued = continued_item_lines(lines)
    offsets = [line.start(2) for line, on in zip(lines, continued, strict=True) if on]
    idx = doc.to_array(IDX)
    found = numpy.searchsorted(idx, offsets).astype("int64")
    # (a line whose text starts inside a token is no line of tokens)
    return found[(found < len(idx)) & (idx[numpy.minimum(found, len(idx) - 1)] == offsets)]


def continued_item_lines(lines: Sequence["re.Match[str]"]) -> List[bool]:
    """Per line of a text (its ``LINE_TEXT`` matches, in order), whether it continues a
    list item: it is indented and the line above it opens an item (``opens_item_line``)
    or continues one. Blank lines between change nothing."""
    out = []
    in_item = False
    for line in lines:
        opens = opens_item_line(line.group(2))
        out.append(not opens and in_item and bool(line.group(1)))
        in_item = opens or out[-1]
    return out


# A text that marks its paragraphs by indenting their first lines (a typescript, a book,
# text taken from a PDF) instead of leaving blank lines between them: at least
# MIN_INDENTED_PARAGRAPHS indented lines that open with a capital or a digit (perhaps
# after opening quotes or brackets), each directly above a line at the margin (the
# paragraph's body) and either the text's first line or directly below a line at the
# margin that ends a sentence (``PARAGRAPH_END``) short of the text's width (it could
# have taken the indented line's first word: not a wrapped line, as the lines above a
# hanging indent's are). Then every line indented as most of those are, that opens so
# and is right below a line that ends a sentence, opens a paragraph
# (``indented_paragraphs``): a one-line paragraph too.
MIN_INDENTED_PARAGRAPHS = 2
# how a sentence ends: final punctuation, perhaps closing quotes and brackets; and so
# the last line of a paragraph
SENTENCE_END = r"[.!?…]['\"”’)\]]*"
PARAGRAPH_END = re.compile(SENTENCE_END + "$")
# opening quotes and brackets before a paragraph's first word
PARAGRAPH_OPENERS = "\"'“‘«([{"


def first_character(text: str) -> str:
    """The character ``text`` opens with after opening quotes and brackets
    (``PARAGRAPH_OPENERS``); "" where it has none."""
    return text.lstrip(PARAGRAPH_OPENERS)[:1]


def first_word_opens(text: str) -> bool:
    """Whether ``text`` opens as a paragraph's first line may: with a capital or a digit,
    perhaps after opening quotes or brackets (``first_character``)."""
    first = first_character(text)
    return first.isupper() or first.isdigit()


# A manual page's section title as ``man`` writes it ("NAME", "SEE ALSO"): one to four
# words of capitals and digits alone on a line at the margin, directly above an indented
# line of text (the section's body). A text with MIN_MANUAL_TITLES of them is read as
# such a page (``manual_titles``).
MANUAL_TITLE = re.compile(
    rf"{LINE_START}[A-Z][A-Z0-9]+(?: [A-Z][A-Z0-9]*){{0,3}}{IN_LINE_SPACE}*{NEXT_LINE}"
    rf"{IN_LINE_SPACE}+(?=\S)",
    re.MULTILINE,
)
MIN_MANUAL_TITLES = 2


def manual_titles(text: str) -> Lines:
    """``(title, body)``: the character offsets of each of a manual page's section titles
    (``MANUAL_TITLE``, outside fenced code) and of the first word below it, where
    ``text`` has ``MIN_MANUAL_TITLES`` or more. The line break between them breaks a
    paragraph (``paragraph_break_tokens``), and the title is a marked heading
    (``heading_sentences``). Linear in the text."""
    found = [(m.start(), m.end()) for m in MANUAL_TITLE.finditer(text)]
    if len(found) < MIN_MANUAL_TITLES:
        return []
    code = fenced_code(text)
    starts = [a for a, _ in code]
    found = [(a, b) for a, b in found if outside(code, starts, a)]
    return found if len(found) >= MIN_MANUAL_TITLES else []


def indented_paragraphs(text: str) -> List[int]:
    """Character offsets of the lines of ``text`` that open a paragraph by their
    indentation alone (``MIN_INDENTED_PARAGRAPHS``), outside fenced code and lists: a
    line that opens a list item (``LIST_MARKER``, ``LINE_BULLETS``) or is indented under
    one (``continued_item_lines``) opens none. Each offset is that of the line's first
    character after its indentation. Linear in the text."""
    if not INDENTED_LINE.search(text):
        return []
    lines = list(LINE_TEXT.finditer(text))
    width = text_width([len(line.group()) for line in lines])
    code = fenced_code(text)
    opening: List[Tuple[int, str]] = []  # (line number, indentation)
    body: Counter = Counter()  # the indentation of the lines a paragraph's body follows
    continued = continued_item_lines(lines)
    for k, line in enumerate(lines):
        indent, words = line.group(1), line.group(2)
        if continued[k] or not indent or not first_word_opens(words) or opens_item_line(words):
            continue
        above = lines[k - 1] if k else None
        if above is not None:
            if not (_below(text, above, line) and PARAGRAPH_END.search(above.group(2))):
                continue
            opening.append((k, indent))
        after = lines[k + 1] if k + 1 < len(lines) else None
        if (
            (above is None or (not above.group(1) and takes_next_word(above.group(), words, width)))
            and after is not None
            and not after.group(1)
            and _below(text, line, after)
        ):
            body[indent] += 1
    if not body or max(body.values()) < MIN_INDENTED_PARAGRAPHS:
        return []
    indent = body.most_common(1)[0][0]
    starts = [a for a, _ in code]
    return [
        lines[k].start(2)
        for k, found in opening
        if found == indent and outside(code, starts, lines[k].start(2))
    ]


# Hard-wrapped text that marks its paragraphs neither by blank lines nor by indentation
# (a PDF's text, e-mail): a line that ends a sentence within SHORT_LINE_SHARE of the
# text's width, above a line that opens with a capital or a digit, ends its paragraph.
# Chosen on the tuning half's WikiText-2 articles hard-wrapped at 72 without blank lines
# (topic segments, Pk): 0.6 / 0.75 / 0.9 give 0.290 / 0.279 / 0.283, 0.344 without the
# rule; the report half's 0.342 stays (0.343).
SHORT_LINE_SHARE = 0.75


def short_line_paragraphs(text: str) -> List[int]:
    """Character offsets of the lines of ``text`` that open a paragraph below a short
    line that ends a sentence (``SHORT_LINE_SHARE``), in hard-wrapped text
    (``hard_wrapped``) without a blank line or an indented line: a wrapped line is
    nearly full, so a short one ends its paragraph. Lines that open a list item are
    left to the list's rules. Linear in the text."""
    if not LINE_BREAK.search(text) or BLANK_LINE.search(text) or INDENTED_LINE.search(text):
        return []
    if not hard_wrapped(text):
        return []
    lines = list(LINE_TEXT.finditer(text))
    width = text_width([len(line.group()) for line in lines])
    out = []
    for above, line in itertools.pairwise(lines):
        words = line.group(2)
        if (
            first_word_opens(words)
            and len(above.group()) <= SHORT_LINE_SHARE * width
            and PARAGRAPH_END.search(above.group(2))
            and not opens_item_line(words)
            and _below(text, above, line)
        ):
            out.append(line.start(2))
    return out


def _below(text: str, above: "re.Match[str]", line: "re.Match[str]") -> bool:
    """Whether ``line`` (a ``LINE_TEXT`` match) is directly below ``above``: one line
    break between them, no blank line."""
    return one_line_break(text, above.end(2), line.start(2))


def bulleted(words: str) -> bool:
    """Whether a line's text (without its indentation) opens with a bullet of
    ``LINE_BULLETS``, then whitespace or the line's end: a list item, which heads
    nothing (a numbered line, "1. Introduction", may be a heading)."""
    return words[:1] in LINE_BULLETS and (len(words) == 1 or words[1].isspace())


def opens_item_line(words: str) -> bool:
    """Whether a line's text (without its indentation) opens a list item: ``bulleted``,
    or a ``LIST_MARKER`` then whitespace or the line's end (as ``opens_item`` reads it
    on tokens)."""
    if bulleted(words):
        return True
    marker = LIST_MARKER.match(words)
    return marker is not None and (marker.end() == len(words) or words[marker.end()].isspace())


def lines_end_sentences(
    doc: Doc,
    starts: numpy.ndarray,
    classes: Optional[TokenClasses] = None,
    *,
    wrapped: Optional[bool] = None,
) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) with a start after every single
    line break when the text has one sentence per line: in text that is not
    ``hard_wrapped``, at least ``MIN_LINE_BREAKS`` line breaks, of which at least
    ``UNWRAPPED_LINE_SENTENCE_SHARE`` already start a sentence (or open a line that
    holds an ``unmarked_line_starts`` start: in such text the author ends sentences at
    line breaks, so a start the model put inside a short line without punctuation
    before it belongs at the line's start); in text that is, at least
    ``MIN_WRAPPED_LINE_BREAKS``, of which ``LINE_SENTENCE_SHARE``. The lines then hold
    their sentences (``short_lines_hold_one``) in text that is not hard-wrapped, or where
    ``LINE_HOLD_SHARE`` of the line breaks already start one. The lines indented under a
    list item (``item_continuations``) are the item's, not lines of their own: they
    neither count nor get a start. A line that continues the clause above it gets one
    too, which ``continued_lines_hold`` takes back after this rule (``line_rules``).
    ``wrapped``: ``hard_wrapped(doc.text)``, where the caller has it. Returns a new
    array of ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    classes = classes or token_classes(doc)
    # (an item's wrapped lines are no lines of their own)
    after = numpy.setdiff1d(line_break_starts(doc, classes), item_continuations(doc))
    if len(after) < MIN_LINE_BREAKS:
        return out
    started = out[after] != 0
    share = started.mean()
    if wrapped is None:
        wrapped = hard_wrapped(doc.text)
    if not wrapped and share < UNWRAPPED_LINE_SENTENCE_SHARE:
        lines = numpy.cumsum(line_firsts(doc, classes.space)) - 1
        held = lines[unmarked_line_starts(doc, out, classes)]
        share = (started | numpy.isin(lines[after], held)).mean()
    if share < UNWRAPPED_LINE_SENTENCE_SHARE:
        return out
    if not wrapped or (share >= LINE_SENTENCE_SHARE and len(after) >= MIN_WRAPPED_LINE_BREAKS):
        out[after] = 1  # (``continued_lines_hold`` takes those of continued lines)
        if share >= LINE_HOLD_SHARE or not wrapped:
            out = short_lines_hold_one(doc, out, classes)
    return out


# In a text where at least this share of the words after a statement's end
# (``CAPITALISED``) open with a capital, and at least MIN_CAPITALISED do, a line that
# opens in lower case below a line of MIN_WRAP_WIDTH characters or more that does not
# end a paragraph or lead into what follows continues the sentence above
# (``continued_lines``).
CAPITALISED_SHARE = 0.75
MIN_CAPITALISED = 2
# a statement's end (sentence-final punctuation, closing marks, white space) and the
# first letter after it: the case a writer gives a sentence's first word
CAPITALISED = re.compile(r"[.!?…]['\"”’)\]]*\s+[(\[{\"'“‘*_]*([^\W\d_])")
# what may come before a line's first word: opening brackets and quotes, Markdown's
# emphasis marks (``"(or from"``, ``"[instructions](...)"``) and code marks
# (``"`json` and"``)
LINE_OPENERS = "([{\"'“‘*_`"
# a Markdown link reference definition (``"[docs]: https://..."``): a line of its own
LINK_DEFINITION = re.compile(r"\[[^\]\n]+\]:(?:\s|$)")


def writes_capitals(text: str) -> bool:
    """Whether ``text`` opens its sentences with capitals: at least
    ``CAPITALISED_SHARE`` of the words after a statement's end (``CAPITALISED``), and
    ``MIN_CAPITALISED`` or more, do."""
    firsts = [m.group(1) for m in CAPITALISED.finditer(text)]
    upper = sum(c.isupper() for c in firsts)
    return upper >= max(MIN_CAPITALISED, CAPITALISED_SHARE * len(firsts))


def continued_lines(doc: Doc, after: numpy.ndarray) -> numpy.ndarray:
    """For each token of ``after`` (the first token of a line, as ``line_break_starts``
    gives them), whether its line continues the sentence of the line above it, so that
    the line break is no sentence end: in a text that opens its sentences with capitals
    (``writes_capitals``), a line that opens in lower case (``"or the Windows SDK on
    Windows."``, ``"`json` and `pickle`."``) below a line that ends neither a paragraph
    (``PARAGRAPH_END``: sentence-final punctuation) nor with a colon and is too long to be an
    item of a list (``MIN_WRAP_WIDTH`` characters or more: ``"you need to install
    Visual Studio"``), as Markdown wrapped by hand has them; not a list item
    (``opens_item_line``: ``"(b) the Seller"``) or a link reference definition. In a
    text that writes no capitals or no punctuation (a transcript, a list of queries),
    nothing tells the two apart and no line is."""
    out = numpy.zeros(len(after), dtype=bool)
    text = doc.text
    if not len(after) or not writes_capitals(text):
        return out
    begins, ends = line_bounds(text)
    for n, i in enumerate(after.tolist()):
        k = int(numpy.searchsorted(begins, doc[i].idx, side="right")) - 1
        # (the line above that holds text: a double-spaced page's blank lines are none)
        j = k - 1
        while j > 0 and not text[begins[j] : ends[j]].strip():
            j -= 1
        above = QUOTE_PREFIX.sub("", text[begins[j] : ends[j]].strip()) if k else ""
        out[n] = carries_on(above, QUOTE_PREFIX.sub("", text[doc[i].idx : ends[k]]))
    return out


def cuts_sentence(line: str) -> bool:
    """Whether the line ``line`` (stripped, without its quotation prefix) ends inside a
    sentence as a wrapped line does: it ends neither a paragraph (``PARAGRAPH_END``) nor
    with a colon, and is too long to be an item of a list (``MIN_WRAP_WIDTH`` characters
    or more)."""
    return len(line) >= MIN_WRAP_WIDTH and not PARAGRAPH_END.search(line) and not line.endswith(":")


def carries_on(above: str, line: str) -> bool:
    """Whether the line ``line`` (its text from its first word, without a quotation
    prefix) goes on with the sentence of the line ``above`` it (stripped, without its
    prefix), in a text that opens its sentences with capitals: it opens in lower case,
    and is neither a list item nor a link reference definition, below a line that cuts a
    sentence (``cuts_sentence``)."""
    return (
        cuts_sentence(above)
        and not LINK_DEFINITION.match(line)
        and not opens_item_line(line)
        and line.lstrip(LINE_OPENERS)[:1].islower()
    )


def continued_lines_hold(doc: Doc, starts: numpy.ndarray, classes: TokenClasses) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) without those on a line that
    continues the sentence of the line above (``continued_lines``). Returns a new array
    of ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    after = line_break_starts(doc, classes)
    if len(after):
        out[after[continued_lines(doc, after)]] = 0
    return out


def unmarked_line_starts(doc: Doc, starts: numpy.ndarray, classes: TokenClasses) -> List[int]:
    """The starts in ``starts`` (one value per token, nonzero = start) that fall inside a
    line of under ``UNWRAPPED_LINE_CHARS`` characters, not after sentence-final
    punctuation (``follows_final``) and not on a list item (``opens_item``)."""
    firsts = line_firsts(doc, classes.space)
    inside = [i for i in numpy.flatnonzero(starts).tolist() if i > 0 and not firsts[i]]
    if not inside:
        return []
    text = doc.text
    line_begins, line_ends = line_bounds(text)
    marked = follows_final(doc, classes)
    found = []
    for i in inside:
        if marked[i] or opens_item(doc, i, classes.space):
            continue
        k = int(numpy.searchsorted(line_begins, doc[i].idx, side="right")) - 1
        if len(text[line_begins[k] : line_ends[k]].strip()) < UNWRAPPED_LINE_CHARS:
            found.append(i)
    return found


def short_lines_hold_one(doc: Doc, starts: numpy.ndarray, classes: TokenClasses) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) of a text with one sentence per
    line, without its ``unmarked_line_starts``: the author ends sentences with line
    breaks, so a start without punctuation inside a short line splits its sentence
    (``"Walk | the dog twice"``, an item of a list without punctuation). A longer line
    may be a paragraph of sentences that lost their punctuation. Returns a new array of
    ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    out[unmarked_line_starts(doc, out, classes)] = 0
    return out


def lines_are_paragraphs(text: str) -> bool:
    """Whether ``text`` holds one paragraph per line: more than one non-blank line (lines
    end at a ``LINE_BREAK``, the break ``paragraph_starts`` looks for), of median length
    ``UNWRAPPED_LINE_CHARS`` or more."""
    lengths = [len(line.strip()) for line in LINE_BREAK.split(text) if line.strip()]
    return len(lengths) > 1 and float(numpy.median(lengths)) >= UNWRAPPED_LINE_CHARS


# Paragraphs that hold one sentence each are a text written one sentence per line (or
# per paragraph), not one of paragraphs: where at least this share of its lines (or
# paragraphs) do (``sentence_paragraphs``), long lines are not paragraphs
# (``paragraph_starts``) and topic segments take sentences as units, as in the same text
# joined by spaces. With the default pipeline's sentences, on the tuning half: 0.91-1.0
# of the lines of WikiText pieces written one sentence per line, 0-0.44 of WikiText-2
# articles' lines written one paragraph per line.
SENTENCE_LINES_SHARE = 0.8


def sentence_paragraphs(paragraph_first: Any) -> bool:
    """Whether at least ``SENTENCE_LINES_SHARE`` of the paragraphs (``paragraph_first``:
    per sentence, whether it opens one) hold one sentence each."""
    first = numpy.flatnonzero(paragraph_first)
    if not len(first):
        return False
    sizes = numpy.diff(numpy.append(first, len(paragraph_first)))
    return bool((sizes == 1).mean() >= SENTENCE_LINES_SHARE)


def paragraph_starts(doc: Doc, sent_starts: Any) -> numpy.ndarray:
    """For each sentence (token index of its start), whether it opens a paragraph: the
    first does, and one whose preceding whitespace tokens break a paragraph
    (``paragraph_break_tokens``: a blank line, or a line break before a paragraph's
    indented first line or below its short last line) or, in a text with one paragraph
    per line (``lines_are_paragraphs``) whose lines are not single sentences
    (``SENTENCE_LINES_SHARE``), hold a line break. A page printed double-spaced is read
    single-spaced (``single_spaced``): its paragraphs are those its lines mark, by an
    indented first line or a short last line."""
    doc = single_spaced(doc)
    breaks = paragraph_break_tokens(doc)
    if len(sent_starts) and lines_are_paragraphs(doc.text):
        lines = _break_before(doc, sent_starts, breaks, per_line=True)
        if not sentence_paragraphs(lines):
            return lines
    out = _break_before(doc, sent_starts, breaks, per_line=False)
    if breaks_split_sentences(doc, sent_starts, breaks):
        out[1:] = False
    return out


def breaks_split_sentences(doc: Doc, sent_starts: Any, breaks: numpy.ndarray) -> bool:
    """Whether more of the paragraph breaks of ``doc`` (``breaks``: per token, from
    ``paragraph_break_tokens``) fall inside a sentence (of those starting at the token
    indices ``sent_starts``) than before one: the blank lines between a subtitle's cues,
    which cut its sentences anywhere (a page printed double-spaced has none:
    ``double_spaced``). Such blank lines say nothing of where a paragraph, or a topic,
    ends (``paragraph_starts``)."""
    found = numpy.flatnonzero(breaks)
    found = found[found > 0]
    if not len(found) or not len(sent_starts):
        return False
    words = numpy.flatnonzero(~doc.to_array(IS_SPACE).astype(bool))
    after = numpy.searchsorted(words, found)
    found, after = found[after < len(words)], after[after < len(words)]
    if not len(found):
        return False
    is_start = numpy.zeros(len(doc), dtype=bool)
    is_start[numpy.asarray(sent_starts, dtype=int)] = True
    sentence = numpy.cumsum(is_start)
    # (one per run of white space: the word after it; inside where no start lies between
    # the token before the run and that word)
    inside = {
        int(w): bool(sentence[i - 1] == sentence[w])
        for i, w in zip(found, words[after], strict=True)
    }
    within = sum(inside.values())
    return within > len(inside) - within


def _break_before(
    doc: Doc, sent_starts: Any, breaks: numpy.ndarray, *, per_line: bool
) -> numpy.ndarray:
    """For each sentence, whether it is the first or the whitespace tokens before it
    break a paragraph (``breaks``: per token) or, with ``per_line``, hold a line break."""
    out = numpy.zeros(len(sent_starts), dtype=bool)
    for k, start in enumerate(sent_starts):
        i = int(start) - 1
        blank = k == 0
        while not blank and i >= 0 and doc[i].is_space:
            blank = bool(breaks[i]) or bool(per_line and LINE_BREAK.search(doc[i].text))
            i -= 1
        out[k] = blank
    return out


# A paragraph of one line with at most this many words, letters and no closing
# punctuation at its end is a heading too ("Introduction", "2 Related work").
HEADING_WORDS = 10
CLOSING = re.compile(r"[.!?:;,…]['\"”’)\]]*$")
# what ``heading_sentences`` says of a sentence
NOT_HEADING, PLAIN_HEADING, MARKED_HEADING = 0, 1, 2


# A sentence that signs off the text above it: an attribution or a signature after a
# dash ("— Mark Twain", a Debian changelog's "-- Ann Lee <ann@example.org>  Tue, 20 Sep
# 2022", e-mail's "-- " line over a signature; not "---", a rule), or a letter's
# valediction on a line of its own ("Best regards,", "Thanks,"), its name below
SIGN_OFF_WORDS = HEADING_WORDS + 2
DASH_SIGN_OFF = re.compile(r"(?:--(?!-)|[—―](?![—―-]))")
VALEDICTION = re.compile(
    r"(?i)(?:(?:many |with )?thanks(?: again| so much)?|thank you(?: again| so much)?"
    r"|(?:all the |my )?best(?: wishes| regards)?|(?:kind|kindest|warm|warmest|best)"
    r" (?:regards|wishes)|regards|cheers|(?:yours )?sincerely(?: yours)?"
    r"|yours (?:truly|faithfully)|(?:with )?love|take care|respectfully(?: yours)?)[,!.]?"
)
VALEDICTION_WORDS = 6


def signs_off(text: str) -> bool:
    """Whether a sentence's text signs off the text above it (``SIGN_OFF_WORDS`` words
    at most), whatever follows it: it opens with a dash (``DASH_SIGN_OFF``), then a
    capital or a line break, and ends without final punctuation, or its first line is a
    valediction (``VALEDICTION``) closed by ``","``, ``"!"`` or ``"."`` or with more
    lines below it in the sentence, and it holds ``VALEDICTION_WORDS`` words at most.
    A valediction alone without punctuation (``"Cheers"``, ``"Love"``) may be a title:
    ``closing_sentences`` reads what follows it."""
    body = text.strip()
    words = len(body.split())
    if not body or words > SIGN_OFF_WORDS:
        return False
    dash = DASH_SIGN_OFF.match(body)
    if dash:
        # a name or a title after it, or a line break (not "--author", an option)
        after = body[dash.end() :].lstrip(" \t")[:1]
        named = not after or after.isupper() or LINE_BREAK.match(after) is not None
        return named and PARAGRAPH_END.search(body) is None
    line = first_line(body)
    if words > VALEDICTION_WORDS or VALEDICTION.fullmatch(line) is None:
        return False
    return line[-1] in ",!." or line != body


def first_line(text: str) -> str:
    """The first line of a sentence's text, stripped."""
    return LINE_BREAK.split(text.strip(), maxsplit=1)[0].strip()


# the name below a valediction, in a paragraph of its own ("Thanks,\n\nKay")
SIGNED_NAME_WORDS = 3


def signed_name(text: str) -> bool:
    """Whether a sentence's text is a name that signs a letter: one line of at most
    ``SIGNED_NAME_WORDS`` words, the first capitalised, without final punctuation."""
    body = text.strip()
    return (
        0 < len(body.split()) <= SIGNED_NAME_WORDS
        and body[0].isupper()
        and LINE_BREAK.search(body) is None
        and PARAGRAPH_END.search(body) is None
    )


def closing_sentences(
    doc: Doc, sent_starts: Any, paragraph_first: Any, texts: Optional[Sequence[str]] = None
) -> numpy.ndarray:
    """For each sentence (token index of its start), whether it closes the text above
    it: after the first sentence, it starts a line, its text holds a line break (or
    ends the text), and it ``signs_off`` (or is a valediction alone, ``"Cheers"``,
    above a ``signed_name`` or at the text's end); or it continues, in the same
    paragraph, a sentence that closes (the name below ``"Thanks,"``, the lines of a
    signature), with ``SIGN_OFF_WORDS`` words at most and no final punctuation; or it is
    a ``signed_name`` in a paragraph of its own below a valediction. No segment starts
    on one, and none is a heading. ``texts``: the sentences' texts, where the caller
    has them already."""
    starts = [int(s) for s in sent_starts]
    if texts is None:
        texts = sentence_texts(doc, starts)
    first = numpy.asarray(paragraph_first, dtype=bool)
    n = len(starts)
    out = numpy.zeros(n, dtype=bool)
    for k in range(1, n):
        body = texts[k].strip()
        if out[k - 1] and first[k] and VALEDICTION.fullmatch(first_line(texts[k - 1])):
            out[k] = signed_name(body)
        if out[k]:
            continue
        if out[k - 1] and not first[k]:
            out[k] = len(body.split()) <= SIGN_OFF_WORDS and PARAGRAPH_END.search(body) is None
        elif starts_line(doc, starts[k]) and (k == n - 1 or LINE_BREAK.search(texts[k])):
            # (a line of its own: "Thanks. sara My assistant ..." opens a text)
            out[k] = signs_off(body) or (
                VALEDICTION.fullmatch(body) is not None
                and (k == n - 1 or signed_name(texts[k + 1]))
            )
    return out


# how far around a place ``cuts_off_sign_off`` reads, in characters: a line of
# ``SIGN_OFF_WORDS`` words
SIGN_OFF_CHARS = 200


def cuts_off_sign_off(text: str, at: int) -> bool:
    """Whether cutting ``text`` at ``at`` would part a letter's sign-off from the text
    above it (what ``closing_sentences`` keeps together, read from the text alone): the
    line at ``at`` is a valediction (``"Best regards,"``, or ``"Cheers"`` without
    punctuation) or ``signs_off``, or the line above ``at`` is a valediction, whose name
    follows."""
    below = first_line(text[at : at + SIGN_OFF_CHARS])
    above = LINE_BREAK.split(text[max(0, at - SIGN_OFF_CHARS) : at].rstrip())[-1].strip()
    return any(VALEDICTION.fullmatch(line) is not None for line in (below, above)) or (
        signs_off(below)
    )


# A letter's salutation on a line of its own ("Hi Anna,", "Dear Sir or Madam:"): it
# opens the text below it
SALUTATION = re.compile(
    r"(?i)(?:hi|hello|hey|dear|greetings|good (?:morning|afternoon|evening)"
    r"|to whom it may concern)\b(?:[^.!?]|(?<=\b(?:mr|ms|dr))\.|(?<=\bmrs)\.|(?<=\bprof)\.)*[,:!]?"
)
SALUTATION_WORDS = 6
SALUTATION_BARE_WORDS = 3  # without a closing "," ":" or "!" ("Hi Tom")
# or names alone before a comma ("Sara,", "Team,", "Mr. Lee,"), not a valediction
NAMED_SALUTATION = re.compile(
    r"(?:(?:Mr|Mrs|Ms|Dr|Prof|[A-Z])\. )?[A-Z][\w'-]*(?: (?:[A-Z]\. )?[A-Z][\w'-]*)?,"
)


def salutes(line: str, *, names: bool = True) -> bool:
    """Whether a line's text is a letter's salutation: at most ``SALUTATION_WORDS``
    words of ``SALUTATION`` that end with ``","``, ``":"`` or ``"!"``, or at most
    ``SALUTATION_BARE_WORDS`` without; or, with ``names``, a name or two before a comma
    (``NAMED_SALUTATION``) that is no ``VALEDICTION`` (``"Thanks,"``)."""
    body = line.strip()
    words = len(body.split())
    if not words or words > SALUTATION_WORDS:
        return False
    if names and NAMED_SALUTATION.fullmatch(body) is not None:
        return VALEDICTION.fullmatch(body) is None
    if SALUTATION.fullmatch(body) is None:
        return False
    return body[-1] in ",:!" or words <= SALUTATION_BARE_WORDS


def salutations(doc: Doc, sent_starts: Any, texts: Optional[Sequence[str]] = None) -> numpy.ndarray:
    """For each sentence (token index of its start), whether it is a letter's salutation
    (``salutes``) that starts a line and ends at a line break: it opens the text below
    it, as a heading does. ``texts``: the sentences' texts, where the caller has them
    already."""
    starts = [int(s) for s in sent_starts]
    if texts is None:
        texts = sentence_texts(doc, starts)
    out = numpy.zeros(len(starts), dtype=bool)
    for k, (start, text) in enumerate(zip(starts, texts, strict=True)):
        body = text.strip()
        out[k] = (
            k + 1 < len(starts)
            and LINE_BREAK.search(body) is None
            and starts_line(doc, start)
            and LINE_BREAK.search(text, len(text.rstrip())) is not None
            and salutes(body)
        )
    return out


def salutation_holds(doc: Doc) -> numpy.ndarray:
    """For each token, whether it is inside a line that is a letter's salutation with a
    greeting (``salutes`` without names: a hard-wrapped line can end in two names and a
    comma), after the line's first token: the line is one sentence (``"Hi | Tom,"``,
    ``"Dear Mr. | Lee,"``)."""
    out = numpy.zeros(len(doc), dtype=bool)
    lines = [
        found.span(2)
        for found in LINE_TEXT.finditer(doc.text)
        if salutes(found.group(2), names=False)
    ]
    if lines:
        idx = doc.to_array([IDX]).reshape(-1)
        for a, b in lines:
            first = int(numpy.searchsorted(idx, a))
            out[first + 1 : int(numpy.searchsorted(idx, b))] = True
    return out


def starts_line(doc: Doc, i: int) -> bool:
    """Whether token ``i`` is the first of its line (the Doc's first token is)."""
    return i == 0 or (doc[i - 1].is_space and LINE_BREAK.search(doc[i - 1].text) is not None)


def line_firsts(doc: Doc, space: numpy.ndarray) -> numpy.ndarray:
    """``starts_line`` for every token at once (bool per token), given the Doc's
    whitespace tokens (``TokenClasses.space``): only those are read."""
    out = numpy.zeros(len(doc), dtype=bool)
    if len(doc):
        out[0] = True
        breaks = [i for i in numpy.flatnonzero(space[:-1]).tolist() if starts_line(doc, i + 1)]
        out[numpy.asarray(breaks, dtype="int64") + 1] = True
    return out


def line_text_firsts(doc: Doc, space: numpy.ndarray) -> numpy.ndarray:
    """The first token of text on each line (sorted token indices), given the Doc's
    whitespace tokens (``TokenClasses.space``): the Doc's first text token begins a line,
    after whatever whitespace leads it. Empty where the Doc has no text."""
    text = numpy.flatnonzero(~space)
    if not len(text):
        return text
    firsts = line_firsts(doc, space) & ~space
    firsts[text[0]] = True
    return numpy.flatnonzero(firsts)


def sentence_texts(doc: Doc, sent_starts: Any) -> List[str]:
    """The text of each sentence (token index of its start; the last runs to the end of
    ``doc``), as ``Span.text``: from its first character to its last token's end."""
    starts = numpy.asarray(sent_starts, dtype="int64").reshape(-1)
    if not len(doc) or not len(starts):
        return []
    offsets = doc.to_array([IDX, LENGTH])
    lasts = numpy.append(starts[1:], len(doc)) - 1
    begins = offsets[starts, 0].tolist()
    ends = (offsets[lasts, 0] + offsets[lasts, 1]).tolist()
    text = doc.text
    return [text[a:b] for a, b in zip(begins, ends, strict=True)]


def heading_sentences(
    doc: Doc, sent_starts: Any, paragraph_first: Any, texts: Optional[Sequence[str]] = None
) -> numpy.ndarray:
    """For each sentence (token index of its start), whether it is a heading of what
    follows: ``MARKED_HEADING`` where it starts a line outside code (``in_code``), is
    not the last sentence and is marked as one (``HEADING_MARK``, ``UNDERLINED``,
    ``MEDIAWIKI``; with one ``=`` on each side, a page's title, only on a page with
    MediaWiki's section headings and where ``stands_as_title``), an Org-mode page's
    heading (``org_blocks``), a manual page's section title (``manual_titles``), a
    title between two lines of ``ADORNMENT`` (``overlined_title``), or one line directly
    above a line of ``ADORNMENT``, which is then part of the heading too);
    ``PLAIN_HEADING`` where it is instead a paragraph of its own (``paragraph_first`` of
    it and of the next sentence) on one line, of at most ``HEADING_WORDS`` words with
    letters and no closing punctuation at its end, not ``bulleted``, not a line that
    ``signs_off`` the text above or ``says_nothing`` (a rule, a listener's "mm-hmm"),
    not a speaker's turn in a transcript (its label one of ``transcript_speakers``:
    ``"C: and then what"``), and not below a sentence that ``leads_in`` (what that
    sentence introduces: an image, a command);
    else
    ``NOT_HEADING`` (int8).
    ``texts``: the sentences' texts, where the caller has them already."""
    starts = [int(s) for s in sent_starts]
    out = numpy.full(len(starts), NOT_HEADING, dtype="int8")
    if texts is None:
        texts = sentence_texts(doc, starts)
    stripped = [text.strip() for text in texts]
    at_line = [starts_line(doc, start) for start in starts]
    doc_text = doc.text  # (read once: Doc.text joins every token each time it is read)
    # (only sentences that start a line: the text from the line's start is their indent)
    lined = [k for k, first in enumerate(at_line) if first]
    code = numpy.zeros(len(starts), dtype=bool)
    code[lined] = in_code(doc_text, [doc[starts[k]].idx for k in lined])
    one_line = [LINE_BREAK.search(text) is None for text in stripped]
    # an adornment line directly below a line of text underlines it
    underline = [
        k > 0
        and at_line[k]
        and not code[k]
        and one_line[k - 1]
        and at_line[k - 1]
        and ADORNMENT.fullmatch(stripped[k]) is not None
        and ADORNMENT.fullmatch(stripped[k - 1]) is None
        and one_line_break(texts[k - 1])
        for k in range(len(starts))
    ]
    org = {a for a, _ in org_blocks(doc_text)[1]}  # an Org-mode page's headings
    manual = {a for a, _ in manual_titles(doc_text)}  # a manual page's section titles
    wiki = [
        MEDIAWIKI.fullmatch(text) if at_line[k] and one_line[k] and not code[k] else None
        for k, text in enumerate(stripped)
    ]
    speakers = transcript_speakers(doc_text)  # a transcript's speakers
    # a MediaWiki page: one with a section heading, "== Section ==" (or "= = Section = =")
    wiki_page = any(found is not None and found.group(1) != "=" for found in wiki)

    def stands_as_title(k: int) -> bool:
        """Whether sentence ``k`` is a paragraph of its own between whole paragraphs:
        after the text's start, a marked heading or a sentence's end
        (``PARAGRAPH_END``), or above a paragraph that opens with a capital. So stands
        MediaWiki's page title, ``"= Title ="``; a formula that WikiText leaves on a
        line of its own (``"= 1 henry and capacitance C ="``) continues a sentence."""
        if not (paragraph_first[k] and paragraph_first[k + 1]):
            return False
        if k == 0 or out[k - 1] == MARKED_HEADING or PARAGRAPH_END.search(stripped[k - 1]):
            return True
        return first_character(stripped[k + 1]).isupper()

    for k in range(len(starts) - 1):
        if not at_line[k] or code[k]:
            continue
        text, found = stripped[k], wiki[k]
        marked = one_line[k] and (
            HEADING_MARK.match(text) is not None
            or (found is not None and (found.group(1) != "=" or (wiki_page and stands_as_title(k))))
            or doc[starts[k]].idx in org
            or doc[starts[k]].idx in manual
        )
        underlined = UNDERLINED.fullmatch(text) or overlined_title(text)
        if marked or underlined or underline[k] or underline[k + 1]:
            out[k] = MARKED_HEADING
        elif paragraph_first[k] and paragraph_first[k + 1] and one_line[k]:
            plain = (
                len(text.split()) <= HEADING_WORDS
                and not CLOSING.search(text)
                and not bulleted(text)
                and not signs_off(text)
                and not says_nothing(text)
                and not (speakers and speaker(text) in speakers)
                and not (k > 0 and leads_in(texts[k - 1]))
            )
            out[k] = PLAIN_HEADING if plain and any(c.isalpha() for c in text) else NOT_HEADING
    return out


#: A heading path: ``[depth, title]`` of each marked heading in force, outermost first
HeadingPath = List[List[Union[int, str]]]


#: The depth at which a plain heading over prose enters a heading path: below every
#: heading that markup marks (Markdown's ``######`` is 6, LaTeX's ``\subparagraph`` 7)
PLAIN_DEPTH = 10


def heading_paths(
    texts: Sequence[str],
    headings: Any,
    firsts: Sequence[int],
    styles: Sequence[str] = (),
    prose: Any = None,
) -> Tuple[List[HeadingPath], HeadingPath, List[str]]:
    """The headings in force at each segment (``firsts``: the index of its first
    sentence), outermost first, those in force at the end of the text, and the
    adornment styles in the order of their depths: each heading ``[depth, title]``
    (``markup.heading_title``; an adornment style's depth is the order in which the
    text first uses it, from 1, after ``styles``, those of the text before it, where it
    is one part of a document). A heading closes those in force at its depth and
    deeper. A segment's path is read after the headings that open it, plain ones too (a
    short line that the segment keeps with the marked heading below it); those further
    inside it count from the next segment on. ``texts``: the sentences' texts;
    ``headings``: ``heading_sentences`` of them: a ``MARKED_HEADING`` enters a path,
    and so does a plain heading where ``prose`` (``heads_prose``, per sentence) says it
    heads prose, a section's title in text without markup: no markup says how deep it
    is, so it enters at ``PLAIN_DEPTH``, under the marked headings in force, and the
    next heading closes it."""
    flags = numpy.asarray(headings)
    marked = flags == MARKED_HEADING
    titled = numpy.zeros(len(flags), dtype=bool) if prose is None else numpy.asarray(prose)
    ranks = {style: depth for depth, style in enumerate(styles, start=1)}
    stack: HeadingPath = []
    paths: List[HeadingPath] = []
    done = 0

    def read(k: int) -> None:
        text = texts[k].strip()
        depth: Union[int, str]
        if titled[k]:
            depth, title = PLAIN_DEPTH, heading_title(text)[1]
        elif not marked[k] or (k > 0 and marked[k - 1] and ADORNMENT.fullmatch(text)):
            return  # (an underline: read with its title)
        else:
            depth, title = heading_title(text, texts[k + 1] if k + 1 < len(texts) else "")
        if isinstance(depth, str):
            depth = ranks.setdefault(depth, len(ranks) + 1)
        while stack and int(stack[-1][0]) >= depth:
            stack.pop()
        stack.append([depth, title])

    bounds = [int(first) for first in firsts] + [len(texts)]
    for first, last in zip(bounds[:-1], bounds[1:], strict=True):
        opened = first  # (the headings that open the segment, then its text)
        while opened < last and flags[opened] > 0:
            opened += 1
        for k in range(done, opened):
            read(k)
        done = max(done, opened)
        paths.append([list(heading) for heading in stack])
    for k in range(done, len(texts)):
        read(k)
    return paths, [list(heading) for heading in stack], list(ranks)


#: A text's plain headings over prose name its sections where it has this many (a
#: title line over a letter's text, or a name over an e-mail's, is no section's title)
PLAIN_SECTIONS = 2


def set_heading_paths(doc: Doc, key: str, styles: Sequence[str] = (), plain: int = 0) -> None:
    """The headings in force at each segment of ``doc.spans[key]``, as
    ``attrs["headings"]`` (per segment, ``[depth, title]`` outermost first), those in
    force at the Doc's end, ``attrs["headings_at_end"]``, its adornment styles in the
    order of their depths, ``attrs["heading_styles"]``, and the number of its plain
    headings over prose, ``attrs["plain_headings"]`` (``heading_paths``): what a chunk
    of a Markdown, HTML, reStructuredText, MediaWiki, LaTeX or Org page, or of text
    with plain titles over its sections (``PLAIN_SECTIONS`` or more; not one that says
    nothing, ``markup.says_nothing``), sits under. Where the Doc is a part of a longer
    document, ``styles`` and ``plain`` are those of the parts before it (``plain``
    counted in)."""
    group = doc.spans[key]
    starts = [sent.start for sent in doc.sents] if len(doc) else []
    texts = sentence_texts(doc, starts)
    paragraph_first = paragraph_starts(doc, starts)
    headings = heading_sentences(doc, starts, paragraph_first, texts)
    prose = heads_prose(headings, paragraph_first, texts)
    plain += int(prose.sum())
    firsts = numpy.searchsorted(starts, [span.start for span in group], side="right") - 1
    paths, at_end, ranked = heading_paths(
        texts,
        headings,
        [max(0, int(k)) for k in firsts],
        styles,
        prose if plain >= PLAIN_SECTIONS else None,
    )
    group.attrs["headings"] = paths
    group.attrs["headings_at_end"] = at_end
    group.attrs["heading_styles"] = ranked
    group.attrs["plain_headings"] = plain


def carried(above: HeadingPath, path: HeadingPath) -> HeadingPath:
    """The headings in force where a text that starts under ``above`` (the path at the
    end of the text before it, as a document read in parts has) reaches ``path`` (what
    ``heading_paths`` found in the text alone): ``above``'s headings shallower than
    every heading of ``path``, then ``path``."""
    if not path:
        return [list(heading) for heading in above]
    depth = min(int(heading[0]) for heading in path)
    return [list(h) for h in above if int(h[0]) < depth] + [list(h) for h in path]


# A plain heading heads prose where the paragraph after it holds this many sentences,
# or this many words
PROSE_SENTENCES = 2
PROSE_WORDS = 25


def heads_prose(headings: Any, paragraph_first: Any, texts: Sequence[str]) -> numpy.ndarray:
    """For each sentence, whether it is a ``PLAIN_HEADING`` (``heading_sentences``) over
    a paragraph of prose: the paragraph after it holds ``PROSE_SENTENCES`` sentences or
    more, or ``PROSE_WORDS`` words or more, none of them a heading. A short line over
    another short line (a list, a letter's end) heads no prose; a section's title in
    text converted from HTML, a word processor or PDF does."""
    flags = numpy.asarray(headings)
    first = numpy.asarray(paragraph_first, dtype=bool)
    out = numpy.zeros(len(flags), dtype=bool)
    for k in numpy.flatnonzero(flags == PLAIN_HEADING).tolist():
        j, words = k + 1, 0
        while j < len(flags) and (j == k + 1 or not first[j]) and not flags[j]:
            words += len(texts[j].split())
            j += 1
        out[k] = j - k - 1 >= PROSE_SENTENCES or words >= PROSE_WORDS
    return out


def leads_in(text: str) -> bool:
    """Whether a sentence's text (with the white space after it) leads into what the
    next line holds: it ends with a colon, then a line break (``"Expected output:"``,
    ``"Here is how:"``), as a code block, a table, a list or an image follows it."""
    body = text.rstrip()
    return body.endswith(":") and LINE_BREAK.search(text, len(body)) is not None


def turns_leading_in(doc: Doc, sent_starts: Any, texts: Sequence[str]) -> numpy.ndarray:
    """For each sentence (token index of its start; ``texts``: their texts, with the
    white space after them), whether it is a transcript's short turn, a line of its own
    above a longer turn (``markup.leading_turns``: an interviewer's question above its
    answer): it leads into that turn as a sentence that ``leads_in`` does."""
    turns = leading_turns(doc.text)
    return numpy.array(
        [
            bool(turns) and doc[int(start)].idx in turns and LINE_BREAK.search(text) is not None
            for start, text in zip(sent_starts, texts, strict=True)
        ],
        dtype=bool,
    )


def lead_ins(texts: Sequence[str], headings: Any = None) -> numpy.ndarray:
    """For each sentence (``texts``: their texts, with the white space after them),
    whether it ``leads_in`` to a sentence that is not a heading (``headings``:
    ``heading_sentences``, where the caller has them)."""
    n = len(texts)
    flags = numpy.zeros(n, dtype="int8") if headings is None else numpy.asarray(headings)
    out = numpy.zeros(n, dtype=bool)
    for k in range(n - 1):
        out[k] = not flags[k + 1] and leads_in(texts[k])
    return out


def next_starts(doc: Doc, classes: Optional[TokenClasses] = None) -> numpy.ndarray:
    """For every token, the token that starts the next sentence if it is a separator
    (``len(doc)`` if the separator ends the document)."""
    continues = (classes or token_classes(doc)).continues.tolist()
    n = len(doc)
    out = numpy.full(n, n, dtype="int64")
    following = n
    for i in range(n - 1, -1, -1):
        out[i] = following
        if not continues[i]:
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


def layout_starts(
    doc: Doc,
    starts: numpy.ndarray,
    *,
    paragraph_breaks: bool,
    classes: Optional[TokenClasses] = None,
) -> numpy.ndarray:
    """Sentence starts (one value per token, nonzero = start) fitted to the text's layout:
    ``placed_starts``, then ``line_rules``, on the page single-spaced where it is printed
    double-spaced (``single_spaced``; ``classes`` are then read from it). Returns a new
    array of ``starts``' dtype."""
    doc, classes = _single_spaced_classes(doc, classes)
    return _layout_starts(doc, starts, classes, paragraph_breaks=paragraph_breaks)


def _layout_starts(
    doc: Doc, starts: numpy.ndarray, classes: TokenClasses, *, paragraph_breaks: bool
) -> numpy.ndarray:
    """``layout_starts`` of a Doc that is its own single-spaced page, with its
    ``classes``."""
    placed = placed_starts(doc, starts, paragraph_breaks=paragraph_breaks, classes=classes)
    return line_rules(doc, placed, classes, paragraph_breaks=paragraph_breaks)


def placed_starts(
    doc: Doc,
    starts: numpy.ndarray,
    *,
    paragraph_breaks: bool,
    classes: Optional[TokenClasses] = None,
) -> numpy.ndarray:
    """Sentence starts (one value per token, nonzero = start) placed on the tokens that
    can start a sentence, before the rules about lines and lists (``line_rules``).

    After the first token, no sentence starts on a token that belongs to the end of the
    sentence before it (whitespace, sentence-final punctuation, a closing bracket, a
    closing quote attached to the previous token: what follows a separator in
    ``next_starts``): a start predicted on one moves to the next token that is none of
    these, so ``"Hello!?"`` stays one sentence and whitespace ends the sentence before
    it, as in spaCy's parser. A start predicted just after opening brackets or quotes
    moves back onto them: the sentence ``"Why?"`` starts at its quote. With
    ``paragraph_breaks``, the first token after a paragraph break that follows some text
    always starts a sentence (``TokenClasses.blank``: a blank line, or a line break
    before a paragraph's indented first line or below its short last line). So does
    the first token after an unambiguous terminal such as ``。`` or ``؟``
    (``TokenClasses.terminal``). Returns a new array of ``starts``' dtype.
    """
    classes = classes or token_classes(doc)
    continues, blank = classes.continues.tolist(), classes.blank.tolist()
    space, terminal = classes.space.tolist(), classes.terminal.tolist()
    out = numpy.array(starts, copy=True)
    values = out.tolist()
    carry = len(doc) > 0 and terminal[0]
    seen_text = len(doc) > 0 and not space[0]
    closes = classes.closes.tolist()
    for i in range(1, len(values)):
        if closes[i]:
            values[i] = 0
        elif continues[i]:
            carry = (
                carry
                or bool(values[i])
                or terminal[i]
                or (paragraph_breaks and blank[i] and seen_text)
            )
            values[i] = 0
        elif carry:
            values[i] = 1
            carry = False
        seen_text = seen_text or not space[i]
    out[:] = values
    opens = classes.opens.tolist()
    for start in numpy.flatnonzero(out).tolist():
        first = start
        while first > 0 and opens[first - 1]:
            first -= 1
        if first != start:
            out[start] = 0
            if first > 0:  # (the first token starts the Doc anyway)
                out[first] = 1
    return out


def line_rules(
    doc: Doc, starts: numpy.ndarray, classes: TokenClasses, *, paragraph_breaks: bool
) -> numpy.ndarray:
    """The rules that come after the starts are placed (``placed_starts``): no sentence
    starts on a number after the abbreviation that numbers it
    (``TokenClasses.numbered``: ``"former World No. | 1, who was"``; so a reply
    ``"No."`` before a sentence that opens with a digit joins it, rarer in edited text
    than a numbered reference), nor on the first word of a dialogue tag
    (``dialogue_tags``: ``"Who is there?" | she asked``), nor inside a letter's
    salutation (``salutation_holds``: ``"Hi | Tom,"``), nor inside a line on a word in
    lower case that no final punctuation precedes, in text that opens its sentences with
    capitals (``lower_starts_hold``: ``"Nice teachers | good school"``); with
    ``paragraph_breaks``, in a text with one sentence per line the first token after
    every line break starts one (``lines_end_sentences``), so does every line that opens
    a list item (``list_lines_start_sentences``) and every line below a short line
    without punctuation that opens a sentence (``short_lines_end_sentences``), and none
    starts on a line that continues the clause above it (``continued_lines_hold``: the
    model started ``"too."`` wrapped onto a line of its own on a manual page); a list
    marker (``"2."``) is not a sentence by itself (``join_list_markers``); with
    ``paragraph_breaks``, a code block, a heading or a table is one sentence
    (``blocks_hold_one``); a quoted line's ``"> "`` stays with its text
    (``quotes_open_lines``), and so do the markup tags or the time stamp that open a
    line (``tags_open_lines``); no sentence starts inside a long run of characters without
    white space (``runs_hold_no_start``). Some of these read the starts they are given,
    so they run once, on all of them (``layout_starts``, ``decide_starts``)."""
    held = classes.numbered | dialogue_tags(doc, classes) | salutation_holds(doc)
    starts = numpy.where(held, 0, starts).astype(starts.dtype)
    starts = lower_starts_hold(doc, starts, classes)
    if paragraph_breaks:
        # (both rules read whether the text is hard-wrapped; it has to have lines)
        wrapped = LINE_BREAK.search(doc.text) is not None and hard_wrapped(doc.text)
        items = list_item_lines(doc, classes.space)  # (read by both list rules)
        starts = lines_end_sentences(doc, starts, classes, wrapped=wrapped)
        starts = continued_lines_hold(doc, starts, classes)
        starts = list_lines_start_sentences(doc, starts, classes, items=items)
        starts = short_lines_end_sentences(doc, starts, classes, wrapped=wrapped, items=items)
    starts = join_list_markers(doc, starts, classes)
    if paragraph_breaks:
        starts = blocks_hold_one(doc, starts, classes)
    starts = tags_open_lines(doc, quotes_open_lines(doc, starts))
    return runs_hold_no_start(doc, starts)


def lower_starts_hold(doc: Doc, starts: numpy.ndarray, classes: TokenClasses) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) without those inside a line on
    a word that opens in lower case (after ``LINE_OPENERS``) where no sentence-final
    punctuation precedes it (``follows_final``), in a text that opens its sentences
    with capitals (``writes_capitals``): there a sentence does not start so, and the
    model's start is a clause of the same sentence (``"options | match, a file is"``
    on a manual page, ``"Nice teachers | good school"``). Returns a new array of
    ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    found = numpy.flatnonzero(out[1:]) + 1
    if not len(found):
        return out
    text = doc.text
    if not writes_capitals(text):
        return out
    ended = follows_final(doc, classes)
    for i in found.tolist():
        if ended[i] or starts_line(doc, i):
            continue
        if text[doc[i].idx : doc[i].idx + 40].lstrip(LINE_OPENERS)[:1].islower():
            out[i] = 0
    return out


def dialogue_tags(doc: Doc, classes: TokenClasses) -> numpy.ndarray:
    """For every token, whether it is the first word of a dialogue tag: a word that
    opens with a lowercase letter after a question or exclamation mark and the closing
    quote attached to it, with at most white space of the same line between
    (``"Who is there?" she asked``, ``'Stop!' said Tom``): the quoted question or
    exclamation ends inside the sentence that the tag goes on with."""
    out = numpy.zeros(len(doc), dtype=bool)
    if "?" not in doc.text and "!" not in doc.text:
        return out
    space = classes.space.tolist()
    closing = doc.to_array(IS_QUOTE).astype(bool) & classes.continues
    for before in numpy.flatnonzero(closing[1:]).tolist():  # (the token before a quote)
        if not doc[before].text.endswith(("?", "!")):
            continue
        i = before + 2
        while i < len(doc) and space[i] and "\n" not in doc[i].text:
            i += 1
        if i < len(doc):
            out[i] = doc[i].text[:1].islower()
    return out


def tags_open_lines(doc: Doc, starts: numpy.ndarray) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) where a sentence that starts
    just after the HTML or XML tags that open its line (``markup.OPENING_TAGS``:
    ``"<p>The library..."``, ``"<li>Item"``) or just after the time stamp that opens it
    (``markup.OPENING_STAMP``: ``"[0:09] Ann Lee"``, ``"[10:32 AM] <bob> hi"``) starts
    on them instead, so that the tags or the time stay with the text they belong to
    rather than making a sentence of their own. Returns a new array of ``starts``'
    dtype."""
    out = numpy.array(starts, copy=True)
    text = doc.text
    openers = [
        *(OPENING_TAGS.finditer(text) if "<" in text else ()),
        *(OPENING_STAMP.finditer(text) if "[" in text else ()),
    ]
    if not openers:
        return out
    idx = doc.to_array(IDX)
    space = doc.to_array(IS_SPACE).astype(bool)
    for found in openers:
        after = int(numpy.searchsorted(idx, found.end()))
        if after == len(doc) or idx[after] != found.end() or not out[after]:
            continue
        first = int(numpy.searchsorted(idx, found.start()))
        while first < after and space[first]:
            first += 1
        out[first + 1 : after + 1] = 0
        out[first] = 1
    return out


def runs_hold_no_start(doc: Doc, starts: numpy.ndarray) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) without those on a token inside
    a run of more than ``tokenizer.MAX_RUN`` characters without white space (a long URL,
    a base64 blob, minified code, Chinese or Japanese text without spaces) other than
    its first: such a run is one word to the tokenizer, which reads it in pieces
    (``tokenizer.RunTokenizer``), and a start the model puts inside it (on a piece, or
    after a ``=`` of a URL) cuts a word, not a sentence. Nor does a sentence start
    inside a word (``inside_word``: ``"msgpack|-python"`` in a URL, ``"[!|NOTE]"``), nor
    with no white space before it inside markup (``inside_markup``: ``"`re.|Pattern`"``).
    Returns a new array of ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    text = doc.text  # (``Doc.text`` joins every token's text each time it is read)
    out[[i for i in numpy.flatnonzero(out).tolist() if inside_word(doc, i, text)]] = 0
    out[inside_markup(doc, out, text)] = 0
    runs = [m.span() for m in LONG_RUN.finditer(text)]
    if not runs:
        return out
    idx = doc.to_array(IDX)
    for a, b in runs:
        out[numpy.searchsorted(idx, a, side="right") : numpy.searchsorted(idx, b)] = 0
    return out


def attached(doc: Doc, i: int) -> bool:
    """Whether token ``i`` follows the token before it with no white space between."""
    return i > 0 and not doc[i - 1].whitespace_ and not doc[i - 1].is_space


#: what joins the parts of a word, a path or a URL (``"conda-forge/|blis.svg"``,
#: ``"a_|b"``, ``"x=|1"``): no sentence starts right after one
JOINERS = frozenset("/\\_=@#%&+~^|")


def inside_word(doc: Doc, i: int, text: str) -> bool:
    """Whether token ``i`` follows, with no white space between, a cased letter (of a
    script that writes words apart, as Latin, Greek or Cyrillic do: not a Chinese
    character), a digit, one of ``JOINERS``, or a ``!`` or ``?`` right after an opening
    bracket (GitHub's ``"[!NOTE]"``, ``"(?)"``, an HTML comment's ``"<!--"``, which end
    nothing): a start there would cut a word. ``text``: the Doc's text."""
    if not attached(doc, i):
        return False
    idx = doc[i].idx
    char = text[idx - 1]
    return (
        char.isdigit()
        or char.lower() != char.upper()
        or char in JOINERS
        or (char in "!?" and text[max(idx - 2, 0) : idx - 1] in ("(", "[", "<"))
    )


#: spaces and tabs, none or more (``inside_markup``)
SPACES = re.compile(r"[ \t]*")


def inside_markup(doc: Doc, starts: numpy.ndarray, text: str) -> List[int]:
    """The tokens of ``starts`` (nonzero = start) that follow the token before them with
    no white space between and lie inside a URL (``markup.URL``, after its first
    character: ``"typing.html#typing.|TypeForm"``), inside Markdown's inline code or
    right after it (``markup.code_spans``: ``"`re.|Pattern`"``, ``"`|--all`"``,
    ``"`install .`|:"``), in a fenced code block or a reStructuredText literal block
    (``markup.fenced_code``, ``markup.literal_blocks``: ``"socks.|SOCKS5"``), or
    open a link's target after its text (``"[text]|(url)"``, ``"[text]|[]"``); and those
    after inline code and spaces on its line (``"`0.25.*` |series"``: the full stop is
    the code's). A start there cuts a name, not a sentence (``"done.Next"`` keeps the
    model's start). ``text``: the Doc's text."""
    found = numpy.flatnonzero(starts)
    found = found[found > 0]
    if not len(found) or not text:
        return []
    offsets = doc.to_array(IDX)[found].astype("int64")
    glued = numpy.array([attached(doc, i) for i in found.tolist()], dtype=bool)
    cut = numpy.zeros(len(found), dtype=bool)
    # (a URL's last character is its end; a code span's, the character after it; a code
    # block's, the start of its closing line. Not lines indented as code, ``in_code``: a
    # list item's wrapped line may be indented as deep)
    spans = [(m.start(), m.end() - 1) for m in URL.finditer(text)]
    spans += fenced_code(text) + literal_blocks(text) if glued.any() else []
    after: Lines = []
    for a, b in code_spans(text):
        spans.append((a, b))
        spaces = SPACES.match(text, b)
        after.append((b, spaces.end() if spaces else b))
    for a, b in spans:
        inside = slice(
            numpy.searchsorted(offsets, a, "right"), numpy.searchsorted(offsets, b, "right")
        )
        cut[inside] |= glued[inside]
    for a, b in after:
        cut[numpy.searchsorted(offsets, a, "right") : numpy.searchsorted(offsets, b, "right")] = (
            True
        )
    return [
        i
        for i, idx, g, c in zip(
            found.tolist(), offsets.tolist(), glued.tolist(), cut.tolist(), strict=True
        )
        if c or (g and text[idx - 1] == "]" and text[idx] in "([")
    ]


def quotes_open_lines(doc: Doc, starts: numpy.ndarray) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) where a sentence that starts
    just after the quotation marks that open its line (e-mail's and Markdown's ``"> "``,
    ``">> "``, ``"> > "``) starts on them instead, so that a quoted line's marks stay
    with its text rather than ending the sentence before; and where the first line of
    a quotation, after a line that is not quoted (``"Ann wrote:"``), starts one: a
    quotation opens a block of its own. Returns a new array of ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    if ">" not in doc.text:
        return out
    marks = doc.to_array(ORTH) == get_string_id(">")
    firsts = line_firsts(doc, doc.to_array(IS_SPACE).astype(bool))
    lines = numpy.flatnonzero(firsts)
    end = -1  # the end of the last run of marks read
    for i in numpy.flatnonzero(marks).tolist():
        if i < end or not firsts[i]:
            continue
        end = i
        while end < len(doc) and marks[end]:
            end += 1
        if end < len(doc) and out[end] and not doc[end].is_space:
            out[end], out[i] = 0, 1
        k = int(numpy.searchsorted(lines, i))  # (i is lines[k]; the line before, k - 1)
        if k > 0 and not marks[lines[k - 1]] and end < len(doc) and not doc[end].is_space:
            out[i + 1 : end + 1], out[i] = 0, 1
    return out


def _together(pages: Tuple[Lines, Lines], more: Tuple[Lines, Lines]) -> Tuple[Lines, Lines]:
    """The footers and the headers of ``pages`` and ``more`` (``page_lines`` and
    ``running_lines``): the lines that may be a page's footers and headers."""
    return pages[0] + more[0], pages[1] + more[1]


def page_furniture(text: str) -> Tuple[Lines, Lines]:
    """A page's footers and headers in ``text``: ``page_lines`` at its page breaks and,
    in hard-wrapped text (``hard_wrapped``), the ``running_lines`` that neither these
    nor another of its ``text_blocks`` (a heading, a directive, a line of code) hold:
    a page's second line of footer, or pages joined without form feeds."""
    footers, headers = page_lines(text)
    more = running_lines(text)
    if not (more[0] or more[1]) or not hard_wrapped(text, _together((footers, headers), more)):
        return footers, headers
    blocks = text_blocks(text, (footers, headers))
    starts = [a for a, _ in blocks]
    return (
        sorted(footers + [line for line in more[0] if outside(blocks, starts, line[0])]),
        sorted(headers + [line for line in more[1] if outside(blocks, starts, line[0])]),
    )


def blocks_hold_one(doc: Doc, starts: numpy.ndarray, classes: TokenClasses) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) where each of the text's
    ``text_blocks`` (code, a heading, a table, a directive, a comment, front matter) is
    one sentence: its first token starts one, none inside it does (a start the model puts
    inside falls between the words of a code line or the cells of a row, or after a
    heading's ``##``), and the first token after it does unless it continues the
    block's sentence (``TokenClasses.continues``: a closing mark). A subtitle cue's
    header (``CUE_LINES``) or a page's header (``page_furniture``: a page number or a
    running title after a page break, or a line that recurs as one in text without
    them) is part of a sentence instead, as is the word after it: a sentence that the
    text before runs on into, or, where that text ends a sentence (sentence-final
    punctuation, then perhaps closing marks), the one the header opens. A page's footer
    is part of the sentence before it, which runs on into the next page unless it ended
    before the footer. A sentence longer than a chunk may hold is cut at its line starts
    (``topics.split_tokens``). Returns a new array of ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    text = doc.text
    pages = page_furniture(text)
    blocks = text_blocks(text, pages)
    if not blocks:
        return out
    words = numpy.flatnonzero(~classes.space)  # the tokens with text, in order
    chars = numpy.array([doc[i].idx for i in words.tolist()], dtype="int64")
    ended: Optional[numpy.ndarray] = None  # (follows_final, read once a block needs it)
    footers, headers = (set(lines) for lines in pages)
    # (where the last footer or header ended, in words, and whether the text before the
    # run of them that it closes ended a sentence)
    run_end, run_ended = -1, False
    for a, b in blocks:
        first, last = numpy.searchsorted(chars, [a, b])
        if first == last:
            continue
        out[words[first:last]] = 0
        footer = (a, b) in footers
        if footer or (a, b) in headers or CUE_LINES.fullmatch(text, a, b):
            # part of a sentence: a footer of the one before it, which runs on into the
            # next page unless it ended before the footer; a subtitle cue's or a page's
            # header of one that runs on across it, unless the text before it ends one
            # (then the header opens the next, with the text after it); a footer or
            # header right after another reads the text before the first of them
            if ended is None:
                ended = follows_final(doc, classes)
            if first != run_end:
                run_ended = bool(ended[words[first]])
            before_ended, run_end = run_ended, last
            out[words[first]] = first == 0 or (before_ended and not footer)
            if last < len(words):
                out[words[last]] = before_ended and footer
            continue
        out[words[first]] = 1
        if last < len(words) and not classes.continues[words[last]]:
            out[words[last]] = 1
    return out


# a list marker: perhaps a bullet, then a number of up to three digits, one letter or a
# short roman numeral, perhaps after "(", then ".", ")" or ".)"
# bullets that mark a list item wherever they stand (not "-" or "*")
BULLETS = frozenset("•◦▪‣⁃∙")
# bullets a list marker may carry
MARKER_BULLETS = BULLETS | frozenset("*-")
LIST_MARKER = re.compile(
    r"(?:(?P<bullet>[" + re.escape("".join(sorted(MARKER_BULLETS))) + r"])\s*)?"
    r"\(?(?P<item>\d{1,3}|[A-Za-z]|[ivxlIVXL]{1,4})(?:\.\)|[.)])"
)
# the most tokens a marker spans ("•", "(", "iv", ")")
MARKER_TOKENS = 4
_ROMAN = re.compile(r"(?i)(x{0,3})(ix|iv|v?i{0,3})")
_ROMAN_UNITS = ["", "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix"]


def item_numbers(item: str) -> Set[int]:
    """The positions in a list that a marker's item (``"3"``, ``"c"``, ``"iv"``) may
    stand for: a number, a letter's place in the alphabet, a roman numeral's value."""
    if item.isdigit():
        return {int(item)}
    numbers = {ord(item.lower()) - ord("a") + 1} if len(item) == 1 else set()
    roman = _ROMAN.fullmatch(item)
    if roman:
        numbers.add(10 * len(roman.group(1)) + _ROMAN_UNITS.index(roman.group(2).lower()))
    return numbers


@dataclass(frozen=True)
class Marker:
    """A list marker: the item numbers it may stand for, and whether a bullet from
    ``BULLETS`` leads it."""

    numbers: Set[int]
    bulleted: bool


def _marker(doc: Doc, a: int, b: int, space: numpy.ndarray) -> Optional[Marker]:
    """The list marker ``doc[a:b]``, or None if it is none (a marker holds no whitespace
    token, and follows white space or nothing: the ``"12)"`` of ``"(#12)"`` is none)."""
    if a < 0 or b - a > MARKER_TOKENS or space[a:b].any():
        return None
    if attached(doc, a):
        return None
    found = LIST_MARKER.fullmatch(doc[a:b].text)
    if found is None:
        return None
    return Marker(item_numbers(found.group("item")), found.group("bullet") in BULLETS)


def _opening_numbers(doc: Doc, a: int, b: int, space: numpy.ndarray) -> Set[int]:
    """The item numbers of the list marker that ``doc[a:b]`` begins with, if any."""
    for k in range(min(MARKER_TOKENS, b - a - 1), 0, -1):
        marker = _marker(doc, a, a + k, space)
        if marker is not None:
            return marker.numbers
    return set()


# a bullet that opens a list item when a space follows it at the start of a line
# (Markdown's "-", "*" and "+" among them)
LINE_BULLETS = MARKER_BULLETS | frozenset("+–")
# a text holds a list when at least this many of its lines open with a marker or a bullet
MIN_LIST_LINES = 2


def opens_item(doc: Doc, i: int, space: numpy.ndarray) -> bool:
    """Whether ``doc[i:]`` opens with a list marker (``LIST_MARKER``) or a bullet from
    ``LINE_BULLETS``, followed by whitespace."""

    def spaced(end: int) -> bool:  # whitespace after doc[:end]
        return bool(doc[end - 1].whitespace_) or (end < len(doc) and bool(space[end]))

    if doc[i].text in LINE_BULLETS and spaced(i + 1):
        return True
    return any(
        spaced(end) and _marker(doc, i, end, space) is not None
        for end in range(i + 1, min(i + MARKER_TOKENS, len(doc)) + 1)
    )


def list_lines_start_sentences(
    doc: Doc,
    starts: numpy.ndarray,
    classes: Optional[TokenClasses] = None,
    *,
    items: Optional[Sequence[int]] = None,
) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) with a start on every line that
    opens a list item (``opens_item``: ``"- Open the valve"``, ``"2.) Record"``,
    ``"• 10. Sign"``), where the text has at least ``MIN_LIST_LINES`` such lines: an
    item is at least a sentence, with or without final punctuation. ``items``:
    ``list_item_lines``, where the caller has them. Returns a new array of ``starts``'
    dtype."""
    out = numpy.array(starts, copy=True)
    if items is None:
        items = list_item_lines(doc, (classes or token_classes(doc)).space)
    out[list(items)] = 1
    return out


def list_item_lines(doc: Doc, space: numpy.ndarray) -> List[int]:
    """The first tokens of the lines that open a list item (``opens_item``), where the
    text has at least ``MIN_LIST_LINES`` of them; else none. ``space``: per token,
    whether it is whitespace."""
    firsts = line_text_firsts(doc, space)
    items = [i for i in firsts.tolist() if opens_item(doc, i, space)]
    return items if len(items) >= MIN_LIST_LINES else []


def short_lines_end_sentences(
    doc: Doc,
    starts: numpy.ndarray,
    classes: Optional[TokenClasses] = None,
    *,
    wrapped: Optional[bool] = None,
    items: Optional[Sequence[int]] = None,
) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) with a start on the line below every
    short line that opens a sentence and ends without punctuation: a line of at most
    ``HEADING_WORDS`` words, with a letter, without ``CLOSING`` punctuation at its end and
    not opening a list item (``opens_item_line``) unless the text has a list
    (``list_item_lines``: a list's last item ends before the line after it), whose first
    token starts a sentence (the text's first does), over a line that opens with a capital
    or a digit after its ``LINE_OPENERS``, both at the margin (an indented line is code, a
    quotation or a paragraph's first line). Such a line is a title (``"Great Service"`` over
    a review), a list's item or a form's field (``"Ingredients"`` | ``"2 cups flour"`` |
    ``"1 cup sugar"``); a sentence wrapped at a line break goes on past its first line only
    in text that is wrapped, and there the rule holds only where the line could have taken
    the first word of the line below (``takes_next_word``): its break is the writer's. Lines
    are read top down, so a start made here lets its line head the next. Text written in
    lower case is left alone (``"gone"`` | ``"library is closed."``: a title or a line
    wrapped by hand, nothing tells them apart). ``wrapped``: ``hard_wrapped(doc.text)``,
    and ``items``: ``list_item_lines``, where the caller has them. Returns a new array of
    ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    classes = classes or token_classes(doc)
    after = line_break_starts(doc, classes)
    if not len(after):
        return out
    text = doc.text
    begins, ends = line_bounds(text)
    opening = line_text_firsts(doc, classes.space)
    idx = doc.to_array(IDX)
    lines = numpy.searchsorted(begins, idx[opening], side="right") - 1
    first_of = dict(zip(lines.tolist(), opening.tolist(), strict=True))
    starting = out.astype(bool).tolist()
    starting[int(opening[0])] = True
    width: Optional[float] = None
    listed: Optional[Set[int]] = None if items is None else set(items)
    below_lines = numpy.searchsorted(begins, idx[after], side="right") - 1
    for i, k, at in zip(after.tolist(), below_lines.tolist(), idx[after].tolist(), strict=True):
        above_first = first_of.get(k - 1)
        if above_first is None or not starting[above_first]:
            continue
        if at != begins[k] or idx[above_first] != begins[k - 1]:
            continue  # (an indented line: code, a quotation, a paragraph's first line)
        above = QUOTE_PREFIX.sub("", text[begins[k - 1] : ends[k - 1]].strip())
        line = QUOTE_PREFIX.sub("", text[at : ends[k]])
        below = line.lstrip(LINE_OPENERS)
        if (
            len(above.split()) > HEADING_WORDS
            or CLOSING.search(above)
            or not LETTER.search(above)
            or not (below[:1].isupper() or below[:1].isdigit())
        ):
            continue
        if opens_item_line(above):
            if listed is None:  # (read when an item's line is above)
                listed = set(list_item_lines(doc, classes.space))
            if above_first not in listed:
                continue
        if width is None:
            wrapped = hard_wrapped(text) if wrapped is None else wrapped
            lengths = [len(text[a:b].strip()) for a, b in zip(begins.tolist(), ends, strict=True)]
            width = text_width([n for n in lengths if n])
        if wrapped and not takes_next_word(above, line, width or 0.0):
            continue
        out[i] = 1
        starting[i] = True
    return out


def _later_starts(starts: numpy.ndarray) -> List[int]:
    """The marked starts after the first token."""
    return (numpy.flatnonzero(starts[1:]) + 1).tolist()


def join_list_markers(
    doc: Doc, starts: numpy.ndarray, classes: Optional[TokenClasses] = None
) -> numpy.ndarray:
    """``starts`` (one value per token, nonzero = start) with each list marker
    (``LIST_MARKER``: ``"2."``, ``"b)"``, ``"(iv)"``, ``"• 9."``) starting the sentence
    of its item, where the item follows it on the same line:

    * a sentence that is only a marker, or only a bullet from ``LINE_BULLETS`` at the
      start of a line (``"* Item"``, ``"- *Item*"``), joins the item after it;
    * a marker that ends a longer sentence moves to the start of the next one when it
      opens an item: it has a bullet from ``BULLETS``, it begins a line, it follows
      sentence-final punctuation, or it follows on the marker the sentence begins with
      (``"1. Buy milk 2."``, ``"a) one b)"``). ``"See section 2. It explains"`` keeps
      its sentences.

    A start after a whitespace token stays. Returns a new array of ``starts``' dtype."""
    out = numpy.array(starts, copy=True)
    if not len(out):
        return out
    classes = classes or token_classes(doc)
    space = classes.space

    # the first token starts the Doc's first sentence, marked or not
    for a, b in itertools.pairwise([0, *_later_starts(out)]):
        if space[b - 1]:
            continue
        # (a sentence of one token that opens an item at a line's start: a bullet)
        bullet = b - a == 1 and starts_line(doc, a) and opens_item(doc, a, space)
        if bullet or _marker(doc, a, b, space) is not None:
            out[b] = 0
    final: Optional[numpy.ndarray] = None  # (follows_final, read once a marker ends one)
    first = 0  # the start of the sentence before b
    for b in _later_starts(out):
        start = b
        # a marker ends in "." or ")", and its item is at most 4 characters long
        last = doc[b - 1].text
        short = len(last) > 1 or (b > 1 and len(doc[b - 2].text) <= 4)
        if space[b - 1] or last[-1] not in ".)" or not short:
            first = start
            continue
        for a in range(max(first + 1, b - MARKER_TOKENS), b):
            marker = _marker(doc, a, b, space)
            if marker is None:
                continue
            opening = _opening_numbers(doc, first, a, space)
            follows_on = any(n - 1 in opening for n in marker.numbers)
            if final is None:
                final = follows_final(doc, classes)
            if marker.bulleted or starts_line(doc, a) or final[a] or follows_on:
                out[b], out[a], start = 0, 1, a
            break
        first = start
    return out


# In a document where at least this share of the sentences (not counting those the
# layout starts on its own) follow sentence-final punctuation, a start without it needs
# ``attn_senter``'s ``threshold_unmarked`` (``unmarked_starts``).
PUNCTUATED_SHARE = 0.75


# Abbreviations that number what follows them ("World No. 1", "Vol. 2", "Fig. 3",
# "pp. 45", "c. 1500"), read in any case; the short ones that may be a word or an
# initial in capitals ("P.", "C.") in lower case only.
NUMBERING_ABBREVIATIONS = frozenset(
    ["no", "nos", "vol", "vols", "fig", "figs", "eq", "eqs", "op", "art", "sec", "ch"]
    + ["chap", "pt", "nr", "tab", "ref", "supp"]
)
NUMBERING_LOWER = frozenset(["p", "pp", "c", "ca"])
NUMBERING = re.compile(r"(?<![^\W\d_])([^\W\d_]{1,5})\.[ \u00a0\u2009\u202f](?=\d)")


def numbered_references(doc: Doc) -> List[Tuple[int, int]]:
    """``(stop, number)`` token pairs of ``doc``: the token that holds the full stop of
    an abbreviation that numbers what follows it (``NUMBERING_ABBREVIATIONS``,
    ``NUMBERING_LOWER``) and the number's first token, one space apart on the same line
    (a space, a no-break or a thin space): the ``"."`` and ``"1"`` of ``"No. 1"``, the
    ``"c."`` and ``"1500"`` of ``"c. 1500"``."""
    text = doc.text
    if "." not in text:
        return []
    found_pairs: List[Tuple[int, int]] = []
    idx = doc.to_array(IDX)
    for found in NUMBERING.finditer(text):
        word = found.group(1)
        if word.lower() not in NUMBERING_ABBREVIATIONS and word not in NUMBERING_LOWER:
            continue
        stop = int(numpy.searchsorted(idx, found.end() - 2, side="right")) - 1
        number = int(numpy.searchsorted(idx, found.end()))
        if number < len(doc) and idx[number] == found.end():
            found_pairs.append((stop, number))
    return found_pairs


def follows_final(doc: Doc, classes: Optional[TokenClasses] = None) -> numpy.ndarray:
    """For every token, whether sentence-final punctuation is among the tokens that
    continue the sentence before it (the run of whitespace, final punctuation and
    closing brackets or quotes right before the token); the stop of an abbreviation
    that numbers what follows it (``TokenClasses.numbering``) is none."""
    classes = classes or token_classes(doc)
    final = (sentence_final(doc) & ~classes.numbering).tolist()
    continues = classes.continues.tolist()
    out = numpy.zeros(len(doc), dtype=bool)
    seen = False
    for i in range(1, len(doc)):
        seen = (seen or final[i - 1]) if continues[i - 1] else False
        out[i] = seen
    return out


def unmarked_starts(
    doc: Doc,
    probs: numpy.ndarray,
    threshold: float,
    threshold_unmarked: float,
    *,
    paragraph_breaks: bool,
    share: float = PUNCTUATED_SHARE,
) -> numpy.ndarray:
    """Sentence starts (int per token, 1 = start) from start probabilities, where a
    start that no sentence-final punctuation precedes needs ``threshold_unmarked`` in a
    document whose sentences mostly end with such punctuation (edited text, where a
    start without it is usually a missing comma): the starts ``layout_starts`` makes of
    ``probs >= threshold``; then, if at least ``share`` of them (the first token and the
    starts the layout makes on its own not counted) follow final punctuation, those of
    ``probs >= threshold_unmarked`` plus those of ``probs >= threshold`` that land after
    final punctuation. A page printed double-spaced is read single-spaced
    (``single_spaced``)."""
    probs = numpy.asarray(probs)
    doc, classes = _single_spaced_classes(doc, None)
    starts = _layout_starts(
        doc, (probs >= threshold).astype("int32"), classes, paragraph_breaks=paragraph_breaks
    )
    if threshold_unmarked <= threshold or len(doc) < 2:
        return starts
    # a start predicted on token i lands where a separator at i - 1 puts it
    targets, _ = _decision_targets(doc, classes, paragraph_breaks=paragraph_breaks)
    marked = follows_final(doc, classes)
    alone = _layout_starts(
        doc, numpy.zeros(len(doc), dtype=bool), classes, paragraph_breaks=paragraph_breaks
    )
    free = starts.astype(bool) & ~alone
    free[0] = False
    if not free.any() or marked[free].mean() < share:
        return starts
    lands_marked = numpy.append(marked, False)[numpy.concatenate(([0], targets[:-1]))]
    # (compared in the probabilities' own precision, as ``probs >= threshold`` is above)
    required = numpy.where(lands_marked, threshold, threshold_unmarked).astype(probs.dtype)
    return _layout_starts(
        doc, (probs >= required).astype("int32"), classes, paragraph_breaks=paragraph_breaks
    )


def back_over_openings(doc: Doc, start: int, classes: Optional[TokenClasses] = None) -> int:
    """The token a sentence starting at ``start`` really starts on: opening brackets and
    quotes right before it belong to it."""
    opens = (classes or token_classes(doc)).opens
    first = start
    while first > 0 and first < len(doc) and opens[first - 1]:
        first -= 1
    return first


def decision_targets(
    doc: Doc, *, paragraph_breaks: bool, classes: Optional[TokenClasses] = None
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """What a separator decides, independent of the threshold.

    RETURNS: ``targets``, for every token the sentence start it makes when it is a
    separator (``len(doc)`` when that is past the end, 0 never counts), and ``fixed``,
    True where ``placed_starts`` starts a sentence whatever the scores (the first
    token, the first after an unambiguous terminal, and with ``paragraph_breaks`` the
    first token after a blank line), on the page single-spaced where it is printed
    double-spaced (``single_spaced``).
    ``layout_starts(doc, sentence_starts(doc, separators))`` equals ``fixed`` plus
    ``targets[separators]`` and then ``line_rules`` (``decide_starts``); a test checks
    it.
    """
    doc, classes = _single_spaced_classes(doc, classes)
    return _decision_targets(doc, classes, paragraph_breaks=paragraph_breaks)


def _decision_targets(
    doc: Doc, classes: TokenClasses, *, paragraph_breaks: bool
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """``decision_targets`` of a Doc that is its own single-spaced page, with its
    ``classes``."""
    n = len(doc)
    following = next_starts(doc, classes)
    targets = numpy.array(
        [back_over_openings(doc, int(t), classes) if t < n else n for t in following],
        dtype="int64",
    )
    fixed = placed_starts(
        doc, numpy.zeros(n, dtype=bool), paragraph_breaks=paragraph_breaks, classes=classes
    )
    if n:
        fixed[0] = True
    return targets, fixed.astype(bool)


def decide_starts(
    doc: Doc, scores: numpy.ndarray, threshold: float, *, paragraph_breaks: bool
) -> numpy.ndarray:
    """Sentence starts (bool per token) from separator scores: separators are the tokens
    whose score reaches ``threshold`` (see ``decision_targets``), then ``line_rules``,
    both on the page single-spaced where it is printed double-spaced
    (``single_spaced``)."""
    doc, classes = _single_spaced_classes(doc, None)
    targets, fixed = _decision_targets(doc, classes, paragraph_breaks=paragraph_breaks)
    starts = starts_from_targets(targets, fixed, scores, threshold)
    return line_rules(doc, starts, classes, paragraph_breaks=paragraph_breaks)


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
    continues = token_classes(doc).continues
    scores = []
    for sent in doc.sents:
        end = sent.end
        start = end - 1
        while start > sent.start and continues[start]:
            start -= 1
        scores.append(float(values[start:end].max()) if end > start else 0.0)
    return scores


def sentence_end_scores(doc: Doc) -> List[float]:
    """How sure each sentence of ``doc.sents`` ends where it does: with ``attn_senter``'s
    ``doc._.start_scores``, P(S) of the next sentence's first token (1.0 for the last
    sentence, which the document ends); else the separator score of its end
    (``sentence_scores`` of ``attn_segmenter``'s ``doc._.separator_scores``); 0.0 when
    no component scored the tokens."""
    if not len(doc):
        return []
    sents = list(doc.sents)
    starts = doc._.start_scores if Doc.has_extension("start_scores") else None
    if starts is not None:
        return [float(starts[s.start]) for s in sents[1:]] + [1.0]
    separators = doc._.separator_scores if Doc.has_extension("separator_scores") else None
    return sentence_scores(doc, separators if separators is not None else [0.0] * len(doc))
