"""Speed and memory of the transformer with and without the attnseg components; protocol:
``paper.benchmark``.

    python scripts/benchmark.py speed metrics/benchmark_speed
    python scripts/benchmark.py memory metrics/benchmark_memory
    python scripts/benchmark.py long metrics/benchmark_long
    python scripts/benchmark.py dense metrics/benchmark_dense
    python scripts/benchmark.py scale metrics/benchmark_scale
    python scripts/benchmark.py layout metrics/benchmark_layout
"""

import sys
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paper import benchmark  # noqa: E402

app = typer.Typer(add_completion=False)
OUTPUT = typer.Argument(..., help="Output path without suffix (.json and .md).")
THREADS = typer.Option(1, help="torch threads.")


@app.command("speed")
def speed(
    output: Path = OUTPUT,
    modes: str = typer.Option(
        ",".join(benchmark.SPEED_MODES), help="Comma-separated configurations."
    ),
    n_docs: int = typer.Option(316, help="Documents per run (EWT test has 316)."),
    rounds: int = typer.Option(2, help="Alternating rounds; the fastest is kept."),
    threads: int = THREADS,
    pipeline: str = typer.Option(
        "attention",
        help="Pipeline of the transformer and attn_segmenter: a shipped name "
        "('attention': the embedded MiniLM, 'mpnet': the 12-layer encoder) or a config.",
    ),
    senter: str = typer.Option(
        "",
        help="The pipeline of the 'default' and 'senter' modes (a name such as "
        "'mpnet-senter' or a trained directory; '': the default pipeline).",
    ),
) -> None:
    """Docs/s and peak RSS of each configuration, and ratios to the transformer alone."""
    benchmark.speed(output, modes, n_docs, rounds, threads, pipeline, senter)


@app.command("memory")
def memory(
    output: Path = OUTPUT,
    mode: str = typer.Option("pairs_all", help="Configuration to measure."),
    sizes: str = typer.Option("500,2000", help="Comma-separated numbers of documents."),
    threads: int = THREADS,
    repeats: int = typer.Option(
        3, help="Separate processes per configuration and size; the table gives the median."
    ),
    baseline: str = typer.Option(
        "transformer",
        help="Configuration measured beside it over the same documents, so that growth of "
        "the transformer pass itself can be told apart ('' to skip).",
    ),
    trim: bool = typer.Option(
        True,
        help="Also measure the configuration with the malloc_trim component last, which "
        "returns the heap's free pages to the system after each batch.",
    ),
    mmap_threshold: int = typer.Option(
        131072,
        help="Also measure the configuration with glibc's MALLOC_MMAP_THRESHOLD_ set to "
        "this many bytes (0 to skip): large buffers then go back to the system when freed.",
    ),
) -> None:
    """Peak RSS of one configuration over growing numbers of documents, beside a baseline,
    the configuration with malloc_trim and with a fixed mmap threshold."""
    benchmark.memory(output, mode, sizes, threads, repeats, baseline, trim, mmap_threshold)


@app.command("long")
def long(
    output: Path = OUTPUT,
    modes: str = typer.Option(benchmark.LONG_MODES, help="Comma-separated configurations."),
    sizes: str = typer.Option("1000,10000,100000", help="Comma-separated document lengths."),
    threads: int = THREADS,
) -> None:
    """Peak RSS and time of one document of each length through each configuration."""
    benchmark.long(output, modes, sizes, threads)


@app.command("dense")
def dense(
    output: Path = OUTPUT,
    kinds: str = typer.Option(
        ",".join(benchmark.DENSE_KINDS), help="Comma-separated kinds of text."
    ),
    characters: int = typer.Option(200_000, help="Characters of each document."),
    threads: int = THREADS,
) -> None:
    """Peak RSS and time of chunk over one document of each kind of text, with parts sized
    by wordpieces and by characters alone."""
    benchmark.dense(output, kinds, characters, threads)


@app.command("layout")
def layout(
    output: Path = OUTPUT,
    layouts: str = typer.Option(
        ",".join(benchmark.LAYOUTS), help="Comma-separated layouts of the text."
    ),
    sizes: str = typer.Option("1000,10000,100000", help="Comma-separated document lengths."),
    repeats: int = typer.Option(3, help="Runs per layout and length; the fastest is kept."),
) -> None:
    """Seconds of the rules that read the layout, on one document of each length per layout."""
    benchmark.layout(output, layouts, sizes, repeats)


@app.command("scale")
def scale(
    output: Path = OUTPUT,
    n_docs: int = typer.Option(1280, help="Documents (EWT test, cycled)."),
    partition: int = typer.Option(64, help="Documents per partition."),
) -> None:
    """docs/s of the default pipeline in one process and on a local Dask cluster."""
    benchmark.scale(output, n_docs, partition)


if __name__ == "__main__":
    app()
