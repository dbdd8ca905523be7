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
