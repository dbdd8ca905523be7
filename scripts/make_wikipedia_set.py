"""Build ``data/wikipedia/articles.jsonl.gz`` (``paper.wikipedia``) from the shortened
English Wikipedia dump that gensim ships as test data: full-length articles as a
topic-segmentation set whose reference segments are each article's lead and top-level
sections.

    pip download --no-deps gensim==4.4.0 -d /tmp/gensim
    python scripts/make_wikipedia_set.py /tmp/gensim/gensim-4.4.0-*.whl

Kept: articles that are not redirects, disambiguation pages or lists. An article's text is
split at its level-2 headings (deeper headings stay inside their section, their lines
dropped); tables, comments, templates, references, maths, galleries and file, image,
category and interlanguage links are removed, and the rest reduced to its text by
mwparserfromhell (``requirements-baselines.txt``). A **paragraph** is a line of prose:
not a list item, indented line or table row, at least 8 words, ending in ``. ! ?`` or a
closing quote. Sections without paragraphs are dropped (See also, References and the like
hold none), then articles with fewer than three sections or eight paragraphs.
"""

from __future__ import annotations

import argparse
import bz2
import contextlib
import gzip
import html
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.wikipedia import ARTICLES  # noqa: E402

MEMBER = (
    "gensim/test/test_data/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"
)
DROPPED_TAGS = {
    "ref",
    "references",
    "gallery",
    "math",
    "timeline",
    "imagemap",
    "score",
    "chem",
    "ce",
    "syntaxhighlight",
    "source",
    "pre",
    "code",
    "blockquote",
    "poem",
}
NON_TEXT_LINK = re.compile(r"^(?:file|image|category|media|[a-z\-]{2,12}):", re.I)
MIN_WORDS, MIN_SECTIONS, MIN_PARAGRAPHS = 8, 3, 8


def pages(xml: str) -> Iterator[Tuple[str, str]]:
    """(title, wikitext) of each page of a MediaWiki XML dump."""
    for page in re.findall(r"<page>(.*?)</page>", xml, re.S):
        text = re.search(r"<text[^>]*>(.*?)</text>", page, re.S)
        title = re.search(r"<title>(.*?)</title>", page)
        if text and title:
            yield html.unescape(title.group(1)), html.unescape(text.group(1))


def paragraphs(wikitext: str) -> List[str]:
    """The prose paragraphs of one section's wikitext."""
    import mwparserfromhell

    code = mwparserfromhell.parse(wikitext)
    for link in code.filter_wikilinks():
        if NON_TEXT_LINK.match(str(link.title).strip()):
            _remove(code, link)
    for tag in code.filter_tags():
        if str(tag.tag).lower() in DROPPED_TAGS:
            _remove(code, tag)
    for template in code.filter_templates(recursive=False):
        _remove(code, template)
    kept = []
    for line in code.strip_code(normalize=True, collapse=True).split("\n"):
        line = line.strip()
        if not line or line[0] in "|{!=<":
            continue
        line = re.sub(r"'{2,}", "", line)
        line = re.sub(r"\(\s*[,;:\s]*\)", "", line)  # what is left of a removed template
        line = re.sub(r"\([,;\s]+", "(", line)
        line = re.sub(r"\s+([,.;:])", r"\1", line)
        line = re.sub(r"\s+", " ", line).strip()
        prose = line[-1] in ".!?\"'”’" and not set(line) & set("{}|")
        if len(line.split()) >= MIN_WORDS and prose:
            kept.append(line)
    return kept


def _remove(code: Any, node: Any) -> None:
    with contextlib.suppress(ValueError):  # already gone with the node it was inside
        code.remove(node)


def sections(wikitext: str) -> List[Dict[str, Any]]:
    """The lead and each top-level section of a page that holds prose, as
    ``{"heading", "paragraphs"}`` (the lead's heading None)."""
    import mwparserfromhell

    wikitext = re.sub(r"\{\|.*?\|\}", "", wikitext, flags=re.S)  # tables
    wikitext = re.sub(r"<!--.*?-->", "", wikitext, flags=re.S)
    # references (which may run over lines), also where markup around them keeps the
    # parser from reading the tag
    wikitext = re.sub(r"<ref[^>]*/>|<ref[^>]*>.*?</ref>", "", wikitext, flags=re.S)
    wikitext = re.sub(r"^[*#:;].*$", "", wikitext, flags=re.M)  # list items, indented lines
    found = []
    code = mwparserfromhell.parse(wikitext)
    for k, section in enumerate(code.get_sections(levels=[2], include_lead=True)):
        headings = section.filter_headings(recursive=False)
        heading = str(headings[0].title).strip() if k and headings else None
        body = re.sub(r"^=+[^=\n].*?=+\s*$", "", str(section), flags=re.M)
        kept = paragraphs(body)
        if kept:
            found.append({"heading": heading, "paragraphs": kept})
    return found


def article(title: str, wikitext: str) -> Dict[str, Any]:
    """{"title", "sections"} of one page, or {} where the page is a redirect, a
    disambiguation page or a list, or has too little prose."""
    lowered = wikitext.lower()
    if (
        lowered.lstrip().startswith("#redirect")
        or "disambiguation" in title.lower()
        or title.startswith("List of")
        or "{{disambig" in lowered
    ):
        return {}
    found = sections(wikitext)
    enough = sum(len(s["paragraphs"]) for s in found) >= MIN_PARAGRAPHS
    return {"title": title, "sections": found} if len(found) >= MIN_SECTIONS and enough else {}


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheel", type=Path, help="gensim-4.4.0-*.whl (pip download gensim)")
    parser.add_argument("--out", type=Path, default=ARTICLES)
    args = parser.parse_args(argv)
    with zipfile.ZipFile(args.wheel) as wheel:
        xml = bz2.decompress(wheel.read(MEMBER)).decode("utf8")
    kept = [a for a in (article(t, w) for t, w in pages(xml)) if a]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(a, ensure_ascii=False) + "\n" for a in kept)
    # no name or time in the header: the same input gives the same bytes
    with args.out.open("wb") as out, gzip.GzipFile("", "wb", fileobj=out, mtime=0) as raw:
        raw.write(lines.encode("utf8"))
    words = sum(len(p.split()) for a in kept for s in a["sections"] for p in s["paragraphs"])
    print(f"{len(kept)} articles, {words} words -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
