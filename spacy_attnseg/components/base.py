"""What the components that read the transformer's captured data share.

* ``find_transformer``: the upstream spacy-transformers component, checked (E001, E002),
  also while it is disabled (``spacy train`` disables frozen components in ``initialize``).
* ``CaptureReader``: registers a component's ``CaptureRequest`` with the transformer's
  ``AttentionCapture`` so that it counts only while the component is in the running
  pipeline, and releases captured arrays after their last reader in the pipeline.
* ``AttentionPipe``: batched processing through the error handler and serialization of
  ``cfg`` (the state the config cannot rebuild, e.g. calibrated heads) for the
  components that are not trainable.
"""

import json
import weakref
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from spacy import util
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, Token
from spacy.util import minibatch

from ..capture import AttentionCapture, CaptureRequest, release
from ..errors import Errors, is_whole_number

_UNSET: Any = object()

#: The file beside a component's saved state that holds the settings its pipeline's
#: config gave it when it was saved.
CONFIG_SETTINGS = "config_settings"


def _as_json(value: Any) -> Any:
    """``value`` as JSON reads it back (tuples as lists), for comparing settings."""
    return json.loads(json.dumps(value))


#: The Doc extensions that ``install_score_extensions`` made, each holding one score per token.
SCORE_EXTENSIONS: List[str] = []


def install_score_extensions(doc_attr: str, token_attr: str) -> None:
    """A Doc extension ``doc_attr`` holding one score per token, a list of floats (None
    until a component sets it), and a Token extension ``token_attr`` reading the
    token's score from it; safe to call many times. The scores live in
    ``doc.user_data`` under the key spaCy gives a Doc extension's value, so
    ``Doc.to_bytes``, pickle and ``DocBin(store_user_data=True)`` keep them (they come
    back as a list whatever the serializer made of it). ``Doc.from_docs`` leaves them
    out with spaCy's one-line warning W101 (as for spacy-transformers' ``trf_data``),
    and ``Span.as_doc(copy_user_data=True)`` leaves them out too: neither can cut or
    join a per-Doc list, and a copied one would give the new Doc's tokens the scores
    of others."""
    if not Doc.has_extension(doc_attr):
        Doc.set_extension(doc_attr, getter=_DocScores(doc_attr), setter=_DocScores(doc_attr))
    if not Token.has_extension(token_attr):
        Token.set_extension(token_attr, getter=_TokenScore(doc_attr))
    if doc_attr not in SCORE_EXTENSIONS:
        SCORE_EXTENSIONS.append(doc_attr)


def doc_scores(doc: Doc) -> Dict[str, List[float]]:
    """The per-token scores the components set on ``doc``, by Doc extension name."""
    found = {name: getattr(doc._, name) for name in SCORE_EXTENSIONS}
    return {name: scores for name, scores in found.items() if scores is not None}


class _DocScores:
    """Getter and setter of a Doc's per-token scores in ``doc.user_data``."""

    def __init__(self, doc_attr: str) -> None:
        self.key = ("._.", doc_attr, None, None)

    def stored(self, doc: Doc) -> Optional[Sequence[float]]:
        """The scores as ``doc.user_data`` holds them (not copied), or None."""
        user_data: Dict[Any, Any] = doc.user_data
        return user_data.get(self.key)

    def __call__(self, doc: Doc, value: Any = _UNSET) -> Any:
        if value is _UNSET:
            stored = self.stored(doc)
            return None if stored is None else list(stored)
        user_data: Dict[Any, Any] = doc.user_data
        user_data[self.key] = None if value is None else [float(x) for x in value]
        return None


class _TokenScore:
    """The getter of a token's score from its Doc's per-token scores, read in place (a
    copy of the Doc's list per token would make a pass over the tokens quadratic)."""

    def __init__(self, doc_attr: str) -> None:
        self.scores = _DocScores(doc_attr)

    def __call__(self, token: Token) -> Any:
        stored = self.scores.stored(token.doc)
        return None if stored is None else stored[token.i]


def find_transformer(nlp: Language, transformer: str, component: str) -> Any:
    """The spacy-transformers component named ``transformer``; E001 when there is none,
    E002 when it is another kind of component."""
    if transformer not in nlp.component_names:
        raise ValueError(
            Errors.E001.format(name=transformer, component=component, pipe_names=nlp.pipe_names)
        )
    from spacy_transformers import Transformer

    pipe = nlp.get_pipe(transformer)
    if not isinstance(pipe, Transformer):
        kind = nlp.get_pipe_meta(transformer).factory
        raise ValueError(Errors.E002.format(name=transformer, kind=kind, component=component))
    return pipe


class PipelineRef:
    """A weak reference to the pipeline a component belongs to (the pipeline holds its
    components, so a strong one would make a cycle) that pickles and deep-copies with
    it: a copy of the pipeline (``pickle``, ``copy.deepcopy``, ``nlp.pipe(...,
    n_process=2)`` where processes start by spawning, as on macOS and Windows) refers
    to the copied pipeline, and a copy's components count as running in it."""

    def __init__(self, nlp: Optional[Language]) -> None:
        self._ref = weakref.ref(nlp) if nlp is not None else None

    def __call__(self) -> Optional[Language]:
        return self._ref() if self._ref is not None else None

    def __reduce__(self) -> Any:
        return (PipelineRef, (self(),))


class CaptureReader:
    """A component that reads arrays the transformer's capture hooks add to its output.

    Subclasses call ``attach(nlp)`` (which finds the transformer named in
    ``cfg["transformer"]`` and remembers the pipeline); ``register()`` then asks for the arrays, and
    ``release_if_last(doc, keys)`` drops them once no later running component reads them.
    """

    name: str
    cfg: Dict[str, Any]
    _trf: Any
    _nlp_ref: Optional[PipelineRef] = None
    _consumer: Optional[str] = None  # this component's key in the capture's requests

    def _overridden_settings(self, path: Path, exclude: Iterable[str]) -> Dict[str, Any]:
        """Settings the component was built with that differ from those its pipeline's
        config gave it when it was saved to ``path``: a ``spacy.load(DIR, config=...)``
        override or an edit of the saved config.cfg, either of which wins over the saved
        state. The config's settings at saving are those ``to_disk`` wrote beside the
        state (``CONFIG_SETTINGS``), or for a folder written before it did, the saved
        config.cfg's (which an edit changes too, so that only overrides are seen). Nothing
        where ``exclude`` holds "cfg": the saved settings are not read then."""
        if "cfg" in exclude:
            return {}
        written = path / CONFIG_SETTINGS
        if written.exists():
            saved = json.loads(written.read_text("utf8"))
        elif (path.parent / "config.cfg").exists():
            config = util.load_config(path.parent / "config.cfg", interpolate=False)
            saved = config.get("components", {}).get(self.name, {})
        else:
            return {}
        built = getattr(self, "config_cfg", {})
        return {
            key: value
            for key, value in built.items()
            if key in saved and _as_json(saved[key]) != _as_json(value) and key in self.cfg
        }

    def read_saved(self, path: Path, exclude: Iterable[str], read: Callable[[], Any]) -> None:
        """Read this component's saved state from ``path`` (``read``), then let the
        settings the config now gives otherwise win (``_overridden_settings``), and
        register the capture for them."""
        overridden = self._overridden_settings(path, exclude)
        read()
        self.cfg.update(overridden)
        self.install_capture()

    def install_capture(self) -> None:
        """Register what this component reads (``register``) and check that the
        transformer's model can give it."""
        raise NotImplementedError

    def _write_config_settings(self, path: Path) -> None:
        """The settings the pipeline's config gives this component (``config_cfg``),
        beside its saved state, for ``_overridden_settings``."""
        settings = getattr(self, "config_cfg", {})
        Path(path).write_text(json.dumps(settings, indent=2), "utf8")

    def checked_batch_size(self, batch_size: int) -> int:
        """``batch_size`` for ``pipe``, where it is an int of at least 1; else E129 (spaCy's
        ``minibatch`` makes no batch of fewer, and the transformer before would pass on
        no Doc: the texts would be lost without a word; it stops on any other type)."""
        if not is_whole_number(batch_size):
            raise ValueError(Errors.E129.format(component=self.name, value=batch_size))
        return batch_size

    def attach(self, nlp: Language) -> None:
        """Find the transformer this component reads and remember the pipeline (weakly),
        whose running components decide what is captured and when it is released."""
        self._trf = find_transformer(nlp, self.cfg["transformer"], self.name)
        self._nlp_ref = PipelineRef(nlp)

    def no_transformer_output(self) -> ValueError:
        """E001 for a Doc that reaches this component without the transformer's output
        (``doc._.trf_data``): the transformer is disabled, after this component, or
        gone. The message lists the running pipeline, and the disabled components."""
        nlp = self._nlp_ref() if self._nlp_ref is not None else None
        names: Any = "?" if nlp is None else nlp.pipe_names
        if nlp is not None and nlp.disabled:
            names = f"{names}; disabled: {nlp.disabled}"
        return ValueError(
            Errors.E001.format(name=self.cfg["transformer"], component=self.name, pipe_names=names)
        )

    def update_settings(self, settings: Dict[str, Any]) -> None:
        """Change settings (e.g. calibrated or trained ones) in the component and in its
        pipeline's config, so that ``nlp.config``, ``to_disk`` and ``spacy.load`` agree
        (a later ``spacy.load`` override is then told from the saved value)."""
        self.cfg.update(settings)
        self.config_cfg = {**getattr(self, "config_cfg", {}), **settings}
        nlp = self._nlp_ref() if self._nlp_ref is not None else None
        if nlp is not None and self.name in nlp.component_names:
            nlp.get_pipe_config(self.name).update(settings)

    def transformer_pipe(self) -> Any:
        """The spacy-transformers component this component reads."""
        return self._trf

    @property
    def capture(self) -> AttentionCapture:
        return AttentionCapture.attach(self._trf.model)

    def capture_request(self) -> CaptureRequest:
        raise NotImplementedError

    def is_running(self) -> bool:
        """Whether this component may run: not when its pipeline holds it disabled
        (``select_pipes``); True where that pipeline is unknown (a component used on its
        own) or no longer holds it (sourced into another pipeline with ``add_pipe(...,
        source=...)``, then removed from the first: it runs in the second)."""
        nlp = self._nlp_ref() if self._nlp_ref is not None else None
        if nlp is None:
            return True
        if any(proc is self for _, proc in nlp.pipeline):
            return True
        return not any(proc is self for _, proc in nlp.components)

    def register(self) -> None:
        """Ask the transformer's capture for what this component reads, under a key of
        this component's own: pipelines that share one transformer (``add_pipe(...,
        source=...)``) may each hold a component of the same name."""
        if self._consumer is None:
            self._consumer = f"{self.name}@{id(self):x}"
        self.capture.request(self._consumer, self.capture_request(), active=self.is_running)

    def later_readers(self, keys: Sequence[str]) -> bool:
        """Whether a running component after this one reads any of ``keys``."""
        nlp = self._nlp_ref() if self._nlp_ref is not None else None
        if nlp is None:
            return False
        seen = False
        for _, proc in nlp.pipeline:
            if proc is self:
                seen = True
            elif (
                seen
                and isinstance(proc, CaptureReader)
                and proc._trf is self._trf
                and proc.capture_request().reads(keys)
            ):
                return True
        return False

    def release_if_last(self, doc: Doc, keys: Sequence[str]) -> None:
        trf_data = getattr(doc._, "trf_data", None)
        if trf_data is not None and not self.later_readers(keys):
            release(trf_data.model_output, keys)


class AttentionPipe(CaptureReader, Pipe):
    """A non-trainable component over captured data: ``predict`` decides what
    ``set_annotations`` writes; ``cfg`` is saved by ``to_disk``/``to_bytes``."""

    cfg: Dict[str, Any]

    def predict(self, docs: Iterable[Doc]) -> Any:
        raise NotImplementedError

    def set_annotations(self, docs: Iterable[Doc], results: Any) -> None:
        raise NotImplementedError

    def __call__(self, doc: Doc) -> Doc:
        error_handler = self.get_error_handler()
        try:
            self.set_annotations([doc], self.predict([doc]))
        except Exception as e:
            error_handler(self.name, self, [doc], e)
        return doc

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        error_handler = self.get_error_handler()
        for batch in minibatch(stream, size=self.checked_batch_size(batch_size)):
            docs = list(batch)
            try:
                self.set_annotations(docs, self.predict(docs))
                yield from docs
            except Exception as e:
                error_handler(self.name, self, docs, e)

    # The settings go through the standard library's json, which reads back every float
    # exactly (srsly's fast parser reads 0.3 as 0.30000000000000004).
    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return json.dumps(self.cfg).encode("utf8")

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "AttentionPipe":
        self.cfg.update(json.loads(bytes_data))
        self.install_capture()
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        util.to_disk(
            path,
            {"cfg": self._write_cfg, CONFIG_SETTINGS: self._write_config_settings},
            exclude,
        )

    def _write_cfg(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.cfg, indent=2), "utf8")

    def from_disk(
        self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()
    ) -> "AttentionPipe":
        """The saved settings, but one the config now gives otherwise wins
        (``_overridden_settings``)."""
        readers = {"cfg": lambda p: self.cfg.update(json.loads(Path(p).read_text("utf8")))}
        self.read_saved(Path(path), exclude, lambda: util.from_disk(path, readers, exclude))
        return self

    def update_settings(self, settings: Dict[str, Any]) -> None:
        super().update_settings(settings)
        self.install_capture()
