"""A topic-segmentation set built from the repository's data: documents that concatenate
3-11-sentence pieces of unrelated texts, with no paragraph breaks.

Texts are the WikiText-2 articles of one half (each article one text) and the UD EWT
documents of one part with at least three sentences. A document takes ``n_pieces``
different texts; from each a run of 3-11 consecutive sentences (fewer if the text is
shorter). The pieces are joined by single spaces (or by ``separator``: a blank line
makes each piece a paragraph). ``treebank_pieces`` builds documents of the same kind from
any CoNLL-U files (the held-out GUM pieces).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, List, Sequence, TypeVar, Union

from spacy_attnseg.gold import read_conllu_documents

from .evaluation import load_splitter, split_texts

T = TypeVar("T")


def half_of(items: Sequence[T], half: str) -> List[T]:
    """The first half of ``items`` for "tune", the second (the larger where their number
    is odd) for "report": the topic sets' split."""
    middle = len(items) // 2
    return list(items[:middle] if half == "tune" else items[middle:])


@dataclass
class TopicDocument:
    """A document's text and the character offsets where its reference segments start
    (0 first)."""

    text: str
    starts: List[int]


def join_segments(segments: Sequence[Sequence[str]], separator: str) -> TopicDocument:
    """One document of ``segments`` (each a list of paragraphs), every paragraph stripped
    and joined by ``separator``; a reference segment starts at each segment's first
    paragraph."""
    parts: List[str] = []
    starts: List[int] = []
    offset = 0
    for paragraphs in segments:
        starts.append(offset)
        for paragraph in paragraphs:
            parts.append(paragraph.strip())
            offset += len(parts[-1]) + len(separator)
    return TopicDocument(separator.join(parts), starts)


def build(
    texts: Sequence[Sequence[str]],
    *,
    n_docs: int,
    n_pieces: int = 10,
    seed: int = 0,
    separator: str = " ",
) -> List[TopicDocument]:
    """``n_docs`` documents of ``n_pieces`` pieces from the sentence lists ``texts``, the
    pieces joined by ``separator`` (a blank line: each piece a paragraph). ``ValueError``
    where fewer than ``n_pieces`` texts have three sentences or more."""
    rng = random.Random(seed)
    usable = [list(t) for t in texts if len(t) >= 3]
    if len(usable) < n_pieces:
        raise ValueError(
            f"{len(usable)} texts of three sentences or more, where {n_pieces} pieces of "
            f"different texts need {n_pieces}"
        )
    docs = []
    for _ in range(n_docs):
        parts: List[str] = []
        starts: List[int] = []
        offset = 0
        for index in rng.sample(range(len(usable)), n_pieces):
            sentences = usable[index]
            n = min(len(sentences), rng.randint(3, 11))
            first = rng.randint(0, len(sentences) - n)
            piece = " ".join(s.strip() for s in sentences[first : first + n])
            starts.append(offset)
            parts.append(piece)
            offset += len(piece) + len(separator)
        docs.append(TopicDocument(separator.join(parts), starts))
    return docs


def section_pieces(
    texts: Iterable[Sequence[Sequence[str]]], *, n_docs: int, seed: int
) -> List[TopicDocument]:
    """``build``'s documents of ten pieces from ``texts`` given as sections of paragraphs,
    each paragraph split into sentences by NLTK Punkt."""
    split = load_splitter("punkt")
    sentences = [
        [s for section in text for paragraph in section for s in split_texts(paragraph, split)]
        for text in texts
    ]
    return build(sentences, n_docs=n_docs, seed=seed)


def treebank_pieces(
    paths: Sequence[Union[str, Path]], *, n_docs: int, seed: int = 9
) -> List[TopicDocument]:
    """``build``'s documents of ten pieces from the documents of the CoNLL-U files
    ``paths`` (each ``# newdoc`` a text, its gold sentences the sentences): pieces of
    unrelated texts of whatever genres the treebank holds. ``build``'s ``ValueError``,
    naming the files, where too few of its documents have three sentences or more."""
    texts = [doc.sentences() for path in paths for doc in read_conllu_documents(path)]
    try:
        return build(texts, n_docs=n_docs, seed=seed)
    except ValueError as error:
        raise ValueError(f"{', '.join(map(str, paths))}: {error}") from None
