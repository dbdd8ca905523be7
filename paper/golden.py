"""The English Golden Rules of sentence boundaries (``data/golden-rules``), scored.

Each of the 48 cases is a short text and the sentences it should split into. A system
passes a case when its sentences, each stripped and with runs of whitespace read as one
space, are exactly the expected ones (the way pysbd and the Pragmatic Segmenter count).
Boundary P/R/F1 over all cases is scored with the project's protocol
(``paper.evaluation.score_boundaries``).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from paper.evaluation import (
    GoldDocument,
    SplitFn,
    SplitterUnavailable,
    doc_sentence_starts,
    load_splitter,
    score_boundaries,
    split_texts,
    unavailable_notes,
)

GOLDEN_RULES = Path(__file__).resolve().parents[1] / "data" / "golden-rules"
CASES_FILE = GOLDEN_RULES / "english_golden_rules.json"


@dataclass(frozen=True)
class Case:
    """One Golden Rule: its number, name, text and expected sentences."""

    number: int
    rule: str
    text: str
    sentences: Tuple[str, ...]

    def gold(self) -> GoldDocument:
        """The case as a document with the offsets where its sentences start."""
        starts, pos = [], 0
        for sentence in self.sentences:
            start = self.text.index(sentence, pos)
            starts.append(start)
            pos = start + len(sentence)
        return GoldDocument(self.text, starts)


def read_cases(path: Path = CASES_FILE) -> List[Case]:
    """The cases of ``path`` (a JSON list of objects with number, rule, text and
    sentences)."""
    rows = json.loads(path.read_text(encoding="utf8"))
    return [Case(row["number"], row["rule"], row["text"], tuple(row["sentences"])) for row in rows]


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def passes(case: Case, starts: Sequence[int]) -> bool:
    """Whether the sentences that start at ``starts`` are the case's sentences."""
    got = [_normal(s) for s in split_texts(case.text, lambda _: list(starts))]
    return got == [_normal(s) for s in case.sentences]


def score(split: SplitFn, cases: Sequence[Case]) -> Dict[str, Any]:
    """Cases passed, the numbers of those failed, and boundary P/R/F1 (x100) of
    ``split`` on ``cases``."""
    predicted = [list(split(case.text)) for case in cases]
    failed = [c.number for c, s in zip(cases, predicted, strict=True) if not passes(c, s)]
    boundaries = score_boundaries([case.gold() for case in cases], predicted)
    return {
        "passed": len(cases) - len(failed),
        "cases": len(cases),
        "failed": failed,
        **{key: boundaries.to_dict()[key] for key in ("p", "r", "f")},
    }


def pipeline_split(nlp: Any) -> SplitFn:
    """A :data:`SplitFn` of a spaCy pipeline's sentences."""
    return lambda text: doc_sentence_starts(nlp(text))


def markdown(rows: List[Dict[str, Any]], cases: Sequence[Case]) -> str:
    """The report: one row per system (cases passed, boundary P/R/F1; why a system is
    unavailable under the table), then each case with the systems that fail it."""
    lines = [
        f"# English Golden Rules ({len(cases)} cases, `data/golden-rules`)",
        "",
        "A case passes when the sentences are exactly the expected ones (whitespace "
        "normalised); P/R/F1: boundaries over all cases (x100, the project's protocol, "
        "the first position not counted). pysbd was built to pass these cases.",
        "",
        "| system | cases passed | P | R | F1 |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        if row.get("unavailable"):
            lines.append(f"| {row['system']} | n/a | n/a | n/a | n/a |")
            continue
        lines.append(
            f"| {row['system']} | {row['passed']} / {row['cases']} | {row['p']:.1f} "
            f"| {row['r']:.1f} | {row['f']:.1f} |"
        )
    notes = unavailable_notes(rows)
    if notes:
        lines += ["", *notes]
    scored = [row for row in rows if not row.get("unavailable")]
    lines += ["", "Failed by (a case no system fails is not listed):", ""]
    lines += ["| case | rule | failed by |", "| ---: | --- | --- |"]
    for case in cases:
        failing = [row["system"] for row in scored if case.number in row["failed"]]
        if failing:
            lines.append(f"| {case.number} | {case.rule} | {', '.join(failing)} |")
    return "\n".join(lines) + "\n"


def evaluate(
    pipelines: Sequence[str], splitters: Sequence[str], out: Path, *, threads: int
) -> List[Dict[str, Any]]:
    """Score every pipeline (a shipped name, folder or config) and baseline splitter on
    the Golden Rules; write ``OUT.json`` and ``OUT.md``; return the rows."""
    import torch

    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(threads)
    cases = read_cases()
    rows: List[Dict[str, Any]] = []
    for name in pipelines:
        rows.append(
            {"system": f"pipeline '{name}'", **score(pipeline_split(load_pipeline(name)), cases)}
        )
        print(f"{rows[-1]['system']}: {rows[-1]['passed']} / {len(cases)}", file=sys.stderr)
    for name in splitters:
        try:
            split = load_splitter(name)
        except SplitterUnavailable as error:
            rows.append({"system": name, "unavailable": str(error)})
            continue
        rows.append({"system": name, **score(split, cases)})
        print(f"{name}: {rows[-1]['passed']} / {len(cases)}", file=sys.stderr)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(
        json.dumps({"cases": str(CASES_FILE.name), "rows": rows}, indent=2) + "\n",
        encoding="utf8",
    )
    Path(f"{out}.md").write_text(markdown(rows, cases), encoding="utf8")
    return rows
