"""The corpus analyses of Halevi et al. (2026), one subcommand per analysis group.

    python scripts/analyze_corpus.py windows data/wikitext-2/wiki.test.raw corpus/windows.spacy
    python scripts/analyze_corpus.py attention corpus/windows.spacy   # Figs. 2-4
    python scripts/analyze_corpus.py example corpus/windows.spacy     # Figs. 4, 5, 9, 12
    python scripts/analyze_corpus.py pairs corpus/windows.spacy       # Figs. 6-8, 10-13

Every subcommand takes ``--config`` (a pipeline directory or config with a
spacy-transformers component; default: the embedded MiniLM), ``--gpu-id`` and
``--threads``; the streaming ones take ``--n-windows`` (0: all) and ``--batch-size``.
Numbers go to ``--metrics`` (JSON), figures to ``--figures`` (PNG).
"""

import os

# NumPy's OpenBLAS threads spin against torch's on a small machine: the per-window
# matrix products are tiny, so one BLAS thread is much faster (set before NumPy loads).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import sys
from pathlib import Path  # noqa: E402

import typer  # noqa: E402

# the reproduction kit (paper/) is not installed: import it from the checkout
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT_CONFIG = "configs/minilm.cfg"
CONFIG_HELP = "Pipeline directory or .cfg with a spacy-transformers transformer component."

app = typer.Typer(add_completion=False, no_args_is_help=True)


def _setup(threads: int) -> None:
    from paper.run import set_threads

    set_threads(threads)


# options shared by the commands
WINDOWS = typer.Argument(..., help="Windows written by `windows`.")
CONFIG = typer.Option(DEFAULT_CONFIG, "--config", "-c", help=CONFIG_HELP)
METRICS = typer.Option(Path("metrics/analysis"), "--metrics")
FIGURES = typer.Option(Path("figures"), "--figures")
N_WINDOWS = typer.Option(0, "--n-windows", "-n", help="Windows to use (0: all).")
BATCH_SIZE = typer.Option(32, "--batch-size")
GPU_ID = typer.Option(-1, "--gpu-id", help="GPU to use (-1: CPU).")
THREADS = typer.Option(0, "--threads", help="torch CPU threads (0: default).")


@app.command("windows")
def windows_cli(
    wikitext: Path = typer.Argument(..., help="WikiText raw file (wiki.test.raw)."),
    output: Path = typer.Argument(..., help="Where to write the windows (.spacy)."),
    config: Path = CONFIG,
    metrics: Path = METRICS,
) -> None:
    """Cut WikiText into windows of 128 wordpieces with the model's tokenizer."""
    from paper.run import run_windows

    result = run_windows(wikitext, output, metrics, model=config)
    typer.echo(
        f"{result['n_windows']} windows ({result['n_articles']} articles, "
        f"{result['mean_sentences_per_window']:.1f} sentences per window) -> {output}"
    )


@app.command("attention")
def attention_cli(
    windows: Path = WINDOWS,
    config: Path = CONFIG,
    metrics: Path = METRICS,
    figures: Path = FIGURES,
    n_windows: int = N_WINDOWS,
    batch_size: int = BATCH_SIZE,
    gpu_id: int = GPU_ID,
    threads: int = THREADS,
) -> None:
    """Summed attention maps, diagonal bands, attention received (Figs. 2, 3, 4)."""
    from paper.run import run_attention

    _setup(threads)
    result = run_attention(
        config, windows, metrics, figures, n_windows=n_windows, batch_size=batch_size,
        gpu_id=gpu_id,
    )  # fmt: skip
    typer.echo(f"attention: {result['run']['n_windows']} windows in {result['run']['seconds']} s")


@app.command("example")
def example_cli(
    windows: Path = WINDOWS,
    config: Path = CONFIG,
    metrics: Path = METRICS,
    figures: Path = FIGURES,
    window: int = typer.Option(-1, "--window", help="Window index (-1: first full one)."),
    layer: int = typer.Option(-1, "--layer", help="Layer (0-based, -1: last)."),
    head: int = typer.Option(-1, "--head", help="Head (0-based, -1: most columnar)."),
    gpu_id: int = GPU_ID,
    threads: int = THREADS,
) -> None:
    """One window: attention maps, context similarity blocks, pair tables (Figs. 4, 5, 9,
    12)."""
    from paper.run import run_example

    _setup(threads)
    result = run_example(
        config, windows, metrics, figures, window=window, layer=layer, head=head, gpu_id=gpu_id
    )
    typer.echo(f"example: window {result['window']}, head {result['head'] + 1}")


@app.command("pairs")
def pairs_cli(
    windows: Path = WINDOWS,
    config: Path = CONFIG,
    metrics: Path = METRICS,
    figures: Path = FIGURES,
    n_windows: int = N_WINDOWS,
    batch_size: int = BATCH_SIZE,
    gpu_id: int = GPU_ID,
    threads: int = THREADS,
) -> None:
    """High context-similarity pairs of every head (Figs. 6, 7, 8, 10, 11, 12, 13)."""
    from paper.run import run_pairs

    _setup(threads)
    result = run_pairs(
        config, windows, metrics, figures, n_windows=n_windows, batch_size=batch_size,
        gpu_id=gpu_id,
    )  # fmt: skip
    typer.echo(f"pairs: {result['run']['n_windows']} windows in {result['run']['seconds']} s")


if __name__ == "__main__":
    app()
