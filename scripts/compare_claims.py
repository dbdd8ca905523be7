"""Put the paper's claims measured on two models side by side.

    python scripts/compare_claims.py reports/claims_side_by_side.md \
        "MiniLM-L6=metrics/analysis/claims.json" "MPNet-12=metrics/analysis_mpnet/claims.json"

Each argument after the output is ``NAME=PATH`` of a ``claims.json`` that
``scripts/write_report.py`` wrote; the table has one row per claim (in the paper's order)
and, per model, what was measured and whether the claim holds.
"""

import json
from pathlib import Path
from typing import Dict, List

import typer

MARK = {True: "holds", False: "fails", None: "not measured"}


def main(
    output: Path = typer.Argument(..., help="Markdown to write."),
    models: List[str] = typer.Argument(..., help="NAME=PATH of each model's claims.json."),
) -> None:
    named: Dict[str, Dict[str, dict]] = {}
    order: List[dict] = []
    for item in models:
        name, _, path = item.partition("=")
        if not path:
            raise typer.BadParameter(f"{item!r} is not NAME=PATH")
        claims = json.loads(Path(path).read_text(encoding="utf8"))
        named[name] = {c["key"]: c for c in claims}
        if not order:
            order = claims
    header = " | ".join(f"{name}: measured | {name}" for name in named)
    lines = [
        "# The paper's claims, model by model",
        "",
        "Written by `scripts/compare_claims.py` from "
        + ", ".join(f"`{item.partition('=')[2]}` ({item.partition('=')[0]})" for item in models)
        + ". Each model's own report says how each number was measured (window sample, "
        "criteria).",
        "",
        f"| claim | where | {header} |",
        "|---|---|" + "---|---|" * len(named),
    ]
    for claim in order:
        cells = []
        for claims in named.values():
            found = claims.get(claim["key"])
            measured = found["measured"] if found else ""
            cells += [measured.replace("|", "/"), MARK[found["holds"] if found else None]]
        lines.append(f"| {claim['statement']} | {claim['where']} | {' | '.join(cells)} |")
    totals = []
    for name, claims in named.items():
        held = sum(1 for c in claims.values() if c["holds"])
        measured = sum(1 for c in claims.values() if c["holds"] is not None)
        totals.append(f"{name}: {held} of {measured} hold")
    lines += ["", "; ".join(totals) + "."]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines) + "\n", encoding="utf8")
    typer.echo("; ".join(totals) + f" -> {output}")


if __name__ == "__main__":
    typer.run(main)
