"""Registered model builders (``@architectures``) of spacy-attnseg."""

from typing import List, Optional, Sequence

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
    with_array,
)
from thinc.types import Floats2d

from .features import AttnFeatures


@registry.architectures("spacy-attnseg.AttnFeatures.v1")
def build_attn_features(
    colsums: bool = True,
    similarities: bool = True,
    context_layers: Sequence[int] = (),
    hidden: bool = False,
    doc_punct: bool = False,
) -> Model[List[Doc], List[Floats2d]]:
    """Standardised per-token features read from ``doc._.trf_data`` (see
    ``spacy_attnseg.features``). No trainable weights; the transformer's own pass must have
    captured the numbers, which ``attn_senter`` requests from it.

    colsums (bool): every head's attention column score at the token.
    similarities (bool): every head's similarity of the token to its neighbours.
    context_layers (Sequence[int]): layers whose head outputs of the token are features.
    hidden (bool): the transformer's last hidden state at the token.
    doc_punct (bool): the document's share of sentence-final punctuation.
    """
    return AttnFeatures(
        colsums=colsums,
        similarities=similarities,
        context_layers=tuple(context_layers),
        hidden=hidden,
        doc_punct=doc_punct,
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
    nO: Optional[int] = None,
) -> Model[List[Doc], List[Floats2d]]:
    """Sentence-start probabilities ``(n_tokens, 2)`` (labels "I", "S") per Doc.

    features (Model): the attention features, ``spacy-attnseg.AttnFeatures.v1``.
    words (Optional[Model]): word identity embeddings concatenated to them, e.g.
        ``spacy.MultiHashEmbed.v2``; null for attention features only.
    width (int): width of the per-token projection and the window encoder.
    window_size (int): neighbours on each side one encoder layer sees.
    depth (int): encoder layers (residual Maxout over a window); 0 for none, which makes
        every token's decision its own features only.
    maxout_pieces (int): pieces of the Maxout units.
    dropout (float): dropout after every Maxout layer in training.

    Every token's features are projected by a Maxout layer (its weights tell which
    features, hence heads, carry the decision: ``scripts/report_senter_heads.py``), then
    ``depth`` residual window layers mix in the neighbours, then a softmax gives P(I),
    P(S).
    """
    inputs: Model = features if words is None else concatenate(features, words)
    project = Maxout(nO=width, nP=maxout_pieces, dropout=dropout, normalize=True)
    if depth > 0:
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
        encode: Model = clone(residual(window), depth)
    else:
        encode = noop()
    output = Softmax(nO=nO or 2, nI=width)
    receptive_field = window_size * depth
    model: Model[List[Doc], List[Floats2d]] = chain(
        inputs, with_array(chain(project, encode, output), pad=receptive_field)
    )
    model.set_ref("features", features)
    model.set_ref("project", project)
    model.set_ref("output", output)
    if words is not None:
        model.set_ref("words", words)
    model.attrs["receptive_field"] = receptive_field
    return model
