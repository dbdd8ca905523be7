"""Capture what the components need from the transformer's own forward pass.

``AttentionCapture`` is attached once to a spacy-transformers ``TransformerModel``. It
wraps that model's forward function so that, before every pass, PyTorch hooks sit on the
Hugging Face module that will run (the module is rebuilt by ``from_bytes``/``from_disk``,
which drops hooks). The hooks compute, on the model's own device:

* the column sums of chosen heads' attention probabilities (queries restricted to real,
  non-special wordpieces; special and padding columns zeroed), from the query and key
  projections the model computes anyway, so the model keeps its fast attention kernel;
* the concatenated head outputs ``softmax(QK^T/sqrt(d))V`` of chosen layers (the input of
  the attention output projection);
* the input hidden state, queries, keys and values of chosen layers, from which a
  component computes that layer's attention again with a mask of its own
  (``attnseg_local``: the segmenter's attention within each sentence,
  ``spacy_attnseg.local``).

A forward hook on the model adds them to the returned ``ModelOutput``, so that
``FullTransformerBatch.split_by_doc`` slices them per Doc into ``doc._.trf_data``:

* ``attnseg_colsums``: ``(n_windows, n_heads_captured, L)`` float32;
* ``attnseg_colsum_heads``: ``(n_windows, n_heads_captured, 2)`` int32, the (layer, head)
  of each row;
* ``attnseg_context``: a tuple with one ``(n_windows, L, hidden)`` array per captured layer;
* ``attnseg_context_layers``: ``(n_windows, n_layers_captured)`` int32;
* ``attnseg_hidden``: ``(n_windows, L, hidden)``, the sum of the hidden states that the
  captured layers output (one array whatever the number of layers, so the memory kept
  per Doc is that of one layer);
* ``attnseg_hidden_layers``: ``(n_windows, n_layers_captured)`` int32;
* ``attnseg_local``: per captured layer, four ``(n_windows, L, hidden)`` arrays (the
  layer's input hidden state, queries, keys and values, ``LOCAL_PARTS``; in a batch
  whose arrays would exceed ``LOCAL_PROJECTION_BYTES`` each, the last three are
  ``(n_windows, 0, hidden)``, computed again from the input by their reader,
  ``spacy_attnseg.local``) and, for a family with a relative position bias (MPNet), two
  ``(n_windows, n_heads, L)`` arrays: the bias at key offsets ``0, 1, ...`` after the
  query and ``0, 1, ...`` before it;
* ``attnseg_local_layers``: ``(n_windows, n_layers_captured)`` int32.

Several components may request captures from the same transformer; the hooks compute
the union of their requests.
"""

import functools
import math
import os
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple, Union

import torch
from thinc.api import Model

from .errors import Errors
from .families import Family, get_family, n_layers_heads, supported_model_types
from .windows import FittedSpans

#: Every capturing forward function, whose pass lock a forked child makes anew.
_FORWARDS: "weakref.WeakSet[_CapturingForward]" = weakref.WeakSet()


def _forked_child() -> None:
    """A forked child (``nlp.pipe(n_process=...)``) runs torch on one thread: torch's
    OpenMP pool does not survive a fork, and a child that used the parent's pool would
    wait on it forever. Each process running one thread is also what several processes
    on one machine want. Its transformers' pass locks are made anew: one that another
    thread of the parent held at the fork would be held in the child for ever."""
    torch.set_num_threads(1)
    for forward in list(_FORWARDS):
        forward._lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked_child)

COLSUMS = "attnseg_colsums"
COLSUM_HEADS = "attnseg_colsum_heads"
CONTEXT = "attnseg_context"
CONTEXT_LAYERS = "attnseg_context_layers"
HIDDEN = "attnseg_hidden"
HIDDEN_LAYERS = "attnseg_hidden_layers"
LOCAL = "attnseg_local"
LOCAL_LAYERS = "attnseg_local_layers"
#: What ``attnseg_local`` holds per layer, in order (then the two position bias arrays,
#: ``BIAS_PARTS``, for a family that has one).
LOCAL_PARTS = ("input", "query", "key", "value")
#: Above this many bytes per captured array of a batch, ``attnseg_local`` keeps only a
#: layer's input: its queries, keys and values (three more arrays of that size, padded to
#: the batch's longest window) are left empty and computed again by their reader on the
#: real rows (three more projections a wordpiece, about 3% of the pass on MiniLM). A
#: batch of short Docs keeps all four; a 100,000-token Doc (about 800 MB an array) keeps
#: one.
LOCAL_PROJECTION_BYTES = 1 << 27
BIAS_PARTS = ("bias_after", "bias_before")
#: The name of a layer's input hidden state where a family passes it by keyword.
LAYER_INPUT = ("hidden_states", "hidden_state", "x")
#: The outputs that are read, and released, together.
CAPTURED_GROUPS = (
    (COLSUMS, COLSUM_HEADS),
    (CONTEXT, CONTEXT_LAYERS),
    (HIDDEN, HIDDEN_LAYERS),
    (LOCAL, LOCAL_LAYERS),
)
#: The windows of one chunk: a slice of the batch, or their indices in it.
Rows = Union[slice, torch.Tensor]


@dataclass(frozen=True)
class CaptureRequest:
    """What one component needs from the pass, before the model's size is known.

    ``colsum_layers``: layers whose heads' column sums it reads (``None``: all layers);
    ``colsum_heads``: which heads of those layers (empty: all heads);
    ``context_layers``: layers whose head outputs it reads (``None``: all layers);
    ``hidden_layers``: layers whose output hidden states it reads (``None``: all layers);
    ``hidden_last``: also the output hidden states of the last ``hidden_last`` layers
    (all of them in a model with fewer layers);
    ``local_layers``: layers whose input hidden state, queries and keys and values it
    reads (``attnseg_local``);
    ``on_device``: it computes with the captured arrays on the model's device
    (``attn_head_pairs``' similarity matrices). Otherwise, on a GPU, each captured array
    is copied to the CPU once per batch, where the components pool it Doc by Doc.
    Negative layers count from the end, as in Python.
    """

    colsum_layers: Optional[Tuple[int, ...]] = ()
    colsum_heads: Tuple[int, ...] = ()
    context_layers: Optional[Tuple[int, ...]] = ()
    hidden_layers: Optional[Tuple[int, ...]] = ()
    hidden_last: int = 0
    local_layers: Tuple[int, ...] = ()
    on_device: bool = False

    def reads(self, keys: Sequence[str]) -> bool:
        """Whether this request makes the hooks add any of the output ``keys``."""
        wanted = set(keys)
        colsums = self.colsum_layers is None or bool(self.colsum_layers)
        context = self.context_layers is None or bool(self.context_layers)
        hidden = self.hidden_layers is None or bool(self.hidden_layers) or self.hidden_last > 0
        return bool(
            (colsums and wanted & {COLSUMS, COLSUM_HEADS})
            or (context and wanted & {CONTEXT, CONTEXT_LAYERS})
            or (hidden and wanted & {HIDDEN, HIDDEN_LAYERS})
            or (self.local_layers and wanted & {LOCAL, LOCAL_LAYERS})
        )

    def resolve(self, n_layers: int, n_heads: int) -> "Resolved":
        """The (layer, head) pairs and context layers, checked against the model."""
        layers = range(n_layers) if self.colsum_layers is None else self.colsum_layers
        heads = self.colsum_heads or tuple(range(n_heads))
        pairs = check_layers_heads([(l_, h) for l_ in layers for h in heads], n_layers, n_heads)
        context = range(n_layers) if self.context_layers is None else self.context_layers
        context_pairs = check_layers_heads([(l_, 0) for l_ in context], n_layers, n_heads)
        hidden = list(range(n_layers) if self.hidden_layers is None else self.hidden_layers)
        hidden += list(range(max(0, n_layers - self.hidden_last), n_layers))
        hidden_pairs = check_layers_heads([(l_, 0) for l_ in hidden], n_layers, n_heads)
        local_pairs = check_layers_heads([(l_, 0) for l_ in self.local_layers], n_layers, n_heads)
        return Resolved(
            frozenset(pairs),
            frozenset(layer for layer, _ in context_pairs),
            frozenset(layer for layer, _ in hidden_pairs),
            frozenset(layer for layer, _ in local_pairs),
            self.on_device,
        )


@dataclass(frozen=True)
class Resolved:
    """A request resolved against a model: (layer, head) pairs and context layers."""

    colsum_heads: FrozenSet[Tuple[int, int]] = frozenset()
    context_layers: FrozenSet[int] = frozenset()
    hidden_layers: FrozenSet[int] = frozenset()
    local_layers: FrozenSet[int] = frozenset()
    on_device: bool = False

    def __or__(self, other: "Resolved") -> "Resolved":
        return Resolved(
            self.colsum_heads | other.colsum_heads,
            self.context_layers | other.context_layers,
            self.hidden_layers | other.hidden_layers,
            self.local_layers | other.local_layers,
            self.on_device or other.on_device,
        )


def special_ids(tokenizer: Any) -> List[int]:
    """Ids of the tokenizer's special tokens ([CLS], [SEP], [PAD], ...), except the
    unknown token, which stands for real text."""
    return sorted(set(tokenizer.all_special_ids) - {tokenizer.unk_token_id})


# Whitespace to spaCy (``str.isspace``: it splits tokens there) that BERT's normalizer
# deletes as control characters, joining the words on either side ("end\x0cstart" reaches
# the model as "endstart"): a vertical tab, a form feed, the information separators, NEL
SPACES_DELETED = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"


def read_spaces_as_spaces(tokenizer: Any) -> None:
    """Have a fast ``tokenizer`` whose normalizer deletes any of ``SPACES_DELETED`` read
    each of those as a space first (one character for one, so the offsets that align
    wordpieces to spaCy's tokens stay). Nothing changes for a slow tokenizer, for one
    without a normalizer, or for one that keeps them (so a second call changes nothing)."""
    backend: Any = getattr(tokenizer, "backend_tokenizer", None)
    normalizer = getattr(backend, "normalizer", None)
    if normalizer is None:
        return
    joined = normalizer.normalize_str("ab")
    deleted = [c for c in SPACES_DELETED if normalizer.normalize_str(f"a{c}b") == joined]
    if deleted:
        from tokenizers import Regex, normalizers

        spaces = normalizers.Replace(Regex("[" + "".join(deleted) + "]"), " ")
        backend.normalizer = normalizers.Sequence([spaces, normalizer])


def keep_mask(input_ids: Any, attention_mask: Any, special_ids: Any) -> Any:
    """True for real wordpieces that are not special tokens; works for torch and xp."""
    if isinstance(input_ids, torch.Tensor):
        special = torch.isin(input_ids, special_ids)
        return (attention_mask > 0) & ~special
    xp = _array_module(input_ids)
    special = xp.isin(input_ids, xp.asarray(special_ids))
    return (attention_mask > 0) & ~special


def column_sums(probs: Any, keep: Any) -> Any:
    """Column sums of attention maps ``probs`` (..., L, L) over the kept query rows, with
    columns that are not kept zeroed. ``keep`` is (batch, L) and broadcasts over heads;
    it is moved to the device of ``probs`` (the wordpieces stay on the CPU when the maps
    are on a GPU)."""
    if isinstance(probs, torch.Tensor):
        keep_f = torch.as_tensor(keep, device=probs.device).to(probs.dtype)
    else:
        keep_f = _array_module(probs).asarray(keep).astype(probs.dtype)
    # one matrix-vector product per head (no masked copy of the maps)
    sums = (keep_f[:, None, None, :] @ probs)[:, :, 0, :]
    return sums * keep_f[:, None, :]


def _array_module(array: Any) -> Any:
    from thinc.api import get_array_module

    return get_array_module(array)


@dataclass
class _PassState:
    """What the hooks collect during one forward pass, chunk by chunk of windows (see
    :class:`_ChunkedForward`): each captured array is allocated for the whole batch
    (``n_rows`` windows of ``width`` padded wordpieces) at the first chunk and filled at
    the chunk's ``rows``, in its first ``length`` positions."""

    attention_mask: Optional[torch.Tensor] = None
    keep: Optional[torch.Tensor] = None
    n_rows: int = 0
    width: int = 0
    rows: Rows = field(default_factory=lambda: slice(None))
    length: Optional[int] = None
    queries: Dict[int, torch.Tensor] = field(default_factory=dict)
    keys: Dict[int, torch.Tensor] = field(default_factory=dict)
    colsums: Dict[int, torch.Tensor] = field(default_factory=dict)
    context: Dict[int, torch.Tensor] = field(default_factory=dict)
    # one entry, 0: the batch's sum of the captured layers' hidden states
    hidden: Dict[int, torch.Tensor] = field(default_factory=dict)
    # the chunk's sum of the captured layers' hidden states so far (written to ``hidden``
    # at the last captured layer)
    hidden_sum: Optional[torch.Tensor] = None
    hidden_layers: Set[int] = field(default_factory=set)
    # (layer, part of LOCAL_PARTS or BIAS_PARTS): the batch's captured array
    local: Dict[Tuple[int, str], torch.Tensor] = field(default_factory=dict)
    # (heads, L, L): the chunk's relative position bias (MPNet), added to every layer
    position_bias: Optional[torch.Tensor] = None

    def chunk_rows(self) -> int:
        """The number of windows in the chunk."""
        if isinstance(self.rows, slice):
            return len(range(self.n_rows)[self.rows])
        return int(self.rows.shape[0])

    def chunk_of(self, per_window: torch.Tensor) -> torch.Tensor:
        """The chunk's part of a ``(n_rows, width)`` array of the batch."""
        return per_window[self.rows, : self.length]

    def fill(
        self,
        store: Dict[Any, torch.Tensor],
        key: Any,
        value: torch.Tensor,
        length_dims: Tuple[int, ...],
    ) -> None:
        """Write a chunk's ``value`` into ``store[key]`` (see :func:`_fill_rows`)."""
        _fill_rows(store, key, value, (self.n_rows, self.width), self.rows, length_dims)


#: Padded wordpieces per chunk of windows that the model runs at a time when a component
#: captures from it (a batch of many windows, e.g. one long Doc, runs in chunks, so that
#: the attention maps and intermediate activations of only one chunk are in memory at
#: once; outputs and captured arrays are written into one array for the batch).
CHUNK_WORDPIECES = 8192
#: A chunk holds windows with at least this share of its longest window's wordpieces:
#: windows run sorted by length, each chunk padded to its own longest window only (a
#: spacy-transformers batch pads every window to the batch's longest). On the CPU only
#: (:func:`length_share`).
CHUNK_LENGTH_SHARE = 0.8


def length_share(device: torch.device) -> float:
    """The length share of a chunk (:data:`CHUNK_LENGTH_SHARE`) for windows on
    ``device``. On the CPU padding costs its share of the time, so windows of similar
    length run together. On a GPU padding costs little next to more, smaller calls
    (``scripts/gpu_check.py`` on an H100: the pass in chunks by length took 1.63x the
    plain transformer over UD EWT test), so windows are cut only by
    :data:`CHUNK_WORDPIECES`, which bounds memory: a batch within it runs as it is."""
    return CHUNK_LENGTH_SHARE if device.type == "cpu" else 0.0


class _CheckRef:
    """A consumer's ``active`` check, held weakly where it is a bound method (so that
    the capture keeps no component alive); calling it gives the check, or None once its
    component is gone. It pickles and deep-copies with the component it refers to."""

    def __init__(self, check: Callable[[], bool]) -> None:
        self._set(check)

    def _set(self, check: Callable[[], bool]) -> None:
        self._ref: Callable[[], Optional[Callable[[], bool]]]
        if hasattr(check, "__self__"):
            self._ref = weakref.WeakMethod(check)  # type: ignore[arg-type]
        else:
            self._ref = lambda: check

    def __call__(self) -> Optional[Callable[[], bool]]:
        return self._ref()

    def __getstate__(self) -> Dict[str, Any]:
        return {"check": self._ref()}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self._set(state["check"])


class AttentionCapture:
    """Hooks on a Hugging Face encoder that compute the requested per-window numbers.

    Use ``AttentionCapture.attach(transformer_model)`` to get the one instance of a
    spacy-transformers ``TransformerModel``; components then call ``request``.
    """

    ATTR = "attnseg_capture"

    def __init__(self) -> None:
        self.requests: Dict[str, CaptureRequest] = {}
        self._active: Dict[str, _CheckRef] = {}
        self._handles: List[Any] = []
        self._chunked: Optional[Any] = None
        self._installed_on: Optional[int] = None
        self._installed_request: Optional[Resolved] = None
        self._state = _PassState()
        self._special_ids: Optional[torch.Tensor] = None
        self._n_heads = 0
        self._head_dim = 0
        self.forward_calls = 0

    # -- attaching to a spacy-transformers model --------------------------------------

    @classmethod
    def attach(cls, trf_model: Model) -> "AttentionCapture":
        """Return the capture of ``trf_model``, wrapping its forward function once."""
        capture = trf_model.attrs.get(cls.ATTR)
        if isinstance(capture, AttentionCapture):
            return capture
        capture = cls()
        trf_model.attrs[cls.ATTR] = capture
        trf_model._func = _CapturingForward(trf_model._func, capture)
        if "get_spans" in trf_model.attrs:
            trf_model.attrs["get_spans"] = FittedSpans(trf_model.attrs["get_spans"], trf_model)
        return capture

    def request(
        self,
        consumer: str,
        request: CaptureRequest,
        *,
        active: Optional[Callable[[], bool]] = None,
    ) -> None:
        """Register what ``consumer`` reads. ``active`` tells, before each pass, whether
        the consumer will run (a component disabled by ``select_pipes`` is not); an
        inactive consumer's request is left out of the pass. A bound method is held
        weakly: once its component is gone (removed from its pipeline and dropped), its
        request is withdrawn."""
        self.requests[consumer] = request
        if active is None:
            self._active.pop(consumer, None)
        else:
            self._active[consumer] = _CheckRef(active)

    def withdraw(self, consumer: str) -> None:
        self.requests.pop(consumer, None)
        self._active.pop(consumer, None)

    def active_requests(self) -> Dict[str, CaptureRequest]:
        """The requests of the consumers that will run (withdrawing those whose
        component is gone)."""
        running = {name: self._will_run(name) for name in list(self.requests)}
        for name, state in running.items():
            if state is None:
                self.withdraw(name)
        return {name: self.requests[name] for name, state in running.items() if state}

    def _will_run(self, consumer: str) -> Optional[bool]:
        """Whether ``consumer`` will run (True without an ``active`` check); None where
        its component is gone."""
        reference = self._active.get(consumer)
        if reference is None:
            return True
        check = reference()
        return None if check is None else bool(check())

    def union(self, n_layers: int, n_heads: int) -> Resolved:
        total = Resolved()
        for request in self.active_requests().values():
            total = total | request.resolve(n_layers, n_heads)
        return total

    # -- hooks ------------------------------------------------------------------------

    def ensure_hooks(self, hf_model: Any, tokenizer: Any) -> None:
        """Put the hooks for the current requests on ``hf_model`` unless already there."""
        n_layers, n_heads = n_layers_heads(hf_model)
        request = self.union(n_layers, n_heads)
        if self._installed_on == id(hf_model) and self._installed_request == request:
            return
        self.remove_hooks()
        self._n_heads = n_heads
        self._head_dim = hf_model.config.hidden_size // n_heads
        device = next(hf_model.parameters()).device
        self._special_ids = torch.tensor(special_ids(tokenizer), dtype=torch.long, device=device)
        handles = [
            hf_model.register_forward_pre_hook(self._begin_pass, with_kwargs=True),
            hf_model.register_forward_hook(self._end_pass),
        ]
        colsum_layers = hooked_colsum_layers(hf_model, request)
        # Hidden states are optional: a family the hooks do not know is still read
        # through its ``last_hidden_state`` (see ``components.segmenter``).
        family = check_capturable(hf_model, request) or get_family(hf_model)
        if family is not None:
            modules = family.layers(hf_model)
            local_layers = sorted(request.local_layers)
            if family.position_bias is not None and (colsum_layers or local_layers):
                handles.append(
                    family.position_bias(hf_model).register_forward_hook(self._on_position_bias)
                )
            # Each hook is a method of the capture bound to its layer with
            # functools.partial (not a closure), so a module that carries the hooks
            # pickles: a pickled pipeline, ``nlp.pipe(..., n_process=2)`` where workers
            # spawn.
            partial = functools.partial
            for layer in colsum_layers:
                for module, is_key in ((modules[layer].query, False), (modules[layer].key, True)):
                    handles.append(
                        module.register_forward_hook(partial(self._on_qk, layer, is_key))
                    )
            for layer in sorted(request.context_layers):
                hook = partial(self._on_context, layer)
                handles.append(modules[layer].output.register_forward_pre_hook(hook))
            for layer in sorted(request.hidden_layers):
                last = layer == max(request.hidden_layers)
                hook = partial(self._on_hidden, layer, family.hidden_state, last)
                handles.append(modules[layer].block.register_forward_hook(hook))
            for layer in local_layers:
                hook = partial(self._on_layer_input, layer)
                handles.append(
                    modules[layer].block.register_forward_pre_hook(hook, with_kwargs=True)
                )
                for part in LOCAL_PARTS[1:]:
                    module = getattr(modules[layer], part)
                    handles.append(
                        module.register_forward_hook(partial(self._on_local, layer, part))
                    )
        if family is not None:
            hf_model.forward = _ChunkedForward(hf_model, self)
            self._chunked = hf_model
        self._handles = handles
        self._installed_on = id(hf_model)
        self._installed_request = request

    def remove_hooks(self) -> None:
        for handle in self._handles:
            handle.remove()
        if self._chunked is not None:
            self._chunked.__dict__.pop("forward", None)
            self._chunked = None
        self._handles = []
        self._installed_on = None
        self._installed_request = None

    def _begin_pass(self, module: Any, args: Tuple, kwargs: Dict[str, Any]) -> None:
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        attention_mask = kwargs.get("attention_mask")
        if attention_mask is None and input_ids is not None:
            attention_mask = torch.ones_like(input_ids)
        self.forward_calls += 1
        n_rows, width = attention_mask.shape if attention_mask is not None else (0, 0)
        self._state = _PassState(attention_mask=attention_mask, n_rows=n_rows, width=width)
        if input_ids is not None and self._special_ids is not None:
            self._state.keep = keep_mask(input_ids, attention_mask, self._special_ids)

    def _on_qk(
        self, layer: int, is_key: bool, module: Any, args: Tuple, output: torch.Tensor
    ) -> None:
        state = self._state
        (state.keys if is_key else state.queries)[layer] = output
        if layer in state.queries and layer in state.keys:
            colsums = self._layer_colsums(state.queries.pop(layer), state.keys.pop(layer), layer)
            state.fill(state.colsums, layer, colsums, length_dims=(2,))

    def _on_position_bias(self, module: Any, args: Tuple, output: torch.Tensor) -> None:
        # (L, L, heads) -> (heads, L, L), as the scores are laid out
        state = self._state
        bias = output.detach().permute(2, 0, 1).float()
        state.position_bias = bias
        if self._installed_request is None:
            return
        # the bias depends only on the key's offset from the query: its first row holds
        # the offsets 0, 1, ... after the query, its first column those before it
        n_rows = state.chunk_rows()
        for layer in self._installed_request.local_layers:
            for part, values in zip(BIAS_PARTS, (bias[:, 0, :], bias[:, :, 0]), strict=True):
                rows = values[None].expand(n_rows, -1, -1)
                state.fill(state.local, (layer, part), rows, length_dims=(2,))

    def _on_context(self, layer: int, module: Any, args: Tuple) -> None:
        state = self._state
        state.fill(state.context, layer, args[0].detach(), length_dims=(1,))

    def _on_layer_input(self, layer: int, module: Any, args: Tuple, kwargs: Dict[str, Any]) -> None:
        state = self._state
        if state.attention_mask is None:  # the module called outside a pass
            return
        hidden = args[0] if args else next(kwargs[k] for k in LAYER_INPUT if k in kwargs)
        state.fill(state.local, (layer, "input"), hidden.detach(), length_dims=(1,))

    def _on_local(
        self, layer: int, part: str, module: Any, args: Tuple, output: torch.Tensor
    ) -> None:
        state = self._state
        if state.attention_mask is None:  # the module called outside a pass
            return
        size = state.n_rows * state.width * output.shape[-1] * output.element_size()
        if size <= LOCAL_PROJECTION_BYTES:
            state.fill(state.local, (layer, part), output.detach(), length_dims=(1,))

    def _on_hidden(
        self,
        layer: int,
        hidden_state: Callable[[Any], torch.Tensor],
        last: bool,
        module: Any,
        args: Tuple,
        output: Any,
    ) -> None:
        hidden = hidden_state(output).detach()
        state = self._state
        if state.hidden_sum is not None:
            hidden = state.hidden_sum + hidden
        if last:
            state.fill(state.hidden, 0, hidden, length_dims=(1,))
            state.hidden_sum = None
        else:
            state.hidden_sum = hidden
        state.hidden_layers.add(layer)

    def _layer_colsums(self, query: torch.Tensor, key: torch.Tensor, layer: int) -> torch.Tensor:
        assert self._installed_request is not None
        heads = sorted(h for (l_, h) in self._installed_request.colsum_heads if l_ == layer)
        state = self._state
        assert state.attention_mask is not None and state.keep is not None
        batch, length, _ = query.shape
        q = query.view(batch, length, self._n_heads, self._head_dim)
        k = key.view(batch, length, self._n_heads, self._head_dim)
        if len(heads) < self._n_heads:
            q, k = q[:, :, heads], k[:, :, heads]
        # the scale goes on the queries (B, H, L, d), the smaller operand
        q = q.permute(0, 2, 1, 3).float() * (1.0 / math.sqrt(self._head_dim))
        k = k.permute(0, 2, 1, 3).float()
        scores = torch.matmul(q, k.transpose(-1, -2))
        if state.position_bias is not None:
            bias = state.position_bias
            scores += (bias[heads] if len(heads) < self._n_heads else bias)[None]
        pad = (state.chunk_of(state.attention_mask) == 0)[:, None, None, :]
        scores.masked_fill_(pad, torch.finfo(scores.dtype).min)
        probs = torch.softmax(scores, dim=-1)
        return column_sums(probs, state.chunk_of(state.keep))

    def _end_pass(self, module: Any, args: Tuple, output: Any) -> None:
        state = self._state
        self._state = _PassState()
        request = self._installed_request or Resolved()
        place = _placement(request)
        heads = sorted(request.colsum_heads)
        layers_needed = {layer for layer, _ in heads}
        computed = layers_needed and layers_needed <= set(state.colsums)
        if computed and getattr(output, "attentions", None) is None:
            colsums = state.colsums
            batch = next(iter(colsums.values())).shape[0]
            per_layer = {layer: sorted(h for (l_, h) in heads if l_ == layer) for layer in colsums}
            rows = [colsums[layer][:, per_layer[layer].index(h)] for layer, h in heads]
            output[COLSUMS] = place(torch.stack(rows, dim=1))
            index = torch.tensor(heads, dtype=torch.int32, device=output[COLSUMS].device)
            output[COLSUM_HEADS] = index[None].expand(batch, -1, -1).contiguous()
        if state.context:
            layers = sorted(state.context)
            tensors = tuple(place(state.context.pop(layer)) for layer in layers)
            batch = tensors[0].shape[0]
            output[CONTEXT] = tensors
            index = torch.tensor(layers, dtype=torch.int32, device=tensors[0].device)
            output[CONTEXT_LAYERS] = index[None].expand(batch, -1).contiguous()
        if state.hidden:
            hidden = place(state.hidden[0])
            batch = hidden.shape[0]
            output[HIDDEN] = hidden
            layers = sorted(state.hidden_layers)
            index = torch.tensor(layers, dtype=torch.int32, device=hidden.device)
            output[HIDDEN_LAYERS] = index[None].expand(batch, -1).contiguous()
        if state.local:
            layers = sorted({layer for layer, _ in state.local})
            parts = LOCAL_PARTS + (BIAS_PARTS if (layers[0], BIAS_PARTS[0]) in state.local else ())
            for layer in layers:  # (left empty where the batch is large: LOCAL_PROJECTION_BYTES)
                given = state.local[(layer, "input")]
                for part in LOCAL_PARTS[1:]:
                    state.local.setdefault(
                        (layer, part), given.new_empty((len(given), 0, given.shape[-1]))
                    )
            tensors = tuple(place(state.local.pop((layer, p))) for layer in layers for p in parts)
            batch = tensors[0].shape[0]
            output[LOCAL] = tensors
            index = torch.tensor(layers, dtype=torch.int32, device=tensors[0].device)
            output[LOCAL_LAYERS] = index[None].expand(batch, -1).contiguous()


def _placement(request: Resolved) -> Callable[[torch.Tensor], torch.Tensor]:
    """Where the pass leaves its captured arrays: on the model's device for a consumer
    that computes with them there (``Resolved.on_device``), else on the CPU. The
    components that pool them per Doc then read host memory, as on a CPU, rather than
    paying two transfers and a kernel launch for each small gather (one H100, EWT test:
    about a fifth of the default pipeline's time beside the transformer)."""
    if request.on_device:
        return lambda tensor: tensor
    return lambda tensor: tensor.cpu()


#: The dimensions of a Hugging Face encoder's outputs that run along the window's
#: wordpieces (the batch's rows are dimension 0).
OUTPUT_LENGTH_DIMS: Dict[str, Tuple[int, ...]] = {
    "last_hidden_state": (1,),
    "pooler_output": (),
    "hidden_states": (1,),
    "attentions": (2, 3),
}


def plan_chunks(lengths: Sequence[int], budget: int, share: float) -> List[Tuple[List[int], int]]:
    """Windows (their wordpiece counts ``lengths``) in chunks to run one at a time:
    ``(windows, length)`` per chunk, longest windows first. A chunk's windows have at
    least ``share`` of the wordpieces of its longest, ``length``, and ``length`` times
    their number is at most ``budget`` (a longer window runs alone)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    chunks: List[Tuple[List[int], int]] = []
    start = 0
    while start < len(order):
        longest = max(1, int(lengths[order[start]]))
        end = start + 1
        while (
            end < len(order)
            and (end - start + 1) * longest <= budget
            and lengths[order[end]] >= share * longest
        ):
            end += 1
        chunks.append((order[start:end], longest))
        start = end
    return chunks


def right_padded_lengths(attention_mask: Any, width: int) -> Optional[List[int]]:
    """Each window's wordpiece count when every window's wordpieces come first and its
    padding after them (as spacy-transformers' tokenizers pad); None otherwise."""
    if not isinstance(attention_mask, torch.Tensor) or attention_mask.dim() != 2:
        return None
    real = attention_mask != 0
    lengths = real.sum(dim=1)
    positions = torch.arange(width, device=real.device)
    if not torch.equal(real, positions[None, :] < lengths[:, None]):
        return None
    return [int(length) for length in lengths.tolist()]


def _rows(windows: List[int], device: Any) -> Rows:
    """A chunk's windows as a slice where they are consecutive, else as indices."""
    if windows == list(range(windows[0], windows[-1] + 1)):
        return slice(windows[0], windows[-1] + 1)
    return torch.tensor(windows, dtype=torch.long, device=device)


class _ChunkedForward:
    """The forward method of a Hugging Face encoder, run on chunks of windows
    (:func:`plan_chunks`: at most :data:`CHUNK_WORDPIECES` padded wordpieces, windows of
    similar length, each chunk padded to its own longest window) with the outputs
    written back into one array per output for the batch, in the batch's order and
    width. Windows do not attend to each other and padding is masked, so each window's
    outputs at its wordpieces are those of the whole batch (up to the last bit of float
    rounding, which the size of a BLAS call may change, as the batch's composition
    already does); positions past a window's wordpieces hold no output of the model.
    Windows padded otherwise than at the end run in the batch's order and width."""

    def __init__(self, module: Any, capture: "AttentionCapture") -> None:
        self.module = module
        self.capture = capture

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The module's own forward method (its class's: this object replaces it)."""
        return type(self.module).forward(self.module, *args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        input_ids = kwargs.get("input_ids")
        if args or not isinstance(input_ids, torch.Tensor) or input_ids.dim() != 2:
            return self.forward(*args, **kwargs)
        n_rows, width = input_ids.shape
        lengths = right_padded_lengths(kwargs.get("attention_mask"), width)
        chunks = plan_chunks(
            lengths if lengths is not None else [width] * n_rows,
            CHUNK_WORDPIECES,
            length_share(input_ids.device),
        )
        if len(chunks) == 1 and chunks[0][1] == width:
            return self.forward(**kwargs)
        state = self.capture._state
        merged: Dict[Any, Any] = {}
        first: Any = None
        for windows, length in chunks:
            rows = _rows(windows, input_ids.device)
            state.rows, state.length = rows, length
            part = {
                key: _chunk_input(value, rows, length, (n_rows, width))
                for key, value in kwargs.items()
            }
            output = self.forward(**part)
            first = first if first is not None else output
            # each output written into one tensor for the batch (no list of chunks)
            for key, value in output.items():
                if key not in OUTPUT_LENGTH_DIMS:
                    raise ValueError(Errors.E120.format(key=key, known=sorted(OUTPUT_LENGTH_DIMS)))
                dims = OUTPUT_LENGTH_DIMS[key]
                if isinstance(value, torch.Tensor):
                    _fill_rows(merged, key, value, (n_rows, width), rows, dims)
                elif isinstance(value, tuple):
                    for k, item in enumerate(value):
                        _fill_rows(merged, (key, k), item, (n_rows, width), rows, dims)
                else:
                    merged.setdefault(key, value)
        state.rows, state.length = slice(None), None
        values: Dict[str, Any] = {}
        for key, value in first.items():
            if isinstance(value, tuple):
                values[key] = tuple(merged[(key, k)] for k in range(len(value)))
            else:
                values[key] = merged[key]
        return type(first)(**values)


def _chunk_input(value: Any, rows: Rows, length: int, batch: Tuple[int, int]) -> Any:
    """A chunk's part of a forward argument: its rows, and its first ``length``
    positions of a per-wordpiece argument (ids, masks, positions)."""
    if not isinstance(value, torch.Tensor) or value.shape[:1] != batch[:1]:
        return value
    if value.shape[:2] == batch:
        return value[rows, :length]
    return value[rows]


def _fill_rows(
    store: Dict[Any, Any],
    key: Any,
    value: Any,
    batch: Tuple[int, int],
    rows: Rows,
    length_dims: Tuple[int, ...],
) -> None:
    """Write a chunk's ``value`` (its ``rows`` of a batch of ``batch = (n_rows, width)``
    windows; ``length_dims`` run along the chunk's wordpieces) into ``store[key]``,
    allocated for the whole batch on first use and zero where no chunk writes. A chunk
    that is the whole batch, in its order and width, is stored as is."""
    n_rows, width = batch
    in_order = isinstance(rows, slice) and range(n_rows)[rows] == range(n_rows)
    if in_order and all(value.shape[d] == width for d in length_dims):
        store[key] = value
        return
    if key not in store:
        shape = list(value.shape)
        shape[0] = n_rows
        for d in length_dims:
            shape[d] = width
        store[key] = value.new_zeros(shape)
    index: List[Any] = [rows] + [slice(None)] * (value.dim() - 1)
    for d in length_dims:
        index[d] = slice(0, value.shape[d])
    store[key][tuple(index)] = value


class _CapturingForward:
    """The forward function of a spacy-transformers model with the hooks ensured, one
    pass at a time: the capture keeps one pass's state, and the Hugging Face fast
    tokenizer the pass calls cannot be used by two threads at once ("Already
    borrowed"), so a pipeline called from several threads (a web server's workers) runs
    its transformer passes in turn."""

    def __init__(self, forward: Callable, capture: AttentionCapture) -> None:
        self.forward = forward
        self.capture = capture
        self._lock = threading.Lock()
        _FORWARDS.add(self)

    def __reduce__(self) -> Any:
        # (a copy makes its own lock: a lock does not pickle)
        return (_CapturingForward, (self.forward, self.capture))

    def __call__(self, model: Any, docs: Sequence[Any], is_train: bool) -> Any:
        with self._lock:
            return self._run(model, docs, is_train)

    def _run(self, model: Any, docs: Sequence[Any], is_train: bool) -> Any:
        if model.attrs.get("has_transformer"):
            read_spaces_as_spaces(model.tokenizer)
            if self.capture.requests:
                # (with no active request the hooks are still refreshed: they compute nothing)
                self.capture.ensure_hooks(model.transformer, model.tokenizer)
        try:
            return self.forward(model, docs, is_train)
        except torch.OutOfMemoryError as error:
            self.capture._state = _PassState()
            raise MemoryError(
                Errors.E023.format(
                    n_docs=len(docs),
                    n_tokens=sum(len(doc) for doc in docs),
                    error=" ".join(str(error).split()[:30]),
                )
            ) from error


def hooked_colsum_layers(hf_model: Any, request: Resolved) -> List[int]:
    """The layers whose column sums the hooks compute: none when the model returns its
    attention maps (``output_attentions``), which the components then read instead."""
    if getattr(hf_model.config, "output_attentions", False):
        return []
    return sorted({layer for layer, _ in request.colsum_heads})


def check_capturable(hf_model: Any, request: Resolved) -> Optional[Family]:
    """The family of ``hf_model`` when ``request`` needs hooks on its attention layers
    (None when it needs none); raises E003 when the hooks cannot capture this model."""
    if not hooked_colsum_layers(hf_model, request) and not request.context_layers:
        return None
    family = get_family(hf_model)
    if family is None:
        raise ValueError(
            Errors.E003.format(
                arch=type(hf_model).__name__,
                model_type=getattr(hf_model.config, "model_type", "?"),
                supported=", ".join(supported_model_types()),
            )
        )
    return family


def check_layers_heads(
    heads: Sequence[Tuple[int, int]], n_layers: int, n_heads: int
) -> List[Tuple[int, int]]:
    """Resolve negative layer indices and check that every (layer, head) exists."""
    resolved = []
    for layer, head in heads:
        if not -n_layers <= layer < n_layers:
            raise ValueError(Errors.E004.format(layer=layer, n_layers=n_layers, last=n_layers - 1))
        if not 0 <= head < n_heads:
            raise ValueError(Errors.E005.format(head=head, n_heads=n_heads, last=n_heads - 1))
        resolved.append((layer % n_layers, head))
    return resolved


def release(model_output: Any, keys: Sequence[str]) -> None:
    """Drop captured arrays from a Doc's ``ModelOutput`` once a component has used them.

    ``ModelOutput`` forbids ``pop``/``del``; the entries this module added are removed from
    the underlying dict and the instance attributes directly.
    """
    for key in keys:
        if key in model_output:
            OrderedDict.__delitem__(model_output, key)
            model_output.__dict__.pop(key, None)
