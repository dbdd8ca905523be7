"""The corpus analyses, one function per ``spacy project`` command.

* :func:`run_windows`: cut WikiText into windows (``.spacy``) and describe them;
* :func:`run_attention`: summed attention maps and attention received (Figs. 2-4);
* :func:`run_example`: one window in detail (Figs. 4, 5, 9 and 12 for a single input);
* :func:`run_pairs`: high context-similarity pairs (Figs. 6-8, 10-13) and the
  similarity distribution and separator blocks of secs. 2-3.

Each streams the windows through the transformer in batches (a progress bar on stderr),
feeds the accumulators of :mod:`.stats` and :mod:`.window_stats`, and writes one JSON
file of numbers (plus an ``.npz`` of the large maps) and PNG figures.
"""

import json
import platform
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Dict, List, Optional, Union

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import figures
from .corpus import (
    SEQ_LEN,
    AnalysisModel,
    WindowArrays,
    build_windows,
    iter_window_arrays,
    load_analysis_model,
    load_windows,
    save_windows,
    window_summary,
)
from .stats import (
    CATEGORY_NAMES,
    PUNCT,
    SEP,
    AttentionReceived,
    PairStatistics,
    SummedAttention,
    _jsonable,
    band_mass,
    high_attention_columns,
    nonspecial_mask,
    pairs_from_similarity,
)
from .window_stats import (
    BlockContrast,
    SharedComponent,
    SimilarityHistogram,
    WindowReference,
    all_layer_similarity,
    near_diagonal_share,
    separator_columns,
)

PathLike = Union[str, Path]

#: File names written under the metrics and figures folders.
CORPUS_JSON = "corpus.json"
ATTENTION_JSON = "attention.json"
EXAMPLE_JSON = "example.json"
PAIRS_JSON = "pairs.json"


# -- helpers ----------------------------------------------------------------------------------


def write_json(path: PathLike, data: Any) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf8")
    return out


def set_threads(threads: int) -> None:
    """Pin torch to ``threads`` CPU threads (0: leave torch's default)."""
    if threads > 0:
        import torch

        torch.set_num_threads(threads)


def _model_info(model: AnalysisModel, source: PathLike) -> Dict[str, Any]:
    hf = model.pipe.model.transformer
    return {
        "source": str(source),
        "name_or_path": model.model_name,
        "architecture": type(hf).__name__,
        "n_layers": model.n_layers,
        "n_heads": model.n_heads,
        "hidden": model.hidden,
        "device": str(next(hf.parameters()).device),
    }


def _run_info(started: float, n_windows: int) -> Dict[str, Any]:
    import torch

    seconds = time.perf_counter() - started
    return {
        "n_windows": n_windows,
        "seconds": round(seconds, 2),
        "windows_per_second": round(n_windows / seconds, 2) if seconds > 0 else None,
        "torch_threads": torch.get_num_threads(),
        "machine": platform.machine(),
    }


def _stream(
    model: AnalysisModel, docs: Sequence[Any], batch_size: int, progress: bool, desc: str
) -> Iterable[WindowArrays]:
    from tqdm import tqdm

    stream = iter_window_arrays(model, docs, batch_size=batch_size)
    return tqdm(stream, total=len(docs), desc=desc, unit="window", disable=not progress)


def _save_arrays(path: Path, arrays: Dict[str, np.ndarray]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    compact = {
        name: value.astype(np.float32) if value.dtype.kind == "f" else value
        for name, value in arrays.items()
    }
    np.savez_compressed(path, **compact)  # type: ignore[arg-type]
    return path


# -- windows ----------------------------------------------------------------------------------


def run_windows(
    wikitext: PathLike,
    windows_path: PathLike,
    metrics_dir: PathLike,
    *,
    model: PathLike,
) -> Dict[str, Any]:
    """Cut the WikiText file into windows with the model's tokenizer; write the
    ``.spacy`` windows and ``corpus.json``."""
    started = time.perf_counter()
    analysis = load_analysis_model(model, attentions=False, context=False)
    docs, stats = build_windows(wikitext, analysis.tokenizer, analysis.nlp.vocab)
    save_windows(docs, windows_path)
    summary = window_summary(docs, analysis.tokenizer, stats)
    result = {
        "source": str(wikitext),
        "windows_file": str(windows_path),
        "seq_len": SEQ_LEN,
        "headings": "left out; a top-level heading starts a new window (see corpus.py)",
        "sentences": "ended by a word of . ! ? (with closing brackets/quotes) or a paragraph end",
        "model": _model_info(analysis, model),
        **summary,
        "run": _run_info(started, len(docs)),
    }
    write_json(Path(metrics_dir) / CORPUS_JSON, result)
    return result


# -- attention (Figs. 2-4) --------------------------------------------------------------------


def attention_derived(
    summed: SummedAttention, received: AttentionReceived, uniform_band: float
) -> Dict[str, Any]:
    """Numbers for the claims of Figs. 2-4 derived from the two accumulators.

    ``uniform_band``: the share of mass on the diagonal and +-1 diagonals if every query
    attended uniformly to the valid keys (pooled over the windows fed).
    """
    maps = summed.head_maps
    total = maps.sum(axis=(2, 3))
    bands = band_mass(maps)  # (layers, heads, 3): diagonal, +1, -1
    band_share = np.divide(bands.sum(axis=-1), total, out=np.zeros_like(total), where=total > 0)
    layer_total = total.sum(axis=1)
    layer_band = np.divide(
        bands.sum(axis=(1, 2)), layer_total, out=np.zeros_like(layer_total), where=layer_total > 0
    )
    zeroed = summed.layer_maps_zeroed_columns
    zeroed_total = zeroed.sum(axis=(1, 2))
    zeroed_band = np.divide(
        band_mass(zeroed).sum(axis=-1),
        zeroed_total,
        out=np.zeros_like(zeroed_total),
        where=zeroed_total > 0,
    )
    strongest = bands.argmax(axis=-1)  # 0 diagonal, 1 next, 2 previous
    column_sums = summed.layer_maps.sum(axis=1)  # (layers, L): attention received per key
    layer_share = np.asarray(received.result()["layer_share"], dtype=np.float64)
    token_share = np.asarray(received.result()["token_share"], dtype=np.float64)
    separators = layer_share[:, SEP] + layer_share[:, PUNCT]
    per_token = np.divide(
        layer_share, token_share, out=np.zeros_like(layer_share), where=token_share > 0
    )
    top_categories = np.asarray(received.result()["top_column_category_share"], dtype=np.float64)
    return {
        "uniform_band_share": uniform_band,
        "band_share": _jsonable(band_share),
        "layer_band_share": _jsonable(layer_band),
        "layer_band_share_after_column_zeroing": _jsonable(zeroed_band),
        "strongest_band": _jsonable(strongest),
        "strongest_band_names": ["diagonal", "next token (+1)", "previous token (-1)"],
        "heads_strongest_off_diagonal": int((strongest > 0).sum()),
        "heads_band_above_2x_uniform": int((band_share >= 2 * uniform_band).sum()),
        "n_heads_total": int(band_share.size),
        "most_attended_position": _jsonable(column_sums.argmax(axis=1)),
        "separator_share": _jsonable(separators),
        "separator_token_share": float(token_share[SEP] + token_share[PUNCT]),
        "attention_per_token_ratio": _jsonable(per_token),
        "top_column_punct_share": _jsonable(top_categories[:, PUNCT]),
        "category_names": list(CATEGORY_NAMES),
    }


def run_attention(
    model: PathLike,
    windows_path: PathLike,
    metrics_dir: PathLike,
    figures_dir: PathLike,
    *,
    n_windows: int = 0,
    batch_size: int = 32,
    gpu_id: int = -1,
    column_threshold: float = 0.3,
    progress: bool = True,
) -> Dict[str, Any]:
    """Summed attention maps, diagonal bands and attention received over the windows;
    writes ``attention.json``, ``attention_maps.npz`` and Figs. 2, 3 and 4."""
    started = time.perf_counter()
    analysis = load_analysis_model(model, attentions=True, context=False, gpu_id=gpu_id)
    docs = load_windows(windows_path, analysis.nlp.vocab, n_windows)
    shape = (analysis.n_layers, analysis.n_heads, SEQ_LEN)
    summed = SummedAttention(*shape, column_threshold=column_threshold)
    received = AttentionReceived(*shape, column_threshold=column_threshold)
    band_mass_uniform = 0.0
    query_mass = 0.0
    for window in _stream(analysis, docs, batch_size, progress, "attention"):
        assert window.attn is not None
        summed.update(window.attn, window.valid)
        received.update(window.attn, window.valid, window.categories)
        n = float(window.valid.sum())
        band_mass_uniform += (3 * n - 2) / n if n else 0.0
        query_mass += n
    uniform = band_mass_uniform / query_mass if query_mass else float("nan")
    metrics = Path(metrics_dir)
    result: Dict[str, Any] = {
        "model": _model_info(analysis, model),
        "windows_file": str(windows_path),
        "summed": summed.result(),
        "received": received.result(),
        "derived": attention_derived(summed, received, uniform),
        "run": _run_info(started, len(docs)),
    }
    write_json(metrics / ATTENTION_JSON, result)
    _save_arrays(metrics / "attention_maps.npz", summed.arrays())
    out = Path(figures_dir)
    band_share = np.asarray(result["derived"]["band_share"], dtype=np.float64)
    figures.plot_fig2_summed_attention(
        summed,
        out / "fig02_summed_attention.png",
        head=int(np.nanmean(band_share, axis=0).argmax()),
        log_scale=True,
    )
    figures.plot_fig3_column_zeroing(summed, out / "fig03_column_zeroing.png")
    figures.plot_fig4_attention_received(received, out / "fig04_received.png")
    return result


# -- one window (Figs. 4, 5, 9, 12 for a single input) ----------------------------------------


def choose_example(docs: Sequence[Any], tokenizer_budget: int = SEQ_LEN - 2) -> int:
    """The first full window (``n_wordpieces`` at the budget) with 3 to 6 sentences, else
    the first window."""
    for index, doc in enumerate(docs):
        pieces = int(doc.user_data.get("n_wordpieces", 0))
        n_sents = sum(1 for _ in doc.sents)
        if pieces >= tokenizer_budget - 1 and 3 <= n_sents <= 6:
            return index
    return 0


def columnar_head(attn_layer: np.ndarray, queries: np.ndarray, flags: np.ndarray) -> int:
    """The head whose attention from ``queries`` puts the largest share on ``flags``."""
    rows = attn_layer * np.asarray(queries, dtype=bool)[None, :, None]
    total = rows.sum(axis=(1, 2))
    on_flags = (rows * np.asarray(flags, dtype=bool)[None, None, :]).sum(axis=(1, 2))
    share = np.divide(on_flags, total, out=np.zeros_like(total), where=total > 0)
    return int(share.argmax())


def pair_table(
    window: WindowArrays, normalised: np.ndarray, head: int, threshold: float, limit: int = 20
) -> List[Dict[str, Any]]:
    """The high-similarity pairs of one head in one window (the paper's Fig. 9), most
    similar first, at most ``limit``."""
    heads, i, j, score = pairs_from_similarity(normalised[head : head + 1], threshold)
    order = np.argsort(-score, kind="stable")[:limit]
    return [
        {
            "token_i": window.pieces[int(i[k])],
            "token_j": window.pieces[int(j[k])],
            "index_i": int(i[k]),
            "index_j": int(j[k]),
            "similarity": round(float(score[k]), 3),
        }
        for k in order
    ]


def plot_window_attention(
    attn: np.ndarray,
    pieces: Sequence[str],
    flags: np.ndarray,
    path: PathLike,
    *,
    head: int,
    layers: Sequence[int],
    separator_layer: int,
) -> Path:
    """The paper's Fig. 4 for one input: one head's attention map (left) and the sum of
    the layer's heads (right) per chosen layer, and the wordpieces of the high-attention
    columns of ``separator_layer`` (bottom)."""
    n_heads = attn.shape[1]
    fig = Figure(figsize=(10, 4.2 * len(layers) + 1.4), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(len(layers) + 1, 2, height_ratios=[4.2] * len(layers) + [1.0])
    for row, layer in enumerate(layers):
        for col, (matrix, title) in enumerate(
            (
                (attn[layer, head], f"Layer {layer + 1}, head {head + 1}"),
                (attn[layer].sum(axis=0), f"Layer {layer + 1}, sum of {n_heads} heads"),
            )
        ):
            ax = fig.add_subplot(grid[row, col])
            shown = ax.imshow(matrix, cmap="viridis", interpolation="nearest")
            fig.colorbar(shown, ax=ax, label="attention", shrink=0.85)
            ax.set_title(title, fontsize=10)
            ax.set_xlabel("key position j")
            ax.set_ylabel("query position i")
    ax = fig.add_subplot(grid[len(layers), :])
    ax.axis("off")
    marked = [f"{pos}:{pieces[int(pos)]}" for pos in np.flatnonzero(flags)]
    lines, line = [], ""
    for item in marked:
        if len(line) + len(item) > 110:
            lines.append(line)
            line = ""
        line += item + "   "
    lines.append(line)
    ax.text(
        0.0,
        1.0,
        f"High-attention columns of layer {separator_layer + 1} (position:wordpiece):\n"
        + "\n".join(lines),
        va="top",
        family="monospace",
        fontsize=8,
    )
    fig.suptitle("Attention maps of one input window")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=figures.DPI)
    return out


def run_example(
    model: PathLike,
    windows_path: PathLike,
    metrics_dir: PathLike,
    figures_dir: PathLike,
    *,
    window: int = -1,
    layer: int = -1,
    head: int = -1,
    threshold: float = 0.3,
    column_threshold: float = 0.3,
    gpu_id: int = -1,
) -> Dict[str, Any]:
    """One window in detail: attention maps (Fig. 4), context similarity and its
    separator blocks (Fig. 5), pairs of chosen heads (Fig. 9) and the summed similarity
    per layer (Fig. 12). ``window`` -1: :func:`choose_example`; ``head`` -1: the most
    columnar head of ``layer``. Writes ``example.json`` and the figures."""
    started = time.perf_counter()
    analysis = load_analysis_model(model, attentions=True, context=True, gpu_id=gpu_id)
    docs = load_windows(windows_path, analysis.nlp.vocab, 0)
    index = choose_example(docs) if window < 0 else window
    if not 0 <= index < len(docs):
        raise ValueError(f"window {window} out of range for {len(docs)} windows")
    arrays = next(iter(iter_window_arrays(analysis, [docs[index]])))
    assert arrays.attn is not None and arrays.context is not None
    n_layers, n_heads = analysis.n_layers, analysis.n_heads
    layer = layer % n_layers
    keep = nonspecial_mask(arrays.valid, arrays.categories)
    flags = high_attention_columns(
        arrays.attn[layer], queries=keep, candidates=keep, threshold=column_threshold
    )
    chosen = columnar_head(arrays.attn[layer], keep, flags) if head < 0 else head
    normalised = all_layer_similarity(arrays.context, keep, n_heads)
    blocks = BlockContrast(n_heads, threshold=threshold)
    blocks.update(normalised[layer], keep, flags)
    single = PairStatistics(n_layers, n_heads, SEQ_LEN, threshold=threshold)
    single.update(
        arrays.context, arrays.valid, arrays.token_ids, arrays.categories, arrays.sentence_ids
    )
    pair_stats = single.result()
    equal = np.nan_to_num(np.asarray(pair_stats["equal_token_probability"], float)[layer], nan=-1)
    distance = np.asarray(pair_stats["mean_distance"], float)[layer]
    table_heads = [chosen, int(equal.argmax())]
    if not np.all(np.isnan(distance)):
        table_heads += [int(np.nanargmin(distance)), int(np.nanargmax(distance))]
    table_heads = list(dict.fromkeys(table_heads))
    out = Path(figures_dir)
    title = f"Window {index}, layer {layer + 1}, head {chosen + 1}"
    figures.plot_fig5_block_similarity(
        arrays.attn[layer, chosen],
        normalised[layer, chosen],
        out / "fig05_block_similarity.png",
        valid=arrays.valid,
        separator_flags=flags,
        title=title,
    )
    shown_layers = list(dict.fromkeys([0, n_layers // 2, n_layers - 2, n_layers - 1]))
    plot_window_attention(
        arrays.attn,
        arrays.pieces,
        flags,
        out / "fig04_window_attention.png",
        head=chosen,
        layers=[lyr for lyr in shown_layers if lyr >= 0],
        separator_layer=layer,
    )
    figures.plot_fig12_layer_similarity(single, out / "fig12_layer_similarity_window.png")
    text = docs[index].text
    result = {
        "model": _model_info(analysis, model),
        "window": index,
        "article": docs[index].user_data.get("article"),
        "text": text,
        "wordpieces": arrays.pieces[: arrays.length],
        "sentence_ids": _jsonable(arrays.sentence_ids[: arrays.length]),
        "layer": layer,
        "head": chosen,
        "column_threshold": column_threshold,
        "threshold": threshold,
        "separator_positions": _jsonable(np.flatnonzero(flags)),
        "separator_pieces": [arrays.pieces[p] for p in np.flatnonzero(flags)],
        "blocks": blocks.result(),
        "pairs": {
            key: pair_stats[key] for key in ("n_pairs", "equal_token_probability", "mean_distance")
        },
        "pair_tables": {
            str(h): pair_table(arrays, normalised[layer], h, threshold) for h in table_heads
        },
        "run": _run_info(started, 1),
    }
    write_json(Path(metrics_dir) / EXAMPLE_JSON, result)
    return result


# -- pairs (Figs. 6-8, 10-13) -----------------------------------------------------------------


def plot_similarity_histogram(histogram: SimilarityHistogram, path: PathLike) -> Path:
    """Distribution of normalised similarities per layer (sec. 3), log scale, with the
    0.1 / 0.3 / 0.6 marks the paper discusses."""
    counts = histogram.counts.astype(np.float64)
    total = counts.sum(axis=1, keepdims=True) + histogram.negative[:, None]
    shares = np.divide(counts, total, out=np.zeros_like(counts), where=total > 0)
    edges = np.linspace(0.0, 1.0, histogram.bins + 1)
    centres = (edges[:-1] + edges[1:]) / 2
    fig = Figure(figsize=(9, 5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    colours = [f"C{k % 10}" for k in range(histogram.n_layers)]
    for layer in range(histogram.n_layers):
        ax.plot(
            centres, shares[layer], "o-", ms=3, color=colours[layer], label=f"layer {layer + 1}"
        )
    for mark, text in ((0.1, "0.1"), (0.3, "threshold 0.3"), (0.6, "0.6")):
        ax.axvline(mark, color="grey", linestyle="--", linewidth=0.8)
        ax.text(mark + 0.005, 0.98, text, transform=ax.get_xaxis_transform(), fontsize=8, va="top")
    ax.set_yscale("log")
    ax.set_xlim(0, 1)
    ax.set_xlabel("normalised context similarity (bin centre)")
    ax.set_ylabel("share of pairs (all heads)")
    ax.legend(fontsize=8, ncol=2)
    ax.set_title(
        f"Distribution of normalised similarities ({histogram.n_windows} windows; "
        "negative values not shown)",
        fontsize=10,
    )
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=figures.DPI)
    return out


def pairs_derived(pairs: PairStatistics, reference: WindowReference) -> Dict[str, Any]:
    """Numbers for the claims of Figs. 7, 8, 12 and 13 derived from the accumulators."""
    result = pairs.result()
    layer_same = np.asarray(result["layer_same_sentence_probability"], dtype=np.float64)
    layer_chance = np.asarray(result["layer_same_sentence_chance"], dtype=np.float64)
    same = np.asarray(result["same_sentence_probability"], dtype=np.float64)
    chance = np.asarray(result["same_sentence_chance"], dtype=np.float64)
    mean_distance = np.asarray(result["mean_distance"], dtype=np.float64)
    return {
        "layer_near_diagonal_share": _jsonable(near_diagonal_share(pairs.layer_similarity_sum)),
        "near_diagonal_width": 2,
        "layer_same_sentence_excess": _jsonable(layer_same - layer_chance),
        "heads_above_same_sentence_chance": _jsonable((same > chance).sum(axis=1)),
        "heads_with_pairs": _jsonable((pairs.n_pairs > 0).sum(axis=1)),
        "heads_mean_distance_at_least_50": _jsonable((mean_distance >= 50).sum(axis=1)),
        "reference": reference.result(),
    }


def run_pairs(
    model: PathLike,
    windows_path: PathLike,
    metrics_dir: PathLike,
    figures_dir: PathLike,
    *,
    n_windows: int = 0,
    batch_size: int = 32,
    gpu_id: int = -1,
    threshold: float = 0.3,
    column_threshold: float = 0.3,
    progress: bool = True,
) -> Dict[str, Any]:
    """High context-similarity pairs of every head over the windows, the similarity
    distribution and the separator-block contrast of the last layer; writes
    ``pairs.json``, ``pairs_maps.npz`` and Figs. 6, 7, 8, 10, 11, 12, 13."""
    started = time.perf_counter()
    analysis = load_analysis_model(
        model, attentions=False, context=True, colsum_layers=(-1,), gpu_id=gpu_id
    )
    docs = load_windows(windows_path, analysis.nlp.vocab, n_windows)
    n_layers, n_heads = analysis.n_layers, analysis.n_heads
    pairs = PairStatistics(n_layers, n_heads, SEQ_LEN, threshold=threshold)
    histogram = SimilarityHistogram(n_layers)
    blocks = BlockContrast(n_heads, threshold=threshold)
    reference = WindowReference(SEQ_LEN)
    shared = SharedComponent(n_layers, n_heads)
    for window in _stream(analysis, docs, batch_size, progress, "pairs"):
        assert window.context is not None and window.colsums is not None
        pairs.update(
            window.context, window.valid, window.token_ids, window.categories, window.sentence_ids
        )
        keep = nonspecial_mask(window.valid, window.categories)
        normalised = all_layer_similarity(window.context, keep, n_heads)
        histogram.update(normalised, keep)
        flags = separator_columns(window.colsums[0], column_threshold) & keep
        blocks.update(normalised[-1], keep, flags)
        reference.update(keep, window.sentence_ids)
        shared.update(window.context, keep)
    metrics = Path(metrics_dir)
    result = {
        "model": _model_info(analysis, model),
        "windows_file": str(windows_path),
        "pairs": pairs.result(),
        "similarity_histogram": histogram.result(),
        "blocks": {"layer": n_layers - 1, **blocks.result()},
        "shared_component": shared.result(),
        "derived": pairs_derived(pairs, reference),
        "run": _run_info(started, len(docs)),
    }
    write_json(metrics / PAIRS_JSON, result)
    _save_arrays(metrics / "pairs_maps.npz", pairs.arrays())
    out = Path(figures_dir)
    data = {**pairs.result(), **pairs.arrays()}
    figures.plot_fig6_repeated_tokens(data, out / "fig06_repeated_tokens.png")
    figures.plot_fig7_distance_histograms(data, out / "fig07_distances.png")
    figures.plot_fig8_same_sentence(data, out / "fig08_same_sentence.png")
    figures.plot_fig10_similarity_locations(data, out / "fig10_locations.png")
    figures.plot_fig11_anchor_tokens(data, out / "fig11_anchors.png")
    figures.plot_fig12_layer_similarity(data, out / "fig12_layer_similarity.png")
    figures.plot_fig13_layer_distances(data, out / "fig13_layer_distances.png")
    plot_similarity_histogram(histogram, out / "fig_similarity_distribution.png")
    return result


def load_metrics(metrics_dir: PathLike) -> Dict[str, Optional[Dict[str, Any]]]:
    """The JSON files the commands wrote (None for those missing)."""
    folder = Path(metrics_dir)
    out: Dict[str, Optional[Dict[str, Any]]] = {}
    for key, name in (
        ("corpus", CORPUS_JSON),
        ("attention", ATTENTION_JSON),
        ("example", EXAMPLE_JSON),
        ("pairs", PAIRS_JSON),
    ):
        path = folder / name
        out[key] = json.loads(path.read_text(encoding="utf8")) if path.exists() else None
    return out
