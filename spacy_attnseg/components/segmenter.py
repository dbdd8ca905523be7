"""The ``attn_segmenter`` factory and component: sentence boundaries from attention."""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc, Token
from spacy.training import Example, validate_get_examples

from ..capture import (
    COLSUM_HEADS,
    COLSUMS,
    CaptureRequest,
    check_capturable,
    check_layers_heads,
    column_sums,
    keep_mask,
    special_ids,
)
from ..errors import Errors
from ..families import n_layers_heads
from ..sentences import (
    ANY,
    candidate_mask,
    decide_starts,
    normalised_window_scores,
    validate_candidates,
)
from ..windows import token_values
from .base import AttentionPipe, find_transformer

PAPER = "paper"


def install_extensions() -> None:
    """Doc and Token extensions of the segmenter; safe to call many times."""
    if not Doc.has_extension("separator_scores"):
        Doc.set_extension("separator_scores", default=None)
    if not Token.has_extension("separator_score"):
        Token.set_extension("separator_score", getter=_token_separator_score)


def _token_separator_score(token: Token) -> Optional[float]:
    scores = token.doc._.separator_scores
    return None if scores is None else scores[token.i]


@Language.factory(
    "attn_segmenter",
    requires=["doc._.trf_data"],
    assigns=["token.is_sent_start", "doc.sents", "doc._.separator_scores"],
    default_config={
        "transformer": "transformer",
        "layers": [-1],
        "heads": [],
        "threshold": 0.5,
        "candidates": "punct",
        "preset": "",
        "paragraph_breaks": True,
        "overwrite": False,
        "scorer": {"@scorers": "spacy.senter_scorer.v1"},
    },
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_attn_segmenter(
    nlp: Language,
    name: str,
    transformer: str,
    layers: List[int],
    heads: List[int],
    threshold: float,
    candidates: Union[str, List[str]],
    preset: str,
    paragraph_breaks: bool,
    overwrite: bool,
    scorer: Optional[Callable],
) -> "AttnSegmenter":
    """Set sentence boundaries where the transformer's attention forms columns.

    transformer (str): name of the upstream spacy-transformers component.
    layers (List[int]): layers whose heads are summed; negative counts from the end.
    heads (List[int]): heads of those layers; empty for all heads.
    threshold (float): a token whose normalised column score reaches it is a separator.
    candidates (Union[str, List[str]]): which tokens may be separators: "any",
        "punct" (punctuation tokens), or a list of token texts.
    preset (str): "paper" for the paper's recipe (final layer, all heads, any token),
        overriding layers, heads and candidates; "" to use them.
    paragraph_breaks (bool): a blank line (two or more line breaks) ends a sentence,
        whatever the attention says.
    overwrite (bool): replace sentence boundaries already set by earlier components.
    """
    return AttnSegmenter(
        nlp,
        name,
        transformer=transformer,
        layers=layers,
        heads=heads,
        threshold=threshold,
        candidates=candidates,
        preset=preset,
        paragraph_breaks=paragraph_breaks,
        overwrite=overwrite,
        scorer=scorer,
    )


class AttnSegmenter(AttentionPipe):
    """Sentence boundaries from the column sums of chosen attention heads.

    Reads the numbers that ``AttentionCapture`` hooks computed during the upstream
    transformer's own pass (or its ``attentions`` output when ``output_attentions`` is on),
    and never runs the model itself.
    """

    def __init__(
        self,
        nlp: Language,
        name: str = "attn_segmenter",
        *,
        transformer: str = "transformer",
        layers: Sequence[int] = (-1,),
        heads: Sequence[int] = (),
        threshold: float = 0.5,
        candidates: Union[str, Sequence[str]] = "punct",
        preset: str = "",
        paragraph_breaks: bool = True,
        overwrite: bool = False,
        scorer: Optional[Callable] = None,
    ) -> None:
        install_extensions()
        self.name = name
        self.vocab = nlp.vocab
        self.scorer = scorer
        if preset not in ("", PAPER):
            raise ValueError(Errors.E012.format(value=preset))
        if not 0.0 < threshold <= 1.0:
            raise ValueError(Errors.E010.format(value=threshold))
        self.cfg: Dict[str, Any] = {
            "transformer": transformer,
            "layers": list(layers),
            "heads": list(heads),
            "threshold": float(threshold),
            "candidates": validate_candidates(candidates),
            "preset": preset,
            "paragraph_breaks": bool(paragraph_breaks),
            "overwrite": overwrite,
        }
        self.config_cfg = dict(self.cfg)
        self._trf = find_transformer(nlp, transformer, name)
        self.bind_pipeline(nlp)
        self.install_capture()

    # -- configuration ----------------------------------------------------------------

    @property
    def layers(self) -> List[int]:
        return [-1] if self.cfg["preset"] == PAPER else list(self.cfg["layers"])

    @property
    def heads(self) -> List[int]:
        return [] if self.cfg["preset"] == PAPER else list(self.cfg["heads"])

    @property
    def candidates(self) -> Union[str, List[str]]:
        return ANY if self.cfg["preset"] == PAPER else self.cfg["candidates"]

    @property
    def threshold(self) -> float:
        return round(float(self.cfg["threshold"]), 6)

    @property
    def paragraph_breaks(self) -> bool:
        return bool(self.cfg.get("paragraph_breaks", True))

    def selected_heads(self) -> List[tuple]:
        """The (layer, head) pairs summed, layers counted from 0."""
        n_layers, n_heads = self._model_size()
        heads = self.heads or list(range(n_heads))
        return check_layers_heads(
            [(layer, head) for layer in self.layers for head in heads], n_layers, n_heads
        )

    def _model_size(self) -> tuple:
        model = self._trf.model
        if not model.attrs.get("has_transformer"):
            raise ValueError(Errors.E007)
        return n_layers_heads(model.transformer)

    def capture_request(self) -> CaptureRequest:
        return CaptureRequest(colsum_layers=tuple(self.layers), colsum_heads=tuple(self.heads))

    def install_capture(self) -> None:
        """Register what this component reads with the transformer's capture hooks.

        The hooks are (re)installed on the Hugging Face module before each pass of the
        transformer; when the model is already loaded, layers and heads are checked now,
        and so is whether the hooks can capture its architecture (E003).
        """
        request = self.capture_request()
        self.register()
        if self._trf.model.attrs.get("has_transformer"):
            check_capturable(self._trf.model.transformer, request.resolve(*self._model_size()))

    # -- processing -------------------------------------------------------------------

    def predict(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        """Per Doc, the separator score of every token (0 where it may not be one)."""
        install_extensions()
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [numpy.zeros((len(doc),), dtype="float32") for doc in docs]
        heads = self.selected_heads()
        return [self.token_scores(doc, heads) for doc in docs]

    def token_scores(self, doc: Doc, heads: Sequence[tuple]) -> numpy.ndarray:
        """Normalised separator scores of the tokens of ``doc`` from the chosen heads."""
        if len(doc) == 0:
            return numpy.zeros((0,), dtype="float32")
        colsums = self.window_colsums(doc, heads)
        if colsums is None:
            return numpy.zeros((len(doc),), dtype="float32")
        windows = normalised_window_scores(colsums)
        scores = token_values(windows[:, :, None], doc._.trf_data.align, len(doc))[:, 0]
        return scores * candidate_mask(doc, self.candidates)

    def window_colsums(self, doc: Doc, heads: Sequence[tuple]) -> Optional[Any]:
        """Raw column sums ``(n_windows, len(heads), L)`` of ``heads`` for ``doc``, on the
        arrays' device; None when the doc has no wordpieces."""
        trf_data = getattr(doc._, "trf_data", None)
        if trf_data is None:
            raise ValueError(
                Errors.E001.format(
                    name=self.cfg["transformer"], component=self.name, pipe_names="?"
                )
            )
        if trf_data.wordpieces.input_ids.size == 0 or len(trf_data.align.dataXd) == 0:
            return None
        output = trf_data.model_output
        if COLSUMS in output:
            index = {
                (int(layer), int(head)): i
                for i, (layer, head) in enumerate(output[COLSUM_HEADS][0])
            }
            if all(head in index for head in heads):
                return output[COLSUMS][:, [index[head] for head in heads]]
        attentions = output.get("attentions")
        if attentions is not None:
            wordpieces = trf_data.wordpieces
            special = special_ids(self._trf.model.tokenizer)
            keep = keep_mask(wordpieces.input_ids, wordpieces.attention_mask, special)
            rows = []
            for layer in sorted({layer for layer, _ in heads}):
                probs = attentions[layer][:, [h for (l_, h) in heads if l_ == layer]]
                rows.append(column_sums(probs, keep))
            return rows[0] if len(rows) == 1 else _concat(rows)
        raise ValueError(Errors.E006.format(component=self.name))

    def set_annotations(self, docs: Iterable[Doc], scores: Sequence[numpy.ndarray]) -> None:
        """Mark separators (score >= threshold) and start a sentence after each run (and
        after each blank line, with ``paragraph_breaks``)."""
        install_extensions()
        threshold = self.threshold
        overwrite = self.cfg["overwrite"]
        paragraph_breaks = self.paragraph_breaks
        for doc, doc_scores in zip(docs, scores, strict=True):
            doc._.separator_scores = [round(float(s), 6) for s in doc_scores]
            if len(doc) == 0:
                continue
            starts = decide_starts(doc, doc_scores, threshold, paragraph_breaks=paragraph_breaks)
            for token, start in zip(doc, starts, strict=True):
                if overwrite or token.is_sent_start is None:
                    token.is_sent_start = bool(start)

    # -- initialization and calibration -------------------------------------------------

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        calibrate: bool = True,
        max_heads: int = 4,
    ) -> None:
        """Check the configuration against the model and, when the examples carry gold
        sentence boundaries and ``calibrate`` is set, choose layers, heads and threshold
        by boundary F1 (see ``spacy_attnseg.calibration``)."""
        validate_get_examples(get_examples, "AttnSegmenter.initialize")
        if nlp is not None:
            self._trf = find_transformer(nlp, self.cfg["transformer"], self.name)
            self.bind_pipeline(nlp)
        self.install_capture()
        examples = list(get_examples())
        if not calibrate or not examples:
            return
        if not any(eg.reference.has_annotation("SENT_START") for eg in examples):
            return
        from ..calibration import calibrate_segmenter

        result = calibrate_segmenter(self, examples, max_heads=max_heads)
        self.update_settings({**result.best_config(), "preset": ""})

    def transformer_pipe(self) -> Any:
        return self._trf


def _concat(arrays: List[Any]) -> Any:
    from thinc.api import get_array_module

    return get_array_module(arrays[0]).concatenate(arrays, axis=1)
