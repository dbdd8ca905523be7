"""What a text's markup says, from its characters alone: where its lines end (every
line end of Unicode), which of its lines are marked headings (Markdown, reStructuredText,
MediaWiki, AsciiDoc, HTML, LaTeX, Org) and which of its blocks are one sentence each,
whatever their punctuation (``text_blocks``: code, headings, tables (Markdown, CSV,
TSV), directives, HTML comments and elements, tag lines, front matter, subtitle cues,
pages' footers and headers). ``sentences`` reads these with the model's starts."""

import bisect
import collections
import itertools
import re
from typing import Dict, Iterator, List, Optional, Sequence, Set, Tuple, Union

import numpy

# (start, end) character ranges
Lines = List[Tuple[int, int]]

PARAGRAPH_SEPARATOR = "\u2029"
# What ends a line: the line boundaries of Unicode (those of Python's str.splitlines): a
# line feed, Windows' "\r\n", a carriage return alone (old Mac text), a vertical tab
# (a word processor's line break), a form feed (a page break), the file, group and
# record separators, NEL, and the line and paragraph separators. A form feed right after
# another line end is part of it: text from a PDF ends each page's last line, then the
# page, so that a page break is one line break, not a blank line.
OTHER_LINE_ENDS = "\x0b\x1c\x1d\x1e\x85\u2028" + PARAGRAPH_SEPARATOR
# (the form feed after another line end is taken whenever it is there: a pattern of two
# line ends never reads "\n\x0c" as two)
LINE_END = rf"(?:(?:\r\n|\r(?!\n)|[\n{OTHER_LINE_ENDS}])(?:\x0c|(?!\x0c))|\x0c)"
LINE_BREAK = re.compile(LINE_END)
# a line end to the very next line: any but a paragraph separator, which is a blank line
NEXT_LINE = LINE_END.replace(PARAGRAPH_SEPARATOR, "")
NEXT_LINE_BREAK = re.compile(NEXT_LINE)
# a character of a line (none of the line ends), for patterns that stay within a line
LINE_END_CHARS = "\r\n\x0c" + OTHER_LINE_ENDS
IN_LINE = f"[^{LINE_END_CHARS}]"
# white space within a line (any but the line ends)
IN_LINE_SPACE = rf"[^\S{LINE_END_CHARS}]"
# a line end with white space (spaces, tabs) after it: an indented line
INDENTED_LINE = re.compile(rf"[{LINE_END_CHARS}]{IN_LINE_SPACE}")
# what a text's line ends may hold besides line feeds: a line end of another kind, or
# white space right before or after one
LAYOUT_WHITESPACE = re.compile(
    rf"[\r\x0c{OTHER_LINE_ENDS}]|{IN_LINE_SPACE}[{LINE_END_CHARS}]|{INDENTED_LINE.pattern}"
)
# where a line starts: the text's start, or after a line end (with re.MULTILINE)
LINE_START = rf"(?:^|(?<=\r)(?!\n)|(?<=[\x0c{OTHER_LINE_ENDS}]))"


def next_line(text: str, end: int, start: int) -> bool:
    """Whether ``text[end:start]`` is one line end and no blank line: the line at
    ``start`` follows the one that ends at ``end`` directly (a paragraph separator,
    which ``BLANK_LINE`` reads as a blank line, does not join a table's rows)."""
    return NEXT_LINE_BREAK.fullmatch(text, end, start) is not None


def one_line_break(text: str, start: int = 0, end: Optional[int] = None) -> bool:
    """Whether ``text[start:end]`` holds exactly one line end, and no paragraph
    separator (which ``BLANK_LINE`` reads as a blank line): the line after it follows
    the one before directly."""
    found = LINE_BREAK.findall(text, start, len(text) if end is None else end)
    return len(found) == 1 and NEXT_LINE_BREAK.fullmatch(found[0]) is not None


# a blank line in running text: ``is_blank_line`` of a whitespace run
BLANK_LINE = re.compile(LINE_END + r"\s*" + LINE_END + "|" + PARAGRAPH_SEPARATOR)

# A heading line marked as one: Markdown's "# Title" ... "###### Title", HTML's
# "<h2>Title</h2>" and LaTeX's "\section{Title}" on a line of their own (``\part`` to
# ``\subparagraph``, starred or with a short title in brackets, perhaps a label or a
# comment after it), AsciiDoc's "== Title" ... "====== Title" (a letter first, not
# ending as a statement does: "== 144``. Similarly," is a line of wrapped prose), a
# line underlined with a run of = - ~ ^ * # + (Markdown's and reStructuredText's; the
# run may be a sentence of its own, ``ADORNMENT``), or MediaWiki's "== Title ==" (also
# as WikiText writes it, "= = Title = ="; as many = after as before). With one = on each
# side, a page's title, "= Title =", reads as a formula does that WikiText leaves on a
# line of its own: ``sentences.heading_sentences`` tells them apart by the text around.
LINE_ENDS_HERE = rf"[ \t]*(?=[{LINE_END_CHARS}]|$)"
# HTML's heading element on a line, and LaTeX's sectioning commands by their depth
HTML_HEADING = re.compile(
    rf"<[hH](?P<level>[1-6])\b[^>]*>(?P<title>{IN_LINE}*)</[hH](?P=level)[ \t]*>"
)
LATEX_DEPTH = {
    name: depth
    for depth, name in enumerate(
        ["part", "chapter", "section", "subsection", "subsubsection", "paragraph"], start=1
    )
}
LATEX_DEPTH["subparagraph"] = 7
LATEX_HEADING = re.compile(
    rf"\\(?P<command>{'|'.join(LATEX_DEPTH)})\*?(?:\[[^\]]*\])?"
    rf"\{{(?P<heading>{IN_LINE}*)\}}(?:[ \t]*%{IN_LINE}*)?"
)
HEADING_MARK = re.compile(
    r"#{1,6}[ \t]\S"
    rf"|{HTML_HEADING.pattern}{LINE_ENDS_HERE}"
    rf"|{LATEX_HEADING.pattern}{LINE_ENDS_HERE}"
    rf"|={{2,6}}[ \t]+[^\W\d_](?!{IN_LINE}*[.!:;,…]['\"”’)\]]*{LINE_ENDS_HERE})"
)
UNDERLINED = re.compile(rf"{IN_LINE_SPACE}*\S{IN_LINE}*{NEXT_LINE}[ \t]*([=\-~^*#+])\1{{2,}}[ \t]*")
ADORNMENT = re.compile(r"([=\-~^*#+])\1{2,}")
# A title over- and underlined as reStructuredText writes a page's title ("#####",
# "  Title", "#####"): the same character above and below
OVERLINED = re.compile(
    r"([=\-~^*#+])\1{2,}[ \t]*"
    + NEXT_LINE
    + r"[ \t]*\S"
    + IN_LINE
    + "*"
    + NEXT_LINE
    + r"[ \t]*\1{3,}[ \t]*"
)
MEDIAWIKI = re.compile(rf"(=(?: ?=){{0,5}}) ?{IN_LINE_SPACE}*[^=\s][^={LINE_END_CHARS}]*? ?\1")
# A line that may open or close a fenced code block (Markdown's ``` or ~~~, three or
# more; what follows the run is an opening fence's info string, and holds no backtick
# after backticks; AsciiDoc's ---- under a "[source]" or "[listing]" line), and the
# indentation of a line of an indented block: no heading in either ("# a comment")
FENCE = re.compile(
    LINE_START
    + rf"[ \t]{{0,3}}(`{{3,}}(?![^`{LINE_END_CHARS}]*`)|~{{3,}}|-{{4,}}(?={LINE_ENDS_HERE}))"
    + rf"({IN_LINE}*)",
    re.MULTILINE,
)
LISTING_ATTRIBUTE = re.compile(r"\[(?:source|listing)\b[^\]]*\]")
CODE_INDENT = re.compile(r"(?: {4}|\t)")
# the longest line above an AsciiDoc listing's opening "----" that is read
ATTRIBUTE_CHARS = 200


def fenced_code(text: str) -> List[Tuple[int, int]]:
    """``(start, close)`` of each fenced code block of ``text``: from the start of the
    line that opens it (or of an AsciiDoc listing's ``"[source,python]"`` line) to the
    start of the line that closes it (a fence of the same character, as long or longer,
    with nothing after it), or to the end of the text (``close`` is then ``len(text)``).
    A line of tildes under a line of text no longer than it is reStructuredText's
    underline of a heading, and a line of dashes under no such attribute line a rule or
    an underline: they open nothing."""
    out: List[Tuple[int, int]] = []
    opening: Tuple[int, str, int] | None = None  # (start, character, length)
    for found in FENCE.finditer(text):
        run, rest = found.group(1), found.group(2)
        if opening is None:
            start = found.start()
            if run[0] == "-":
                above = _line_above(text, start, ATTRIBUTE_CHARS)
                if above is None or not LISTING_ATTRIBUTE.fullmatch(above[1].strip()):
                    continue
                start = above[0]
            elif run[0] == "~" and not rest.strip():
                above = _line_above(text, start, 2 * len(run))
                title = "" if above is None else above[1].strip()
                if len(title) <= len(run) and any(c.isalnum() for c in title):
                    continue
            opening = (start, run[0], len(run))
        elif run[0] == opening[1] and len(run) >= opening[2] and not rest.strip():
            out.append((opening[0], found.start()))
            opening = None
    if opening is not None:
        out.append((opening[0], len(text)))
    return out


def _line_above(text: str, start: int, longest: int) -> Tuple[int, str] | None:
    """The start and the text of the line above the line that starts at ``start``, if
    it is at most about ``longest`` characters long (None above the text's first line,
    or for a longer line)."""
    first = max(0, start - longest - 4)
    breaks = list(LINE_BREAK.finditer(text, first, start))
    if not breaks or breaks[-1].end() != start:
        return None
    if len(breaks) >= 2:
        above = breaks[-2].end()
    elif first == 0:
        above = 0
    else:
        return None
    return above, text[above : breaks[-1].start()]


# reStructuredText's mark of a literal block: "::" at a line's end, then a blank line
# (or a paragraph separator, which is one)
LITERAL_MARK = re.compile(
    rf"::[ \t]*(?:{LINE_END}(?:[ \t]*{LINE_END})+|{PARAGRAPH_SEPARATOR}(?:[ \t]*{LINE_END})*)"
)


def _depth(line: str) -> int:
    """How far ``line`` is indented by spaces and tabs."""
    return len(line) - len(line.lstrip(" \t"))


def literal_blocks(text: str) -> List[Tuple[int, int]]:
    """``(start, end)`` of each reStructuredText literal block of ``text``: the lines
    after a line that ends with ``"::"`` and a blank line, indented deeper than that
    line, up to the first line with text that is not (``"like this::"``, then code
    indented by three spaces, whose ``"# comment"`` is no heading). Linear in the
    text."""
    out: List[Tuple[int, int]] = []
    position = 0
    while (mark := LITERAL_MARK.search(text, position)) is not None:
        # (the mark's line starts at a line end after ``position``, or at ``position``)
        ends = (text.rfind(end, position, mark.start()) + 1 for end in LINE_END_CHARS)
        depth = _depth(text[max(position, *ends) : mark.start()])
        start = end = position = mark.end()
        for found in LINE_BREAK.finditer(text, start):
            body = text[position : found.start()]
            if body.strip() and _depth(body) <= depth:
                break
            end = found.start() if body.strip() else end
            position = found.end()
        else:
            body = text[position:]
            if body.strip() and _depth(body) > depth:
                end = position = len(text)
        if end > start:
            out.append((start, end))
    return out


def line_bounds(text: str) -> Tuple[numpy.ndarray, List[int]]:
    """Where each line of ``text`` begins (sorted, for ``searchsorted``) and where it
    ends, before its ``LINE_BREAK``."""
    breaks = list(LINE_BREAK.finditer(text))
    begins = numpy.array([0, *(m.end() for m in breaks)], dtype="int64")
    return begins, [*(m.start() for m in breaks), len(text)]


def code_blocks(text: str) -> List[Tuple[int, int]]:
    """``(start, close)`` of the fenced code blocks (``fenced_code``) and the
    reStructuredText literal blocks (``literal_blocks``) of ``text``, by their starts."""
    return sorted(fenced_code(text) + literal_blocks(text))


def in_code(text: str, offsets: Sequence[int]) -> numpy.ndarray:
    """For each character offset (sorted) of ``text``, whether it lies in code: inside a
    fenced block (``fenced_code``: from a line that opens one to the line that closes
    it, or to the end) or a reStructuredText literal block (``literal_blocks``), or on a
    line indented as code (four spaces or a tab before its first character). Linear in
    the text."""
    points = numpy.asarray(offsets, dtype="int64")
    out = numpy.zeros(len(points), dtype=bool)
    for start, close in code_blocks(text):
        out[numpy.searchsorted(points, start) : numpy.searchsorted(points, close)] = True
    lines, _ = line_bounds(text)
    firsts = lines[numpy.searchsorted(lines, points, side="right") - 1]
    for k, line in enumerate(firsts.tolist()):
        out[k] |= CODE_INDENT.match(text, line) is not None
    return out


# a run of backticks, or a line end: what ``code_spans`` reads
BACKTICKS = re.compile(rf"`+|{LINE_END}")
# a URL: a scheme and "://" or "www.", to the next white space, angle bracket, quote or
# backtick
URL = re.compile(r"(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"'`]+")


def code_spans(text: str) -> Lines:
    """Markdown's inline code: ``(start, end)`` from a run of backticks to the next run
    as long on the same line, both included (```` `re.Pattern` ````, ``"``a ` b``"``):
    runs of other lengths between are part of the span; a run with no run as long after
    it on its line opens no span, and the rest of its line holds none. Linear in the
    text."""
    found: Lines = []
    opened: Optional[re.Match[str]] = None
    for mark in BACKTICKS.finditer(text):
        if mark.group()[0] != "`":
            opened = None
        elif opened is None:
            opened = mark
        elif len(mark.group()) == len(opened.group()):
            found.append((opened.start(), mark.end()))
            opened = None
    return found


# A Markdown heading's line: ``HEADING_MARK`` after at most three spaces, to the end of
# its line (any ``LINE_END``: in text whose lines end in "\r" alone, a heading or a row
# is one line, not the rest of the text)
HEADING_LINE = re.compile(
    LINE_START + rf"[ \t]{{0,3}}(?:{HEADING_MARK.pattern}){IN_LINE}*", re.MULTILINE
)
# A Markdown table's row: a line that opens with "|" (after at most three spaces); its
# delimiter row holds only "|", "-", ":" and spaces, with a run of three "-".
TABLE_ROW = re.compile(LINE_START + r"[ \t]{0,3}\|" + IN_LINE + "*", re.MULTILINE)
TABLE_DELIMITER = re.compile(r"[ \t]{0,3}\|[\s|:-]*---[\s|:-]*")
# A delimited table (CSV, TSV): a run of DELIMITED_ROWS lines or more, each holding the
# same number of one delimiter outside double quotes: tabs inside the line (not its
# indentation), or commas or semicolons that no space follows, two or more of them (in
# prose a space follows both; the commas of a number, "1,000,000", are no delimiters)
DELIMITED_ROWS = 3
MIN_DELIMITERS = {"\t": 1, ",": 2, ";": 2}
# a comma that groups a number's digits ("3,500,000"), which delimits nothing
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def _delimiters(line: str) -> Optional[Tuple[str, int]]:
    """The delimiter of a delimited table's row ``line`` (stripped) and how many it
    holds outside double quotes, or None."""
    if '"' in line:  # (the quoted parts left out)
        line = "".join(line.split('"')[::2])
    if ", " in line or "; " in line:
        return None
    counts = {c: line.count(c) for c in MIN_DELIMITERS}
    counts[","] -= len(THOUSANDS.findall(line))
    found = [(c, n) for c, n in counts.items() if n >= MIN_DELIMITERS[c]]
    return found[0] if len(found) == 1 else None


Record = Tuple[List["re.Match[str]"], Optional[Tuple[str, int]]]


def _records(text: str, start: int = 0, end: Optional[int] = None) -> Iterator[Record]:
    """The records of ``text`` (from ``start``, a line's start, to ``end``) as a
    delimited table's rows: ``(lines, shape)``, its ``LINE_TEXT`` matches and
    ``_delimiters``' shape. A line with an odd number of double quotes opens a quoted
    field that runs on over the lines after it (a cell with line breaks, as CSV writes
    one) up to the line that closes it: the lines are one record where, together, they
    are a row; else the line is one alone. Linear in the text (a record that is no row
    reaches no further than the next line with an odd number of quotes)."""
    lines = list(LINE_TEXT.finditer(text, start, len(text) if end is None else end))
    k = 0
    while k < len(lines):
        line = lines[k]
        last = k
        if line.group(2).count('"') % 2:
            last = next(
                (j for j in range(k + 1, len(lines)) if lines[j].group(2).count('"') % 2), k
            )
        shape = None
        if last > k:
            shape = _delimiters(text[line.start(2) : lines[last].end(2)])
        if shape is None:
            last, shape = k, _delimiters(line.group(2))
        yield lines[k : last + 1], shape
        k = last + 1


def delimited_tables(text: str) -> Lines:
    """``(start, end)`` character ranges of the delimited tables of ``text``
    (``DELIMITED_ROWS``, ``MIN_DELIMITERS``; a row may run over several lines inside a
    quoted field: ``_records``): from the first row's first character to the last row's
    last. Linear in the text."""
    out: Lines = []
    start, end, rows = 0, 0, 0  # the current run of rows
    kind: Optional[Tuple[str, int]] = None
    for record in itertools.chain(_records(text), [None]):  # (None: the end)
        shape = None if record is None else record[1]
        if (
            record is not None
            and shape is not None
            and shape == kind
            and next_line(text, end, record[0][0].start())
        ):
            end, rows = record[0][-1].end(2), rows + 1  # the next row of the run
            continue
        if rows >= DELIMITED_ROWS:
            out.append((start, end))
        kind = shape
        if record is not None:
            start, end, rows = record[0][0].start(2), record[0][-1].end(2), 1
    return out


def quoted_lines(text: str, start: int = 0, end: Optional[int] = None) -> Set[int]:
    """The first characters of the lines of ``text`` (from ``start``, a line's start, to
    ``end``) that go on with a delimited row inside a quoted cell (``_records``): no row
    starts there, so no piece of a long table should."""
    return {
        line.start(2)
        for lines, shape in _records(text, start, end)
        if shape is not None
        for line in lines[1:]
    }


def cue_lines(text: str, start: int = 0, end: Optional[int] = None) -> Set[int]:
    """The first characters of the lines of ``text`` (from ``start`` to ``end``) that a
    subtitle cue's number and timing lines (``CUE_LINES``) open: the timing line below
    the number and the cue's first line of text below that. A cue's header heads the
    text below it, so no piece of a long text should start there."""
    stop = len(text) if end is None else end
    out: Set[int] = set()
    for cue in CUE_LINES.finditer(text, start, stop):
        below = LINE_BREAK.search(text, cue.end())
        last = below.end() if below is not None else cue.end()
        out.update(m.end() for m in LINE_BREAK.finditer(text, cue.start(), last))
    return out


def outside(spans: Lines, starts: Sequence[int], offset: int) -> bool:
    """Whether ``offset`` lies outside every one of ``spans`` (sorted, disjoint ``(start,
    end)`` ranges, whose ``starts`` the caller has listed)."""
    k = bisect.bisect_right(starts, offset) - 1
    return k < 0 or spans[k][1] <= offset


# Org mode: a page with a line of an in-buffer setting or a block's line ("#+TITLE:
# Notes", "#+BEGIN_SRC python", "#+END_SRC") is Org's; there each such line is one
# sentence, a source, example or export block from its "#+BEGIN_" line to its "#+END_"
# line (or to the text's end) is one, and a line that opens with one or more "*" and a
# space at its very start is a heading (elsewhere a Markdown list's bullet)
ORG_LINE = re.compile(LINE_START + rf"[ \t]*(#\+[A-Za-z][\w-]*(?=[:\s]|$){IN_LINE}*)", re.MULTILINE)
ORG_VERBATIM = re.compile(r"(?i)#\+begin_(src|example|export)\b")
ORG_HEADING = re.compile(LINE_START + rf"\*+[ \t]+\S{IN_LINE}*", re.MULTILINE)
# the page's title, a heading too
ORG_TITLE = re.compile(r"(?i)#\+title:")


def org_blocks(text: str) -> Tuple[Lines, Lines]:
    """``(blocks, headings)`` of ``text`` if it is an Org-mode page (``ORG_LINE``), as
    ``(start, end)`` character ranges: its settings' and blocks' lines and its verbatim
    blocks (``ORG_VERBATIM``), and its heading lines outside those (``ORG_HEADING``) and
    title lines (``ORG_TITLE``); else two empty lists. A ``#+`` line in code
    (``in_code``: a Markdown page that shows Org's markup) makes no page Org's. Linear
    in the text."""
    found = [m.span(1) for m in ORG_LINE.finditer(text)]
    code = in_code(text, [a for a, _ in found])  # (a Markdown page's example of Org)
    settings = [span for span, in_block in zip(found, code, strict=True) if not in_block]
    blocks: Lines = []
    k = 0
    while k < len(settings):
        a, b = settings[k]
        verbatim = ORG_VERBATIM.match(text, a)
        k += 1
        if verbatim is not None:
            end = re.compile(rf"(?i)#\+end_{verbatim.group(1)}\b")
            k = next((j for j in range(k, len(settings)) if end.match(text, settings[j][0])), -1)
            b = len(text) if k < 0 else settings[k][1]
            k = len(settings) if k < 0 else k + 1
        blocks.append((a, b))
    if not blocks:
        return [], []
    starts = [a for a, _ in blocks]
    headings = [
        (m.start(), m.end())
        for m in ORG_HEADING.finditer(text)
        if outside(blocks, starts, m.start())
    ]
    titles = [(a, b) for a, b in blocks if ORG_TITLE.match(text, a)]
    return blocks, sorted(headings + titles)


# such a title on lines of its own
OVERLINED_LINES = re.compile(
    LINE_START + r"[ \t]*" + OVERLINED.pattern + rf"(?={LINE_END}|\Z)", re.MULTILINE
)
# A reStructuredText explicit markup line: a directive (".. note::", ".. code-block::
# python"), a comment or a link target (".. _label:"), to the end of its line
DIRECTIVE_LINE = re.compile(LINE_START + r"[ \t]{0,3}\.\. " + IN_LINE + "*", re.MULTILINE)
# A heading underlined as Markdown and reStructuredText write it: a line of text, then a
# line of "=", "-", "~" or "^" (the two lines, from the first one's start; "*", "#" and
# "+" rules are as often an e-mail's dividers)
UNDERLINED_LINES = re.compile(
    LINE_START + rf"[ \t]*\S{IN_LINE}*{NEXT_LINE}[ \t]*([=\-~^])\1{{2,}}[ \t]*(?={LINE_END}|\Z)",
    re.MULTILINE,
)
# An HTML comment or an element that holds no prose (``<pre>``, ``<script>``,
# ``<style>``) on lines of its own ("<!-- draft -->", over one line or more): where one
# opens a line, what closes each kind, and what may follow that on its last line
# (whitespace, more tags)
HTML_BLOCK_OPEN = re.compile(
    LINE_START + r"[ \t]{0,3}(?:<!--|<(?i:(pre|script|style))\b)", re.MULTILINE
)
HTML_BLOCK_CLOSE = {
    kind: re.compile(pattern, re.IGNORECASE)
    for kind, pattern in (("", "-->"), *((k, rf"</{k}[ \t]*>") for k in ("pre", "script", "style")))
}
HTML_BLOCK_END = re.compile(
    rf"((?:[ \t]*</?[A-Za-z][^<>{LINE_END_CHARS}]*>)*)[ \t]*(?:{LINE_END}|\Z)"
)
# A line of HTML or XML tags alone ("<!DOCTYPE html>", "<ul>", "</div></body>"), with
# nothing but whitespace between them
TAGS = rf"[ \t]*(?:<[!?/]?[A-Za-z][^<>{LINE_END_CHARS}]*>[ \t]*)+"
TAG_LINE = re.compile(LINE_START + TAGS + LINE_ENDS_HERE, re.MULTILINE)
# a text that is such tags alone (``fullmatch``)
TAGS_ONLY = re.compile(TAGS)
# HTML or XML tags that open a line before its text ("<p>", "<li>", "</p><p class=x>"):
# a tag's name, then white space and attributes or its end (not "<ann@example.org>")
OPENING_TAGS = re.compile(
    LINE_START
    + rf"[ \t]*(?:</?[A-Za-z][A-Za-z0-9]*(?:[ \t][^<>{LINE_END_CHARS}]*)?/?>[ \t]*)+(?=[^\s<])",
    re.MULTILINE,
)

# A time stamp in brackets, as a transcript or a chat writes it ("[0:09]", "[10:32 AM]",
# "[00:01:23.5]"; not a footnote's "[12]")
TIME_STAMP = r"\[\d{1,2}(?::\d\d){1,2}(?:[.,]\d{1,3})?(?:[ \t]?[AaPp]\.?[Mm]\.?)?\]"
# One that opens a line, before its text ("[0:09] Ann Lee", "[10:32 AM] <bob> hi")
OPENING_STAMP = re.compile(LINE_START + rf"[ \t]*{TIME_STAMP}[ \t]*(?=\S)", re.MULTILINE)

# A speaker's label that opens a line of a transcript, an interview or a chat ("B:",
# "Ann Lee:", "INTERVIEWER:", "<bob>", "[10:32 AM] <bob>"; the name its group "nick" or
# "name"; not a URL's scheme, "http://", nor a drive, "C:\")
SPEAKER_LABEL = re.compile(
    rf"\s*(?:{TIME_STAMP}\s*)?"
    r"(?:<(?P<nick>[^<>\s]{1,30})>|(?P<name>[A-Za-z][\w .'-]{0,30}):(?![/\\]))"
)
# A listener's answer that says nothing of a topic (a backchannel: "yeah", "mm-hmm",
# "oh okay"): at most BACKCHANNEL_WORDS words, each one of BACKCHANNELS
BACKCHANNELS = frozenset(
    [
        "yeah",
        "yes",
        "yep",
        "yup",
        "no",
        "nope",
        "okay",
        "ok",
        "right",
        "sure",
        "alright",
        "exactly",
        "really",
        "true",
        "mm",
        "mmm",
        "mhm",
        "mm-hmm",
        "mmhmm",
        "uh-huh",
        "uh",
        "huh",
        "um",
        "umm",
        "hmm",
        "oh",
        "ah",
        "aha",
        "wow",
    ]
)
BACKCHANNEL_WORDS = 3
BACKCHANNEL_WORD = re.compile(r"[\w'-]+")


def backchannel(text: str) -> bool:
    """Whether a line's text, after a speaker's label (``SPEAKER_LABEL``), is a
    listener's backchannel (``BACKCHANNELS``, at most ``BACKCHANNEL_WORDS`` words):
    ``"B: mm-hmm"``, ``"Yeah."``, ``"<bob> oh okay"``."""
    label = SPEAKER_LABEL.match(text)
    words = BACKCHANNEL_WORD.findall(text[label.end() if label else 0 :].lower())
    return 0 < len(words) <= BACKCHANNEL_WORDS and all(w in BACKCHANNELS for w in words)


# A transcript: the labels of TRANSCRIPT_SPEAKERS speakers or more, one of whom talks
# again, open TURN_SHARE of the lines that hold text or more
TRANSCRIPT_SPEAKERS = 2
TURN_SHARE = 0.5
# A short turn (an interviewer's "and then what") holds at most this many words after
# its label
SHORT_TURN_WORDS = 10


def speaker(text: str) -> Optional[str]:
    """The name in the speaker's label (``SPEAKER_LABEL``) that opens ``text``, in lower
    case (``"Ann Lee: ..."`` -> ``"ann lee"``, ``"[10:32] <bob> hi"`` -> ``"bob"``), or
    ``None``."""
    return label_name(SPEAKER_LABEL.match(text))


def label_name(found: Optional["re.Match[str]"]) -> Optional[str]:
    """The name in a match of ``SPEAKER_LABEL``, in lower case, or ``None``."""
    return None if found is None else (found.group("nick") or found.group("name")).lower()


def said_lines(text: str) -> List[Tuple[int, Optional[str], int]]:
    """Each line of ``text`` that holds text: the offset of its first character that is
    not white space, its ``speaker`` (or ``None``), and the number of words after the
    speaker's label (after none: all the line's words)."""
    out: List[Tuple[int, Optional[str], int]] = []
    offset = 0
    for line in text.splitlines(keepends=True):
        body = line.lstrip()
        if body.strip():
            found = SPEAKER_LABEL.match(body)
            words = len(body[found.end() if found else 0 :].split())
            out.append((offset + len(line) - len(body), label_name(found), words))
        offset += len(line)
    return out


def transcript_speakers(
    text: str, lines: Optional[Sequence[Tuple[int, Optional[str], int]]] = None
) -> Set[str]:
    """The speakers of a transcript, an interview or a chat log (names as ``speaker``
    gives them): the labels of ``TRANSCRIPT_SPEAKERS`` speakers or more open
    ``TURN_SHARE`` of the lines that hold text, and one of them opens two lines or more,
    as speakers talk in turn (``"A:"``, ``"B:"``, ``"A:"``). Empty elsewhere: a list of
    steps (``"Step 1:"``, ``"Step 2:"``) repeats no label, and a mail's header lines
    (``"From:"``, ``"Subject:"``) are few beside its body. ``lines``: ``said_lines`` of
    ``text``, where the caller has them."""
    if lines is None:
        lines = said_lines(text)
    counts = collections.Counter(name for _, name, _ in lines if name is not None)
    if len(counts) < TRANSCRIPT_SPEAKERS or max(counts.values()) < 2:
        return set()
    return set(counts) if sum(counts.values()) >= TURN_SHARE * len(lines) else set()


def leading_turns(text: str) -> Set[int]:
    """Where a transcript's short turns start that lead into a longer one: each line
    that opens with the label of a listener, one of ``transcript_speakers`` whose turns
    hold at most ``SHORT_TURN_WORDS`` words after the label (the median of them: an
    interviewer, a listener who says "mm-hmm"), holds at most that many itself and
    lies directly above a speaker's line that holds more (a question above its answer);
    the offset of the label's first character. Empty outside a transcript, and where
    every speaker talks at length (a meeting, whose short turns may end a topic)."""
    lines = said_lines(text)
    speakers = transcript_speakers(text, lines)
    if not speakers:
        return set()
    turns: Dict[str, List[int]] = collections.defaultdict(list)
    for _, name, words in lines:
        if name is not None:
            turns[name].append(words)
    listeners = {name for name in speakers if numpy.median(turns[name]) <= SHORT_TURN_WORDS}
    return {
        offset
        for (offset, name, words), (_, below, more) in zip(lines, lines[1:], strict=False)
        if name in listeners and below in speakers and words <= SHORT_TURN_WORDS < more
    }


def says_nothing(text: str) -> bool:
    """Whether a line's text says nothing of a topic: it has no letter or digit (a
    rule, ``"---"``, a scene break, ``"* * *"``), it is markup tags alone
    (``"</div></body>"``) or a reStructuredText directive, comment or target line
    (``".. _label:"``, ``".. note::"``), or it is a listener's ``backchannel`` in a
    transcript or a chat (``"B: mm-hmm"``)."""
    words = text.strip()
    return (
        not any(c.isalnum() for c in words)
        or TAGS_ONLY.fullmatch(words) is not None
        or DIRECTIVE_LINE.fullmatch(words) is not None
        or backchannel(words)
    )


# A page's front matter at the text's start: YAML's between lines of "---", TOML's
# between lines of "+++", the line after the opening one a "key:" or "key =" line
FRONT_MATTER = re.compile(rf"(---|\+\+\+)[ \t]*{NEXT_LINE}[ \t]*[A-Za-z_][\w-]*[ \t]*[:=]")
FRONT_MATTER_CLOSE = {
    mark: re.compile(rf"{LINE_END}{re.escape(mark)}[ \t]*(?={LINE_END}|\Z)")
    for mark in ("---", "+++")
}
# A subtitle cue's timing line (SubRip's "00:00:01,000 --> 00:00:04,000", WebVTT's
# "00:01.000 --> 00:04.000 line:0"), with the cue's number or identifier (one word:
# "12", "intro-3") on the line before it if it has one
CUE_TIME = r"(?:\d{1,2}:)?\d{2}:\d{2}[,.]\d{3}"
CUE_LINES = re.compile(
    LINE_START
    + rf"(?:[ \t]*(?![^\s]*-->)[^\s]+[ \t]*{NEXT_LINE})?"
    + rf"[ \t]*{CUE_TIME}[ \t]+-->[ \t]+{CUE_TIME}{IN_LINE}*",
    re.MULTILINE,
)
# A page's footer or header in text from PDF, which ends each page with a form feed:
# the line that a page break ends, the line after one or the text's first line (the
# first page's header), of at most RUNNING_WORDS words, where it is a page number ("12",
# "- 12 -", "Page 12 of 40", "p. 12", "xii": a roman number in lower case, as front
# matter numbers its pages) or its text, numbers aside, comes back on MIN_RUNNING_PAGES
# pages or more ("Annual Report 2023 | 12", "Chapter 3. Methods")
ROMAN_PAGE = r"(?=[ivx])x{0,3}(?:ix|iv|v?i{0,3})"
# (each run of spaces and tabs is one [ \t]* that only a dash, a word or a number ends,
# never two side by side: a line of many spaces is read once, not once per way of
# sharing them out)
PAGE_NUMBER = re.compile(
    rf"[ \t]*(?:(?:[Pp]age|[Pp]\.|[Pp]g\.?)[ \t]*)?(?:[-–—][ \t]*)?(?:\d{{1,4}}|{ROMAN_PAGE})"
    r"(?:[ \t]*[-–—])?(?:[ \t]*(?:of|/)[ \t]*\d{1,4})?[ \t]*"
)
RUNNING_WORDS = 12
MIN_RUNNING_PAGES = 3
# the fewest lines of a page that has a footer or a header (a form feed after every
# line ends lines, not pages)
MIN_PAGE_LINES = 2
PAGE_BREAK = "\x0c"
DIGITS = re.compile(r"\d+")


def number_shape(text: str) -> str:
    """``text`` with every run of digits written ``0``, so that numbers compare equal."""
    return DIGITS.sub("0", text)


def running_key(line: str) -> str:
    """What the copies of a running line share: its words in lower case, numbers aside
    (``number_shape``)."""
    return number_shape(" ".join(line.lower().split()))


# how a line of text that heads nothing ends: as a statement does (a question may be a
# heading: an FAQ's)
STATEMENT_END = re.compile(r"[.!:;,…]['\"”’)\]]*$")


# The depth each marked heading's own markup gives it (1 outermost), and its title
ATX = re.compile(rf"(#{{1,6}})[ \t]+({IN_LINE}*?)(?:[ \t]+#+)?[ \t]*")
HTML_TAG = re.compile(r"<[^<>]*>")
EQUALS_HEADING = re.compile(rf"((?:=[ \t]?){{1,6}})({IN_LINE}*?)[= \t]*")
ORG_STARS = re.compile(rf"(\*+)[ \t]+({IN_LINE}*)")
ORG_TITLE_LINE = re.compile(rf"(?i)#\+title:[ \t]*({IN_LINE}*)")


def heading_title(text: str, underline: str = "") -> Tuple[Union[int, str], str]:
    """``(depth, title)`` of a heading that ``sentences.heading_sentences`` marks
    (``text``: its sentence, stripped). ``depth`` is an int where the markup says how
    deep the heading is (Markdown's ``#`` count, HTML's ``<hN>``, MediaWiki's and
    AsciiDoc's ``=`` count, LaTeX's ``\\section`` under ``\\chapter``, Org's ``*``
    count, ``#+TITLE:`` 0); for a title under- (or over- and under-) lined, the
    adornment's style (``"-"``, ``"over ="``), whose depth is the order in which a page
    first uses it, as reStructuredText has it; 0 for a heading of no markup read here.
    The title is without its tags (``<em>``), its white space made single spaces.
    ``underline``: the sentence after it, which underlines a title that no mark makes a
    heading where it is a line of ``ADORNMENT``."""
    depth, title = _heading(text, underline)
    return depth, " ".join(HTML_TAG.sub("", title).split()) or " ".join(text.split())


def _heading(text: str, underline: str) -> Tuple[Union[int, str], str]:
    """``heading_title``'s depth and title, before the title's tags are taken out and
    its white space made single spaces."""
    lines = [line.strip() for line in LINE_BREAK.split(text) if line.strip()]
    if len(lines) == 3 and ADORNMENT.fullmatch(lines[0]) and ADORNMENT.fullmatch(lines[2]):
        return f"over {lines[2][0]}", lines[1]
    if len(lines) == 2 and ADORNMENT.fullmatch(lines[1]):
        return lines[1][0], lines[0]
    for pattern, depth in (
        (ATX, lambda m: len(m.group(1))),
        (HTML_HEADING, lambda m: int(m.group("level"))),
        (LATEX_HEADING, lambda m: LATEX_DEPTH[m.group("command")]),
        (EQUALS_HEADING, lambda m: m.group(1).count("=")),
        (ORG_STARS, lambda m: len(m.group(1))),
        (ORG_TITLE_LINE, lambda m: 0),
    ):
        found = pattern.fullmatch(text)
        if found is not None:
            return depth(found), found.group(found.lastindex or 0)
    if ADORNMENT.fullmatch(underline.strip()):
        return underline.strip()[0], text
    return 0, text


def overlined_title(block: str) -> bool:
    """Whether ``block`` is a title over- and underlined as reStructuredText writes one
    (``OVERLINED``): both rules at least as long as the title, which is no rule itself
    and does not end as a statement does (``"---"``, ``"Some prose here."``, ``"---"``
    are a Markdown page's rules around prose)."""
    found = OVERLINED.fullmatch(block.strip())
    if found is None:
        return False
    over, title, under = (line.strip() for line in LINE_BREAK.split(found.group()))
    return (
        ADORNMENT.fullmatch(title) is None
        and STATEMENT_END.search(title) is None
        and min(len(over), len(under)) >= len(title)
    )


def text_blocks(text: str, pages: Optional[Tuple[Lines, Lines]] = None) -> Lines:
    """``(start, end)`` character ranges of the blocks of ``text`` that are one sentence
    each, whatever their punctuation: a fenced code block (``fenced_code``: from the
    line that opens it to the end of the line that closes it, or to the end of the
    text), a reStructuredText literal block (``literal_blocks``), a Markdown heading
    line (``HEADING_LINE``), a Markdown table (a run of two or more ``TABLE_ROW`` lines,
    one of them its delimiter row), a delimited table (CSV, TSV:
    ``delimited_tables``), a reStructuredText directive, comment or target line
    (``DIRECTIVE_LINE``), an over- and underlined title (its three lines,
    ``overlined_title``), an underlined heading (its two lines,
    ``_underlined_heading``), an HTML comment or ``<pre>``, ``<script>`` or ``<style>``
    element on lines of its own (``html_blocks``), a line of HTML tags alone
    (``TAG_LINE``), a subtitle cue's number and timing lines (``CUE_LINES``) and a
    page's footer or header, an Org-mode page's settings, blocks and headings
    (``org_blocks``), the last ten outside code, and a page's front matter
    (``FRONT_MATTER``). Sorted, disjoint: a block inside another is part of it.
    ``pages``: the footers and headers (``page_lines(text)`` where None)."""
    blocks: List[Tuple[int, int]] = []
    for start, closing in fenced_code(text):
        line_end = LINE_BREAK.search(text, closing)
        blocks.append((start, len(text) if line_end is None else line_end.start()))
    blocks += literal_blocks(text)
    headings = [(m.start(), m.end()) for m in HEADING_LINE.finditer(text)]
    rows: List[Tuple[int, int]] = []
    for m in TABLE_ROW.finditer(text):
        if rows and next_line(text, rows[-1][1], m.start()):
            rows[-1] = (rows[-1][0], m.end())  # the next row of the same run
        else:
            rows.append((m.start(), m.end()))
    tables = [
        (start, end)
        for start, end in rows
        if LINE_BREAK.search(text, start, end)
        and any(map(TABLE_DELIMITER.fullmatch, LINE_BREAK.split(text[start:end])))
    ]
    directives = [(m.start(), m.end()) for m in DIRECTIVE_LINE.finditer(text)]
    titles = [
        (m.start(), m.end()) for m in OVERLINED_LINES.finditer(text) if overlined_title(m.group())
    ]
    cues = [(m.start(), m.end()) for m in CUE_LINES.finditer(text)]
    tags = [(m.start(), m.end()) for m in TAG_LINE.finditer(text)]
    footers, headers = page_lines(text) if pages is None else pages
    found = headings + titles + tables + directives + cues + tags + footers + headers
    found += html_blocks(text)
    org, org_headings = org_blocks(text)
    found += delimited_tables(text) + org + org_headings
    front = FRONT_MATTER.match(text)
    if front is not None:
        close = FRONT_MATTER_CLOSE[front.group(1)].search(text, front.end())
        blocks += [(0, close.end())] if close is not None else []
    # (the other blocks' starts, and the furthest any of them up to each reaches)
    marked = sorted(found + blocks)
    reach = (
        [a for a, _ in marked],
        list(itertools.accumulate((b for _, b in marked), max)),
    )
    found += [
        (m.start(), m.end())
        for m in UNDERLINED_LINES.finditer(text)
        if _underlined_heading(text, m, reach)
    ]
    code = in_code(text, sorted(start for start, _ in found))
    outside = [span for span, in_block in zip(sorted(found), code, strict=True) if not in_block]
    # (a block inside another, such as a heading line in a comment, is part of it)
    out: List[Tuple[int, int]] = []
    for a, b in sorted(blocks + outside, key=lambda span: (span[0], -span[1])):
        if not out or a >= out[-1][1]:
            out.append((a, b))
    return out


def html_blocks(text: str) -> List[Tuple[int, int]]:
    """``(start, end)`` character ranges of the HTML comments and ``<pre>``, ``<script>``
    and ``<style>`` elements of ``text`` that open a line (``HTML_BLOCK_OPEN``) and end
    theirs (``HTML_BLOCK_END``); one that runs into text after its end is none. Linear
    in the text: each block is read once, and once one kind finds no end, no later
    opening of that kind is read."""
    out: List[Tuple[int, int]] = []
    unclosed: Set[str] = set()
    position = 0
    while (found := HTML_BLOCK_OPEN.search(text, position)) is not None:
        kind = (found.group(1) or "").lower()
        close = None if kind in unclosed else HTML_BLOCK_CLOSE[kind].search(text, found.end())
        if close is None:
            unclosed.add(kind)
            position = found.end()
            continue
        position = close.end()
        after = HTML_BLOCK_END.match(text, position)
        if after is not None:
            out.append((found.start(), after.end(1)))
    return out


def page_lines(text: str) -> Tuple[Lines, Lines]:
    """``(footers, headers)``: ``(start, end)`` character ranges (whitespace stripped)
    of the lines of ``text`` that a page break ends, of those right after one and of
    its first line (the first page's header), where they are a page's footer or header
    (``PAGE_NUMBER``, or a line that comes back on ``MIN_RUNNING_PAGES`` pages or more,
    numbers aside; at most ``RUNNING_WORDS`` words), on a page of ``MIN_PAGE_LINES``
    lines or more. Linear in the text."""
    if PAGE_BREAK not in text:
        return [], []
    ends = list(LINE_BREAK.finditer(text))
    starts = [0, *(m.end() for m in ends)]
    stops = [m.start() for m in ends] + [len(text)]
    # the line indexes of the page breaks, and of the text's end
    pages = [k for k, line_end in enumerate(ends) if PAGE_BREAK in line_end.group()]
    pages.append(len(ends))
    candidates: List[Tuple[bool, int, int]] = []  # (footer, start, end)
    if pages[0] + 1 >= MIN_PAGE_LINES:  # (the first page's header: the text's first line)
        candidates.append((False, starts[0], stops[0]))
    for before, k, after in zip([-1, *pages[:-2]], pages[:-1], pages[1:], strict=True):
        if k - before >= MIN_PAGE_LINES:
            candidates.append((True, starts[k], stops[k]))
        if after - k >= MIN_PAGE_LINES:
            candidates.append((False, starts[k + 1], stops[k + 1]))
    keys = [running_key(text[a:b]) for _, a, b in candidates]
    counts = collections.Counter(keys)
    footers: List[Tuple[int, int]] = []
    headers: List[Tuple[int, int]] = []
    for (footer, a, b), key in zip(candidates, keys, strict=True):
        n_words = len(key.split())
        if not 0 < n_words <= RUNNING_WORDS:
            continue
        if counts[key] >= MIN_RUNNING_PAGES or PAGE_NUMBER.fullmatch(text, a, b):
            line = text[a:b]
            a, b = a + len(line) - len(line.lstrip()), b - len(line) + len(line.rstrip())
            (footers if footer else headers).append((a, b))
    return footers, headers


# Pages joined without a form feed (``pypdf``'s text, pages joined by line breaks or
# blank lines): a line of at most RUNNING_WORDS words whose text, numbers aside, comes
# back on MIN_RUNNING_PAGES lines or more, MIN_RUNNING_GAP lines or more apart (blank
# lines aside), each gap within RUNNING_GAP_SPREAD times the median one (pages of about
# one length: a list's items or an e-mail's signatures are not spaced that evenly).
MIN_RUNNING_GAP = 5
RUNNING_GAP_SPREAD = 1.5
# a line with text: its indentation (group 1) and its text, whitespace stripped (group 2)
LINE_TEXT = re.compile(rf"{LINE_START}({IN_LINE_SPACE}*)(\S(?:{IN_LINE}*\S)?)", re.MULTILINE)


def running_lines(text: str) -> Tuple[Lines, Lines]:
    """``(footers, headers)`` as ``page_lines`` gives them, for text without page
    breaks: the lines that recur as a page's footer or header would
    (``MIN_RUNNING_GAP``, ``RUNNING_GAP_SPREAD``). With no page break to tell the two
    apart, a line whose numbers change between its copies (a page number) is a footer,
    one that stays the same (a running title) a header. Only text that is hard-wrapped
    has such lines (a caller's test): in a log or a list, a line that recurs is an
    entry. Linear in the text."""
    found: Dict[str, List[Tuple[int, int, int]]] = collections.defaultdict(list)
    # (k: the line's place among the text's lines with text)
    for k, line in enumerate(LINE_TEXT.finditer(text)):
        a, b = line.span(2)
        if line.group(1) or HEADING_MARK.match(text, a) or MEDIAWIKI.match(text, a):
            continue  # an indented line (code, a quotation, a list's item) or a heading
        n_words = len(text[a:b].split())
        if n_words <= RUNNING_WORDS and any(c.isalnum() for c in text[a:b]):
            found[running_key(text[a:b])].append((k, a, b))
    footers: List[Tuple[int, int]] = []
    headers: List[Tuple[int, int]] = []
    for lines in found.values():
        numbers = {tuple(DIGITS.findall(text[a:b])) for _, a, b in lines}
        if not _evenly_spaced(lines):
            # the page numbers among other copies, or a title's copies but its strays
            lines = _counting(text, lines) if len(numbers) > 1 else _spaced(lines)
            if not _evenly_spaced(lines):
                continue
        (footers if len(numbers) > 1 else headers).extend((a, b) for _, a, b in lines)
    return sorted(footers), sorted(headers)


def _evenly_spaced(lines: Sequence[Tuple[int, int, int]]) -> bool:
    """Whether ``lines`` (``(line index, start, end)``, in order) are copies of a
    running line: ``MIN_RUNNING_PAGES`` or more, ``MIN_RUNNING_GAP`` lines or more apart,
    each gap within ``RUNNING_GAP_SPREAD`` times the median one."""
    if len(lines) < MIN_RUNNING_PAGES:
        return False
    gaps = numpy.diff([k for k, _, _ in lines])
    middle = float(numpy.median(gaps))
    shortest = max(MIN_RUNNING_GAP, middle / RUNNING_GAP_SPREAD)
    return bool(gaps.min() >= shortest and gaps.max() <= RUNNING_GAP_SPREAD * middle)


# A running title's copies may leave out STRAY_SHARE of them (at least one): copies of
# the same line elsewhere (a line that quotes it, a table of contents' line), looked
# for among the STRAY_REACH copies before each kept one
STRAY_SHARE = 0.25
STRAY_REACH = 4


def _spaced(lines: Sequence[Tuple[int, int, int]]) -> List[Tuple[int, int, int]]:
    """The copies of a running title among ``lines`` (in order) where copies of the same
    text elsewhere broke its even spacing: the longest chain whose gaps are each within
    ``RUNNING_GAP_SPREAD`` of a page's length (of two, the one from the first copy, to
    the last, whose gaps are nearer it: in that order), or none where it would leave
    out more than ``STRAY_SHARE`` of the copies, or keep fewer than
    ``MIN_RUNNING_PAGES`` and one more per copy left out (a line that recurs unevenly,
    a letter's signature, leaves few). A page's length: the median gap but the
    shortest ones that strays can have cut from the others. A sort of the gaps, then
    ``STRAY_REACH`` steps a copy."""
    places = [k for k, _, _ in lines]
    strays = max(1, int(STRAY_SHARE * len(places)))
    gaps = sorted(numpy.diff(places).tolist())[strays:]
    if not gaps:
        return []
    page = float(numpy.median(gaps))
    shortest = max(MIN_RUNNING_GAP, page / RUNNING_GAP_SPREAD)
    longest = RUNNING_GAP_SPREAD * page
    # per copy, the best chain that ends there: (its length, whether it starts at the
    # first copy, minus its gaps' distance from a page's length) and the copy before it
    best = [(1, i == 0, 0.0) for i in range(len(places))]
    parent = [-1] * len(places)
    for i, place in enumerate(places):
        for j in range(max(0, i - STRAY_REACH), i):
            gap = place - places[j]
            score = (best[j][0] + 1, best[j][1], best[j][2] - abs(gap - page))
            if shortest <= gap <= longest and score > best[i]:
                best[i], parent[i] = score, j
    last = len(places) - 1
    chain = [max(range(len(places)), key=lambda i: (*best[i][:2], i == last, best[i][2]))]
    while parent[chain[-1]] >= 0:
        chain.append(parent[chain[-1]])
    left_out = len(places) - len(chain)
    if left_out > strays or len(chain) < MIN_RUNNING_PAGES + left_out:
        return []
    return [lines[i] for i in reversed(chain)]


# the most digits of a number that may count pages
PAGE_DIGITS = 6


def _counting(text: str, lines: Sequence[Tuple[int, int, int]]) -> List[Tuple[int, int, int]]:
    """The longest run of ``lines`` (in order) in which one of the numbers counts up by
    one from copy to copy, as page numbers do (``"Page 3 of 40"``: the first), where a
    copy of the same text elsewhere (a page's last line that happens to read ``"2"``)
    broke the even spacing. Linear in the number of lines."""
    rows = [DIGITS.findall(text[a:b]) for _, a, b in lines]
    best: List[int] = []
    for j in range(min(map(len, rows), default=0)):
        length = [0] * len(rows)
        parent = [-1] * len(rows)
        last: Dict[int, int] = {}  # a number -> the copy that ends the longest run at it
        for i, row in enumerate(rows):
            if len(row[j]) > PAGE_DIGITS:
                continue
            value = int(row[j])
            before = last.get(value - 1)
            length[i] = 1 if before is None else length[before] + 1
            parent[i] = -1 if before is None else before
            if value not in last or length[i] > length[last[value]]:
                last[value] = i
        end = int(numpy.argmax(length))
        if length[end] > len(best):
            run = [end]
            while parent[run[-1]] >= 0:
                run.append(parent[run[-1]])
            best = run[::-1]
    return [lines[i] for i in best]


def _underlined_heading(
    text: str, found: "re.Match[str]", blocks: Tuple[List[int], List[int]]
) -> bool:
    """Whether an ``UNDERLINED_LINES`` match is a heading: its first line is no
    adornment itself, does not end as a statement does (``STATEMENT_END``: "Thank you."
    above a rule ends a letter), follows a blank line or starts the text (the
    last line of a paragraph above a rule is no heading of its own), and the two lines
    overlap none of the other blocks (``blocks``: their sorted starts, and the furthest
    end of each one and those before it)."""
    a, b = found.span()
    title = LINE_BREAK.split(text[a:b], maxsplit=1)[0].strip()
    if ADORNMENT.fullmatch(title) or STATEMENT_END.search(title):
        return False
    before = a
    while before > 0 and text[before - 1].isspace():
        before -= 1
    if before > 0 and not BLANK_LINE.search(text, before, a):
        return False
    starts, reach = blocks
    k = bisect.bisect_left(starts, b)
    return k == 0 or reach[k - 1] <= a
