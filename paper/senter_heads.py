"""Which attention heads carry the weight in a trained ``attn_senter``: :func:`report`,
behind ``scripts/report_senter_heads.py`` (``spacy project run report-senter-heads``),
which holds the options and their defaults.

Two measures per (layer, head):

* **ablation** (with ``--data``, a ``.spacy`` file with gold sentence starts, e.g. the
  held-out dev part): the increase in the per-token log loss and the drop in
  sentence-start F1 (tokens after the first of each doc) when the head's attention
  features (column scores, neighbour similarities), or its output vector, are replaced
  by their training mean (0 after standardisation), all other inputs kept; whole feature
  blocks are ablated the same way;
* **weight norm**: the L2 norm of the first (projection) layer's weights (of all
  members) over the head's standardised feature columns, relative to the largest head
  (a weak measure here: the projection is layer-normalised and weight-decayed, so the
  norms stay near their initial scale).

Writes ``OUT.json``, ``OUT.md`` (layers x heads tables, the top heads, the blocks) and
``OUT.png`` (heatmaps).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from spacy_attnseg.architectures import member_chains, member_projections
from spacy_attnseg.calibration import start_f1
from spacy_attnseg.features import head_of_feature

Head = Tuple[int, int]


ATTENTION_BLOCKS = ("colsum_log", "colsum_rel", "sim_prev", "sim_next")


def head_columns(names: List[str], blocks: Optional[Sequence[str]] = None) -> Dict[Head, List[int]]:
    """The feature columns of every head (only those of ``blocks`` if given)."""
    columns: Dict[Head, List[int]] = defaultdict(list)
    for index, name in enumerate(names):
        head = head_of_feature(name)
        if head is not None and (blocks is None or name.partition(":")[0] in blocks):
            columns[head].append(index)
    return dict(columns)


def projection_weights(senter: Any) -> List[numpy.ndarray]:
    """The weights ``(nO, nP, nI)`` of every member's first Maxout layer (the per-token
    projection)."""
    weights = []
    for project in member_projections(senter.model):
        found = [node.get_param("W") for node in project.walk() if node.has_param("W")]
        if not found:
            raise ValueError("the projection layer has no weights; is the model initialized?")
        weights.append(senter.model.ops.to_numpy(found[0]))
    return weights


def weight_norms(senter: Any, names: List[str]) -> Tuple[Dict[str, Dict[Head, float]], Dict]:
    """Per head, the norm of the projection weights over its attention features (column
    scores and neighbour similarities) and over its head outputs (``context`` block); per
    head and block, the same over that block's columns; and the norms of the other inputs."""
    column_norm = numpy.sqrt(
        sum((w.reshape(-1, w.shape[-1]) ** 2).sum(axis=0) for w in projection_weights(senter))
    )

    def norm(columns: Sequence[int]) -> float:
        return float(numpy.sqrt((column_norm[list(columns)] ** 2).sum()))

    per_group = {
        "attention": {h: norm(c) for h, c in head_columns(names, ATTENTION_BLOCKS).items()},
        "outputs": {h: norm(c) for h, c in head_columns(names, ("context",)).items()},
    }
    per_block: Dict[str, Any] = defaultdict(dict)
    for index, name in enumerate(names):
        head = head_of_feature(name)
        if head is not None:
            block = name.partition(":")[0]
            key = f"L{head[0]}H{head[1]}"
            per_block[key][block] = per_block[key].get(block, 0.0) + float(column_norm[index]) ** 2
    for key in per_block:
        per_block[key] = {b: float(numpy.sqrt(v)) for b, v in per_block[key].items()}
    prefixes = {"hidden": "hidden:", "words": "words:", "doc_punct": "doc_punct", "flags": "has_"}
    per_block["_other"] = {
        label: norm([i for i, n in enumerate(names) if n.startswith(prefix)])
        for label, prefix in prefixes.items()
    }
    return per_group, dict(per_block)


def ablation(nlp: Any, senter: Any, path: Path, names: List[str]) -> Dict[str, Any]:
    """Loss increase and F1 drop on ``path`` when features are set to 0 (their training
    mean after standardisation): per head its attention features, per head its output
    vector, and per feature block all of it."""
    from spacy.training import Corpus

    examples = list(Corpus(str(path))(nlp))
    trf = nlp.get_pipe(senter.cfg["transformer"])
    docs = list(trf.pipe([eg.predicted for eg in examples]))
    gold = []
    for eg in examples:
        aligned = eg.get_aligned("SENT_START")
        gold.append(numpy.array([tag == 1 for tag in aligned], dtype=bool))
    ops = senter.model.ops
    members = member_chains(senter.model)
    inputs = [[ops.to_numpy(array) for array in layer.predict(docs)] for layer, _ in members]

    def measure(columns: Optional[List[int]]) -> Tuple[float, float]:
        per_member = []
        for (_, rest), member_inputs in zip(members, inputs, strict=True):
            X = []
            for array in member_inputs:
                if columns:
                    array = array.copy()
                    array[:, columns] = 0.0
                X.append(ops.asarray2f(array))
            per_member.append([ops.to_numpy(p)[:, 1] for p in rest.predict(X)])
        probs = [numpy.mean(member_probs, axis=0) for member_probs in zip(*per_member, strict=True)]
        loss, n = 0.0, 0
        for p, g in zip(probs, gold, strict=True):
            p = numpy.clip(p, 1e-7, 1 - 1e-7)
            loss -= float(numpy.log(numpy.where(g, p, 1 - p)).sum())
            n += len(g)
        predicted = [senter.decide(doc, p) for doc, p in zip(docs, probs, strict=True)]
        return loss / max(1, n), start_f1(predicted, gold)

    base_loss, base_f = measure(None)

    def effect(columns: List[int]) -> Dict[str, float]:
        loss, f = measure(columns)
        return {"loss_increase": loss - base_loss, "f1_drop": 100 * (base_f - f)}

    groups = {
        "attention": head_columns(names, ATTENTION_BLOCKS),
        "outputs": head_columns(names, ("context",)),
    }
    result: Dict[str, Any] = {"base": {"loss": base_loss, "f1": 100 * base_f}}
    for group, heads in groups.items():
        result[group] = {head: effect(columns) for head, columns in sorted(heads.items())}
    blocks: Dict[str, List[int]] = defaultdict(list)
    for index, name in enumerate(names):
        block = name.partition(":")[0]
        block = "sim_flags" if block in ("has_prev", "has_next") else block
        block = "doc_punct" if block.startswith("doc_punct") else block
        blocks[block].append(index)
    result["blocks"] = {block: effect(columns) for block, columns in blocks.items()}
    return result


def grid(values: Dict[Head, float], n_layers: int, n_heads: int) -> numpy.ndarray:
    out = numpy.zeros((n_layers, n_heads))
    for (layer, head), value in values.items():
        if layer >= 0:
            out[layer, head] = value
    return out


def markdown_grid(title: str, table: numpy.ndarray, digits: int) -> List[str]:
    n_layers, n_heads = table.shape
    lines = [f"### {title}", "", "| layer | " + " | ".join(f"H{h}" for h in range(n_heads)) + " |"]
    lines.append("| --- |" + " ---: |" * n_heads)
    for layer in range(n_layers):
        cells = " | ".join(f"{v:.{digits}f}" for v in table[layer])
        lines.append(f"| L{layer} | {cells} |")
    return [*lines, ""]


def heatmaps(tables: List[Tuple[str, numpy.ndarray]], path: Path) -> None:
    """One layers x heads heatmap per table, each value written in its cell (PNG)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n_cols = min(2, len(tables))
    n_rows = (len(tables) + n_cols - 1) // n_cols
    fig = Figure(figsize=(7.0 * n_cols, 3.4 * n_rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(n_rows, n_cols, squeeze=False)
    for ax in axes.ravel()[len(tables) :]:
        ax.axis("off")
    for ax, (title, table) in zip(axes.ravel(), tables, strict=False):
        image = ax.imshow(table, cmap="viridis", aspect="auto")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_xticks(range(table.shape[1]))
        ax.set_yticks(range(table.shape[0]))
        for (i, j), value in numpy.ndenumerate(table):
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=6, color="w")
        fig.colorbar(image, ax=ax, fraction=0.03)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)


def report(
    model: Path,
    out: Path,
    *,
    data: Optional[Path],
    component: str,
    top: int,
    threads: int,
) -> str:
    """Weight norms (and, with ``data``, ablations) of ``component`` in the pipeline at
    ``model``: writes ``OUT.json``, ``OUT.md`` and ``OUT.png``; returns the markdown."""
    import torch

    from spacy_attnseg.families import n_layers_heads
    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(threads)

    nlp = load_pipeline(model)
    senter: Any = nlp.get_pipe(component)
    names = senter.feature_names()
    n_layers, n_heads = n_layers_heads(senter.transformer_pipe().model.transformer)
    per_group, per_block = weight_norms(senter, names)
    top_weight = max([*per_group["attention"].values(), *per_group["outputs"].values(), 1e-9])
    norms = {g: {h: v / top_weight for h, v in heads.items()} for g, heads in per_group.items()}
    payload: Dict[str, Any] = {
        "model": str(model),
        "weight_norm": {
            group: {f"L{l_}H{h}": round(v, 4) for (l_, h), v in sorted(heads.items())}
            for group, heads in norms.items()
        },
        "weight_norm_by_block": per_block,
    }
    lines = [f"# Which heads carry the weight in {model}", ""]
    tables: List[Tuple[str, numpy.ndarray]] = []
    if data:
        result = ablation(nlp, senter, data, names)
        base = result["base"]
        attention = result["attention"]
        outputs = result["outputs"]
        loss_attention = grid(
            {h: 1000 * v["loss_increase"] for h, v in attention.items()}, n_layers, n_heads
        )
        f1_attention = grid({h: v["f1_drop"] for h, v in attention.items()}, n_layers, n_heads)
        tables.append(("attention features ablated: log-loss increase x1000", loss_attention))
        tables.append(("attention features ablated: F1 drop (points)", f1_attention))
        payload["ablation"] = {
            "data": str(data),
            "base": base,
            "blocks": result["blocks"],
            **{
                group: {f"L{l_}H{h}": v for (l_, h), v in sorted(result[group].items())}
                for group in ("attention", "outputs")
            },
        }
        lines += [
            f"Ablation on `{data}`: a head's features are set to their training mean and "
            "the increase of the per-token log loss (x1000) and the drop of sentence-start F1 "
            f"(points) are measured. Base: log loss {base['loss']:.4f}, F1 {base['f1']:.1f} "
            f"at threshold {senter.threshold:g} ({senter.threshold_no_punct:g} for documents "
            "without sentence-final punctuation). A head's *attention features* are its column "
            "scores (log, relative) and its similarities to the previous and next token; its "
            "*output vector* is the token's own head output (only for the layers in "
            "`context_layers`).",
            "",
            "### Whole feature blocks ablated",
            "",
            "| block | log loss + (x1000) | F1 - |",
            "| --- | ---: | ---: |",
        ]
        for block, value in sorted(
            result["blocks"].items(), key=lambda kv: -kv[1]["loss_increase"]
        ):
            lines.append(
                f"| {block} | {1000 * value['loss_increase']:.2f} | {value['f1_drop']:.2f} |"
            )
        lines += [
            "",
            *markdown_grid(
                "Attention features ablated: log-loss increase (x1000)", loss_attention, 2
            ),
        ]
        lines += markdown_grid("Attention features ablated: F1 drop (points)", f1_attention, 2)
        if outputs:
            loss_outputs = grid(
                {h: 1000 * v["loss_increase"] for h, v in outputs.items()}, n_layers, n_heads
            )
            tables.append(("output vector ablated: log-loss increase x1000", loss_outputs))
            lines += markdown_grid(
                "Output vector ablated: log-loss increase (x1000)", loss_outputs, 2
            )
        ranking = sorted(attention, key=lambda h: -attention[h]["loss_increase"])[:top]
        lines += [
            f"### Top {top} heads (attention features ablated)",
            "",
            "| head | log loss + (x1000) | F1 - | output vector: log loss + (x1000) |",
            "| --- | ---: | ---: | ---: |",
        ]
        for head in ranking:
            ablated = outputs.get(head)
            out_text = "\u2013" if ablated is None else f"{1000 * ablated['loss_increase']:.2f}"
            lines.append(
                f"| L{head[0]}H{head[1]} | {1000 * attention[head]['loss_increase']:.2f} "
                f"| {attention[head]['f1_drop']:.2f} | {out_text} |"
            )
        lines.append("")
    tables.append(
        ("projection weight norm, attention features", grid(norms["attention"], n_layers, n_heads))
    )
    lines += markdown_grid(
        "Projection-layer weight norm over the head's attention features (relative)",
        tables[-1][1],
        2,
    )
    lines += [
        "The weight norms stay close to their initial (random) scale, because the projection "
        "is followed by a layer norm and trained with weight decay; the ablation above is the "
        "measure to read. Norms of the other inputs (relative): "
        + ", ".join(f"{k} {v / top_weight:.2f}" for k, v in per_block["_other"].items())
        + ".",
        "",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf8")
    Path(f"{out}.md").write_text("\n".join(lines) + "\n", encoding="utf8")
    heatmaps(tables, Path(f"{out}.png"))
    return "\n".join(lines)
