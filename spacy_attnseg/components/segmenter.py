"""The ``attn_segmenter`` factory and component: sentence boundaries from attention."""

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union, cast

import numpy
import torch
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from thinc.api import to_numpy
from thinc.types import Ints2d

from .. import topics
from ..capture import (
    COLSUM_HEADS,
    COLSUMS,
    HIDDEN,
    HIDDEN_LAYERS,
    LOCAL,
    LOCAL_LAYERS,
    CaptureRequest,
    check_capturable,
    check_layers_heads,
    column_sums,
    keep_mask,
    special_ids,
)
from ..errors import Errors, Warnings, check_numbers, check_threshold, is_whole_number
from ..families import get_family, n_layers_heads
from ..loading import calibrated_settings
from ..local import local_means
from ..markup import LINE_BREAK, cue_lines, quoted_lines, says_nothing
from ..scoring import segmenter_score
from ..sentences import (
    ANY,
    CLOSING,
    MARKED_HEADING,
    candidate_mask,
    closing_sentences,
    decide_starts,
    heading_sentences,
    heads_prose,
    lead_ins,
    normalised_window_scores,
    paragraph_starts,
    salutations,
    sentence_paragraphs,
    sentence_texts,
    set_heading_paths,
    starts_line,
    turns_leading_in,
    validate_candidates,
)
from ..spans import SEGMENT, set_scored_spans, set_sentence_spans
from ..windows import WordpieceCounts, aligned_rows, doc_wordpiece_counts, token_values
from .base import AttentionPipe, install_score_extensions

PAPER = "paper"
#: The captured arrays that topic segments read (released by their last reader).
CAPTURED = (HIDDEN, HIDDEN_LAYERS, LOCAL, LOCAL_LAYERS)
SPANS_KEY = "attn_segments"
SENTS_KEY = "attn_sents"
# The sentence decision for a model without calibrated settings: the paper's final layer
# and all its heads, on punctuation.
UNCALIBRATED: Dict[str, Any] = {
    "layers": [-1],
    "heads": [],
    "threshold": 0.5,
    "candidates": "punct",
}


def install_extensions() -> None:
    """``doc._.separator_scores`` and ``token._.separator_score``; safe to call many
    times."""
    install_score_extensions("separator_scores", "separator_score")


@Language.factory(
    "attn_segmenter",
    requires=["doc._.trf_data"],
    assigns=["token.is_sent_start", "doc.sents", "doc._.separator_scores", "doc.spans"],
    default_config={
        "transformer": "transformer",
        "layers": None,
        "heads": None,
        "threshold": None,
        "candidates": None,
        "preset": "",
        "paragraph_breaks": True,
        "overwrite": False,
        "spans_key": SPANS_KEY,
        "sents_key": SENTS_KEY,
        "sentences": True,
        "segment_vectors": "local",
        "segment_layers": 4,
        "segment_method": "partition",
        "segment_penalty": topics.PENALTY,
        "paragraph_penalty": topics.PARAGRAPH_PENALTY,
        "segment_drift": topics.DRIFT,
        "segment_short_text": topics.SHORT_TEXT,
        "segment_pieces_ratio": topics.PIECES_RATIO,
        "segment_scale": "noise",
        "segment_standardise": True,
        "segment_paragraphs": True,
        "segment_headings": True,
        "segment_at_headings": True,
        "segment_window": 2,
        "segment_cutoff": 0.5,
        "min_sents": 2,
        "max_sents": 0,
        "max_tokens": 0,
        "n_segments": 0,
        "long_sentence_tokens": topics.LONG_SENTENCE,
        "piece_tokens": topics.PIECE,
        "scorer": {"@scorers": "spacy-attnseg.segmenter_scorer.v1"},
    },
    default_score_weights={
        "sents_f": 1.0,
        "sents_p": 0.0,
        "sents_r": 0.0,
        "segments_pk": None,
        "segments_windowdiff": None,
    },
)
def make_attn_segmenter(
    nlp: Language,
    name: str,
    transformer: str,
    layers: Optional[List[int]],
    heads: Optional[List[int]],
    threshold: Optional[float],
    candidates: Optional[Union[str, List[str]]],
    preset: str,
    paragraph_breaks: bool,
    overwrite: bool,
    spans_key: str,
    sents_key: str,
    sentences: bool,
    segment_vectors: str,
    segment_layers: int,
    segment_method: str,
    segment_penalty: float,
    paragraph_penalty: Optional[float],
    segment_drift: float,
    segment_short_text: int,
    segment_pieces_ratio: Optional[float],
    segment_scale: str,
    segment_standardise: bool,
    segment_paragraphs: bool,
    segment_headings: bool,
    segment_at_headings: bool,
    segment_window: int,
    segment_cutoff: float,
    min_sents: int,
    max_sents: int,
    max_tokens: int,
    n_segments: int,
    long_sentence_tokens: int,
    piece_tokens: int,
    scorer: Optional[Callable],
) -> "AttnSegmenter":
    """Set sentence boundaries where the transformer's attention forms columns.

    transformer (str): name of the upstream spacy-transformers component.
    layers (Optional[List[int]]): layers whose heads are summed; negative counts from
        the end.
    heads (Optional[List[int]]): heads of those layers; empty for all heads.
    threshold (Optional[float]): a token whose normalised column score reaches it is a
        separator.
    candidates (Optional[Union[str, List[str]]]): which tokens may be separators: "any",
        "punct" (punctuation tokens), or a list of token texts.
        Left null (the defaults), layers, heads, threshold and candidates are the
        calibrated ones of a known model (``loading.calibrated_settings``: the
        embedded MiniLM); for any other model the paper's final layer, all heads,
        threshold 0.5 and punctuation, with a warning (W002) to calibrate.
    preset (str): "paper" for the paper's recipe (final layer, all heads, any token),
        overriding layers, heads and candidates; "" to use them.
    paragraph_breaks (bool): a paragraph break (a blank line, or the line break before
        a paragraph's indented first line or below its short last line in hard-wrapped
        text: ``sentences.paragraph_break_tokens``) ends a
        sentence, whatever the attention says, and so does every line break of a text with one
        sentence per line (``sentences.lines_end_sentences``).
    overwrite (bool): replace sentence boundaries already set by earlier components.
    sentences (bool): set sentence boundaries and separator scores; false leaves the
        sentences to an earlier component (``attn_senter`` in the default pipeline) and
        only adds topic segments over them: no column sums are captured and
        ``doc._.separator_scores`` stays None.
    spans_key (str): ``doc.spans`` key of the semantic (topic) segments, "" for none.
        Segments are runs of the Doc's sentences (whichever component set them), found
        from the same pass (``segment_vectors``; ``spacy_attnseg.topics``); each span
        group's ``attrs["scores"]`` holds the score of every segment's start (0.0 for
        the first; about 1 or more for a boundary the method chose by itself), and
        each span's label is "SEG" and that score (``spans.score_label``).
    sents_key (str): ``doc.spans`` key of the Doc's final sentences ("" for none),
        labelled "SENT" and how sure each ends where it does
        (``sentences.sentence_end_scores``), for ``displacy.render(doc, style="span")``.
    segment_vectors (str): what a sentence's vector is: "local" (the default), what the
        last layer's attention adds to its input when computed again with each
        wordpiece attending only to its own sentence (``spacy_attnseg.local``), or
        "hidden", the sum of the hidden states of the last ``segment_layers`` layers
        (each sentence's wordpieces carry its neighbours).
    segment_layers (int): with ``segment_vectors`` "hidden", how many of the last
        layers' hidden states make the sentence vectors (at least 1; all of them where
        the model has fewer).
    segment_method (str): "partition" (optimal partitioning of the sentence vectors,
        the default) or "texttiling" (depth scores of gap similarities).
    segment_penalty (float): "partition": what a boundary costs, times ln(number of
        units) and the document's step noise; higher gives fewer segments.
    paragraph_penalty (Optional[float]): the same where the units are paragraphs (with
        ``segment_paragraphs``, a text with paragraph breaks); null: ``segment_penalty``.
    segment_drift (float): "partition": how much a run is credited for its length
        (``topics.length_credit``, ``drift * noise * m ln m`` for ``m`` units), so that a
        long run of one text, whose in-context vectors drift, is split less readily than
        a short one; 0: no credit.
    segment_short_text (int): "partition": a text of fewer sentences pays for a
        boundary what a text of this many would (``topics.priced_units``; with
        paragraphs as units, what this many sentences make in paragraphs), so that a
        short text is not cut where its sentences merely differ; 0: the price of its
        own length.
    segment_pieces_ratio (Optional[float]): "partition", text with paragraph breaks:
        where the median step between sentence vectors across a paragraph start is this
        many times the median within paragraphs or more, the paragraphs read as pieces
        of unrelated texts (a digest) and its sentences are the units
        (``topics.separate_paragraphs``); chosen per model (MiniLM's vectors: 1.25);
        null: never.
    segment_scale (str): "noise" (the default): the penalty is relative to the
        document's own step noise, the median half squared distance of neighbouring
        sentence vectors; "unit": it is not scaled.
    segment_standardise (bool): divide each dimension of the sentence vectors by its
        spread over the document plus the mean spread before comparing them, so that a
        few high-variance dimensions do not decide every distance.
    segment_paragraphs (bool): where the text has paragraph breaks (blank lines, or
        line breaks in a text with one paragraph per line, see
        ``sentences.lines_are_paragraphs``), segments start only at them (each segment
        holds whole paragraphs) unless a size limit splits a paragraph.
    segment_headings (bool): a heading (``sentences.heading_sentences``: a Markdown
        ``#`` line, an underlined line, MediaWiki's ``== Title ==`` or AsciiDoc's
        ``== Title``, an HTML ``<h2>`` or LaTeX ``\\section{}`` line, or a short
        paragraph of one line without closing punctuation or a bullet in front) stays
        with the text after it: no segment starts right after one.
    segment_at_headings (bool): with ``segment_headings``, a heading marked as one (a
        Markdown ``#`` line, an underlined line, ``== Title``, an HTML ``<h2>`` or
        LaTeX ``\\section{}`` line), or a plain one over a paragraph of prose
        (``sentences.heads_prose``), always starts a segment: segments never run across
        an author's sections, and the method splits within them.
    segment_window (int): "texttiling": sentences on each side of a gap compared.
    segment_cutoff (float): "texttiling": a gap is a boundary when its depth exceeds the
        mean minus this many standard deviations of the document's valley depths.
    min_sents (int): fewest sentences in a segment (except a document shorter than that,
        and paragraphs with ``segment_paragraphs``).
    max_sents (int): most sentences in a segment (0: no limit; otherwise at least
        ``min_sents``, E125).
    max_tokens (int): most model wordpieces in a segment (0: no limit); a single
        sentence longer than that is cut between tokens.
    n_segments (int): the number of segments wanted (0: decided by the method). A Doc
        may get fewer (``min_sents``; with ``segment_paragraphs``, starts only at
        paragraph breaks) or more (marked headings with ``segment_at_headings``,
        ``max_sents``, ``max_tokens``).
    long_sentence_tokens (int): a sentence on one line of more model wordpieces than
        this (text without punctuation that the sentences read as one) is segmented as
        pieces of at most ``piece_tokens`` wordpieces, each a unit as a sentence is, so a
        segment may start inside it; one over several lines (a table, a list, a code
        block) stays whole (0: sentences as they are; ``doc.sents`` is not changed).
    piece_tokens (int): the most wordpieces in a piece of a long sentence.
    scorer (Optional[Callable]): scores the sentences and, against gold segments in a
        reference's ``doc.spans[spans_key]``, the topic segments (Pk, WindowDiff;
        ``spacy_attnseg.scoring``).
    """
    check_numbers(f"'{name}'", make_attn_segmenter, locals())
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
        spans_key=spans_key,
        sents_key=sents_key,
        sentences=sentences,
        segment_vectors=segment_vectors,
        segment_layers=segment_layers,
        segment_method=segment_method,
        segment_penalty=segment_penalty,
        paragraph_penalty=paragraph_penalty,
        segment_drift=segment_drift,
        segment_short_text=segment_short_text,
        segment_pieces_ratio=segment_pieces_ratio,
        segment_scale=segment_scale,
        segment_standardise=segment_standardise,
        segment_paragraphs=segment_paragraphs,
        segment_headings=segment_headings,
        segment_at_headings=segment_at_headings,
        segment_window=segment_window,
        segment_cutoff=segment_cutoff,
        min_sents=min_sents,
        max_sents=max_sents,
        max_tokens=max_tokens,
        n_segments=n_segments,
        long_sentence_tokens=long_sentence_tokens,
        piece_tokens=piece_tokens,
        scorer=scorer,
    )


@dataclass
class Decisions:
    """What ``predict`` decides for one Doc and ``set_annotations`` writes: separator
    scores (None with ``sentences`` off), sentence starts (after the ``overwrite`` rule)
    and topic segments."""

    scores: Optional[numpy.ndarray]
    starts: numpy.ndarray
    segments: List[Tuple[int, int, float]] = field(default_factory=list)


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
        layers: Optional[Sequence[int]] = None,
        heads: Optional[Sequence[int]] = None,
        threshold: Optional[float] = None,
        candidates: Optional[Union[str, Sequence[str]]] = None,
        preset: str = "",
        paragraph_breaks: bool = True,
        overwrite: bool = False,
        spans_key: str = SPANS_KEY,
        sents_key: str = SENTS_KEY,
        sentences: bool = True,
        segment_vectors: str = "local",
        segment_layers: int = 4,
        segment_method: str = "partition",
        segment_penalty: float = topics.PENALTY,
        paragraph_penalty: Optional[float] = topics.PARAGRAPH_PENALTY,
        segment_drift: float = topics.DRIFT,
        segment_short_text: int = topics.SHORT_TEXT,
        segment_pieces_ratio: Optional[float] = topics.PIECES_RATIO,
        segment_scale: str = "noise",
        segment_standardise: bool = True,
        segment_paragraphs: bool = True,
        segment_headings: bool = True,
        segment_at_headings: bool = True,
        segment_window: int = 2,
        segment_cutoff: float = 0.5,
        min_sents: int = 2,
        max_sents: int = 0,
        max_tokens: int = 0,
        n_segments: int = 0,
        long_sentence_tokens: int = topics.LONG_SENTENCE,
        piece_tokens: int = topics.PIECE,
        scorer: Optional[Callable] = None,
    ) -> None:
        install_extensions()
        for key, value in (
            ("segment_layers", segment_layers),
            ("segment_window", segment_window),
            ("min_sents", min_sents),
            ("max_sents", max_sents),
            ("max_tokens", max_tokens),
            ("n_segments", n_segments),
            ("segment_short_text", segment_short_text),
            ("long_sentence_tokens", long_sentence_tokens),
            ("piece_tokens", piece_tokens),
        ):
            ones = ("segment_layers", "segment_window", "min_sents", "piece_tokens")
            least = 1 if key in ones else 0
            if not is_whole_number(value, least):
                raise ValueError(Errors.E015.format(key=key, value=value, least=least))
        if 0 < max_sents < min_sents:
            raise ValueError(Errors.E125.format(min_sents=min_sents, max_sents=max_sents))
        if sents_key and sents_key == spans_key:
            raise ValueError(Errors.E134.format(key=sents_key))
        if segment_method not in topics.METHODS:
            raise ValueError(Errors.E019.format(value=segment_method, methods=topics.METHODS))
        for key, penalty, default in (
            ("segment_penalty", segment_penalty, topics.PENALTY),
            ("paragraph_penalty", paragraph_penalty, topics.PARAGRAPH_PENALTY),
        ):
            if penalty is not None and not topics.valid_penalty(penalty):
                raise ValueError(Errors.E020.format(key=key, value=penalty, default=default))
        if not topics.valid_drift(segment_drift):
            raise ValueError(Errors.E122.format(value=segment_drift, default=topics.DRIFT))
        if not topics.valid_ratio(segment_pieces_ratio):
            raise ValueError(
                Errors.E149.format(value=segment_pieces_ratio, default=topics.PIECES_RATIO)
            )
        if segment_vectors not in topics.VECTORS:
            raise ValueError(Errors.E124.format(value=segment_vectors, allowed=topics.VECTORS))
        if segment_scale not in topics.SCALES:
            raise ValueError(Errors.E028.format(value=segment_scale, scales=topics.SCALES))
        self.name = name
        self.vocab = nlp.vocab
        self.scorer = segmenter_score if scorer is None else scorer
        if preset not in ("", PAPER):
            raise ValueError(Errors.E012.format(value=preset))
        self.cfg: Dict[str, Any] = {"transformer": transformer}
        self.attach(nlp)
        given: Dict[str, Any] = {
            "layers": layers,
            "heads": heads,
            "threshold": threshold,
            "candidates": candidates,
        }
        decision = self.default_decision(given, warn=sentences)
        check_threshold(decision["threshold"])
        self.cfg = {
            "transformer": transformer,
            "layers": list(decision["layers"]),
            "heads": list(decision["heads"]),
            "threshold": float(decision["threshold"]),
            "candidates": validate_candidates(decision["candidates"]),
            "preset": preset,
            "paragraph_breaks": bool(paragraph_breaks),
            "overwrite": overwrite,
            "spans_key": spans_key,
            "sents_key": sents_key,
            "sentences": bool(sentences),
            "segment_vectors": segment_vectors,
            "segment_layers": int(segment_layers),
            "segment_method": segment_method,
            "segment_penalty": float(segment_penalty),
            "paragraph_penalty": None if paragraph_penalty is None else float(paragraph_penalty),
            "segment_drift": float(segment_drift),
            "segment_short_text": int(segment_short_text),
            "segment_pieces_ratio": (
                None if segment_pieces_ratio is None else float(segment_pieces_ratio)
            ),
            "segment_scale": segment_scale,
            "segment_standardise": bool(segment_standardise),
            "segment_paragraphs": bool(segment_paragraphs),
            "segment_headings": bool(segment_headings),
            "segment_at_headings": bool(segment_at_headings),
            "segment_window": int(segment_window),
            "segment_cutoff": float(segment_cutoff),
            "min_sents": int(min_sents),
            "max_sents": int(max_sents),
            "max_tokens": int(max_tokens),
            "n_segments": int(n_segments),
            "long_sentence_tokens": int(long_sentence_tokens),
            "piece_tokens": int(piece_tokens),
        }
        # the values of the config (null where the model's defaults were taken), which
        # spacy.load compares with the saved config to tell overrides
        self.config_cfg = {**self.cfg, **given}
        self.install_capture()

    def default_decision(self, given: Dict[str, Any], *, warn: bool = True) -> Dict[str, Any]:
        """``given`` layers, heads, threshold and candidates, where null ones are the
        calibrated settings of a known model, else the paper's recipe (final layer, all
        heads, 0.5) on punctuation with a warning (W002) when ``warn``."""
        if all(value is not None for value in given.values()):
            return given
        name = str(self._trf.model.attrs.get("name", ""))
        known = calibrated_settings(name, "attn_segmenter")
        if known is None:
            if warn:
                warnings.warn(Warnings.W002.format(model=name, component=self.name), stacklevel=3)
            known = dict(UNCALIBRATED)
        return {key: known[key] if value is None else value for key, value in given.items()}

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
        segments = bool(self.cfg.get("spans_key"))
        sentences = bool(self.cfg.get("sentences", True))
        local = segments and self.cfg.get("segment_vectors", "local") == "local"
        return CaptureRequest(
            colsum_layers=tuple(self.layers) if sentences else (),
            colsum_heads=tuple(self.heads) if sentences else (),
            hidden_last=int(self.cfg.get("segment_layers", 4)) if segments and not local else 0,
            local_layers=(-1,) if local else (),
        )

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

    def predict(self, docs: Iterable[Doc]) -> List[Decisions]:
        """Per Doc, what ``set_annotations`` writes: the separator score of every token
        (0 where it may not be one), the sentence starts, and the topic segments."""
        install_extensions()
        docs = list(docs)
        sentences = bool(self.cfg.get("sentences", True))
        heads = self.selected_heads() if sentences and any(len(doc) for doc in docs) else []
        out = []
        for doc in docs:
            # the boundaries already set: 1 start, -1 no start, 0 unset
            existing = doc.to_array(SENT_START).astype("int64")
            if sentences:
                scores = self.token_scores(doc, heads)
                decided = decide_starts(
                    doc, scores, self.threshold, paragraph_breaks=self.paragraph_breaks
                )
                keep = (existing != 0) & (not self.cfg["overwrite"])
                starts = numpy.where(keep, existing == 1, decided)
            else:
                if len(doc) > 1 and not doc.has_annotation("SENT_START"):
                    raise ValueError(Errors.E131.format(component=self.name, n_tokens=len(doc)))
                scores = None
                starts = existing == 1
            if len(doc):
                starts[0] = True
            segments = self.topic_segments(doc, starts) if self.cfg.get("spans_key") else []
            out.append(Decisions(scores, starts, segments))
        return out

    def topic_segments(self, doc: Doc, starts: numpy.ndarray) -> List[Tuple[int, int, float]]:
        """Topic segments ``(start, end, score)`` in tokens over the sentences ``starts``
        (``spacy_attnseg.topics``); the captured hidden states are released after."""
        if len(doc) == 0:
            return []
        trf_data = doc._.trf_data
        output = trf_data.model_output
        cfg = self.cfg
        if trf_data.wordpieces.input_ids.size == 0:
            return [(0, len(doc), 1.0)]
        token_sizes = doc_wordpiece_counts(doc)
        sent_starts = self.unit_starts(doc, starts, token_sizes)
        n_sents = len(sent_starts)
        paragraph_first = paragraph_starts(doc, sent_starts)
        texts = sentence_texts(doc, sent_starts)
        headings = (
            heading_sentences(doc, sent_starts, paragraph_first, texts)
            if cfg["segment_headings"]
            else None
        )
        breaks = (
            (headings == MARKED_HEADING) | heads_prose(headings, paragraph_first, texts)
            if headings is not None and cfg["segment_at_headings"]
            else None
        )
        if not topics.may_split(
            n_sents,
            min_sents=cfg["min_sents"],
            n_paragraphs=int(paragraph_first.sum()) if cfg["segment_paragraphs"] else 1,
            max_sents=cfg["max_sents"],
            n_wordpieces=int(token_sizes.counts.sum()),
            max_tokens=cfg["max_tokens"],
            n_breaks=int(breaks[1:].sum()) if breaks is not None else 0,
        ):
            self.release_if_last(doc, CAPTURED)
            return [(0, len(doc), 0.0)]
        sentence_of_token = topics.sentence_index(sent_starts, len(doc))
        if cfg["segment_vectors"] == "local" and LOCAL in output:
            means = self.local_vectors(doc, sentence_of_token, n_sents)
            self.release_if_last(doc, CAPTURED)
        elif HIDDEN in output:
            hidden = to_numpy(output[HIDDEN])
            self.release_if_last(doc, CAPTURED)
            means = topics.sentence_means(hidden, trf_data.align, sentence_of_token, n_sents)
        elif cfg["spans_key"] in doc.spans:
            # processed before: the captured states were released after that run
            group = doc.spans[cfg["spans_key"]]
            return [
                (span.start, span.end, float(score))
                for span, score in zip(group, group.attrs.get("scores", []), strict=True)
            ]
        else:
            if get_family(self._trf.model.transformer) is not None:
                # the hooks can capture this model: they did not run for this component
                raise ValueError(Errors.E006.format(component=self.name))
            # a model family the hooks do not know: its own last hidden state
            hidden = to_numpy(output.last_hidden_state)
            means = topics.sentence_means(hidden, trf_data.align, sentence_of_token, n_sents)
        repeats = topics.repeat_groups(texts)
        means = topics.tie_repeats(means, repeats)
        sent_sizes = token_sizes.runs(sent_starts)
        # a sentence that leads into the next line ("Expected output:") or a short turn
        # above a longer one (an interviewer's question above its answer) heads what that
        # line holds, and a paragraph there continues its own
        leading = lead_ins(texts, headings) | turns_leading_in(doc, sent_starts, texts)
        paragraph_first = paragraph_first & ~numpy.concatenate([[False], leading[:-1]])
        # paragraphs of one sentence each are sentences: the units stay sentences
        paragraphs = (
            numpy.cumsum(paragraph_first) - 1
            if cfg["segment_paragraphs"] and not sentence_paragraphs(paragraph_first)
            else None
        )
        at_line = numpy.array([starts_line(doc, int(start)) for start in sent_starts], dtype=bool)
        own_line = at_line & numpy.array(
            [
                k == n_sents - 1 or LINE_BREAK.search(text) is not None
                for k, text in enumerate(texts)
            ],
            dtype=bool,
        )
        # a line of its own that says nothing of a topic ("---", "</div>", ".. _label:")
        # keeps with the text after it (not an emoticon after a sentence on its line)
        bare = own_line & numpy.array([says_nothing(text) for text in texts], dtype=bool)
        # and so does a header that repeats above its text (a speaker's name and time
        # above each turn)
        above = topics.repeated_headers(
            repeats,
            own_line,
            paragraph_first,
            numpy.append(at_line[1:], False),
            [CLOSING.search(text.strip()) is not None for text in texts],
        )
        # a letter's salutation ("Dear Ann,") opens the text below it, as a heading
        greeting = salutations(doc, sent_starts, texts)
        heads = leading | bare | greeting | above
        if headings is not None:
            heads |= headings > 0
        # a signature, an attribution or a valediction stays with the text above it
        closing = closing_sentences(doc, sent_starts, paragraph_first, texts)
        seg_starts, seg_scores = topics.segment(
            means,
            method=cfg["segment_method"],
            penalty=cfg["segment_penalty"],
            paragraph_penalty=cfg["paragraph_penalty"],
            drift=cfg["segment_drift"],
            short_text=cfg["segment_short_text"],
            pieces_ratio=cfg["segment_pieces_ratio"],
            scale=cfg["segment_scale"],
            standardise=cfg["segment_standardise"],
            window=cfg["segment_window"],
            cutoff=cfg["segment_cutoff"],
            min_sents=cfg["min_sents"],
            max_sents=cfg["max_sents"],
            max_tokens=cfg["max_tokens"],
            n_segments=cfg["n_segments"],
            sent_sizes=sent_sizes,
            paragraphs=paragraphs,
            headings=heads,
            joined=(numpy.bincount(repeats)[repeats] > 1) | bare | greeting,
            breaks=breaks,
            closing=closing,
        )
        closing_tokens = numpy.asarray(sent_starts)[closing]
        token_bounds = [int(sent_starts[s]) for s in seg_starts] + [len(doc)]
        text = doc.text  # (read once: Doc.text joins every token each time it is read)
        segments: List[Tuple[int, int, float]] = []
        for (start, end), score in zip(
            zip(token_bounds[:-1], token_bounds[1:], strict=True), seg_scores, strict=True
        ):
            cuts = [start]
            if cfg["max_tokens"] and token_sizes.span(start, end) > cfg["max_tokens"]:
                lines = numpy.array([starts_line(doc, i) for i in range(start, end)])
                # a piece starts at a line, not inside a quoted cell of a table's row,
                # nor below a subtitle cue's number or timing line
                first = doc[start - 1].idx if start else 0  # (the line break before it)
                last = doc[start:end].end_char
                held = quoted_lines(text, first, last) | cue_lines(text, first, last)
                lines &= [doc[i].idx not in held for i in range(start, end)]
                # nor at a line that closes the text above it
                within = closing_tokens[(closing_tokens > start) & (closing_tokens < end)]
                lines[within - start] = False
                # no cut between the headings that open the segment and their text
                k = int(numpy.searchsorted(sent_starts, start))
                while k + 1 < n_sents and heads[k] and sent_starts[k + 1] < end:
                    k += 1
                lines[: int(sent_starts[k]) - start + 1] = False
                pieces = topics.split_tokens(token_sizes.part(start, end), cfg["max_tokens"], lines)
                cuts += [start + c for c in pieces]
            for i, (a, b) in enumerate(zip(cuts, cuts[1:] + [end], strict=True)):
                segments.append((a, b, round(float(score), 6) if i == 0 else 0.0))
        return segments

    def unit_starts(
        self, doc: Doc, starts: numpy.ndarray, token_sizes: WordpieceCounts
    ) -> numpy.ndarray:
        """First tokens of the units that ``topic_segments`` partitions: the sentences
        ``starts`` (True where a token starts one), each longer than
        ``long_sentence_tokens`` wordpieces (``token_sizes``) on one line in pieces
        (``topics.long_sentence_pieces``)."""
        cfg = self.cfg
        units = topics.long_sentence_pieces(
            starts,
            token_sizes,
            cfg["long_sentence_tokens"],
            cfg["piece_tokens"],
            functools.partial(starts_line, doc),
            lambda i: doc[i].is_alpha,
        )
        return numpy.flatnonzero(units)

    def local_vectors(
        self, doc: Doc, sentence_of_token: numpy.ndarray, n_sents: int
    ) -> numpy.ndarray:
        """Each sentence's vector from the last layer's attention computed again within
        each sentence (``spacy_attnseg.local``), from the arrays the hooks captured."""
        trf_data = doc._.trf_data
        output = trf_data.model_output
        hf_model = self._trf.model.transformer
        n_layers, n_heads = n_layers_heads(hf_model)
        layers = [int(layer) for layer in to_numpy(output[LOCAL_LAYERS])[0]]
        per_layer = len(output[LOCAL]) // len(layers)
        k = layers.index(n_layers - 1)
        parts = [to_numpy(a) for a in output[LOCAL][k * per_layer : (k + 1) * per_layer]]
        family = get_family(hf_model)
        assert family is not None, "the hooks captured a layer of a known family"
        modules = family.layers(hf_model)[n_layers - 1]
        query, key, value, projection = (
            cast(torch.nn.Linear, module)
            for module in (modules.query, modules.key, modules.value, modules.output)
        )
        rows, tokens = aligned_rows(trf_data.align)
        return local_means(
            parts,
            to_numpy(trf_data.wordpieces.attention_mask),
            (query, key, value),
            projection,
            rows,
            sentence_of_token[tokens],
            n_sents,
            n_heads,
        )

    def token_scores(self, doc: Doc, heads: Sequence[tuple]) -> numpy.ndarray:
        """Normalised separator scores of the tokens of ``doc`` from the chosen heads."""
        if len(doc) == 0:
            return numpy.zeros((0,), dtype="float32")
        colsums = self.window_colsums(doc, heads)
        if colsums is None:
            return numpy.zeros((len(doc),), dtype="float32")
        # a few numbers per wordpiece: cheaper to score on the CPU than with GPU kernels
        windows = normalised_window_scores(to_numpy(colsums))
        scores = token_values(windows[:, :, None], doc._.trf_data.align, len(doc))[:, 0]
        return scores * candidate_mask(doc, self.candidates)

    def window_colsums(self, doc: Doc, heads: Sequence[tuple]) -> Optional[Any]:
        """Raw column sums ``(n_windows, len(heads), L)`` of ``heads`` for ``doc``, on the
        arrays' device; None when the doc has no wordpieces."""
        trf_data = getattr(doc._, "trf_data", None)
        if trf_data is None:
            raise self.no_transformer_output()
        if trf_data.wordpieces.input_ids.size == 0 or len(trf_data.align.dataXd) == 0:
            return None
        output = trf_data.model_output
        if COLSUMS in output:
            index = {
                (int(layer), int(head)): i
                for i, (layer, head) in enumerate(to_numpy(output[COLSUM_HEADS][0]).tolist())
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

    def set_annotations(self, docs: Iterable[Doc], decisions: Sequence[Decisions]) -> None:
        """Write what ``predict`` decided: separator scores, sentence starts (only where
        unset unless ``overwrite``) and, with ``spans_key``, the topic segments."""
        install_extensions()
        key = self.cfg.get("spans_key")
        sents_key = self.cfg.get("sents_key")
        for doc, decided in zip(docs, decisions, strict=True):
            if decided.scores is not None:
                doc._.separator_scores = [round(float(s), 6) for s in decided.scores]
            if len(doc) == 0:
                if key:
                    set_scored_spans(doc, key, [], SEGMENT)
                    set_heading_paths(doc, key)
                if sents_key:
                    set_sentence_spans(doc, sents_key)
                continue
            if decided.scores is not None:
                # in one call: setting ``token.is_sent_start`` token by token costs a scan
                # of the Doc each (quadratic in its length)
                values = numpy.where(decided.starts, 1, -1).astype("uint64")
                doc.from_array([SENT_START], cast(Ints2d, values.reshape((-1, 1))))
            if key:
                set_scored_spans(doc, key, decided.segments, SEGMENT)
                set_heading_paths(doc, key)
            if sents_key:
                set_sentence_spans(doc, sents_key)

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
            self.attach(nlp)
        self.install_capture()
        examples = list(get_examples())
        if not calibrate or not examples:
            return
        if not any(eg.reference.has_annotation("SENT_START") for eg in examples):
            return
        from ..calibration import calibrate_segmenter, calibration_problem

        problem = calibration_problem(examples)
        if problem:  # (sentences one by one: calibration would choose a head at random)
            warnings.warn(Warnings.W006.format(component=self.name, problem=problem), stacklevel=2)
            return
        result = calibrate_segmenter(self, examples, max_heads=max_heads)
        self.update_settings({**result.best_config(), "preset": ""})


def _concat(arrays: List[Any]) -> Any:
    from thinc.api import get_array_module

    return get_array_module(arrays[0]).concatenate(arrays, axis=1)
