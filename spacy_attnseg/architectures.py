"""Registered model builders (``@architectures``) of spacy-attnseg."""

from typing import List, Optional, Sequence, Tuple, Union, cast

import numpy
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import (
    Maxout,
    Model,
    Softmax,
    chain,
    clone,
    concatenate,
    expand_window,
    noop,
    residual,
    to_numpy,
    with_array,
)
from thinc.types import Floats1d, Floats2d

from .errors import Errors, check_numbers
from .features import AttnFeatures, DocRange, write_features


@registry.architectures("spacy-attnseg.AttnFeatures.v1")
def build_attn_features(
    colsums: bool = True,
    similarities: bool = True,
    context_layers: Sequence[int] = (),
    hidden: bool = False,
    doc_punct: bool = False,
    similarity_layers: Optional[Sequence[int]] = None,
    colsum_layers: Optional[Sequence[int]] = None,
    colsum_heads: Sequence[int] = (),
) -> Model[List[Doc], List[Floats2d]]:
    """Standardised per-token features read from ``doc._.trf_data`` (see
    ``spacy_attnseg.features``). No trainable weights; the transformer's own pass must have
    captured the numbers, which ``attn_senter`` requests from it.

    colsums (bool): every head's attention column score at the token.
    similarities (bool): every head's similarity of the token to its neighbours.
    context_layers (Sequence[int]): layers whose head outputs of the token are features.
    hidden (bool): the transformer's last hidden state at the token.
    doc_punct (bool): the document's share of sentence-final punctuation.
    similarity_layers (Optional[Sequence[int]]): the layers whose heads' similarities
        are features (null: all layers). Layers that are also ``context_layers`` cost
        nothing more to capture.
    colsum_layers (Optional[Sequence[int]]): the layers whose heads' column scores are
        features (null: all layers).
    colsum_heads (Sequence[int]): the heads of those layers (empty: all).
    """
    check_numbers("spacy-attnseg.AttnFeatures.v1", build_attn_features, locals())
    return AttnFeatures(
        colsums=colsums,
        similarities=similarities,
        context_layers=tuple(context_layers),
        hidden=hidden,
        doc_punct=doc_punct,
        similarity_layers=None if similarity_layers is None else tuple(similarity_layers),
        colsum_layers=None if colsum_layers is None else tuple(colsum_layers),
        colsum_heads=tuple(colsum_heads),
    )


@registry.architectures("spacy-attnseg.AttnSenterModel.v1")
def build_attn_senter_model(
    features: Model[List[Doc], List[Floats2d]],
    words: Optional[Model[List[Doc], List[Floats2d]]] = None,
    width: int = 128,
    window_size: int = 1,
    depth: int = 2,
    maxout_pieces: int = 2,
    dropout: float = 0.1,
    members: int = 1,
    nO: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """Sentence-start probabilities ``(n_tokens, 2 * members)`` per Doc: labels "I",
    "S" of every member (``member_start_probs`` averages them).

    features (Model): the attention features, ``spacy-attnseg.AttnFeatures.v1``.
    words (Optional[Model]): word identity embeddings concatenated to them, e.g.
        ``spacy.MultiHashEmbed.v2``; null for attention features only.
    width (int): width of the per-token projection and the window encoder.
    window_size (int): neighbours on each side one encoder layer sees.
    depth (int): encoder layers (residual Maxout over a window); 0 for none, which makes
        every token's decision its own features only.
    maxout_pieces (int): pieces of the Maxout units.
    dropout (float): dropout after every Maxout layer in training.
    members (int): independently initialised classifiers, each with its own word
        embedding, over the same attention features, each trained on its own loss
        (``AttnSenter.get_loss``); their P(S) is averaged. An ensemble is steadier than
        one member where the decision is hard (text without punctuation).

    Every token's features are projected by a Maxout layer (its weights tell which
    features, hence heads, carry the decision: ``scripts/report_senter_heads.py``), then
    ``depth`` residual window layers mix in the neighbours, then a softmax gives P(I),
    P(S).
    """
    check_numbers("spacy-attnseg.AttnSenterModel.v1", build_attn_senter_model, locals())
    if members < 1:
        raise ValueError(Errors.E106.format(members=members))
    receptive_field = window_size * depth
    chains: List[Model] = []
    projections: List[Model] = []
    for index in range(members):
        # every member has its own word embedding; the features (no weights) are shared
        member_words = words if words is None or index == 0 else words.copy()
        inputs: Model = features if member_words is None else concatenate(features, member_words)
        project = Maxout(nO=width, nP=maxout_pieces, dropout=dropout, normalize=True)
        head: Model = chain(
            project,
            _window_encoder(width, window_size, depth, maxout_pieces, dropout),
            Softmax(nO=nO or 2, nI=width),
        )
        chains.append(chain(inputs, with_array(head, pad=receptive_field)))
        projections.append(project)
    model: Model[List[Doc], List[Floats2d]] = chains[0] if members == 1 else concatenate(*chains)
    model.set_ref("features", features)
    for index, project in enumerate(projections):
        model.set_ref("project" if index == 0 else f"project_{index}", project)
    if words is not None:
        model.set_ref("words", words)
    model.attrs["receptive_field"] = receptive_field
    model.attrs["members"] = members
    return model


def _window_encoder(
    width: int, window_size: int, depth: int, maxout_pieces: int, dropout: float
) -> Model[Floats2d, Floats2d]:
    """``depth`` residual Maxout layers over a window of ``window_size`` neighbours on
    each side; no layer for depth 0."""
    if depth == 0:
        return noop()
    window: Model = chain(
        expand_window(window_size=window_size),
        Maxout(
            nO=width,
            nI=width * (2 * window_size + 1),
            nP=maxout_pieces,
            dropout=dropout,
            normalize=True,
        ),
    )
    return clone(residual(window), depth)


def n_members(model: Model) -> int:
    """The number of members of an ``AttnSenterModel``."""
    return int(model.attrs.get("members", 1))


def member_chains(model: Model) -> List[Tuple[Model, Model]]:
    """Per member of an ``AttnSenterModel``: its input layer (features and word
    embedding, the same columns in every member) and the rest (projection, encoder,
    softmax) that maps those inputs to P(I), P(S)."""
    chains = [model] if n_members(model) == 1 else list(model.layers)
    return [(member.layers[0], member.layers[1]) for member in chains]


def member_projections(model: Model) -> List[Model]:
    """The per-token projection layer of every member of an ``AttnSenterModel``."""
    return [model.get_ref("project" if i == 0 else f"project_{i}") for i in range(n_members(model))]


def predict_scores(model: Model, docs: Sequence[Union[Doc, DocRange]]) -> List[Floats2d]:
    """``model.predict(docs)`` of an ``AttnSenterModel`` (as numpy arrays), with the
    features written once, on the CPU, straight into the padded batch matrix that the
    members' window encoders read: the same numbers without thinc's two copies of the
    input (``concatenate`` joining features and word embeddings per Doc, then
    ``with_array`` padding and stacking the Docs). On a GPU that matrix goes over in one
    transfer and the scores come back in one, rather than a few small transfers and
    kernel launches per Doc. For a batch without tokens, ``model.predict``."""
    lengths = [len(doc) for doc in docs]
    if not any(lengths):
        return [to_numpy(scores) for scores in model.predict(list(docs))]
    ops = model.ops
    features = model.get_ref("features")
    n_features = features.get_dim("nO")
    members = member_chains(model)
    # as with_array's flatten: `pad` zero rows (the same in every member) before, between
    # and after the Docs that have tokens
    pad = int(members[0][1].attrs["pad"])
    starts, row = [], pad
    for length in lengths:
        starts.append(row)
        row += length + pad if length else 0
    per_member: List[List[Floats2d]] = []
    X: Optional[numpy.ndarray] = None
    for inputs, rest in members:
        words = None if inputs is features else inputs.layers[1]
        width = n_features + (words.get_dim("nO") if words is not None else 0)
        if X is None:
            X = numpy.zeros((row, width), dtype="float32")
            write_features(features, docs, X, starts)
        if words is not None:
            # the Docs' word vectors in one array: one transfer from a GPU
            vectors = to_numpy(ops.xp.concatenate(words.predict(docs)))
            offsets = numpy.cumsum([0, *lengths])
            for start, length, offset in zip(starts, lengths, offsets[:-1], strict=True):
                X[start : start + length, n_features:] = vectors[offset : offset + length]
        Y = to_numpy(rest.layers[0].predict(ops.asarray2f(cast(Floats2d, X))))
        per_member.append(
            [Y[start : start + length] for start, length in zip(starts, lengths, strict=True)]
        )
    if len(per_member) == 1:
        return per_member[0]
    return [cast(Floats2d, numpy.hstack(parts)) for parts in zip(*per_member, strict=True)]


def member_start_probs(scores: Floats2d) -> Floats1d:
    """P(S) per token from an ``AttnSenterModel``'s output ``(n_tokens, 2 * members)``:
    the mean of the members' S columns."""
    return scores[:, 1::2].mean(axis=1)
