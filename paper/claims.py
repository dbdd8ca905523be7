"""The paper's claims, checked against the numbers the corpus analyses wrote.

:func:`evaluate_claims` takes the JSON results of :mod:`.run` (``corpus``, ``attention``,
``example``, ``pairs``; any may be missing) and returns one :class:`Claim` per claim of
Halevi et al. (2026): the paper's statement, the number measured here, the criterion
used to decide (taken from the paper's wording, not tuned to any model's numbers, and
stated in the report) and whether it holds (None when the analysis behind it did not run).
:func:`render_report` writes them as a markdown report with the figures embedded.

Layers are "first" (index 0), "middle" (``n_layers // 2``, the paper's layer 6 of 12)
and "last"; the paper's per-head claims about "layer 11" are checked on the last layer.
"""

import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

Metrics = Mapping[str, Optional[Mapping[str, Any]]]
PathLike = Union[str, "os.PathLike[str]"]

SEP_INDEX, PUNCT_INDEX, CLS_INDEX = 1, 2, 0


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and what was measured for it."""

    key: str
    where: str
    statement: str
    criterion: str
    measured: str
    holds: Optional[bool]
    figures: Tuple[str, ...] = ()


def _arr(values: Any) -> np.ndarray:
    """A float array; ``None`` becomes NaN."""
    if values is None:
        return np.array(np.nan)
    return np.array(
        np.vectorize(lambda v: np.nan if v is None else v, otypes=[float])(
            np.array(values, dtype=object)
        ),
        dtype=np.float64,
    )


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    number = float(value)
    if math.isnan(number):
        return "n/a"
    return f"{number:.{digits}f}"


def _layers(n_layers: int) -> Tuple[int, int, int]:
    return 0, n_layers // 2, n_layers - 1


# -- claims on attention maps (Figs. 2-4) --------------------------------------------------


def _attention_claims(attention: Mapping[str, Any]) -> List[Claim]:
    derived = attention["derived"]
    n_layers = int(attention["model"]["n_layers"])
    first, mid, last = _layers(n_layers)
    uniform = float(derived["uniform_band_share"])
    band = _arr(derived["band_share"])
    layer_band = _arr(derived["layer_band_share"])
    zeroed = _arr(derived["layer_band_share_after_column_zeroing"])
    above = int(derived["heads_band_above_2x_uniform"])
    total = int(derived["n_heads_total"])
    strongest = np.asarray(derived["strongest_band"])
    off = [
        f"L{layer + 1}H{head + 1} ({'+1' if strongest[layer, head] == 1 else '-1'})"
        for layer, head in zip(*np.nonzero(strongest > 0), strict=True)
    ]
    top_position = int(derived["most_attended_position"][first])
    per_token = _arr(derived["attention_per_token_ratio"])
    separators = _arr(derived["separator_share"])
    separator_tokens = float(derived["separator_token_share"])
    punct_top = _arr(derived["top_column_punct_share"])
    figs_2 = ("fig02_summed_attention.png",)
    return [
        Claim(
            "diagonal_centred",
            "Sec. 2, Fig. 2",
            "Summed over many inputs, each head's attention is centred on the diagonal.",
            "at least half of all heads put >= 2x the uniform share on the diagonal and "
            "+-1 diagonals",
            f"{above} of {total} heads; median head {_fmt(np.nanmedian(band), 3)} vs uniform "
            f"{_fmt(uniform, 3)}",
            above >= total / 2,
            figs_2,
        ),
        Claim(
            "off_diagonal_heads",
            "Sec. 2, Fig. 2",
            "Some heads put their strongest summed attention on the +1 or -1 diagonal "
            "(the next or the previous token).",
            "at least one head's largest of the 0/+1/-1 diagonals is +1 or -1",
            f"{len(off)} heads: " + (", ".join(off[:8]) + (" ..." if len(off) > 8 else "")),
            len(off) >= 1,
            figs_2,
        ),
        Claim(
            "column_zeroing_diagonal",
            "Sec. 2, Fig. 3",
            "Zeroing each input's most attended columns in the last layer's summed "
            "attention leaves a diagonal.",
            "last layer: diagonal+-1 share after zeroing > before",
            f"{_fmt(zeroed[last], 3)} after vs {_fmt(layer_band[last], 3)} before "
            f"(uniform {_fmt(uniform, 3)})",
            bool(zeroed[last] > layer_band[last]),
            ("fig03_column_zeroing.png",),
        ),
        Claim(
            "first_layer_cls",
            "Sec. 2, Fig. 4",
            "In the first layers the most attended token is [CLS].",
            "first layer: the key position with the most summed attention is 0 ([CLS])",
            f"most attended position {top_position}; [CLS] gets "
            f"{_fmt(per_token[first, CLS_INDEX], 1)}x its uniform share",
            top_position == 0,
            ("fig04_received.png", "fig04_window_attention.png"),
        ),
        Claim(
            "middle_diagonal",
            "Sec. 2, Fig. 4",
            "In the middle layers attention is more concentrated along the diagonal.",
            "diagonal+-1 share of the middle layer > first and > last layer",
            f"first {_fmt(layer_band[first], 3)}, middle (L{mid + 1}) "
            f"{_fmt(layer_band[mid], 3)}, last {_fmt(layer_band[last], 3)}",
            bool(layer_band[mid] > layer_band[first] and layer_band[mid] > layer_band[last]),
            figs_2,
        ),
        Claim(
            "final_layer_separators",
            "Abstract, Sec. 2, Fig. 4",
            "In the final layer, attention concentrates on sentence separators.",
            "last layer: [SEP]+punctuation receive >= 2x their share of wordpieces, and >= 50% "
            "of the high-attention columns (normalised column sum >= 0.3) are punctuation",
            f"[SEP]+punct receive {_fmt(separators[last], 3)} (wordpiece share "
            f"{_fmt(separator_tokens, 3)}); punctuation among top columns "
            f"{_fmt(punct_top[last], 3)}",
            bool(separators[last] >= 2 * separator_tokens and punct_top[last] >= 0.5),
            ("fig04_received.png", "fig04_window_attention.png"),
        ),
    ]


# -- claims on context similarity (Figs. 5-13) ---------------------------------------------


def _pairs_claims(pairs_json: Mapping[str, Any]) -> List[Claim]:
    pairs = pairs_json["pairs"]
    derived = pairs_json["derived"]
    histogram = pairs_json["similarity_histogram"]
    blocks = pairs_json["blocks"]
    reference = derived["reference"]
    n_layers = int(pairs_json["model"]["n_layers"])
    n_heads = int(pairs_json["model"]["n_heads"])
    first, mid, last = _layers(n_layers)

    below = _arr(histogram["below_0.1"])
    gap = _arr(histogram["gap_density_ratio"])
    equal = _arr(pairs["equal_token_probability"])[last]
    equal_chance = _arr(pairs["equal_token_chance"])[last]
    within = _arr(pairs["same_sentence_equal_token_probability"])[last]
    both = ~np.isnan(equal) & ~np.isnan(within)
    distance = _arr(pairs["mean_distance"])[last]
    far = int(np.sum(distance >= 50))
    same = _arr(pairs["same_sentence_probability"])[last]
    chance = _arr(pairs["same_sentence_chance"])[last]
    has_pairs = ~np.isnan(same)
    above_chance = int(np.sum(same[has_pairs] > chance[has_pairs]))
    anchor = _arr(pairs["anchor_share_mean"])[last]
    distinct = _arr(pairs["mean_distinct_anchors"])
    layer_distance = _arr(pairs["layer_mean_distance"])
    random_distance = float(reference["mean_random_pair_distance"])
    excess = _arr(derived["layer_same_sentence_excess"])
    near = _arr(derived["layer_near_diagonal_share"])
    sentences = float(reference["mean_sentences"])
    spread = float(np.nanmax(equal) - np.nanmin(equal)) if np.any(~np.isnan(equal)) else math.nan
    best, worst = (
        (int(np.nanargmax(equal)), int(np.nanargmin(equal))) if np.any(~np.isnan(equal)) else (0, 0)
    )
    change = float(np.mean(np.abs(within[both] - equal[both]))) if both.any() else math.nan
    ratio = float(_arr(blocks["pooled_ratio"]))
    fig13 = ("fig13_layer_distances.png", "fig12_layer_similarity.png")
    return [
        Claim(
            "separator_blocks",
            "Sec. 2, Fig. 5",
            "The blocks that the last layer's high-attention (separator) tokens delimit are "
            "areas of high context similarity, with low similarity between them.",
            "last layer, pooled over heads and windows: mean normalised similarity within "
            "blocks >= 1.2x that between blocks",
            f"within {_fmt(blocks['pooled_within_mean'], 3)}, between "
            f"{_fmt(blocks['pooled_between_mean'], 3)} (ratio {_fmt(ratio)}); "
            f"{_fmt(blocks['mean_separators'], 1)} separators per window; high pairs within "
            f"blocks {_fmt(blocks['pooled_high_within_share'])} vs chance "
            f"{_fmt(blocks['pooled_high_within_chance'])}",
            bool(ratio >= 1.2),
            ("fig05_block_similarity.png",),
        ),
        Claim(
            "mostly_below_0.1",
            "Sec. 3",
            "The vast majority of normalised context similarities are below 0.1.",
            "last layer: >= 90% of the pairs' normalised similarities are below 0.1",
            f"last layer {_fmt(below[last])}; layers {_fmt(np.nanmin(below))}-"
            f"{_fmt(np.nanmax(below))}",
            bool(below[last] >= 0.9),
            ("fig_similarity_distribution.png",),
        ),
        Claim(
            "gap_0.1_0.6",
            "Sec. 3",
            "A large gap separates the normalised similarities of 0.1 and 0.6 (so the "
            "threshold 0.3 splits two groups).",
            "last layer: fewer values per bin in [0.1, 0.6) than in [0.6, 1] (density ratio < 1)",
            f"density ratio {_fmt(gap[last])} in the last layer "
            f"({_fmt(np.nanmin(gap))}-{_fmt(np.nanmax(gap))} over layers)",
            bool(gap[last] < 1),
            ("fig_similarity_distribution.png",),
        ),
        Claim(
            "heads_differ_repeats",
            "Sec. 3, Fig. 6a",
            "Heads differ in how much they recognise repeated tokens: for some, high-"
            "similarity pairs are mostly equal tokens, for others mostly different ones.",
            "last layer: P(pair joins equal tokens) differs by >= 0.2 between heads",
            f"head {best + 1}: {_fmt(equal[best])}, head {worst + 1}: {_fmt(equal[worst])} "
            f"(spread {_fmt(spread)}; chance {_fmt(np.nanmean(equal_chance), 3)})",
            bool(spread >= 0.2),
            ("fig06_repeated_tokens.png",),
        ),
        Claim(
            "same_sentence_repeats",
            "Sec. 3, Fig. 6b",
            "Restricting to pairs within one sentence does not change the heads' "
            "repeated-token recognition much.",
            "last layer: mean |P(equal | same sentence) - P(equal)| over heads <= 0.1",
            f"mean absolute change {_fmt(change, 3)}",
            bool(change <= 0.1),
            ("fig06_repeated_tokens.png",),
        ),
        Claim(
            "distance_below_50",
            "Sec. 3, Fig. 7",
            "All heads but one have a mean high-similarity pair distance below 50.",
            "last layer: at most one head with mean distance >= 50",
            f"{far} of {n_heads} heads >= 50; mean distances {_fmt(np.nanmin(distance), 1)}-"
            f"{_fmt(np.nanmax(distance), 1)} (random pairs: {_fmt(random_distance, 1)})",
            far <= 1,
            ("fig07_distances.png",),
        ),
        Claim(
            "same_sentence_above_chance",
            "Sec. 3, Fig. 8",
            "Heads prefer high-similarity pairs within one sentence, above chance.",
            "last layer: every head with pairs has P(same sentence) above its chance level",
            f"{above_chance} of {int(has_pairs.sum())} heads above chance; P(same sentence) "
            f"{_fmt(np.nanmin(same))}-{_fmt(np.nanmax(same))}, chance "
            f"{_fmt(np.nanmean(chance))}",
            bool(has_pairs.any() and above_chance == int(has_pairs.sum())),
            ("fig08_same_sentence.png",),
        ),
        Claim(
            "sentences_per_window",
            "Sec. 3",
            "A window of 128 tokens holds about 3-4 sentences.",
            "mean sentences per window between 2.5 and 4.5",
            f"{_fmt(sentences, 1)} sentences per window",
            2.5 <= sentences <= 4.5,
        ),
        Claim(
            "anchor_share",
            "Sec. 3, Fig. 11a",
            "Most of a head's high-similarity pairs include its single most common token.",
            "last layer: the share of a head's pairs that include its most common token, "
            "averaged over windows and heads, >= 0.5",
            f"mean {_fmt(np.nanmean(anchor))} (heads {_fmt(np.nanmin(anchor))}-"
            f"{_fmt(np.nanmax(anchor))})",
            bool(np.nanmean(anchor) >= 0.5),
            ("fig11_anchors.png",),
        ),
        Claim(
            "distinct_anchors",
            "Sec. 3, Fig. 11b",
            "Each head specialises on its own anchor token rather than all heads "
            "converging on one.",
            "last layer: mean number of distinct anchors across the heads >= half the heads",
            f"{_fmt(distinct[last], 1)} distinct anchors of {n_heads} heads per window",
            bool(distinct[last] >= n_heads / 2),
            ("fig11_anchors.png",),
        ),
        Claim(
            "early_long_range",
            "Abstract, Sec. 4, Fig. 13",
            "Early layers make long-range similarities, almost regardless of distance.",
            "first layer: mean pair distance >= 0.75x that of random pairs and > middle layer",
            f"first {_fmt(layer_distance[first], 1)}, middle {_fmt(layer_distance[mid], 1)}, "
            f"random pairs {_fmt(random_distance, 1)}",
            bool(
                layer_distance[first] >= 0.75 * random_distance
                and layer_distance[first] > layer_distance[mid]
            ),
            fig13,
        ),
        Claim(
            "middle_short_range",
            "Abstract, Sec. 4, Fig. 13",
            "Middle layers make short-range similarities.",
            "middle layer mean pair distance < first and < last layer",
            "per layer " + ", ".join(_fmt(v, 1) for v in layer_distance),
            bool(
                layer_distance[mid] < layer_distance[first]
                and layer_distance[mid] < layer_distance[last]
            ),
            fig13,
        ),
        Claim(
            "last_within_sentence",
            "Abstract, Sec. 4, Fig. 12",
            "The last layers prefer strong similarities within the same sentence.",
            "last layer: P(same sentence) - chance > 0 and > that of the first layer",
            "excess over chance per layer " + ", ".join(_fmt(v, 3) for v in excess),
            bool(excess[last] > 0 and excess[last] > excess[first]),
            ("fig08_same_sentence.png", "fig12_layer_similarity.png"),
        ),
        Claim(
            "middle_diagonal_similarity",
            "Sec. 4, Fig. 12",
            "Summed context similarity is spread in early layers, concentrated along the "
            "diagonal in the middle layers and spreads again in the last.",
            "share of the summed similarity at distance 1-2: middle > first and > last",
            "per layer " + ", ".join(_fmt(v, 3) for v in near),
            bool(near[mid] > near[first] and near[mid] > near[last]),
            ("fig12_layer_similarity.png", "fig12_layer_similarity_window.png"),
        ),
    ]


def _missing(keys: Sequence[Tuple[str, str, str]], analysis: str) -> List[Claim]:
    return [
        Claim(key, where, statement, "", f"not measured ({analysis} did not run)", None)
        for key, where, statement in keys
    ]


_ATTENTION_KEYS = [
    ("diagonal_centred", "Sec. 2, Fig. 2", "Each head's summed attention is diagonal."),
    ("off_diagonal_heads", "Sec. 2, Fig. 2", "Some heads peak on the +-1 diagonals."),
    ("column_zeroing_diagonal", "Sec. 2, Fig. 3", "Zeroing top columns leaves a diagonal."),
    ("first_layer_cls", "Sec. 2, Fig. 4", "First layers attend most to [CLS]."),
    ("middle_diagonal", "Sec. 2, Fig. 4", "Middle layers attend along the diagonal."),
    ("final_layer_separators", "Sec. 2, Fig. 4", "The final layer attends to separators."),
]
_PAIRS_KEYS = [
    ("separator_blocks", "Sec. 2, Fig. 5", "Separator blocks are areas of high similarity."),
    ("mostly_below_0.1", "Sec. 3", "Most normalised similarities are below 0.1."),
    ("gap_0.1_0.6", "Sec. 3", "A gap separates 0.1 and 0.6."),
    ("heads_differ_repeats", "Sec. 3, Fig. 6a", "Heads differ in repeated-token recognition."),
    ("same_sentence_repeats", "Sec. 3, Fig. 6b", "Same-sentence restriction changes little."),
    ("distance_below_50", "Sec. 3, Fig. 7", "All heads but one have mean distance < 50."),
    ("same_sentence_above_chance", "Sec. 3, Fig. 8", "Same-sentence pairs above chance."),
    ("sentences_per_window", "Sec. 3", "Windows hold 3-4 sentences."),
    ("anchor_share", "Sec. 3, Fig. 11a", "Pairs mostly include one anchor token."),
    ("distinct_anchors", "Sec. 3, Fig. 11b", "Each head has its own anchor."),
    ("early_long_range", "Sec. 4, Fig. 13", "Early layers: long-range similarity."),
    ("middle_short_range", "Sec. 4, Fig. 13", "Middle layers: short-range similarity."),
    ("last_within_sentence", "Sec. 4, Fig. 12", "Last layer: within-sentence similarity."),
    ("middle_diagonal_similarity", "Sec. 4, Fig. 12", "Middle layers: diagonal similarity."),
]


def evaluate_claims(metrics: Metrics) -> List[Claim]:
    """Every claim, measured from the analyses' JSON results (see the module doc)."""
    attention = metrics.get("attention")
    pairs = metrics.get("pairs")
    claims: List[Claim] = []
    claims += _attention_claims(attention) if attention else _missing(_ATTENTION_KEYS, "attention")
    claims += _pairs_claims(pairs) if pairs else _missing(_PAIRS_KEYS, "pairs")
    return claims


# -- report -------------------------------------------------------------------------------------


def _holds(value: Optional[bool]) -> str:
    return {True: "**holds**", False: "does not hold", None: "not measured"}[value]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _layer_table(metrics: Metrics) -> List[str]:
    attention, pairs = metrics.get("attention"), metrics.get("pairs")
    source = attention or pairs
    if source is None:
        return []
    n_layers = int(source["model"]["n_layers"])
    columns: List[Tuple[str, Callable[[int], str]]] = []
    if attention:
        derived = attention["derived"]
        band = _arr(derived["layer_band_share"])
        share = _arr(attention["received"]["layer_share"])
        columns += [
            ("attention on diagonal+-1", lambda k: _fmt(band[k], 3)),
            ("attention on [CLS]", lambda k: _fmt(share[k, CLS_INDEX], 3)),
            (
                "attention on [SEP]+punct",
                lambda k: _fmt(share[k, SEP_INDEX] + share[k, PUNCT_INDEX], 3),
            ),
        ]
    if pairs:
        result, derived_p = pairs["pairs"], pairs["derived"]
        distance = _arr(result["layer_mean_distance"])
        same = _arr(result["layer_same_sentence_probability"])
        chance = _arr(result["layer_same_sentence_chance"])
        equal = _arr(result["layer_equal_token_probability"])
        per_window = _arr(result["layer_n_pairs"]) / max(int(result["n_windows"]), 1)
        below = _arr(pairs["similarity_histogram"]["below_0.1"])
        near = _arr(derived_p["layer_near_diagonal_share"])
        shared = _arr((pairs.get("shared_component") or {}).get("layer_share"))
        columns += [
            ("pairs per window", lambda k: _fmt(per_window[k], 0)),
            ("mean pair distance", lambda k: _fmt(distance[k], 1)),
            ("P(same sentence) / chance", lambda k: f"{_fmt(same[k])} / {_fmt(chance[k])}"),
            ("P(equal tokens)", lambda k: _fmt(equal[k])),
            ("similarity < 0.1", lambda k: _fmt(below[k])),
            ("similarity at distance 1-2", lambda k: _fmt(near[k], 3)),
        ]
        if shared.ndim:
            columns.append(("shared component of head outputs", lambda k: _fmt(shared[k])))
    lines = [
        "| layer | " + " | ".join(name for name, _ in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for layer in range(n_layers):
        lines.append(f"| {layer + 1} | " + " | ".join(get(layer) for _, get in columns) + " |")
    return lines


_FIGURES: Tuple[Tuple[str, str], ...] = (
    (
        "fig02_summed_attention.png",
        "Fig. 2: summed attention maps of one head and of each "
        "layer's heads over the corpus (log colour scale).",
    ),
    (
        "fig03_column_zeroing.png",
        "Fig. 3: the last layer's summed attention, with each "
        "window's most attended columns zeroed, and with the diagonals zeroed too.",
    ),
    (
        "fig04_received.png",
        "Fig. 4 (statistics): attention received by [CLS], [SEP], "
        "punctuation and words per layer and per head of the last layer; mass on the top "
        "columns.",
    ),
    (
        "fig04_window_attention.png",
        "Fig. 4 (one input): attention maps of one head and of "
        "each layer's heads, and the high-attention columns of the last layer.",
    ),
    (
        "fig05_block_similarity.png",
        "Fig. 5: one window's attention map, context similarity, "
        "separator lines and the similarity averaged between separators.",
    ),
    (
        "fig_similarity_distribution.png",
        "Sec. 3: distribution of normalised context "
        "similarities per layer (the paper's 0.1 / 0.3 / 0.6 marks).",
    ),
    (
        "fig06_repeated_tokens.png",
        "Fig. 6: probability that a high-similarity pair joins "
        "equal tokens, (a) overall and (b) within one sentence.",
    ),
    (
        "fig07_distances.png",
        "Fig. 7: distances of high-similarity pairs per head of the last layer.",
    ),
    (
        "fig08_same_sentence.png",
        "Fig. 8: probability that a high-similarity pair lies in one sentence, against chance.",
    ),
    (
        "fig10_locations.png",
        "Fig. 10: where the high-similarity pairs of two heads of the "
        "last layer lie, summed over the corpus.",
    ),
    (
        "fig11_anchors.png",
        "Fig. 11: (a) share of a head's pairs that include its most "
        "common token; (b) distinct most common tokens across the heads.",
    ),
    (
        "fig12_layer_similarity.png",
        "Fig. 12: normalised context similarity summed over heads, per layer, over the corpus.",
    ),
    ("fig12_layer_similarity_window.png", "Fig. 12 for one input (the example window)."),
    ("fig13_layer_distances.png", "Fig. 13: distances of high-similarity pairs per layer."),
)


def _example_tables(example: Mapping[str, Any]) -> List[str]:
    lines: List[str] = []
    tables = example.get("pair_tables", {})
    layer = int(example["layer"])
    for head, rows in tables.items():
        lines += [
            "",
            f"Layer {layer + 1}, head {int(head) + 1} ({len(rows)} most similar pairs shown):",
            "",
            "| token i | token j | index i | index j | similarity |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {_cell(r['token_i'])} | {_cell(r['token_j'])} | {r['index_i']} | "
            f"{r['index_j']} | {r['similarity']:.2f} |"
            for r in rows
        ]
    return lines


def _notes(metrics: Metrics) -> List[str]:
    """Data-driven remarks that help read the claims table (empty when none apply)."""
    pairs = metrics.get("pairs")
    if not pairs:
        return []
    n_layers = int(pairs["model"]["n_layers"])
    n_heads = int(pairs["model"]["n_heads"])
    last = n_layers - 1
    below = _arr(pairs["similarity_histogram"]["below_0.1"])
    shared = _arr((pairs.get("shared_component") or {}).get("layer_share"))
    result = pairs["pairs"]
    positions = float(pairs["derived"]["reference"]["mean_positions"] or 0.0)
    possible = n_heads * positions * (positions - 1) / 2
    per_window = float(_arr(result["layer_n_pairs"])[last]) / max(int(result["n_windows"]), 1)
    lines: List[str] = []
    if below[last] < 0.5:
        text = (
            f"* Unlike the paper's model, most normalised similarities here are not small: in "
            f"the last layer only {_fmt(below[last])} are below 0.1, and the 0.3 threshold "
            f"keeps {_fmt(per_window, 0)} pairs per window of the {_fmt(possible, 0)} possible "
            f"({_fmt(per_window / possible if possible else math.nan)})."
        )
        if shared.ndim:
            text += (
                " The head outputs share a large common vector: per window, the mean of a "
                f"head's output vectors carries {_fmt(shared[last])} of their squared norm in "
                "the last layer (layers: " + ", ".join(_fmt(v) for v in shared) + "), so the "
                "dot product h_i . h_j is large for almost every pair. Statistics of the "
                "thresholded pairs (repeated tokens, distances, anchors) are then close to "
                "those of random pairs: compare them with the chance levels given."
            )
        lines.append(text)
    if not lines:
        return []
    return ["", "## Notes", ""] + lines


def render_report(
    metrics: Metrics,
    claims: Sequence[Claim],
    *,
    figures_dir: PathLike,
    report_path: PathLike,
) -> str:
    """The markdown report: summary, claims table, per-layer table, corpus, figures
    (linked relative to ``report_path``) and the example window's pair tables."""
    report_dir = Path(report_path).parent
    figures = Path(figures_dir)
    source = metrics.get("attention") or metrics.get("pairs") or metrics.get("corpus") or {}
    model = source.get("model", {})
    corpus = metrics.get("corpus") or {}
    measured = [c for c in claims if c.holds is not None]
    held = sum(1 for c in measured if c.holds)
    lines = [
        "# The claims of Halevi et al. (2026), checked on one model",
        "",
        "Generated by `spacy project run analysis` (`scripts/write_report.py`) from "
        "`metrics/analysis/*.json`. Paper: *Self-attention vector output similarities "
        "reveal how machines pay attention* (BERT-base, 12 layers x 12 heads, Wikipedia "
        "windows of 128 wordpieces).",
        "",
        f"* Model: `{model.get('name_or_path', '?')}` ({model.get('architecture', '?')}, "
        f"{model.get('n_layers', '?')} layers x {model.get('n_heads', '?')} heads, hidden "
        f"{model.get('hidden', '?')}), config `{model.get('source', '?')}`.",
    ]
    if corpus:
        lines.append(
            f"* Corpus: WikiText-2 test, {corpus.get('n_windows')} windows of at most "
            f"{corpus.get('seq_len')} wordpieces ({corpus.get('n_articles')} articles, mean "
            f"{_fmt(corpus.get('mean_wordpieces_per_window'), 1)} wordpieces and "
            f"{_fmt(corpus.get('mean_sentences_per_window'), 1)} sentences per window; "
            "headings left out)."
        )
    for key in ("attention", "example", "pairs"):
        run = (metrics.get(key) or {}).get("run")
        if run:
            lines.append(
                f"* `{key}`: {run['n_windows']} window{'' if run['n_windows'] == 1 else 's'} "
                f"in {_fmt(run['seconds'], 0)} s "
                f"({run['torch_threads']} torch threads)."
            )
    lines += [
        "",
        f"**{held} of {len(measured)} claims hold on this model.** Layers are numbered from "
        '1; "first", "middle" and "last" are layers 1, '
        f"{int(model.get('n_layers', 2)) // 2 + 1} and {model.get('n_layers', '?')} "
        "(the paper's per-head claims about its last layer are checked on the last layer). "
        "High-similarity pairs: normalised context similarity >= 0.3, as in the paper. Each "
        "criterion follows the paper's wording; none was tuned to this model's numbers.",
        "",
        "## Claims",
        "",
        "| # | Claim of the paper | Where | Measured here | Criterion | Result |",
        "|---|---|---|---|---|---|",
    ]
    for number, claim in enumerate(claims, start=1):
        lines.append(
            f"| {number} | {_cell(claim.statement)} | {claim.where} | {_cell(claim.measured)} "
            f"| {_cell(claim.criterion)} | {_holds(claim.holds)} |"
        )
    lines += _notes(metrics)
    table = _layer_table(metrics)
    if table:
        lines += ["", "## Per layer", ""] + table
    lines += ["", "## Figures", ""]
    for name, caption in _FIGURES:
        path = figures / name
        if not path.exists():
            continue
        link = Path(os.path.relpath(path, report_dir)).as_posix()
        lines += [f"### {caption.split(':')[0]}", "", caption, "", f"![{name}]({link})", ""]
    example = metrics.get("example")
    if example:
        lines += [
            "## The example window (Fig. 9)",
            "",
            f"Window {example['window']} of the corpus; separators (high-attention columns of "
            f"layer {int(example['layer']) + 1}): "
            + ", ".join(
                f"{p}:`{s}`"
                for p, s in zip(
                    example["separator_positions"], example["separator_pieces"], strict=True
                )
            )
            + ".",
            "",
            "> " + _cell(example["text"]),
        ]
        lines += _example_tables(example)
    return "\n".join(lines).rstrip() + "\n"


def write_report(
    metrics: Metrics, *, figures_dir: PathLike, report_path: PathLike
) -> Tuple[Path, List[Claim]]:
    """Evaluate the claims and write the report; returns its path and the claims."""
    claims = evaluate_claims(metrics)
    text = render_report(metrics, claims, figures_dir=figures_dir, report_path=report_path)
    out = Path(report_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf8")
    return out, claims


def claims_json(claims: Sequence[Claim]) -> List[Dict[str, Any]]:
    """The claims as JSON-able dicts."""
    return [
        {
            "key": c.key,
            "where": c.where,
            "statement": c.statement,
            "criterion": c.criterion,
            "measured": c.measured,
            "holds": c.holds,
            "figures": list(c.figures),
        }
        for c in claims
    ]
