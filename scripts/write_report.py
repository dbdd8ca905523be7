"""Write the claim-by-claim report of the corpus analyses.

    python scripts/write_report.py metrics/analysis reports/paper_claims.md --figures figures

Reads the JSON files of ``scripts/analyze_corpus.py`` (missing ones leave their claims
"not measured"), writes the markdown report with the figures linked relative to it, and
``claims.json`` beside the metrics.
"""

import sys
from pathlib import Path

import typer

# the reproduction kit (paper/) is not installed: import it from the checkout
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

app = typer.Typer(add_completion=False)


@app.command()
def main(
    metrics: Path = typer.Argument(Path("metrics/analysis"), help="Folder of the JSON results."),
    report: Path = typer.Argument(Path("reports/paper_claims.md"), help="Markdown to write."),
    figures: Path = typer.Option(Path("figures"), "--figures", help="Folder of the PNGs."),
) -> None:
    """Evaluate every claim of the paper on the measured numbers and write the report."""
    from paper.claims import claims_json, write_report
    from paper.run import load_metrics, write_json

    results = load_metrics(metrics)
    if not any(results.values()):
        raise typer.BadParameter(f"no analysis results in {metrics}")
    path, claims = write_report(results, figures_dir=figures, report_path=report)
    write_json(metrics / "claims.json", claims_json(claims))
    measured = [c for c in claims if c.holds is not None]
    held = sum(1 for c in measured if c.holds)
    typer.echo(f"{held} of {len(measured)} claims hold -> {path}")


if __name__ == "__main__":
    app()
