"""Sentence vectors from the last layer's attention computed again within each sentence
(``segment_vectors = "local"``, ``spacy_attnseg.local``): they equal that attention
written out independently (NumPy in float64 from the weights of tiny random models of
each family; the Hugging Face module's own attention on MiniLM), and no model runs
again."""

from __future__ import annotations

import unittest.mock
from typing import Any, List, Optional

import numpy
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_capture import hf_inputs, linear, reference_attention
from test_families import mpnet_bias
from transformers import AutoModel

from spacy_attnseg import capture, local, topics
from spacy_attnseg.capture import HIDDEN, LOCAL, CaptureRequest
from spacy_attnseg.components import segmenter as segmenter_module
from spacy_attnseg.families import get_family
from spacy_attnseg.loading import embedded_model_path, load_pipeline
from spacy_attnseg.local import offset_bias, row_units


def recorded_means(nlp: Any, text: str, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """The Doc and the sentence vectors that ``attn_segmenter`` hands to ``topics.segment``."""
    calls: List[numpy.ndarray] = []
    segment = topics.segment

    def recorded(means: numpy.ndarray, **settings: Any) -> Any:
        calls.append(means)
        return segment(means, **settings)

    monkeypatch.setattr(topics, "segment", recorded)
    doc = nlp(text)
    assert len(calls) == 1
    return doc, calls[0]


def sentence_rows(doc: Any) -> List[List[int]]:
    """Each sentence's wordpiece rows (``window * L + position``), token by token."""
    align = doc._.trf_data.align
    return [[r for t in sent for r in align[t.i].data.ravel().tolist()] for sent in doc.sents]


def same_sentence_keys(doc: Any, shape: tuple) -> numpy.ndarray:
    """``(n_windows, L, L)``: key j is in query i's sentence, or in no sentence (the
    special tokens)."""
    unit = numpy.full(shape[0] * shape[1], -1)
    for k, rows in enumerate(sentence_rows(doc)):
        unit[rows] = k
    unit = unit.reshape(shape)
    return (unit[:, :, None] == unit[:, None, :]) | (unit[:, None, :] < 0)


@pytest.mark.parametrize("budget", [None, 0], ids=["projections", "input-only"])
@pytest.mark.parametrize("chunk", [None, 300], ids=["batch", "chunks"])
@pytest.mark.parametrize("model_type", ["bert", "distilbert", "roberta", "mpnet"])
def test_tiny_models_local_vectors_equal_attention_within_each_sentence(
    model_type: str,
    chunk: Optional[int],
    budget: Optional[int],
    tiny_model_dir: Any,
    build_nlp: Any,
    sample_text: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sentence's vector is the mean over its wordpieces of the last layer's input
    plus the output projection of that layer's head outputs, each wordpiece attending
    only to its own sentence and the special tokens (MPNet: with its position bias);
    also where the windows run in chunks of about two (``capture.CHUNK_WORDPIECES``),
    and where the hooks keep only the layer's input, whose queries, keys and values are
    computed again (``capture.LOCAL_PROJECTION_BYTES``)."""
    if chunk is not None:
        monkeypatch.setattr(capture, "CHUNK_WORDPIECES", chunk)
    if budget is not None:
        monkeypatch.setattr(capture, "LOCAL_PROJECTION_BYTES", budget)
    kept: List[int] = []  # rows a window of the queries, keys and values handed over

    def recorded(parts: Any, *args: Any, **kwargs: Any) -> Any:
        kept.extend(numpy.asarray(p).shape[1] for p in parts[1:4])
        return local.local_means(parts, *args, **kwargs)

    monkeypatch.setattr(segmenter_module, "local_means", recorded)
    model_dir = tiny_model_dir(model_type)
    # (a low threshold: random weights find few sentences otherwise; the units are the
    # sentences, long ones too)
    nlp = build_nlp(
        model_dir, segmenter={"threshold": 0.05, "min_sents": 1, "long_sentence_tokens": 0}
    )
    doc, means = recorded_means(nlp, sample_text, monkeypatch)
    assert LOCAL not in doc._.trf_data.model_output  # released after its reader
    trf_data = doc._.trf_data
    reference = AutoModel.from_pretrained(model_dir, attn_implementation="eager")
    reference.eval()
    inputs = hf_inputs(trf_data)
    if model_type == "mpnet":
        inputs.pop("token_type_ids", None)
    with torch.no_grad():
        out = reference(**inputs, output_hidden_states=True)
    last = len(out.hidden_states) - 2
    hidden = out.hidden_states[last].double().numpy()
    family = get_family(reference)
    assert family is not None
    modules = family.layers(reference)[last]
    mask = inputs["attention_mask"].numpy()
    allowed = same_sentence_keys(doc, mask.shape)
    bias = mpnet_bias(reference, mask.shape[1]) if model_type == "mpnet" else None
    n_heads = getattr(reference.config, "num_attention_heads", None) or reference.config.n_heads
    qkv = (modules.query, modules.key, modules.value)
    _, context = reference_attention(
        hidden, None, n_heads, mask, modules=qkv, bias=bias, allowed=allowed
    )
    rows_out = hidden + linear(context, modules.output)
    flat = rows_out.reshape((-1, rows_out.shape[-1]))
    expected = numpy.stack([flat[rows].mean(axis=0) for rows in sentence_rows(doc)])
    assert len(expected) >= 3
    numpy.testing.assert_allclose(means, expected, rtol=1e-4, atol=1e-4)
    assert kept and all((rows == 0) == (budget == 0) for rows in kept)
    # the mask matters: the whole window's attention gives other vectors
    _, full = reference_attention(hidden, None, n_heads, mask, modules=qkv, bias=bias)
    full_rows = (hidden + linear(full, modules.output)).reshape(flat.shape)
    unmasked = numpy.stack([full_rows[rows].mean(axis=0) for rows in sentence_rows(doc)])
    assert numpy.abs(unmasked - expected).max() > 1e-2


@pytest.mark.parametrize("budget", [None, 0], ids=["projections", "input-only"])
def test_minilm_local_vectors_equal_the_modules_own_attention(
    minilm_nlp: Any, monkeypatch: pytest.MonkeyPatch, budget: Optional[int]
) -> None:
    """On MiniLM (the ``attention`` pipeline's own sentences): the vectors equal what
    the last BERT layer's own attention module gives with a mask of each sentence,
    whether the hooks keep its queries, keys and values or only its input."""
    if budget is not None:
        monkeypatch.setattr(capture, "LOCAL_PROJECTION_BYTES", budget)
    kept: List[int] = []  # rows a window of the queries, keys and values handed over

    def recorded(parts: Any, *args: Any, **kwargs: Any) -> Any:
        kept.extend(numpy.asarray(p).shape[1] for p in parts[1:4])
        return local.local_means(parts, *args, **kwargs)

    monkeypatch.setattr(segmenter_module, "local_means", recorded)
    text = (
        "The committee approved the new budget for the city library. Funding for books "
        "rose by ten percent. My cat refuses to eat dry food. She waits by the fridge "
        "every morning. The volcano erupted twice last week. Ash clouds closed the "
        "airport for two days."
    )
    doc, means = recorded_means(minilm_nlp, text, monkeypatch)
    assert HIDDEN not in doc._.trf_data.model_output  # "local" captures no hidden sums
    model = AutoModel.from_pretrained(embedded_model_path())
    model.eval()
    inputs = hf_inputs(doc._.trf_data)
    mask = inputs["attention_mask"]
    allowed = torch.as_tensor(same_sentence_keys(doc, tuple(mask.shape))) & (mask[:, None, :] > 0)
    additive = torch.zeros(allowed.shape).masked_fill(~allowed, torch.finfo(torch.float32).min)
    layer = model.encoder.layer[-1]
    with torch.no_grad():
        hidden = model(**inputs, output_hidden_states=True).hidden_states[-2]
        context = layer.attention.self(hidden, attention_mask=additive[:, None])[0]
        rows = (hidden + layer.attention.output.dense(context)).numpy()
    flat = rows.reshape((-1, rows.shape[-1]))
    expected = numpy.stack([flat[r].mean(axis=0) for r in sentence_rows(doc)])
    assert len(expected) == 6
    numpy.testing.assert_allclose(means, expected, rtol=1e-4, atol=1e-4)
    assert kept and all((rows == 0) == (budget == 0) for rows in kept)
    # the segments are the rule's over these vectors; at the price of the text's own six
    # sentences (not the 30 a short text pays for), each piece of two is a segment
    sents = list(doc.sents)
    cfg = minilm_nlp.get_pipe("attn_segmenter").cfg
    rule = {"penalty": cfg["segment_penalty"], "drift": cfg["segment_drift"]}
    shipped, _ = topics.segment(means, **rule, short_text=cfg["segment_short_text"])
    assert [s.start for s in doc.spans["attn_segments"]] == [sents[k].start for k in shipped]
    own_length, _ = topics.segment(means, **rule, short_text=0)
    assert own_length == [0, 2, 4]


def test_offset_bias_reads_each_offset() -> None:
    """``offset_bias`` gives a bias that depends on the key's offset only, at any
    gathered query and key positions."""
    length, heads = 6, 2
    table = torch.randn(heads, 2 * length - 1)
    offset = torch.arange(length)[None, :] - torch.arange(length)[:, None]
    full = table[:, offset + length - 1]  # (heads, L, L)
    after, before = full[:, 0, :], full[:, :, 0]
    queries, keys = torch.tensor([4, 1, 2]), torch.tensor([0, 5, 2, 3])
    offsets = keys[None, :] - queries[:, None]
    rebuilt = offset_bias(after[None], before[None], offsets[None])[0]
    assert torch.equal(rebuilt, full[:, queries][:, :, keys])


def dense_local_context(
    query: numpy.ndarray,
    key: numpy.ndarray,
    value: numpy.ndarray,
    units: numpy.ndarray,
    mask: numpy.ndarray,
    n_heads: int,
    bias: Optional[numpy.ndarray],
) -> numpy.ndarray:
    """Float64 attention over whole windows, keys restricted to the query's unit and
    the special tokens; ``bias`` ``(n, heads, L, L)`` or None."""
    n, length, width = query.shape
    d = width // n_heads
    split = [x.reshape(n, length, n_heads, d).transpose(0, 2, 1, 3) for x in (query, key, value)]
    scores = split[0] @ split[1].transpose(0, 1, 3, 2) / numpy.sqrt(d)
    if bias is not None:
        scores = scores + bias
    allowed = (units[:, :, None] == units[:, None, :]) | (units[:, None, :] < 0)
    allowed &= (mask > 0)[:, None, :]
    scores = numpy.where(allowed[:, None], scores, -numpy.inf)
    with numpy.errstate(invalid="ignore"):  # rows with no key allowed: not compared
        weights = numpy.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
    return (weights @ split[2]).transpose(0, 2, 1, 3).reshape(n, length, width)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n_windows=st.integers(1, 3),
    length=st.integers(3, 24),
    with_bias=st.booleans(),
    step=st.sampled_from([1, 200, 1 << 22]),
)
def test_local_context_equals_dense_attention_within_units(
    data: Any, n_windows: int, length: int, with_bias: bool, step: int
) -> None:
    """Attention computed block by block (in steps of any size) equals the whole
    windows' attention under the unit mask, for units in runs or scattered, specials
    anywhere and padding at the end; rows of no unit and padding get zeros."""
    n_heads, d = 2, 3
    rng = numpy.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    units = numpy.array(
        data.draw(
            st.lists(
                st.lists(st.integers(-1, 4), min_size=length, max_size=length),
                min_size=n_windows,
                max_size=n_windows,
            )
        )
    )
    real = numpy.array(
        data.draw(st.lists(st.integers(1, length), min_size=n_windows, max_size=n_windows))
    )
    mask = (numpy.arange(length)[None, :] < real[:, None]).astype("int64")
    query, key, value = (rng.normal(size=(n_windows, length, n_heads * d)) for _ in range(3))
    after, before = rng.normal(size=(2, n_windows, n_heads, length))
    index = numpy.abs(numpy.arange(length)[None, :] - numpy.arange(length)[:, None])
    later = numpy.arange(length)[None, :] >= numpy.arange(length)[:, None]
    dense_bias = numpy.where(later, after[:, :, index], before[:, :, index])
    with unittest.mock.patch.object(local, "SCORES_PER_STEP", step):
        q, k, v = (torch.as_tensor(x, dtype=torch.float32) for x in (query, key, value))
        bias = [torch.as_tensor(x, dtype=torch.float32) for x in (after, before)]
        got = local.local_context(
            q,
            k,
            v,
            torch.as_tensor(units),
            torch.as_tensor(mask),
            n_heads,
            bias if with_bias else None,
        ).numpy()
    expected = dense_local_context(
        query, key, value, units, mask, n_heads, dense_bias if with_bias else None
    )
    inside = (units >= 0) & (mask > 0)
    numpy.testing.assert_allclose(got[inside], expected[inside], rtol=1e-4, atol=1e-4)
    assert not got[~inside].any()


def test_unit_blocks() -> None:
    """One block per unit of each window (a unit's scattered rows too), shortest first,
    padding in none, with its window's special positions."""
    units = numpy.array([[-1, 0, 0, 1, 0, -1, -1], [-1, 2, -1, -1, -1, -1, -1]])
    mask = numpy.array([[1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 0, 0, 0, 0]])
    window, rows, specials = local.unit_blocks(units, mask)
    assert window.tolist() == [0, 1, 0]
    assert rows.tolist() == [[3, -1, -1], [1, -1, -1], [1, 2, 4]]
    assert specials.tolist() == [[0, 5], [0, 2], [0, 5]]


def test_row_units() -> None:
    units = row_units(numpy.array([1, 2, 5]), numpy.array([0, 0, 1]), (2, 3))
    assert units.tolist() == [[-1, 0, 0], [-1, -1, 1]]


def test_the_hidden_vectors_stay_available(
    tiny_model_dir: Any, build_nlp: Any, sample_text: str
) -> None:
    """``segment_vectors = "hidden"`` captures the summed hidden states instead, and an
    unknown value is refused with E124."""
    nlp = build_nlp(tiny_model_dir("bert"))
    segmenter = nlp.get_pipe("attn_segmenter")
    assert segmenter.capture_request().local_layers == (-1,)
    hidden = load_pipeline(
        "attention", overrides={"components.attn_segmenter.segment_vectors": "hidden"}
    )
    request = hidden.get_pipe("attn_segmenter").capture_request()
    assert request.local_layers == () and request.hidden_last == 4
    trf = hidden.get_pipe("transformer")(hidden.make_doc(sample_text))
    assert HIDDEN in trf._.trf_data.model_output and LOCAL not in trf._.trf_data.model_output
    with pytest.raises(ValueError, match="E124"):
        load_pipeline("attention", overrides={"components.attn_segmenter.segment_vectors": "x"})


def test_a_hidden_segmenter_reads_the_hidden_states_whatever_else_is_captured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A segmenter set to ``"hidden"`` reads the summed hidden states also where another
    component asked the same pass for the local arrays."""
    nlp = load_pipeline(
        "attention", overrides={"components.attn_segmenter.segment_vectors": "hidden"}
    )
    text = "The rain stopped. We went out. It was cold. The shop was shut. We came home."
    _, alone = recorded_means(nlp, text, monkeypatch)
    segmenter = nlp.get_pipe("attn_segmenter")
    segmenter.capture.request("other", CaptureRequest(local_layers=(-1,)))
    try:
        _, beside = recorded_means(nlp, text, monkeypatch)
    finally:
        segmenter.capture.withdraw("other")
    numpy.testing.assert_allclose(beside, alone, rtol=1e-5, atol=1e-5)
