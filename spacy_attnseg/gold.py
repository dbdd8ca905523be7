"""Gold sentence boundaries from CoNLL-U files, as documents and as spaCy ``Example``s.

A ``# newdoc`` comment starts a document; each sentence's text is its ``# text`` comment
(rebuilt from the token rows when missing); a document's text is its sentences joined by
single spaces. Used by ``calibrate`` and by every boundary evaluation of the project.
"""

from __future__ import annotations

import bisect
import gzip
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Sequence, Union

from spacy.language import Language
from spacy.training import Example

PathLike = Union[str, Path]


@dataclass
class GoldDocument:
    """One document's text and the character offsets where its sentences start."""

    text: str
    starts: List[int]

    def sentences(self) -> List[str]:
        """The text of every sentence, stripped."""
        ends = [*self.starts[1:], len(self.text)]
        return [self.text[a:b].strip() for a, b in zip(self.starts, ends, strict=True)]


_TEXT_COMMENT = re.compile(r"^#\s*text\s*=\s?(.*)$")
_NEWDOC_COMMENT = re.compile(r"^#\s*newdoc\b")
_NEWPAR_COMMENT = re.compile(r"^#\s*newpar\b")
_INT_ID = re.compile(r"^\d+$")
_RANGE_ID = re.compile(r"^(\d+)-(\d+)$")

# A sentence-final run of . ! ? followed only by closing quotes/brackets and
# whitespace. Group 1 keeps the closers.
_FINAL_PUNCT = re.compile(r"[.!?]+([\"'\u201d\u2019\u00bb)\]}]*)\s*$")
# Punctuation and symbols, except an apostrophe or hyphen inside a word ("don't", "e-mail").
_ANY_PUNCT = re.compile(r"(?<!\w)['\u2019-]|['\u2019-](?!\w)|[^\w\s'\u2019-]|_")


def strip_final_punctuation(sentence: str) -> str:
    """Remove a sentence's final run of ``.``, ``!``, ``?``.

    Closing quotes and brackets after the run are kept (``'said "yes!"'`` ->
    ``'said "yes"'``, ``"(really?)"`` -> ``"(really)"``); a run that is not at
    the end (``"wow! :)"``) is left alone. Trailing whitespace is removed. The
    text is not lowercased here; :func:`read_conllu_documents` does that.
    """
    return _FINAL_PUNCT.sub(r"\1", sentence, count=1).rstrip()


def strip_all_punctuation(sentence: str) -> str:
    """Remove every punctuation mark and symbol of a sentence (an apostrophe or hyphen
    inside a word stays: ``"don't"``, ``"e-mail"``) and collapse the whitespace left:
    text as speech recognition writes it, before lowercasing."""
    return " ".join(_ANY_PUNCT.sub(" ", sentence).split())


def _surface_from_tokens(token_lines: List[List[str]]) -> str:
    """Rebuild a sentence's text from CoNLL-U token rows (FORM + SpaceAfter=No).

    Used only for sentences that have no ``# text`` comment. Multiword-token
    ranges (``3-4``) supply the surface form and their parts are skipped; empty
    nodes (``5.1``) are ignored.
    """
    pieces: List[str] = []
    skip_until = 0
    for cols in token_lines:
        if len(cols) < 10:
            continue
        tok_id, form, misc = cols[0], cols[1], cols[9]
        range_match = _RANGE_ID.match(tok_id)
        if range_match:
            skip_until = int(range_match.group(2))
        elif _INT_ID.match(tok_id):
            if int(tok_id) <= skip_until:
                continue
        else:
            continue
        pieces.append(form)
        if "SpaceAfter=No" not in misc.split("|"):
            pieces.append(" ")
    return "".join(pieces).strip()


def join_sentences(sentences: Sequence[str], separator: str = " ") -> GoldDocument:
    """Join sentence strings with ``separator`` and record where each starts."""
    starts: List[int] = []
    offset = 0
    for sentence in sentences:
        starts.append(offset)
        offset += len(sentence) + len(separator)
    return GoldDocument(text=separator.join(sentences), starts=starts)


def _open_text(path: PathLike) -> Any:
    """A text file for reading as UTF-8; a ``.gz`` file is read through gzip."""
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf8")
    return open(path, encoding="utf8")


def read_conllu_documents(
    path: PathLike, *, strip_final_punct: bool = False, strip_all_punct: bool = False
) -> List[GoldDocument]:
    """Read a CoNLL-U file (gzipped where its name ends in ``.gz``) into documents with
    gold sentence starts.

    A ``# newdoc`` comment starts a new document (sentences before the first
    one form a document of their own). Each sentence's text is its ``# text``
    comment, stripped; when that comment is missing the text is rebuilt from
    the token rows. A document's text is its sentences joined with single
    spaces, and ``starts`` holds the offset of each sentence in it.

    With ``strip_final_punct=True`` (the "no punctuation" variant) every
    sentence goes through :func:`strip_final_punctuation` and is lowercased
    before joining; sentences left empty are dropped. With ``strip_all_punct=True``
    every punctuation mark goes (:func:`strip_all_punctuation`) and the sentence is
    lowercased. Documents with no sentences are skipped.
    """
    documents: List[List[str]] = []
    current: List[str] | None = None
    sent_text: str | None = None
    token_lines: List[List[str]] = []

    def finish_sentence() -> None:
        nonlocal sent_text, token_lines, current
        if sent_text is None and not token_lines:
            return
        text = sent_text if sent_text is not None else _surface_from_tokens(token_lines)
        text = text.strip()
        if strip_all_punct:
            text = strip_all_punctuation(text).lower()
        elif strip_final_punct:
            text = strip_final_punctuation(text).lower()
        if text:
            if current is None:
                current = []
                documents.append(current)
            current.append(text)
        sent_text = None
        token_lines = []

    with _open_text(path) as handle:
        for raw_line in handle:
            line = raw_line.rstrip("\r\n")
            if not line.strip():
                finish_sentence()
            elif line.startswith("#"):
                if _NEWDOC_COMMENT.match(line):
                    finish_sentence()
                    current = []
                    documents.append(current)
                    continue
                match = _TEXT_COMMENT.match(line)
                if match:
                    sent_text = match.group(1)
            else:
                token_lines.append(line.split("\t"))
        finish_sentence()

    return [join_sentences(sentences) for sentences in documents if sentences]


def read_conllu_paragraphs(path: PathLike) -> List[List[List[str]]]:
    """Each document of a CoNLL-U file as its paragraphs, each paragraph a list of its
    sentences' ``# text`` comments, stripped: a ``# newdoc`` comment starts a document,
    a ``# newpar`` comment a paragraph (sentences before the first of either form one of
    their own). Sentences without a ``# text`` comment, and empty paragraphs and
    documents, are left out."""
    documents: List[List[List[str]]] = []
    with _open_text(path) as handle:
        for raw_line in handle:
            line = raw_line.strip()
            if _NEWDOC_COMMENT.match(line):
                documents.append([[]])
            elif _NEWPAR_COMMENT.match(line):
                if not documents:
                    documents.append([])
                documents[-1].append([])
            elif (match := _TEXT_COMMENT.match(line)) and match.group(1).strip():
                if not documents:
                    documents.append([[]])
                documents[-1][-1].append(match.group(1).strip())
    found = [[p for p in paragraphs if p] for paragraphs in documents]
    return [paragraphs for paragraphs in found if paragraphs]


def to_spacy_examples(nlp: Language, docs: Sequence[GoldDocument]) -> List[Example]:
    """Turn gold documents into spaCy ``Example`` objects for sentence boundaries.

    The predicted side is ``nlp.make_doc(text)`` (tokenizer only). The reference
    side is a copy whose ``is_sent_start`` is True on the first token at or
    after each gold start offset (and always on the first token), False on
    every other token. Gold starts after the last token are ignored.
    """
    examples: List[Example] = []
    for gold in docs:
        predicted = nlp.make_doc(gold.text)
        reference = predicted.copy()
        token_starts = [token.idx for token in reference]
        flags = [False] * len(reference)
        if flags:
            flags[0] = True
        for start in gold.starts:
            index = bisect.bisect_left(token_starts, start)
            if index < len(flags):
                flags[index] = True
        for token, flag in zip(reference, flags, strict=True):
            token.is_sent_start = flag
        examples.append(Example(predicted, reference))
    return examples
