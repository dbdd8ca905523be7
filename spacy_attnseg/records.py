"""What the command line writes for one processed Doc, as JSON-able records.

One place for the records of ``segment --format jsonl`` (:func:`sentence_record`) and
``chunk`` (:func:`chunk_records`), whether the Docs come from ``nlp.pipe`` in one
process (:func:`pipe_records`, :func:`chunks`) or from the workers of
:mod:`spacy_attnseg.scale`.
"""

import bisect
import functools
import json
import os
import re
from dataclasses import dataclass
from itertools import accumulate, pairwise
from pathlib import Path
from typing import (
    Any,
    Callable,
    Collection,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    Union,
)

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup

from .capture import SPACES_DELETED, read_spaces_as_spaces
from .errors import Errors, is_whole_number
from .markup import code_blocks
from .sentences import (
    SENTENCE_END,
    HeadingPath,
    carried,
    closing_sentences,
    cuts_off_sign_off,
    paragraph_starts,
    sentence_end_scores,
    set_heading_paths,
)
from .tokenizer import SURROGATE
from .windows import doc_wordpiece_counts, mute_too_long_warning

SEGMENTER = "attn_segmenter"
RECORDS = ("sentences", "chunks")
#: An input document: its text, or its text and what came with it (the other fields of
#: a JSON line), which every record of the document carries as ``"meta"``.
Item = Union[str, Tuple[str, Dict[str, Any]]]


def segments_key(nlp: Language) -> str:
    """The ``doc.spans`` key of ``nlp``'s topic segments ("" without ``attn_segmenter``
    or with its segments off)."""
    if SEGMENTER not in nlp.pipe_names:
        return ""
    segmenter: Any = nlp.get_pipe(SEGMENTER)
    return str(segmenter.cfg.get("spans_key") or "")


def sentence_record(
    doc: Doc, key: str, offset: int = 0, above: Optional[HeadingPath] = None
) -> Dict[str, Any]:
    """``{"text", "sents", "segments"}``: the sentences and, with ``key``, the topic
    segments of ``doc``, each ``{"start", "end", "score"}`` in character offsets (plus
    ``offset``, where ``doc`` is a part of a longer text that starts there, under the
    headings ``above``), a segment with ``"headings"`` too where it sits under any
    (``heading_titles``)."""

    def spans(found: Iterable[Span], scores: Iterable[float]) -> List[Dict[str, Any]]:
        return [
            {
                "start": offset + span.start_char,
                "end": offset + span.end_char,
                "score": round(float(score), 4),
            }
            for span, score in zip(found, scores, strict=True)
        ]

    sents = spans(doc.sents, sentence_end_scores(doc)) if len(doc) else []
    record: Dict[str, Any] = {"text": doc.text, "sents": sents}
    group = doc.spans.get(key) if key else None
    if group is not None:
        record["segments"] = spans(group, group.attrs.get("scores", []))
        for segment, titles in zip(record["segments"], heading_titles(group, above), strict=True):
            if titles:
                segment["headings"] = titles
    return record


def heading_titles(group: SpanGroup, above: Optional[HeadingPath] = None) -> List[List[str]]:
    """Per span of ``group``, the titles of the headings it sits under, outermost first
    (its ``attrs["headings"]``, under ``above``: ``sentences.carried``); none where the
    group has no paths."""
    paths = group.attrs.get("headings", [])
    if len(paths) != len(group):
        paths = [[] for _ in group]
    return [[str(title) for _, title in carried(above or [], path)] for path in paths]


def joined_record(records: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """One ``sentence_record`` of a text from those of its consecutive parts (each made
    with its part's ``offset``): the texts joined, the sentences and segments in order."""
    joined: Dict[str, Any] = {"text": "".join(r["text"] for r in records)}
    for field in ("sents", "segments"):
        if field in records[0]:
            joined[field] = [item for r in records for item in r[field]]
    return joined


def text_lines(doc: Doc, key: str) -> Iterator[str]:
    """``doc`` as ``segment --format text`` prints it: each sentence on a line of its
    own (its whitespace runs made one space; a sentence of whitespace alone left out)
    and, with ``key``, an empty line between topic segments (a segment that starts
    inside a sentence splits that sentence's line there)."""
    group = doc.spans.get(key) if key else None
    segment_starts = {span.start for span in group} if group is not None else set()
    cuts = sorted({sent.start for sent in doc.sents} | segment_starts | {len(doc)})
    printed = between = False
    for start, end in pairwise(cuts):
        between = between or (printed and start in segment_starts)
        line = " ".join(doc[start:end].text.split())
        if not line:
            continue
        if between:
            yield ""
        printed, between = True, False
        yield line


# the characters that BERT's own normalizer deletes and the pass reads as spaces
DELETED = re.compile("[" + SPACES_DELETED + "]")


@dataclass(frozen=True)
class ChunkSizer:
    """Counts a chunk's wordpieces as the model's tokenizer reads its text alone (what
    an embedding model reads; the pass's own count may differ: a token longer than the
    model reads was truncated, and a chunk that starts or ends inside a word reads it
    alone as more wordpieces), and
    cuts a chunk over ``max_tokens`` at wordpiece boundaries (a Span cannot end inside
    a token; a chunk's text can). ``tokenizer`` is made to read ``SPACES_DELETED`` as
    the pass does (``read_spaces_as_spaces``), so a count does not depend on whether a
    pass has run."""

    tokenizer: Any
    max_tokens: int

    def __post_init__(self) -> None:
        # what it counts never reaches the model: the tokenizer's warning that the
        # model cannot read that many wordpieces does not apply
        mute_too_long_warning(self.tokenizer)
        read_spaces_as_spaces(self.tokenizer)

    def count(self, text: str) -> int:
        """The wordpieces of ``text`` read on its own: where it holds a form feed or
        another of ``SPACES_DELETED``, the larger of two readings, with them as spaces
        (the pass) and without them (a stock BERT tokenizer, which joins the words on
        either side), so that a chunk fits either."""
        n = len(self.tokenizer.tokenize(text))
        if DELETED.search(text):
            n = max(n, len(self.tokenizer.tokenize(DELETED.sub("", text))))
        return n

    def pieces(
        self, text: str, sentences: Sequence[int] = (), closing: Collection[int] = ()
    ) -> List[Tuple[int, int, int]]:
        """``(start, end, n_wordpieces)`` of consecutive pieces of ``text`` that cover
        it, each of at most ``max_tokens`` wordpieces when read on its own (0: one
        piece). Where ``text`` is over, it is cut at the starts of its ``sentences``
        (character offsets) where it can: each piece holds as many whole sentences as
        fit, but ends before a start in ``closing`` (a sign-off, which belongs to the
        text above it: ``sentences.closing_sentences``) only where no other start in
        it could end it; a sentence over ``max_tokens`` by itself is cut between its
        wordpieces (``_wordpieces``)."""
        total = self.count(text)
        if not 0 < self.max_tokens < total or not getattr(self.tokenizer, "is_fast", False):
            return [(0, len(text), total)]
        bounds = [0, *sorted({c for c in sentences if 0 < c < len(text)}), len(text)]
        out: List[Tuple[int, int, int]] = []
        i = 0
        while i < len(bounds) - 1:
            j, n = i + 1, self.count(text[bounds[i] : bounds[i + 1]])
            if n > self.max_tokens:
                a = bounds[i]
                out += [(a + c, a + d, m) for c, d, m in self._wordpieces(text[a : bounds[j]])]
                i = j
                continue
            while j + 1 < len(bounds):
                m = self.count(text[bounds[i] : bounds[j + 1]])
                if m > self.max_tokens:
                    break
                j, n = j + 1, m
            k = j
            while k > i + 1 and bounds[k] in closing:
                k -= 1
            if k < j and bounds[k] not in closing:
                j, n = k, self.count(text[bounds[i] : bounds[k]])
            out.append((bounds[i], bounds[j], n))
            i = j
        return out

    def _wordpieces(self, text: str) -> List[Tuple[int, int, int]]:
        """``pieces`` of ``text`` cut between wordpieces of the whole text: a piece that
        starts inside a word may read as more wordpieces alone, so it gives back
        wordpieces until it fits, and one wordpiece that reads as more alone (``"##rz"``:
        ``"r"``, ``"##z"``) is cut by characters (``_characters``)."""
        offsets = self.tokenizer(
            text, add_special_tokens=False, return_offsets_mapping=True, verbose=False
        )["offset_mapping"]
        starts = [0] + [start for start, _ in offsets[1:]] + [len(text)]
        out: List[Tuple[int, int, int]] = []
        i = 0
        while i < len(offsets):
            j = min(i + self.max_tokens, len(offsets))
            n = self.count(text[starts[i] : starts[j]])
            while n > self.max_tokens and j > i + 1:
                j -= 1
                n = self.count(text[starts[i] : starts[j]])
            if n > self.max_tokens:
                out += self._characters(text, starts[i], starts[j])
            else:
                out.append((starts[i], starts[j], n))
            i = j
        return out

    def _characters(self, text: str, start: int, end: int) -> List[Tuple[int, int, int]]:
        """``pieces`` of ``text[start:end]`` cut between characters, each as long as it
        can be within ``max_tokens`` (a character is one wordpiece at most for WordPiece;
        one that reads as more stays a piece of its own)."""
        out: List[Tuple[int, int, int]] = []
        while start < end:
            stop, n = start + 1, self.count(text[start : start + 1])
            while stop < end and self.count(text[start : stop + 1]) <= self.max_tokens:
                stop += 1
                n = self.count(text[start:stop])
            out.append((start, stop, n))
            start = stop
        return out


def chunk_sizer(nlp: Language, tokenizer: Any = None) -> Optional[ChunkSizer]:
    """The :class:`ChunkSizer` of ``nlp``'s ``attn_segmenter`` (None without one): with
    its transformer's tokenizer, or ``tokenizer`` (``load_tokenizer``) where given."""
    if SEGMENTER not in nlp.pipe_names:
        return None
    segmenter: Any = nlp.get_pipe(SEGMENTER)
    if tokenizer is None:
        tokenizer = getattr(segmenter.transformer_pipe().model, "tokenizer", None)
    if tokenizer is None:
        return None
    return ChunkSizer(tokenizer, int(segmenter.cfg.get("max_tokens") or 0))


def tokenizer_name(name: Any) -> str:
    """``name``, a tokenizer's folder or cache name, as text: a str as it is, a path
    (``os.PathLike``) as its text; E136 for any other value."""
    if not isinstance(name, (str, os.PathLike)):
        reason = f"it is {type(name).__name__}, not the text or path of a folder"
        raise TypeError(Errors.E136.format(name=name, reason=reason))
    return os.fspath(name)


def load_tokenizer(name: Union[str, "os.PathLike[str]"]) -> Any:
    """The fast Hugging Face tokenizer in the folder ``name`` (or of that name in the
    Hugging Face cache; nothing is downloaded), to count and cut chunks in the tokens of
    another model than the pipeline's (the embedding model the chunks are for), loaded
    once per process (a :class:`ChunkSizer` adapts it as it does the pipeline's). E136
    where it cannot be loaded or is not a fast tokenizer (one without character offsets
    cannot cut a chunk)."""
    return _load_tokenizer(tokenizer_name(name))


@functools.lru_cache(maxsize=4)
def _load_tokenizer(name: str) -> Any:
    from transformers import AutoTokenizer

    path = Path(name).expanduser()
    if path.is_file():
        raise ValueError(Errors.E136.format(name=name, reason="it is a file, not a folder"))
    if not path.exists() and (path.is_absolute() or name.startswith((".", "~"))):
        raise ValueError(Errors.E136.format(name=name, reason="no such folder"))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, TypeError, KeyError) as error:
        reason = " ".join(str(error).split())[:200].rstrip(".") or type(error).__name__
        raise ValueError(Errors.E136.format(name=name, reason=reason)) from None
    if not getattr(tokenizer, "is_fast", False):
        reason = f"{type(tokenizer).__name__} is not a fast tokenizer"
        raise ValueError(Errors.E136.format(name=name, reason=reason))
    return tokenizer


def closing_offsets(doc: Doc) -> Set[int]:
    """The character offsets of ``doc``'s sentences that close the text above them
    (``sentences.closing_sentences``: a sign-off, the name below it)."""
    starts = [sent.start for sent in doc.sents] if doc.has_annotation("SENT_START") else []
    closing = closing_sentences(doc, starts, paragraph_starts(doc, starts))
    return {doc[starts[k]].idx for k in numpy.flatnonzero(closing)}


def chunk_records(
    doc: Doc,
    number: int,
    key: str,
    sizer: Optional[ChunkSizer] = None,
    *,
    offset: int = 0,
    first: int = 0,
    above: Optional[HeadingPath] = None,
) -> List[Dict[str, Any]]:
    """One record per topic chunk of ``doc`` (``doc.spans[key]``): ``{"doc", "chunk",
    "text", "start", "end", "n_tokens", "n_sents", "score"}``, and ``"headings"``, the
    titles of the headings the chunk sits under, outermost first, where it sits
    under any (the group's ``attrs["headings"]``); a chunk runs to the next
    one's start, so the chunks' texts joined give the document's text back. With a
    ``sizer``, each chunk's text is counted as its tokenizer reads it alone, and a chunk
    over ``max_tokens`` (a token longer than that, text the tokenizer reads as more
    wordpieces alone than in the pass, or another tokenizer's count) is cut into pieces
    of at most ``max_tokens`` wordpieces, at sentence starts where it can, and above a
    sign-off only where no other start can end a piece (``ChunkSizer.pieces``,
    ``closing_offsets``; each piece after the first scores 0.0); without one,
    ``n_tokens`` is the pass's count. Where ``doc`` is a part of a longer document
    (``text_parts``), ``offset`` is where it starts in that document (added to
    ``"start"`` and ``"end"``), ``first`` the number of its first chunk and ``above``
    the headings in force where it starts (``sentences.carried``)."""
    group = doc.spans.get(key)
    spans = list(group) if group is not None else []
    scores = group.attrs.get("scores", []) if group is not None else []
    paths = heading_titles(group, above) if group is not None else []
    sizes = doc_wordpiece_counts(doc)
    text = doc.text  # (made once: Doc.text joins every token each time it is read)
    closing = closing_offsets(doc) if sizer is not None else set()
    records: List[Dict[str, Any]] = []
    for i, (span, score, titles) in enumerate(zip(spans, scores, paths, strict=True)):
        start = span.start_char
        end = spans[i + 1].start_char if i + 1 < len(spans) else len(text)
        starts = [t.idx for t in span if t.is_sent_start]
        if sizer is None:
            pieces = [(start, end, sizes.span(span.start, span.end))]
        else:
            cuts = [s - start for s in starts]
            closes = {s - start for s in starts if s in closing}
            pieces = [
                (start + a, start + b, n) for a, b, n in sizer.pieces(text[start:end], cuts, closes)
            ]
        for k, (a, b, n) in enumerate(pieces):
            record = {
                "doc": number,
                "chunk": first + len(records),
                "text": text[a:b],
                "start": offset + a,
                "end": offset + b,
                "n_tokens": n,
                "n_sents": sum(a <= s < b for s in starts) or 1,
                "score": score if k == 0 else 0.0,
            }
            if titles:
                record["headings"] = titles
            records.append(record)
    return records


def with_meta(record: Dict[str, Any], meta: Dict[str, Any]) -> Dict[str, Any]:
    """``record`` with ``"meta"`` last, where its document's item has any."""
    return {**record, "meta": meta} if meta else record


#: Characters that JSON leaves as they are inside a string but that some readers take
#: for a line end (Python's ``str.splitlines``: NEXT LINE, LINE SEPARATOR, PARAGRAPH
#: SEPARATOR), as JSON escapes
LINE_END_ESCAPES = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_line(record: Dict[str, Any]) -> str:
    """``record`` as one line of JSON lines: text beyond ASCII as it is, but a character
    that a reader may take for a line end as its escape (``LINE_END_ESCAPES``; it can
    stand only inside a string), so that one record is one line for every reader."""
    return json.dumps(record, ensure_ascii=False).translate(LINE_END_ESCAPES)


#: Characters of text in one batch at most (a longer document runs alone): what a batch
#: holds in memory (the transformer's outputs, the captured arrays) grows with its text,
#: so a run of long documents (books) goes through one or a few at a time, whatever the
#: number of documents a batch may hold.
BATCH_CHARACTERS = 200_000


#: Characters of a document's part at most, where ``chunk`` reads a longer document in
#: parts (``document_parts``), each a Doc of its own: what a pass holds in memory grows
#: with its Doc, so a book is chunked in the memory of its parts, whatever its length
#: (and past spaCy's ``nlp.max_length``, 1,000,000 characters by default).
PART_CHARACTERS = 200_000
#: Characters of English prose per wordpiece, about (4.65 for MiniLM's tokenizer on
#: WikiText-2): where ``chunk`` sizes its parts and batches, a text counts as this many
#: characters per wordpiece where that is more than its length (``text_size``), since a
#: pass's memory grows with its wordpieces. Text of about one wordpiece per character
#: (CJK without spaces, URLs, codes) is read in parts of fewer characters.
CHARACTERS_PER_WORDPIECE = 4
#: Where a part may end, best first: after a blank line that ends a sentence (its final
#: punctuation, closing quotes or brackets: not a heading, which would be cut off from
#: its section, nor a line that leads into what follows it), after any blank line, a line
#: break that ends a sentence, any line break, a sentence's end, any white space.
PART_ENDS = (
    re.compile(SENTENCE_END + r"[^\S\n]*\n[^\S\n]*\n\s*"),
    re.compile(r"\n[^\S\n]*\n\s*"),
    re.compile(SENTENCE_END + r"[^\S\n]*\n\s*"),
    re.compile(r"\n\s*"),
    re.compile(r"[.!?][\"')\]’”]*\s+"),
    re.compile(r"\s+"),
)


def text_parts(text: str, limit: int) -> List[Tuple[int, int]]:
    """``(start, end)`` of consecutive parts of ``text`` of at most ``limit`` characters
    that cover it: each ends at the last place in its second half where ``PART_ENDS``
    says a part may end, by the first of them found there, outside code blocks where
    there is one (``markup.code_blocks``: a part that opened inside one would read its
    ``# comment`` lines as headings and its closing fence as an opening one) and not
    above a letter's sign-off where it can (``sentences.cuts_off_sign_off``: the next
    part would open with it), exactly at ``limit`` where none is. One part where
    ``text`` is no longer than ``limit``. Linear in the text."""
    if len(text) <= limit:
        return [(0, len(text))]
    blocks = code_blocks(text)
    opens = [start for start, _ in blocks]
    reach = list(accumulate((close for _, close in blocks), max))

    def outside(end: int) -> bool:
        k = bisect.bisect_left(opens, end)  # (the blocks that open before ``end``)
        return k == 0 or reach[k - 1] < end

    starts = [0]
    while len(text) - starts[-1] > limit:
        a = starts[-1]
        kinds = [
            [m.end() for m in pattern.finditer(text, a + limit // 2, a + limit)]
            for pattern in PART_ENDS
        ]
        ends = [end for found in kinds for end in reversed(found)]
        best = next((e for e in ends if outside(e) and not cuts_off_sign_off(text, e)), None)
        if best is None:  # (a letter's sign-off, in code, where nothing else is)
            best = next((e for e in ends if outside(e)), None)
        if best is None:
            best = next((found[-1] for found in kinds if found), a + limit)
        starts.append(best)
    return list(zip(starts, starts[1:] + [len(text)], strict=True))


def text_size(text: str, sizer: Optional[ChunkSizer]) -> int:
    """The size of ``text`` in characters of prose: its length, or
    ``CHARACTERS_PER_WORDPIECE`` per wordpiece that ``sizer`` counts where that is more
    (its length without a sizer)."""
    if sizer is None:
        return len(text)
    return max(len(text), CHARACTERS_PER_WORDPIECE * sizer.count(text))


def document_parts(
    text: str, characters: int, limit: int, size: Callable[[str], int]
) -> List[Tuple[int, int, int]]:
    """``(start, end, size)`` of consecutive parts of ``text`` that cover it, each of
    at most ``characters`` characters and, unless it is one character, at most ``limit``
    in ``size``: the parts of ``text_parts``, and a part over ``limit`` in ``size`` (text
    dense in wordpieces, ``text_size``) cut again the same way, with a limit of
    characters that would cut it into as many parts as it holds ``limit``s."""
    out: List[Tuple[int, int, int]] = []
    for a, b in text_parts(text, characters):
        n = size(text[a:b])
        if n <= limit or b - a <= 1:
            out.append((a, b, n))
        else:
            pieces = -(-n // limit)  # at least 2, as n > limit: b - a > fewer >= 1
            fewer = -(-(b - a) // pieces)
            out += [(a + c, a + d, m) for c, d, m in document_parts(text[a:b], fewer, limit, size)]
    return out


def chunk_parts(
    text: str, max_length: int, sizer: Optional[ChunkSizer]
) -> List[Tuple[int, int, int]]:
    """``(start, end, size)`` of the parts in which ``chunk`` reads ``text``
    (``document_parts``): at most ``PART_CHARACTERS`` characters (``max_length``, spaCy's
    ``nlp.max_length``, where that is less) and as much in ``text_size``."""
    characters = min(PART_CHARACTERS, max_length)
    return document_parts(text, characters, characters, lambda part: text_size(part, sizer))


Context = TypeVar("Context")


def text_batches(
    items: Iterable[Tuple[str, Context]],
    batch_size: int,
    max_size: int,
    size: Callable[[Tuple[str, Context]], int] = lambda item: len(item[0]),
) -> Iterator[List[Tuple[str, Context]]]:
    """Consecutive batches of ``(text, context)`` items, in order: at most ``batch_size``
    items and, unless one item is larger by itself, ``max_size`` in ``size`` (the text's
    characters by default) each."""
    batch: List[Tuple[str, Context]] = []
    total = 0
    for item in items:
        n = size(item)
        if batch and (len(batch) >= batch_size or total + n > max_size):
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += n
    if batch:
        yield batch


def as_pairs(texts: Iterable[Item]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """``(text, meta)`` of every item (``{}`` for a plain text); an item that is neither
    a string nor a ``(string, dict)`` pair is E130, and a text that holds a lone
    surrogate E128, each naming the item (before a tokenizer that sizes the text's parts
    stops on it)."""
    for index, item in enumerate(texts):
        pair = item if isinstance(item, tuple) else (item, {})
        if len(pair) != 2 or not isinstance(pair[0], str) or not isinstance(pair[1], dict):
            raise TypeError(Errors.E130.format(index=index, item=repr(item)[:80]))
        surrogate = SURROGATE.search(pair[0])
        if surrogate is not None:
            where = f" of item {index} (from 0)"
            code, pos = ord(surrogate.group()), surrogate.start()
            raise ValueError(Errors.E128.format(where=where, code=code, pos=pos))
        yield pair


def pipe_pairs(
    nlp: Language,
    pairs: Iterable[Tuple[str, Context]],
    batch_size: int,
    size: Callable[[Tuple[str, Context]], int] = lambda item: len(item[0]),
) -> Iterator[Tuple[Doc, Context]]:
    """``(doc, context)`` for every ``(text, context)`` pair, through ``nlp.pipe``, in
    batches of ``text_batches`` (at most ``batch_size`` documents and
    ``BATCH_CHARACTERS`` in ``size``, characters by default)."""
    for batch in text_batches(pairs, batch_size, BATCH_CHARACTERS, size):
        yield from nlp.pipe(batch, batch_size=len(batch), as_tuples=True)


def pipe_docs(
    nlp: Language, texts: Iterable[Item], batch_size: int, first: int = 0, *, reader: str
) -> Iterator[Tuple[Doc, Dict[str, Any]]]:
    """``(doc, meta)`` for every item of ``texts``, each document whole as one Doc
    (``pipe_pairs``; documents ``first``, ``first + 1``, ...): a text longer than
    ``nlp.max_length`` stops it with E127, which says that ``reader`` (who reads it
    whole: ``"`pairs` reads"``) reads each document whole."""

    def checked() -> Iterator[Tuple[str, Dict[str, Any]]]:
        for number, (text, meta) in enumerate(as_pairs(texts), start=first):
            if len(text) > nlp.max_length:
                raise ValueError(
                    Errors.E127.format(
                        number=number, length=len(text), limit=nlp.max_length, reader=reader
                    )
                )
            yield text, meta

    return pipe_pairs(nlp, checked(), batch_size)


class Part(NamedTuple):
    """One part of a document as ``pipe_parts`` reads it: its Doc, the document's
    number and meta, where the part starts in the document's text, and whether it is
    the document's last."""

    doc: Doc
    number: int
    offset: int
    meta: Dict[str, Any]
    last: bool


def pipe_parts(
    nlp: Language,
    texts: Iterable[Item],
    batch_size: int,
    first: int = 0,
    sizer: Optional[ChunkSizer] = None,
) -> Iterator[Part]:
    """Every document of ``texts`` (numbered from ``first``) in its ``chunk_parts``, in
    order, each part a Doc of its own, in batches by their size (``pipe_pairs``): a
    document of at most ``PART_CHARACTERS`` characters (and as much in ``text_size``,
    with ``sizer``) is one part, a longer one is read in the memory of its parts."""
    pieces = (
        (text[a:b], (number, a, meta, n, b == len(text)))
        for number, (text, meta) in enumerate(as_pairs(texts), start=first)
        for a, b, n in chunk_parts(text, nlp.max_length, sizer)
    )
    for doc, (number, offset, meta, _, last) in pipe_pairs(
        nlp, pieces, batch_size, lambda item: item[1][3]
    ):
        yield Part(doc, number, offset, meta, last)


def under_headings(parts: Iterable[Part], key: str) -> Iterator[Tuple[Part, HeadingPath]]:
    """Each part with the headings in force where it starts: none at a document's start,
    else those at the end of the part before (its ``doc.spans[key].attrs
    ["headings_at_end"]``, carried: ``sentences.carried``). A later part's headings
    are read again after the adornment styles of the parts before it
    (``attrs["heading_styles"]``), so that an underline's depth is the document's, not
    the order in which that part first uses the styles, and after the plain headings
    over prose of the parts before it (``attrs["plain_headings"]``), which count towards
    ``sentences.PLAIN_SECTIONS``."""
    above: HeadingPath = []
    styles: List[str] = []
    plain = 0
    for part in parts:
        group = part.doc.spans.get(key) if key else None
        if part.offset == 0:
            above, styles, plain = [], [], 0
        elif group is not None and (styles or plain):
            set_heading_paths(part.doc, key, styles, plain)
        yield part, above
        if group is not None:
            above = carried(above, group.attrs.get("headings_at_end", []))
            styles = list(group.attrs.get("heading_styles", styles))
            plain = int(group.attrs.get("plain_headings", plain))


def pipe_records(
    nlp: Language,
    texts: Iterable[Item],
    kind: str,
    *,
    batch_size: int = 8,
    first: int = 0,
    tokenizer: str = "",
) -> Iterator[Dict[str, Any]]:
    """The records of every document of ``texts`` (numbered from ``first``): one
    :func:`sentence_record` each for ``kind="sentences"``, its :func:`chunk_records` for
    ``"chunks"``; each with ``"meta"`` where its item has any. A long document is read in
    parts (``pipe_parts``): its record joins those of its parts (``joined_record``), or
    its chunks' numbers run on from part to part. ``tokenizer``: where given
    (``load_tokenizer``), chunks are counted and cut in its tokens. ``batch_size``: the
    most documents in a batch, an int of at least 1 (E113)."""
    if kind not in RECORDS:
        raise ValueError(Errors.E024.format(value=kind, values=RECORDS))
    if not is_whole_number(batch_size):
        raise ValueError(
            Errors.E113.format(
                option="batch_size", value=batch_size, allowed="a Python int of at least 1"
            )
        )
    key = segments_key(nlp)
    sizer = chunk_sizer(nlp)
    if kind == "sentences":
        parts: List[Dict[str, Any]] = []
        for part, above in under_headings(pipe_parts(nlp, texts, batch_size, first, sizer), key):
            parts.append(sentence_record(part.doc, key, part.offset, above))
            if part.last:
                yield with_meta(joined_record(parts), part.meta)
                parts = []
        return
    # (parts are sized by the pass's tokenizer, whose wordpieces its memory holds)
    counter = chunk_sizer(nlp, load_tokenizer(tokenizer)) if tokenizer else sizer
    n_chunks = 0
    for part, above in under_headings(pipe_parts(nlp, texts, batch_size, first, sizer), key):
        if part.offset == 0:
            n_chunks = 0
        records = chunk_records(
            part.doc, part.number, key, counter, offset=part.offset, first=n_chunks, above=above
        )
        n_chunks += len(records)
        for record in records:
            yield with_meta(record, part.meta)


def chunks(
    nlp: Language,
    texts: Iterable[Item],
    *,
    batch_size: int = 8,
    tokenizer: Union[str, "os.PathLike[str]", None] = "",
) -> Iterator[Dict[str, Any]]:
    """Topic chunks for retrieval: the records that ``python -m spacy_attnseg chunk``
    writes, ``{"doc", "chunk", "text", "start", "end", "n_tokens", "n_sents", "score"}``
    (and ``"headings"`` and ``"meta"``), for ``texts`` (strings, or ``(text, meta)``
    pairs with a dict of what to carry along). The chunks of a document join to its
    text, and each holds at most ``attn_segmenter``'s ``max_tokens`` wordpieces, also
    where one token is longer than that. A document of more than ``PART_CHARACTERS``
    characters (or ``nlp.max_length``, where that is less), or of as many wordpieces at
    ``CHARACTERS_PER_WORDPIECE``, is read in parts (``chunk_parts``), each a Doc of its
    own. ``nlp`` needs an ``attn_segmenter`` with topic segments (E016).

    tokenizer: the folder (a str or a path) or Hugging Face cache name of another
    model's fast tokenizer, that of the embedding model the chunks are for (None or "":
    the pipeline's): ``max_tokens`` and ``"n_tokens"`` then count its tokens (without
    special tokens), and a chunk it reads as more is cut at sentence starts where it
    can (``load_tokenizer``; E136 where it cannot be loaded)."""
    if isinstance(texts, str):
        raise TypeError(Errors.E118.format(function="chunks()"))
    if not segments_key(nlp):
        raise ValueError(Errors.E016.format(pipe_names=nlp.pipe_names))
    name = "" if tokenizer is None else tokenizer_name(tokenizer)
    if name:
        load_tokenizer(name)  # (E136 before any text is read)
    return pipe_records(nlp, texts, "chunks", batch_size=batch_size, tokenizer=name)
