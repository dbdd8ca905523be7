"""Per-token attention features for the trainable ``attn_senter``.

Everything here is read from what ``AttentionCapture`` and the transformer left in
``doc._.trf_data`` during the transformer's own pass; nothing runs the model again. For a
model with ``n_layers`` layers of ``n_heads`` heads (MiniLM: 6 x 12 = 72 heads) a token gets,
in this order (see :func:`feature_names`):

* **column scores** (``colsums``, ``2 * n_layers * n_heads``, or only the heads of
  ``colsum_layers`` and ``colsum_heads``): for every head,
  ``log(1 + c)`` and ``c / max(c)`` where ``c`` is the head's attention column sum at the
  token (the attention the token receives from the window's real wordpieces; 1 = the
  uniform share) and the maximum is taken over the window, as in the paper's recipe;
* **neighbour similarities** (``similarities``, ``2 * n_layers * n_heads + 2``, or only
  the heads of ``similarity_layers``): for every head, the dot product of the head's
  output vector of the token with that of the previous and of the next token (the
  context similarity matrix ``H H^T`` one step off its diagonal), divided by the
  window's mean squared norm of that head's token vectors, then two flags: the token
  has a previous / a next token in some window;
* **head outputs** (``context_layers``, ``hidden`` per layer): the token's own
  concatenated head outputs ``softmax(QK^T/sqrt(d))V`` at the chosen layers (the vectors
  whose dot products the similarities are), before the attention output projection;
* **hidden state** (``hidden``): the transformer's ``last_hidden_state`` at the token;
* **document punctuation** (``doc_punct``, 2): ten times the share of the document's
  tokens that are sentence-final punctuation, and whether there is any. Text that lost
  its punctuation needs other cues, and this lets the model tell the two regimes apart.

A token's vector in a window is the mean of its wordpieces' vectors (similarities) or
their maximum (the others, via :func:`spacy_attnseg.windows.token_values`); a token seen in
several overlapping windows takes the mean over those windows. Tokens without wordpieces
(whitespace) get zeros. The heavy parts run on the device of the arrays with thinc ops;
the ``(n_tokens, n_features)`` result is a numpy array.

:func:`AttnFeatures` wraps this as a Thinc layer ``List[Doc] -> List[Floats2d]`` that also
standardises every feature with a mean and scale measured when it is initialised.
"""

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union, cast

import numpy
from spacy.tokens import Doc, Span
from thinc.api import Model, NumpyOps, to_numpy
from thinc.types import Floats1d, Floats2d, Ints1d, Ragged

from .capture import (
    COLSUM_HEADS,
    COLSUMS,
    CONTEXT,
    CONTEXT_LAYERS,
    CaptureRequest,
    check_layers_heads,
)
from .errors import Errors
from .sentences import column_scores, sentence_final
from .windows import (
    TokenPooling,
    aligned_rows,
    gather_rows,
    group_sums,
    sorted_runs,
    token_values,
    window_length,
)

HIDDEN = "last_hidden_state"


@dataclass(frozen=True)
class DocRange:
    """Tokens ``[start, end)`` of ``doc``, as the model reads them: its features are those
    of the tokens in the whole Doc (see :func:`doc_features`). spaCy's feature extractor
    reads a range through ``doc.to_array(...)[start:end]`` (``Span.to_array`` does not
    take attribute names)."""

    doc: Doc
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


BLOCKS = ("colsums", "similarities", "context", "hidden", "doc_punct")


@dataclass(frozen=True)
class FeatureSpec:
    """Which feature blocks a token gets (see the module docstring)."""

    colsums: bool = True
    similarities: bool = True
    context_layers: Tuple[int, ...] = ()
    hidden: bool = False
    doc_punct: bool = False
    similarity_layers: Optional[Tuple[int, ...]] = None
    colsum_layers: Optional[Tuple[int, ...]] = None
    colsum_heads: Tuple[int, ...] = ()

    def resolved_colsum_heads(self, n_layers: int, n_heads: int) -> List[Tuple[int, int]]:
        """The (layer, head) pairs whose column scores are features, layers counted from
        0: every head unless ``colsum_layers`` (and ``colsum_heads``, within them) name
        some."""
        layers = range(n_layers) if self.colsum_layers is None else self.colsum_layers
        heads = self.colsum_heads or tuple(range(n_heads))
        return check_layers_heads([(l_, h) for l_ in layers for h in heads], n_layers, n_heads)

    def capture_request(self) -> CaptureRequest:
        """What the transformer's capture hooks must compute for these features."""
        context: Optional[Tuple[int, ...]] = tuple(self.context_layers)
        if self.similarities:
            if self.similarity_layers is None:
                context = None
            else:
                context = tuple(sorted({*self.context_layers, *self.similarity_layers}))
        return CaptureRequest(
            colsum_layers=(None if self.colsum_layers is None else tuple(self.colsum_layers))
            if self.colsums
            else (),
            colsum_heads=tuple(self.colsum_heads) if self.colsums else (),
            context_layers=context,
        )

    def resolved_similarity_layers(self, n_layers: int) -> List[int]:
        """The layers whose neighbour similarities are features, counted from 0 (all
        layers unless ``similarity_layers`` names some)."""
        if self.similarity_layers is None:
            return list(range(n_layers))
        return _resolve_layers(self.similarity_layers, n_layers)

    def resolved_context_layers(self, n_layers: int) -> List[int]:
        """The head-output layers counted from 0, checked against the model."""
        return _resolve_layers(self.context_layers, n_layers)

    def width(self, n_layers: int, n_heads: int, hidden: int) -> int:
        return len(feature_names(self, n_layers, n_heads, hidden))


def _resolve_layers(layers: Sequence[int], n_layers: int) -> List[int]:
    """``layers`` counted from 0 (negative ones from the end), checked (E004)."""
    return [layer for layer, _ in check_layers_heads([(l_, 0) for l_ in layers], n_layers, 1)]


def feature_names(spec: FeatureSpec, n_layers: int, n_heads: int, hidden: int) -> List[str]:
    """A name for every feature column, e.g. ``colsum_log:L2H9``, ``sim_prev:L0H3``,
    ``context:L3H5:7`` (dimension 7 of head 5's output at layer 3)."""
    names: List[str] = []
    if spec.colsums:
        heads = [
            f"L{layer}H{head}" for layer, head in spec.resolved_colsum_heads(n_layers, n_heads)
        ]
        names += [f"colsum_log:{h}" for h in heads] + [f"colsum_rel:{h}" for h in heads]
    if spec.similarities:
        layers = spec.resolved_similarity_layers(n_layers)
        sim_heads = [f"L{layer}H{head}" for layer in layers for head in range(n_heads)]
        names += [f"sim_prev:{h}" for h in sim_heads] + [f"sim_next:{h}" for h in sim_heads]
        names += ["has_prev", "has_next"]
    head_dim = hidden // n_heads
    for layer in spec.resolved_context_layers(n_layers):
        names += [f"context:L{layer}H{i // head_dim}:{i % head_dim}" for i in range(hidden)]
    if spec.hidden:
        names += [f"hidden:{i}" for i in range(hidden)]
    if spec.doc_punct:
        names += ["doc_punct_rate", "doc_punct_any"]
    return names


def head_of_feature(name: str) -> Optional[Tuple[int, int]]:
    """The (layer, head) a feature name belongs to, or None (hidden state, flags)."""
    _, _, suffix = name.partition(":")
    suffix = suffix.partition(":")[0]
    if not suffix.startswith("L") or "H" not in suffix:
        return None
    layer, _, head = suffix[1:].partition("H")
    return int(layer), int(head)


def doc_features(
    doc: Union[Doc, Span, DocRange],
    spec: FeatureSpec,
    *,
    n_heads: Optional[int] = None,
    n_layers: Optional[int] = None,
    component: str = "attn_senter",
    out: Optional[numpy.ndarray] = None,
) -> Floats2d:
    """The ``(len(doc), n_features)`` float32 feature matrix of ``doc`` (numpy), written
    into ``out`` when given (e.g. rows and columns of a larger matrix).

    ``doc`` may be a ``Span`` or a :class:`DocRange`: its tokens get the features they
    have in the whole Doc (the document punctuation features too).

    ``n_heads`` (heads per layer) splits the captured head outputs into heads and
    ``n_layers`` resolves negative ``context_layers``; when None they are read from the
    captured column sums.

    Raises a ``ValueError`` when the doc has no transformer output or the output lacks the
    captured numbers the spec needs. A doc without wordpieces gets a ``(len(doc), 0)``
    matrix (zeros in ``out``); :class:`AttnFeatures` pads it to the full width with
    zeros.
    """
    n_tokens = len(doc)
    whole = doc.doc
    trf_data = getattr(whole._, "trf_data", None) if Doc.has_extension("trf_data") else None
    if trf_data is None:
        raise ValueError(Errors.E101.format(component=component))
    if n_tokens == 0 or trf_data.wordpieces.input_ids.size == 0 or not len(trf_data.align.dataXd):
        if out is not None:
            out[...] = 0.0
            return cast(Floats2d, out)
        return cast(Floats2d, numpy.zeros((n_tokens, 0), dtype="float32"))
    output = trf_data.model_output
    align = trf_data.align
    if isinstance(doc, (Span, DocRange)):
        align = align[doc.start : doc.end]
    # (width, writer) per block: each writer fills its columns of the one result matrix,
    # so that no block is held twice
    blocks: List[Tuple[int, Callable[[numpy.ndarray], Any]]] = []
    if spec.colsums:
        if COLSUMS not in output:
            raise ValueError(Errors.E006.format(component=component))
        colsums = output[COLSUMS]
        if spec.colsum_layers is not None:
            # the captured rows may serve other components too: take this spec's heads
            heads, layers = (n_heads, n_layers) if n_heads and n_layers else _model_size(output)
            captured = to_numpy(output[COLSUM_HEADS][0])
            row = {(int(layer), int(head)): i for i, (layer, head) in enumerate(captured)}
            wanted = spec.resolved_colsum_heads(layers, heads)
            if any(pair not in row for pair in wanted):
                raise ValueError(Errors.E006.format(component=component))
            colsums = colsums[:, [row[pair] for pair in wanted]]
        blocks.append(
            (
                2 * colsums.shape[1],
                lambda out: _fill(out, colsum_features(colsums, align, n_tokens)),
            )
        )
    if spec.similarities or spec.context_layers:
        if CONTEXT not in output:
            raise ValueError(Errors.E006.format(component=component))
        captured = [int(layer) for layer in to_numpy(output[CONTEXT_LAYERS][0])]
        context = dict(zip(captured, output[CONTEXT], strict=True))
        heads, layers = (n_heads, n_layers) if n_heads and n_layers else _model_size(output)
    if spec.similarities:
        sim_layers = spec.resolved_similarity_layers(layers)
        if any(layer not in context for layer in sim_layers):
            raise ValueError(Errors.E006.format(component=component))
        arrays = [context[layer] for layer in sim_layers]
        blocks.append(
            (
                2 * len(arrays) * heads + 2,
                lambda out: _range_similarities(arrays, heads, trf_data, doc, out),
            )
        )
    if spec.context_layers or spec.hidden:
        # one pooling of wordpieces into tokens for every array of these windows
        pooling = TokenPooling.of(align, window_length(trf_data), n_tokens)
    if spec.context_layers:
        chosen = spec.resolved_context_layers(layers)
        if any(layer not in context for layer in chosen):
            raise ValueError(Errors.E006.format(component=component))
        for layer in chosen:
            array = context[layer]
            blocks.append((array.shape[-1], partial(pooling.apply, array)))
    if spec.hidden:
        hidden = output[HIDDEN]
        blocks.append((hidden.shape[-1], partial(pooling.apply, hidden)))
    if spec.doc_punct:
        blocks.append((2, lambda out: _fill(out, doc_punct_row(whole))))
    n_features = sum(width for width, _ in blocks)
    if out is not None and out.shape != (n_tokens, n_features):
        raise ValueError(Errors.E119.format(shape=out.shape, n_tokens=n_tokens, width=n_features))
    result = numpy.empty((n_tokens, n_features), dtype="float32") if out is None else out
    column = 0
    for width, write in blocks:
        write(result[:, column : column + width])
        column += width
    return cast(Floats2d, result)


def _range_similarities(
    arrays: Sequence[Any],
    n_heads: int,
    trf_data: Any,
    doc: Union[Doc, Span, DocRange],
    out: numpy.ndarray,
) -> None:
    """:func:`similarity_features` of ``doc``'s tokens as they are in the whole Doc: a
    range is widened to every token of the windows it touches (a similarity is divided
    by its window's mean squared norm, and a token's neighbour may lie outside)."""
    align = trf_data.align
    if not isinstance(doc, (Span, DocRange)):
        similarity_features(arrays, n_heads, align, len(doc), out=out)
        return
    length = window_length(trf_data)
    lengths = numpy.asarray(align.lengths)
    rows = numpy.asarray(align.dataXd, dtype="int64")
    offsets = numpy.concatenate([[0], numpy.cumsum(lengths)])
    windows = rows[offsets[doc.start] : offsets[doc.end]] // length
    if not len(windows):
        out[...] = 0.0
        return
    token_of_row = numpy.repeat(numpy.arange(len(lengths)), lengths)
    touched = numpy.flatnonzero(
        (rows // length >= windows.min()) & (rows // length <= windows.max())
    )
    lo = min(doc.start, int(token_of_row[touched].min()))
    hi = max(doc.end, int(token_of_row[touched].max()) + 1)
    wide = similarity_features(arrays, n_heads, align[lo:hi], hi - lo)
    out[...] = wide[doc.start - lo : doc.end - lo]


def _fill(out: numpy.ndarray, values: numpy.ndarray) -> None:
    out[...] = values


def _model_size(output: Any) -> Tuple[int, int]:
    """(n_heads, n_layers) from the captured column sums."""
    if COLSUM_HEADS in output:
        heads = to_numpy(output[COLSUM_HEADS][0])
        layers = {int(layer) for layer, _ in heads}
        return len(heads) // max(1, len(layers)), max(layers) + 1
    raise ValueError(Errors.E102)


# Below this share of sentence-final punctuation tokens a document counts as text without
# punctuation (edited English has about one per 10-25 tokens; text that lost it keeps a
# stray "..." or "!" now and then).
NO_PUNCT_RATE = 0.01


def final_punct_rate(doc: Doc) -> float:
    """The share of ``doc``'s tokens that are sentence-final punctuation (``.``, ``!``,
    ``?``, ...); 0 for an empty doc."""
    return float(sentence_final(doc).sum()) / max(1, len(doc))


def lacks_final_punct(doc: Doc) -> bool:
    """Whether ``doc`` looks like text without sentence-final punctuation: fewer than
    ``NO_PUNCT_RATE`` of its tokens are (an empty doc does not)."""
    return len(doc) > 0 and final_punct_rate(doc) < NO_PUNCT_RATE


def doc_punct_row(doc: Doc) -> numpy.ndarray:
    """Ten times the share of sentence-final punctuation tokens in the doc, and whether
    there is any: ``(1, 2)``, the same for every token."""
    rate = final_punct_rate(doc)
    return numpy.array([[10.0 * rate, float(rate > 0)]], dtype="float32")


def doc_punct_features(doc: Doc) -> numpy.ndarray:
    """:func:`doc_punct_row` repeated for every token: ``(len(doc), 2)``."""
    return numpy.repeat(doc_punct_row(doc), len(doc), axis=0)


def colsum_features(colsums: Any, align: Ragged, n_tokens: int) -> numpy.ndarray:
    """``log(1 + c)`` and ``c / window max`` per head for every token: ``(n_tokens, 2H)``.

    ``colsums`` is ``(n_windows, H, L)``, as captured, on any device (a few numbers per
    wordpiece: they are copied to the CPU and scored there).
    """
    raw = numpy.asarray(to_numpy(colsums), dtype="float32")
    values = raw.transpose(0, 2, 1)  # (n_win, L, H)
    relative = column_scores(raw).transpose(0, 2, 1)
    stacked = numpy.concatenate([numpy.log1p(numpy.maximum(values, 0.0)), relative], axis=2)
    return token_values(numpy.ascontiguousarray(stacked), align, n_tokens)


def _window_segments(
    align: Ragged, length: int
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The alignment sorted by (window, token, row) and cut into (window, token) segments.

    Returns the sorted wordpiece rows, the length, token and window of every segment.
    Within a window, consecutive segments are neighbouring tokens (tokens without
    wordpieces are skipped).
    """
    rows, tokens = aligned_rows(align)
    windows = rows // length
    order, starts, seg_lengths = sorted_runs(windows, tokens, rows)
    rows, tokens, windows = rows[order], tokens[order], windows[order]
    return rows, seg_lengths, tokens[starts], windows[starts]


def similarity_features(
    context: Sequence[Any],
    n_heads: int,
    align: Ragged,
    n_tokens: int,
    out: Optional[numpy.ndarray] = None,
) -> numpy.ndarray:
    """Per head, normalised dot products of each token's head output with its previous and
    next token's: ``(n_tokens, 2 * n_layers * n_heads + 2)`` (prev block, next block,
    has_prev, has_next), written into ``out`` when given.

    ``context`` holds one ``(n_windows, L, hidden)`` array per layer: the concatenated
    head outputs ``softmax(QK^T/sqrt(d))V`` the capture hooks record. The layers are
    read one at a time.
    """
    n_layers = len(context)
    n_windows, length, hidden = context[0].shape
    if hidden % n_heads:
        raise ValueError(Errors.E011.format(layer="?", width=hidden, n_heads=n_heads))
    n_pairs_out = n_layers * n_heads
    if out is None:
        out = numpy.zeros((n_tokens, 2 * n_pairs_out + 2), dtype="float32")
    else:
        out[...] = 0.0
    prev_count = numpy.zeros((n_tokens,), dtype="float32")
    next_count = numpy.zeros((n_tokens,), dtype="float32")
    rows, seg_lengths, seg_tokens, seg_windows = _window_segments(align, length)
    pair = numpy.flatnonzero(seg_windows[1:] == seg_windows[:-1])
    if len(pair):
        ops = NumpyOps()
        lengths = cast(Ints1d, seg_lengths.astype("int32"))
        _, window_counts = numpy.unique(seg_windows, return_counts=True)
        counts = cast(Ints1d, window_counts.astype("int32"))
        pair_window = numpy.repeat(numpy.arange(len(window_counts)), window_counts)[pair]
        left_tokens, right_tokens = seg_tokens[pair], seg_tokens[pair + 1]
        sims = numpy.empty((len(pair), n_pairs_out), dtype="float32")
        for k, layer in enumerate(context):
            gathered = gather_rows(layer.reshape((-1, hidden)), rows)
            pooled = ops.reduce_mean(cast(Floats2d, gathered), lengths)
            per_head = pooled.reshape((len(seg_lengths), n_heads, -1))
            # per head: squared norm of every segment (n_seg, n_heads), and the dot
            # product of each pair of neighbouring segments in one window
            squares = numpy.einsum("shd,shd->sh", per_head, per_head)
            window_norm = ops.reduce_mean(cast(Floats2d, numpy.ascontiguousarray(squares)), counts)
            dots = numpy.einsum("shd,shd->sh", per_head[:-1], per_head[1:])[pair]
            norm = window_norm[pair_window]
            sims[:, k * n_heads : (k + 1) * n_heads] = dots / numpy.where(norm > 0, norm, 1.0)
        out[:, :n_pairs_out] = group_sums(sims, right_tokens, n_tokens)
        out[:, n_pairs_out : 2 * n_pairs_out] = group_sums(sims, left_tokens, n_tokens)
        prev_count += numpy.bincount(right_tokens, minlength=n_tokens)
        next_count += numpy.bincount(left_tokens, minlength=n_tokens)
    out[:, :n_pairs_out] /= numpy.maximum(prev_count, 1.0)[:, None]
    out[:, n_pairs_out : 2 * n_pairs_out] /= numpy.maximum(next_count, 1.0)[:, None]
    out[:, -2] = prev_count > 0
    out[:, -1] = next_count > 0
    return out


# -- the Thinc layer ------------------------------------------------------------------


def AttnFeatures(
    *,
    colsums: bool = True,
    similarities: bool = True,
    context_layers: Sequence[int] = (),
    hidden: bool = False,
    doc_punct: bool = False,
    similarity_layers: Optional[Sequence[int]] = None,
    colsum_layers: Optional[Sequence[int]] = None,
    colsum_heads: Sequence[int] = (),
) -> Model[List[Doc], List[Floats2d]]:
    """Standardised attention features of every token, from ``doc._.trf_data``.

    No trainable weights: ``mean`` and ``scale`` (1 / standard deviation) are measured on
    the docs given to ``initialize`` (which must carry ``trf_data``) and saved with the
    model. Output width ``nO`` is set then too.
    """
    if not (colsums or similarities or context_layers or hidden or doc_punct):
        raise ValueError(Errors.E103)
    return Model(
        "attn_features",
        _features_forward,
        init=_features_init,
        dims={"nO": None},
        params={"mean": None, "scale": None},
        attrs={
            "colsums": colsums,
            "similarities": similarities,
            "context_layers": [int(layer) for layer in context_layers],
            "hidden": hidden,
            "doc_punct": doc_punct,
            "similarity_layers": None
            if similarity_layers is None
            else [int(layer) for layer in similarity_layers],
            "colsum_layers": None
            if colsum_layers is None
            else [int(layer) for layer in colsum_layers],
            "colsum_heads": [int(head) for head in colsum_heads],
            "n_heads": 0,
            "n_layers": 0,
        },
    )


def spec_of(model: Model) -> FeatureSpec:
    """The :class:`FeatureSpec` of an :func:`AttnFeatures` layer."""
    return FeatureSpec(
        colsums=bool(model.attrs["colsums"]),
        similarities=bool(model.attrs["similarities"]),
        context_layers=tuple(int(layer) for layer in model.attrs["context_layers"]),
        hidden=bool(model.attrs["hidden"]),
        doc_punct=bool(model.attrs["doc_punct"]),
        similarity_layers=None
        if model.attrs.get("similarity_layers") is None
        else tuple(int(layer) for layer in model.attrs["similarity_layers"]),
        colsum_layers=None
        if model.attrs.get("colsum_layers") is None
        else tuple(int(layer) for layer in model.attrs["colsum_layers"]),
        colsum_heads=tuple(int(head) for head in model.attrs.get("colsum_heads", [])),
    )


def _layer_features(
    model: Model, doc: Union[Doc, DocRange], out: Optional[numpy.ndarray] = None
) -> Floats2d:
    """:func:`doc_features` of ``doc`` with the spec and model size of the layer."""
    n_heads = int(model.attrs.get("n_heads") or 0) or None
    n_layers = int(model.attrs.get("n_layers") or 0) or None
    return doc_features(doc, spec_of(model), n_heads=n_heads, n_layers=n_layers, out=out)


def _raw_features(model: Model, docs: Sequence[Doc], width: Optional[int]) -> List[Floats2d]:
    out = []
    for doc in docs:
        values = _layer_features(model, doc)
        if values.shape[1] == 0 and width:
            values = cast(Floats2d, numpy.zeros((len(doc), width), dtype="float32"))
        out.append(values)
    return out


def _features_forward(
    model: Model[List[Doc], List[Floats2d]], docs: List[Doc], is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    outputs = []
    mean, scale = model.get_param("mean"), model.get_param("scale")
    for values in _raw_features(model, docs, model.get_dim("nO")):
        array = model.ops.asarray2f(values)
        # in place: the matrix is this call's own
        _standardise(array, mean, scale)
        outputs.append(array)

    def backprop(d_outputs: List[Floats2d]) -> List[Doc]:
        return []

    return outputs, backprop


def write_features(
    model: Model[List[Doc], List[Floats2d]],
    docs: Sequence[Union[Doc, DocRange]],
    out: numpy.ndarray,
    starts: Sequence[int],
) -> None:
    """What an :func:`AttnFeatures` layer outputs for ``docs``, computed on the CPU and
    written straight into ``out``: doc ``i`` fills rows ``starts[i]`` on and the first
    ``nO`` columns (e.g. a padded batch matrix whose other columns hold more inputs)."""
    width = model.get_dim("nO")
    mean, scale = (to_numpy(model.get_param(name)) for name in ("mean", "scale"))
    for doc, start in zip(docs, starts, strict=True):
        block = out[start : start + len(doc), :width]
        _layer_features(model, doc, out=block)
        _standardise(block, mean, scale)


def _standardise(array: Any, mean: Any, scale: Any) -> None:
    """Standardise the rows of ``array`` in place with a layer's ``mean`` and ``scale``
    (on the array's device)."""
    if len(array):
        array -= mean
        array *= scale


def _features_init(
    model: Model[List[Doc], List[Floats2d]],
    X: Optional[List[Doc]] = None,
    Y: Optional[Any] = None,
) -> None:
    if X is None:
        if model.has_dim("nO") and model.get_dim("nO") and not model.has_param("mean"):
            width = model.get_dim("nO")
            model.set_param("mean", model.ops.alloc1f(width))
            model.set_param("scale", model.ops.alloc1f(width) + 1.0)
        return
    matrices = [m for m in _raw_features(model, X, None) if m.shape[1] and len(m)]
    if not matrices:
        raise ValueError(Errors.E104)
    stacked: numpy.ndarray = numpy.concatenate([numpy.asarray(m) for m in matrices], axis=0)
    mean, scale = standardisation(stacked)
    model.set_dim("nO", stacked.shape[1], force=True)
    model.set_param("mean", model.ops.asarray1f(mean))
    model.set_param("scale", model.ops.asarray1f(scale))


def standardisation(values: numpy.ndarray, *, min_std: float = 1e-3) -> Tuple[Floats1d, Floats1d]:
    """Column means and ``1 / std`` (features that barely vary are only centred)."""
    mean = values.mean(axis=0)
    std = values.std(axis=0)
    scale = numpy.where(std > min_std, 1.0 / numpy.maximum(std, min_std), 1.0)
    return (
        cast(Floats1d, mean.astype("float32")),
        cast(Floats1d, scale.astype("float32")),
    )


__all__ = [
    "AttnFeatures",
    "DocRange",
    "BLOCKS",
    "FeatureSpec",
    "colsum_features",
    "doc_features",
    "doc_punct_features",
    "doc_punct_row",
    "feature_names",
    "NO_PUNCT_RATE",
    "final_punct_rate",
    "lacks_final_punct",
    "head_of_feature",
    "similarity_features",
    "spec_of",
    "standardisation",
    "write_features",
]
