"""The one place that knows the module names of supported transformer families.

Capture hooks need four things of every attention layer: the Linear modules that
compute the queries, the keys and the values, and the module whose input is the
concatenation of the heads' outputs (the output projection, a Linear). Families whose
attention score is the scaled dot product ``QK^T / sqrt(d)``, plus for MPNet a relative
position bias shared by all layers, are listed here.
"""

from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import torch


@dataclass(frozen=True)
class AttentionModules:
    """The modules of one attention layer that capture hooks attach to."""

    query: torch.nn.Module
    key: torch.nn.Module
    value: torch.nn.Module
    output: torch.nn.Module
    block: torch.nn.Module  # the whole transformer layer; its output is the hidden state


def _first_output(output: Any) -> torch.Tensor:
    return output[0] if isinstance(output, (tuple, list)) else output


def _last_output(output: Any) -> torch.Tensor:
    return output[-1] if isinstance(output, (tuple, list)) else output


@dataclass(frozen=True)
class Family:
    """How to find the attention layers of one architecture family; ``position_bias``
    finds the module whose output is a bias added to every layer's attention scores
    (MPNet's relative position buckets: ``(L, L, heads)``), None for plain attention;
    ``hidden_state`` picks the hidden state out of a layer's output (which also holds
    the attention maps when the model returns them)."""

    name: str
    layers: Callable[[Any], List[AttentionModules]]
    position_bias: Optional[Callable[[Any], torch.nn.Module]] = None
    hidden_state: Callable[[Any], torch.Tensor] = _first_output


def _bert_like(model: Any) -> List[AttentionModules]:
    return [
        AttentionModules(
            query=layer.attention.self.query,
            key=layer.attention.self.key,
            value=layer.attention.self.value,
            output=layer.attention.output.dense,
            block=layer,
        )
        for layer in model.encoder.layer
    ]


def _distilbert(model: Any) -> List[AttentionModules]:
    return [
        AttentionModules(
            query=layer.attention.q_lin,
            key=layer.attention.k_lin,
            value=layer.attention.v_lin,
            output=layer.attention.out_lin,
            block=layer,
        )
        for layer in model.transformer.layer
    ]


def _mpnet(model: Any) -> List[AttentionModules]:
    return [
        AttentionModules(
            query=layer.attention.attn.q,
            key=layer.attention.attn.k,
            value=layer.attention.attn.v,
            output=layer.attention.attn.o,
            block=layer,
        )
        for layer in model.encoder.layer
    ]


FAMILIES = {
    "bert": Family("bert", _bert_like),
    "roberta": Family("roberta", _bert_like),
    "xlm-roberta": Family("xlm-roberta", _bert_like),
    "camembert": Family("camembert", _bert_like),
    "electra": Family("electra", _bert_like),
    # (a DistilBERT layer returns (attention maps, hidden state) when asked for the maps)
    "distilbert": Family("distilbert", _distilbert, hidden_state=_last_output),
    "mpnet": Family(
        "mpnet", _mpnet, position_bias=lambda model: model.encoder.relative_attention_bias
    ),
}


def supported_model_types() -> List[str]:
    return sorted(FAMILIES)


def get_family(model: Any) -> Family | None:
    """Return the family of a Hugging Face model, or None if hooks cannot capture it.

    Models with relative position terms in the attention score other than MPNet's
    bias are not supported: their attention is not ``softmax(QK^T / sqrt(d) + bias)``.
    """
    config = model.config
    family = FAMILIES.get(getattr(config, "model_type", ""))
    if family is None:
        return None
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return None
    return family


def n_layers_heads(model: Any) -> tuple[int, int]:
    config = model.config
    n_layers = getattr(config, "num_hidden_layers", None) or config.n_layers
    n_heads = getattr(config, "num_attention_heads", None) or config.n_heads
    return int(n_layers), int(n_heads)
