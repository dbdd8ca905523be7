"""Speed and memory of the transformer with and without the attnseg components.

Every configuration runs in its own process (so peak RSS is its own), over the same
documents (UD EWT test documents, repeated to reach --n-docs), with torch pinned to
--threads. Configurations are run in alternating rounds and the fastest round of each is
kept, so a burst of load on the machine does not favour one of them. The machine's load
average is recorded before and after.

    python scripts/benchmark.py speed metrics/benchmark_speed
    python scripts/benchmark.py memory metrics/benchmark_memory
"""

import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import typer

ROOT = Path(__file__).resolve().parent.parent
EWT_TEST = ROOT / "data" / "UD_English-EWT" / "en_ewt-ud-test.conllu"

MODES: Dict[str, Dict[str, Any]] = {
    "transformer": {"help": "transformer alone (default sdpa attention)"},
    "segmenter": {"help": "transformer + attn_segmenter (hooks on the chosen heads)"},
    "attentions": {
        "help": "transformer with output_attentions on every layer (eager) + attn_segmenter"
    },
    "pairs_head": {"help": "transformer + attn_head_pairs on 1 head of the last layer"},
    "pairs_layer": {"help": "transformer + attn_head_pairs on all heads of the last layer"},
    "pairs_all": {"help": "transformer + attn_head_pairs on all heads of all layers"},
}

app = typer.Typer(add_completion=False)


def build(mode: str) -> Any:
    from spacy_attnseg import load_pipeline

    overrides: Dict[str, Any] = {}
    if mode == "attentions":
        overrides["components.transformer.model.transformer_config"] = {
            "output_attentions": True,
            "attn_implementation": "eager",
        }
    nlp = load_pipeline(overrides=overrides)
    if mode.startswith("transformer") or mode.startswith("pairs"):
        nlp.remove_pipe("attn_segmenter")
    if mode == "pairs_head":
        nlp.add_pipe("attn_head_pairs", config={"layers": [-1], "heads": [0]})
    elif mode == "pairs_layer":
        nlp.add_pipe("attn_head_pairs", config={"layers": [-1], "heads": []})
    elif mode == "pairs_all":
        nlp.add_pipe("attn_head_pairs", config={"layers": [], "heads": []})
    for name in nlp.pipe_names:
        component = nlp.get_pipe(name)
        if hasattr(component, "install_capture"):
            component.install_capture()
    return nlp


def texts(n_docs: int) -> List[str]:
    from spacy_attnseg.evaluation import read_conllu_documents

    docs = [doc.text for doc in read_conllu_documents(EWT_TEST)]
    return [docs[i % len(docs)] for i in range(n_docs)]


@app.command("one", hidden=True)
def run_one(mode: str, n_docs: int, threads: int, batch_size: int = 16) -> None:
    """Run one configuration and print a JSON line (called in a subprocess)."""
    import torch

    torch.set_num_threads(threads)
    nlp = build(mode)
    data = texts(n_docs)
    for _ in nlp.pipe(data[:16], batch_size=batch_size):
        pass
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    n_tokens = 0
    for doc in nlp.pipe(data, batch_size=batch_size):
        n_tokens += len(doc)
    seconds = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "mode": mode,
                "n_docs": n_docs,
                "n_tokens": n_tokens,
                "seconds": seconds,
                "docs_per_s": n_docs / seconds,
                "peak_rss_mb": rss / 1024,
                "peak_rss_before_mb": rss_before / 1024,
            }
        )
    )


def _spawn(
    mode: str, n_docs: int, threads: int, extra_env: Dict[str, str] | None = None
) -> Dict[str, Any]:
    env = dict(
        os.environ,
        OMP_NUM_THREADS=str(threads),
        MKL_NUM_THREADS=str(threads),
        OPENBLAS_NUM_THREADS="1",
        **(extra_env or {}),
    )
    out = subprocess.run(
        [sys.executable, __file__, "one", mode, str(n_docs), str(threads)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _machine(threads: int) -> Dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "torch_threads": threads,
        "loadavg_before": os.getloadavg(),
    }


def _write(results: Dict[str, Any], output: Path, table: List[str]) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(results, indent=2), encoding="utf8")
    output.with_suffix(".md").write_text("\n".join(table) + "\n", encoding="utf8")
    print("\n".join(table))


@app.command("speed")
def speed(
    output: Path = typer.Argument(..., help="Output path without suffix (.json and .md)."),
    modes: str = typer.Option(",".join(MODES), help="Comma-separated configurations."),
    n_docs: int = typer.Option(316, help="Documents per run (EWT test has 316)."),
    rounds: int = typer.Option(2, help="Alternating rounds; the fastest is kept."),
    threads: int = typer.Option(1, help="torch threads."),
) -> None:
    """Docs/s and peak RSS of each configuration, and ratios to the transformer alone."""
    chosen = [m.strip() for m in modes.split(",") if m.strip()]
    machine = _machine(threads)
    runs: Dict[str, List[Dict[str, Any]]] = {mode: [] for mode in chosen}
    for round_ in range(rounds):
        order = chosen if round_ % 2 == 0 else list(reversed(chosen))
        for mode in order:
            result = _spawn(mode, n_docs, threads)
            runs[mode].append(result)
            print(f"round {round_ + 1} {mode}: {result['docs_per_s']:.2f} docs/s", flush=True)
    machine["loadavg_after"] = os.getloadavg()
    best = {mode: max(results, key=lambda r: r["docs_per_s"]) for mode, results in runs.items()}
    base = best.get("transformer")
    table = [
        f"Speed on {n_docs} UD EWT test documents, torch threads {threads}, "
        f"{machine['cpu_count']} cores, load average before {machine['loadavg_before'][0]:.2f}"
        f", after {machine['loadavg_after'][0]:.2f}; fastest of {rounds} alternating rounds.",
        "",
        "| configuration | docs/s | time / transformer alone | peak RSS (MB) |",
        "|---|---|---|---|",
    ]
    for mode in chosen:
        r = best[mode]
        ratio = base["seconds"] and r["seconds"] / base["seconds"] if base else float("nan")
        r["time_ratio_to_transformer"] = ratio
        table.append(
            f"| {MODES[mode]['help']} | {r['docs_per_s']:.2f} | {ratio:.3f} | "
            f"{r['peak_rss_mb']:.0f} |"
        )
    _write({"machine": machine, "best": best, "runs": runs}, output, table)


@app.command("memory")
def memory(
    output: Path = typer.Argument(..., help="Output path without suffix (.json and .md)."),
    mode: str = typer.Option("pairs_all", help="Configuration to measure."),
    sizes: str = typer.Option("500,2000", help="Comma-separated numbers of documents."),
    threads: int = typer.Option(1, help="torch threads."),
    baseline: str = typer.Option(
        "transformer",
        help="Configuration measured beside it over the same documents, so that growth of "
        "the transformer pass itself can be told apart ('' to skip).",
    ),
    mmap_threshold: int = typer.Option(
        131072,
        help="Also measure the configuration with glibc's MALLOC_MMAP_THRESHOLD_ set to "
        "this many bytes (0 to skip): large buffers then go back to the system when freed.",
    ),
) -> None:
    """Peak RSS of one configuration streaming over growing numbers of documents, beside
    the same measurement of a baseline configuration (the transformer alone) and of the
    configuration with a fixed glibc mmap threshold."""
    machine = _machine(threads)
    counts = [int(s) for s in sizes.split(",")]
    rows = [(MODES[mode]["help"], mode, {})]
    if baseline:
        rows.append((MODES[baseline]["help"], baseline, {}))
    if mmap_threshold:
        env = {"MALLOC_MMAP_THRESHOLD_": str(mmap_threshold)}
        rows.append((f"{MODES[mode]['help']}, MALLOC_MMAP_THRESHOLD_={mmap_threshold}", mode, env))
    measured = []
    for label, name, env in rows:
        results = [_spawn(name, n, threads, env) for n in counts]
        for r in results:
            r["rss_ratio_to_first"] = r["peak_rss_mb"] / results[0]["peak_rss_mb"]
        measured.append({"configuration": label, "mode": name, "env": env, "results": results})
    machine["loadavg_after"] = os.getloadavg()
    header = " | ".join(f"{n} docs: peak RSS (MB)" for n in counts)
    table = [
        f"Peak RSS streaming over UD EWT test documents (repeated), each run in its own "
        f"process, torch threads {threads}, load average before "
        f"{machine['loadavg_before'][0]:.2f}, after {machine['loadavg_after'][0]:.2f}. "
        f"Target: '{MODES[mode]['help']}' at {counts[-1]} documents within 10% of {counts[0]}.",
        "",
        f"| configuration | {header} | RSS {counts[-1]} / {counts[0]} | docs/s at {counts[-1]} |",
        "|---|" + "---|" * (len(counts) + 2),
    ]
    for row in measured:
        results = row["results"]
        cells = " | ".join(f"{r['peak_rss_mb']:.0f}" for r in results)
        table.append(
            f"| {row['configuration']} | {cells} | {results[-1]['rss_ratio_to_first']:.3f} | "
            f"{results[-1]['docs_per_s']:.2f} |"
        )
    _write({"machine": machine, "mode": mode, "measured": measured}, output, table)


if __name__ == "__main__":
    app()
