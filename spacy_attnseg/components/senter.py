"""The ``attn_senter`` factory and component: a trainable sentence recognizer over the
attention of a frozen spacy-transformers ``transformer``.

Where ``attn_segmenter`` thresholds the column scores of a few chosen heads,
``attn_senter`` learns a small model (``spacy-attnseg.AttnSenterModel.v1``) over the
attention features of all layers and heads (``spacy_attnseg.features``), optionally with
word identities. Like ``attn_segmenter`` it reads what ``AttentionCapture`` computed
during the transformer's own pass and never runs the transformer itself.

It is spaCy's ``senter`` with another model and input: labels "I"/"S" per token,
``token.is_sent_start`` written only where unset unless ``overwrite``, scored by
``spacy.senter_scorer.v1``, weights saved by ``to_disk``. Train it with ``spacy train``
and the transformer frozen *and annotating* (``configs/attn_senter.cfg``): ``nlp.update``
skips frozen components, and only an annotating one still sets ``doc._.trf_data`` on the
training docs.
"""

import json
import re
import warnings
from itertools import islice
from pathlib import Path
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy
from spacy import util
from spacy.language import Language
from spacy.pipeline.senter import SentenceRecognizer
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.util import load_config, registry
from thinc.api import Model
from thinc.types import Floats2d

from ..architectures import member_start_probs, n_members, predict_scores
from ..assets import assets_root
from ..capture import CAPTURED_GROUPS, CaptureRequest
from ..errors import Errors, Warnings, check_numbers, check_threshold
from ..families import n_layers_heads
from ..features import DocRange, FeatureSpec, feature_names, lacks_final_punct, spec_of
from ..loading import CONFIGS, known_config
from ..markup import LAYOUT_WHITESPACE, LINE_BREAK, PARAGRAPH_SEPARATOR
from ..sentences import unmarked_starts
from .base import CONFIG_SETTINGS, CaptureReader, install_score_extensions

#: The most tokens the model reads at once in ``predict_proba`` (see there).
PREDICT_TOKENS = 4096


def read_line_breaks_as_line_feeds(docs: Sequence[Doc]) -> None:
    """Give every whitespace lexeme of ``docs`` that holds a line end and is not line
    feeds alone the word features (NORM, PREFIX, SUFFIX, SHAPE) of its line ends written
    as line feeds (``as_line_feeds``), in the shared vocab: a line end other than a line
    feed (``markup.LINE_END``: Windows' ``"\\r\\n"``, a lone ``"\\r"``, a form feed, a
    vertical tab, Unicode's separators; a paragraph separator as a blank line), and the
    spaces and tabs around the line ends (the indentation of a list item's wrapped
    lines, of a quoted or nested block; a blank line holding spaces). The word
    embeddings were trained on text whose lines end in ``"\\n"`` and start at the
    margin, and neither a text's line ends nor its indentation should change its
    sentences.

    A token may hold a NORM of its own, which hides its lexeme's: ``Doc.from_docs`` and
    a ``DocBin`` give every token one, as its lexeme had it then (so does
    ``spacy-attnseg.Tokenizer``, which joins the pieces of a text with a long run
    without white space). Such a token of these lexemes gets the new NORM too, so that
    a text's features do not depend on what the vocab had read before it."""
    for doc in docs:
        if not LAYOUT_WHITESPACE.search(doc.text):
            continue
        vocab = doc.vocab
        norms: Dict[str, Optional[str]] = {}
        for token in doc:
            if not token.is_space:
                continue
            text = token.text
            if text not in norms:
                like = "".join(as_line_feeds(found) for found in LINE_BREAK.finditer(text))
                norms[text] = None
                if like and like != text:
                    lexeme, same = vocab[text], vocab[like]
                    lexeme.norm_, lexeme.prefix_ = same.norm_, same.prefix_
                    lexeme.suffix_, lexeme.shape_ = same.suffix_, same.shape_
                    norms[text] = same.norm_
            norm = norms[text]
            if norm is not None and token.norm_ != norm:
                token.norm_ = norm


def as_line_feeds(line_end: "re.Match[str]") -> str:
    """A ``LINE_BREAK`` match written with line feeds: a paragraph separator is a blank
    line, any other line end one line feed."""
    return "\n\n" if PARAGRAPH_SEPARATOR in line_end.group() else "\n"


# The factory's default model: the architecture of the shipped weights, as in the
# shipped configs/attn_senter.cfg (one place for it).
DEFAULT_MODEL = load_config(CONFIGS / "attn_senter.cfg", interpolate=False)["components"][
    "attn_senter"
]["model"]

# Docs the transformer annotates in ``initialize`` to measure the feature statistics.
INIT_SAMPLE = 64


class StartDecisions(NamedTuple):
    """What ``AttnSenter.predict`` decides for one Doc: 1 where a sentence starts, and
    P(S) of every token."""

    starts: numpy.ndarray
    probs: numpy.ndarray


def install_start_scores() -> None:
    """``doc._.start_scores`` (P(sentence start) per token, set by ``attn_senter``) and
    ``token._.start_score``; safe to call many times."""
    install_score_extensions("start_scores", "start_score")


#: The thresholds' factory defaults. Trained weights come with the thresholds they were
#: tuned with (``to_disk`` writes them beside the model); ``load_weights`` takes those
#: for every threshold the config leaves at its default here.
DEFAULT_THRESHOLDS: Dict[str, Optional[float]] = {
    "threshold": 0.25,
    "threshold_no_punct": None,
    "threshold_unmarked": None,
}


@Language.factory(
    "attn_senter",
    requires=["doc._.trf_data"],
    assigns=["token.is_sent_start", "doc.sents", "doc._.start_scores"],
    default_config={
        "model": DEFAULT_MODEL,
        "transformer": "transformer",
        **DEFAULT_THRESHOLDS,
        "paragraph_breaks": True,
        "overwrite": False,
        "scorer": {"@scorers": "spacy.senter_scorer.v1"},
    },
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_attn_senter(
    nlp: Language,
    name: str,
    model: Model[List[Doc], List[Floats2d]],
    transformer: str,
    threshold: float,
    threshold_no_punct: Optional[float],
    threshold_unmarked: Optional[float],
    paragraph_breaks: bool,
    overwrite: bool,
    scorer: Optional[Callable],
) -> "AttnSenter":
    """Learn sentence starts from the attention of all layers and heads.

    model (Model[List[Doc], List[Floats2d]]): P(I), P(S) per token, e.g.
        ``spacy-attnseg.AttnSenterModel.v1``; its ``features`` layer says which captured
        numbers the transformer must provide.
    transformer (str): name of the upstream spacy-transformers component.
    threshold (float): a token starts a sentence when P(S) reaches it.
    threshold_no_punct (Optional[float]): the threshold for documents without
        sentence-final punctuation (``.``, ``!``, ``?``, ... on under 1 % of the tokens,
        ``features.lacks_final_punct``; text that lost it needs other cues and the model's
        probabilities are less sure there); None: ``threshold`` for all documents.
    threshold_unmarked (Optional[float]): in a document with final punctuation where at
        least 75 % of the sentences follow it (``sentences.PUNCTUATED_SHARE``), the
        threshold for a start that no final punctuation precedes (in edited text such a
        start is usually a missing comma; ``sentences.unmarked_starts``); None:
        ``threshold``.
    paragraph_breaks (bool): a paragraph break (a blank line, or the line break before
        a paragraph's indented first line or below its short last line in hard-wrapped
        text: ``sentences.paragraph_break_tokens``) ends a
        sentence, whatever the model says, and so does every line break of a text with one
        sentence per line (``sentences.lines_end_sentences``). Either way no sentence
        starts on whitespace or on punctuation that closes the sentence before it, and
        one that starts after an opening bracket or quote starts on it, and a list
        marker such as ``"2."`` is no sentence by itself (``sentences.layout_starts``).
    overwrite (bool): replace sentence boundaries already set by earlier components.
    """
    check_numbers(f"'{name}'", make_attn_senter, locals())
    return AttnSenter(
        nlp,
        model,
        name,
        transformer=transformer,
        threshold=threshold,
        threshold_no_punct=threshold_no_punct,
        threshold_unmarked=threshold_unmarked,
        paragraph_breaks=paragraph_breaks,
        overwrite=overwrite,
        scorer=scorer,
    )


class AttnSenter(CaptureReader, SentenceRecognizer):
    """spaCy's sentence recognizer over the captured attention of a transformer."""

    def __init__(
        self,
        nlp: Language,
        model: Model[List[Doc], List[Floats2d]],
        name: str = "attn_senter",
        *,
        transformer: str = "transformer",
        threshold: float = 0.25,
        threshold_no_punct: Optional[float] = None,
        threshold_unmarked: Optional[float] = None,
        paragraph_breaks: bool = True,
        overwrite: bool = False,
        scorer: Optional[Callable] = None,
    ) -> None:
        for value in (threshold, threshold_no_punct, threshold_unmarked):
            if value is not None:
                check_threshold(value)
        if scorer is None:
            scorer = registry.scorers.get("spacy.senter_scorer.v1")()
        super().__init__(nlp.vocab, model, name, overwrite=overwrite, scorer=scorer)
        self.cfg.update(
            {
                "transformer": transformer,
                "threshold": float(threshold),
                "threshold_no_punct": None
                if threshold_no_punct is None
                else float(threshold_no_punct),
                "threshold_unmarked": None
                if threshold_unmarked is None
                else float(threshold_unmarked),
                "paragraph_breaks": bool(paragraph_breaks),
            }
        )
        self.config_cfg = dict(self.cfg)
        install_start_scores()
        self.attach(nlp)
        self.install_capture()

    # -- the transformer and its capture ----------------------------------------------

    @property
    def features(self) -> Model:
        """The model's feature layer (``spacy-attnseg.AttnFeatures.v1``)."""
        return self.model.get_ref("features")

    @property
    def feature_spec(self) -> FeatureSpec:
        return spec_of(self.features)

    def capture_request(self) -> CaptureRequest:
        return self.feature_spec.capture_request()

    def install_capture(self) -> None:
        """Ask the transformer's capture hooks for what the features need, and record the
        model's number of heads once its weights are loaded."""
        self.register()
        trf_model = self._trf.model
        if trf_model.attrs.get("has_transformer"):
            n_layers, n_heads = n_layers_heads(trf_model.transformer)
            self.feature_spec.resolved_context_layers(n_layers)
            self.features.attrs["n_heads"] = n_heads
            self.features.attrs["n_layers"] = n_layers

    def feature_names(self) -> List[str]:
        """A name per feature column of the model's input (attention features first, then
        the word embedding's columns if any)."""
        trf_model = self._trf.model
        if not trf_model.attrs.get("has_transformer"):
            raise ValueError(Errors.E007)
        n_layers, n_heads = n_layers_heads(trf_model.transformer)
        hidden = int(trf_model.transformer.config.hidden_size)
        names = feature_names(self.feature_spec, n_layers, n_heads, hidden)
        if self.model.has_ref("words"):
            width = self.model.get_ref("words").get_dim("nO")
            names += [f"words:{i}" for i in range(width)]
        return names

    # -- processing -------------------------------------------------------------------

    @property
    def threshold(self) -> float:
        # (rounded: the cfg file's JSON reader may add float noise, 0.575 -> 0.5750000000000001)
        return round(float(self.cfg["threshold"]), 6)

    @property
    def threshold_no_punct(self) -> float:
        """The threshold for documents without sentence-final punctuation."""
        value = self.cfg.get("threshold_no_punct")
        return self.threshold if value is None else round(float(value), 6)

    @property
    def threshold_unmarked(self) -> Optional[float]:
        """The threshold for a start without final punctuation before it, in text that
        mostly has it (None: ``threshold``)."""
        value = self.cfg.get("threshold_unmarked")
        return None if value is None else round(float(value), 6)

    def threshold_for(self, doc: Doc) -> float:
        """``threshold``, or ``threshold_no_punct`` when ``doc`` lacks sentence-final
        punctuation (``features.lacks_final_punct``: under 1 % of its tokens), the regime
        the model's ``doc_punct`` features tell apart."""
        if self.cfg.get("threshold_no_punct") is None or not lacks_final_punct(doc):
            return self.threshold
        return self.threshold_no_punct

    @property
    def paragraph_breaks(self) -> bool:
        # (pipelines saved before the setting existed get its default)
        return bool(self.cfg.get("paragraph_breaks", True))

    def decide(
        self, doc: Doc, probs: numpy.ndarray, threshold: Optional[float] = None
    ) -> numpy.ndarray:
        """1 where a sentence starts in ``doc`` and 0 elsewhere: P(S) ``probs`` at or
        above ``threshold`` (None: ``threshold_for(doc)``), fitted to the layout by
        ``sentences.layout_starts``; in a document with final punctuation, a start
        without it before needs ``threshold_unmarked`` where most starts have it
        (``sentences.unmarked_starts``). Threshold tuning and reports decide through it,
        so that they decide as the component does."""
        if threshold is None:
            threshold = self.threshold_for(doc)
        unmarked = self.threshold_unmarked
        if unmarked is None or lacks_final_punct(doc):
            unmarked = threshold  # (the rule off)
        return unmarked_starts(
            doc, probs, threshold, unmarked, paragraph_breaks=self.paragraph_breaks
        )

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        return super().pipe(stream, batch_size=self.checked_batch_size(batch_size))

    def predict(self, docs: Iterable[Doc]) -> List[StartDecisions]:
        """Per Doc, P(S) of every token and the starts decided from it (``decide``)."""
        docs = list(docs)
        probs = self.predict_proba(docs)
        return [StartDecisions(self.decide(doc, p), p) for p, doc in zip(probs, docs, strict=True)]

    def set_annotations(self, docs: Iterable[Doc], decisions: Sequence[StartDecisions]) -> None:
        """Sentence starts (only where unset unless ``overwrite``, as spaCy's ``senter``)
        and ``doc._.start_scores``, P(S) of every token. The captured arrays the
        features read are then released from ``doc._.trf_data`` unless a later component
        reads them too."""
        install_start_scores()
        docs = list(docs)
        request = self.capture_request()
        read = [group for group in CAPTURED_GROUPS if request.reads(group)]
        for doc in docs:
            for group in read:
                self.release_if_last(doc, group)
        super().set_annotations(docs, [decided.starts for decided in decisions])
        for doc, decided in zip(docs, decisions, strict=True):
            doc._.start_scores = [round(float(p), 6) for p in decided.probs]

    def predict_proba(self, docs: Iterable[Doc]) -> List[numpy.ndarray]:
        """Per Doc, P(S) of every token (numpy).

        The model runs on at most :data:`PREDICT_TOKENS` tokens at a time: short Docs
        together, a longer Doc in ranges that overlap by the model's receptive field, of
        which only the middle is kept, so that each token gets the probability it gets
        in one pass over the whole Doc while the features of only one range are in
        memory."""
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return [numpy.zeros((len(doc),), dtype="float32") for doc in docs]
        read_line_breaks_as_line_feeds(docs)
        margin = int(self.model.attrs.get("receptive_field", 0))
        pieces: List[List[numpy.ndarray]] = [[] for _ in docs]
        group: List[Tuple[int, Union[Doc, DocRange], int, int]] = []
        size = 0
        for index, doc in enumerate(docs):
            for start in range(0, max(1, len(doc)), PREDICT_TOKENS):
                end = min(len(doc), start + PREDICT_TOKENS)
                lo, hi = max(0, start - margin), min(len(doc), end + margin)
                item: Union[Doc, DocRange] = (
                    doc if (lo, hi) == (0, len(doc)) else DocRange(doc, lo, hi)
                )
                if group and size + len(item) > PREDICT_TOKENS:
                    self._predict_group(group, pieces)
                    group, size = [], 0
                group.append((index, item, start - lo, end - lo))
                size += len(item)
        self._predict_group(group, pieces)
        return [numpy.concatenate(parts) if len(parts) > 1 else parts[0] for parts in pieces]

    def _predict_group(
        self,
        group: List[Tuple[int, Union[Doc, DocRange], int, int]],
        pieces: List[List[numpy.ndarray]],
    ) -> None:
        """P(S) of the kept rows of each item of ``group``, appended to its Doc's pieces."""
        if not group:
            return
        scores = predict_scores(self.model, [item for _, item, _, _ in group])
        for (index, _, keep_start, keep_end), s in zip(group, scores, strict=True):
            probs = self.model.ops.to_numpy(member_start_probs(s)).astype("float32")
            pieces[index].append(probs[keep_start:keep_end])

    def get_loss(
        self, examples: Iterable[Example], scores: List[Floats2d]
    ) -> Tuple[float, List[Floats2d]]:
        """The senter loss of every member of the model on its own columns of ``scores``
        (summed), and its gradient: the members learn independently, as an ensemble's
        members do."""
        examples = list(examples)
        members = n_members(self.model)
        if members == 1:
            return super().get_loss(examples, scores)
        total = 0.0
        parts = []
        for m in range(members):
            loss, d_member = super().get_loss(examples, [s[:, 2 * m : 2 * m + 2] for s in scores])
            total += loss
            parts.append(d_member)
        xp = self.model.ops.xp
        d_scores = [xp.hstack([part[i] for part in parts]) for i in range(len(scores))]
        return total, d_scores

    # -- initialization ---------------------------------------------------------------

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        n_sample: int = INIT_SAMPLE,
        weights: Optional[Union[str, Path]] = None,
    ) -> None:
        """Build the model from a sample of the examples: the transformer annotates up to
        ``n_sample`` of them, spread over the data, and the feature layer measures its
        standardisation on their tokens.

        With ``weights`` (a folder written by this component's ``to_disk``, e.g. the
        trained weights that ship with the package: ``spacy-attnseg.shipped_senter.v1``
        in ``[initialize.components.attn_senter]``), the model and thresholds are read
        from there instead (a threshold that the config sets to other than its default
        keeps the config's value, as every other setting does; ``load_weights``); the
        model's architecture must be the one they were trained with (E107).

        The transformer must have weights: in ``spacy train`` a frozen transformer is not
        initialized, so the config adds the ``spacy-attnseg.initialize_frozen.v1``
        callback (see configs/attn_senter.cfg)."""
        validate_get_examples(get_examples, "AttnSenter.initialize")
        if nlp is not None:
            self.attach(nlp)
        if weights is None and not any(
            eg.reference.has_annotation("SENT_START") for eg in get_examples()
        ):
            weights = self.default_weights()
        if weights is not None:
            self.load_weights(Path(weights))
            return
        if not self._trf.model.attrs.get("has_transformer"):
            raise ValueError(Errors.E105.format(name=self.cfg["transformer"], component=self.name))
        self.install_capture()
        util.check_lexeme_norms(self.vocab, "attn_senter")
        examples = [eg for eg in get_examples() if len(eg.x)]
        if not examples:
            examples = [Example.from_dict(Doc(self.vocab, words=["Hello", "."]), {})]
        step = max(1, len(examples) // max(1, n_sample))
        sample = list(islice(examples[::step], n_sample))
        docs = list(self._trf.pipe([eg.x.copy() for eg in sample]))
        labels = []
        for eg in sample:
            gold = eg.get_aligned("SENT_START")
            rows = [[0.0, 1.0] if tag == 1 else [1.0, 0.0] for tag in gold]
            labels.append(self.model.ops.asarray2f(numpy.asarray(rows, dtype="float32")))
        self.model.initialize(X=docs, Y=labels)

    def default_weights(self) -> Optional[Path]:
        """The shipped weights when this component reads the embedded MiniLM with the
        shipped architecture (``DEFAULT_MODEL``); else None, with a warning (W003) that
        the model starts untrained."""
        name = str(self._trf.model.attrs.get("name", ""))
        nlp = self._nlp_ref() if self._nlp_ref is not None else None
        section = None
        if nlp is not None and self.name in nlp.config.get("components", {}):
            section = nlp.config["components"][self.name].get("model")
        known = known_config(name) == CONFIGS / "minilm.cfg"
        if known and section is not None and _contains(section, DEFAULT_MODEL):
            return shipped_path("minilm")
        warnings.warn(Warnings.W003.format(model=name, component=self.name), stacklevel=3)
        return None

    def load_weights(self, path: Path) -> None:
        """Read trained weights written by ``to_disk`` (E107 when they do not fit this
        component's model), with the thresholds they were tuned with where this
        component's config leaves a threshold at its default (``DEFAULT_THRESHOLDS``),
        written into the pipeline's config too (``update_settings``). Every other setting
        (the transformer's name, ``paragraph_breaks``, ``overwrite``) stays as the config
        gives it."""
        if not (path / "model").exists():
            raise ValueError(Errors.E107.format(path=path, reason="it holds no 'model' file"))
        settings = path / "cfg"
        trained = json.loads(settings.read_text("utf8")) if settings.exists() else {}
        try:
            self.from_disk(path, exclude=["vocab", "cfg"])
        except ValueError as error:  # thinc: shapes or layers that do not match
            raise ValueError(Errors.E107.format(path=path, reason=error)) from None
        self.update_settings(
            {
                key: trained[key]
                for key, default in DEFAULT_THRESHOLDS.items()
                if key in trained and self.cfg.get(key) == default
            }
        )

    # -- serialization ----------------------------------------------------------------

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "AttnSenter":
        super().from_bytes(bytes_data, exclude=exclude)
        self.install_capture()
        return self

    def from_disk(
        self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()
    ) -> "AttnSenter":
        """The saved model and settings, but a setting the component was built with
        that differs from what the pipeline's config said when it was saved (an override
        given to ``spacy.load``, or an edit of the saved config.cfg) wins over the saved
        one (``_overridden_settings``)."""
        self.read_saved(
            Path(path), exclude, lambda: super(AttnSenter, self).from_disk(path, exclude=exclude)
        )
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        """The model and settings (spaCy's), and beside them the settings the
        pipeline's config gives this component (``CONFIG_SETTINGS``)."""
        super().to_disk(path, exclude=exclude)
        if CONFIG_SETTINGS not in exclude:
            self._write_config_settings(Path(path) / CONFIG_SETTINGS)


# Trained weights by model. SHIPPED: inside the package (package data); TRAINED: written
# by a project command to the assets folder (spacy_attnseg.assets), beside the model
SHIPPED = {"minilm": "attn_senter_minilm"}
TRAINED = {"mpnet": "attn_senter_mpnet"}


def _contains(section: Any, wanted: Any) -> bool:
    """Whether the config ``section`` has every setting of ``wanted`` (nested)."""
    if isinstance(wanted, dict):
        return isinstance(section, dict) and all(
            key in section and _contains(section[key], value) for key, value in wanted.items()
        )
    return bool(section == wanted)


@registry.misc("spacy-attnseg.shipped_senter.v1")
def shipped_senter(model: str = "minilm") -> str:
    """The folder of the trained ``attn_senter`` weights for ``model``, for
    ``[initialize.components.attn_senter] weights``: "minilm" (the embedded
    all-MiniLM-L6-v2) ships with the package; "mpnet" (all-mpnet-base-v2) is written to
    the assets folder by ``spacy project run mpnet`` (E109 says how when it is missing)."""
    if model in TRAINED:
        folder = shipped_path(model)
        if not (folder / "model").exists():
            raise OSError(Errors.E109.format(model=model, folder=folder))
        return str(folder)
    if model not in SHIPPED:
        raise ValueError(Errors.E108.format(model=model, known=sorted({*SHIPPED, *TRAINED})))
    return str(shipped_path(model))


def shipped_path(model: str = "minilm") -> Path:
    """Where the weights for ``model`` live: inside the package (``SHIPPED``) or in the
    assets folder (``TRAINED``)."""
    if model in TRAINED:
        return assets_root() / TRAINED[model]
    return Path(__file__).resolve().parent.parent / "data" / SHIPPED[model]


@registry.callbacks("spacy-attnseg.initialize_frozen.v1")
def create_initialize_frozen(
    components: Sequence[str] = ("transformer",),
) -> Callable[[Language], Language]:
    """An ``[initialize.before_init]`` callback that loads the weights of frozen
    spacy-transformers components.

    ``spacy train`` disables frozen components while it initializes the pipeline, so a
    frozen transformer that is not sourced from a saved pipeline would never load its
    Hugging Face weights. This callback initializes each named component that has no
    weights yet (a sourced or loaded one is left alone), and tells the listeners of the
    components after it (e.g. a ``senter`` on a ``TransformerListener``) the width.
    """

    def initialize_frozen(nlp: Language) -> Language:
        for name in components:
            pipe: Any = nlp.get_pipe(name)
            model = getattr(pipe, "model", None)
            if isinstance(model, Model) and model.attrs.get("has_transformer") is False:
                pipe.initialize(lambda: [], nlp=nlp)
                # A disabled component is not in nlp.pipeline, so initialize() did not
                # reach its listeners: give them the model's width now that it is known.
                if hasattr(pipe, "find_listeners"):
                    for _, proc in nlp.pipeline:
                        pipe.find_listeners(proc)
        return nlp

    return initialize_frozen


def settings(nlp: Language, name: str = "attn_senter") -> Dict[str, Any]:
    """The component's threshold, transformer and feature blocks, for reports."""
    pipe = nlp.get_pipe(name)
    assert isinstance(pipe, AttnSenter)
    spec = pipe.feature_spec
    return {
        "threshold": pipe.threshold,
        "threshold_no_punct": pipe.threshold_no_punct,
        "threshold_unmarked": pipe.threshold_unmarked,
        "transformer": pipe.cfg["transformer"],
        "features": {
            "colsums": spec.colsums,
            "similarities": spec.similarities,
            "similarity_layers": None
            if spec.similarity_layers is None
            else list(spec.similarity_layers),
            "context_layers": list(spec.context_layers),
            "hidden": spec.hidden,
            "doc_punct": spec.doc_punct,
            "words": pipe.model.has_ref("words"),
        },
    }
