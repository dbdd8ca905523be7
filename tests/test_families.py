"""Architectures beyond BERT: MPNet's relative position bias is captured by the hooks;
DeBERTa-v2 (disentangled attention) and ModernBERT (rotary, fused QKV) are refused at
``initialize`` with E003, which names the fallback that works for them
(``output_attentions`` with eager attention)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy
import pytest
import torch
from conftest import TINY_SIZES, minilm_vocab_file
from test_capture import (
    EAGER,
    hf_inputs,
    real_wordpieces,
    reference_attention,
    reference_colsums,
)
from transformers import AutoModel, BertTokenizerFast

from spacy_attnseg.capture import COLSUMS, CONTEXT, CONTEXT_LAYERS, CaptureRequest


def mpnet_bias(model: Any, length: int) -> numpy.ndarray:
    """MPNet's relative position bias ``(heads, L, L)`` written out in float64 from its
    weights: the relative position buckets (T5-style, 32 buckets, distance 128)."""
    # bucket of memory j for query i (relative position j - i), as in the MPNet paper
    buckets = numpy.zeros((length, length), dtype="int64")
    half, exact = 16, 8
    for i in range(length):
        for j in range(length):
            n = i - j
            bucket = half if n < 0 else 0
            n = abs(n)
            if n < exact:
                bucket += n
            else:
                large = exact + int(math.log(n / exact) / math.log(128 / exact) * (half - exact))
                bucket += min(large, half - 1)
            buckets[i, j] = bucket
    table = model.encoder.relative_attention_bias.weight.detach().double().numpy()
    return table[buckets].transpose(2, 0, 1)


def mpnet_reference(model: Any, inputs: dict, layer: int) -> tuple:
    """MPNet's attention of ``layer`` written out in float64 from its weights: the
    bias (``mpnet_bias``), the masked softmax and the head outputs
    ``softmax(QK^T/sqrt(d) + bias) V``."""
    with torch.no_grad():
        out = model(**inputs, output_hidden_states=True)
    hidden = out.hidden_states[layer].double().numpy()
    n_heads = model.config.num_attention_heads
    attn = model.encoder.layer[layer].attention.attn
    return reference_attention(
        hidden,
        None,
        n_heads,
        inputs["attention_mask"].numpy(),
        modules=(attn.q, attn.k, attn.v),
        bias=mpnet_bias(model, hidden.shape[1]),
    )


def test_mpnet_hooks_equal_an_independent_computation(
    tiny_model_dir: Any, build_nlp: Any, sample_text: str
) -> None:
    model_dir = tiny_model_dir("mpnet")
    nlp = build_nlp(model_dir)
    capture = nlp.get_pipe("attn_segmenter").capture
    capture.request("test", CaptureRequest(colsum_layers=None, context_layers=(0, 1)))
    doc = nlp(sample_text)
    trf_data = doc._.trf_data
    output = trf_data.model_output
    reference = AutoModel.from_pretrained(model_dir, attn_implementation="eager")
    reference.eval()
    inputs = hf_inputs(trf_data)
    inputs.pop("token_type_ids", None)
    keep = real_wordpieces(trf_data)
    real = numpy.asarray(trf_data.wordpieces.attention_mask) > 0
    contexts = dict(zip(output[CONTEXT_LAYERS][0], output[CONTEXT], strict=True))
    colsums = numpy.asarray(output[COLSUMS])
    for layer in (0, 1):
        probs, context = mpnet_reference(reference, inputs, layer)
        numpy.testing.assert_allclose(
            numpy.asarray(contexts[layer])[real], context[real], rtol=1e-5, atol=1e-5
        )
        expected = reference_colsums(probs, keep)
        numpy.testing.assert_allclose(
            colsums[:, layer * 4 : layer * 4 + 4], expected, rtol=1e-5, atol=1e-5
        )
    # the bias matters: without it the column sums differ
    assert float(numpy.abs(reference.encoder.relative_attention_bias.weight.detach()).max()) > 0.1


def save_unsupported(model_type: str, path: Path) -> Path:
    """A tiny random model of a family the hooks cannot capture, with a WordPiece
    tokenizer of the MiniLM vocabulary."""
    import transformers

    tokenizer = BertTokenizerFast(vocab_file=str(minilm_vocab_file()), model_max_length=512)
    common = {
        "vocab_size": tokenizer.vocab_size,
        "pad_token_id": tokenizer.pad_token_id,
        **TINY_SIZES,
    }
    torch.manual_seed(0)
    if model_type == "deberta-v2":
        config: Any = transformers.DebertaV2Config(max_position_embeddings=512, **common)
        model: Any = transformers.DebertaV2Model(config)
    else:
        if not hasattr(transformers, "ModernBertModel"):  # transformers < 4.48
            pytest.skip(f"transformers {transformers.__version__} has no ModernBERT")
        # as ModernBERT's own tokenizer: no token type ids (its forward takes none)
        tokenizer = BertTokenizerFast(
            vocab_file=str(minilm_vocab_file()),
            model_max_length=512,
            model_input_names=["input_ids", "attention_mask"],
        )
        config = transformers.ModernBertConfig(
            max_position_embeddings=512,
            global_attn_every_n_layers=1,
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            **common,
        )
        model = transformers.ModernBertModel(config)
    path.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.mark.parametrize("model_type", ["deberta-v2", "modernbert"])
def test_uncapturable_families_are_refused_with_the_fallback(
    model_type: str, tmp_path: Path, build_nlp: Any, sample_text: str
) -> None:
    model_dir = save_unsupported(model_type, tmp_path / model_type)
    nlp = build_nlp(model_dir, initialize=False)
    with pytest.raises(ValueError, match=r"\[E003\].*output_attentions.*eager"):
        nlp.initialize()
    # the fallback the error names: the component reads the returned attention maps
    eager = build_nlp(model_dir, transformer_config=dict(EAGER))
    doc = eager(sample_text)
    assert COLSUMS not in doc._.trf_data.model_output
    assert len(doc._.separator_scores) == len(doc)
    assert len(list(doc.sents)) >= 1
