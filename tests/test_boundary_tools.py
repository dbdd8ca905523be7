"""The reproduction's tools around the trained ``attn_senter`` (``paper.boundary_data``,
``paper.ship``, ``paper.senter_heads``): the training data hold the treebank's own
sentences, the committed configs are what shipping derives, and the head report's base
decisions are the component's own."""

import re
from pathlib import Path
from typing import Any, Dict, List

import pytest
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.util import load_config

from paper.boundary_data import build
from paper.ship import TARGETS, default_config

REPO = Path(__file__).resolve().parents[1]
EWT_DEV = REPO / "data" / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
EWT_TRAIN = REPO / "data" / "UD_English-EWT" / "en_ewt-ud-train.conllu.gz"
WIKITEXT = REPO / "data" / "wikitext-2" / "wiki.test.raw"
CONFIGS = REPO / "configs"


def _first_documents(path: Path, n_docs: int, out: Path) -> List[List[str]]:
    """The first ``n_docs`` documents of a CoNLL-U file, written to ``out``; returns each
    document's ``# text`` lines, read here with a regular expression."""
    blocks = path.read_text(encoding="utf8").split("# newdoc")[1 : n_docs + 1]
    out.write_text("".join("# newdoc" + block for block in blocks), encoding="utf8")
    return [re.findall(r"^# text = (.*)$", block, flags=re.M) for block in blocks]


def _sentences(doc) -> List[str]:  # type: ignore[no-untyped-def]
    return [sent.text.strip() for sent in doc.sents]


def _build(tmp_path: Path, ewt: Path, **wiki: Any) -> Dict[str, Dict[str, int]]:
    settings = dict(wiki_min_words=40, wiki_max_words=120, wiki_raw_fraction=0.5, **wiki)
    return build(tmp_path / "out", ewt=ewt, dev_fraction=0.2, seed=0, **settings)


def test_boundary_data_holds_the_treebank_sentences(tmp_path: Path) -> None:
    gold = _first_documents(EWT_DEV, 10, tmp_path / "ewt-dev.conllu")
    stats = _build(tmp_path, tmp_path / "ewt-dev.conllu", wikitext=WIKITEXT, wiki_words=400)
    assert stats["ewt_dev_raw"]["docs"] == 2 and stats["ewt_train_raw"]["docs"] == 8
    assert 400 <= stats["wiki_raw"]["words"] + stats["wiki_nopunct"]["words"] < 400 + 120
    vocab = Language().vocab
    dev = list(DocBin().from_disk(tmp_path / "out" / "dev.spacy").get_docs(vocab))
    train = list(DocBin().from_disk(tmp_path / "out" / "train.spacy").get_docs(vocab))
    assert len(dev) == 4 and len(train) == stats["train"]["docs"]
    # the raw dev documents are two of the treebank's documents, sentence for sentence
    raw = [_sentences(doc) for doc in dev if doc.text != doc.text.lower()]
    assert raw and all(sentences in gold for sentences in raw)

    # their no-punctuation twins: the same sentences, lowercased, none ending in . ! ?
    def bare(sentences: List[str]) -> List[str]:
        return [re.sub(r"[.!?\s]", "", s).lower() for s in sentences]

    twins = [_sentences(doc) for doc in dev if doc.text == doc.text.lower()]
    assert sorted(bare(s) for s in raw) == sorted(bare(s) for s in twins)
    assert not any(re.search(r"[.!?][\"')\]]*$", s) for doc in twins for s in doc)
    # every EWT training sentence is in the treebank; WikiText documents are the rest
    all_gold = {s for doc in gold for s in doc}
    ewt_raw = [s for doc in train for s in _sentences(doc) if s in all_gold]
    assert len(ewt_raw) >= stats["ewt_train_raw"]["sentences"]


def test_short_documents_are_runs_of_consecutive_sentences(tmp_path: Path) -> None:
    import random

    from paper.boundary_data import short_documents
    from spacy_attnseg.gold import read_conllu_documents

    _first_documents(EWT_DEV, 10, tmp_path / "ewt-dev.conllu")
    docs = read_conllu_documents(tmp_path / "ewt-dev.conllu")
    sources = [[s.strip() for s in doc.sentences()] for doc in docs]
    assert short_documents(docs, 0.0, random.Random(0)) == []
    every = short_documents(docs, 1.0, random.Random(0))
    # each run of 2-3 sentences, cut one after another, is kept: all but a lone last one
    assert sum(len(d.starts) for d in every) >= sum(len(s) for s in sources) - len(docs)
    for doc in every:
        run = [s.strip() for s in doc.sentences()]
        assert len(run) in (2, 3)
        assert any(
            source[i : i + len(run)] == run for source in sources for i in range(len(source))
        )
    half = short_documents(docs, 0.5, random.Random(0))
    assert 0 < len(half) < len(every)
    # added with their own generator: every other part stays as it was
    plain = _build(tmp_path / "a", tmp_path / "ewt-dev.conllu", wikitext=WIKITEXT, wiki_words=400)
    more = _build(
        tmp_path / "b",
        tmp_path / "ewt-dev.conllu",
        wikitext=WIKITEXT,
        wiki_words=400,
        short_share=1.0,
    )
    assert {k: v for k, v in more.items() if k not in ("ewt_train_short", "train")} == {
        k: v for k, v in plain.items() if k != "train"
    }
    assert more["train"]["docs"] == plain["train"]["docs"] + more["ewt_train_short"]["docs"]


def test_the_gzipped_train_treebank_reads_as_its_text(tmp_path: Path) -> None:
    """UD EWT train ships gzipped: read as it is, it gives the documents of its
    decompressed copy, and the treebank's own counts (540 documents, 12,544 sentences)."""
    import gzip

    from spacy_attnseg.gold import read_conllu_documents

    plain = tmp_path / "en_ewt-ud-train.conllu"
    plain.write_bytes(gzip.decompress(EWT_TRAIN.read_bytes()))
    docs = read_conllu_documents(EWT_TRAIN)
    assert docs == read_conllu_documents(plain)
    assert len(docs) == 540 and sum(len(d.starts) for d in docs) == 12544
    assert len(re.findall(r"^# text = ", plain.read_text(encoding="utf8"), flags=re.M)) == 12544


def test_a_train_treebank_joins_the_training_part_only(tmp_path: Path) -> None:
    """Every document of ``ewt_train`` is training data, in both variants; the held-out
    dev part and the WikiText documents are the same as without it."""
    _first_documents(EWT_DEV, 10, tmp_path / "ewt-dev.conllu")
    # another treebank's documents: here the last three of EWT dev, none of the ten above
    blocks = EWT_DEV.read_text(encoding="utf8").split("# newdoc")[-3:]
    (tmp_path / "ewt-train.conllu").write_text(
        "".join("# newdoc" + b for b in blocks), encoding="utf8"
    )
    extra = [re.findall(r"^# text = (.*)$", b, flags=re.M) for b in blocks]
    wiki = dict(wikitext=WIKITEXT, wiki_words=400)
    plain = _build(tmp_path / "a", tmp_path / "ewt-dev.conllu", **wiki)
    more = _build(
        tmp_path / "b", tmp_path / "ewt-dev.conllu", ewt_train=tmp_path / "ewt-train.conllu", **wiki
    )
    assert (tmp_path / "a" / "out" / "dev.spacy").read_bytes() == (
        tmp_path / "b" / "out" / "dev.spacy"
    ).read_bytes()
    for part in ("ewt_dev_raw", "ewt_dev_nopunct", "wiki_raw", "wiki_nopunct"):
        assert more[part] == plain[part]
    for part in ("ewt_train_raw", "ewt_train_nopunct"):
        assert more[part]["docs"] == plain[part]["docs"] + 3
    vocab = Language().vocab
    train = list(DocBin().from_disk(tmp_path / "b" / "out" / "train.spacy").get_docs(vocab))
    sentences = [_sentences(doc) for doc in train]
    # each added document is there as written, sentence for sentence
    assert all(doc in sentences for doc in extra)
    with pytest.raises(ValueError, match="EWT test"):
        _build(
            tmp_path / "c",
            tmp_path / "ewt-dev.conllu",
            ewt_train=EWT_DEV.with_name("en_ewt-ud-test.conllu"),
            wikitext=None,
            wiki_words=0,
        )


def test_boundary_data_refuses_the_test_split(tmp_path: Path) -> None:
    _first_documents(EWT_DEV, 2, tmp_path / "en_ewt-ud-test.conllu")
    with pytest.raises(ValueError, match="EWT test"):
        _build(tmp_path, tmp_path / "en_ewt-ud-test.conllu", wikitext=None, wiki_words=0)


@pytest.mark.parametrize("model", sorted(TARGETS))
def test_committed_configs_are_what_shipping_derives(model: str, tmp_path: Path) -> None:
    """``configs/default.cfg`` (and ``mpnet_senter.cfg``) are the base config with the
    trained component's section: shipping the same trained section again writes the
    committed file byte for byte, so a base config edited without shipping again fails."""
    target = TARGETS[model]
    committed = target.config_out.read_text(encoding="utf8")
    trained_section = load_config(target.config_out, interpolate=False)["components"]
    trained = load_config(CONFIGS / "attn_senter.cfg", interpolate=False)
    trained["components"]["attn_senter"] = trained_section["attn_senter"]
    (tmp_path / "model-best").mkdir()
    trained.to_disk(tmp_path / "model-best" / "config.cfg")
    derived = default_config(tmp_path / "model-best", target)
    assert target.header + derived.to_str() == committed


def test_head_report_base_is_the_component_decision(default_nlp: Language, tmp_path: Path) -> None:
    """The ablation's base F1 (the report's own reconstruction of the decisions from the
    model's probabilities) equals boundary F1 of the pipeline's ``doc.sents``."""
    from paper.evaluation import read_conllu_documents, to_spacy_examples
    from paper.senter_heads import ablation, head_columns

    gold = read_conllu_documents(EWT_DEV)[:6]
    examples = to_spacy_examples(default_nlp, gold)
    docbin = DocBin(attrs=["ORTH", "SENT_START"])
    for example in examples:
        docbin.add(example.reference)
    docbin.to_disk(tmp_path / "dev.spacy")
    senter = default_nlp.get_pipe("attn_senter")
    names = senter.feature_names()
    result = ablation(default_nlp, senter, tmp_path / "dev.spacy", names)

    tp = n_pred = n_gold = 0
    for example, doc in zip(examples, default_nlp.pipe([g.text for g in gold]), strict=True):
        predicted = {t.i for t in doc if t.is_sent_start and t.i > 0}
        reference = {t.i for t in example.reference if t.is_sent_start and t.i > 0}
        tp += len(predicted & reference)
        n_pred += len(predicted)
        n_gold += len(reference)
    assert result["base"]["f1"] == pytest.approx(100 * 2 * tp / (n_pred + n_gold))
    # every head of the captured layers has its columns, and ablating all of a block
    # that carries the decision costs loss
    heads = head_columns(names, ("context",))
    layers = sorted({layer for layer, _ in heads})
    features = default_nlp.config["components"]["attn_senter"]["model"]["features"]
    assert layers == list(features["context_layers"])
    assert result["blocks"]["context"]["loss_increase"] > 0


def test_model_card_names_the_short_documents() -> None:
    """The card written from the shipped ``meta.json`` says that the training data held
    short documents, and with how large a share; without them, it does not."""
    import json

    from paper.ship import model_card
    from spacy_attnseg.components.senter import shipped_path

    meta = json.loads((shipped_path("minilm") / "meta.json").read_text(encoding="utf8"))
    card = model_card(meta, [], None)
    share = meta["training_data"]["settings"]["short_share"]
    assert (
        f"| ewt_train_short | {meta['training_data']['parts']['ewt_train_short']['docs']} |" in card
    )
    assert f"- Short texts (`ewt_train_short`): a share of {share} of the" in card
    shipped_card = (shipped_path("minilm") / "README.md").read_text(encoding="utf8")
    assert f"- Short texts (`ewt_train_short`): a share of {share} of the" in shipped_card
    del meta["training_data"]["settings"]["short_share"]
    assert "Short texts" not in model_card(meta, [], None)
