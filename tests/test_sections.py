"""The WikiText-2 sections protocol (``paper.sections``): its articles, its use of the
component's merge rule and its sentence vectors."""

from __future__ import annotations

from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from thinc.api import to_numpy

from paper import sections
from paper.wikitext import Article
from spacy_attnseg.segments import blocks_from_separators, semantic_segments


def test_split_articles_keeps_sections_and_drops_empty_ones() -> None:
    def split(text: str) -> list:
        # a sentence starts at 0 and after every ". "
        return [0] + [i + 2 for i in range(len(text)) if text.startswith(". ", i)]

    raw = [
        Article("A", [["One. Two."], [], ["Three. Four. Five."], ["Six."]]),
        Article("B", [["Alone."]]),
    ]
    (article,) = sections.split_articles(raw, split)
    assert article.sentences == ["One.", "Two.", "Three.", "Four.", "Five.", "Six."]
    # the empty section does not count: segments are numbered without a gap
    assert article.segment_ids == [0, 0, 1, 1, 1, 2]
    assert article.gaps == [0, 1, 0, 0, 1]
    assert article.n_segments == 3


def test_evenly_spaced() -> None:
    assert sections.evenly_spaced(10, 3.0) == [0, 3, 6, 9]
    assert sections.evenly_spaced(10, 2.5) == [0, 3, 5, 8]
    assert sections.evenly_spaced(3, 10.0) == [0]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 24),
    st.floats(0.0, 2.0, allow_nan=False),
)
def test_merge_starts_are_the_components_segments(seed: int, n: int, threshold: float) -> None:
    """The tuning grid applies ``segments.merges`` to the neighbour similarities of each
    sentence: the same segment starts as ``semantic_segments`` on the same matrix."""
    rng = numpy.random.default_rng(seed)
    separators = rng.random(n) < 0.4
    S = rng.random((n, n))
    S = S + S.T
    blocks = blocks_from_separators(separators)
    starts = numpy.searchsorted(blocks, numpy.arange(int(blocks[-1]) + 1))
    got = starts[sections.merge_starts(sections.neighbours(S, starts), threshold)]
    segments = semantic_segments(separators, S, merge_threshold=threshold)
    assert got.tolist() == [start for start, _, _ in segments]


def test_sentence_vectors_are_the_mean_of_each_sentences_wordpieces(minilm_nlp: Any) -> None:
    sentences = ["The river floods every spring.", "Farmers move their cattle uphill."]
    doc = sections.build_doc(minilm_nlp, sentences)
    doc = minilm_nlp.get_pipe("transformer")(doc)
    starts = sections.sentence_token_starts(doc)
    assert starts.tolist() == [0, 6]
    got = sections.sentence_vectors(doc, starts)
    trf_data = doc._.trf_data
    hidden = to_numpy(trf_data.model_output.last_hidden_state)
    flat = hidden.reshape((-1, hidden.shape[-1]))
    for s, (lo, hi) in enumerate([(0, 6), (6, len(doc))]):
        rows = [int(r) for t in range(lo, hi) for r in trf_data.align[t].dataXd.ravel()]
        assert rows
        assert numpy.allclose(got[s], flat[rows].mean(axis=0), atol=1e-5)


def test_build_doc_refuses_sentences_that_do_not_align(minilm_nlp: Any) -> None:
    with pytest.raises(ValueError, match="1 token-aligned sentence starts for 2"):
        sections.build_doc(minilm_nlp, ["Fine.", ""])


def test_choi_docs_reads_the_pieces_of_one_length(tmp_path: Any) -> None:
    from paper.topic_eval import choi_docs, spoken

    pieces = [["The jury said .", "It ended ."], ["Mantle hit a home run ."], ["Cook swore ."]]
    body = "".join("==========\n" + "".join(f"{line} \n" for line in piece) for piece in pieces)
    for folder, name in (("3/3-11", "0.ref"), ("1/3-11", "1.ref"), ("1/3-5", "0.ref")):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / name).write_text(body + "==========\n", encoding="utf8")
    docs = choi_docs(tmp_path)
    assert len(docs) == 2  # the 3-5 folder is another set
    sentences = [line for piece in pieces for line in piece]
    assert docs[0].text == " ".join(sentences)
    assert [docs[0].text[s:].split(" .")[0] for s in docs[0].starts] == [
        "The jury said",
        "Mantle hit a home run",
        "Cook swore",
    ]
    lines = choi_docs(tmp_path, separator="\n")[0]
    # "The jury said ." (15) and "It ended ." (10), each with its line break, then 23 + 1
    assert lines.text.split("\n") == sentences and lines.starts == [0, 27, 51]
    pieces[1].append("`` '' .")  # a line of marks alone is left out, not made a sentence
    (tmp_path / "3/3-11/0.ref").write_text(
        "".join("==========\n" + "".join(f"{line} \n" for line in p) for p in pieces), "utf8"
    )
    said = choi_docs(tmp_path, form=spoken)[1]
    assert said.text == "the jury said it ended mantle hit a home run cook swore"
    assert [said.text[s:].split()[0] for s in said.starts] == ["the", "mantle", "cook"]


def test_manifesto_docs_reads_each_text_file(tmp_path: Any) -> None:
    from paper.topic_eval import manifesto_docs

    # Manifesto's layout: no separator before the first piece, one after the last
    (tmp_path / "61320_200411.txt").write_text(
        "We know the stakes.\nIt is time.\n==========\nJobs matter.\n\n==========\n", "utf8"
    )
    (tmp_path / "61620_200811.txt").write_text("One piece only.\n==========\n", "utf8")
    (tmp_path / "notes.md").write_text("Not a document.\n", "utf8")
    docs = manifesto_docs(tmp_path)
    assert [doc.text for doc in docs] == [
        "We know the stakes. It is time. Jobs matter.",
        "One piece only.",
    ]
    assert docs[0].starts == [0, 32] and docs[1].starts == [0]
