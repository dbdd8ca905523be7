"""WikiText raw files: articles, their sections and their paragraphs. The one reader of
the reproduction's windows (``paper.corpus``), the segmentation evaluations and the
boundary training data.

* A **heading** is a line `` = Title = `` (level 1: an article starts), `` = = Section = = ``
  (level 2) and so on, whose opening and closing runs of ``=`` match and which at least
  three blank lines follow (WikiText's layout; a line of prose such as
  `` = 1 henry and capacitance C = `` in a formula is followed by fewer).
* **Escapes** ``@-@``, ``@,@`` and ``@.@`` join their neighbours (``1 @,@ 000`` becomes
  ``1,000``); WikiText's spaces around punctuation are kept unless ``readable``.
* A **paragraph** is one non-blank line that is not a heading; text before the first
  article heading is left out, as are sections and articles without paragraphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence, Tuple, Union

ESCAPES: Tuple[Tuple[str, str], ...] = ((" @-@ ", "-"), (" @,@ ", ","), (" @.@ ", "."))
HEADING = re.compile(r"^\s*(=(?: =)*) ([^=].*?) (=(?: =)*)\s*$")
MIN_BLANKS_AFTER_HEADING = 3


@dataclass
class Article:
    """An article's title and its sections (the lead first), each a list of paragraphs,
    and each section's heading (the lead's: the title; empty where not read)."""

    title: str
    sections: List[List[str]]
    headings: List[str] = field(default_factory=list)


def detokenize(line: str, *, readable: bool = False) -> str:
    """Undo WikiText's escapes and strip the line; with ``readable`` also its spaces
    before closing and after opening punctuation, inside quotes and before clitics."""
    text = f" {line.strip()} "
    for escaped, plain in ESCAPES:
        text = text.replace(escaped, plain)
    text = text.strip()
    if readable:
        text = re.sub(r'" ([^"]*?) "', r'"\1"', text)
        text = re.sub(r" ([.,;:!?%)\]}])", r"\1", text)
        text = re.sub(r"([(\[{$]) ", r"\1", text)
        text = re.sub(r" (n't|'s|'re|'ve|'m|'ll|'d)\b", r"\1", text)
        text = re.sub(r"\s+", " ", text).strip()
    return text


def heading(lines: Sequence[str], i: int) -> Optional[Tuple[int, str]]:
    """``(level, title)`` if ``lines[i]`` is a heading."""
    match = HEADING.match(lines[i])
    if not match or match.group(1) != match.group(3):
        return None
    j = i + 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j - i - 1 < MIN_BLANKS_AFTER_HEADING and j < len(lines):
        return None
    return match.group(1).count("="), match.group(2)


def read_articles(
    source: Union[Path, str, Sequence[str]], *, subsections: bool = False, readable: bool = False
) -> List[Article]:
    """The articles of a WikiText file (a path) or of its lines. Sections are the level-2
    headings (every level with ``subsections``)."""
    if isinstance(source, (str, Path)):
        lines: Sequence[str] = Path(source).read_text(encoding="utf8").split("\n")
    else:
        lines = list(source)
    articles: List[Article] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        found = heading(lines, i)
        if found is not None:
            level, title = found
            if level == 1:
                articles.append(Article(title, [[]], [detokenize(title, readable=readable)]))
            elif articles and (level == 2 or subsections):
                articles[-1].sections.append([])
                articles[-1].headings.append(detokenize(title, readable=readable))
            continue
        if articles:
            articles[-1].sections[-1].append(detokenize(line, readable=readable))
    out = []
    for article in articles:
        pairs = zip(article.headings, article.sections, strict=True)
        kept = [(h, section) for h, section in pairs if section]
        if kept:
            out.append(Article(article.title, [s for _, s in kept], [h for h, _ in kept]))
    return out
