"""Tests for spacy_attnseg.pairs (HeadPairs, anchors, extensions, serialisation)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy
import pytest
import spacy
import srsly
from spacy.tokens import Doc, DocBin

from spacy_attnseg.pairs import (
    DOC_PAIRS_ATTR,
    HeadAnchor,
    HeadPairs,
    anchors,
    install_extensions,
)

TEXT = "The war and the government . The act saw the police ."
#        0    1   2   3      4      5  6   7   8   9    10   11


def _pairs() -> HeadPairs:
    # Deliberately unsorted input; constructor sorts by (layer, head, i, j).
    return HeadPairs(
        layer=[11, 11, 11, 11, 6, 11, 11],
        head=[7, 7, 7, 5, 0, 7, 5],
        i=[1, 0, 3, 9, 2, 4, 1],
        j=[4, 1, 4, 10, 3, 6, 7],
        score=[0.5, 0.9, 0.4, 0.3, 1.0, 0.6, 0.8],
    )


@pytest.fixture(scope="module")
def nlp():
    install_extensions()
    return spacy.blank("en")


def test_headpairs_sorted_and_typed():
    p = _pairs()
    assert len(p) == 7
    keys = list(zip(p.layer.tolist(), p.head.tolist(), p.i.tolist(), p.j.tolist(), strict=True))
    assert keys == sorted(keys)
    assert p.layer.dtype == p.head.dtype == p.i.dtype == p.j.dtype == numpy.int32
    assert p.score.dtype == numpy.float32
    # Scores travel with their rows.
    assert p.select(layer=6).score.tolist() == [1.0]
    with pytest.raises(ValueError, match=r"\[E110\] pairs.HeadPairs: .*equal lengths"):
        HeadPairs([0], [0], [0], [1, 2], [0.5])


def test_headpairs_queries():
    p = _pairs()
    assert p.heads() == [(6, 0), (11, 5), (11, 7)]
    assert len(p.select(layer=11)) == 6
    assert len(p.select(head=7)) == 4
    assert len(p.select(layer=11, head=5)) == 2
    assert len(p.select(layer=3)) == 0
    inv = p.involving(4)
    assert sorted(zip(inv.i.tolist(), inv.j.tolist(), strict=True)) == [(1, 4), (3, 4), (4, 6)]
    w = p.within(0, 5)
    assert sorted(zip(w.i.tolist(), w.j.tolist(), strict=True)) == [(0, 1), (1, 4), (2, 3), (3, 4)]
    # Indices stay Doc-relative.
    w2 = p.within(6, 11)
    assert list(zip(w2.i.tolist(), w2.j.tolist(), strict=True)) == [(9, 10)]
    assert HeadPairs.empty().heads() == []
    # NumPy integers, as a column of the table gives them, select as Python ints do
    assert p.select(layer=numpy.int32(11), head=numpy.int64(5)) == p.select(layer=11, head=5)
    assert p.involving(numpy.int64(4)) == inv
    assert p.within(numpy.int32(0), numpy.int64(5)) == w


@pytest.mark.parametrize("value", [-1, "11", 11.0, True, [11]])
@pytest.mark.parametrize("name", ["layer", "head"])
def test_headpairs_index_that_is_no_whole_number(name: str, value: Any) -> None:
    """A layer or head that is no whole number of at least 0 stops with E146 in select
    and to_table: an index from the end, as the component's `layers` takes it, and text
    selected nothing without a word; a bool selected layer or head 1, a float compared
    as a number, a list broadcast."""
    p = _pairs()
    with pytest.raises(ValueError, match=rf"^\[E146\] HeadPairs.select takes `{name}` "):
        p.select(**{name: value})
    where = {"layer": 11, "head": 7, name: value}
    with pytest.raises(ValueError, match=rf"^\[E146\] HeadPairs.to_table takes `{name}` "):
        p.to_table(["w"] * 11, where["layer"], where["head"])


@pytest.mark.parametrize("value", [-1, "4", 4.0, True, None])
def test_headpairs_token_index_that_is_no_whole_number(value: Any) -> None:
    """A token index that is no whole number of at least 0 stops with E147 in involving
    and within: -1 (the last token, as doc[-1] takes it) and involving's text or None
    found no row without a word, a bool read as token 1, and within's text or None failed
    inside NumPy's comparison."""
    p = _pairs()
    with pytest.raises(ValueError, match=r"^\[E147\] HeadPairs.involving takes `token_i` "):
        p.involving(value)
    with pytest.raises(ValueError, match=r"^\[E147\] HeadPairs.within takes `start` "):
        p.within(value, 5)
    with pytest.raises(ValueError, match=r"^\[E147\] HeadPairs.within takes `end` "):
        p.within(0, value)


def test_headpairs_concat_and_eq():
    p = _pairs()
    a, b = p.select(layer=11), p.select(layer=6)
    assert HeadPairs.concat([a, b]) == p
    assert HeadPairs.concat([]) == HeadPairs.empty()
    assert p != a
    assert p != "not pairs"


def test_records_and_table(nlp):
    doc = nlp(TEXT)
    p = _pairs()
    recs = p.to_records(doc)
    assert recs[0] == {
        "layer": 6,
        "head": 0,
        "i": 2,
        "j": 3,
        "token_i": "and",
        "token_j": "the",
        "score": 1.0,
    }
    assert len(recs) == len(p)
    table = p.to_table(doc, 11, 7)
    assert table == [
        {"Token_i": "The", "Token_j": "war", "Index_i": 0, "Index_j": 1},
        {"Token_i": "war", "Token_j": "government", "Index_i": 1, "Index_j": 4},
        {"Token_i": "the", "Token_j": "government", "Index_i": 3, "Index_j": 4},
        {"Token_i": "government", "Token_j": "The", "Index_i": 4, "Index_j": 6},
    ]
    # Plain token texts work too.
    assert p.to_table([t.text for t in doc], 11, 7) == table


def test_anchors_known_example(nlp):
    doc = nlp(TEXT)
    p = _pairs()
    got = {(a.layer, a.head): a for a in anchors(p, doc)}
    assert list(got) == [(6, 0), (11, 5), (11, 7)]
    # Head (11, 7): pairs (0,1) (1,4) (3,4) (4,6) -> texts the/war, war/government,
    # the/government, government/the. Counts: the 3 (The, the, The lower-cased),
    # government 3, war 2. Tie the/government -> earliest position: "the" (token 0).
    a = got[(11, 7)]
    assert (a.text, a.count) == ("the", 3)
    assert a.share == pytest.approx(3 / 4)
    # Head (11, 5): pairs (1,7) war/saw, (9,10) police/. -> all count 1, earliest is war.
    b = got[(11, 5)]
    assert (b.text, b.count, b.share) == ("war", 1, 0.5)
    # Head (6, 0): one pair and/the -> "and" (position 2) before "the" (position 3).
    c = got[(6, 0)]
    assert (c.text, c.count, c.share) == ("and", 1, 1.0)
    # Texts input behaves the same.
    assert anchors(p, [t.text for t in doc]) == anchors(p, doc)
    assert anchors(HeadPairs.empty(), doc) == []


def test_anchor_counts_same_text_pair_twice():
    texts = ["airport", "x", "airport", "y", "Airport"]
    p = HeadPairs([0, 0, 0], [8, 8, 8], [0, 0, 1], [2, 4, 3], [1.0, 0.5, 0.4])
    (a,) = anchors(p, texts)
    assert (a.text, a.count) == ("airport", 4)
    assert a.share == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match=r"\[E017\]"):
        anchors(p, texts[:3])


def _anchors_by_loop(pairs, texts):
    """Per head: the most common lower-cased text among its pairs' tokens, ties broken
    by the earliest position; its count and the share of pairs that include it."""
    lower = [t.lower() for t in texts]
    out = []
    for layer, head in pairs.heads():
        sel = pairs.select(layer=layer, head=head)
        positions = sel.i.tolist() + sel.j.tolist()
        words = [lower[p] for p in positions]
        first = {w: min(p for p, x in zip(positions, words, strict=True) if x == w) for w in words}
        best = min(set(words), key=lambda w: (-words.count(w), first[w]))
        hit = [lower[a] == best or lower[b] == best for a, b in zip(sel.i, sel.j, strict=True)]
        out.append((layer, head, best, words.count(best), sum(hit) / len(hit)))
    return out


def test_anchors_match_loop_on_random_pairs():
    rng = numpy.random.default_rng(0)
    texts = [str(w) for w in rng.choice(["the", "The", "a", "war", "x", ".", "Y"], size=30)]
    n = 400
    i = rng.integers(0, 29, size=n)
    j = numpy.minimum(i + rng.integers(1, 6, size=n), 29)
    p = HeadPairs(rng.integers(0, 3, n), rng.integers(0, 4, n), i, j, rng.random(n))
    got = [(a.layer, a.head, a.text, a.count, a.share) for a in anchors(p, texts)]
    assert got == _anchors_by_loop(p, texts)


def test_msgpack_and_pickle_round_trip():
    p = _pairs()
    anc = anchors(p, TEXT.split())
    for obj in (p, HeadPairs.empty()):
        back = srsly.msgpack_loads(srsly.msgpack_dumps({"x": obj}))["x"]
        assert isinstance(back, HeadPairs)
        assert back == obj
        assert back.score.dtype == numpy.float32
        assert pickle.loads(pickle.dumps(obj)) == obj
    back_anc = srsly.msgpack_loads(srsly.msgpack_dumps(anc))
    assert back_anc == anc
    assert all(isinstance(a, HeadAnchor) for a in back_anc)
    assert pickle.loads(pickle.dumps(anc)) == anc
    assert HeadPairs.from_dict(p.to_dict()) == p
    assert HeadPairs.empty().from_dict(p.to_dict()) == p
    assert [HeadAnchor.from_dict(a.to_dict()) for a in anc] == anc


def test_extensions_idempotent_and_defaults(nlp):
    install_extensions()
    install_extensions()
    doc = nlp(TEXT)
    assert getattr(doc._, DOC_PAIRS_ATTR) is None
    assert doc._.head_pairs == HeadPairs.empty()
    assert doc._.head_anchors == []
    assert doc[0:3]._.head_pairs == HeadPairs.empty()


def test_extensions_views(nlp):
    doc = nlp(TEXT)
    p = _pairs()
    doc._.head_pairs = p
    assert getattr(doc._, DOC_PAIRS_ATTR) is p
    assert doc._.head_pairs == p
    span = doc[0:5]
    assert span._.head_pairs == p.within(0, 5)
    assert span._.head_anchors == anchors(p.within(0, 5), doc)
    assert doc._.head_anchors == anchors(p, doc)
    doc._.head_pairs = None
    assert getattr(doc._, DOC_PAIRS_ATTR) is None


def test_doc_serialisation_round_trips(nlp):
    doc = nlp(TEXT)
    p = _pairs()
    doc._.head_pairs = p
    # to_bytes / from_bytes
    doc2 = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert isinstance(getattr(doc2._, DOC_PAIRS_ATTR), HeadPairs)
    assert doc2._.head_pairs == p
    assert doc2._.head_anchors == doc._.head_anchors
    # pickle
    doc3 = pickle.loads(pickle.dumps(doc))
    assert doc3._.head_pairs == p
    # DocBin with user data
    db = DocBin(store_user_data=True)
    db.add(doc)
    db.add(nlp("No pairs here ."))
    docs = list(DocBin().from_bytes(db.to_bytes()).get_docs(nlp.vocab))
    assert docs[0]._.head_pairs == p
    assert docs[1]._.head_pairs == HeadPairs.empty()
    assert docs[0][6:12]._.head_pairs == p.within(6, 12)


def test_getter_accepts_undecoded_dict(nlp):
    # As if the Doc was deserialised before this module registered its decoder.
    doc = nlp(TEXT)
    p = _pairs()
    setattr(doc._, DOC_PAIRS_ATTR, {"__attnseg_headpairs__": p.to_dict()})
    assert doc._.head_pairs == p
