"""What the command line writes for one processed Doc, as JSON-able records.

One place for the records of ``segment --format jsonl`` (:func:`sentence_record`) and
``chunk`` (:func:`chunk_records`), whether the Docs come from ``nlp.pipe`` in one
process or from the workers of :mod:`spacy_attnseg.scale`.
"""

from typing import Any, Dict, List

from spacy.language import Language
from spacy.tokens import Doc

from .sentences import sentence_end_scores
from .windows import doc_wordpiece_counts

SEGMENTER = "attn_segmenter"


def segments_key(nlp: Language) -> str:
    """The ``doc.spans`` key of ``nlp``'s topic segments ("" without ``attn_segmenter``
    or with its segments off)."""
    if SEGMENTER not in nlp.pipe_names:
        return ""
    segmenter: Any = nlp.get_pipe(SEGMENTER)
    return str(segmenter.cfg.get("spans_key") or "")


def sentence_record(doc: Doc, key: str) -> Dict[str, Any]:
    """``{"text", "sents", "segments"}``: the sentences and, with ``key``, the topic
    segments of ``doc``, each ``{"start", "end", "score"}`` in character offsets."""
    sents = (
        [
            {"start": sent.start_char, "end": sent.end_char, "score": round(score, 4)}
            for sent, score in zip(doc.sents, sentence_end_scores(doc), strict=True)
        ]
        if len(doc)
        else []
    )
    record: Dict[str, Any] = {"text": doc.text, "sents": sents}
    group = doc.spans.get(key) if key else None
    if group is not None:
        record["segments"] = [
            {"start": span.start_char, "end": span.end_char, "score": round(float(score), 4)}
            for span, score in zip(group, group.attrs.get("scores", []), strict=True)
        ]
    return record


def chunk_records(doc: Doc, number: int, key: str) -> List[Dict[str, Any]]:
    """One record per topic chunk of ``doc`` (``doc.spans[key]``): ``{"doc", "chunk",
    "text", "start", "end", "n_tokens", "n_sents", "score"}``; a chunk runs to the next
    one's start, so the chunks' texts joined give the document's text back."""
    group = doc.spans.get(key)
    spans = list(group) if group is not None else []
    scores = group.attrs.get("scores", []) if group is not None else []
    sizes = doc_wordpiece_counts(doc)
    records = []
    for i, (span, score) in enumerate(zip(spans, scores, strict=True)):
        end_char = spans[i + 1].start_char if i + 1 < len(spans) else len(doc.text)
        records.append(
            {
                "doc": number,
                "chunk": i,
                "text": doc.text[span.start_char : end_char],
                "start": span.start_char,
                "end": end_char,
                "n_tokens": int(sizes[span.start : span.end].sum()),
                "n_sents": sum(1 for t in span if t.is_sent_start) or 1,
                "score": score,
            }
        )
    return records
