"""Capture hooks: the numbers added to the transformer's output equal an independent
NumPy recomputation from the model's own weights, and capturing costs no extra pass."""

from __future__ import annotations

import math
import pickle
from typing import Any, Dict, List, Optional, Tuple

import numpy
import pytest
import torch
from conftest import ewt_texts, minilm_vocab_file, transformer_only_nlp
from hypothesis import given
from hypothesis import strategies as st
from spacy.util import minibatch
from spacy_transformers.util import batch_by_length
from transformers import AutoModel

import spacy_attnseg
from spacy_attnseg import capture
from spacy_attnseg.capture import (
    COLSUM_HEADS,
    COLSUMS,
    CONTEXT,
    CONTEXT_LAYERS,
    HIDDEN,
    LOCAL,
    AttentionCapture,
    CaptureRequest,
    _fill_rows,
    column_sums,
    plan_chunks,
    read_spaces_as_spaces,
    right_padded_lengths,
)
from spacy_attnseg.loading import embedded_model_path

EAGER = {"output_attentions": True, "attn_implementation": "eager"}
SPECIAL_STRINGS = {"[CLS]", "[SEP]", "[PAD]", "<s>", "</s>", "<pad>"}


# -- independent reference ---------------------------------------------------------


def hf_inputs(trf_data: Any) -> Dict[str, torch.Tensor]:
    wordpieces = trf_data.wordpieces
    inputs = {
        "input_ids": torch.as_tensor(numpy.asarray(wordpieces.input_ids), dtype=torch.long),
        "attention_mask": torch.as_tensor(
            numpy.asarray(wordpieces.attention_mask), dtype=torch.long
        ),
    }
    if wordpieces.token_type_ids is not None:
        inputs["token_type_ids"] = torch.as_tensor(
            numpy.asarray(wordpieces.token_type_ids), dtype=torch.long
        )
    return inputs


def real_wordpieces(trf_data: Any) -> numpy.ndarray:
    """(n_windows, L) bool: not padding and not a [CLS]/[SEP]-like marker, decided from
    the wordpiece strings rather than from token ids."""
    wordpieces = trf_data.wordpieces
    mask = numpy.asarray(wordpieces.attention_mask) > 0
    keep = numpy.zeros_like(mask)
    for w, strings in enumerate(wordpieces.strings):
        for i, string in enumerate(strings):
            keep[w, i] = mask[w, i] and string not in SPECIAL_STRINGS
    return keep


def linear(x: numpy.ndarray, module: torch.nn.Linear) -> numpy.ndarray:
    weight = module.weight.detach().double().numpy()
    bias = module.bias.detach().double().numpy()
    return x @ weight.T + bias


def reference_attention(
    hidden: numpy.ndarray,
    attn: Any,
    n_heads: int,
    attention_mask: numpy.ndarray,
    *,
    modules: Optional[Tuple[Any, Any, Any]] = None,
    bias: Optional[numpy.ndarray] = None,
    allowed: Optional[numpy.ndarray] = None,
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """softmax(QK^T/sqrt(d) + bias) with padding keys masked, and softmax(...)V, in
    float64, from the layer input ``hidden`` (n_windows, L, H) and the query/key/value
    Linear modules (``modules``, default the BERT self-attention ``attn``'s); ``bias``
    (heads, L, L) is added to every window's scores (MPNet); ``allowed`` (n_windows, L,
    L), where given, masks the keys each query may not attend to as well."""
    h = hidden.astype("float64")
    batch, length, width = h.shape
    d = width // n_heads

    def split(x: numpy.ndarray) -> numpy.ndarray:
        return x.reshape(batch, length, n_heads, d).transpose(0, 2, 1, 3)

    modules = modules or (attn.query, attn.key, attn.value)
    q, k, v = (split(linear(h, m)) for m in modules)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    if bias is not None:
        scores = scores + bias[None]
    keys = numpy.broadcast_to(attention_mask[:, None, :] > 0, (batch, length, length))
    if allowed is not None:
        keys = keys & allowed
    scores = numpy.where(keys[:, None], scores, -numpy.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    probs = numpy.exp(scores)
    probs /= probs.sum(axis=-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
    return probs, context


def reference_colsums(probs: numpy.ndarray, keep: numpy.ndarray) -> numpy.ndarray:
    """Column sums over the kept query rows, non-kept columns zeroed (loop over windows
    and heads; ``probs`` is (n_windows, n_heads, L, L))."""
    out = numpy.zeros(probs.shape[:2] + probs.shape[-1:], dtype="float64")
    for w in range(probs.shape[0]):
        rows = numpy.flatnonzero(keep[w])
        for head in range(probs.shape[1]):
            out[w, head] = probs[w, head][rows].sum(axis=0) * keep[w]
    return out


def captured_by_head(output: Any) -> Dict[Tuple[int, int], numpy.ndarray]:
    heads = numpy.asarray(output[COLSUM_HEADS])
    colsums = numpy.asarray(output[COLSUMS])
    assert (heads == heads[:1]).all(), "every window lists the same heads"
    return {(int(l_), int(h)): colsums[:, i] for i, (l_, h) in enumerate(heads[0])}


@pytest.fixture(scope="module")
def minilm_hf() -> Any:
    model = AutoModel.from_pretrained(embedded_model_path())
    model.eval()
    return model


@pytest.fixture(scope="module")
def minilm_all_heads_doc(minilm_nlp: Any, sample_text: str) -> Any:
    """The sample text through the embedded pipeline with every head's column sums and
    the head outputs of layers 1 and 4 captured."""
    capture = minilm_nlp.get_pipe("attn_segmenter").capture
    capture.request("test_capture", CaptureRequest(colsum_layers=None, context_layers=(1, -2)))
    try:
        doc = minilm_nlp(sample_text)
    finally:
        capture.withdraw("test_capture")
    return doc


# -- MiniLM ---------------------------------------------------------------------------


def test_minilm_colsums_and_context_match_numpy(minilm_all_heads_doc: Any, minilm_hf: Any) -> None:
    doc = minilm_all_heads_doc
    trf_data = doc._.trf_data
    wordpieces = trf_data.wordpieces
    n_windows, length = wordpieces.input_ids.shape
    assert n_windows >= 3, "the sample must span several windows"
    attention_mask = numpy.asarray(wordpieces.attention_mask)
    assert (attention_mask == 0).any(), "the windows must differ in length (padding)"
    assert not any("[UNK]" in strings for strings in wordpieces.strings)
    keep = real_wordpieces(trf_data)

    with torch.no_grad():
        hf_out = minilm_hf(**hf_inputs(trf_data), output_hidden_states=True)
    n_layers = minilm_hf.config.num_hidden_layers
    n_heads = minilm_hf.config.num_attention_heads
    captured = captured_by_head(trf_data.model_output)
    assert sorted(captured) == [(l_, h) for l_ in range(n_layers) for h in range(n_heads)]

    output = trf_data.model_output
    assert [int(x) for x in numpy.asarray(output[CONTEXT_LAYERS])[0]] == [1, 4]
    assert numpy.asarray(output[CONTEXT_LAYERS]).shape == (n_windows, 2)
    contexts = dict(zip([1, 4], output[CONTEXT], strict=True))

    for layer in range(n_layers):
        hidden = hf_out.hidden_states[layer].numpy()
        attn = minilm_hf.encoder.layer[layer].attention.self
        probs, context = reference_attention(hidden, attn, n_heads, attention_mask)
        expected = reference_colsums(probs, keep)
        for head in range(n_heads):
            actual = captured[(layer, head)]
            assert actual.shape == (n_windows, length)
            numpy.testing.assert_allclose(actual, expected[:, head], rtol=1e-5, atol=1e-5)
        if layer in contexts:
            actual_context = numpy.asarray(contexts[layer])
            assert actual_context.shape == (n_windows, length, minilm_hf.config.hidden_size)
            # at the windows' wordpieces (padding positions hold no output of the model)
            real = attention_mask > 0
            numpy.testing.assert_allclose(actual_context[real], context[real], rtol=1e-5, atol=1e-5)
    # Special and padding columns are zero; real columns carry the attention mass.
    some = captured[(2, 2)]
    assert (some[~keep] == 0).all()
    assert (some[keep] > 0).all()


def test_minilm_component_reads_its_own_heads(minilm_nlp: Any, sample_text: str) -> None:
    """Without extra requests only the configured heads are captured, and they equal the
    same heads captured alongside all others."""
    segmenter = minilm_nlp.get_pipe("attn_segmenter")
    doc = minilm_nlp(sample_text)
    output = doc._.trf_data.model_output
    assert CONTEXT not in output
    heads = [tuple(int(x) for x in row) for row in numpy.asarray(output[COLSUM_HEADS])[0]]
    assert heads == sorted(segmenter.selected_heads())
    assert numpy.asarray(output[COLSUMS]).dtype == numpy.float32


def test_configured_heads_equal_all_heads_capture(
    minilm_nlp: Any, minilm_all_heads_doc: Any, sample_text: str
) -> None:
    doc = minilm_nlp(sample_text)
    alone = captured_by_head(doc._.trf_data.model_output)
    together = captured_by_head(minilm_all_heads_doc._.trf_data.model_output)
    for head, values in alone.items():
        numpy.testing.assert_allclose(values, together[head], rtol=1e-5, atol=1e-5)
    assert doc._.separator_scores == pytest.approx(
        minilm_all_heads_doc._.separator_scores, abs=1e-5
    )


# -- forward calls --------------------------------------------------------------------


class ForwardCounter:
    def __init__(self, module: torch.nn.Module) -> None:
        self.calls = 0
        self.handle = module.register_forward_pre_hook(self._count)

    def _count(self, module: Any, args: Any) -> None:
        self.calls += 1

    def __enter__(self) -> ForwardCounter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.handle.remove()


def expected_passes(nlp: Any, texts: List[str], batch_size: int) -> int:
    """Passes spacy-transformers makes: one per length-bucketed sub-batch of each
    minibatch that has a non-empty doc."""
    trf = nlp.get_pipe("transformer")
    docs = [nlp.make_doc(text) for text in texts]
    passes = 0
    for outer in minibatch(docs, batch_size):
        for indices in batch_by_length(outer, trf.cfg["max_batch_items"]):
            passes += any(len(outer[i]) for i in indices)
    return passes


def test_component_never_runs_the_model(
    minilm_nlp: Any, sample_text: str, sample_texts: List[str]
) -> None:
    hf_model = minilm_nlp.get_pipe("transformer").model.transformer
    texts = ["", "Short one."] + sample_texts + ["   "]

    with ForwardCounter(hf_model) as counter:
        doc = minilm_nlp(sample_text)
    assert counter.calls == 1
    assert len(list(doc.sents)) > 1

    with ForwardCounter(hf_model) as counter:
        with_segmenter = list(minilm_nlp.pipe(texts, batch_size=4))
    with minilm_nlp.select_pipes(disable=["attn_segmenter"]), ForwardCounter(hf_model) as baseline:
        without = list(minilm_nlp.pipe(texts, batch_size=4))
    assert counter.calls == baseline.calls == expected_passes(minilm_nlp, texts, 4)
    assert counter.calls >= 4
    assert all(d._.separator_scores is not None for d in with_segmenter)
    assert all(d._.separator_scores is None for d in without)

    # The component on a doc the transformer already processed: no pass at all.
    transformer = minilm_nlp.get_pipe("transformer")
    segmenter = minilm_nlp.get_pipe("attn_segmenter")
    doc = transformer(minilm_nlp.make_doc(sample_text))
    with ForwardCounter(hf_model) as counter:
        segmenter(doc)
        list(segmenter.pipe([doc], batch_size=2))
    assert counter.calls == 0
    assert doc.has_annotation("SENT_START")


# -- output_attentions instead of hooks -----------------------------------------------


def test_output_attentions_path_matches_hooks(minilm_nlp: Any, sample_text: str) -> None:
    eager = spacy_attnseg.load_pipeline(
        "attention", overrides={"components.transformer.model.transformer_config": dict(EAGER)}
    )
    hf_model = eager.get_pipe("transformer").model.transformer
    assert hf_model.config._attn_implementation == "eager"
    doc_eager = eager(sample_text)
    doc_hooks = minilm_nlp(sample_text)
    output = doc_eager._.trf_data.model_output
    assert "attentions" in output and COLSUMS not in output
    assert COLSUMS in doc_hooks._.trf_data.model_output

    segmenter = eager.get_pipe("attn_segmenter")
    heads = segmenter.selected_heads()
    numpy.testing.assert_allclose(
        segmenter.window_colsums(doc_eager, heads),
        minilm_nlp.get_pipe("attn_segmenter").window_colsums(doc_hooks, heads),
        rtol=1e-5,
        atol=1e-5,
    )
    assert doc_eager._.separator_scores == pytest.approx(doc_hooks._.separator_scores, abs=1e-5)
    assert [s.start for s in doc_eager.sents] == [s.start for s in doc_hooks.sents]


# -- tiny random models of each supported family ---------------------------------------


@pytest.mark.parametrize("model_type", ["bert", "distilbert", "roberta", "mpnet"])
def test_tiny_models_hooks_equal_eager_attention(
    model_type: str, tiny_model_dir: Any, build_nlp: Any, sample_text: str
) -> None:
    model_dir = tiny_model_dir(model_type)
    nlp = build_nlp(model_dir)
    assert (
        type(nlp.get_pipe("transformer").model.transformer).__name__.lower().startswith(model_type)
    )
    nlp.get_pipe("attn_segmenter").capture.request("test", CaptureRequest(colsum_layers=None))
    doc = nlp(sample_text)
    trf_data = doc._.trf_data
    assert trf_data.wordpieces.input_ids.shape[0] >= 3
    assert (numpy.asarray(trf_data.wordpieces.attention_mask) == 0).any()
    captured = captured_by_head(trf_data.model_output)

    reference = AutoModel.from_pretrained(model_dir, attn_implementation="eager")
    reference.eval()
    with torch.no_grad():
        out = reference(**hf_inputs(trf_data), output_attentions=True)
    keep = real_wordpieces(trf_data)
    n_layers, n_heads = len(out.attentions), out.attentions[0].shape[1]
    assert (n_layers, n_heads) == (2, 4)
    assert sorted(captured) == [(l_, h) for l_ in range(n_layers) for h in range(n_heads)]
    for layer, attentions in enumerate(out.attentions):
        expected = reference_colsums(attentions.double().numpy(), keep)
        for head in range(n_heads):
            numpy.testing.assert_allclose(
                captured[(layer, head)], expected[:, head], rtol=1e-5, atol=1e-5
            )
    # Random weights with a wide init give peaked attention, so the comparison is not
    # between two near-uniform maps.
    assert numpy.std(captured[(1, 0)][keep]) > 0.1

    # The component reads `attentions` instead when the model returns them.
    eager = build_nlp(model_dir, transformer_config=dict(EAGER))
    doc_eager = eager(sample_text)
    assert COLSUMS not in doc_eager._.trf_data.model_output
    assert doc_eager._.separator_scores == pytest.approx(doc._.separator_scores, abs=1e-5)
    assert [s.start for s in doc_eager.sents] == [s.start for s in doc.sents]


@pytest.mark.parametrize("transformer_config", [{}, EAGER], ids=["sdpa", "eager"])
@pytest.mark.parametrize("model_type", ["bert", "distilbert", "roberta", "mpnet"])
def test_tiny_models_captured_hidden_states_are_the_layers_outputs(
    model_type: str,
    transformer_config: Dict[str, Any],
    tiny_model_dir: Any,
    build_nlp: Any,
    sample_text: str,
) -> None:
    """The captured hidden state is the sum of the chosen layers' outputs, also where a
    layer's output holds its attention maps too (eager attention)."""
    model_dir = tiny_model_dir(model_type)
    nlp = build_nlp(model_dir, transformer_config=dict(transformer_config))
    nlp.get_pipe("attn_segmenter").capture.request("test", CaptureRequest(hidden_layers=(0, 1)))
    # the transformer alone: the segmenter would release the arrays it read
    trf_data = nlp.get_pipe("transformer")(nlp.make_doc(sample_text))._.trf_data
    captured = numpy.asarray(trf_data.model_output[HIDDEN])
    reference = AutoModel.from_pretrained(model_dir)
    reference.eval()
    with torch.no_grad():
        out = reference(**hf_inputs(trf_data), output_hidden_states=True)
    expected = (out.hidden_states[1] + out.hidden_states[2]).numpy()
    real = numpy.asarray(trf_data.wordpieces.attention_mask) > 0
    assert captured.shape == expected.shape
    numpy.testing.assert_allclose(captured[real], expected[real], rtol=1e-5, atol=1e-5)


def test_hooks_follow_a_reloaded_model(tiny_model_dir: Any, build_nlp: Any) -> None:
    """`from_bytes` rebuilds the Hugging Face module; the hooks move to the new one."""
    nlp = build_nlp(tiny_model_dir("bert"))
    text = "One sentence here. Another one there! And a third?"
    before = nlp(text)._.trf_data.model_output[COLSUMS]
    transformer = nlp.get_pipe("transformer")
    old_module = transformer.model.transformer
    transformer.from_bytes(transformer.to_bytes())
    assert transformer.model.transformer is not old_module
    after = nlp(text)._.trf_data.model_output[COLSUMS]
    numpy.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("model_type", ["bert", "distilbert", "roberta", "mpnet"])
def test_a_pickled_pipeline_captures_as_the_original(
    model_type: str, tiny_model_dir: Any, build_nlp: Any, sample_text: str
) -> None:
    """A pipeline whose module carries every kind of hook (pickled after a pass, as
    ``nlp.pipe(..., n_process=2)`` does where workers spawn) captures in its copy what
    the original captures; the copy's module carries one set of hooks, not two."""
    nlp = build_nlp(tiny_model_dir(model_type))
    everything = CaptureRequest(
        colsum_layers=None, context_layers=None, hidden_layers=None, local_layers=(1,)
    )
    nlp.get_pipe("attn_segmenter").capture.request("test", everything)
    transformer = nlp.get_pipe("transformer")
    want = transformer(nlp.make_doc(sample_text))._.trf_data.model_output

    def hooks(pipeline: Any) -> int:
        module = pipeline.get_pipe("transformer").model.transformer
        return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in module.modules())

    copied = pickle.loads(pickle.dumps(nlp))
    got = copied.get_pipe("transformer")(copied.make_doc(sample_text))._.trf_data.model_output
    keys = [key for key in want if key.startswith("attnseg_")]
    assert {COLSUMS, CONTEXT, HIDDEN, LOCAL} <= set(keys)
    assert sorted(got) == sorted(want)
    for key in keys:
        for a, b in zip(numpy_leaves(got[key]), numpy_leaves(want[key]), strict=True):
            numpy.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert hooks(copied) == hooks(nlp) > 0


def numpy_leaves(value: Any) -> List[numpy.ndarray]:
    """The arrays of a captured output (an array, or nested lists and tuples of them)."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in numpy_leaves(item)]
    return [numpy.asarray(value)]


def test_capture_without_requests_adds_nothing(tiny_model_dir: Any) -> None:
    """A transformer whose capture has no requests runs unchanged."""
    from spacy_attnseg.capture import AttentionCapture

    nlp = transformer_only_nlp(tiny_model_dir("bert"))
    nlp.initialize()
    capture = AttentionCapture.attach(nlp.get_pipe("transformer").model)
    assert AttentionCapture.attach(nlp.get_pipe("transformer").model) is capture
    output = nlp("Nothing to capture. Really.")._.trf_data.model_output
    assert not any(key.startswith("attnseg_") for key in output)


# -- windows in chunks of similar length ------------------------------------------------


@given(
    lengths=st.lists(st.integers(1, 600), max_size=60),
    budget=st.integers(1, 5000),
    share=st.floats(0, 1),
)
def test_plan_chunks_runs_every_window_once_within_the_budget(
    lengths: List[int], budget: int, share: float
) -> None:
    chunks = plan_chunks(lengths, budget, share)
    assert sorted(w for windows, _ in chunks for w in windows) == list(range(len(lengths)))
    for windows, length in chunks:
        assert length == max(lengths[w] for w in windows)
        assert len(windows) == 1 or len(windows) * length <= budget
        assert all(lengths[w] >= share * length for w in windows)
    assert [length for _, length in chunks] == sorted((n for _, n in chunks), reverse=True)
    # a chunk ends only where the next window would break the budget or the share
    for (windows, length), (after, _) in zip(chunks, chunks[1:], strict=False):
        assert (len(windows) + 1) * length > budget or lengths[after[0]] < share * length


def test_right_padded_lengths() -> None:
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]])
    assert right_padded_lengths(mask, 4) == [2, 4, 1]
    assert right_padded_lengths(torch.tensor([[0, 0, 1, 1], [1, 1, 1, 1]]), 4) is None
    assert right_padded_lengths(torch.tensor([[1, 0, 1, 1]]), 4) is None
    assert right_padded_lengths(None, 4) is None


def test_fill_rows_puts_a_chunk_back_in_the_batchs_order() -> None:
    """A chunk of every window, sorted by length (not the batch's order), goes back to
    each window's row, also for an output without a wordpiece dimension (the pooler)."""
    rows = torch.tensor([2, 0, 1])
    store: Dict[Any, torch.Tensor] = {}
    pooled = torch.tensor([[2.0], [0.0], [1.0]])
    _fill_rows(store, "pooler_output", pooled, (3, 5), rows, ())
    assert store["pooler_output"][:, 0].tolist() == [0.0, 1.0, 2.0]
    hidden = torch.arange(3 * 4, dtype=torch.float32).reshape(3, 4, 1)
    _fill_rows(store, "last_hidden_state", hidden, (3, 5), rows, (1,))
    assert store["last_hidden_state"].shape == (3, 5, 1)
    assert torch.equal(store["last_hidden_state"][2, :4], hidden[0])
    assert torch.equal(store["last_hidden_state"][:, 4], torch.zeros(3, 1))
    # the whole batch in its order and width: kept as it is, no copy
    whole: Dict[Any, torch.Tensor] = {}
    _fill_rows(whole, "pooler_output", pooled, (3, 5), slice(None), ())
    assert whole["pooler_output"] is pooled


def _outputs(doc: Any) -> Dict[str, numpy.ndarray]:
    output = doc._.trf_data.model_output
    found = {
        "last_hidden_state": numpy.asarray(output.last_hidden_state),
        "pooler_output": numpy.asarray(output.pooler_output),
        HIDDEN: numpy.asarray(output[HIDDEN]),
        COLSUMS: numpy.asarray(output[COLSUMS]),
    }
    for k, array in enumerate(output[CONTEXT]):
        found[f"context_{k}"] = numpy.asarray(array)
    for k, array in enumerate(output[LOCAL]):
        found[f"local_{k}"] = numpy.asarray(array)
    return found


def test_windows_run_in_chunks_of_their_own_length(
    minilm_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of windows of mixed lengths runs in chunks, each padded to its own longest
    window; every output at the windows' wordpieces is that of one pass over the batch
    as spacy-transformers pads it, and so are the component's decisions."""
    texts = ewt_texts()[:24]
    trf = minilm_nlp.get_pipe("transformer")
    cap = AttentionCapture.attach(trf.model)
    cap.request("test_chunks", CaptureRequest(context_layers=(1, 3), hidden_last=2))
    embeddings = trf.model.transformer.embeddings

    def run() -> Tuple[List[Any], List[Any]]:
        # the outputs of the transformer alone (the segmenter releases what it read)
        passes = list(trf.pipe([minilm_nlp.make_doc(t) for t in texts], batch_size=24))
        return passes, list(minilm_nlp.pipe(texts, batch_size=24))

    widths: List[Tuple[int, int]] = []
    try:
        handle = embeddings.register_forward_pre_hook(
            lambda module, args, kwargs: widths.append(tuple(kwargs["input_ids"].shape)),
            with_kwargs=True,
        )
        try:
            chunked, chunked_docs = run()
        finally:
            handle.remove()
        monkeypatch.setattr(capture, "right_padded_lengths", lambda mask, width: None)
        monkeypatch.setattr(capture, "CHUNK_WORDPIECES", 10**9)
        whole, whole_docs = run()
    finally:
        cap.withdraw("test_chunks")
    batch_width = chunked[0]._.trf_data.wordpieces.input_ids.shape[1]
    # the pipeline's pass and the transformer's alone
    assert len(widths) > 4 and min(width for _, width in widths) < batch_width / 2
    for a, b in zip(chunked, whole, strict=True):
        real = numpy.asarray(a._.trf_data.wordpieces.attention_mask) > 0
        got, expected = _outputs(a), _outputs(b)
        assert sorted(got) == sorted(expected)
        for key, array in got.items():
            assert array.shape == expected[key].shape, key
            assert numpy.isfinite(array).all(), key
            if key == COLSUMS:
                # (windows, heads, L): compared at each window's wordpieces
                array, want = array.transpose(0, 2, 1)[real], expected[key].transpose(0, 2, 1)[real]
            elif key == "pooler_output":
                want = expected[key]
            else:
                array, want = array[real], expected[key][real]
            # float rounding of passes of other sizes, on values up to about 5
            numpy.testing.assert_allclose(array, want, rtol=1e-4, atol=1e-4, err_msg=key)
    for a, b in zip(chunked_docs, whole_docs, strict=True):
        assert [t.is_sent_start for t in a] == [t.is_sent_start for t in b]
        assert a._.separator_scores == pytest.approx(b._.separator_scores, abs=1e-5)
        assert [s.start for s in a.spans["attn_segments"]] == [
            s.start for s in b.spans["attn_segments"]
        ]


def test_windows_padded_at_the_front_run_in_the_batchs_order(
    minilm_nlp: Any, minilm_hf: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    minilm_nlp("Hooks installed. Now the forward is chunked.")
    hf = minilm_nlp.get_pipe("transformer").model.transformer
    assert isinstance(hf.forward, capture._ChunkedForward)
    ids = torch.tensor(
        [[0, 0, 101, 7592, 102], [101, 7592, 2088, 999, 102], [0, 101, 2088, 999, 102]]
    )
    mask = (ids != 0).long()
    assert right_padded_lengths(mask, 5) is None
    widths: List[int] = []
    handle = hf.embeddings.register_forward_pre_hook(
        lambda module, args, kwargs: widths.append(kwargs["input_ids"].shape[1]), with_kwargs=True
    )
    monkeypatch.setattr(capture, "CHUNK_WORDPIECES", 5)
    hf.eval()  # (thinc's shim leaves the module in training mode between passes)
    try:
        with torch.no_grad():
            chunked = hf(input_ids=ids, attention_mask=mask).last_hidden_state
            whole = minilm_hf(input_ids=ids, attention_mask=mask).last_hidden_state
    finally:
        handle.remove()
        hf.train()
    assert widths == [5, 5, 5]
    numpy.testing.assert_allclose(chunked.numpy(), whole.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("maps", ["numpy", "torch"])
@pytest.mark.parametrize("mask", ["numpy", "torch"])
def test_column_sums_take_the_mask_to_the_maps(maps: str, mask: str) -> None:
    """Column sums over the kept query rows, the other columns zero, whichever library
    holds the maps and the mask: on a GPU the maps are device arrays and the mask
    comes from the wordpieces, on the CPU."""
    rng = numpy.random.default_rng(0)
    probs = rng.random((2, 3, 5, 5)).astype("float32")
    keep = numpy.array([[0, 1, 1, 1, 0], [0, 1, 1, 0, 0]], dtype=bool)
    expected = numpy.zeros((2, 3, 5), dtype="float32")
    for b in range(2):
        for h in range(3):
            for j in numpy.flatnonzero(keep[b]):
                expected[b, h, j] = sum(probs[b, h, i, j] for i in numpy.flatnonzero(keep[b]))
    got = column_sums(
        torch.from_numpy(probs) if maps == "torch" else probs,
        torch.from_numpy(keep) if mask == "torch" else keep,
    )
    numpy.testing.assert_allclose(numpy.asarray(got), expected, rtol=1e-6)


def test_windows_are_sorted_by_length_on_the_cpu_only(
    minilm_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a GPU a batch within the wordpiece budget runs as one padded call; on the CPU
    its windows run in chunks of similar length."""
    lengths = [120, 30, 128, 64, 90, 20]
    assert capture.length_share(torch.device("cpu")) == capture.CHUNK_LENGTH_SHARE
    assert capture.length_share(torch.device("cuda", 0)) == 0.0
    assert len(plan_chunks(lengths, 8192, capture.CHUNK_LENGTH_SHARE)) > 1
    assert plan_chunks(lengths, 8192, 0.0) == [([2, 0, 4, 3, 1, 5], 128)]
    # the budget still bounds a chunk at share 0
    assert [len(w) for w, _ in plan_chunks(lengths, 256, 0.0)] == [2, 2, 2]
    # the forward reads the share for its windows' device: with a GPU's, a batch of
    # mixed lengths runs in one call of the batch's width
    texts = ewt_texts()[:6]
    trf = minilm_nlp.get_pipe("transformer")
    cap = AttentionCapture.attach(trf.model)
    cap.request("test_share", CaptureRequest(hidden_last=1))
    embeddings = trf.model.transformer.embeddings
    widths: List[Tuple[int, int]] = []
    handle = embeddings.register_forward_pre_hook(
        lambda module, args, kwargs: widths.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    try:
        docs = [minilm_nlp.make_doc(t) for t in texts]
        on_cpu = list(trf.pipe(docs, batch_size=6))
        cpu_calls = list(widths)
        widths.clear()
        devices: List[Any] = []

        def gpu_share(device: torch.device) -> float:
            devices.append(device)
            return 0.0

        monkeypatch.setattr(capture, "length_share", gpu_share)
        list(trf.pipe([minilm_nlp.make_doc(t) for t in texts], batch_size=6))
    finally:
        handle.remove()
        cap.withdraw("test_share")
    shapes = [doc._.trf_data.wordpieces.input_ids.shape for doc in on_cpu]
    batch = (sum(rows for rows, _ in shapes), max(width for _, width in shapes))
    assert len(cpu_calls) > 1 and all(width < batch[1] for _, width in cpu_calls[1:])
    assert widths == [batch] and devices == [torch.device("cpu")]


def test_captured_arrays_go_to_the_cpu_unless_a_consumer_computes_on_the_device(
    minilm_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each captured array leaves the pass through one placement per batch: a copy to
    the CPU (``Tensor.cpu``, a no-op on the CPU; on a GPU the components then pool host
    memory Doc by Doc), or, when an active request computes with the arrays on the
    model's device (``attn_head_pairs``), none; the union of the active requests
    decides."""
    tensor = torch.arange(6.0).reshape(2, 3)
    copied: List[torch.Tensor] = []
    to_cpu = torch.Tensor.cpu

    def spy_cpu(value: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        copied.append(value)
        return to_cpu(value, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(torch.Tensor, "cpu", spy_cpu)
        assert capture._placement(capture.Resolved())(tensor) is tensor  # (on the CPU)
        assert len(copied) == 1 and copied[0] is tensor
        assert capture._placement(capture.Resolved(on_device=True))(tensor) is tensor
        assert len(copied) == 1
    placed: List[Tuple[bool, Tuple[int, ...]]] = []
    placement = capture._placement

    def spy(request: Any) -> Any:
        place = placement(request)

        def counted(value: torch.Tensor) -> torch.Tensor:
            placed.append((request.on_device, tuple(value.shape)))
            return place(value)

        return counted

    monkeypatch.setattr(capture, "_placement", spy)
    texts = ewt_texts()[:4]
    trf = minilm_nlp.get_pipe("transformer")
    cap = AttentionCapture.attach(trf.model)
    host = CaptureRequest(colsum_layers=(5,), context_layers=(1, 3), hidden_last=2)
    cap.request("test_host", host)
    try:
        docs = list(trf.pipe([minilm_nlp.make_doc(t) for t in texts], batch_size=4))
        n_windows = sum(doc._.trf_data.wordpieces.input_ids.shape[0] for doc in docs)
        # the column sums, the two context layers, the hidden state and the segmenter's
        # four arrays of the last layer (input, queries, keys, values), once each
        assert len(placed) == 8
        assert all(not on_device and shape[0] == n_windows for on_device, shape in placed)
        placed.clear()
        cap.request("test_device", CaptureRequest(context_layers=(1,), on_device=True))
        list(trf.pipe([minilm_nlp.make_doc(t) for t in texts], batch_size=4))
        assert len(placed) == 8 and all(on_device for on_device, _ in placed)
    finally:
        cap.withdraw("test_host")
        cap.withdraw("test_device")


def test_only_the_head_pairs_compute_on_the_device(minilm_nlp: Any, default_nlp: Any) -> None:
    """``attn_head_pairs`` reads the head outputs where the model ran; the components
    that pool them per Doc do not."""
    assert not minilm_nlp.get_pipe("attn_segmenter").capture_request().on_device
    for name in ("attn_senter", "attn_segmenter"):
        assert not default_nlp.get_pipe(name).capture_request().on_device
    nlp = spacy_attnseg.load_pipeline("attention")
    pairs = nlp.add_pipe("attn_head_pairs", config={"layers": [5], "heads": [0]})
    assert pairs.capture_request().on_device


def _pieces(tokenizer: Any, text: str) -> Tuple[List[str], List[Tuple[int, int]]]:
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    return tokenizer.convert_ids_to_tokens(encoded["input_ids"]), encoded["offset_mapping"]


@pytest.mark.parametrize("space", list(capture.SPACES_DELETED))
def test_whitespace_the_normalizer_deletes_separates_words(space: str) -> None:
    """BERT's normalizer deletes a form feed, a vertical tab, NEL, ... as control
    characters, so the words on either side reached the model as one ("endstart"),
    though spaCy splits its tokens there; read as a space, they are two words again, at
    the same character offsets (which align wordpieces to spaCy's tokens)."""
    from transformers import BertTokenizerFast

    tokenizer = BertTokenizerFast(vocab_file=str(minilm_vocab_file()))
    text = f"end{space}start"
    assert _pieces(tokenizer, text)[0] != ["end", "start"]
    read_spaces_as_spaces(tokenizer)
    assert _pieces(tokenizer, text) == (["end", "start"], [(0, 3), (4, 9)])
    normalizer = str(tokenizer.backend_tokenizer.normalizer)
    read_spaces_as_spaces(tokenizer)
    assert str(tokenizer.backend_tokenizer.normalizer) == normalizer
    # what the normalizer did before stays: lower case, accents, other control characters
    assert _pieces(tokenizer, "THE Caf\u00e9\x07s")[0] == _pieces(tokenizer, "the cafés")[0]


def test_a_normalizer_that_keeps_whitespace_is_left_alone() -> None:
    from tokenizers import Tokenizer, normalizers
    from tokenizers.models import WordPiece
    from transformers import BertTokenizerFast, PreTrainedTokenizerFast

    tokenizer = BertTokenizerFast(vocab_file=str(minilm_vocab_file()))
    tokenizer.backend_tokenizer.normalizer = normalizers.Lowercase()
    read_spaces_as_spaces(tokenizer)
    normalizer = tokenizer.backend_tokenizer.normalizer
    assert isinstance(normalizer, normalizers.Lowercase)
    assert normalizer.normalize_str("End\x0cStart") == "end\x0cstart"
    bare = Tokenizer(WordPiece.from_file(str(minilm_vocab_file()), unk_token="[UNK]"))
    without = PreTrainedTokenizerFast(tokenizer_object=bare)
    assert without.backend_tokenizer.normalizer is None
    read_spaces_as_spaces(without)
    assert without.backend_tokenizer.normalizer is None
    read_spaces_as_spaces(object())  # a slow tokenizer has no backend: nothing to do
