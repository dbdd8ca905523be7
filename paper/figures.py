"""PNG figures of Halevi et al. (2026) from the accumulators of :mod:`.stats`, and of the
topic-segment evaluation (:func:`plot_topic_segments`, from :mod:`.topic_eval`'s results).

Every ``plot_fig*`` function takes an accumulator (or the merged ``{**result(), **arrays()}``
mapping of one, e.g. reloaded from JSON and ``.npz``), writes one PNG at ``path`` (parent
folders are created) and returns the path. Figures are drawn on matplotlib's Agg canvas
directly (no pyplot, no global figure state), so they render without a display. Layers
and heads are passed 0-based (negative layers count from the end) and labelled 1-based.
"""

import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Tuple, Union

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure

from .stats import (
    CATEGORY_NAMES,
    CLS,
    PUNCT,
    SEP,
    WORD,
    AttentionReceived,
    PairStatistics,
    SummedAttention,
    block_matrix,
    high_attention_columns,
)

PathLike = Union[str, "os.PathLike[str]"]
Source = Union[SummedAttention, AttentionReceived, PairStatistics, Mapping[str, Any]]

DPI = 120
_CATEGORY_COLOURS = {CLS: "tab:red", SEP: "tab:purple", PUNCT: "tab:orange", WORD: "tab:blue"}


# -- helpers ------------------------------------------------------------------------------


def _data(source: Source) -> Dict[str, Any]:
    """The figure inputs of an accumulator, or a copy of a mapping."""
    if isinstance(source, (SummedAttention, AttentionReceived, PairStatistics)):
        return {**source.result(), **source.arrays()}
    return dict(source)


def _get(data: Mapping[str, Any], key: str) -> np.ndarray:
    """``data[key]`` as a float array (``None`` becomes NaN)."""
    if key not in data:
        raise KeyError(f"figure input `{key}` missing: pass the accumulator or its result()")
    return np.asarray(data[key], dtype=np.float64)


def _figure(nrows: int, ncols: int, size: Tuple[float, float]) -> Tuple[Figure, np.ndarray]:
    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _save(fig: Figure, path: PathLike) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=DPI)
    return out


def _layer(layer: int, n_layers: int) -> int:
    if not -n_layers <= layer < n_layers:
        raise ValueError(f"layer {layer} out of range for {n_layers} layers")
    return layer % n_layers


def _layers(layers: Sequence[int] | None, n_layers: int, default: Sequence[int]) -> List[int]:
    chosen = default if layers is None else layers
    return list(dict.fromkeys(_layer(layer, n_layers) for layer in chosen))


def _image(
    fig: Figure,
    ax: Axes,
    matrix: np.ndarray,
    *,
    title: str,
    label: str,
    cmap: str = "viridis",
    log_scale: bool = False,
    xlabel: str = "key position j",
    ylabel: str = "query position i",
) -> None:
    """Draw ``matrix`` with a colour bar labelled ``label``."""
    values = np.asarray(matrix, dtype=np.float64)
    norm: Normalize | None = None
    if log_scale and np.nanmax(values, initial=0.0) > 0:
        positive = values[values > 0]
        norm = LogNorm(vmin=max(float(positive.min()), float(positive.max()) * 1e-4))
        values = np.where(values > 0, values, np.nan)
    shown = ax.imshow(values, cmap=cmap, norm=norm, interpolation="nearest")
    fig.colorbar(shown, ax=ax, label=label, shrink=0.85)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def _heatmap(
    fig: Figure, ax: Axes, values: np.ndarray, *, title: str, label: str, cmap: str = "viridis"
) -> None:
    """Layer x head heat map with 1-based ticks."""
    n_layers, n_heads = values.shape
    shown = ax.imshow(values, cmap=cmap, aspect="auto", interpolation="nearest")
    fig.colorbar(shown, ax=ax, label=label)
    ax.set_xticks(range(n_heads), [str(h + 1) for h in range(n_heads)])
    ax.set_yticks(range(n_layers), [str(layer + 1) for layer in range(n_layers)])
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title, fontsize=10)


def _head_bars(
    ax: Axes,
    values: np.ndarray,
    *,
    chance: np.ndarray | None = None,
    title: str,
    ylabel: str,
    errors: np.ndarray | None = None,
) -> None:
    """Bars per head (1-based), with chance levels as black ticks."""
    heads = np.arange(1, values.size + 1)
    ax.bar(heads, np.nan_to_num(values), yerr=errors, color="tab:blue", capsize=2, label="pairs")
    if chance is not None:
        ax.scatter(heads, chance, marker="_", s=300, color="black", zorder=3, label="chance")
        ax.legend(fontsize=8, loc="upper center", ncol=2)
    ax.set_xticks(heads)
    ax.set_xlabel("head")
    ax.set_ylabel(ylabel)
    shown = np.concatenate([np.ravel(values), np.ravel(chance if chance is not None else [])])
    top = float(np.nanmax(shown, initial=0.0))
    if top > 0.4:
        ax.set_ylim(0, 1.12)
        ax.set_yticks(np.linspace(0, 1, 6))
    else:  # small probabilities: zoom in so the heads can be told apart
        ax.set_ylim(0, max(top, 1e-3) * 1.35)
    ax.set_title(title, fontsize=10)


def _distance_bars(ax: Axes, histogram: np.ndarray, max_distance: int | None) -> float:
    """Normalised distance histogram (distances from 1); returns the mean distance."""
    counts = np.asarray(histogram, dtype=np.float64)
    total = counts.sum()
    distances = np.arange(counts.size)
    mean = float((counts * distances).sum() / total) if total else float("nan")
    probs = counts / total if total else counts
    last = counts.size - 1 if max_distance is None else min(max_distance, counts.size - 1)
    ax.bar(distances[1 : last + 1], probs[1 : last + 1], width=1.0, color="tab:blue")
    if total:
        ax.axvline(mean, color="tab:red", linestyle="--", linewidth=1)
    ax.set_xlim(0.5, last + 0.5)
    return mean


# -- figures ----------------------------------------------------------------------------------


def plot_fig2_summed_attention(
    summed: Source,
    path: PathLike,
    *,
    layers: Sequence[int] | None = None,
    head: int = 0,
    log_scale: bool = False,
) -> Path:
    """Fig. 2: summed attention map of one head (left) and of all heads of the layer
    (right), one row per layer (default: first, middle, last two). The titles give the
    fractions of mass on the diagonal and on the +1/-1 diagonals.

    The paper's Fig. 4 (maps of a single input) is this figure drawn from a
    :class:`SummedAttention` updated with that one window.
    """
    data = _data(summed)
    head_maps = _get(data, "head_maps")
    n_layers, n_heads = head_maps.shape[:2]
    chosen = _layers(layers, n_layers, (0, n_layers // 2, n_layers - 2, n_layers - 1))
    if not 0 <= head < n_heads:
        raise ValueError(f"head {head} out of range for {n_heads} heads")
    layer_maps = head_maps.sum(axis=1)
    bands = [
        (name, data.get(key))
        for name, key in (
            ("diag", "diagonal_fraction"),
            ("+1", "next_token_fraction"),
            ("-1", "previous_token_fraction"),
        )
    ]
    windows = data.get("n_windows", "?")
    fig, axes = _figure(len(chosen), 2, (10, 4.4 * len(chosen)))
    for row, layer in enumerate(chosen):
        fractions = ", ".join(
            f"{name} {np.asarray(values, dtype=float)[layer, head]:.2f}"
            for name, values in bands
            if values is not None
        )
        _image(
            fig,
            axes[row, 0],
            head_maps[layer, head],
            title=f"Layer {layer + 1}, head {head + 1} ({fractions})",
            label="summed attention",
            log_scale=log_scale,
        )
        _image(
            fig,
            axes[row, 1],
            layer_maps[layer],
            title=f"Layer {layer + 1}, sum of {n_heads} heads",
            label="summed attention",
            log_scale=log_scale,
        )
    fig.suptitle(f"Summed attention maps over {windows} windows")
    return _save(fig, path)


def plot_fig3_column_zeroing(
    summed: Source, path: PathLike, *, layer: int = -1, log_scale: bool = False
) -> Path:
    """Fig. 3: a layer's summed attention (left), summed with each window's most attended
    columns zeroed (middle), and with those columns and the diagonals zeroed (right)."""
    data = _data(summed)
    full = _get(data, "layer_maps")
    index = _layer(layer, full.shape[0])
    zeroed_diagonals = data.get("zeroed_diagonals", (-1, 0, 1))
    panels = (
        (full[index], "summed attention"),
        (_get(data, "layer_maps_zeroed_columns")[index], "most attended columns zeroed"),
        (
            _get(data, "layer_maps_zeroed_columns_diagonals")[index],
            "columns and diagonals "
            + ", ".join(f"{int(k):+d}" if k else "0" for k in zeroed_diagonals)
            + " zeroed",
        ),
    )
    fig, axes = _figure(1, 3, (16, 5))
    for ax, (matrix, title) in zip(axes[0], panels, strict=True):
        _image(
            fig,
            ax,
            matrix,
            title=f"Layer {index + 1}: {title}",
            label="summed attention",
            log_scale=log_scale,
        )
    fig.suptitle(f"Summed attention over {data.get('n_windows', '?')} windows")
    return _save(fig, path)


def plot_fig4_attention_received(received: Source, path: PathLike, *, layer: int = -1) -> Path:
    """Fig. 4 (as statistics): per layer the share of attention received by [CLS], [SEP],
    punctuation and words (dashed: their share of the wordpieces), per head of one layer,
    and per layer the share of the column-sum mass on the top (separator) columns."""
    data = _data(received)
    layer_share = _get(data, "layer_share")
    head_share = _get(data, "head_share")
    token_share = _get(data, "token_share")
    n_layers, n_heads = head_share.shape[:2]
    index = _layer(layer, n_layers)
    layers = np.arange(1, n_layers + 1)
    fig, axes = _figure(1, 3, (17, 4.8))
    ax = axes[0, 0]
    for category, colour in _CATEGORY_COLOURS.items():
        ax.plot(
            layers, layer_share[:, category], "o-", color=colour, label=CATEGORY_NAMES[category]
        )
        ax.axhline(token_share[category], color=colour, linestyle="--", linewidth=0.8)
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("share of attention received")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Attention received per layer (dashed: share of wordpieces)", fontsize=10)

    ax = axes[0, 1]
    heads = np.arange(1, n_heads + 1)
    bottom = np.zeros(n_heads)
    for category, colour in _CATEGORY_COLOURS.items():
        values = np.nan_to_num(head_share[index, :, category])
        ax.bar(heads, values, bottom=bottom, color=colour, label=CATEGORY_NAMES[category])
        bottom += values
    ax.set_xticks(heads)
    ax.set_xlabel("head")
    ax.set_ylabel("share of attention received")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(f"Layer {index + 1}: attention received per head", fontsize=10)

    ax = axes[0, 2]
    ax.plot(layers, _get(data, "top_column_share"), "o-", label="top columns")
    ax.plot(
        layers,
        _get(data, "top_separator_column_share"),
        "s--",
        label="top columns that are [SEP]/punctuation",
    )
    ax.set_xticks(layers)
    ax.set_xlabel("layer")
    ax.set_ylabel("share of column-sum mass")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    threshold = data.get("column_threshold", "?")
    ax.set_title(f"Mass on top columns (normalised column sum >= {threshold})", fontsize=10)
    fig.suptitle(f"Attention received over {data.get('n_windows', '?')} windows")
    return _save(fig, path)


def plot_fig5_block_similarity(
    attn_map: np.ndarray,
    similarity: np.ndarray,
    path: PathLike,
    *,
    valid: np.ndarray | None = None,
    candidates: np.ndarray | None = None,
    separator_flags: np.ndarray | None = None,
    column_threshold: float = 0.3,
    title: str = "",
) -> Path:
    """Fig. 5 for one window and head: attention map (top left), context similarity
    (top right), the attention map kept only on the separator columns and their
    transposed rows (bottom left), and the similarity averaged over the blocks the
    separators delimit (bottom right, :func:`block_matrix`).

    Separators are ``separator_flags`` if given, else :func:`high_attention_columns` of
    ``attn_map`` (queries ``valid``, columns ``candidates``, ``column_threshold``).
    """
    attn = np.asarray(attn_map, dtype=np.float64)
    sim = np.asarray(similarity, dtype=np.float64)
    length = attn.shape[-1]
    if separator_flags is None:
        flags = high_attention_columns(
            attn, queries=valid, candidates=candidates, threshold=column_threshold
        )
    else:
        flags = np.asarray(separator_flags, dtype=bool)
    lines = attn * flags[None, :]
    lines = np.maximum(lines, lines.T)
    blocks = block_matrix(sim, flags, valid=valid)
    fig, axes = _figure(2, 2, (11, 10))
    _image(fig, axes[0, 0], attn, title="Attention map", label="attention")
    _image(
        fig,
        axes[0, 1],
        sim,
        title="Context similarity (normalised)",
        label="similarity",
        xlabel="token j",
        ylabel="token i",
    )
    _image(
        fig,
        axes[1, 0],
        lines,
        title=f"Attention on {int(flags.sum())} separator columns and rows",
        label="attention",
    )
    _image(
        fig,
        axes[1, 1],
        blocks,
        title="Similarity averaged between separators",
        label="mean similarity",
        xlabel="token j",
        ylabel="token i",
    )
    ax = axes[1, 1]
    for position in np.flatnonzero(flags):
        ax.axhline(position + 0.5, color="white", linewidth=0.4)
        ax.axvline(position + 0.5, color="white", linewidth=0.4)
    ax.set_xlim(-0.5, length - 0.5)
    ax.set_ylim(length - 0.5, -0.5)
    if title:
        fig.suptitle(title)
    return _save(fig, path)


def plot_fig6_repeated_tokens(pairs: Source, path: PathLike, *, layer: int = -1) -> Path:
    """Fig. 6: probability that a high-similarity pair joins equal tokens, (a) over all
    pairs and (b) over pairs within one sentence, per head of one layer (black: chance)
    and for every layer and head (bottom)."""
    data = _data(pairs)
    overall = _get(data, "equal_token_probability")
    within = _get(data, "same_sentence_equal_token_probability")
    index = _layer(layer, overall.shape[0])
    fig, axes = _figure(2, 2, (13, 9))
    _head_bars(
        axes[0, 0],
        overall[index],
        chance=_get(data, "equal_token_chance")[index],
        title=f"(a) Layer {index + 1}: pairs between equal tokens",
        ylabel="P(equal token ids)",
    )
    _head_bars(
        axes[0, 1],
        within[index],
        chance=_get(data, "same_sentence_equal_token_chance")[index],
        title=f"(b) Layer {index + 1}: same, pairs within one sentence",
        ylabel="P(equal token ids | same sentence)",
    )
    _heatmap(fig, axes[1, 0], overall, title="(a) all layers", label="P(equal token ids)")
    _heatmap(
        fig,
        axes[1, 1],
        within,
        title="(b) all layers",
        label="P(equal token ids | same sentence)",
    )
    fig.suptitle(
        f"Repeated tokens among high-similarity pairs ({data.get('n_windows', '?')} windows, "
        f"threshold {data.get('threshold', '?')})"
    )
    return _save(fig, path)


def plot_fig7_distance_histograms(
    pairs: Source, path: PathLike, *, layer: int = -1, max_distance: int | None = None
) -> Path:
    """Fig. 7: histogram of the distances ``|i - j|`` of high-similarity pairs, one panel
    per head of one layer; the dashed line and the title give the mean distance."""
    data = _data(pairs)
    histogram = _get(data, "distance_histogram")
    n_layers, n_heads = histogram.shape[:2]
    index = _layer(layer, n_layers)
    ncols = min(4, n_heads)
    nrows = -(-n_heads // ncols)
    fig, axes = _figure(nrows, ncols, (4 * ncols, 2.8 * nrows))
    for head in range(nrows * ncols):
        ax = axes[head // ncols, head % ncols]
        if head >= n_heads:
            ax.set_visible(False)
            continue
        mean = _distance_bars(ax, histogram[index, head], max_distance)
        ax.set_title(f"Head {head + 1}: mean distance {mean:.1f}", fontsize=10)
        ax.set_xlabel("distance |i - j|")
        ax.set_ylabel("probability")
    fig.suptitle(f"Layer {index + 1}: distances of high-similarity pairs")
    return _save(fig, path)


def plot_fig8_same_sentence(pairs: Source, path: PathLike, *, layer: int = -1) -> Path:
    """Fig. 8: probability that a high-similarity pair lies within one sentence per head
    of one layer (black: chance for the windows' sentence lengths), and its excess over
    chance for every layer and head."""
    data = _data(pairs)
    probability = _get(data, "same_sentence_probability")
    chance = _get(data, "same_sentence_chance")
    index = _layer(layer, probability.shape[0])
    fig, axes = _figure(1, 2, (14, 5))
    _head_bars(
        axes[0, 0],
        probability[index],
        chance=chance[index],
        title=f"Layer {index + 1}: pairs within one sentence",
        ylabel="P(same sentence)",
    )
    excess = probability - chance
    limit = float(np.nanmax(np.abs(excess), initial=0.0)) or 1.0
    n_layers, n_heads = excess.shape
    shown = axes[0, 1].imshow(
        excess, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest"
    )
    fig.colorbar(shown, ax=axes[0, 1], label="P(same sentence) - chance")
    axes[0, 1].set_xticks(range(n_heads), [str(h + 1) for h in range(n_heads)])
    axes[0, 1].set_yticks(range(n_layers), [str(i + 1) for i in range(n_layers)])
    axes[0, 1].set_xlabel("head")
    axes[0, 1].set_ylabel("layer")
    axes[0, 1].set_title("Excess over chance, all layers", fontsize=10)
    fig.suptitle(
        f"High-similarity pairs within one sentence ({data.get('n_windows', '?')} windows)"
    )
    return _save(fig, path)


def _contrast_heads(mean_distance: np.ndarray, layer: int) -> List[Tuple[int, int]]:
    """The heads of ``layer`` with the shortest and the longest mean pair distance."""
    values = mean_distance[layer]
    if np.all(np.isnan(values)):
        return [(layer, 0)]
    short = int(np.nanargmin(values))
    long = int(np.nanargmax(values))
    return list(dict.fromkeys([(layer, short), (layer, long)]))


def plot_fig10_similarity_locations(
    pairs: Source,
    path: PathLike,
    *,
    heads: Sequence[Tuple[int, int]] | None = None,
    layer: int = -1,
    log_scale: bool = False,
) -> Path:
    """Fig. 10: where a head's high-similarity pairs lie, summed over windows, for chosen
    ``(layer, head)`` pairs (default: the heads of ``layer`` with the shortest and the
    longest mean pair distance). Maps are drawn symmetric."""
    data = _data(pairs)
    count_maps = _get(data, "count_maps")
    n_layers, n_heads = count_maps.shape[:2]
    if heads is None:
        chosen = _contrast_heads(_get(data, "mean_distance"), _layer(layer, n_layers))
    else:
        chosen = [(_layer(lyr, n_layers), int(h)) for lyr, h in heads]
    for _, head in chosen:
        if not 0 <= head < n_heads:
            raise ValueError(f"head {head} out of range for {n_heads} heads")
    fig, axes = _figure(1, len(chosen), (6.2 * len(chosen), 5))
    for ax, (lyr, head) in zip(axes[0], chosen, strict=True):
        counts = count_maps[lyr, head]
        _image(
            fig,
            ax,
            counts + counts.T,
            title=f"Layer {lyr + 1}, head {head + 1}",
            label="high-similarity pairs",
            cmap="magma",
            log_scale=log_scale,
            xlabel="token j",
            ylabel="token i",
        )
    fig.suptitle(f"Locations of high-similarity pairs over {data.get('n_windows', '?')} windows")
    return _save(fig, path)


def plot_fig11_anchor_tokens(pairs: Source, path: PathLike, *, layer: int = -1) -> Path:
    """Fig. 11: (a) per head of one layer, the distribution over windows of the share of
    its pairs that include its most common token (dots: mean); (b) the distribution of
    the number of distinct most common tokens across the layer's heads."""
    data = _data(pairs)
    histogram = _get(data, "anchor_share_histogram")
    n_layers, n_heads, n_bins = histogram.shape
    index = _layer(layer, n_layers)
    counts = histogram[index]
    totals = counts.sum(axis=1, keepdims=True)
    pdf = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
    fig, axes = _figure(1, 2, (14, 5))
    ax = axes[0, 0]
    shown = ax.imshow(
        pdf,
        cmap="Blues",
        aspect="auto",
        interpolation="nearest",
        extent=(0.0, 1.0, n_heads + 0.5, 0.5),
    )
    fig.colorbar(shown, ax=ax, label="fraction of windows")
    mean = _get(data, "anchor_share_mean")[index]
    ax.scatter(mean, np.arange(1, n_heads + 1), color="tab:red", s=18, label="mean", zorder=3)
    ax.set_yticks(range(1, n_heads + 1))
    ax.set_xlabel("share of the head's pairs that include its most common token")
    ax.set_ylabel("head")
    ax.legend(fontsize=8, loc="lower left")
    ax.set_title(f"(a) Layer {index + 1}: pairs with the most common token", fontsize=10)

    ax = axes[0, 1]
    distribution = _get(data, "distinct_anchor_distribution")[index]
    ax.bar(np.arange(n_heads + 1), np.nan_to_num(distribution), color="tab:blue")
    ax.set_xticks(np.arange(n_heads + 1))
    ax.set_xlabel("distinct most common tokens across heads")
    ax.set_ylabel("fraction of windows")
    mean_distinct = _get(data, "mean_distinct_anchors")[index]
    ax.set_title(
        f"(b) Layer {index + 1}: distinct most common tokens (mean {mean_distinct:.1f})",
        fontsize=10,
    )
    fig.suptitle(f"Head specialisation on anchor tokens ({data.get('n_windows', '?')} windows)")
    return _save(fig, path)


def plot_fig12_layer_similarity(
    pairs: Source, path: PathLike, *, layers: Sequence[int] | None = None
) -> Path:
    """Fig. 12: normalised context-similarity matrices summed over a layer's heads (and
    over the windows fed), for chosen layers (default: first, middle, last)."""
    data = _data(pairs)
    sums = _get(data, "layer_similarity_sum")
    n_layers = sums.shape[0]
    chosen = _layers(layers, n_layers, (0, n_layers // 2, n_layers - 1))
    n_heads = np.asarray(data.get("n_pairs", [[0]])).shape[-1]
    fig, axes = _figure(1, len(chosen), (6 * len(chosen), 5))
    for ax, layer in zip(axes[0], chosen, strict=True):
        _image(
            fig,
            ax,
            sums[layer],
            title=f"Layer {layer + 1}: sum over {n_heads} heads",
            label="summed normalised similarity",
            xlabel="token j",
            ylabel="token i",
        )
    fig.suptitle(f"Summed context similarity ({data.get('n_windows', '?')} windows)")
    return _save(fig, path)


def plot_fig13_layer_distances(
    pairs: Source,
    path: PathLike,
    *,
    layers: Sequence[int] | None = None,
    max_distance: int | None = None,
) -> Path:
    """Fig. 13: distribution of the distances of a layer's high-similarity pairs (all
    heads) for chosen layers (default: first, middle, last); dashed: mean distance."""
    data = _data(pairs)
    histogram = _get(data, "layer_distance_histogram")
    n_layers = histogram.shape[0]
    chosen = _layers(layers, n_layers, (0, n_layers // 2, n_layers - 1))
    fig, axes = _figure(len(chosen), 1, (9, 2.9 * len(chosen)))
    for row, layer in enumerate(chosen):
        ax = axes[row, 0]
        mean = _distance_bars(ax, histogram[layer], max_distance)
        ax.set_title(f"Layer {layer + 1}: mean distance {mean:.1f}", fontsize=10)
        ax.set_xlabel("distance |i - j|")
        ax.set_ylabel("probability")
    fig.suptitle("Distances of high-similarity pairs per layer")
    return _save(fig, path)


class TopicRow(NamedTuple):
    """One system of one set of a topic evaluation: its mean Pk over the set's documents,
    the 95% interval of that mean and of its paired difference from the first system
    (``None`` where the report has none)."""

    name: str
    pk: float
    interval: Tuple[float, float] | None
    difference: Tuple[float, float] | None

    @property
    def tie(self) -> bool:
        """No clear difference from the first system on the same documents: the paired
        difference's interval holds zero."""
        return self.difference is not None and self.difference[0] <= 0.0 <= self.difference[1]


def topic_rows(table: Mapping[str, Any], *, leave_out: Sequence[str] = ()) -> List[TopicRow]:
    """The systems of one set of a topic evaluation (``paper.topic_eval``'s results for a
    set), in the table's order; entries that are not systems (the reference count) and
    the names in ``leave_out`` are left out."""

    def pair(bounds: Any) -> Tuple[float, float] | None:
        return None if bounds is None else (float(bounds[0]), float(bounds[1]))

    return [
        TopicRow(
            name,
            float(row["pk"]),
            pair(row.get("pk_interval")),
            pair(row.get("pk_minus_attn_segmenter")),
        )
        for name, row in table.items()
        if isinstance(row, Mapping) and name not in leave_out
    ]


TOPIC_KEY_INCHES = 1.0  # above the panels of plot_topic_segments, for its key


def _topic_colour(name: str, first: str) -> str:
    if name.startswith(first):
        return "tab:blue"  # the pipeline scored and its variants
    return "tab:orange" if "second pass" in name else "tab:grey"


def plot_topic_segments(
    results: Mapping[str, Mapping[str, Any]],
    path: PathLike,
    *,
    baseline: str = "no boundary",
    columns: int = 2,
) -> Path:
    """Pk of every system on every set of a topic evaluation (``paper.topic_eval``'s
    ``results``: set name -> system -> row), one panel a set, the same systems on every
    row: a dot at the mean over the set's documents and a bar over its 95% interval;
    the dot hollow where the paired difference from the first system (the pipeline
    scored) includes zero (a tie on the same documents). ``baseline`` ("no boundary") is
    a dashed line rather than a row, the first system's Pk a thin blue one. Blue: the
    pipeline scored and its variants; orange: systems that run the model again (a second
    pass); grey: the others."""
    if not results:
        raise ValueError("no sets to plot: the results are empty")
    names = list(results)
    n_cols = max(1, min(columns, len(names)))
    n_rows = -(-len(names) // n_cols)
    panels = [topic_rows(results[name], leave_out=[baseline]) for name in names]
    # the same systems in every panel: their names once, left of each row of panels
    same = all([row.name for row in rows] == [row.name for row in panels[0]] for rows in panels)
    lines = max(sum(len(textwrap.wrap(row.name, 30)) for row in rows) for rows in panels)
    width = (2.2 if same else 4.4) + 3.4 * n_cols
    panel = max(1.4, 0.6 + 0.2 * lines)  # inches: room for every system's name
    fig, axes = _figure(n_rows, n_cols, (width, TOPIC_KEY_INCHES + panel * n_rows))
    intervals = any(row.interval is not None for rows in panels for row in rows)
    top = 0.0
    for k, (ax, name, rows) in enumerate(zip(axes.flat, names, panels, strict=False)):
        table = results[name]
        first = rows[0].name if rows else ""
        for y, row in enumerate(rows):
            colour = _topic_colour(row.name, first)
            if row.interval is not None:
                ax.plot(row.interval, [y, y], color=colour, linewidth=2, solid_capstyle="butt")
                top = max(top, row.interval[1])
            ax.plot(
                [row.pk],
                [y],
                marker="o",
                markersize=6,
                color=colour,
                markerfacecolor="white" if row.tie else colour,
                markeredgewidth=1.5,
            )
            top = max(top, row.pk)
        if rows:
            ax.axvline(rows[0].pk, color="tab:blue", linewidth=0.6, alpha=0.6)
        base = table.get(baseline)
        if isinstance(base, Mapping):
            ax.axvline(float(base["pk"]), color="black", linestyle="--", linewidth=1)
            top = max(top, float(base["pk"]))
        labels = ["\n".join(textwrap.wrap(row.name, 30)) for row in rows]
        ax.set_yticks(range(len(rows)), labels if k % n_cols == 0 or not same else [])
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        reference = table.get("reference_segments_per_doc")
        unit = "segment" if reference == 1 else "segments"
        title = name if reference is None else f"{name} ({reference:g} {unit} a document)"
        ax.set_title("\n".join(textwrap.wrap(title, 48)), fontsize=8)
        ax.set_xlabel("Pk (lower is better)", fontsize=8)
        ax.grid(axis="x", alpha=0.3)
    for ax in axes.flat:
        ax.set_xlim(0.0, max(top, 0.1) * 1.05)
    for ax in list(axes.flat)[len(names) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"Pk and its 95% interval over documents; dashed line: {baseline};\n"
        "hollow dot: no clear difference from the first row on the same documents"
        if intervals
        else f"Pk, the mean over documents (this report has no intervals); dashed line: {baseline}",
        fontsize=9,
    )
    return _save(fig, path)


def plot_all(
    out_dir: PathLike,
    *,
    summed: Source | None = None,
    received: Source | None = None,
    pairs: Source | None = None,
    example: Mapping[str, Any] | None = None,
) -> Dict[str, Path]:
    """Write every figure whose input is given into ``out_dir``; returns name -> path.

    ``example`` holds the keyword arguments of :func:`plot_fig5_block_similarity`
    (``attn_map``, ``similarity`` and optionally ``valid``, ``candidates``,
    ``separator_flags``, ``column_threshold``, ``title``).
    """
    out = Path(out_dir)
    paths: Dict[str, Path] = {}
    if summed is not None:
        data = _data(summed)
        paths["fig2"] = plot_fig2_summed_attention(data, out / "fig02_summed_attention.png")
        paths["fig3"] = plot_fig3_column_zeroing(data, out / "fig03_column_zeroing.png")
    if received is not None:
        paths["fig4"] = plot_fig4_attention_received(received, out / "fig04_received.png")
    if example is not None:
        paths["fig5"] = plot_fig5_block_similarity(
            path=out / "fig05_block_similarity.png", **dict(example)
        )
    if pairs is not None:
        data = _data(pairs)
        paths["fig6"] = plot_fig6_repeated_tokens(data, out / "fig06_repeated_tokens.png")
        paths["fig7"] = plot_fig7_distance_histograms(data, out / "fig07_distances.png")
        paths["fig8"] = plot_fig8_same_sentence(data, out / "fig08_same_sentence.png")
        paths["fig10"] = plot_fig10_similarity_locations(data, out / "fig10_locations.png")
        paths["fig11"] = plot_fig11_anchor_tokens(data, out / "fig11_anchors.png")
        paths["fig12"] = plot_fig12_layer_similarity(data, out / "fig12_layer_similarity.png")
        paths["fig13"] = plot_fig13_layer_distances(data, out / "fig13_layer_distances.png")
    return paths
