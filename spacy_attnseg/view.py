"""A head view of one processed Doc: one self-contained HTML page (no network).

The page shows a layer x head grid; choosing a head draws its high-similarity pairs
(``doc._.head_pairs``) as links between the tokens and marks its anchor token
(``doc._.head_anchors``); the Doc's semantic segments are boxes labelled with their
boundary scores and every sentence end carries its score. Everything comes from what
the components already wrote to the Doc: nothing runs the model again.
"""

import html
import json
import re
from importlib.resources import files
from typing import Any, Dict, List, Optional

import numpy
from spacy.tokens import Doc

from .pairs import HeadPairs, anchors, get_doc_pairs
from .sentences import sentence_end_scores

#: Most pairs drawn for one head (the highest scores); the grid counts all of them.
MAX_PAIRS = 400


def head_view_data(
    doc: Doc,
    *,
    n_layers: Optional[int] = None,
    n_heads: Optional[int] = None,
    spans_key: str = "attn_segments",
    max_pairs: int = MAX_PAIRS,
    threshold: Optional[float] = None,
    model: str = "",
) -> Dict[str, Any]:
    """What the page draws, as JSON-able data.

    ``heads`` maps ``"layer-head"`` to ``{"n_pairs", "pairs", "anchor"}`` for every head
    with pairs, ``pairs`` being at most ``max_pairs`` rows ``[i, j, score]`` with the
    highest scores (ties: the earlier pair), in (i, j) order. The grid has ``n_layers``
    x ``n_heads`` cells (default: just enough for the heads with pairs).
    """
    pairs = get_doc_pairs(doc)
    heads: Dict[str, Any] = {}
    by_head = {(a.layer, a.head): a for a in anchors(pairs, doc)}
    for layer, head in pairs.heads():
        sel = pairs.select(layer=layer, head=head)
        heads[f"{layer}-{head}"] = {
            "n_pairs": len(sel),
            "pairs": _top_pairs(sel, max_pairs),
            "anchor": by_head[(layer, head)].to_dict() if (layer, head) in by_head else None,
        }
    found = pairs.heads()
    group = doc.spans.get(spans_key) if spans_key else None
    segments: List[List[Any]] = []
    if group is not None:
        scores = group.attrs.get("scores", [0.0] * len(group))
        segments = [
            [span.start, span.end, round(float(s), 4)]
            for span, s in zip(group, scores, strict=True)
        ]
    sents: List[List[Any]] = []
    if len(doc) and doc.has_annotation("SENT_START"):
        sents = [
            [s.start, s.end, round(score, 4)]
            for s, score in zip(doc.sents, sentence_end_scores(doc), strict=True)
        ]
    return {
        "tokens": [[t.text, t.whitespace_, t.lower_] for t in doc],
        "sents": sents,
        "segments": segments,
        "n_layers": n_layers
        if n_layers is not None
        else 1 + max((layer for layer, _ in found), default=-1),
        "n_heads": n_heads if n_heads is not None else 1 + max((h for _, h in found), default=-1),
        "heads": heads,
        "threshold": threshold,
        "model": model,
    }


def _top_pairs(sel: HeadPairs, max_pairs: int) -> List[List[Any]]:
    """The ``max_pairs`` rows of one head with the highest scores, in (i, j) order."""
    keep = numpy.arange(len(sel))
    if len(sel) > max_pairs:
        # stable: among equal scores the earlier (i, j) row stays
        keep = numpy.sort(numpy.argsort(-sel.score, kind="stable")[:max_pairs])
    return [[int(sel.i[k]), int(sel.j[k]), round(float(sel.score[k]), 4)] for k in keep.tolist()]


def head_view_html(doc: Doc, *, title: str = "spacy-attnseg head view", **kwargs: Any) -> str:
    """The page for ``doc`` (keyword arguments as :func:`head_view_data`)."""
    data = head_view_data(doc, **kwargs)
    # "<" escaped so that no text of the Doc can close the script element
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    fills = {"TITLE": html.escape(title), "DATA": payload}
    template = files("spacy_attnseg").joinpath("data/head_view.html").read_text("utf8")
    # one pass over the template: what is filled in is never searched again
    return re.sub(r"__(TITLE|DATA)__", lambda m: fills[m.group(1)], template)
