"""The pipelines on a GPU against the CPU; protocol: ``paper.gpu_check``.

python scripts/gpu_check.py metrics/gpu_check --gpu-id 0
"""

import sys
from pathlib import Path

import typer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from paper import gpu_check  # noqa: E402


def main(
    output: Path = typer.Argument(..., help="Output path without suffix (.json and .md)."),
    gpu_id: int = typer.Option(0, "--gpu-id", "-g", help="The GPU to check."),
    n_docs: int = typer.Option(316, help="Documents per run (EWT test has 316)."),
    rounds: int = typer.Option(3, help="Rounds of the timed runs; the fastest is kept."),
    modes: str = typer.Option(",".join(gpu_check.COMPARED), help="Configurations compared."),
) -> None:
    """Each configuration on the CPU and on the GPU, the decisions that differ counted,
    then the GPU's speed against the transformer alone and a long document's memory."""
    if gpu_id < 0:
        raise typer.BadParameter("give the GPU to check: --gpu-id 0 or higher")
    from spacy_attnseg.loading import use_gpu

    try:
        use_gpu(gpu_id)  # E121 here rather than in the first GPU run
    except ValueError as error:
        typer.echo(f"Error: {error}", err=True)
        raise typer.Exit(1) from None
    typer.echo(gpu_check.check(output, gpu_id, n_docs, rounds, modes))


if __name__ == "__main__":
    typer.run(main)
