"""Scored span groups: how the components write sentences and segments to ``doc.spans``.

Every span carries its score in its label (``"SEG 1.42"``, ``"SENT 0.98"``), so spaCy's
own ``displacy.render(doc, style="span", options={"spans_key": key})`` shows them as
they are, and the group's ``attrs["scores"]`` holds the scores as floats, in span order.
"""

from typing import Iterable, List, Tuple

from spacy.tokens import Doc, Span

from .sentences import sentence_end_scores

#: Label prefix of a topic segment (``attn_segmenter``) and of a Fig. 5 segment
#: (``attn_head_pairs``).
SEGMENT = "SEG"
#: Label prefix of a sentence.
SENTENCE = "SENT"


def score_label(kind: str, score: float) -> str:
    """The label of a span of ``kind`` with ``score``: ``"SEG 1.42"``."""
    return f"{kind} {score:.2f}"


def set_scored_spans(
    doc: Doc, key: str, spans: Iterable[Tuple[int, int, float]], kind: str
) -> None:
    """Write ``(start, end, score)`` token spans to ``doc.spans[key]``, labelled with
    :func:`score_label` and the scores in ``attrs["scores"]``."""
    spans = list(spans)
    doc.spans[key] = [
        Span(doc, start, end, label=score_label(kind, score)) for start, end, score in spans
    ]
    doc.spans[key].attrs["scores"] = [float(score) for _, _, score in spans]


def set_sentence_spans(doc: Doc, key: str) -> None:
    """Write ``doc.sents`` to ``doc.spans[key]``, each labelled with how sure it ends
    where it does (:func:`sentences.sentence_end_scores`)."""
    if not len(doc):
        set_scored_spans(doc, key, [], SENTENCE)
        return
    scores = sentence_end_scores(doc)
    bounds: List[Tuple[int, int, float]] = [
        (sent.start, sent.end, round(score, 6))
        for sent, score in zip(doc.sents, scores, strict=True)
    ]
    set_scored_spans(doc, key, bounds, SENTENCE)


def span_colors(doc: Doc, key: str, palette: Tuple[str, ...] = ("#c6dbef", "#c7e9c0")) -> dict:
    """displaCy's ``colors`` option giving consecutive spans of ``doc.spans[key]``
    alternating colours: ``displacy.render(doc, style="span", options={"spans_key":
    key, "colors": span_colors(doc, key)})``. (Spans with the same label share one; a
    Doc without the group gets none, as displaCy draws no spans for it.)"""
    spans = doc.spans.get(key, ())
    return {span.label_: palette[i % len(palette)] for i, span in enumerate(spans)}
