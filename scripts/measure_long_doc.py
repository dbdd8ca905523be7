"""Peak RSS and time of one ~100,000-token document (UD EWT test repeated) through the
transformer alone or the default pipeline, in this process (1 torch thread). Prints the
numbers and writes them to ``metrics/long_doc_MODE.json`` (with the load average).

    python scripts/measure_long_doc.py transformer
    python scripts/measure_long_doc.py default
"""

import json
import os
import resource
import sys
import time
from pathlib import Path

import torch

from spacy_attnseg import load_pipeline
from spacy_attnseg.gold import read_conllu_documents

EWT_TEST = Path(__file__).resolve().parents[1] / "data" / "UD_English-EWT" / "en_ewt-ud-test.conllu"


def main(mode: str, min_words: int = 85000) -> None:
    torch.set_num_threads(1)
    text = " ".join(doc.text for doc in read_conllu_documents(EWT_TEST))
    while len(text.split()) < min_words:
        text = text + " " + text
    nlp = load_pipeline()
    if mode == "transformer":
        nlp.remove_pipe("attn_segmenter")
    start = time.perf_counter()
    doc = nlp(text)
    seconds = time.perf_counter() - start
    segments = len(doc.spans["attn_segments"]) if "attn_segments" in doc.spans else 0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{mode}: {len(doc)} tokens, {segments} segments, {seconds:.1f} s, {peak_mb} MB peak")
    record = {
        "mode": mode,
        "tokens": len(doc),
        "segments": segments,
        "seconds": round(seconds, 1),
        "peak_rss_mb": peak_mb,
        "torch_threads": 1,
        "load_average": os.getloadavg(),
    }
    out = Path(__file__).resolve().parents[1] / "metrics" / f"long_doc_{mode}.json"
    out.write_text(json.dumps(record, indent=2), encoding="utf8")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "default")
