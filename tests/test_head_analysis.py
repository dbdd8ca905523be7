"""attn_head_pairs on the real MiniLM pipeline: pairs equal an independent recomputation
of the paper's recipe from Q, K, V; pairs, anchors and segments survive every way spaCy
moves Docs around."""

from __future__ import annotations

import pickle
from typing import Any, Dict, Tuple

import numpy
import pytest
import spacy
import torch
from spacy.tokens import Doc, DocBin
from test_capture import hf_inputs, real_wordpieces, reference_attention
from transformers import AutoModel

from spacy_attnseg import load_pipeline
from spacy_attnseg.capture import CONTEXT, CONTEXT_LAYERS
from spacy_attnseg.loading import embedded_model_path
from spacy_attnseg.pairs import HeadPairs

LAYERS = [1, -1]


@pytest.fixture(scope="module")
def pairs_nlp() -> Any:
    nlp = load_pipeline("attention")
    nlp.add_pipe("attn_head_pairs", config={"layers": LAYERS, "heads": []})
    return nlp


@pytest.fixture(scope="module")
def analysed(pairs_nlp: Any, sample_text: str) -> Doc:
    return pairs_nlp(sample_text)


def recompute_pairs(doc: Doc, threshold: float = 0.3) -> Dict[Tuple[int, int, int, int], float]:
    """The paper's recipe with explicit loops, from the model's weights: per window and
    head, H @ H.T of softmax(QK^T/sqrt(d))V, diagonal and special/padding rows and
    columns zeroed, divided by the maximum, kept where >= threshold; wordpieces mapped to
    tokens through the alignment, keeping the highest score per token pair."""
    model = AutoModel.from_pretrained(embedded_model_path())
    model.eval()
    trf_data = doc._.trf_data
    with torch.no_grad():
        out = model(**hf_inputs(trf_data), output_hidden_states=True)
    keep = real_wordpieces(trf_data)
    mask = numpy.asarray(trf_data.wordpieces.attention_mask)
    n_windows, length = mask.shape
    wp2tok: Dict[Tuple[int, int], int] = {}
    align = trf_data.align
    for token in range(len(doc)):
        for row in align[token].dataXd.ravel().tolist():
            wp2tok.setdefault((row // length, row % length), token)
    n_layers = model.config.num_hidden_layers
    n_heads = model.config.num_attention_heads
    found: Dict[Tuple[int, int, int, int], float] = {}
    for layer in (layer % n_layers for layer in LAYERS):
        attention = model.encoder.layer[layer].attention.self
        hidden = out.hidden_states[layer].double().numpy()
        _, context = reference_attention(hidden, attention, n_heads, mask)
        d = context.shape[-1] // n_heads
        for w in range(n_windows):
            for head in range(n_heads):
                h = context[w, :, head * d : (head + 1) * d]
                sim = h @ h.T
                numpy.fill_diagonal(sim, 0.0)
                sim = sim * keep[w][:, None] * keep[w][None, :]
                sim = sim / sim.max()
                for i, j in zip(*numpy.nonzero(numpy.triu(sim >= threshold, k=1)), strict=True):
                    a, b = wp2tok.get((w, int(i))), wp2tok.get((w, int(j)))
                    if a is None or b is None or a == b:
                        continue
                    key = (layer, head, min(a, b), max(a, b))
                    found[key] = max(found.get(key, 0.0), float(sim[i, j]))
    return found


def as_dict(pairs: HeadPairs) -> Dict[Tuple[int, int, int, int], float]:
    return {
        (int(la), int(h), int(i), int(j)): float(s)
        for la, h, i, j, s in zip(
            pairs.layer, pairs.head, pairs.i, pairs.j, pairs.score, strict=True
        )
    }


def test_pairs_equal_independent_recomputation(analysed: Doc) -> None:
    got = as_dict(analysed._.head_pairs)
    expected = recompute_pairs(analysed)
    assert len(analysed._.trf_data.wordpieces.input_ids) >= 3, "several windows"
    assert len(expected) > 100
    # Scores within 1e-4 of the float64 reference; pairs sitting on the threshold may
    # flip with float32 rounding, so compare the pairs clear of it exactly.
    clear = {k for k, s in expected.items() if s > 0.3 + 1e-4}
    assert clear <= set(got)
    assert {k for k, s in got.items() if s > 0.3 + 1e-4} <= set(expected)
    for key in clear:
        assert got[key] == pytest.approx(expected[key], abs=1e-4)


def test_captured_head_outputs_are_released(analysed: Doc) -> None:
    output = analysed._.trf_data.model_output
    assert CONTEXT not in output and CONTEXT_LAYERS not in output


def test_queries_and_anchors(analysed: Doc) -> None:
    pairs = analysed._.head_pairs
    assert {layer for layer, _ in pairs.heads()} == {1, 5}
    one = pairs.select(layer=5, head=3)
    assert len(one) and set(one.head.tolist()) == {3}
    token = int(one.i[0])
    involving = pairs.involving(token)
    assert ((involving.i == token) | (involving.j == token)).all()
    table = one.to_table(analysed, 5, 3)
    assert set(table[0]) == {"Token_i", "Token_j", "Index_i", "Index_j"}
    assert table[0]["Token_i"] == analysed[table[0]["Index_i"]].text
    sent = list(analysed.sents)[1]
    inside = sent._.head_pairs
    assert len(inside) and (inside.i >= sent.start).all() and (inside.j < sent.end).all()
    for anchor in analysed._.head_anchors:
        head_pairs = pairs.select(layer=anchor.layer, head=anchor.head)
        texts = [analysed[i].lower_ for i in head_pairs.i] + [
            analysed[j].lower_ for j in head_pairs.j
        ]
        assert texts.count(anchor.text) == anchor.count
        assert anchor.count == max(texts.count(t) for t in set(texts))


def test_segments_cover_the_doc(analysed: Doc) -> None:
    group = list(analysed.spans["fig5_segments"])
    assert len(group) >= 1
    assert group[0].start == 0 and group[-1].end == len(analysed)
    for left, right in zip(group[:-1], group[1:], strict=True):
        assert left.end == right.start
    scores = analysed.spans["fig5_segments"].attrs["scores"]
    assert len(scores) == len(group) and all(0.0 <= s <= 1.0 for s in scores)


def same(a: Doc, b: Doc) -> None:
    assert a._.head_pairs == b._.head_pairs
    assert [x.to_dict() for x in a._.head_anchors] == [x.to_dict() for x in b._.head_anchors]
    assert [(s.start, s.end) for s in a.spans["fig5_segments"]] == [
        (s.start, s.end) for s in b.spans["fig5_segments"]
    ]


def test_round_trips(analysed: Doc, pairs_nlp: Any, tmp_path: Any) -> None:
    vocab = pairs_nlp.vocab
    same(analysed, Doc(vocab).from_bytes(analysed.to_bytes()))
    docbin = DocBin(store_user_data=True, docs=[analysed])
    same(analysed, next(DocBin().from_bytes(docbin.to_bytes()).get_docs(vocab)))
    same(analysed, pickle.loads(pickle.dumps(analysed)))
    pairs_nlp.to_disk(tmp_path / "pipeline")
    reloaded = spacy.load(tmp_path / "pipeline")
    same(analysed, reloaded(analysed.text))


def test_n_process_two_gives_the_same_pairs(pairs_nlp: Any, sample_texts: Any) -> None:
    texts = sample_texts[:4]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        serial = list(pairs_nlp.pipe(texts))
        parallel = list(pairs_nlp.pipe(texts, n_process=2, batch_size=2))
    finally:
        torch.set_num_threads(threads)
    # Batches pad to different widths here, which moves scores by float rounding only.
    for a, b in zip(serial, parallel, strict=True):
        x, y = a._.head_pairs, b._.head_pairs
        assert len(x) > 0
        for column in ("layer", "head", "i", "j"):
            numpy.testing.assert_array_equal(getattr(x, column), getattr(y, column))
        numpy.testing.assert_allclose(x.score, y.score, atol=1e-5)


def test_empty_and_whitespace_docs(pairs_nlp: Any) -> None:
    for text in ("", "   \n "):
        doc = pairs_nlp(text)
        assert len(doc._.head_pairs) == 0
        assert [(s.start, s.end) for s in doc.spans["fig5_segments"]] == (
            [(0, len(doc))] if len(doc) else []
        )


@pytest.mark.parametrize("config,code", [({"layers": [10]}, "E004"), ({"heads": [20]}, "E005")])
def test_bad_layers_and_heads(config: Dict[str, Any], code: str) -> None:
    nlp = load_pipeline("attention")
    with pytest.raises(ValueError, match=code):
        nlp.add_pipe("attn_head_pairs", config=config)
