"""The pipelines on a GPU against the CPU: the protocol behind ``scripts/gpu_check.py``
(which holds the options and their defaults).

    python scripts/gpu_check.py metrics/gpu_check --gpu-id 0

Writes OUTPUT.json and OUTPUT.md. Each pipeline runs over the UD EWT test documents
(316) once on the CPU and once on the GPU, each in its own process; the table counts the
sentence starts and segment boundaries that differ and the largest difference of a
per-token score. Then, on the GPU: the configurations of ``paper.benchmark`` in one
process, batch by batch in turn (``paper.benchmark.interleaved_seconds``, with the
GPU synchronised after each batch), and one long document per configuration with its
peak GPU memory; and the ``chunk`` command with --gpu-id against the CPU.

Each run is a child process, ``python -m paper.gpu_check one|timed ...`` (``worker``).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from paper import benchmark

ROOT = Path(__file__).resolve().parent.parent
# configurations of paper.benchmark compared CPU against GPU
COMPARED = ("default", "segmenter", "attentions", "everything", "pairs_all")
TIMED = ("transformer", "pass", "default", "segmenter")
LONG_MODES = ("transformer", "pass", "default")
# configurations with head pairs (hundreds of thousands a document): fewer documents
PAIR_MODES = ("everything", "pairs_all")
PAIR_DOCS = 32
# the --max-tokens of the compared chunk runs
CHUNK_MAX_TOKENS = 256


def _records(doc: Any) -> Dict[str, Any]:
    """What a pipeline decided and scored on ``doc``."""
    from spacy_attnseg.components.base import doc_scores

    record: Dict[str, Any] = {
        "starts": [token.i for token in doc if token.is_sent_start and token.i > 0],
        "spans": {key: [[s.start, s.end] for s in group] for key, group in doc.spans.items()},
        "scores": doc_scores(doc),
    }
    if doc.has_extension("head_pairs"):
        pairs = doc._.head_pairs
        columns = (pairs.layer, pairs.head, pairs.i, pairs.j, pairs.score)
        record["pairs"] = [
            [int(a), int(b), int(c), int(d), float(e)]
            for a, b, c, d, e in zip(*columns, strict=True)
        ]
    return record


def run_one(mode: str, output: Path, n_docs: int = 316, gpu_id: int = -1) -> None:
    """Run one configuration over the documents and write its records (a child)."""
    from spacy_attnseg.loading import use_gpu

    use_gpu(gpu_id)
    nlp = benchmark.build(mode)
    docs = list(nlp.pipe(benchmark.texts(n_docs), batch_size=benchmark.BATCH_SIZE))
    output.write_text(json.dumps([_records(doc) for doc in docs]))


def _compare(cpu: List[Dict[str, Any]], gpu: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Counts of decisions that differ, and the largest score difference."""
    starts = [len(set(a["starts"]) ^ set(b["starts"])) for a, b in zip(cpu, gpu, strict=True)]
    n_starts = sum(len(a["starts"]) for a in cpu)
    spans_differ = 0
    n_spans = 0
    for a, b in zip(cpu, gpu, strict=True):
        for key, group in a["spans"].items():
            n_spans += len(group)
            other = {tuple(span) for span in b["spans"].get(key, [])}
            spans_differ += len({tuple(span) for span in group} ^ other)
    score_diff = 0.0
    for a, b in zip(cpu, gpu, strict=True):
        for key, values in a["scores"].items():
            for x, y in zip(values, b["scores"][key], strict=True):
                score_diff = max(score_diff, abs(x - y))
    result = {
        "docs": len(cpu),
        "sentence_starts": n_starts,
        "starts_differ": sum(starts),
        "spans": n_spans,
        "spans_differ": spans_differ,
        "max_score_diff": score_diff,
    }
    if "pairs" in cpu[0]:
        pairs_a = {(d, *p[:4]) for d, r in enumerate(cpu) for p in r["pairs"]}
        pairs_b = {(d, *p[:4]) for d, r in enumerate(gpu) for p in r["pairs"]}
        result["pairs"] = len(pairs_a)
        result["pairs_differ"] = len(pairs_a ^ pairs_b)
    return result


def run_timed(gpu_id: int, n_docs: int, rounds: int, output: Path) -> None:
    """The GPU configurations batch by batch in turn, and the long documents (a child)."""
    import torch

    from spacy_attnseg.loading import use_gpu

    use_gpu(gpu_id)
    pipelines = {mode: benchmark.build(mode) for mode in TIMED}
    data = benchmark.texts(n_docs)
    seconds = benchmark.interleaved_seconds(pipelines, data, rounds, sync=torch.cuda.synchronize)
    long: Dict[str, Dict[str, float]] = {}
    text = benchmark.long_text(100_000)
    for mode in LONG_MODES:
        nlp = pipelines[mode]
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        began = time.perf_counter()
        doc = nlp(text)
        torch.cuda.synchronize()
        long[mode] = {
            "n_tokens": len(doc),
            "seconds": time.perf_counter() - began,
            "peak_gpu_mb": torch.cuda.max_memory_allocated() / 2**20,
        }
    output.write_text(
        json.dumps(
            {
                "device": torch.cuda.get_device_name(gpu_id),
                "n_docs": n_docs,
                "rounds": rounds,
                "seconds": seconds,
                "long": long,
            }
        )
    )


def _run(args: List[str]) -> None:
    subprocess.run([sys.executable, "-m", "paper.gpu_check", *args], check=True, cwd=ROOT)


def _chunk(gpu_id: int, input: Path) -> List[Dict[str, Any]]:
    command = [sys.executable, "-m", "spacy_attnseg", "chunk", str(input), "-q"]
    command += ["--max-tokens", str(CHUNK_MAX_TOKENS)]
    out = subprocess.run(
        [*command, "--gpu-id", str(gpu_id)], check=True, capture_output=True, text=True
    ).stdout
    return [json.loads(line) for line in out.splitlines()]


def _check(
    scratch: Path, gpu_id: int, n_docs: int, rounds: int, modes: str
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The comparisons and the GPU's timings, the runs' records written in ``scratch``."""
    compared: Dict[str, Any] = {}
    for mode in modes.split(","):
        runs = []
        docs = min(n_docs, PAIR_DOCS) if mode in PAIR_MODES else n_docs
        for device in (-1, gpu_id):
            path = scratch / f"{mode}{device}.json"
            _run(["one", mode, str(path), "--n-docs", str(docs), "--gpu-id", str(device)])
            runs.append(json.loads(path.read_text()))
        compared[mode] = _compare(*runs)
        print(f"{mode}: {compared[mode]}", file=sys.stderr)
    text = scratch / "docs.jsonl"
    text.write_text(
        "".join(json.dumps({"text": t}) + "\n" for t in benchmark.texts(min(n_docs, 64)))
    )
    chunks = [_chunk(device, text) for device in (-1, gpu_id)]
    starts = [{(c["doc"], c["start"]) for c in run} for run in chunks]
    compared["chunk"] = {
        "chunks": len(chunks[0]),
        "chunks_differ": len(starts[0] ^ starts[1]),
        "over_max_tokens": sum(c["n_tokens"] > CHUNK_MAX_TOKENS for c in chunks[1]),
    }
    path = scratch / "timed.json"
    _run(["timed", str(gpu_id), str(n_docs), str(rounds), str(path)])
    timing = json.loads(path.read_text())
    return compared, timing


def check(output: Path, gpu_id: int, n_docs: int, rounds: int, modes: str) -> str:
    """Compare every configuration on the CPU and the GPU, then time the GPU; write
    OUTPUT.json and OUTPUT.md and return the table."""
    with tempfile.TemporaryDirectory() as folder:
        compared, timing = _check(Path(folder), gpu_id, n_docs, rounds, modes)
    results = {"compared": compared, "timed": timing, "load": os.getloadavg()}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")
    table = _table(results)
    output.with_suffix(".md").write_text(table)
    return table


def _table(results: Dict[str, Any]) -> str:
    timing = results["timed"]
    base = timing["seconds"]["transformer"]
    lines = [
        f"# GPU check: {timing['device']}",
        "",
        "`python scripts/gpu_check.py metrics/gpu_check --gpu-id 0`. Each configuration "
        "over the UD EWT test documents on the CPU and on the GPU, each in its own process "
        f"(the first {PAIR_DOCS} for {' and '.join(PAIR_MODES)}):",
        "",
        "| configuration | sentence starts | differ | segment spans | differ | "
        "largest score difference | head pairs | differ |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, row in results["compared"].items():
        if mode == "chunk":
            continue
        lines.append(
            f"| {mode} | {row['sentence_starts']} | {row['starts_differ']} | {row['spans']} | "
            f"{row['spans_differ']} | {row['max_score_diff']:.2e} | {row.get('pairs', '')} | "
            f"{row.get('pairs_differ', '')} |"
        )
    chunk = results["compared"]["chunk"]
    lines += [
        "",
        f"`chunk --gpu-id` on 64 documents: {chunk['chunks']} chunks on the CPU, "
        f"{chunk['chunks_differ']} chunk starts differ on the GPU, "
        f"{chunk['over_max_tokens']} over --max-tokens.",
        "",
        f"Speed on the GPU ({timing['n_docs']} documents, batch by batch in turn, fastest "
        f"of {timing['rounds']} rounds per batch, the GPU synchronised after each batch):",
        "",
        "| configuration | seconds | docs/s | / transformer alone | / the pass alone |",
        "|---|---|---|---|---|",
    ]
    for mode, seconds in timing["seconds"].items():
        lines.append(
            f"| {mode} | {seconds:.2f} | {timing['n_docs'] / seconds:.0f} | "
            f"{seconds / base:.3f} | {seconds / timing['seconds']['pass']:.3f} |"
        )
    lines += ["", "One long document on the GPU:", ""]
    lines += ["| configuration | tokens | seconds | peak GPU memory (MB) |", "|---|---|---|---|"]
    for mode, row in timing["long"].items():
        lines.append(
            f"| {mode} | {row['n_tokens']} | {row['seconds']:.1f} | {row['peak_gpu_mb']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def worker(argv: Any = None) -> None:
    """The child processes' entry: ``one MODE OUTPUT [--n-docs N] [--gpu-id G]`` and
    ``timed GPU_ID N_DOCS ROUNDS OUTPUT``."""
    parser = argparse.ArgumentParser(prog="python -m paper.gpu_check")
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("one")
    one.add_argument("mode")
    one.add_argument("output", type=Path)
    one.add_argument("--n-docs", type=int, default=316)
    one.add_argument("--gpu-id", type=int, default=-1)
    timed = commands.add_parser("timed")
    timed.add_argument("gpu_id", type=int)
    timed.add_argument("n_docs", type=int)
    timed.add_argument("rounds", type=int)
    timed.add_argument("output", type=Path)
    args = parser.parse_args(argv)
    if args.command == "one":
        run_one(args.mode, args.output, args.n_docs, args.gpu_id)
    else:
        run_timed(args.gpu_id, args.n_docs, args.rounds, args.output)


if __name__ == "__main__":
    worker()
