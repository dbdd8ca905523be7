"""Full-length English Wikipedia articles (``data/wikipedia``, made by
``scripts/make_wikipedia_set.py`` from the shortened dump that gensim ships as test data)
as a topic-segmentation set of sections of one article: 84 articles of 333-13,979 words
and 3-16 sections, longer and more varied than WikiText-2's (which are good and
featured articles). A document is one article, its reference segments the lead and
each top-level section. First half (by the dump's order) tuning, second half report.
The same articles also make documents of 3-11-sentence pieces of different articles
(``piece_docs``), as the WikiText pieces are made.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Dict, List

from .synthetic import TopicDocument, half_of, join_segments, section_pieces

ROOT = Path(__file__).resolve().parents[1]
ARTICLES = ROOT / "data" / "wikipedia" / "articles.jsonl.gz"


def read_articles(path: Path = ARTICLES) -> List[Dict[str, Any]]:
    """Each article as ``{"title", "sections": [{"heading", "paragraphs"}]}``."""
    with gzip.open(path, "rt", encoding="utf8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def section_docs(half: str, separator: str = " ", path: Path = ARTICLES) -> List[TopicDocument]:
    """One document per article of ``half`` (``half_of``: "tune" the first half,
    "report" the second), its paragraphs joined by ``separator``; the reference segments
    are its sections."""
    return [
        join_segments([section["paragraphs"] for section in a["sections"]], separator)
        for a in half_of(read_articles(path), half)
    ]


def piece_docs(half: str, n_docs: int, path: Path = ARTICLES) -> List[TopicDocument]:
    """``n_docs`` documents of ten 3-11-sentence pieces of different articles of ``half``,
    joined by spaces (``paper.synthetic.section_pieces``, as the WikiText pieces are made;
    each paragraph's sentences by punkt): pieces of unrelated texts, from articles longer
    and more varied than WikiText-2's."""
    articles = half_of(read_articles(path), half)
    sections = ([s["paragraphs"] for s in a["sections"]] for a in articles)
    return section_pieces(sections, n_docs=n_docs, seed=7 if half == "tune" else 8)
