"""The ``attn_head_pairs`` factory: high-similarity token pairs, anchors and segments.

For every requested layer and head, the context similarity matrix ``H @ H.T`` of the
head's output vectors (captured from the transformer's own pass) is thresholded as in
the paper's section 3; the kept pairs go to ``doc._.head_pairs`` (and, as views,
``span._.head_pairs``, ``doc._.head_anchors``, ``span._.head_anchors``). The paper's
Fig. 5 semantic segments go to ``doc.spans[spans_key]``, their scores to
``doc.spans[spans_key].attrs["scores"]``.
"""

import math
from typing import Any, Dict, Iterable, List, Optional, Sequence

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from thinc.api import get_array_module, to_numpy

from .. import pairs as pairs_module
from ..capture import (
    CONTEXT,
    CONTEXT_LAYERS,
    CaptureRequest,
    check_capturable,
    check_layers_heads,
    keep_mask,
    special_ids,
)
from ..errors import Errors, check_numbers, check_threshold
from ..families import n_layers_heads
from ..pairs import HeadPairs
from ..segments import semantic_segments
from ..similarity import layer_token_pairs
from ..spans import SEGMENT, set_scored_spans
from ..windows import wordpiece_tokens
from .base import AttentionPipe


@Language.factory(
    "attn_head_pairs",
    requires=["doc._.trf_data"],
    assigns=["doc._.head_pairs", "doc.spans"],
    default_config={
        "transformer": "transformer",
        "layers": [-1],
        "heads": [],
        "threshold": 0.3,
        "include_special": False,
        "spans_key": "fig5_segments",
        "merge_threshold": 0.75,
    },
)
def make_attn_head_pairs(
    nlp: Language,
    name: str,
    transformer: str,
    layers: List[int],
    heads: List[int],
    threshold: float,
    include_special: bool,
    spans_key: str,
    merge_threshold: float,
) -> "AttnHeadPairs":
    """High-similarity token pairs per head, anchor tokens, and semantic segments.

    transformer (str): name of the upstream spacy-transformers component.
    layers (List[int]): layers to analyse (negative counts from the end; empty: all).
    heads (List[int]): heads of those layers (empty: all).
    threshold (float): keep pairs whose max-normalised similarity reaches it (paper: 0.3).
    include_special (bool): let [CLS]/[SEP]-like tokens take part in the normalisation.
    spans_key (str): ``doc.spans`` key for the semantic segments ("" to skip them).
    merge_threshold (float): merge consecutive blocks whose mutual similarity reaches
        this fraction of their internal similarity (see ``segments.semantic_segments``).
    """
    check_numbers(f"'{name}'", make_attn_head_pairs, locals())
    return AttnHeadPairs(
        nlp,
        name,
        transformer=transformer,
        layers=layers,
        heads=heads,
        threshold=threshold,
        include_special=include_special,
        spans_key=spans_key,
        merge_threshold=merge_threshold,
    )


class AttnHeadPairs(AttentionPipe):
    """Head analysis of the paper's sections 2-3 on every Doc."""

    def __init__(
        self,
        nlp: Language,
        name: str = "attn_head_pairs",
        *,
        transformer: str = "transformer",
        layers: Sequence[int] = (-1,),
        heads: Sequence[int] = (),
        threshold: float = 0.3,
        include_special: bool = False,
        spans_key: str = "fig5_segments",
        merge_threshold: float = 0.75,
    ) -> None:
        pairs_module.install_extensions()
        check_threshold(threshold)
        if not (math.isfinite(merge_threshold) and merge_threshold >= 0):
            raise ValueError(Errors.E021.format(value=merge_threshold))
        self.name = name
        self.vocab = nlp.vocab
        self.cfg: Dict[str, Any] = {
            "transformer": transformer,
            "layers": list(layers),
            "heads": list(heads),
            "threshold": float(threshold),
            "include_special": include_special,
            "spans_key": spans_key,
            "merge_threshold": float(merge_threshold),
        }
        self.config_cfg = dict(self.cfg)
        self.attach(nlp)
        self.install_capture()

    def capture_request(self) -> CaptureRequest:
        layers = tuple(self.cfg["layers"]) or None
        # the similarity matrices are computed where the head outputs are (a GPU's)
        return CaptureRequest(context_layers=layers, on_device=True)

    def install_capture(self) -> None:
        """Ask the transformer's capture hooks for the head outputs of the chosen layers."""
        request = self.capture_request()
        self.register()
        model = self._trf.model
        if model.attrs.get("has_transformer"):
            n_layers, n_heads = n_layers_heads(model.transformer)
            check_capturable(model.transformer, request.resolve(n_layers, n_heads))
            check_layers_heads([(0, head) for head in self.cfg["heads"]], n_layers, n_heads)

    def predict(self, docs: Iterable[Doc]) -> List[Dict[str, Any]]:
        """Per Doc: its ``HeadPairs`` and semantic segments; the captured head outputs
        are released from ``doc._.trf_data`` once used."""
        return [self._analyse(doc) for doc in docs]

    def _analyse(self, doc: Doc) -> Dict[str, Any]:
        empty: Dict[str, Any] = {"pairs": HeadPairs.empty(), "segments": []}
        trf_data = getattr(doc._, "trf_data", None)
        if len(doc) == 0:
            return empty
        if trf_data is None:
            raise self.no_transformer_output()
        output = trf_data.model_output
        if trf_data.wordpieces.input_ids.size == 0 or len(trf_data.align.dataXd) == 0:
            empty["segments"] = [(0, len(doc), 0.0)]
            return empty
        if CONTEXT not in output:
            raise ValueError(Errors.E006.format(component=self.name))
        model = self._trf.model
        n_layers, n_heads = n_layers_heads(model.transformer)
        contexts = output[CONTEXT]
        captured = [int(layer) for layer in to_numpy(output[CONTEXT_LAYERS][0]).tolist()]
        self.release_if_last(doc, (CONTEXT, CONTEXT_LAYERS))
        wordpieces = trf_data.wordpieces
        if self.cfg["include_special"]:
            wp_mask = wordpieces.attention_mask > 0
        else:
            special = special_ids(model.tokenizer)
            wp_mask = keep_mask(wordpieces.input_ids, wordpieces.attention_mask, special)
        n_win, length = wordpieces.input_ids.shape
        wp2tok = wordpiece_tokens(trf_data.align, n_win, length)
        wanted = self.capture_request().resolve(n_layers, n_heads).context_layers
        heads = self.cfg["heads"] or None
        found: List[HeadPairs] = []
        last = max(wanted)
        segment_matrix = None
        for layer, context in zip(captured, contexts, strict=True):
            if layer not in wanted:
                continue
            xp = get_array_module(context)
            layer_pairs, similarity = layer_token_pairs(
                context,
                xp.asarray(wp_mask),
                wp2tok,
                n_heads=n_heads,
                layer=layer,
                heads=heads,
                threshold=self.cfg["threshold"],
                n_tokens=len(doc),
                with_segment_similarity=layer == last and bool(self.cfg["spans_key"]),
            )
            found.append(layer_pairs)
            if similarity is not None:
                segment_matrix = similarity
        segments: List[tuple] = []
        if segment_matrix is not None:
            segments = semantic_segments(
                sentence_ends(doc), segment_matrix, merge_threshold=self.cfg["merge_threshold"]
            )
        return {"pairs": HeadPairs.concat(found), "segments": segments}

    def set_annotations(self, docs: Iterable[Doc], results: Sequence[Dict[str, Any]]) -> None:
        pairs_module.install_extensions()
        key = self.cfg["spans_key"]
        for doc, result in zip(docs, results, strict=True):
            doc._.head_pairs = result["pairs"]
            if key:
                segments = [(a, b, round(float(s), 6)) for a, b, s in result["segments"]]
                set_scored_spans(doc, key, segments, SEGMENT)

    def initialize(self, get_examples: Any = None, *, nlp: Optional[Language] = None) -> None:
        if get_examples is not None:
            validate_get_examples(get_examples, "AttnHeadPairs.initialize")
        if nlp is not None:
            self.attach(nlp)
        self.install_capture()

    def update(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, float]:
        return {}


def sentence_ends(doc: Doc) -> numpy.ndarray:
    """True for the last token of each sentence when the doc has sentence boundaries;
    otherwise nothing is a separator and the doc is one block."""
    ends = numpy.zeros(len(doc), dtype=bool)
    if len(doc) and doc.has_annotation("SENT_START"):
        for sent in doc.sents:
            ends[sent.end - 1] = True
    return ends
