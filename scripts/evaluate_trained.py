"""Evaluate trained sentence-boundary pipelines and their peers on UD English EWT test.

Usage::

    python scripts/evaluate_trained.py \
        --pipeline attn_senter=training/boundaries/model-best \
        --pipeline senter_listener=training/senter_listener/model-best \
        --pipeline senter_listener_window=training/senter_listener_window/model-best \
        --pipeline attn_segmenter=attention \
        --out metrics/trained_boundaries

Every pipeline (a saved directory or a config, loaded with
``spacy_attnseg.load_pipeline``) and every rule-based splitter of
``paper.evaluation.SPLITTERS`` (spaCy's ``sentencizer`` among them) runs on the
test documents in each of ``paper.evaluation.VARIANTS`` (as written; sentence-final
``.``/``!``/``?`` removed and lowercased; every punctuation mark removed and lowercased),
and is scored with the project's protocol
(``evaluation.score_boundaries``: boundary P/R/F1, whitespace-insensitive, document start
not counted, micro-averaged). Speed is documents per second of ``nlp.pipe`` (after one
warm-up batch) on ``--threads`` PyTorch threads; the training time is read from the
``training.json`` that ``scripts/train_boundaries.py`` writes beside ``model-best``.
Writes ``OUT.json`` and ``OUT.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.evaluation import (  # noqa: E402
    SPLITTERS,
    GoldDocument,
    doc_sentence_starts,
    read_conllu_variants,
    score_boundaries,
    splitter_rows,
)

DEFAULT_TEST = Path("data/UD_English-EWT/en_ewt-ud-test.conllu")


def training_seconds(model: Path) -> Optional[float]:
    """The training time recorded by scripts/train_boundaries.py, if any."""
    for candidate in (model / "training.json", model.parent / "training.json"):
        if candidate.exists():
            return float(json.loads(candidate.read_text(encoding="utf8"))["seconds"])
    return None


def evaluate_pipeline(nlp: Any, docs: Sequence[GoldDocument], batch_size: int) -> Dict[str, Any]:
    """Run ``nlp`` over the documents' texts, score the sentence starts, time it."""
    texts = [doc.text for doc in docs]
    list(nlp.pipe(texts[:batch_size], batch_size=batch_size))
    start = time.perf_counter()
    predicted = [doc_sentence_starts(doc) for doc in nlp.pipe(texts, batch_size=batch_size)]
    elapsed = time.perf_counter() - start
    scores = score_boundaries(docs, predicted)
    scores.docs_per_s = len(docs) / elapsed if elapsed > 0 else float("inf")
    return scores.to_dict()


def write_markdown(rows: List[Dict[str, Any]], path: Path, title: str, notes: List[str]) -> None:
    def number(value: Any, digits: int = 1) -> str:
        return "\u2013" if value is None else f"{float(value):.{digits}f}"

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
            f"| {row['system']} | {row['variant']} | {number(row['p'])} | {number(row['r'])} "
            f"| {number(row['f'])} | {number(row['docs_per_s'], 0)} | {number(minutes)} |"
        )
    lines += ["", *notes]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pipeline",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a pipeline directory or config to evaluate (repeatable)",
    )
    parser.add_argument("--test", type=Path, default=DEFAULT_TEST)
    parser.add_argument("--out", type=Path, default=Path("metrics/trained_boundaries"))
    parser.add_argument("--splitters", nargs="*", default=list(SPLITTERS), choices=list(SPLITTERS))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from spacy_attnseg.loading import load_pipeline

    corpora = read_conllu_variants(args.test)
    rows: List[Dict[str, Any]] = []
    for spec in args.pipeline:
        name, _, path_text = spec.partition("=")
        path = Path(path_text or name)
        nlp = load_pipeline(path_text or name)  # a folder, a config or a shipped name
        train_s = training_seconds(path)
        for variant, docs in corpora.items():
            scores = evaluate_pipeline(nlp, docs, args.batch_size)
            row = {"system": name, "variant": variant, "path": str(path), **scores}
            row["train_s"] = train_s
            rows.append(row)
            print(f"{name:18s} {variant:9s} F1={row['f']:5.1f} docs/s={row['docs_per_s']}")
        del nlp
    for row in splitter_rows(args.splitters, corpora):
        rows.append({**row, "train_s": None})

    n_docs = len(corpora["raw"])
    title = (
        f"Trained sentence-boundary pipelines and peers on {args.test.name} ({n_docs} "
        "documents; boundary P/R/F1 x100, whitespace-insensitive, document start not counted)"
    )
    machine = f"{platform.machine()}, {args.threads} PyTorch threads, CPU"
    notes = [
        f"- Speed: documents per second on {machine}; training time from training.json.",
        "- Variants (paper.evaluation): raw, as written; no-punct, every sentence's final "
        ". ! ? removed and the text lowercased; lower-no-punct, every punctuation mark "
        "removed (apostrophes and hyphens inside words stay) and the text lowercased.",
        "- Trained pipelines saw no EWT test data (scripts/make_boundary_data.py); "
        "attn_senter's two thresholds (documents with / without sentence-final "
        "punctuation) were chosen on the held-out EWT dev part (scripts/train_boundaries.py).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"title": title, "test": str(args.test), "machine": machine, "rows": rows}
    Path(f"{args.out}.json").write_text(
        json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf8"
    )
    write_markdown(rows, Path(f"{args.out}.md"), title, notes)
    print(Path(f"{args.out}.md").read_text(encoding="utf8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
