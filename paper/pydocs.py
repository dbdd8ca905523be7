"""Python's own documentation (reST sources of its HOWTOs, tutorial, FAQ and guides,
``data/python-docs``) as a topic-segmentation set of another kind than the tuning sets:
technical prose, sections of one page, and pieces of different pages.

A page's **sections** are its text under the title and under each top-level heading (a
heading is a line of text underlined, and possibly overlined, by a run of one of
``= - ~ ^ * # + ` ' "``; an overlined one may be indented; the first style seen is the
title, the second the top level, deeper ones stay inside their section). A
**paragraph** is a run of unindented, non-blank lines; code (indented blocks, ``>>>``
sessions), directives (``.. name::``), tables and paragraphs that are not prose (fewer
than 8 words, or no final ``. ! ?``, as a paragraph that introduces code with ``::`` has
not) are left out. Inline markup is reduced to its text (``:func:`sorted``` ->
``sorted``, ```text <url>`_`` -> ``text``, ``**bold**`` -> ``bold``), and a list
item's marker is dropped. Pages with fewer than three sections or eight paragraphs are
left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from .synthetic import TopicDocument, join_segments, section_pieces

ROOT = Path(__file__).resolve().parents[1]
PYDOCS = ROOT / "data" / "python-docs"
ADORNMENT = re.compile(r"^([=\-~^*#+`'\"])\1{2,}\s*$")
LIST_MARKER = re.compile(r"^(?:[*\-+] |\d+\. |#\. )")
INLINE: Tuple[Tuple[str, str], ...] = (
    (r":[a-z:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", r"\1"),  # :role:`text <target>`
    (r"`([^`<]*?)\s*<[^>]*>`_+", r"\1"),  # `text <url>`_
    (r"``([^`]*)``", r"\1"),
    (r"`([^`]*)`_*", r"\1"),
    (r"\*\*([^*]*)\*\*", r"\1"),
    (r"\*([^*]*)\*", r"\1"),
    (r"\s*\[(?:#|\d+)\]_", ""),  # footnote references
)
MIN_WORDS = 8
MIN_SECTIONS = 3
MIN_PARAGRAPHS = 8


@dataclass
class Page:
    """A page's path under ``data/python-docs`` and its sections, each a list of
    paragraphs."""

    name: str
    sections: List[List[str]]


def plain(text: str) -> str:
    """``text`` without inline markup, a list marker or runs of whitespace."""
    text = LIST_MARKER.sub("", text.strip())
    for pattern, replacement in INLINE:
        text = re.sub(pattern, replacement, text)
    return re.sub(r"\s+", " ", text).strip()


def heading_style(lines: Sequence[str], i: int) -> Optional[Tuple[str, bool]]:
    """If line ``i`` is a heading's text (underlined at least as long, and unindented
    unless it is overlined too: a title's text may be centred), its style: the
    underline's character and whether it is overlined; else None."""
    line = lines[i]
    if i + 1 >= len(lines) or not line.strip() or ADORNMENT.match(line):
        return None
    overlined = i > 0 and bool(ADORNMENT.match(lines[i - 1]))
    under = lines[i + 1].strip()
    if (line[0].isspace() and not overlined) or not ADORNMENT.match(under):
        return None
    return (under[0], overlined) if len(under) >= len(line.strip()) else None


def parse(text: str) -> List[List[str]]:
    """The sections of one reST page, each a list of prose paragraphs (empty sections
    dropped)."""
    lines = text.splitlines()
    styles: List[Tuple[str, bool]] = []
    sections: List[List[str]] = [[]]
    paragraph: List[str] = []

    def end_paragraph() -> None:
        if paragraph:
            prose = plain(" ".join(paragraph))
            paragraph.clear()
            if len(prose.split()) >= MIN_WORDS and prose[-1] in ".!?":
                sections[-1].append(prose)

    i = 0
    while i < len(lines):
        line = lines[i]
        style = heading_style(lines, i)
        if style is not None:
            end_paragraph()
            if style not in styles:
                styles.append(style)
            if styles.index(style) <= 1:
                sections.append([])
            i += 2
            continue
        code = line[:1].isspace() or line.startswith((".. ", ">>>", "|", "+-", "=="))
        if not line.strip() or code or ADORNMENT.match(line):
            end_paragraph()
        else:
            paragraph.append(line.strip())
        i += 1
    end_paragraph()
    return [section for section in sections if section]


def read_pages(root: Path = PYDOCS) -> List[Page]:
    """The pages under ``root`` (``*.rst.txt``, sorted by path) that have at least
    three sections and eight paragraphs."""
    pages = []
    for path in sorted(root.rglob("*.rst.txt")):
        if path.parent == root:  # the licence and copyright pages
            continue
        sections = parse(path.read_text(encoding="utf8"))
        if len(sections) >= MIN_SECTIONS and sum(map(len, sections)) >= MIN_PARAGRAPHS:
            pages.append(Page(path.relative_to(root).as_posix(), sections))
    return pages


def section_docs(separator: str = " ", root: Path = PYDOCS) -> List[TopicDocument]:
    """One document per page, its paragraphs joined by ``separator``; the reference
    segments are its sections."""
    return [join_segments(page.sections, separator) for page in read_pages(root)]


def piece_docs(n_docs: int, seed: int = 11, root: Path = PYDOCS) -> List[TopicDocument]:
    """Documents of ten 3-11-sentence pieces of different pages
    (``paper.synthetic.section_pieces``)."""
    return section_pieces((page.sections for page in read_pages(root)), n_docs=n_docs, seed=seed)
