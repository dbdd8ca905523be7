"""Topic segments of the default pipeline, as a user runs it (plain text in, its own
sentences, one setting for every set), against peers, on two sets:

* ``synthetic``: documents of 3-11-sentence pieces of unrelated texts (``paper.synthetic``;
  WikiText-2 articles and EWT documents; tuning: first WikiText half + EWT dev; report:
  second half + EWT test);
* ``wikitext``: WikiText-2 articles, reference segments = lead and sections (the reader of
  ``scripts/evaluate_segments.py``), sentences joined by spaces; first half tuning,
  second half report.

Pk and WindowDiff are computed in spaCy tokens per document (k = half the mean reference
segment length in tokens) and averaged over documents. Peers in the same run: no boundary;
embedding TextTiling with every sentence of the pipeline's own split encoded on its own by
the same MiniLM (a second model pass; window 3, cutoff mean - std/2, as the component's
selection rule). Writes OUT.json and OUT.md.

    python scripts/evaluate_topics.py --half report --out metrics/topics
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from evaluate_segments import read_wikitext, split_articles  # noqa: E402

from paper.evaluation import load_splitter  # noqa: E402
from paper.segmentation_metrics import boundaries_from_starts, pk, window_diff  # noqa: E402
from paper.synthetic import TopicDocument, build  # noqa: E402
from spacy_attnseg import topics  # noqa: E402
from spacy_attnseg.gold import read_conllu_documents  # noqa: E402

DATA = ROOT / "data"


def wikitext_articles(half: str) -> List[Any]:
    raw = read_wikitext(DATA / "wikitext-2" / "wiki.test.raw")
    articles = split_articles(raw, load_splitter("punkt"))
    middle = len(articles) // 2
    return articles[:middle] if half == "tune" else articles[middle:]


def wikitext_docs(half: str) -> List[TopicDocument]:
    docs = []
    for article in wikitext_articles(half):
        text, starts, offset, previous = [], [], 0, None
        for sentence, segment in zip(article.sentences, article.segment_ids, strict=True):
            if segment != previous:
                starts.append(offset)
                previous = segment
            text.append(sentence)
            offset += len(sentence) + 1
        docs.append(TopicDocument(" ".join(text), starts))
    return docs


def synthetic_docs(half: str, n_docs: int) -> List[TopicDocument]:
    texts = [a.sentences for a in wikitext_articles(half)]
    part = "dev" if half == "tune" else "test"
    for gold in read_conllu_documents(DATA / "UD_English-EWT" / f"en_ewt-ud-{part}.conllu"):
        bounds = gold.starts + [len(gold.text)]
        texts.append([gold.text[a:b].strip() for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    return build(texts, n_docs=n_docs, seed=0 if half == "tune" else 1)


def token_starts(doc: Any, char_starts: Sequence[int]) -> List[int]:
    idx = [t.idx for t in doc]
    return sorted({min(bisect.bisect_left(idx, c), len(doc) - 1) for c in char_starts})


def score(doc: Any, ref: Sequence[int], hyp: Sequence[int]) -> Dict[str, float]:
    n = len(doc)
    ref_gaps = boundaries_from_starts(ref, n)
    hyp_gaps = boundaries_from_starts(hyp, n)
    k = max(1, round(n / (2 * len(ref))))
    return {"pk": pk(ref_gaps, hyp_gaps, k), "wd": window_diff(ref_gaps, hyp_gaps, k)}


def embedding_texttiling(nlp: Any, doc: Any) -> List[int]:
    """Each sentence encoded on its own (a second pass), TextTiling as the component."""
    from thinc.api import to_numpy

    trf = nlp.get_pipe("transformer")
    sents = list(doc.sents)
    vectors = []
    for sdoc in trf.pipe(nlp.make_doc(s.text) for s in sents):
        hidden = to_numpy(sdoc._.trf_data.model_output.last_hidden_state)
        rows = numpy.unique(numpy.asarray(sdoc._.trf_data.align.dataXd))
        flat = hidden.reshape((-1, hidden.shape[-1]))
        vectors.append(flat[rows].mean(0) if len(rows) else numpy.zeros(hidden.shape[-1]))
    starts, _ = topics.segment(numpy.array(vectors), window=3, cutoff=0.5, min_sents=1)
    return [sents[s].start for s in starts]


def run(nlp: Any, docs: Sequence[TopicDocument], peers: bool) -> Dict[str, Any]:
    rows: Dict[str, List[Dict[str, float]]] = {"attn_segmenter": [], "no boundary": []}
    if peers:
        rows["embedding TextTiling (second pass)"] = []
    n_segments: Dict[str, List[int]] = {name: [] for name in rows}
    t0 = time.perf_counter()
    parsed = list(nlp.pipe([d.text for d in docs], batch_size=4))
    seconds = time.perf_counter() - t0
    for gold, doc in zip(docs, parsed, strict=True):
        ref = token_starts(doc, gold.starts)
        hyps = {
            "attn_segmenter": [span.start for span in doc.spans["attn_segments"]],
            "no boundary": [0],
        }
        if peers:
            hyps["embedding TextTiling (second pass)"] = embedding_texttiling(nlp, doc)
        for name, hyp in hyps.items():
            rows[name].append(score(doc, ref, hyp))
            n_segments[name].append(len(hyp))
    out = {}
    for name, values in rows.items():
        out[name] = {
            "pk": round(float(numpy.mean([v["pk"] for v in values])), 4),
            "wd": round(float(numpy.mean([v["wd"] for v in values])), 4),
            "segments_per_doc": round(float(numpy.mean(n_segments[name])), 2),
        }
    out["attn_segmenter"]["docs_per_s"] = round(len(docs) / seconds, 2)
    out["reference_segments_per_doc"] = round(float(numpy.mean([len(d.starts) for d in docs])), 2)
    return out


def main(argv: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--half", choices=["tune", "report"], default="report")
    parser.add_argument("--out", type=Path, default=ROOT / "metrics" / "topics")
    parser.add_argument("--n-synthetic", type=int, default=40)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument(
        "--set",
        action="append",
        dest="override",
        default=[],
        help="attn_segmenter setting, e.g. --set segment_cutoff=0.5",
    )
    args = parser.parse_args(argv)
    import torch

    from spacy_attnseg import load_pipeline

    torch.set_num_threads(args.threads)
    overrides = {}
    for item in args.override:
        key, value = item.split("=", 1)
        overrides[f"components.attn_segmenter.{key}"] = json.loads(value)
    nlp = load_pipeline(overrides=overrides)
    results = {
        "synthetic": run(nlp, synthetic_docs(args.half, args.n_synthetic), not args.no_peers),
        "wikitext": run(nlp, wikitext_docs(args.half), not args.no_peers),
    }
    payload = {
        "half": args.half,
        "settings": {k: v for k, v in nlp.get_pipe("attn_segmenter").cfg.items()},
        "results": results,
        "threads": args.threads,
        "load_average": os.getloadavg(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=2), encoding="utf8")
    title = f"# Topic segments ({args.half} half; Pk and WindowDiff in tokens, lower is better)"
    lines = [title, ""]
    for name, table in results.items():
        reference = table["reference_segments_per_doc"]
        lines += [
            f"## {name} (reference: {reference} segments/doc)",
            "",
            "| system | Pk | WindowDiff | segments/doc | docs/s |",
            "|---|---:|---:|---:|---:|",
        ]
        for system, row in table.items():
            if isinstance(row, dict):
                lines.append(
                    f"| {system} | {row['pk']:.3f} | {row['wd']:.3f} | "
                    f"{row['segments_per_doc']} | {row.get('docs_per_s', '')} |"
                )
        lines.append("")
    args.out.with_suffix(".md").write_text("\n".join(lines), encoding="utf8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
