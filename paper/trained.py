"""Trained sentence-boundary pipelines and their peers on UD English EWT test: the protocol
behind ``scripts/evaluate_trained.py`` (``spacy project run evaluate-trained``), which
holds the options and their defaults.

Every pipeline (a saved directory, a config or a shipped name, loaded with
``spacy_attnseg.load_pipeline``) and every rule-based splitter of
``paper.evaluation.SPLITTERS`` (spaCy's ``sentencizer`` among them) runs on the test
documents in each of ``paper.evaluation.VARIANTS`` (as written; sentence-final
``.``/``!``/``?`` removed and lowercased; every punctuation mark removed and lowercased),
and is scored with the project's protocol (``evaluation.score_boundaries``: boundary
P/R/F1, whitespace-insensitive, document start not counted, micro-averaged). Speed is
documents per second of ``nlp.pipe`` (after one warm-up batch) on ``threads`` PyTorch
threads; the training time is read from the ``training.json`` that
``scripts/train_boundaries.py`` writes beside ``model-best``. Writes ``OUT.json`` and
``OUT.md``.
"""

from __future__ import annotations

import json
import platform
import random
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from spacy_attnseg.gold import join_sentences, read_conllu_paragraphs

from .boundaries import run_pipeline
from .evaluation import (
    GoldDocument,
    read_conllu_documents,
    read_conllu_variants,
    report_row,
    score_boundaries,
    splitter_rows,
    unavailable_notes,
)


def training_seconds(model: Path) -> Optional[float]:
    """The training time recorded by scripts/train_boundaries.py, if any."""
    for candidate in (model / "training.json", model.parent / "training.json"):
        if candidate.exists():
            return float(json.loads(candidate.read_text(encoding="utf8"))["seconds"])
    return None


def evaluate_pipeline(nlp: Any, docs: Sequence[GoldDocument], batch_size: int) -> Dict[str, Any]:
    """Run ``nlp`` over the documents' texts (after one untimed warm-up batch), score the
    sentence starts and time it."""
    list(nlp.pipe([doc.text for doc in docs[:batch_size]], batch_size=batch_size))
    predicted, docs_per_s, _ = run_pipeline(nlp, docs, batch_size)
    scores = score_boundaries(docs, predicted)
    scores.docs_per_s = docs_per_s
    return scores.to_dict()


def _number(value: Any, digits: int = 1) -> str:
    return "\u2013" if value is None else f"{float(value):.{digits}f}"


def markdown(rows: List[Dict[str, Any]], title: str, notes: List[str]) -> str:
    """The table of ``rows`` (system, variant, P, R, F1, docs/s, training minutes), why
    any system is unavailable, then the notes."""
    lines = [
        f"# {title}",
        "",
        "| system | variant | P | R | F1 | docs/s | training (min) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        if row.get("unavailable"):
            lines.append(f"| {row['system']} | {row['variant']} | n/a | n/a | n/a | n/a | n/a |")
            continue
        minutes = None if row.get("train_s") is None else row["train_s"] / 60
        lines.append(
            f"| {row['system']} | {row['variant']} | {_number(row['p'])} | {_number(row['r'])} "
            f"| {_number(row['f'])} | {_number(row['docs_per_s'], 0)} | {_number(minutes)} |"
        )
    unavailable = unavailable_notes(rows)
    if unavailable:
        lines += ["", *unavailable]
    return "\n".join([*lines, "", *notes]) + "\n"


VARIANTS_NOTE = (
    "- Variants (paper.evaluation): raw, as written; no-punct, every sentence's final "
    ". ! ? removed and the text lowercased; lower-no-punct, every punctuation mark "
    "removed (apostrophes and hyphens inside words stay) and the text lowercased."
)
LAYOUTS_NOTE = (
    "- Variants (paper.trained.PARAGRAPH_LAYOUTS): the text as written, each paragraph "
    "(# newpar) its sentences joined by spaces; one paragraph a line; the same "
    "hard-wrapped at 72 characters; paragraphs between blank lines, hard-wrapped at 72."
)
MARKERS_NOTE = (
    "- Variants (paper.trained.glued_markers): raw, the sentences joined by spaces; the "
    "same with a footnote marker glued to half of the sentences that end with . ! ? "
    "(seed 0), as text copied from Wikipedia holds them: [n], [n][n+1], [a], "
    "[citation needed] or [n, n+2]."
)


def evaluate(
    pipelines: Sequence[str],
    test: Path,
    out: Path,
    *,
    splitters: Sequence[str],
    batch_size: int,
    threads: int,
    variants: str = "punctuation",
    notes: Sequence[str] = (),
) -> Dict[str, Any]:
    """Score every pipeline (``NAME=PATH``, or a shipped name alone) and splitter on every
    variant of ``test`` that ``variants`` names (``VARIANT_SETS``: with and without
    punctuation, by paragraphs, with footnote markers glued); write ``OUT.json`` and
    ``OUT.md``, the table followed by the protocol's notes and ``notes`` (what the run
    was, e.g. where each pipeline's weights came from), each a bullet; return the JSON
    payload."""
    import torch

    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(threads)
    read, note = VARIANT_SETS[variants]
    corpora = read(test)
    rows: List[Dict[str, Any]] = []
    for spec in pipelines:
        name, _, path_text = spec.partition("=")
        nlp = load_pipeline(path_text or name)  # a folder, a config or a shipped name
        train_s = training_seconds(Path(path_text or name))
        for variant, docs in corpora.items():
            scores = evaluate_pipeline(nlp, docs, batch_size)
            row = {"system": name, "variant": variant, "path": path_text or name, **scores}
            row["train_s"] = train_s
            rows.append(row)
            report_row(row)
        del nlp
    rows += [{**row, "train_s": None} for row in splitter_rows(splitters, corpora)]

    title = (
        f"Trained sentence-boundary pipelines and peers on {test.name} "
        f"({len(next(iter(corpora.values())))} documents; boundary P/R/F1 x100, "
        "whitespace-insensitive, document start not counted)"
    )
    machine = f"{platform.machine()}, {threads} PyTorch threads, CPU"
    all_notes = [
        f"- Speed: documents per second on {machine}; training time from training.json.",
        note,
        "- Trained pipelines saw no EWT test data (scripts/make_boundary_data.py); "
        "attn_senter's thresholds (documents with / without sentence-final punctuation; "
        "starts without it in documents that mostly have it) were chosen on the held-out "
        "EWT dev part (scripts/train_boundaries.py).",
        *(f"- {text}" for text in notes),
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "title": title,
        "test": str(test),
        "machine": machine,
        "rows": rows,
        "notes": list(notes),
    }
    Path(f"{out}.json").write_text(
        json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf8"
    )
    Path(f"{out}.md").write_text(markdown(rows, title, all_notes), encoding="utf8")
    return payload


LAYOUTS = ("spaces", "one per line", "wrapped at 72", "double-spaced at 72")


def wrap(text: str, width: int) -> str:
    """``text`` hard-wrapped at ``width`` characters: some of its single spaces become
    line breaks (so character offsets stay valid); a word longer than ``width`` gets a
    line of its own."""
    lines: List[List[str]] = [[]]
    length = 0
    for word in text.split(" "):
        if lines[-1] and length + 1 + len(word) > width:
            lines.append([])
            length = 0
        length += len(word) + (1 if lines[-1] else 0)
        lines[-1].append(word)
    return "\n".join(" ".join(line) for line in lines)


def laid_out(doc: GoldDocument, layout: str) -> GoldDocument:
    """A document's sentences joined by spaces, one per line, or by spaces and then
    hard-wrapped at 72 characters, with or without a blank line below each line (as a
    double-spaced page's text gives them) (``LAYOUTS``)."""
    joined = join_sentences(doc.sentences(), "\n" if layout == "one per line" else " ")
    if layout == "wrapped at 72":
        return GoldDocument(text=wrap(joined.text, 72), starts=joined.starts)
    if layout == "double-spaced at 72":
        text, starts = double_spaced(joined.text, joined.starts, 72)
        return GoldDocument(text=text, starts=starts)
    return joined


def double_spaced(text: str, starts: Sequence[int], width: int) -> Tuple[str, List[int]]:
    """``text`` hard-wrapped at ``width`` (``wrap``) with a blank line below every line,
    and the character offsets ``starts`` moved to the same characters there (each line
    break before one moves it on by one)."""
    wrapped = wrap(text, width)
    moved = [start + wrapped.count("\n", 0, start) for start in starts]
    return wrapped.replace("\n", "\n\n"), moved


# short texts: each document cut into runs of this many consecutive sentences (a
# message, a note, a list of a few items), in the layouts with line breaks
SHORT_SIZES = (2, 3, 4)
SHORT_LAYOUTS = ("one per line", "wrapped at 72")


def short_documents(doc: GoldDocument, size: int) -> List[GoldDocument]:
    """``doc``'s sentences in consecutive runs of ``size`` (a shorter rest is left
    out), each run a document."""
    sentences = doc.sentences()
    return [
        join_sentences(sentences[i : i + size], " ")
        for i in range(0, len(sentences) - size + 1, size)
    ]


#: Layouts of a treebank's documents by their paragraphs (``# newpar``), each paragraph's
#: sentences joined by spaces (value: the separator between paragraphs and the width the
#: text is hard-wrapped at, 0 for none): one paragraph a line, as web pages, chat and
#: exported notes give text; the same hard-wrapped, as a PDF's text or a typescript; and
#: paragraphs between blank lines, hard-wrapped, as e-mail and plain-text books.
PARAGRAPH_LAYOUTS: Dict[str, Tuple[str, int]] = {
    "one paragraph a line": ("\n", 0),
    "one paragraph a line, wrapped at 72": ("\n", 72),
    "blank lines between paragraphs, wrapped at 72": ("\n\n", 72),
}


def paragraph_layouts(path: Path) -> Dict[str, List[GoldDocument]]:
    """The documents of the CoNLL-U file ``path`` in each of ``PARAGRAPH_LAYOUTS``, with
    their sentences' starts (``read_conllu_paragraphs``)."""
    documents = read_conllu_paragraphs(path)
    corpora: Dict[str, List[GoldDocument]] = {}
    for layout, (separator, width) in PARAGRAPH_LAYOUTS.items():
        corpora[layout] = []
        for paragraphs in documents:
            lines = [join_sentences(sentences, " ") for sentences in paragraphs]
            texts = [wrap(line.text, width) if width else line.text for line in lines]
            whole = join_sentences(texts, separator)
            starts = [
                offset + start
                for line, offset in zip(lines, whole.starts, strict=True)
                for start in line.starts
            ]
            corpora[layout].append(GoldDocument(text=whole.text, starts=starts))
    return corpora


# a footnote marker glued to a sentence's end, as text copied from Wikipedia holds them
# ("n" a running number)
MARKER_FORMS = ("[{n}]", "[{n}][{m}]", "[a]", "[citation needed]", "[{n}, {k}]")
ENDS_WITH_FINAL = re.compile(r"[.!?][\"')\]]*$")


def glued_markers(path: Path, share: float = 0.5, seed: int = 0) -> Dict[str, List[GoldDocument]]:
    """The documents of the CoNLL-U file ``path``, their sentences joined by spaces
    ("raw"), and the same with a footnote marker of ``MARKER_FORMS`` glued to ``share``
    of the sentences that end with ``. ! ?`` (a seeded random choice of which, and of
    the form): the gold starts stay where the sentences start."""
    rng = random.Random(seed)
    raw = read_conllu_documents(path)
    marked: List[GoldDocument] = []
    for doc in raw:
        sentences, number = [], 0
        for sentence in doc.sentences():
            if ENDS_WITH_FINAL.search(sentence) and rng.random() < share:
                number += 1
                form = rng.choice(MARKER_FORMS)
                sentence += form.format(n=number, m=number + 1, k=number + 2)
            sentences.append(sentence)
        marked.append(join_sentences(sentences, " "))
    return {"raw": raw, "raw, footnote markers glued": marked}


#: what ``evaluate``'s ``variants`` names: how the variants are read, and the note on them
VARIANT_SETS: Dict[str, Tuple[Callable[[Path], Dict[str, List[GoldDocument]]], str]] = {
    "punctuation": (read_conllu_variants, VARIANTS_NOTE),
    "paragraphs": (paragraph_layouts, LAYOUTS_NOTE),
    "markers": (glued_markers, MARKERS_NOTE),
}


def layout_rows(
    nlp: Any, variants: Mapping[str, Sequence[GoldDocument]], batch_size: int
) -> List[Dict[str, Any]]:
    """Boundary P/R/F1 of ``nlp`` on every variant's documents in every layout, and on
    their runs of ``SHORT_SIZES`` sentences in each of ``SHORT_LAYOUTS``."""
    cases: List[Tuple[str, Optional[int]]] = [(layout, None) for layout in LAYOUTS]
    cases += [(layout, size) for layout in SHORT_LAYOUTS for size in SHORT_SIZES]
    rows = []
    for variant, docs in variants.items():
        for layout, size in cases:
            texts = docs if size is None else [s for d in docs for s in short_documents(d, size)]
            golds = [laid_out(doc, layout) for doc in texts]
            name = layout if size is None else f"{layout}, {size} sentences"
            row = {"variant": variant, "layout": name, "docs": len(golds)}
            row.update(evaluate_pipeline(nlp, golds, batch_size))
            rows.append(row)
            report_row({"system": name, **row})
    return rows


def evaluate_layouts(
    data: Path, out: Path, *, pipeline: str, batch_size: int, threads: int
) -> List[Dict[str, Any]]:
    """``layout_rows`` of ``pipeline`` on the documents of ``data`` (a ``.spacy`` file with
    gold sentence starts; a lowercased document is the no-punctuation variant); writes
    ``OUT.json`` and ``OUT.md`` and returns the rows."""
    import torch
    from spacy.tokens import DocBin

    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(threads)
    nlp = load_pipeline(pipeline)
    variants: Dict[str, List[GoldDocument]] = {"raw": [], "no-punct": []}
    for doc in DocBin().from_disk(data).get_docs(nlp.vocab):
        variant = "no-punct" if doc.text == doc.text.lower() else "raw"
        starts = [sent[0].idx for sent in doc.sents]
        variants[variant].append(GoldDocument(text=doc.text, starts=starts))
    rows = layout_rows(nlp, variants, batch_size)
    lines = [
        f"# Sentence boundaries of `{pipeline}` by layout ({data})",
        "",
        "| variant | layout | docs | P | R | F1 |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['variant']} | {r['layout']} | {r['docs']} | {r['p']:.1f} | {r['r']:.1f} | "
        f"{r['f']:.1f} |"
        for r in rows
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf8")
    Path(f"{out}.md").write_text("\n".join(lines) + "\n", encoding="utf8")
    return rows
