"""Boundary P/R/F1 of a pipeline when the same sentences are joined by spaces, written one
per line, or hard-wrapped at 72 characters; protocol: ``paper.trained.layout_rows``.

Usage (the held-out EWT dev part of the boundary data, as written and without final
punctuation)::

    python scripts/evaluate_layouts.py corpus/boundaries/dev.spacy --out metrics/layouts
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paper.trained import layout_rows  # noqa: E402


def main(argv: List[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help=".spacy file with gold sentence starts")
    parser.add_argument("--pipeline", default="default", help="a pipeline name, folder or config")
    parser.add_argument("--out", type=Path, default=Path("metrics/layouts"))
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    import torch
    from spacy.tokens import DocBin

    from paper.evaluation import GoldDocument
    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(args.threads)
    nlp = load_pipeline(args.pipeline)
    variants: Dict[str, List[GoldDocument]] = {"raw": [], "no-punct": []}
    for doc in DocBin().from_disk(args.data).get_docs(nlp.vocab):
        starts = [sent[0].idx for sent in doc.sents]
        variant = "no-punct" if doc.text == doc.text.lower() else "raw"
        variants[variant].append(GoldDocument(text=doc.text, starts=starts))
    rows = layout_rows(nlp, variants, args.batch_size)
    lines = [
        f"# Sentence boundaries of `{args.pipeline}` by layout ({args.data})",
        "",
        "| variant | layout | P | R | F1 |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r['variant']} | {r['layout']} | {r['p']:.1f} | {r['r']:.1f} | {r['f']:.1f} |"
        for r in rows
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf8")
    Path(f"{args.out}.md").write_text("\n".join(lines) + "\n", encoding="utf8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
