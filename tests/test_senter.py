"""Tests for the trainable ``attn_senter`` (components.senter, features, architectures)
on the embedded MiniLM."""

from pathlib import Path
from typing import Any, Dict, List

import numpy
import pytest
import spacy
import torch
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import load_config, load_model_from_config, registry

import spacy_attnseg
from spacy_attnseg.architectures import member_projections, predict_scores
from spacy_attnseg.capture import COLSUMS, CONTEXT, AttentionCapture
from spacy_attnseg.components.senter import StartDecisions
from spacy_attnseg.features import (
    HIDDEN,
    DocRange,
    FeatureSpec,
    doc_features,
    feature_names,
    head_of_feature,
    lacks_final_punct,
)

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
ATTN_SENTER_CFG = CONFIGS / "attn_senter.cfg"
SENTER_LISTENER_CFG = CONFIGS / "senter_listener.cfg"
SENTER_LISTENER_WINDOW_CFG = CONFIGS / "senter_listener_window.cfg"

TEXTS = [
    "The museum opened in 1902. It holds paintings from the region. Visitors come daily.",
    "I called the office twice. Nobody answered! Should I try again tomorrow?",
    "We stayed three nights at the hotel. The rooms were clean. Breakfast was good.",
    "She studied physics in Berlin. Later she moved to Paris. Her work won prizes.",
    "the bridge was finished in 1937 it carries six lanes of traffic the tolls pay for it",
    "my order never arrived i wrote to support twice nobody replied",
]


@pytest.fixture(scope="module")
def trf_nlp(request: pytest.FixtureRequest) -> Language:
    """The embedded MiniLM pipeline (the shared ``minilm_nlp`` fixture when there is one)."""
    try:
        return request.getfixturevalue("minilm_nlp")
    except pytest.FixtureLookupError:
        return spacy_attnseg.load_pipeline("attention")


def _examples(nlp: Language, texts: List[str]) -> List[Example]:
    """Examples whose gold sentences are the texts' sentences (split at . ! ? or, for the
    lowercased unpunctuated texts, at known starts)."""
    unpunctuated_starts = {"it", "the", "i", "nobody"}
    examples = []
    for text in texts:
        predicted = nlp.make_doc(text)
        reference = predicted.copy()
        for i, token in enumerate(reference):
            if i == 0:
                token.is_sent_start = True
            elif text[0].isupper():
                token.is_sent_start = reference[i - 1].text in {".", "!", "?"}
            else:
                token.is_sent_start = token.text in unpunctuated_starts and i > 2
        examples.append(Example(predicted, reference))
    return examples


# -- registry and config ---------------------------------------------------------------


def test_registered_names_resolve() -> None:
    assert registry.architectures.get("spacy-attnseg.AttnSenterModel.v1")
    assert registry.architectures.get("spacy-attnseg.AttnFeatures.v1")
    assert registry.callbacks.get("spacy-attnseg.initialize_frozen.v1")
    assert Language.has_factory("attn_senter")


@pytest.mark.parametrize("path", [ATTN_SENTER_CFG, SENTER_LISTENER_CFG, SENTER_LISTENER_WINDOW_CFG])
def test_configs_validate(path: Path) -> None:
    config = load_config(path)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    assert nlp.pipe_names[0] == "transformer"
    assert config["training"]["frozen_components"] == ["transformer"]
    assert config["training"]["annotating_components"] == ["transformer"]


# -- features against an independent computation ----------------------------------------


def _reference_features(
    doc: Doc, hf: Any, tokenizer: Any, n_heads: int, context_layers: List[int]
) -> numpy.ndarray:
    """Column scores, neighbour similarities, head outputs, hidden states and document
    punctuation of every token, from the Hugging Face model's eager attention maps and
    value projections, with plain loops."""
    trf_data = doc._.trf_data
    ids = torch.as_tensor(numpy.asarray(trf_data.wordpieces.input_ids), dtype=torch.long)
    mask = torch.as_tensor(numpy.asarray(trf_data.wordpieces.attention_mask), dtype=torch.long)
    training = hf.training  # thinc's PyTorch shim leaves the module in training mode
    hf.eval()
    try:
        with torch.no_grad():
            out = hf(
                input_ids=ids,
                attention_mask=mask,
                output_attentions=True,
                output_hidden_states=True,
            )
    finally:
        hf.train(training)
    with torch.no_grad():
        attentions = [a.double().numpy() for a in out.attentions]  # (W, H, L, L)
        contexts = []
        for layer, module in enumerate(hf.encoder.layer):
            values = module.attention.self.value(out.hidden_states[layer]).double()
            w, length, width = values.shape
            values = values.view(w, length, n_heads, -1).permute(0, 2, 1, 3)
            ctx = torch.matmul(torch.as_tensor(attentions[layer]), values)  # (W, H, L, d)
            contexts.append(ctx.numpy())
    last = out.last_hidden_state.double().numpy()
    special = set(tokenizer.all_special_ids)
    keep = (mask.numpy() > 0) & ~numpy.isin(ids.numpy(), list(special))
    n_windows, length = ids.shape
    lengths = numpy.asarray(trf_data.align.lengths)
    data = numpy.asarray(trf_data.align.dataXd).ravel()
    offsets = numpy.concatenate([[0], numpy.cumsum(lengths)])
    positions: List[Dict[int, List[int]]] = []
    for i in range(len(doc)):
        per_window: Dict[int, List[int]] = {}
        for row in data[offsets[i] : offsets[i + 1]]:
            per_window.setdefault(int(row) // length, []).append(int(row) % length)
        positions.append(per_window)
    n_layers = len(attentions)
    heads = [(layer, h) for layer in range(n_layers) for h in range(n_heads)]
    n_tokens = len(doc)
    col_log = numpy.zeros((n_tokens, len(heads)))
    col_rel = numpy.zeros((n_tokens, len(heads)))
    for k, (layer, h) in enumerate(heads):
        cols = numpy.zeros((n_windows, length))
        for w in range(n_windows):
            rows = attentions[layer][w, h][keep[w]]  # real queries only
            cols[w] = rows.sum(axis=0) * keep[w]
        rel = cols / cols.max(axis=1, keepdims=True)
        for i in range(n_tokens):
            if positions[i]:
                col_log[i, k] = numpy.mean(
                    [numpy.log1p(cols[w, p]).max() for w, p in positions[i].items()]
                )
                col_rel[i, k] = numpy.mean([rel[w, p].max() for w, p in positions[i].items()])
    prev = numpy.zeros((n_tokens, len(heads)))
    nxt = numpy.zeros((n_tokens, len(heads)))
    n_prev = numpy.zeros(n_tokens)
    n_next = numpy.zeros(n_tokens)
    for w in range(n_windows):
        present = [i for i in range(n_tokens) if w in positions[i]]
        for k, (layer, h) in enumerate(heads):
            vectors = {i: contexts[layer][w, h, positions[i][w]].mean(axis=0) for i in present}
            norm = numpy.mean([v @ v for v in vectors.values()])
            for a, b in zip(present[:-1], present[1:], strict=True):
                sim = vectors[a] @ vectors[b] / norm
                prev[b, k] += sim
                nxt[a, k] += sim
        for a, b in zip(present[:-1], present[1:], strict=True):
            n_prev[b] += 1
            n_next[a] += 1
    prev /= numpy.maximum(n_prev, 1)[:, None]
    nxt /= numpy.maximum(n_next, 1)[:, None]

    def pooled(values: numpy.ndarray) -> numpy.ndarray:  # values: (W, L, C)
        out = numpy.zeros((n_tokens, values.shape[2]))
        for i in range(n_tokens):
            if positions[i]:
                out[i] = numpy.mean([values[w, p].max(axis=0) for w, p in positions[i].items()], 0)
        return out

    head_outputs = [
        pooled(contexts[layer].transpose(0, 2, 1, 3).reshape(n_windows, length, -1))
        for layer in context_layers
    ]
    hidden = pooled(last)
    flags = numpy.stack([n_prev > 0, n_next > 0], axis=1)
    final = sum(token.text in {".", "!", "?"} for token in doc)
    punct = numpy.tile([10.0 * final / len(doc), float(final > 0)], (n_tokens, 1))
    blocks = [col_log, col_rel, prev, nxt, flags, *head_outputs, hidden, punct]
    return numpy.concatenate(blocks, axis=1)


def test_features_match_independent_computation(trf_nlp: Language) -> None:
    trf = trf_nlp.get_pipe("transformer")
    capture = AttentionCapture.attach(trf.model)
    spec = FeatureSpec(context_layers=(1, -2), hidden=True, doc_punct=True)
    capture.request("test_senter", spec.capture_request())
    # Two overlapping 128-token windows, a long word split into wordpieces and a
    # whitespace token without wordpieces.
    text = " ".join(TEXTS[:4] * 2) + "  Antidisestablishmentarianism was discussed."
    try:
        doc = trf_nlp.get_pipe("transformer")(trf_nlp.make_doc(text))
    finally:
        capture.withdraw("test_senter")
    assert doc._.trf_data.wordpieces.input_ids.shape[0] == 2
    hf = trf.model.transformer
    n_layers, n_heads = hf.config.num_hidden_layers, hf.config.num_attention_heads
    ours = doc_features(doc, spec, n_heads=n_heads, n_layers=n_layers)
    names = feature_names(spec, n_layers, n_heads, hf.config.hidden_size)
    assert ours.shape == (len(doc), len(names))
    assert head_of_feature("sim_prev:L2H9") == (2, 9) and head_of_feature("hidden:3") is None
    assert head_of_feature("context:L4H3:7") == (4, 3)
    reference = _reference_features(doc, hf, trf.model.tokenizer, n_heads, [1, n_layers - 2])
    numpy.testing.assert_allclose(ours, reference, rtol=2e-3, atol=2e-3)
    space = [i for i, token in enumerate(doc) if token.is_space]
    assert space and not ours[space][:, :-2].any()  # the doc_punct block is per document


def test_features_are_the_same_for_any_layout_of_the_captured_arrays(trf_nlp: Language) -> None:
    """The captured arrays as a device may hand them over (Fortran order, a transposed
    view): the features are those of C-ordered arrays. thinc's reductions read an
    array's buffer in C order (its CUDA kernels whatever the strides; NumpyOps refuses
    other layouts), so every array handed to one must be made C-contiguous first."""
    trf = trf_nlp.get_pipe("transformer")
    capture = AttentionCapture.attach(trf.model)
    spec = FeatureSpec(similarity_layers=(1, 2, 3, 4), context_layers=(1, 4), hidden=True)
    capture.request("test_senter", spec.capture_request())
    text = " ".join(TEXTS[:4] * 2)
    try:
        doc = trf(trf_nlp.make_doc(text))
    finally:
        capture.withdraw("test_senter")
    hf = trf.model.transformer
    n_layers, n_heads = hf.config.num_hidden_layers, hf.config.num_attention_heads
    expected = doc_features(doc, spec, n_heads=n_heads, n_layers=n_layers)
    output = doc._.trf_data.model_output
    for key in (CONTEXT, COLSUMS, HIDDEN):
        arrays = output[key]
        if isinstance(arrays, numpy.ndarray):
            output[key] = numpy.asfortranarray(arrays)
            assert not output[key].flags.c_contiguous
        else:
            output[key] = [numpy.asfortranarray(a) for a in arrays]
            assert not output[key][0].flags.c_contiguous
    reordered = doc_features(doc, spec, n_heads=n_heads, n_layers=n_layers)
    numpy.testing.assert_allclose(reordered, expected, rtol=1e-5, atol=1e-6)


# -- training, serialization -----------------------------------------------------------


def _train(config: Any, path: Path) -> Dict[str, Any]:
    """Train a pipeline from ``config`` for a few steps with the transformer frozen and
    annotating, as ``spacy train`` runs it, and save it to ``path``."""
    torch.manual_seed(0)
    nlp = load_model_from_config(config, auto_fill=True, validate=True)
    examples = _examples(nlp, TEXTS)
    nlp.initialize(lambda: examples)
    optimizer = nlp.create_optimizer()
    losses = []
    for _ in range(12):
        step: Dict[str, float] = {}
        nlp.update(
            examples,
            sgd=optimizer,
            losses=step,
            drop=0.0,
            exclude=["transformer"],
            annotates=["transformer"],
        )
        losses.append(step["attn_senter"])
    nlp.to_disk(path)
    return {"nlp": nlp, "losses": losses, "path": path, "examples": examples}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """A pipeline from configs/attn_senter.cfg trained for a few steps."""
    config = load_config(ATTN_SENTER_CFG)
    return _train(config, tmp_path_factory.mktemp("attn_senter") / "pipeline")


@pytest.fixture(scope="module")
def trained_members(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    """The same with three ensemble members."""
    config = load_config(ATTN_SENTER_CFG)
    config["components"]["attn_senter"]["model"]["members"] = 3
    return _train(config, tmp_path_factory.mktemp("attn_senter_members") / "pipeline")


def test_training_lowers_the_loss(trained: Dict[str, Any]) -> None:
    losses = trained["losses"]
    assert losses[-1] < 0.5 * losses[0], losses


def test_to_disk_and_spacy_load_round_trip(trained: Dict[str, Any]) -> None:
    nlp = trained["nlp"]
    loaded = spacy.load(trained["path"])
    assert loaded.pipe_names == ["transformer", "attn_senter"]
    texts = [*TEXTS, "A short one. And another."]
    before = list(nlp.pipe(texts))
    after = list(loaded.pipe(texts))
    for a, b in zip(before, after, strict=True):
        assert [t.is_sent_start for t in a] == [t.is_sent_start for t in b]
    for a, b in zip(before, after, strict=True):
        numpy.testing.assert_allclose(a._.start_scores, b._.start_scores, rtol=1e-4, atol=1e-5)
        # the captured arrays the features read are released once attn_senter has run
        assert "attnseg_context" not in b._.trf_data.model_output
    assert loaded.get_pipe("attn_senter").cfg["threshold"] == nlp.get_pipe("attn_senter").threshold


def test_threshold_per_punctuation_regime(trained: Dict[str, Any]) -> None:
    nlp = trained["nlp"]
    senter = nlp.get_pipe("attn_senter")
    punctuated = nlp.make_doc(TEXTS[0])
    bare = nlp.make_doc(TEXTS[4])
    assert not lacks_final_punct(punctuated) and lacks_final_punct(bare)
    assert not lacks_final_punct(nlp.make_doc(""))
    saved = dict(senter.cfg)
    try:
        senter.cfg["threshold_no_punct"] = None
        assert senter.threshold_for(bare) == senter.threshold == senter.threshold_no_punct
        senter.cfg.update({"threshold": 0.5, "threshold_no_punct": 1e-6})
        assert senter.threshold_for(punctuated) == 0.5
        assert senter.threshold_for(bare) == 1e-6
        docs = list(
            nlp.get_pipe("transformer").pipe([nlp.make_doc(TEXTS[4]), nlp.make_doc(TEXTS[0])])
        )
        probs = senter.predict_proba(docs)
        decisions = senter.predict(docs)
        assert decisions[0].starts.tolist() == (probs[0] >= 1e-6).astype("int32").tolist()
        assert decisions[1].starts.tolist() == (probs[1] >= 0.5).astype("int32").tolist()
        copy = spacy_attnseg.load_pipeline(trained["path"])
        copy.get_pipe("attn_senter").from_bytes(senter.to_bytes())
        assert copy.get_pipe("attn_senter").threshold_no_punct == 1e-6
    finally:
        senter.cfg.clear()
        senter.cfg.update(saved)
    with pytest.raises(ValueError, match=r"\[E010\]"):
        nlp.add_pipe("attn_senter", name="bad", config={"threshold_no_punct": 1.5}, last=True)


def test_blank_lines_and_whitespace(trained: Dict[str, Any]) -> None:
    nlp = trained["nlp"]
    senter = nlp.get_pipe("attn_senter")
    # a heading without punctuation, a blank line, text, a line break, text, trailing lines
    text = f"Opening hours\n\n{TEXTS[0]}  \n{TEXTS[1]}\n\n\n"
    doc = nlp.get_pipe("transformer")(nlp.make_doc(text))
    space = numpy.array([t.is_space for t in doc])
    blank = [t.i for t in doc if t.is_space and t.text.count("\n") >= 2 and t.i + 1 < len(doc)]
    assert len(blank) == 1 and space.sum() == 3
    # tokens that end the sentence before them (TEXTS have no quotes or brackets)
    ending = space | numpy.array([t.text in (".", "!", "?") for t in doc])
    # words in lower case inside a line that no final punctuation precedes: in this text,
    # which writes capitals, none starts a sentence (``lower_starts_hold``)
    final = [t.i for t in doc if t.text in (".", "!", "?")]
    lower = numpy.array(
        [
            t.i > 0
            and t.text[:1].islower()
            and "\n" not in doc[t.i - 1].text
            and max((i for i in final if i < t.i), default=-1)
            < max((u.i for u in doc[: t.i] if not u.is_space and u.text not in ".!?"), default=-1)
            for t in doc
        ]
    )
    probs = senter.predict_proba([doc])[0]
    saved = dict(senter.cfg)
    try:
        cases = ((saved["threshold"], True), (1e-6, True), (1.0, True), (1.0, False))
        for threshold, paragraph_breaks in cases:
            senter.cfg.update({"threshold": threshold, "paragraph_breaks": paragraph_breaks})
            starts = senter.predict([doc])[0].starts.astype(bool)
            # the threshold given to decide() overrides the doc's, as tuning uses it
            assert senter.decide(doc, probs, threshold).astype(bool).tolist() == starts.tolist()
            assert not starts[1:][ending[1:]].any()
            # every other decision is the model's; a start on whitespace or on final
            # punctuation moves on to the next token
            expected = probs >= senter.threshold_for(doc)
            for i in numpy.flatnonzero(ending[1:]) + 1:
                expected[i + 1 : i + 2] |= expected[i]
                expected[i] = False
            expected &= ~lower
            if paragraph_breaks:
                expected[blank[0] + 1] = True
            assert starts.tolist() == expected.tolist()
        # at threshold 1.0 the model does not start "The" after the blank line: the rule
        # alone does, and only with paragraph_breaks
        assert probs[blank[0] + 1] < 1.0
    finally:
        senter.cfg.clear()
        senter.cfg.update(saved)
    sents = [s.text for s in nlp(text).sents]
    assert sents[0] == "Opening hours\n\n" and sents[1].startswith(TEXTS[0][:10])
    assert all(not s[:1].isspace() for s in sents)


def test_learned_the_training_sentences(trained: Dict[str, Any]) -> None:
    nlp = trained["nlp"]
    scores = nlp.evaluate(trained["examples"])
    assert scores["sents_f"] > 0.8


def test_empty_docs_and_overwrite(trained: Dict[str, Any]) -> None:
    nlp = trained["nlp"]
    assert len(nlp("")) == 0
    docs = list(nlp.pipe(["", "One thing. Another thing.", " "]))
    assert [len(d) for d in docs] == [0, len(nlp.make_doc("One thing. Another thing.")), 1]
    # empty neighbours in the batch change nothing
    alone = nlp("One thing. Another thing.")
    assert [t.is_sent_start for t in docs[1]] == [t.is_sent_start for t in alone]
    senter = nlp.get_pipe("attn_senter")
    doc = nlp.make_doc("One thing. Another thing.")
    for token in doc:
        token.is_sent_start = token.i == 0
    doc = nlp.get_pipe("transformer")(doc)
    everywhere = StartDecisions(
        numpy.ones(len(doc), dtype="int32"), numpy.full(len(doc), 0.75, dtype="float32")
    )
    senter.set_annotations([doc], [everywhere])
    assert [t.is_sent_start for t in doc][1:] == [False] * (len(doc) - 1)
    assert doc._.start_scores == [0.75] * len(doc)
    senter.cfg["overwrite"] = True
    try:
        senter.set_annotations([doc], [everywhere])
    finally:
        senter.cfg["overwrite"] = False
    assert all(t.is_sent_start for t in doc)


@pytest.mark.parametrize(
    "path,component",
    [
        (ATTN_SENTER_CFG, "attn_senter"),
        (SENTER_LISTENER_CFG, "senter"),
        (SENTER_LISTENER_WINDOW_CFG, "senter"),
    ],
)
def test_spacy_train_initialization_with_frozen_transformer(
    tmp_path: Path, path: Path, component: str
) -> None:
    """``spacy train`` disables frozen components during initialization: the
    ``initialize_frozen`` callback loads the transformer's weights (and gives listeners
    their width), and the transformer must annotate the training docs (``nlp.update``
    skips frozen components)."""
    from spacy.training.initialize import init_nlp

    blank = spacy.blank("en")
    examples = _examples(blank, TEXTS)
    bin_ = DocBin(attrs=["ORTH", "SENT_START"])
    for eg in examples:
        bin_.add(eg.reference)
    bin_.to_disk(tmp_path / "data.spacy")
    data = str(tmp_path / "data.spacy")
    config = load_config(path, overrides={"paths.train": data, "paths.dev": data})
    nlp = init_nlp(config)
    assert nlp.get_pipe("transformer").model.attrs["has_transformer"]
    examples = _examples(nlp, TEXTS[:2])
    losses: Dict[str, float] = {}
    nlp.update(examples, losses=losses, exclude=["transformer"], annotates=["transformer"])
    assert losses[component] > 0
    if component == "attn_senter":
        with pytest.raises(ValueError, match="E101"):
            nlp.update(_examples(nlp, TEXTS[:2]), exclude=["transformer"])


# -- ensemble members ------------------------------------------------------------------


def test_members_probability_is_the_mean_of_the_members(
    trained_members: Dict[str, Any],
) -> None:
    nlp = trained_members["nlp"]
    senter = nlp.get_pipe("attn_senter")
    members = senter.model.attrs["members"]
    assert members == 3
    docs = list(nlp.get_pipe("transformer").pipe(nlp.make_doc(t) for t in TEXTS[:3]))
    scores = [senter.model.ops.to_numpy(s) for s in senter.model.predict(docs)]
    probs = senter.predict_proba(docs)
    for doc, s, p in zip(docs, scores, probs, strict=True):
        assert s.shape == (len(doc), 2 * members)
        member_starts = numpy.stack([s[:, 2 * m + 1] for m in range(members)], axis=1)
        numpy.testing.assert_allclose(p, member_starts.mean(axis=1), rtol=1e-6)
        numpy.testing.assert_allclose(s.reshape(len(doc), members, 2).sum(axis=2), 1.0, rtol=1e-5)
    # the members are separate classifiers, not tied copies of one
    weights = [
        [node.get_param("W") for node in project.walk() if node.has_param("W")][0]
        for project in member_projections(senter.model)
    ]
    assert len(weights) == members
    for other in weights[1:]:
        assert other.shape == weights[0].shape
        assert not numpy.allclose(other, weights[0])


@pytest.mark.parametrize("fixture", ["trained", "trained_members", "default_nlp"])
def test_predict_scores_equal_the_model_graph(fixture: str, request: Any) -> None:
    """The inference path that writes the features straight into the padded batch gives
    exactly what the thinc graph gives (one member and three; the shipped model), Docs
    without tokens or wordpieces and ranges of a Doc included."""
    value = request.getfixturevalue(fixture)
    nlp = value["nlp"] if isinstance(value, dict) else value
    model = nlp.get_pipe("attn_senter").model
    texts = [*TEXTS[:3], "", "   \n ", "Hi."]
    docs = list(nlp.get_pipe("transformer").pipe(nlp.make_doc(t) for t in texts))
    items = [*docs, DocRange(docs[0], 2, 9), DocRange(docs[1], 0, 1)]
    want = [model.ops.to_numpy(s) for s in model.predict(items)]
    got = predict_scores(model, items)
    assert len(got) == len(items)
    for item, w, g in zip(items, want, got, strict=True):
        assert g.shape == w.shape == (len(item), 2 * model.attrs["members"])
        numpy.testing.assert_array_equal(g, w)
    # a batch without tokens
    assert [len(s) for s in predict_scores(model, docs[3:4])] == [0]


def test_scores_do_not_depend_on_the_batch(default_nlp: Language) -> None:
    """A Doc's P(S) is the same to the last bit alone and in any batch (thinc's blis
    keeps a row's products independent of the other rows; numpy's BLAS did not, for 22
    of 24 EWT documents), so that sharded runs (Dask, n_process) match one process."""
    from conftest import ewt_texts

    model = default_nlp.get_pipe("attn_senter").model
    transformer = default_nlp.get_pipe("transformer")
    docs = list(transformer.pipe((default_nlp.make_doc(t) for t in ewt_texts()[:12]), batch_size=4))
    together = predict_scores(model, docs)
    for i, doc in enumerate(docs):
        numpy.testing.assert_array_equal(predict_scores(model, [doc])[0], together[i])
    for i in range(0, len(docs), 3):
        for j, scores in enumerate(predict_scores(model, docs[i : i + 3])):
            numpy.testing.assert_array_equal(scores, together[i + j])


def test_members_learn_from_their_own_loss(trained_members: Dict[str, Any]) -> None:
    """The gradient of each member's columns is that member's cross-entropy gradient,
    P - onehot(gold), whatever the other members predict."""
    nlp = trained_members["nlp"]
    senter = nlp.get_pipe("attn_senter")
    members = senter.model.attrs["members"]
    examples = trained_members["examples"][:2]
    rng = numpy.random.default_rng(0)
    scores = []
    for eg in examples:
        p = rng.uniform(0.05, 0.95, size=(len(eg.predicted), members)).astype("float32")
        scores.append(numpy.stack([1 - p, p], axis=2).reshape(len(eg.predicted), 2 * members))
    loss, d_scores = senter.get_loss(examples, scores)
    expected_loss = 0.0
    for eg, s, d in zip(examples, scores, d_scores, strict=True):
        gold = numpy.array([tag == 1 for tag in eg.get_aligned("SENT_START")])
        onehot = numpy.stack([~gold, gold], axis=1).astype("float32")
        for m in range(members):
            member = s[:, 2 * m : 2 * m + 2]
            numpy.testing.assert_allclose(d[:, 2 * m : 2 * m + 2], member - onehot, atol=1e-6)
            expected_loss += float(((member - onehot) ** 2).sum())
    assert loss == pytest.approx(expected_loss, rel=1e-4)


def test_members_train_and_round_trip(trained_members: Dict[str, Any]) -> None:
    losses = trained_members["losses"]
    assert losses[-1] < 0.5 * losses[0], losses
    nlp = trained_members["nlp"]
    assert nlp.evaluate(trained_members["examples"])["sents_f"] > 0.8
    loaded = spacy.load(trained_members["path"])
    assert loaded.get_pipe("attn_senter").model.attrs["members"] == 3
    docs = list(nlp.get_pipe("transformer").pipe(nlp.make_doc(t) for t in TEXTS[:2]))
    docs_loaded = list(loaded.get_pipe("transformer").pipe(loaded.make_doc(t) for t in TEXTS[:2]))
    before = nlp.get_pipe("attn_senter").predict_proba(docs)
    after = loaded.get_pipe("attn_senter").predict_proba(docs_loaded)
    for x, y in zip(before, after, strict=True):
        numpy.testing.assert_allclose(x, y, rtol=1e-4, atol=1e-5)


def test_members_must_be_positive() -> None:
    config = load_config(ATTN_SENTER_CFG)
    config["components"]["attn_senter"]["model"]["members"] = 0
    with pytest.raises(ValueError, match="E106"):
        load_model_from_config(config, auto_fill=True, validate=True)
