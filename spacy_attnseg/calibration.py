"""Choose layers, heads and threshold of ``attn_segmenter`` from gold sentence boundaries
(``calibrate_segmenter``), and the decision thresholds of a trained ``attn_senter``
(``tune_senter_thresholds``).

The transformer runs once over the examples with every head's column sums captured.
Every single head is scored (boundary F1 at its best threshold); then, within each layer,
heads are added greedily while F1 improves, and the whole layer (the paper's summation
over heads) is scored too. The best of all of these is the calibrated configuration.

Boundary F1 here counts sentence starts after the first token of each doc, on the
component's own tokenization: the quantity ``spacy evaluate`` reports as ``sents_f`` up
to the first token.
"""

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy.training import Example
from tqdm import tqdm

from .capture import CaptureRequest
from .errors import Errors, is_whole_number
from .sentences import (
    candidate_mask,
    column_scores,
    decision_targets,
    normalised_window_scores,
)
from .windows import token_values

CALIBRATION_CONSUMER = "attnseg_calibration"
# The score of a start the layout makes whatever the threshold (above every threshold).
ALWAYS = 2.0


@dataclass
class _DocData:
    colsums: numpy.ndarray  # (n_windows, n_layers * n_heads, L)
    align: Any
    candidates: numpy.ndarray
    targets: numpy.ndarray  # the start each separator makes (sentences.decision_targets)
    fixed: numpy.ndarray  # starts made whatever the scores
    gold: numpy.ndarray  # bool per token: a gold sentence start (never token 0)


@dataclass
class Sweep:
    """Best threshold and its scores for one choice of heads."""

    f: float
    p: float
    r: float
    threshold: float

    def to_dict(self) -> Dict[str, float]:
        return {"f": self.f, "p": self.p, "r": self.r, "threshold": self.threshold}


@dataclass
class CalibrationResult:
    """Per-head F1 table and the chosen configuration."""

    n_layers: int
    n_heads: int
    per_head: numpy.ndarray  # (n_layers, n_heads) F1 of each head alone
    per_head_threshold: numpy.ndarray
    per_layer_all_heads: List[Sweep]
    best_layer: int
    best_heads: List[int]
    best: Sweep
    trail: List[Dict[str, Any]] = field(default_factory=list)

    def best_config(self) -> Dict[str, Any]:
        return {
            "layers": [self.best_layer],
            "heads": list(self.best_heads),
            "threshold": round(self.best.threshold, 4),
        }

    def to_dict(self) -> Dict[str, Any]:
        return {
            "n_layers": self.n_layers,
            "n_heads": self.n_heads,
            "per_head_f": numpy.round(self.per_head * 100, 2).tolist(),
            "per_head_threshold": numpy.round(self.per_head_threshold, 4).tolist(),
            "per_layer_all_heads": [s.to_dict() for s in self.per_layer_all_heads],
            "best": {**self.best.to_dict(), **self.best_config()},
            "trail": self.trail,
        }

    def markdown(self) -> str:
        header = "| layer | " + " | ".join(f"h{h}" for h in range(self.n_heads))
        lines = [
            header + " | all heads |",
            "|---" * (self.n_heads + 2) + "|",
        ]
        for layer in range(self.n_layers):
            cells = " | ".join(f"{f * 100:.1f}" for f in self.per_head[layer])
            lines.append(f"| {layer} | {cells} | {self.per_layer_all_heads[layer].f * 100:.1f} |")
        best = self.best
        lines.append("")
        lines.append(
            f"Chosen: layer {self.best_layer}, heads {self.best_heads}, threshold "
            f"{best.threshold:.3f}: P {best.p * 100:.1f}, R {best.r * 100:.1f}, "
            f"F1 {best.f * 100:.1f} (layers and heads counted from 0)."
        )
        return "\n".join(lines) + "\n"

    def write(self, output_dir: Path) -> None:
        """Write ``calibration.json``, ``calibration.md`` and, where matplotlib is
        installed (``pip install spacy-attnseg[paper]``), the heatmap ``head_f1.png``."""
        output_dir.mkdir(parents=True, exist_ok=True)
        srsly.write_json(output_dir / "calibration.json", self.to_dict())
        (output_dir / "calibration.md").write_text(self.markdown(), encoding="utf8")
        if importlib.util.find_spec("matplotlib") is not None:
            plot_head_f1(self.per_head, output_dir / "head_f1.png", chosen=self)


def plot_head_f1(
    per_head: numpy.ndarray, path: Path, *, chosen: Optional[CalibrationResult] = None
) -> Path:
    """Heatmap of each head's boundary F1 (layers as rows, heads as columns)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n_layers, n_heads = per_head.shape
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * n_heads, 1.2 + 0.45 * n_layers))
    image = ax.imshow(per_head * 100, cmap="viridis", aspect="auto", vmin=0)
    for layer in range(n_layers):
        for head in range(n_heads):
            value = per_head[layer, head] * 100
            ax.text(
                head,
                layer,
                f"{value:.0f}",
                ha="center",
                va="center",
                fontsize=7,
                color="white" if value < per_head.max() * 60 else "black",
            )
    if chosen is not None:
        for head in chosen.best_heads:
            ax.add_patch(
                plt.Rectangle(
                    (head - 0.5, chosen.best_layer - 0.5),
                    1,
                    1,
                    fill=False,
                    edgecolor="red",
                    linewidth=2,
                )
            )
    ax.set_xticks(range(n_heads), [str(h) for h in range(n_heads)])
    ax.set_yticks(range(n_layers), [str(layer) for layer in range(n_layers)])
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title("Sentence-boundary F1 of each head alone (red: chosen)")
    fig.colorbar(image, ax=ax, label="boundary F1")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def sweep_threshold(scores: numpy.ndarray, is_gold: numpy.ndarray, n_gold: int) -> Sweep:
    """The threshold on ``scores`` (one per candidate start) that maximises F1.

    The returned threshold lies halfway between the last score kept and the next one, so
    it does not sit on a training value.
    """
    if n_gold == 0 or len(scores) == 0:
        return Sweep(0.0, 0.0, 0.0, 0.5)
    order = numpy.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    tp = numpy.cumsum(is_gold[order])
    k = numpy.arange(1, len(scores) + 1)
    # Only cut where the score changes: equal scores are kept or dropped together.
    last_of_run = numpy.append(sorted_scores[1:] != sorted_scores[:-1], True)
    precision = tp / k
    recall = tp / n_gold
    f1 = numpy.where(tp > 0, 2 * precision * recall / numpy.maximum(precision + recall, 1e-12), 0)
    f1 = numpy.where(last_of_run & (sorted_scores > 0), f1, -1.0)
    best = int(numpy.argmax(f1))
    if f1[best] <= 0:
        return Sweep(0.0, 0.0, 0.0, 0.5)
    below = sorted_scores[best + 1] if best + 1 < len(sorted_scores) else 0.0
    threshold = min(float((sorted_scores[best] + below) / 2), 1.0)
    return Sweep(float(f1[best]), float(precision[best]), float(recall[best]), threshold)


class Calibrator:
    """Scores choices of heads on captured column sums of gold-annotated docs."""

    def __init__(self, docs: List[_DocData], n_layers: int, n_heads: int) -> None:
        self.docs = docs
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.n_gold = int(sum(d.gold.sum() for d in docs))

    def _candidates(self, token_scores: Sequence[numpy.ndarray]) -> Tuple[numpy.ndarray, ...]:
        all_scores, all_gold = [], []
        for doc, scores in zip(self.docs, token_scores, strict=True):
            n = len(doc.targets)
            scores = scores * doc.candidates[:, None]
            best = numpy.zeros((n + 1, scores.shape[1]), dtype="float32")
            numpy.maximum.at(best, doc.targets, scores)
            best[:n][doc.fixed] = ALWAYS
            best = best[1:n]
            all_scores.append(best)
            all_gold.append(doc.gold[1:n])
        return numpy.concatenate(all_scores), numpy.concatenate(all_gold)

    def score_single_heads(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """F1 and threshold of every head alone, ``(n_layers, n_heads)`` each."""
        per_doc = []
        for doc in self.docs:
            normalised = column_scores(doc.colsums)
            per_doc.append(token_values(normalised.transpose(0, 2, 1), doc.align, len(doc.targets)))
        scores, gold = self._candidates(per_doc)
        f1 = numpy.zeros(scores.shape[1])
        thresholds = numpy.zeros(scores.shape[1])
        for column in range(scores.shape[1]):
            sweep = sweep_threshold(scores[:, column], gold, self.n_gold)
            f1[column], thresholds[column] = sweep.f, sweep.threshold
        shape = (self.n_layers, self.n_heads)
        return f1.reshape(shape), thresholds.reshape(shape)

    def score_heads(self, layer: int, heads: Sequence[int]) -> Sweep:
        """Boundary F1 of the summed column sums of ``heads`` of ``layer``."""
        rows = [layer * self.n_heads + head for head in heads]
        per_doc = []
        for doc in self.docs:
            normalised = normalised_window_scores(doc.colsums[:, rows])
            per_doc.append(token_values(normalised[:, :, None], doc.align, len(doc.targets)))
        scores, gold = self._candidates(per_doc)
        return sweep_threshold(scores[:, 0], gold, self.n_gold)


def collect(component: Any, examples: Sequence[Example], *, batch_size: int = 16) -> Calibrator:
    """Run the transformer once over the examples, capturing every head's column sums."""
    trf = component.transformer_pipe()
    n_layers, n_heads = component._model_size()
    capture = component.capture
    capture.request(CALIBRATION_CONSUMER, CaptureRequest(colsum_layers=None, colsum_heads=()))
    all_heads = [(layer, head) for layer in range(n_layers) for head in range(n_heads)]
    docs: List[_DocData] = []
    try:
        predicted = [eg.predicted.copy() for eg in examples]
        annotated = trf.pipe(predicted, batch_size=batch_size)
        progress = tqdm(annotated, total=len(examples), desc="calibration pass", leave=False)
        for eg, doc in zip(examples, progress, strict=True):
            gold_starts = eg.get_aligned_sent_starts()
            gold = numpy.array([bool(s) for s in gold_starts], dtype=bool)
            if len(doc) == 0:
                continue
            gold[0] = False
            colsums = component.window_colsums(doc, all_heads)
            if colsums is None:
                continue
            targets, fixed = decision_targets(doc, paragraph_breaks=component.paragraph_breaks)
            docs.append(
                _DocData(
                    colsums=numpy.asarray(colsums, dtype="float32"),
                    align=doc._.trf_data.align,
                    candidates=candidate_mask(doc, component.candidates),
                    targets=targets,
                    fixed=fixed,
                    gold=gold,
                )
            )
            doc._.trf_data = None
    finally:
        capture.withdraw(CALIBRATION_CONSUMER)
    return Calibrator(docs, n_layers, n_heads)


def search(
    calibrator: Calibrator, *, max_heads: int = 4, min_gain: float = 0.001
) -> CalibrationResult:
    """Single heads, then greedy head sets within each layer, then whole layers."""
    per_head, per_head_threshold = calibrator.score_single_heads()
    n_layers, n_heads = per_head.shape
    whole_layers = [calibrator.score_heads(layer, range(n_heads)) for layer in range(n_layers)]
    trail: List[Dict[str, Any]] = []
    best_layer, best_heads, best = 0, [0], Sweep(-1.0, 0.0, 0.0, 0.5)
    for layer in tqdm(range(n_layers), desc="head search", leave=False):
        heads = [int(numpy.argmax(per_head[layer]))]
        current = calibrator.score_heads(layer, heads)
        while len(heads) < max_heads:
            trials = [
                (calibrator.score_heads(layer, heads + [h]), h)
                for h in range(n_heads)
                if h not in heads
            ]
            sweep, head = max(trials, key=lambda t: t[0].f)
            if sweep.f < current.f + min_gain:
                break
            heads, current = heads + [head], sweep
        trail.append({"layer": layer, "heads": heads, **current.to_dict()})
        options = [(current, heads), (whole_layers[layer], [])]
        for sweep, chosen in options:
            if sweep.f > best.f:
                best_layer, best_heads, best = layer, list(chosen), sweep
    return CalibrationResult(
        n_layers=n_layers,
        n_heads=n_heads,
        per_head=per_head,
        per_head_threshold=per_head_threshold,
        per_layer_all_heads=whole_layers,
        best_layer=best_layer,
        best_heads=best_heads,
        best=best,
        trail=trail,
    )


def calibration_problem(examples: Sequence[Example]) -> str:
    """Why ``examples`` cannot calibrate (none has gold sentences, or none a sentence
    start after its first token: single sentences say nothing of where one ends inside
    a text, and every head would score F1 0); "" where they can."""
    annotated = [eg for eg in examples if eg.reference.has_annotation("SENT_START")]
    if not annotated:
        return f"none of the {len(examples)} examples has sentence annotation"
    if not any(token.is_sent_start for eg in annotated for token in eg.reference[1:]):
        return (
            f"none of the {len(annotated)} examples with gold sentences holds a sentence "
            "start after its first token (each is one sentence)"
        )
    return ""


def calibrate_segmenter(
    component: Any, examples: Iterable[Example], *, max_heads: int = 4
) -> CalibrationResult:
    """Calibrate ``component`` on examples with gold sentence boundaries (E009 where
    they hold no sentence start inside a document), summing at most ``max_heads`` heads
    of a layer (a whole number of at least 1, or E015)."""
    if not is_whole_number(max_heads):
        raise ValueError(Errors.E015.format(key="max_heads", value=max_heads, least=1))
    examples = list(examples)
    problem = calibration_problem(examples)
    if problem:
        raise ValueError(Errors.E009.format(problem=problem))
    annotated = [eg for eg in examples if eg.reference.has_annotation("SENT_START")]
    calibrator = collect(component, annotated)
    return search(calibrator, max_heads=max_heads)


# the thresholds tried for a trained attn_senter, 0.05 .. 1.0 in steps of 0.025:
# ``threshold`` and ``threshold_no_punct`` up to 0.8, ``threshold_unmarked`` all of them
# above ``threshold``
UNMARKED_THRESHOLDS = [round(0.05 + 0.025 * i, 3) for i in range(39)]
SENTER_THRESHOLDS = UNMARKED_THRESHOLDS[:31]


def start_f1(predicted: Sequence[Any], gold: Sequence[numpy.ndarray]) -> float:
    """Boundary F1 (0..1) of predicted sentence starts against gold ones, a boolean (or
    0/1) per token for every doc, micro-averaged; the first token of a doc not counted."""
    tp = n_pred = n_gold = 0
    for pred, g in zip(predicted, gold, strict=True):
        pred = numpy.asarray(pred, dtype=bool)[1:]
        g = numpy.asarray(g, dtype=bool)[1:]
        tp += int((pred & g).sum())
        n_pred += int(pred.sum())
        n_gold += int(g.sum())
    return 2 * tp / max(1, n_pred + n_gold)


def best_threshold(
    decide: Callable[[float], Sequence[Any]],
    gold: Sequence[numpy.ndarray],
    grid: Sequence[float] = SENTER_THRESHOLDS,
) -> Optional[Tuple[float, float]]:
    """The ``grid`` point with the best boundary F1 (the first token of a doc not
    counted), F1 smoothed over each point and its two neighbours, and the F1 (unsmoothed,
    in percent) at it; None without gold starts.

    decide: ``decide(threshold)`` gives the predicted starts (a boolean per token) of
        every doc, as the component decides them (``AttnSenter.decide``).
    gold: the gold starts of every doc, a boolean per token.
    """
    if not gold or not sum(int(g[1:].sum()) for g in gold):
        return None
    scores = [start_f1(decide(threshold), gold) for threshold in grid]
    padded = numpy.pad(numpy.asarray(scores), 1, mode="edge")
    smoothed = (padded[:-2] + padded[1:-1] + padded[2:]) / 3
    best = int(numpy.argmax(smoothed))
    return grid[best], round(100 * float(scores[best]), 1)


TUNED_KEYS = ("threshold", "threshold_no_punct", "threshold_unmarked")


def tune_senter_thresholds(
    model_dir: Path, dev_path: Path, name: str = "attn_senter"
) -> Dict[str, Any]:
    """Choose the thresholds of the ``attn_senter`` named ``name`` in the pipeline saved at
    ``model_dir`` on the gold sentences of ``dev_path`` (a ``.spacy`` file), and save them
    there (the component's ``cfg`` and ``config.cfg``, so that ``spacy.load`` and
    ``nlp.config`` agree), each by ``best_threshold``: ``threshold`` on the documents
    with sentence-final punctuation, ``threshold_no_punct`` on those without
    (``lacks_final_punct``, the rule the component applies), then, on the documents with
    it and ``threshold`` fixed, ``threshold_unmarked`` (``sentences.unmarked_starts``)
    from ``UNMARKED_THRESHOLDS`` above ``threshold``, or None (the rule off) where
    ``threshold`` itself scores best. Returns the chosen values, the
    number of documents of each kind and the dev F1 at each."""
    import spacy
    from spacy.training import Corpus

    from .features import lacks_final_punct

    nlp = spacy.load(model_dir)
    senter: Any = nlp.get_pipe(name)
    examples = list(Corpus(str(dev_path))(nlp))
    trf: Any = nlp.get_pipe(senter.cfg["transformer"])
    docs = list(trf.pipe([eg.predicted for eg in examples]))
    probs = senter.predict_proba(docs)
    gold = [
        numpy.array([tag == 1 for tag in eg.get_aligned("SENT_START")], dtype=bool)
        for eg in examples
    ]
    groups: Dict[bool, List[int]] = {False: [], True: []}
    for i, doc in enumerate(docs):
        groups[lacks_final_punct(doc)].append(i)
    chosen: Dict[str, Any] = {
        "n_docs": {"punct": len(groups[False]), "no_punct": len(groups[True])},
        "dev_f1": {},
    }
    senter.cfg["threshold_unmarked"] = None
    for key, unpunct in (("threshold", False), ("threshold_no_punct", True)):
        group = groups[unpunct]

        def decide(threshold: float, group: List[int] = group) -> List[Any]:
            return [senter.decide(docs[i], probs[i], threshold) for i in group]

        best = best_threshold(decide, [gold[i] for i in group])
        chosen[key] = None if best is None else best[0]
        if best is not None:
            senter.cfg[key] = best[0]
            chosen["dev_f1"]["no_punct" if unpunct else "punct"] = best[1]
    punct = groups[False]

    def decide_unmarked(value: float) -> List[Any]:
        senter.cfg["threshold_unmarked"] = value
        return [senter.decide(docs[i], probs[i]) for i in punct]

    # the first point, threshold itself, is the rule off
    grid = [senter.threshold] + [t for t in UNMARKED_THRESHOLDS if t > senter.threshold]
    best = best_threshold(decide_unmarked, [gold[i] for i in punct], grid)
    chosen["threshold_unmarked"] = (
        best[0] if best is not None and best[0] != senter.threshold else None
    )
    senter.cfg["threshold_unmarked"] = chosen["threshold_unmarked"]
    if best is not None:
        chosen["dev_f1"]["punct_unmarked"] = best[1]
    # None: no documents of that kind (the value stays), or the unmarked-start rule off
    senter.update_settings(
        {
            key: chosen[key]
            for key in TUNED_KEYS
            if chosen[key] is not None or key == "threshold_unmarked"
        }
    )
    nlp.to_disk(model_dir)
    return chosen
