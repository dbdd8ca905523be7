"""Topic segments (spacy_attnseg.topics and attn_segmenter's ``doc.spans``), checked
against direct computations, and the ``chunk`` command."""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy
import pytest
import spacy
from conftest import DATA, PIECES, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from spacy_attnseg import load_pipeline, topics
from spacy_attnseg.capture import HIDDEN, LOCAL
from spacy_attnseg.gold import read_conllu_paragraphs
from spacy_attnseg.sentences import MARKED_HEADING, PLAIN_HEADING, lead_ins
from spacy_attnseg.windows import WordpieceCounts, doc_wordpiece_counts

# zero, or far from the denormal range (where a norm clamp, not the rule, decides)
floats = st.one_of(st.just(0.0), st.floats(0.125, 1), st.floats(-1, -0.125))


def naive_depth(s: numpy.ndarray) -> numpy.ndarray:
    out = numpy.zeros(len(s))
    for g in range(len(s)):
        left = s[g]
        for value in s[g::-1]:
            if value >= left:
                left = value
            else:
                break
        right = s[g]
        for value in s[g:]:
            if value >= right:
                right = value
            else:
                break
        out[g] = left + right - 2 * s[g]
    return out


@settings(max_examples=80, deadline=None)
@given(arrays(numpy.float64, st.integers(0, 40), elements=floats))
def test_depth_scores_equal_the_climbing_definition(sims: numpy.ndarray) -> None:
    assert numpy.allclose(topics.depth_scores(sims), naive_depth(sims))


@settings(max_examples=40, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(2, 25), st.just(3)), elements=floats),
    st.integers(1, 4),
)
def test_gap_similarities_equal_block_cosines(vectors: numpy.ndarray, window: int) -> None:
    got = topics.gap_similarities(vectors, window)
    for gap in range(1, len(vectors)):
        left = vectors[max(0, gap - window) : gap].mean(axis=0)
        right = vectors[gap : gap + window].mean(axis=0)
        norm = numpy.linalg.norm(left) * numpy.linalg.norm(right)
        expected = float(left @ right / max(norm, 1e-12))
        assert got[gap - 1] == pytest.approx(expected, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(1, 40), st.just(4)), elements=floats),
    st.integers(1, 5),
    st.integers(0, 8),
    st.integers(0, 60),
    st.lists(st.integers(0, 30), min_size=40, max_size=40),
)
def test_segments_respect_their_limits(
    vectors: numpy.ndarray, min_sents: int, max_sents: int, max_tokens: int, sizes: List[int]
) -> None:
    sent_sizes = numpy.array(sizes[: len(vectors)])
    starts, scores = topics.segment(
        vectors,
        window=2,
        cutoff=0.5,
        min_sents=min_sents,
        max_sents=max_sents,
        max_tokens=max_tokens,
        sent_sizes=sent_sizes,
    )
    assert starts[0] == 0 and starts == sorted(set(starts)) and len(scores) == len(starts)
    bounds = starts + [len(vectors)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if b - a > 1:
            assert max_sents == 0 or b - a <= max_sents
            assert max_tokens == 0 or sent_sizes[a:b].sum() <= max_tokens


@settings(max_examples=150, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(1, 9), st.just(4)), elements=floats),
    st.integers(1, 5),
    st.integers(0, 8),
    st.integers(0, 60),
    st.lists(st.integers(0, 30), min_size=9, max_size=9),
    st.lists(st.booleans(), min_size=9, max_size=9),
    st.sampled_from(["partition", "texttiling"]),
    st.integers(0, 4),
    st.lists(st.booleans(), min_size=9, max_size=9),
)
def test_a_text_that_may_not_split_is_one_segment(
    vectors: numpy.ndarray,
    min_sents: int,
    max_sents: int,
    max_tokens: int,
    sizes: List[int],
    paragraph_first: List[bool],
    method: str,
    n_segments: int,
    marked: List[bool],
) -> None:
    """``may_split`` says no only where ``segment`` itself gives one segment: the
    component then skips the sentence vectors."""
    n = len(vectors)
    sent_sizes = numpy.array(sizes[:n])
    first = numpy.array([True] + paragraph_first[1:n])
    if topics.may_split(
        n,
        min_sents=min_sents,
        n_paragraphs=int(first.sum()),
        max_sents=max_sents,
        n_wordpieces=int(sent_sizes.sum()),
        max_tokens=max_tokens,
        n_breaks=sum(marked[1:n]),
    ):
        return
    starts, scores = topics.segment(
        vectors,
        method=method,
        min_sents=min_sents,
        max_sents=max_sents,
        max_tokens=max_tokens,
        n_segments=n_segments,
        sent_sizes=sent_sizes,
        paragraphs=numpy.cumsum(first) - 1,
        headings=numpy.array(marked[:n]),
        breaks=numpy.array(marked[:n]),
    )
    assert (starts, scores) == ([0], [0.0])


@settings(max_examples=150, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(1, 30), st.just(4)), elements=floats),
    st.lists(st.sampled_from([0, 0, 0, 1, 2]), min_size=30, max_size=30),
    st.lists(st.booleans(), min_size=30, max_size=30),
    st.integers(1, 5),
    st.integers(0, 8),
    st.sampled_from(["partition", "texttiling"]),
    st.integers(0, 6),
)
def test_a_marked_heading_always_starts_a_segment(
    vectors: numpy.ndarray,
    kinds: List[int],
    paragraph_first: List[bool],
    min_sents: int,
    max_sents: int,
    method: str,
    n_segments: int,
) -> None:
    """The first of each run of headings (0 plain-text line, 1 plain heading, 2 marked)
    that holds a marked one starts a segment, whatever the method, the limits, the
    paragraphs or the count wanted; without ``breaks`` the headings only keep with the
    text after them."""
    n = len(vectors)
    kind = numpy.array(kinds[:n])
    first = numpy.array([True] + paragraph_first[1:n])
    settings = dict(
        method=method,
        min_sents=min_sents,
        max_sents=max_sents,
        n_segments=n_segments,
        paragraphs=numpy.cumsum(first) - 1,
        headings=kind > 0,
    )
    starts, scores = topics.segment(vectors, **settings, breaks=kind == 2)
    assert len(starts) == len(scores) and starts[0] == 0 and starts == sorted(set(starts))
    runs = [k for k in range(1, n) if kind[k] and not kind[k - 1]]
    for k in runs:
        end = k
        while end < n and kind[end]:
            end += 1
        if (kind[k:end] == 2).any():
            assert k in starts
    if not max_sents:  # (a size limit may have to split a run of headings)
        assert not any(kind[s - 1] for s in starts[1:]), "a segment starts after a heading"


def test_short_texts_skip_the_vectors_and_segment_as_the_full_rule_does(
    minilm_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Texts too short to split get the one segment the full computation gives, and
    their captured hidden states are released all the same."""
    texts = [
        "Hello.",
        "The rain stopped. We went out.",
        "The rain stopped. We went out. It was cold.",
        "The rain stopped.\n\nWe went out. It was cold.",
        "The rain stopped. We went out. It was cold. The shop was shut. We came home.",
    ]

    def segments(docs: List[Any]) -> List[Any]:
        return [
            [(s.start, s.end) for s in doc.spans["attn_segments"]]
            + doc.spans["attn_segments"].attrs["scores"]
            for doc in docs
        ]

    docs = list(minilm_nlp.pipe(texts))
    assert all(LOCAL not in doc._.trf_data.model_output for doc in docs)
    calls: List[int] = []
    may_split = topics.may_split
    monkeypatch.setattr(topics, "may_split", lambda *a, **k: calls.append(1) or True)
    full = list(minilm_nlp.pipe(texts))
    assert len(calls) == len(texts)
    assert segments(docs) == segments(full)
    min_sents = minilm_nlp.get_pipe("attn_segmenter").cfg["min_sents"]
    skipped = [
        not may_split(len(list(doc.sents)), min_sents=min_sents, n_paragraphs=1) for doc in docs[:3]
    ]
    assert skipped == [True, True, True]
    assert [len(doc.spans["attn_segments"]) for doc in docs[:3]] == [1, 1, 1]


def test_limits_split_repeated_text_in_the_middle() -> None:
    """Where every gap lowers the cost alike (copies of one sentence), the size limits
    halve a segment instead of cutting one sentence off at a time."""
    same = numpy.ones((16, 3))
    sizes = numpy.ones(16, dtype="int64")
    assert topics.enforce_limits([], same, sizes, max_tokens=4) == [4, 8, 12]
    assert topics.enforce_limits([], same, sizes, max_sents=5) == [4, 8, 12]
    sizes[:8] = 3  # in wordpieces: 24 before the middle sentence, 8 after
    assert topics.enforce_limits([], same, sizes, max_tokens=16)[0] == 5


def test_choose_boundaries_with_a_target_count() -> None:
    sims = numpy.array([0.9, 0.1, 0.9, 0.9, 0.2, 0.9, 0.9, 0.9, 0.5, 0.9])
    depth = topics.depth_scores(sims)
    assert topics.choose_boundaries(depth, sims, cutoff=0.5, min_sents=1, n_segments=3) == [2, 5]
    # gaps closer than min_sents to a chosen one or to the ends are dropped
    assert topics.choose_boundaries(depth, sims, cutoff=0.5, min_sents=3, n_segments=3) == [5, 8]
    # one segment asked for: no boundary
    assert topics.choose_boundaries(depth, sims, cutoff=0.5, min_sents=1, n_segments=1) == []


@settings(max_examples=100, deadline=None)
@given(
    arrays(numpy.float64, st.integers(1, 30), elements=st.floats(-1, 1)),
    st.integers(1, 12),
    st.integers(1, 4),
)
def test_a_target_count_gives_at_most_that_many_segments(
    sims: numpy.ndarray, n_segments: int, min_sents: int
) -> None:
    """With ``n_segments``, TextTiling keeps at most ``n_segments - 1`` boundaries, each
    ``min_sents`` from the ends and from each other; with ``min_sents`` 1, exactly the
    deepest gaps (ties: the earlier gap). A document shorter than ``min_sents`` is one
    segment."""
    depth = topics.depth_scores(sims)
    starts = topics.choose_boundaries(
        depth, sims, cutoff=0.5, min_sents=min_sents, n_segments=n_segments
    )
    n_sents = len(sims) + 1
    assert len(starts) <= n_segments - 1
    if starts:
        edges = [0, *starts, n_sents]
        assert all(b - a >= min_sents for a, b in zip(edges[:-1], edges[1:], strict=True))
    if min_sents == 1:
        order = sorted(range(len(sims)), key=lambda gap: (-depth[gap], gap))
        assert starts == sorted(gap + 1 for gap in order[: n_segments - 1])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.booleans(), st.booleans()), min_size=1, max_size=50),
    st.integers(1, 30),
    st.booleans(),
    st.booleans(),
)
def test_split_tokens(
    tokens: List[Any], max_tokens: int, use_lines: bool, use_inside: bool
) -> None:
    sizes = [size for size, _, _ in tokens]
    lines = [line for _, line, _ in tokens] if use_lines else [False] * len(tokens)
    # 1 where a piece that starts at the token reads a wordpiece it shares with the one
    # before (``WordpieceCounts.inside``)
    inside = [int(shared) for _, _, shared in tokens] if use_inside else [0] * len(tokens)
    cuts = topics.split_tokens(
        WordpieceCounts(numpy.array(sizes, dtype="int64"), numpy.array(inside, dtype="int64")),
        max_tokens,
        numpy.array(lines) if use_lines else None,
    )

    def count(a: int, b: int) -> int:
        return inside[a] + sum(sizes[a:b])

    bounds = [0] + cuts + [len(sizes)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        assert b > a
        # a piece over the cap is one token with wordpieces (and whitespace before it)
        assert count(a, b) <= max_tokens or sum(1 for x in sizes[a:b] if x) == 1
        # a cut falls where a line starts, unless the piece it ends has no line start
        assert b == len(sizes) or lines[b] or not any(lines[a + 1 : b])
    if not use_lines:
        # without lines: the greedy cut, each piece as long as the cap allows
        for a, b in zip(bounds[:-1], bounds[1:-1], strict=False):
            assert count(a, b + 1) > max_tokens


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.booleans(), st.integers(0, 9)), min_size=1, max_size=60
    ),
    st.integers(0, 40),
    st.integers(1, 12),
    st.booleans(),
    st.integers(0, 10),
)
def test_long_sentences_are_read_in_pieces(
    tokens: List[Any], long_tokens: int, piece_tokens: int, use_lines: bool, words: int
) -> None:
    sizes = numpy.array([size for size, _, _ in tokens], dtype="int64")
    starts = numpy.array([flag for _, flag, _ in tokens], dtype=bool)
    starts[0] = True
    lines = [draw == 0 for _, _, draw in tokens]  # a line starts at one token in ten
    # a token is a word where its draw is below ``words`` (0: none is)
    worded_tokens = [draw < words for _, _, draw in tokens]
    units = topics.long_sentence_pieces(
        starts,
        WordpieceCounts(sizes, numpy.zeros_like(sizes)),
        long_tokens,
        piece_tokens,
        lines.__getitem__ if use_lines else None,
        worded_tokens.__getitem__,
    )
    assert units.dtype == bool and (units[starts]).all()  # every sentence start stays
    bounds = [*numpy.flatnonzero(starts).tolist(), len(sizes)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        cuts = (numpy.flatnonzero(units[a + 1 : b]) + a + 1).tolist()
        # a short sentence, or one over several lines (a table, a list), stays whole
        if (
            long_tokens == 0
            or sizes[a:b].sum() <= long_tokens
            or (use_lines and any(lines[a + 1 : b]))
        ):
            assert cuts == []
            continue
        pieces = [a, *cuts, b]
        worded = [any(worded_tokens[p:q]) for p, q in zip(pieces[:-1], pieces[1:], strict=True)]
        # no two pieces without a word are neighbours (they are one)
        assert all(x or y for x, y in zip(worded[:-1], worded[1:], strict=True))
        for (p, q), word in zip(zip(pieces[:-1], pieces[1:], strict=True), worded, strict=True):
            # within the cap, or one token with wordpieces (it cannot be cut), or a run
            # without words
            assert (
                sizes[p:q].sum() <= piece_tokens or numpy.count_nonzero(sizes[p:q]) == 1 or not word
            )
        for p, q in zip(pieces[:-2], pieces[1:-1], strict=True):
            assert sizes[p : q + 1].sum() > piece_tokens  # each as long as the cap allows


def test_enforce_limits_keeps_a_heading_with_its_text() -> None:
    same = numpy.ones((16, 3))
    sizes = numpy.ones(16, dtype="int64")
    allowed = numpy.ones(16, dtype=bool)
    allowed[8] = False  # sentence 7 heads sentence 8
    assert topics.enforce_limits([], same, sizes, max_tokens=9, allowed=allowed) == [7]
    allowed[1:] = False  # no allowed split: the limits still apply
    assert topics.enforce_limits([], same, sizes, max_tokens=8, allowed=allowed) == [8]
    # a heading and the one sentence it heads, too long together: whole, for the caller
    # to cut inside the sentence; with max_sents, split
    sizes = numpy.array([3, 12])
    heads = numpy.array([True, False])
    assert topics.enforce_limits([], same[:2], sizes, max_tokens=8, allowed=heads) == []
    assert topics.enforce_limits([], same[:2], sizes, max_sents=1, allowed=heads) == [1]
    sizes[0] = 9  # a heading longer than the limit by itself
    assert topics.enforce_limits([], same[:2], sizes, max_tokens=8, allowed=heads) == [1]


def test_enforce_limits_keeps_min_sents_on_each_side() -> None:
    """A short sentence unlike its neighbours (a fragment) in a segment over the cap:
    the best gaps cut it off on both sides, a segment of one sentence; with
    ``min_sents`` 2 every piece keeps two sentences or more, each within the cap."""
    vectors = numpy.zeros((12, 3))
    vectors[6] = [10.0, 0.0, 0.0]
    sizes = numpy.ones(12, dtype="int64")
    for min_sents, shortest in ((1, 1), (2, 2)):
        starts = topics.enforce_limits([], vectors, sizes, max_tokens=5, min_sents=min_sents)
        lengths = numpy.diff([0, *starts, 12])
        assert lengths.min() == shortest and lengths.max() <= 5
    # with no gap that leaves two on each side, the limit still wins
    starts = topics.enforce_limits([], vectors[:3], sizes[:3], max_tokens=2, min_sents=2)
    assert numpy.diff([0, *starts, 3]).max() <= 2


@pytest.mark.parametrize("seed", range(6))
def test_a_boundary_after_a_heading_moves_before_it(seed: int) -> None:
    """Five sentences of one topic, a heading unlike either, six of another: unflagged,
    the heading becomes a segment of its own; flagged, it starts the second topic's.
    Joined (a heading that repeats, "Part 2"), its own vector plays no part."""
    rng = numpy.random.default_rng(seed)
    a, b, c = rng.normal(size=(3, 16))
    means = numpy.array([a] * 5 + [c] + [b] * 6) + rng.normal(scale=0.3, size=(12, 16))
    headings = numpy.zeros(12, dtype=bool)
    headings[5] = True
    paragraphs = numpy.array([0, 0, 1, 1, 2, 3, 4, 4, 5, 5, 6, 6])
    for by_paragraph in (None, paragraphs):
        alone, _ = topics.segment(means, min_sents=1, paragraphs=by_paragraph)
        assert 5 in alone and 6 in alone
        starts, scores = topics.segment(
            means, min_sents=1, paragraphs=by_paragraph, headings=headings
        )
        assert 5 in starts and 6 not in starts and len(scores) == len(starts)
        joined = [
            topics.segment(
                numpy.where(numpy.arange(12)[:, None] == 5, vector, means),
                min_sents=1,
                paragraphs=by_paragraph,
                headings=headings,
                joined=headings,
            )[0]
            for vector in (a, b, c, rng.normal(size=16))
        ]
        assert joined[0] == joined[1] == joined[2] == joined[3]
        assert 5 in joined[0] and 6 not in joined[0]
    flags = numpy.array([0, 0, 0, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    assert topics.before_headings([3, 6, 9], flags) == [3, 4, 8]
    assert topics.before_headings([4, 6], flags) == [4]  # a segment of headings alone goes


@pytest.mark.parametrize("seed", range(6))
def test_a_closing_sentence_stays_with_the_text_before_it(seed: int) -> None:
    """Five sentences of one topic, a sign-off unlike either, six of another: unflagged,
    the sign-off starts a segment; flagged as closing (``closing``), the second topic
    starts right after it, with sentences or paragraphs as units, and the size limits
    cut elsewhere where they can. The caller's arrays are left as they were."""
    rng = numpy.random.default_rng(seed)
    a, b, c = rng.normal(size=(3, 16))
    means = numpy.array([a] * 5 + [c] + [b] * 6) + rng.normal(scale=0.3, size=(12, 16))
    closing = numpy.zeros(12, dtype=bool)
    closing[5] = True
    headings = closing.copy()  # (a closing line is never a heading: it is ignored as one)
    paragraphs = numpy.array([0, 0, 1, 1, 2, 3, 4, 4, 5, 5, 6, 6])
    for by_paragraph in (None, paragraphs):
        alone, _ = topics.segment(means, min_sents=1, paragraphs=by_paragraph)
        assert 5 in alone
        starts, scores = topics.segment(
            means, min_sents=1, paragraphs=by_paragraph, closing=closing, headings=headings
        )
        assert 6 in starts and 5 not in starts and len(scores) == len(starts)
        assert closing.tolist() == headings.tolist() == [k == 5 for k in range(12)]
    # one topic of eight sentences cut to at most four: the middle gap is a closing's
    same = numpy.array([a] * 8) + rng.normal(scale=0.3, size=(8, 16))
    shut = numpy.zeros(8, dtype=bool)
    shut[4] = True
    starts, _ = topics.segment(same, min_sents=1, max_sents=4, closing=shut)
    assert 4 not in starts and numpy.diff([*starts, 8]).max() <= 4
    # a text that opens with one: nothing before it to join
    first = numpy.zeros(12, dtype=bool)
    first[0] = True
    plain = topics.segment(means, min_sents=1)[0]
    assert topics.segment(means, min_sents=1, closing=first)[0] == plain


# -- the component on the embedded MiniLM ---------------------------------------------


def test_segments_cover_the_doc_and_use_the_captured_hidden_states(minilm_nlp: Any) -> None:
    doc = minilm_nlp(" ".join(PIECES))
    segments = list(doc.spans["attn_segments"])
    assert segments[0].start == 0 and segments[-1].end == len(doc)
    assert all(a.end == b.start for a, b in zip(segments[:-1], segments[1:], strict=True))
    assert len(doc.spans["attn_segments"].attrs["scores"]) == len(segments)
    assert LOCAL not in doc._.trf_data.model_output  # released after its last reader


# short posts of UD English EWT dev (CC BY-SA 4.0, data/UD_English-EWT), each about one
# thing: a question and its answers, a request, two newsgroup posts
SHORT_POSTS = (
    "What is the nearest National Park",
    "Trivia! When was Miramar founded?",
    "I am looking for people who would like to play",
    'Email: "Ryan Reynolds"',
    'Email: "Sean Figaro"',
)


def test_a_short_text_about_one_thing_is_one_segment(default_nlp: Any) -> None:
    """Short posts of 5-6 sentences are one segment each: they pay for a boundary what a
    text of ``segment_short_text`` (30) sentences would. At the price of their own
    length (0) the best split of their sentences paid for itself: each was cut in two.
    Two posts one after the other are still cut where the second begins."""
    documents = read_conllu_paragraphs(DATA / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    texts = ["\n\n".join(" ".join(p) for p in paragraphs) for paragraphs in documents]
    found = {opening: text for text in texts for opening in SHORT_POSTS if text.startswith(opening)}
    posts = [found[opening] for opening in SHORT_POSTS]
    own_length = load_pipeline(overrides={"components.attn_segmenter.segment_short_text": 0})
    for doc, cut in zip(default_nlp.pipe(posts), own_length.pipe(posts), strict=True):
        assert 5 <= len(list(doc.sents)) <= 6
        assert len(doc.spans["attn_segments"]) == 1
        assert len(cut.spans["attn_segments"]) == 2
    national_park, trivia = posts[:2]
    for separator in (" ", "\n\n"):
        doc = default_nlp(national_park + separator + trivia)
        starts = [span.start_char for span in doc.spans["attn_segments"]]
        assert starts == [0, len(national_park + separator)]


# EWT dev documents of 9-12 sentences in one paragraph, by their openings
ONE_PARAGRAPH_POSTS = (
    "Xinhua reports that a wide range",
    "Ever since the first whispers about Google's IPO",
    '"Les Spahnn"',
    "Several years ago I developed",
    "Greetings. My name is Bill Gottlieb",
)


def one_paragraph_posts() -> List[List[str]]:
    """The sentences of the EWT dev documents of one paragraph that open as
    ``ONE_PARAGRAPH_POSTS`` do, in that order."""
    documents = read_conllu_paragraphs(DATA / "UD_English-EWT" / "en_ewt-ud-dev.conllu")
    found = {
        opening: [s for paragraph in paragraphs for s in paragraph]
        for paragraphs in documents
        for opening in ONE_PARAGRAPH_POSTS
        if " ".join(paragraphs[0]).startswith(opening) and len(paragraphs) == 1
    }
    return [found[opening] for opening in ONE_PARAGRAPH_POSTS]


def test_two_paragraphs_are_cut_by_what_they_say(
    default_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each of five EWT documents of 9-12 sentences, written as two paragraphs (cut at
    its middle sentence), is one segment; each two of them, one paragraph each, are cut
    exactly where the second begins. With paragraphs as the units (``FEW_PARAGRAPHS``
    0, and ``segment_pieces_ratio`` null, which reads a halved document's sentences otherwise
    where they differ across its break), two paragraphs are two opposite vectors
    whatever they say, and each halved document was cut in two."""
    posts = one_paragraph_posts()
    assert all(9 <= len(post) <= 12 for post in posts)
    halved = [" ".join(p[: len(p) // 2]) + "\n\n" + " ".join(p[len(p) // 2 :]) for p in posts]
    for doc in default_nlp.pipe(halved):
        assert len(doc.spans["attn_segments"]) == 1
    whole = [" ".join(post) for post in posts]
    firsts = whole[:-1]
    joined = [a + "\n\n" + b for a, b in zip(firsts, whole[1:], strict=True)]
    for first, doc in zip(firsts, default_nlp.pipe(joined), strict=True):
        starts = [span.start_char for span in doc.spans["attn_segments"]]
        assert starts == [0, len(first) + 2]
    monkeypatch.setattr(topics, "FEW_PARAGRAPHS", 0)
    monkeypatch.setitem(default_nlp.get_pipe("attn_segmenter").cfg, "segment_pieces_ratio", None)
    for doc in default_nlp.pipe(halved):
        assert len(doc.spans["attn_segments"]) == 2


def test_a_text_below_a_title_is_cut_where_its_topics_change(
    default_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three EWT documents of other topics run together as one paragraph under a title
    (a blank line below it): the text is cut where each document begins, at most once
    more, and the title stays with the first. The text has fewer than ``FEW_PARAGRAPHS``
    paragraphs and this one holds ``LONG_PARAGRAPH`` sentences or more, so a segment may
    start at any of its sentences (``long_paragraph_sentences``); cut only where its
    paragraphs start, the text could start a segment only at the title, and came out
    whole."""
    long = topics.LONG_PARAGRAPH
    assert topics.long_paragraph_sentences([]).tolist() == []
    first = [True] + [False] * (long - 1) + [True, False]
    assert topics.long_paragraph_sentences(first).tolist() == [True] * long + [False] * 2
    assert not topics.long_paragraph_sentences(first[:1] + first[2:]).any()  # (one short)
    posts = [" ".join(one_paragraph_posts()[k]) for k in (0, 1, 3)]
    title = "Notes from the week\n\n"
    text = title + " ".join(posts)
    changes = [len(title) + len(" ".join(posts[:k])) + 1 for k in (1, 2)]
    doc = default_nlp(text)
    assert len(list(doc.sents)) >= long + 1
    starts = [span.start_char for span in doc.spans["attn_segments"]]
    assert set(changes) <= set(starts) and len(starts) <= len(posts) + 1, starts
    assert starts[0] == 0 and len(title) not in starts
    monkeypatch.setattr(topics, "LONG_PARAGRAPH", 10_000)
    assert len(default_nlp(text).spans["attn_segments"]) == 1


def test_a_text_that_lost_its_breaks_below_front_matter_is_cut_where_its_topics_change(
    default_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three EWT documents of other topics run together as one paragraph below five short
    paragraphs (a page whose front matter kept its blank lines and whose body lost
    them): the body is cut where each document begins, at most once more. Its one
    paragraph holds ``LONG_SHARE`` of the sentences or more, so the text is partitioned
    by its sentences, as one of fewer than ``FEW_PARAGRAPHS`` paragraphs is; with its
    paragraphs as the units, the body was one unit and no segment started inside it."""
    from paper.topic_eval import FRONT_MATTER

    posts = [" ".join(one_paragraph_posts()[k]) for k in (0, 1, 3)]
    front = "".join(f"{paragraph}\n\n" for paragraph in FRONT_MATTER)
    text = front + " ".join(posts)
    changes = [len(front) + len(" ".join(posts[:k])) + 1 for k in (1, 2)]
    doc = default_nlp(text)
    in_body = [sent.start_char >= len(front) for sent in doc.sents]
    assert sum(in_body) >= topics.LONG_PARAGRAPH
    assert numpy.mean(in_body) >= topics.LONG_SHARE
    starts = [span.start_char for span in doc.spans["attn_segments"]]
    body = [start for start in starts if start > len(front)]
    assert set(changes) <= set(body) and len(body) <= len(changes) + 1, starts
    monkeypatch.setattr(topics, "LONG_SHARE", 2.0)
    doc = default_nlp(text)
    starts = [span.start_char for span in doc.spans["attn_segments"]]
    assert max(starts) <= len(front), starts


def test_pieces_each_a_paragraph_are_cut_where_each_begins(
    default_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten pieces of different WikiText-2 articles, each a paragraph (a digest, a page of
    abstracts): a segment starts where each piece does, and nowhere else. Each
    paragraph is a topic of its own, so their sentences differ far more across a
    paragraph start than within one (``separate_paragraphs``), and the text is
    partitioned by its sentences; with the paragraphs as the units (``segment_pieces_ratio``
    null, or above the text's own ratio), the median step between them was a boundary's
    own and no boundary paid for itself (one segment)."""
    from paper.topic_eval import wikipieces_docs

    pieces = wikipieces_docs("tune", 4, separator="\n\n")[3]
    doc = default_nlp(pieces.text)

    def starts() -> List[int]:
        return [
            span.start_char + len(span.text) - len(span.text.lstrip())
            for span in doc.spans["attn_segments"]
        ]

    assert starts() == pieces.starts
    cfg = default_nlp.get_pipe("attn_segmenter").cfg
    for ratio in (None, 100.0):
        monkeypatch.setitem(cfg, "segment_pieces_ratio", ratio)
        doc = default_nlp(pieces.text)
        assert starts() == [0]


def test_separate_paragraphs_compares_the_steps_across_and_within() -> None:
    """``separate_paragraphs`` against the medians computed here step by step: half the
    squared distance between neighbouring rows, those across a paragraph start against
    those within one, equal neighbours left out, at least ``MIN_WITHIN`` within."""
    rng = numpy.random.default_rng(7)
    topics_of = rng.normal(size=(4, 16))
    sizes = [6, 5, 4, 6]
    rows = numpy.concatenate(
        [topics_of[k] + 0.3 * rng.normal(size=(n, 16)) for k, n in enumerate(sizes)]
    )
    rows /= numpy.linalg.norm(rows, axis=1, keepdims=True)
    first = numpy.zeros(len(rows), dtype=bool)
    first[numpy.cumsum([0, *sizes[:-1]])] = True

    def medians(rows: numpy.ndarray, first: numpy.ndarray) -> Tuple[float, float]:
        """The medians across and within paragraphs (0 for within where too few)."""
        across, within = [], []
        for i in range(1, len(rows)):
            step = float(sum((a - b) ** 2 for a, b in zip(rows[i], rows[i - 1], strict=True))) / 2
            if step > 0:
                (across if first[i] else within).append(step)
        if len(within) < topics.MIN_WITHIN or not across:
            return 0.0, 0.0
        return float(numpy.median(across)), float(numpy.median(within))

    def by_hand(rows: numpy.ndarray, first: numpy.ndarray) -> bool:
        across, within = medians(rows, first)
        return within > 0 and across >= topics.PIECES_RATIO * within

    assert by_hand(rows, first) and topics.separate_paragraphs(rows, first)
    # the ratio given decides: the text's own ratio is where the answer turns
    across, within = medians(rows, first)
    own = across / within
    assert own > topics.PIECES_RATIO
    assert topics.separate_paragraphs(rows, first, own * 0.999)
    assert not topics.separate_paragraphs(rows, first, own * 1.001)
    assert not topics.separate_paragraphs(rows, first, None)
    mixed = rng.permutation(rows)  # (the same rows, no topic kept to a paragraph)
    assert topics.separate_paragraphs(mixed, first) == by_hand(mixed, first)
    assert not topics.separate_paragraphs(rows[:1], first[:1])  # (no step at all)
    one_each = numpy.ones(len(rows), dtype=bool)  # (no step within a paragraph)
    assert not topics.separate_paragraphs(rows, one_each)
    few = numpy.zeros(len(rows), dtype=bool)
    few[[0, len(rows) - topics.MIN_WITHIN + 1]] = True  # (one step fewer within than needed)
    few[1 : len(rows) - topics.MIN_WITHIN] = True
    assert not by_hand(rows, few) and not topics.separate_paragraphs(rows, few)
    repeated = rows.copy()
    repeated[1:3] = repeated[0]  # (equal neighbours count in neither)
    assert topics.separate_paragraphs(repeated, first) == by_hand(repeated, first)
    for seed in range(20):
        noise = numpy.random.default_rng(seed).normal(size=rows.shape)
        assert topics.separate_paragraphs(noise, first) == by_hand(noise, first)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**16),
    st.lists(st.integers(1, 2 * topics.LONG_PARAGRAPH), min_size=2, max_size=6),
    st.sampled_from([{}, {"method": "texttiling"}, {"n_segments": 3}]),
)
def test_paragraphs_are_cut_at_their_starts_or_inside_long_ones(
    seed: int, sizes: List[int], method: Dict[str, Any]
) -> None:
    """Segments start where paragraphs do, or at any sentence of one of
    ``LONG_PARAGRAPH`` sentences or more: the partition's among fewer than
    ``FEW_PARAGRAPHS`` paragraphs, where long ones hold ``LONG_SHARE`` of the
    sentences or where the paragraphs read as pieces of unrelated texts
    (``separate_paragraphs``), TextTiling's and ``n_segments``' among any number.
    There, where each paragraph is either that long or one sentence and one is long, the
    text is cut as its sentences without paragraphs would be."""
    means = numpy.random.default_rng(seed).normal(size=(sum(sizes), 8))
    paragraphs = numpy.repeat(numpy.arange(len(sizes)), sizes)
    first = numpy.diff(paragraphs, prepend=-1) != 0
    long = topics.long_paragraph_sentences(first)
    assert (
        long.tolist() == numpy.repeat(numpy.array(sizes) >= topics.LONG_PARAGRAPH, sizes).tolist()
    )
    starts, _ = topics.segment(means, paragraphs=paragraphs, **method)
    pieces = topics.separate_paragraphs(topics.unit_vectors(means, standardise=True), first)
    inside = (
        bool(method)
        or len(sizes) < topics.FEW_PARAGRAPHS
        or long.mean() >= topics.LONG_SHARE
        or pieces
    )
    assert all(first[s] or (inside and long[s]) for s in starts), (starts, sizes)
    if inside and long.any() and all(n == 1 or n >= topics.LONG_PARAGRAPH for n in sizes):
        assert starts == topics.segment(means, **method)[0]


def subtitles(words: Sequence[str], size: int = 9) -> Tuple[str, List[int]]:
    """``words`` as a subtitle file (SRT) of cues of ``size`` words each, which cut the
    sentences anywhere; and the character offset of each word."""
    parts, offsets, at = [], [], 0
    for k in range(0, len(words), size):
        n = k // size
        head = f"{n + 1}\n00:00:{n * 3 % 60:02d},000 --> 00:00:{(n + 1) * 3 % 60:02d},000\n"
        at += len(head)
        for word in words[k : k + size]:
            offsets.append(at)
            at += len(word) + 1
        parts.append(head + " ".join(words[k : k + size]) + "\n\n")
    return "".join(parts), offsets


@pytest.mark.parametrize("third", [3, 4])
def test_subtitles_are_cut_where_their_topics_change(default_nlp: Any, third: int) -> None:
    """Three EWT documents of other topics as a subtitle file whose cues of nine words
    cut their sentences: each topic change is within one sentence of a segment's start.
    The blank lines between the cues open no paragraphs
    (``sentences.breaks_split_sentences``); read as paragraphs, they let a segment start
    only at the few sentences that open a cue, three to seven sentences off."""
    posts = [" ".join(one_paragraph_posts()[k]) for k in (0, 1, third)]
    words = " ".join(posts).split()
    text, offsets = subtitles(words)
    changes = [offsets[len(" ".join(posts[:k]).split())] for k in (1, 2)]
    doc = default_nlp(text)
    firsts = [sent.start_char for sent in doc.sents]
    segments = [span.start_char for span in doc.spans["attn_segments"]]
    sentence = [bisect.bisect_right(firsts, c) - 1 for c in segments]
    for change in changes:
        k = bisect.bisect_right(firsts, change) - 1
        assert min(abs(k - s) for s in sentence) <= 1


@pytest.mark.parametrize("spoken", [False, True])
def test_a_transcript_is_cut_where_its_topic_changes_not_at_backchannels(
    default_nlp: Any, spoken: bool
) -> None:
    """Three EWT documents as a meeting's transcript: each two sentences a speaker's turn
    on a line (``"A: ..."``), a listener's ``"B: mm-hmm"`` after each turn; with
    ``spoken``, lower case without punctuation, as a speech recognizer writes it, and
    some listeners' lines short questions. Every segment starts at a topic change,
    within one turn, and none at a listener's line: a backchannel says nothing
    (``markup.backchannel``); before, each was a plain heading over prose, which starts
    a segment whatever the vectors."""
    posts = [one_paragraph_posts()[k] for k in (0, 1, 3)]
    listeners = ["B: mm-hmm", "C: yeah", "B: okay", "C: uh huh", "B: right"]
    lines: List[str] = []
    changes: List[int] = []
    for post in posts:
        changes.append(len(lines))
        for k in range(0, len(post), 2):
            turn = " ".join(post[k : k + 2])
            if spoken:
                turn = " ".join(re.findall(r"[\w'-]+", turn.lower()))
            lines.append(f"A: {turn}")
            if k + 2 < len(post):
                lines.append(listeners[len(lines) % len(listeners)])
    if spoken:  # (and a question now and then, short and without punctuation)
        listeners += ["C: and then what", "B: how do you mean"]
        lines = [
            listeners[5 + k % 2] if line in listeners and k % 3 == 0 else line
            for k, line in enumerate(lines)
        ]
    text = "\n".join(lines) + "\n"
    offsets = [sum(len(line) + 1 for line in lines[:k]) for k in range(len(lines))]
    doc = default_nlp(text)
    starts = [span.start_char for span in doc.spans["attn_segments"]]
    line_of = [bisect.bisect_right(offsets, c) - 1 for c in starts]
    assert not [k for k in line_of if lines[k] in listeners]
    assert len(starts) == 3
    assert all(min(abs(k - c) for c in changes) <= 1 for k in line_of)


INTERVIEW_QUESTIONS = ["Q: and then what", "Q: how do you mean", "Q: why is that", "Q: go on"]


def interview() -> Tuple[List[str], List[int]]:
    """Three EWT documents as an interview that a speech recognizer writes (lower case,
    no punctuation): each three sentences an answer's turn (``"A: ..."``), and between
    them the interviewer's short questions (``INTERVIEW_QUESTIONS``); its lines and the
    line where each document starts."""
    lines: List[str] = []
    changes: List[int] = []
    for post in [one_paragraph_posts()[k] for k in (0, 1, 3)]:
        changes.append(len(lines))
        for k in range(0, len(post), 3):
            turn = " ".join(re.findall(r"[\w'-]+", " ".join(post[k : k + 3]).lower()))
            lines.append(f"A: {turn}")
            if k + 3 < len(post):
                lines.append(INTERVIEW_QUESTIONS[len(lines) % len(INTERVIEW_QUESTIONS)])
    return lines, changes


def test_an_interview_is_cut_where_its_topic_changes(default_nlp: Any) -> None:
    """In an ``interview``, every topic change starts a segment and every segment starts
    at one, within one answer (a question with the answer below it): in a transcript
    (``markup.transcript_speakers``) a turn is no plain heading; before, each question
    was one over prose, which starts a segment whatever the vectors."""
    lines, changes = interview()
    text = "\n".join(lines) + "\n"
    offsets = [sum(len(line) + 1 for line in lines[:k]) for k in range(len(lines))]
    doc = default_nlp(text)
    starts = [span.start_char for span in doc.spans["attn_segments"]]
    line_of = [bisect.bisect_right(offsets, c) - 1 for c in starts]
    answers = [k for k, line in enumerate(lines) if line not in INTERVIEW_QUESTIONS]
    answer_of = [answers.index(k + (lines[k] in INTERVIEW_QUESTIONS)) for k in line_of]
    found = [answers.index(c) for c in changes]
    assert all(min(abs(k - c) for c in found) <= 1 for k in answer_of)
    assert all(min(abs(k - c) for k in answer_of) <= 1 for c in found)


def test_an_interviewers_question_stays_with_its_answer(default_nlp: Any) -> None:
    """Cut to ``max_tokens``, an ``interview``'s segments never part a question from
    the answer below it: the interviewer's short turns lead into the next turn
    (``markup.leading_turns``), as a heading into its text."""
    lines, _ = interview()
    text = "\n".join(lines) + "\n"
    answers = {text.index(line) for line in lines if line not in INTERVIEW_QUESTIONS}
    asked = {a for a in answers if a and text[: a - 1].rsplit("\n", 1)[-1] in INTERVIEW_QUESTIONS}
    assert len(asked) == 8
    for max_tokens, spans in capped_segments(default_nlp, text):
        assert not asked & {span.start_char for span in spans}, max_tokens


def capped_segments(nlp: Any, text: str) -> Iterator[Tuple[int, List[Any]]]:
    """``text``'s segments through ``nlp`` with ``max_tokens`` 48, 64, 96 and 128 in
    turn (restored after), each time checked to give the text back and to fit."""
    segmenter = nlp.get_pipe("attn_segmenter")
    before = segmenter.cfg["max_tokens"]
    try:
        for max_tokens in (48, 64, 96, 128):
            segmenter.cfg["max_tokens"] = max_tokens
            doc = nlp(text)
            sizes = doc_wordpiece_counts(doc)
            spans = list(doc.spans["attn_segments"])
            assert "".join(span.text_with_ws for span in spans) == text
            assert all(sizes.span(s.start, s.end) <= max_tokens for s in spans)
            yield max_tokens, spans
    finally:
        segmenter.cfg["max_tokens"] = before


@pytest.mark.parametrize("blank_lines", [True, False], ids=["turns", "chat"])
def test_a_transcript_with_a_header_above_each_turn_is_cut_where_its_topic_changes(
    default_nlp: Any, blank_lines: bool
) -> None:
    """Two documents of WikiText pieces as a service exports a meeting's transcript, a
    line of the speaker's name and the time above each turn (``"Ann Lee  0:31"``,
    ``paper.topic_eval.headed_transcript``), the turns apart by blank lines or, as a
    chat's messages, not: every segment starts at a header, and Pk is at most 0.1. Each
    header repeats above its text (``topics.repeated_headers``), so it heads its turn
    and adds nothing to its vector; before, the name of one of three speakers in every
    turn set turns apart from their neighbours everywhere, and these documents were two
    segments or fewer (Pk 0.42 and 0.19 with blank lines)."""
    from paper.topic_eval import headed_transcript, score, token_starts, wikipieces_docs

    for seed, pieces in enumerate(wikipieces_docs("report", 2)):
        transcript = headed_transcript(pieces, seed, "\n\n" if blank_lines else "\n")
        headers = {m.start() for m in re.finditer(r"(?m)^\w+ \w+  \d+:\d\d$", transcript.text)}
        assert len(headers) > 20 and set(transcript.starts) <= headers
        doc = default_nlp(transcript.text)
        spans = list(doc.spans["attn_segments"])
        assert {span.start_char for span in spans} <= headers
        ref = token_starts(doc, transcript.starts)
        assert score(doc, ref, [span.start for span in spans])["pk"] <= 0.1


def test_a_long_segment_of_subtitles_is_cut_at_a_cue(default_nlp: Any) -> None:
    """Cut to ``max_tokens``, a subtitle file's segments never start at a cue's timing
    line (apart from its number) or at the first line of its text (apart from its
    header): a piece starts at a cue's number, or at a sentence inside a cue."""
    from spacy_attnseg.markup import CUE_LINES

    posts = [" ".join(post) for post in one_paragraph_posts()[:3]]
    text, _ = subtitles(" ".join(posts).split())
    held = set()
    for cue in CUE_LINES.finditer(text):
        timing = text.index("\n", cue.start()) + 1
        held |= {timing, text.index("\n", timing) + 1}
    assert len(held) == 2 * text.count(" --> ")
    for max_tokens, spans in capped_segments(default_nlp, text):
        assert not held & {span.start_char for span in spans}, max_tokens


def test_captured_hidden_states_equal_the_models_own(minilm_nlp: Any) -> None:
    """The hooks' hidden states equal the sum of ``output_hidden_states`` of the same
    model over the captured layers."""

    reference = load_pipeline(
        "attention",
        overrides={
            "components.transformer.model.transformer_config": {"output_hidden_states": True}
        },
    )
    segmenter = minilm_nlp.get_pipe("attn_segmenter")
    capture = segmenter.capture
    capture.request("test_topics", type(segmenter.capture_request())(hidden_layers=None))
    try:
        doc = minilm_nlp.get_pipe("transformer")(minilm_nlp.make_doc(" ".join(PIECES)))
    finally:
        capture.withdraw("test_topics")
    ref = reference.get_pipe("transformer")(reference.make_doc(" ".join(PIECES)))
    got = numpy.asarray(doc._.trf_data.model_output[HIDDEN])
    want = ref._.trf_data.model_output["hidden_states"]
    # the sum of the outputs of all six layers (hidden_states[0] is the embeddings)
    assert numpy.allclose(got, sum(numpy.asarray(want[i]) for i in range(1, 7)), atol=1e-4)


def test_segments_equal_the_rule_on_the_models_own_hidden_states() -> None:
    """With ``segment_vectors = "hidden"``, the component's segments equal
    ``topics.segment`` applied to per-sentence means, computed token by token, of the
    summed ``output_hidden_states`` of the last four layers, with and without
    ``segment_standardise``; with paragraphs (blank lines, or one paragraph per line),
    segments start only at paragraph starts. (At the price of the text's own length,
    ``segment_short_text`` 0: these 12-20 sentences about three things pay less for a
    boundary than 30 would, and get one at each change.)"""
    hidden = {
        "components.attn_segmenter.segment_vectors": "hidden",
        "components.attn_segmenter.segment_short_text": 0,
    }
    minilm_nlp = load_pipeline("attention", overrides=hidden)
    reference = load_pipeline(
        "attention",
        overrides={
            "components.transformer.model.transformer_config": {"output_hidden_states": True}
        },
    )
    unstandardised = load_pipeline(
        "attention",
        overrides={**hidden, "components.attn_segmenter.segment_standardise": False},
    )
    for separator in (" ", "\n\n", "\n"):
        text = separator.join(PIECES + PIECES[:1] * 2)
        doc = minilm_nlp(text)
        ref = reference(text)
        states = ref._.trf_data.model_output["hidden_states"]
        summed = sum(numpy.asarray(states[i]) for i in range(3, 7))
        flat = summed.reshape((-1, summed.shape[-1])).astype("float64")
        sents = list(doc.sents)
        means = numpy.zeros((len(sents), flat.shape[1]))
        for k, sent in enumerate(sents):
            rows = [r for t in sent for r in ref._.trf_data.align[t.i].data.ravel().tolist()]
            means[k] = flat[rows].mean(axis=0)
        # the first piece comes three times: each of its sentences gets the mean of its
        # copies
        keys = [re.sub(r"\s+", " ", sent.text).strip().lower() for sent in sents]
        repeated = [key for key in set(keys) if keys.count(key) >= 3]
        assert len(repeated) == PIECES[0].count(".")
        for key in repeated:
            copies = [k for k, other in enumerate(keys) if other == key]
            means[copies] = means[copies].mean(axis=0)
        # the pieces are the paragraphs: a sentence after the separator opens one
        paragraph = [k == 0 or separator in doc[s.start - 1].text for k, s in enumerate(sents)]
        # the pipeline's costs of a boundary, between sentences and between paragraphs,
        # and its credit of a run's length
        cfg = minilm_nlp.get_pipe("attn_segmenter").cfg
        penalties = {
            "penalty": cfg["segment_penalty"],
            "paragraph_penalty": cfg["paragraph_penalty"],
            "drift": cfg["segment_drift"],
            "short_text": cfg["segment_short_text"],
            "pieces_ratio": cfg["segment_pieces_ratio"],
        }
        starts, scores = topics.segment(
            means,
            paragraphs=numpy.cumsum(paragraph) - 1 if separator != " " else None,
            **penalties,
        )
        group = doc.spans["attn_segments"]
        assert [span.start for span in group] == [sents[k].start for k in starts]
        assert group.attrs["scores"] == pytest.approx(scores, abs=1e-4)
        if separator != " ":
            assert all(paragraph[k] for k in starts)
        assert len(starts) >= 3  # the pieces are about unrelated things
        # segment_standardise = false reaches the rule (the scores tell the two apart)
        plain_starts, plain_scores = topics.segment(
            means,
            standardise=False,
            paragraphs=numpy.cumsum(paragraph) - 1 if separator != " " else None,
            **penalties,
        )
        plain_doc = unstandardised(text)
        plain = plain_doc.spans["attn_segments"]
        assert [span.start for span in plain] == [sents[k].start for k in plain_starts]
        assert plain.attrs["scores"] == pytest.approx(plain_scores, abs=1e-4)
        assert plain_scores != pytest.approx(scores, abs=1e-3)


@pytest.mark.parametrize(
    "style", ["## Part {k}", "Part {k}", "Part {k}\n------", "## {title}", "{title}"]
)
def test_headings_start_segments_and_never_end_one(default_nlp: Any, style: str) -> None:
    """A Markdown page of headed sections: each heading stays with the section it heads,
    so every segment starts at a heading and none ends with one."""
    titles = ["The library budget", "My cat", "The volcano"]
    heads = [style.format(k=k + 1, title=title) for k, title in enumerate(titles)]
    sections = [h + "\n\n" + piece for h, piece in zip(heads, PIECES, strict=True)]
    doc = default_nlp("\n\n".join(sections))
    group = doc.spans["attn_segments"]
    firsts = [h.split("\n")[0] for h in heads]
    assert len(group) >= 2 and all(span.text.split("\n")[0] in firsts for span in group)
    if style.startswith(("## Part", "Part")):  # (repeated headings: each section found)
        assert [span.text.split("\n")[0] for span in group] == firsts
    for span in group:
        last = list(span.sents)[-1].text.strip()
        assert not any(last.startswith(h.split("\n")[0]) for h in heads), span.text


def test_lead_ins_are_the_colons_that_end_a_line() -> None:
    """``lead_ins``: a sentence that ends with a colon and a line break, above a
    sentence that is not a heading; not one that a space follows, the last sentence or
    one above a heading."""
    texts = ["Intro. ", "Run it with:\n\n", "```x```\n", "Note: ", "it is: ", "Then:\n"]
    texts += ["## Next\n", "Do this:  \r\n", "- a", "End:\n"]
    flags = numpy.zeros(len(texts), dtype="int8")
    flags[6] = MARKED_HEADING
    assert lead_ins(texts, flags).tolist() == [0, 1, 0, 0, 0, 0, 0, 1, 0, 0]
    assert lead_ins(texts).tolist() == [0, 1, 0, 0, 0, 1, 0, 1, 0, 0]


@pytest.mark.parametrize("max_tokens", [0, 64, 128])
def test_a_lead_in_stays_with_what_it_introduces(max_tokens: int) -> None:
    """A page whose sections end with a lead-in and what it introduces (a code block
    after a blank line, an image over prose, a code block on the next line): no segment
    ends with the lead-in, also where the size limit cuts the page into chunks, and no
    segment starts at the image (a short line over prose, it read as a heading). The
    chunks give the text back. (Before lead-ins, one segment ended with a lead-in
    without a size limit, three at 64 wordpieces and two at 128.)"""
    code = [
        "```\n" + "\n".join(f"step_{k}_{j} = load(part_{j}, size={j * 7})" for j in range(n))
        for k, n in enumerate((4, 30))
    ]
    leads = ["To load the data, run:", "The report looks like this:", "Expected output:"]
    sections = [
        PIECES[0] + "\n\n" + leads[0] + "\n\n" + code[0] + "\n```",
        PIECES[1] + "\n\n" + leads[1] + "\n\n![The report](img/report.png)\n\n"
        "It lists every part of the order. Each part has its size and its price.",
        PIECES[2] + "\n" + leads[2] + "\n" + code[1] + "\n```",
    ]
    text = "\n\n".join(sections)
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": max_tokens})
    doc = nlp(text)
    group = doc.spans["attn_segments"]
    assert "".join(span.text for span in group) == text
    assert len(group) > (3 if max_tokens else 0)
    for span in group:
        assert list(span.sents)[-1].text.strip() not in leads, span.text
        assert not span.text.startswith("!["), span.text


MARKED_STYLES = ["## {t}", "{t}\n------------", "{t}\n==========", "== {t} ==", " = = {t} = = "]


def test_marked_headings_start_segments_of_one_topic(default_nlp: Any) -> None:
    """Sections of one topic under marked headings (Markdown, underlined, MediaWiki and
    WikiText's form of it), with blank lines or line breaks between paragraphs: each
    section is a segment (the title keeps with the first), also under a boundary penalty
    too high for the vectors alone to cut anything (``segment_at_headings = false`` then
    gives one segment)."""
    high = {
        "components.attn_segmenter.segment_penalty": 5.0,
        "components.attn_segmenter.paragraph_penalty": 5.0,
    }
    forced = load_pipeline(overrides=high)
    off = load_pipeline(overrides={**high, "components.attn_segmenter.segment_at_headings": False})
    body = [
        "The committee approved the new budget for the city library. Funding for books "
        "rose by ten percent.",
        "The library will also open on Sundays. Staff said readers had asked for longer hours.",
        "Volunteers will run a reading club for children. The first meeting is in March.",
    ]
    titles = ["Budget", "Opening hours", "Reading club"]
    for style in MARKED_STYLES:
        heads = [style.format(t=t) for t in titles]
        for sep in ("\n\n", "\n"):
            text = "# The city library" + sep
            text += sep.join(h + sep + b for h, b in zip(heads, body, strict=True))
            lines = [h.split("\n")[0].strip() for h in heads]
            for nlp in (default_nlp, forced):
                doc = nlp(text)
                on = doc.spans["attn_segments"]
                firsts = [span.text.split("\n")[0].strip() for span in on]
                assert firsts == ["# The city library", lines[1], lines[2]], (style, sep)
                assert "".join(span.text for span in on) == text
            assert len(off(text).spans["attn_segments"]) == 1, (style, sep)


def test_each_version_of_a_changelog_is_a_segment() -> None:
    """A changelog in Markdown: each version under its heading, a link, two subheadings
    and one fix, a list item of one short line. Each version is a segment, also under a
    boundary penalty too high for the vectors alone to cut anything (the items read as
    headings made all the headings one run, and the versions one segment)."""
    versions = [
        ("2.13.3", "Handle `AttributeError` subclasses by [@anna](https://example.org/anna)"),
        ("2.13.2", "Fix `field_name` missing in JSON by [@ben](https://example.org/ben)"),
        ("2.13.1", "Fix `ValidationInfo.data` in JSON by [@carl](https://example.org/carl)"),
    ]
    text = "".join(
        f"## v{v} (2026-04-{20 - k})\n\n[GitHub release](https://example.org/releases/v{v})"
        f"\n\n### What's Changed\n\n#### Fixes\n\n* {fix}\n\n"
        for k, (v, fix) in enumerate(versions)
    )
    nlp = load_pipeline(
        overrides={
            "components.attn_segmenter.segment_penalty": 5.0,
            "components.attn_segmenter.paragraph_penalty": 5.0,
        }
    )
    doc = nlp(text)
    group = doc.spans["attn_segments"]
    assert [span.text.split("\n")[0] for span in group] == [
        f"## v{v} (2026-04-{20 - k})" for k, (v, _) in enumerate(versions)
    ]
    assert "".join(span.text for span in group) == text


STORY = [
    "The rain had not stopped for three days. Anna watched the river rise from her window. "
    "By evening the road to the village was under water.",
    "* * *",
    "In the morning a boat came for them. The boatman said the bridge was gone. They took "
    "only the dog and a bag of bread.",
    "---",
    "Years later she still dreamt of the river. Her children laughed at the story. Nobody "
    "in the city believed the water had come so high.",
    "***",
]


@pytest.mark.parametrize("separator", ["\n\n", "\n"])
def test_a_line_without_letters_is_never_a_segment_of_its_own(
    default_nlp: Any, separator: str
) -> None:
    """Scene breaks and rules (``"* * *"``, ``"---"``), and lines of markup tags alone
    (``"</div>"``), keep with the text after them, and one that ends the text with the
    text before it."""
    tagged = separator.join(
        line if any(c.isalnum() for c in line) else "</div><div>" for line in STORY
    )
    texts = (
        separator.join(STORY),
        "Intro text here. It is short.\n\n---\n\nMore.\n\n---",
        f"<div>{separator}{tagged}{separator}</div>",
    )
    for text in texts:
        doc = default_nlp(text)
        group = doc.spans["attn_segments"]
        assert "".join(span.text_with_ws for span in group) == text
        words = [span.text.replace("div", "") for span in group]
        assert all(any(c.isalnum() for c in span) for span in words), list(group)
        assert not any(
            span.text.rstrip().endswith(("* * *", "---", "<div>")) for span in list(group)[:-1]
        )


def test_joined_sentences_at_the_end_join_the_unit_before() -> None:
    """A joined heading at the end has no unit after it: it joins the one before, and
    its vector plays no part (any vector there gives the same segments; nine units
    of little noise are cut often, alike)."""
    rng = numpy.random.default_rng(1)
    a, b = rng.normal(size=(2, 8))
    means = numpy.array([a] * 4 + [b] * 4 + [a]) + rng.normal(scale=0.2, size=(9, 8))
    last = numpy.zeros(9, dtype=bool)
    last[8] = True
    results = set()
    for vector in (a, b, rng.normal(size=8) * 5):
        means[8] = vector
        starts, scores = topics.segment(means, min_sents=1, headings=last, joined=last)
        results.add(tuple(starts))
        assert len(scores) == len(starts)
    assert len(results) == 1 and 4 in min(results) and 8 not in min(results), results
    alone, _ = topics.segment(means, min_sents=1)
    assert 8 in alone  # (unjoined, the odd vector is a segment of its own)


@pytest.mark.parametrize(
    "text,underline,want",
    [
        ("## Install ##", "", (2, "Install")),
        ("# Title", "", (1, "Title")),
        ('<h3 class="x">Use <em>it</em></h3>', "", (3, "Use it")),
        ("\\section*{Intro}", "", (3, "Intro")),
        ("\\subsection{Set-up} % note", "", (4, "Set-up")),
        ("\\chapter[Short]{A long title}", "", (2, "A long title")),
        ("== History ==", "", (2, "History")),
        ("= = Early life = =", "", (2, "Early life")),  # (as WikiText writes MediaWiki's)
        ("= Du Fu =", "", (1, "Du Fu")),  # (a MediaWiki page's title)
        ("=== Usage", "", (3, "Usage")),  # (AsciiDoc's)
        ("** Sub", "", (2, "Sub")),  # (Org's)
        ("#+TITLE: Page", "", (0, "Page")),
        ("Title\n=====", "", ("=", "Title")),
        ("#####\n  Top  \n#####", "", ("over #", "Top")),
        ("Section", "-------", ("-", "Section")),
        ("# Title", "-----", (1, "Title")),  # (a rule under a marked heading)
        ("Plain", "Next sentence.", (0, "Plain")),
        ("## Heading 4\tand  <b>more</b>", "", (2, "Heading 4 and more")),
        ("<h2></h2>", "", (2, "<h2></h2>")),  # (no title but its tags: the line)
    ],
)
def test_heading_title_reads_each_markup(text: str, underline: str, want: tuple) -> None:
    from spacy_attnseg.markup import heading_title

    assert heading_title(text, underline) == want


def backward_path(depths: Sequence[int], titles: Sequence[str], end: int) -> List[List[Any]]:
    """The headings in force before sentence ``end``, read backwards: the nearest
    heading, then the nearest before it that is shallower than every one kept."""
    kept: List[List[Any]] = []
    for j in range(end - 1, -1, -1):
        if depths[j] > 0 and (not kept or depths[j] < kept[0][0]):
            kept.insert(0, [depths[j], titles[j]])
    return kept


@settings(max_examples=300, derandomize=True, deadline=None)
@given(
    depths=st.lists(st.sampled_from([0, 0, 0, -1, 1, 2, 3, 4]), min_size=1, max_size=30),
    cuts=st.sets(st.integers(1, 29), max_size=8),
    part=st.integers(1, 29),
    titled=st.booleans(),
)
def test_heading_paths_equal_the_backward_definition(
    depths: List[int], cuts: set, part: int, titled: bool
) -> None:
    """``heading_paths``: each segment sits under the headings in force after those that
    open it, as a backward scan finds them; and a text read in two parts, the second
    under the first's headings at its end (``carried``), gets the paths of the whole.
    (Depth -1: a plain heading, which opens a segment and, where ``titled`` says it
    heads prose, enters the path at ``PLAIN_DEPTH``; else none.)"""
    from spacy_attnseg.sentences import PLAIN_DEPTH, carried, heading_paths

    n = len(depths)
    titles = [f"H{k}" if d > 0 else f"Text {k}" for k, d in enumerate(depths)]
    texts = ["#" * d + f" H{k}" if d > 0 else f"Text {k}" for k, d in enumerate(depths)]
    flags = numpy.array([MARKED_HEADING if d > 0 else PLAIN_HEADING if d else 0 for d in depths])
    prose = numpy.array([d == -1 and titled for d in depths])
    levels = [PLAIN_DEPTH if d == -1 and titled else d for d in depths]
    firsts = sorted({0} | {c for c in cuts if c < n})
    paths, at_end, _ = heading_paths(texts, flags, firsts, prose=prose)
    bounds = firsts + [n]
    for k, (first, last) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        opened = first
        while opened < last and depths[opened]:
            opened += 1
        assert paths[k] == backward_path(levels, titles, opened)
    assert at_end == backward_path(levels, titles, n)
    if part < n:  # (a part boundary where a segment starts)
        whole = heading_paths(texts, flags, [0, part], prose=prose)[0]
        above = heading_paths(texts[:part], flags[:part], [0], prose=prose[:part])[1]
        second = heading_paths(texts[part:], flags[part:], [0], prose=prose[part:])[0][0]
        assert carried(above, second) == whole[1]


def test_chunks_carry_the_headings_they_sit_under(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each chunk of a page with headings names those it sits under (``"headings"``,
    outermost first), as the page's heading lines say; read in parts, the same, and so
    do the segments of ``segment --format jsonl``'s records; a page
    that underlines its titles ranks their styles in the order it uses them; a text
    without headings gets none."""
    import spacy_attnseg
    from spacy_attnseg import records

    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    marks = ["# Guide", "## Install", "### On Linux", "## Use", "# Appendix", "### Notes"]
    blocks: List[str] = []
    for k, mark in enumerate(marks):
        blocks += [mark, PIECES[k % len(PIECES)], PIECES[(k + 3) % len(PIECES)]]
    page = "\n\n".join(blocks)
    got = list(spacy_attnseg.chunks(nlp, [page]))
    assert "".join(r["text"] for r in got) == page
    lines = [(m.start(), m.group()) for m in re.finditer(r"(?m)^.+$", page)]
    depths = [len(text) - len(text.lstrip("#")) for _, text in lines]
    titles = [text.lstrip("# ") for _, text in lines]
    for r in got:
        # the chunk's first line of text, after the headings that open it
        opened = next(k for k, (at, _) in enumerate(lines) if at >= r["start"])
        while depths[opened]:
            opened += 1
        want = [title for _, title in backward_path(depths, titles, opened)]
        assert r.get("headings") == want, (r["text"][:40], want)
    assert {tuple(r["headings"]) for r in got} >= {
        ("Guide", "Install", "On Linux"),
        ("Guide", "Use"),
        ("Appendix", "Notes"),
    }
    monkeypatch.setattr(records, "PART_CHARACTERS", 700)
    parts = records.text_parts(page, 700)
    assert len(parts) > 3
    in_parts = list(spacy_attnseg.chunks(nlp, [page]))
    assert "".join(r["text"] for r in in_parts) == page
    by_start = {r["start"]: r["headings"] for r in got}
    shared = [r for r in in_parts if r["start"] in by_start]
    assert len(shared) > 3 and all(r["headings"] == by_start[r["start"]] for r in shared)
    # `segment --format jsonl`'s segments, read in parts too, name the same headings
    (record,) = records.pipe_records(nlp, [page], "sentences")
    segments = record["segments"]
    assert sum(r["start"] in by_start for r in segments) > 3
    assert all(s["headings"] == by_start[s["start"]] for s in segments if s["start"] in by_start)
    monkeypatch.undo()
    rest = "Manual\n======\n\n" + PIECES[0] + "\n\nSetup\n-----\n\n" + PIECES[1]
    rest += "\n\nTuning\n------\n\n" + PIECES[2] + "\n\nReference\n=========\n\n" + PIECES[0]
    doc = nlp(rest)
    group = doc.spans["attn_segments"]
    assert group.attrs["headings_at_end"] == [[1, "Reference"]]
    assert group.attrs["heading_styles"] == ["=", "-"]
    heads = {tuple(t for _, t in path) for path in group.attrs["headings"]}
    assert heads >= {("Manual", "Setup"), ("Manual", "Tuning"), ("Reference",)}
    # read in parts, one of which opens with the second style: its underlines keep the
    # depths of the whole page (ranked anew, "Tuning" would close "Manual")
    whole = {r["start"]: r.get("headings") for r in spacy_attnseg.chunks(nlp, [rest])}
    tuning = rest.index("Tuning")
    monkeypatch.setattr(records, "PART_CHARACTERS", tuning + 2)
    assert [a for a, _ in records.text_parts(rest, tuning + 2)][1] == tuning
    in_parts = list(spacy_attnseg.chunks(nlp, [rest]))
    assert "".join(r["text"] for r in in_parts) == rest
    assert [r.get("headings") for r in in_parts if r["start"] == tuning] == [["Manual", "Tuning"]]
    assert all(r.get("headings") == whole[r["start"]] for r in in_parts if r["start"] in whole)
    monkeypatch.undo()
    assert all("headings" not in r for r in spacy_attnseg.chunks(nlp, ["\n\n".join(PIECES)]))


def test_plain_titles_over_prose_name_the_sections_of_a_text_with_several(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text without markup whose sections open with a plain title over prose (as text
    converted from PDF or a word processor has them): each chunk names the title it
    sits under, at ``PLAIN_DEPTH`` under the marked headings in force; read in parts,
    where each after the first holds one title, the same (the titles before it count). One title
    line over prose (a name over an e-mail) names nothing, nor does a title that says
    nothing."""
    import spacy_attnseg
    from spacy_attnseg import records
    from spacy_attnseg.sentences import PLAIN_DEPTH

    nlp = load_pipeline()
    titles = ["Introduction", "Methods", "Results", "Discussion"]
    bodies = [PIECES[0], PIECES[1], f"{PIECES[2]}\n\n{PIECES[1]}", PIECES[0]]
    page = "\n\n".join(f"{title}\n\n{body}" for title, body in zip(titles, bodies, strict=True))
    opens = [page.index(title) for title in titles]
    got = list(spacy_attnseg.chunks(nlp, [page]))
    assert {r["start"] for r in got} >= set(opens)
    for r in got:
        assert r.get("headings") == [titles[bisect.bisect_right(opens, r["start"]) - 1]]
    guide = "# Guide\n\n" + page
    paths = nlp(guide).spans["attn_segments"].attrs["headings"]
    assert [[1, "Guide"], [PLAIN_DEPTH, "Methods"]] in paths
    assert all(path[0] == [1, "Guide"] for path in paths)
    # read in parts: the first holds two titles, the others one each
    limit = opens[2] + 2
    monkeypatch.setattr(records, "PART_CHARACTERS", limit)
    starts = [a for a, _ in records.text_parts(page, limit)]
    assert starts == [0, opens[2], opens[3]]
    whole = {r["start"]: r.get("headings") for r in got}
    in_parts = list(spacy_attnseg.chunks(nlp, [page]))
    assert [r.get("headings") for r in in_parts if r["start"] in opens] == [[t] for t in titles]
    assert all(r.get("headings") == whole[r["start"]] for r in in_parts if r["start"] in whole)
    monkeypatch.undo()
    for alone in (
        f"Chris\n\n{PIECES[0]}\n\n{PIECES[1]}",
        f"<formula>\n\n{PIECES[0]}\n\nMethods\n\n{PIECES[1]}",
    ):
        assert all("headings" not in r for r in spacy_attnseg.chunks(nlp, [alone])), alone


def test_marked_headings_keep_texttiling_segments_apart() -> None:
    """Under TextTiling a boundary chosen within ``min_sents`` of a marked heading's
    goes: no segment shorter than that beside one."""
    rng = numpy.random.default_rng(0)
    means = rng.normal(size=4) + rng.normal(scale=0.1, size=(10, 4))
    kind = numpy.zeros(10, dtype=bool)
    kind[5] = True
    tiled, _ = topics.segment(means, method="texttiling", headings=kind)
    starts, _ = topics.segment(means, method="texttiling", headings=kind, breaks=kind)
    assert 4 in tiled and starts == [0, 5, 7]
    assert topics.away_from([1, 4, 6, 8], [5], 2) == [1, 8]
    assert topics.away_from([1, 4], [], 2) == [1, 4]


def test_repeat_groups_ignore_case_spacing_and_numbers() -> None:
    texts = [
        "Item 1: check the valve.",
        "item 22:  check the\nvalve.",
        "Item 3: check the valve now!",
        "ITEM 4: CHECK THE VALVE.",
        "Nothing else here.",
    ]
    assert topics.repeat_groups(texts).tolist() == [0, 0, 1, 0, 2]
    # fewer than three copies, or no letters: each text its own group
    assert topics.repeat_groups(texts[:2] + texts[4:] * 2).tolist() == [0, 1, 2, 3]
    assert topics.repeat_groups(["5 .", "2 .", "7 ."]).tolist() == [0, 1, 2]
    assert topics.repeat_groups(texts[:2], min_copies=2).tolist() == [0, 0]
    assert topics.repeat_groups([]).tolist() == []


def test_repeat_groups_join_the_lines_of_a_template() -> None:
    lines = [f"Item {w}: check the valve." for w in ("one", "two", "three")]
    assert topics.repeat_groups(lines).tolist() == [0, 0, 0]
    # two lines of a template are not a pattern; the varying word must be the same one
    assert topics.repeat_groups(lines[:2] + ["Item one: check the pump."]).tolist() == [0, 1, 2]
    # texts of four words that differ in one are not a template, nor are headings with
    # three words of letters among their markup
    short = ["Yes it is true.", "No it is true.", "So it is true."]
    assert topics.repeat_groups(short).tolist() == [0, 1, 2]
    headings = [f"= = = North Korean {w} = = =" for w in ("crossing", "advance", "retreat")]
    assert topics.repeat_groups(headings).tolist() == [0, 1, 2]
    # lines that are one template by two routes form one group
    chained = lines + ["Item three: check the pump.", "Item three: check the hose."]
    assert topics.repeat_groups(chained + ["Other."]).tolist() == [0, 0, 0, 0, 0, 1]


def brute_force_groups(texts: List[str], min_copies: int = 3) -> List[int]:
    """repeat_groups by comparing every pair of texts: exact copies, and texts of at most
    64 words, five or more of them with letters (both texts), equal but at one place,
    each relation counted per place."""
    words = [re.sub(r"\d+", "0", t.lower()).split() for t in texts]
    n = len(words)
    has_letters = [bool(re.search("[a-z]", " ".join(w))) for w in words]
    template = [len([x for x in w if re.search("[a-z]", x)]) >= 5 and len(w) <= 64 for w in words]
    label = list(range(n))

    def join(i: int, j: int) -> None:
        old, new = label[j], label[i]
        for k in range(n):
            if label[k] == old:
                label[k] = new

    for i in range(n):
        if not has_letters[i]:
            continue
        same = [k for k in range(n) if words[k] == words[i]]
        if len(same) >= min_copies:
            for k in same:
                join(i, k)
        if not template[i]:
            continue
        for place in range(len(words[i])):
            rest = words[i][:place] + words[i][place + 1 :]
            near = [
                k
                for k in range(n)
                if template[k]
                and len(words[k]) == len(words[i])
                and words[k][:place] + words[k][place + 1 :] == rest
            ]
            if len(near) >= min_copies:
                for k in near:
                    join(i, k)
    first: Dict[int, int] = {}
    return [first.setdefault(label[i], len(first)) for i in range(n)]


NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def vary(base: str, place: int, word: str) -> str:
    """``base`` with its word at ``place`` replaced by ``word`` (unchanged out of range)."""
    words = base.split()
    if 0 <= place < len(words):
        words[place] = word
    return " ".join(words)


# lines of templates of four to six words, some without letters, with one word varied
TEMPLATE_LINES = st.builds(
    vary,
    st.sampled_from(["a b c d", "a b c d e", "A b C d e", "p q r s t u", "1 2 3 4 5"]),
    st.integers(-1, 5),
    st.sampled_from(["a", "Q", "r", "7", "88"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEMPLATE_LINES, max_size=9))
def test_repeat_groups_match_pairwise_comparison(texts: List[str]) -> None:
    assert topics.repeat_groups(texts).tolist() == brute_force_groups(texts)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.one_of(TEMPLATE_LINES, st.sampled_from(["a b", "A  b", "b", "1 ."])), max_size=9),
    st.integers(0, 2**32 - 1),
)
def test_tie_repeats_gives_each_text_the_mean_of_its_group(texts: List[str], seed: int) -> None:
    means = numpy.random.default_rng(seed).normal(size=(len(texts), 3)).astype("float32")
    tied = topics.tie_repeats(means, topics.repeat_groups(texts))
    groups = brute_force_groups(texts)
    for i, group in enumerate(groups):
        members = [j for j, other in enumerate(groups) if other == group]
        assert numpy.allclose(tied[i], means[members].mean(axis=0), atol=1e-6)


def test_repeated_headers_stand_above_their_text() -> None:
    """``topics.repeated_headers``: a repeated line of its own over the rest of its
    paragraph is a header where every copy on a line of its own stands so (a copy run
    into its text does not count); a signature whose last copy ends the text is none.
    Without paragraphs, the lines of two texts or more that take turns above a line of
    text each are headers (a chat's names and times), not those of one text, texts that
    follow one another (a list) or texts that end with closing punctuation."""
    # header, text, text | header, text | header run into its text, text | header, text
    groups = [0, 1, 2, 0, 3, 0, 4, 0, 5]
    own = [1, 0, 1, 1, 1, 0, 1, 1, 1]
    first = [1, 0, 0, 1, 0, 1, 0, 1, 0]
    below = [1, 0, 1, 1, 1, 0, 1, 1, 0]
    ended = [0, 1, 1, 0, 1, 1, 1, 0, 1]
    assert topics.repeated_headers(groups, own, first, below, ended).tolist() == [
        True, False, False, True, False, False, False, True, False
    ]  # fmt: skip
    # a signature above the next mail's text, and again at the text's end
    groups, own, first, below = [0, 1, 2, 1], [1, 1, 1, 1], [1, 1, 0, 1], [1, 1, 1, 0]
    assert not topics.repeated_headers(groups, own, first, below, [1, 0, 1, 0]).any()
    assert topics.repeated_headers([], [], [], [], []).tolist() == []
    # one paragraph: two names in turn above their messages; one name; a list's runs
    own, first, below = [1] * 8, [1] + [0] * 7, [1] * 7 + [0]
    chat, ended = [0, 1, 2, 3, 0, 4, 2, 5], [0, 1, 0, 1, 0, 1, 0, 1]
    heads = [True, False, True, False, True, False, True, False]
    assert topics.repeated_headers(chat, own, first, below, ended).tolist() == heads
    assert not topics.repeated_headers([0, 1, 0, 3, 0, 4, 0, 5], own, first, below, ended).any()
    assert not topics.repeated_headers([0, 1, 0, 3, 2, 4, 2, 5], own, first, below, ended).any()
    assert not topics.repeated_headers(chat, own, first, below, [1] * 8).any()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), *[st.booleans()] * 3), max_size=12))
def test_repeated_headers_match_their_definition(
    rows: List[Tuple[int, bool, bool, bool]],
) -> None:
    groups = [g for g, _, _, _ in rows]
    own = [o for _, o, _, _ in rows]
    first = [f for _, _, f, _ in rows]
    ended = [e for _, _, _, e in rows]
    n = len(rows)
    below = [k + 1 < n and own[k + 1] for k in range(n)]

    def headers(over: Callable[[int], bool]) -> List[bool]:
        return [
            over(k)
            and groups.count(groups[k]) > 1
            and all(over(j) for j in range(n) if groups[j] == groups[k] and own[j])
            for k in range(n)
        ]

    paragraph = headers(lambda k: own[k] and first[k] and k + 1 < n and not first[k + 1])
    lined = headers(lambda k: own[k] and below[k] and not ended[k])
    order = [groups[k] for k in range(n) if lined[k]]
    turns = sum(a != b for a, b in zip(order, order[1:], strict=False))
    taken = len(set(order)) >= 2 and turns >= len(set(order))
    expected = [p or (taken and q) for p, q in zip(paragraph, lined, strict=True)]
    dense = numpy.unique(groups, return_inverse=True)[1] if n else []
    assert topics.repeated_headers(dense, own, first, below, ended).tolist() == expected


@pytest.mark.parametrize(
    "text",
    [
        "The cat sat on the mat. " * 60,
        " ".join(f"Item {k}: check the valve and record the pressure." for k in range(1, 41)),
        "\n\n".join(["We met at noon. The meeting ran long. Nobody took notes."] * 15),
        " ".join(f"Item {w}: check the valve and record the pressure." for w in NUMBER_WORDS * 4),
    ],
    ids=["one sentence", "numbered list", "one paragraph", "template"],
)
def test_text_that_repeats_itself_is_one_segment(default_nlp: Any, text: str) -> None:
    """Copies of a sentence differ only in where they stand in the model's windows; they
    share one vector, and a text of copies has no topic change."""
    doc = default_nlp(text)
    assert len(list(doc.sents)) >= 15
    assert [(span.start, span.end) for span in doc.spans["attn_segments"]] == [(0, len(doc))]


@pytest.mark.parametrize(
    "text",
    [
        "42 " * 600,
        "- " * 600,
        "12:30 " * 300,
        " ".join(f"{k * 7.31 % 100:.2f}" for k in range(600)),
        " ".join(f"{k * 2654435761 % 2**32:08x}" for k in range(1, 301)),
    ],
    ids=["one number", "one mark", "one time", "numbers", "hex codes"],
)
def test_a_long_sentence_without_words_is_one_segment(default_nlp: Any, text: str) -> None:
    """Numbers, marks or codes in a run that the pipeline reads as one sentence are one
    unit, not pieces: the pieces' vectors would differ only by where they stand in the
    model's windows (these texts were 17-31 segments when they were cut). The same
    sentence between two paragraphs of prose stays whole too."""
    doc = default_nlp(text)
    assert len(list(doc.sents)) == 1
    assert [(span.start, span.end) for span in doc.spans["attn_segments"]] == [(0, len(doc))]
    prose = "\n\n".join([PIECES[0], text, " ".join(PIECES[1:])])
    doc = default_nlp(prose)
    run = doc.char_span(prose.index(text), prose.index(text) + len(text.rstrip()))
    assert run is not None
    starts = [span.start for span in doc.spans["attn_segments"]]
    assert not any(run.start < start < run.end for start in starts)


@pytest.mark.parametrize(
    "first, second",
    [
        ("The cat sat on the mat. ", "Interest rates rose again in March. "),
        ("Item {}: check the valve and record the pressure. ", "The {} family moved to Lisbon. "),
    ],
    ids=["copies", "templates"],
)
def test_two_repeated_sentences_split_where_the_second_begins(
    default_nlp: Any, first: str, second: str
) -> None:
    words = NUMBER_WORDS * 2
    text = "".join(first.format(w) for w in words) + "".join(second.format(w) for w in words)
    doc = default_nlp(text)
    sents = list(doc.sents)
    assert len(sents) == 40
    group = doc.spans["attn_segments"]
    assert [span.start for span in group] == [0, sents[20].start]
    assert group.attrs["scores"][1] > 1  # the boundary pays for itself


@pytest.mark.parametrize("method", ["partition", "texttiling"])
def test_n_segments_gives_that_many_segments(method: str) -> None:
    """``n_segments`` through the default pipeline: one segment when one is asked for
    (TextTiling gave two), and three pieces of four sentences each cut within one
    sentence of where they meet."""
    text = " ".join(PIECES)
    for n, near in ((1, [0]), (3, [0, 4, 8])):
        overrides = {
            "components.attn_segmenter.n_segments": n,
            "components.attn_segmenter.segment_method": method,
        }
        doc = load_pipeline(overrides=overrides)(text)
        sent_starts = [sent.start for sent in doc.sents]
        assert len(sent_starts) == 12
        found = [sent_starts.index(span.start) for span in doc.spans["attn_segments"]]
        assert len(found) == n
        assert all(abs(a - b) <= 1 for a, b in zip(found, near, strict=True)), found


def test_max_tokens_caps_every_segment(minilm_nlp: Any) -> None:

    nlp = load_pipeline("attention", overrides={"components.attn_segmenter.max_tokens": 24})
    doc = nlp(" ".join(PIECES) + " " + "word " * 60)
    sizes = doc_wordpiece_counts(doc)
    for span in doc.spans["attn_segments"]:
        assert sizes.span(span.start, span.end) <= 24 or len(span) == 1


def test_max_tokens_counts_a_shared_wordpiece_once() -> None:
    """A run of emoji is one ``[UNK]`` wordpiece to the model but a token per emoji to
    spaCy: under ``max_tokens`` it stays one segment, and a text of many such runs is cut
    only as its wordpieces need."""
    nlp = load_pipeline("attention", overrides={"components.attn_segmenter.max_tokens": 24})
    tokenizer = nlp.get_pipe("transformer").model.tokenizer
    doc = nlp("😂" * 200)
    assert len(doc) == 200 and len(doc.spans["attn_segments"]) == 1
    # 12 wordpieces a sentence to the model (19 if each token counted all it touches),
    # so two sentences fit in each segment
    sentence = "I don't know 😂😂😂😂😂😂 and they're here."
    assert len(tokenizer.tokenize(sentence)) == 12
    doc = nlp(" ".join([sentence] * 12))
    spans = list(doc.spans["attn_segments"])
    assert [len(tokenizer.tokenize(span.text)) for span in spans] == [24] * 6


def test_text_without_punctuation_is_segmented_in_pieces(minilm_nlp: Any) -> None:
    """The attention pipeline's sentences come from punctuation, so WikiText pieces
    lowercased without punctuation are one sentence; the segmenter reads it in pieces of
    at most ``piece_tokens`` wordpieces and finds the changes between the pieces (Pk
    against the reference, ``paper.segmentation_metrics``), where without the pieces the
    document is one segment."""
    from paper.topic_eval import score, spoken, token_starts, wikipieces_docs

    document = wikipieces_docs("tune", 1, spoken)[0]
    doc = minilm_nlp(document.text)
    assert len(list(doc.sents)) == 1
    # the pieces, each as long as the cap allows (16 wordpieces, the default)
    # (a piece that starts inside a wordpiece, after "did" of "didn't", reads it too)
    sizes = doc_wordpiece_counts(doc)
    piece_starts, total = [0], int(sizes.inside[0])
    for i, size in enumerate(sizes.counts.tolist()):
        if total + size > topics.PIECE and total > sizes.inside[piece_starts[-1]]:
            piece_starts.append(i)
            total = int(sizes.inside[i])
        total += size
    starts = [span.start for span in doc.spans["attn_segments"]]
    assert len(starts) > 5 and set(starts) <= set(piece_starts)
    reference = token_starts(doc, document.starts)
    assert score(doc, reference, starts)["pk"] < 0.2
    assert score(doc, reference, [0])["pk"] > 0.4  # one segment
    whole = load_pipeline(
        "attention", overrides={"components.attn_segmenter.long_sentence_tokens": 0}
    )
    one = whole(document.text)
    assert [span.start for span in one.spans["attn_segments"]] == [0]


def minilm_tokenizer() -> Any:
    from conftest import minilm_vocab_file
    from transformers import BertTokenizerFast

    return BertTokenizerFast(str(minilm_vocab_file()), do_lower_case=True)


@pytest.mark.parametrize("max_tokens", [0, 2, 7, 64])
def test_chunk_sizer_cuts_at_wordpieces(max_tokens: int) -> None:
    from spacy_attnseg.records import ChunkSizer

    tokenizer = minilm_tokenizer()
    text = "Supercalifragilistic words: " + "a.b." * 50 + " and " + "x" * 300 + " end."
    pieces = ChunkSizer(tokenizer, max_tokens).pieces(text)
    assert [a for a, _, _ in pieces] == [0] + [b for _, b, _ in pieces[:-1]]
    assert pieces[-1][1] == len(text)
    for a, b, n in pieces:
        assert n == len(tokenizer.tokenize(text[a:b])), text[a:b]
        assert max_tokens == 0 or n <= max_tokens
    assert sum(n for _, _, n in pieces) == len(tokenizer.tokenize(text))
    if max_tokens == 0:
        assert len(pieces) == 1


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(st.sampled_from("abcRzqxy+/=0189 .éü"), min_size=1, max_size=60),
    max_tokens=st.integers(1, 4),
)
def test_chunk_sizer_keeps_every_piece_within_max_tokens(text: str, max_tokens: int) -> None:
    """Whatever the text (random letters, base64's characters, accents), the pieces
    cover it in order and each reads as at most ``max_tokens`` wordpieces on its own,
    down to ``max_tokens`` 1, where a wordpiece that reads as two alone (``"Rz"``: before,
    it stayed a piece of 2) is cut between its characters."""
    from spacy_attnseg.records import ChunkSizer

    tokenizer = minilm_tokenizer()
    pieces = ChunkSizer(tokenizer, max_tokens).pieces(text)
    assert [a for a, _, _ in pieces] == [0] + [b for _, b, _ in pieces[:-1]]
    assert pieces[-1][1] == len(text)
    for a, b, n in pieces:
        assert n == len(tokenizer.tokenize(text[a:b])) <= max_tokens, text[a:b]


@settings(max_examples=60, deadline=None)
@given(
    sentences=st.lists(
        st.lists(st.sampled_from(["the", "river", "supercalifragilistic", "runs", "x" * 40]))
        .map(" ".join)
        .map(lambda s: s + ". "),
        min_size=1,
        max_size=12,
    ),
    max_tokens=st.integers(3, 24),
    shut=st.lists(st.booleans(), max_size=12),
)
def test_chunk_sizer_cuts_at_sentence_starts(
    sentences: List[str], max_tokens: int, shut: List[bool]
) -> None:
    """Over ``max_tokens``, a text is cut at its sentences' starts: each piece holds as
    many whole sentences as fit (the next would not), and only a sentence over
    ``max_tokens`` by itself is cut inside, into pieces that each fit. A piece ends
    before a closing sentence (a sign-off) only where no other start inside it could
    end it; otherwise it ends at the last start that is not one (the sentences up to
    the next such start would not fit)."""
    from spacy_attnseg.records import ChunkSizer

    tokenizer = minilm_tokenizer()
    text = "".join(sentences)
    starts = [sum(map(len, sentences[:i])) for i in range(len(sentences))]
    closing = {s for s, flag in zip(starts[1:], shut, strict=False) if flag}
    cuts = [s for s in starts if s not in closing] + [len(text)]
    ends = starts[1:] + [len(text)]
    pieces = ChunkSizer(tokenizer, max_tokens).pieces(text, starts, closing)
    assert [a for a, _, _ in pieces] == [0] + [b for _, b, _ in pieces[:-1]]
    assert pieces[-1][1] == len(text)
    count = lambda a, b: len(tokenizer.tokenize(text[a:b]))  # noqa: E731
    for a, b, n in pieces:
        assert n == count(a, b) <= max_tokens
        if a not in starts:  # (a piece of a sentence over max_tokens by itself)
            k = max(i for i, s in enumerate(starts) if s < a)
            assert count(starts[k], ends[k]) > max_tokens and b <= ends[k]
        elif b in closing:
            assert not any(a < s < b for s in cuts)
        elif b in starts:
            # (the sentences up to the next start that may end a piece would not fit)
            assert count(a, min(c for c in cuts if c > b)) > max_tokens


def test_chunks_count_and_cut_in_another_tokenizer(tiny_model_dir: Any, tmp_path: Any) -> None:
    """With the tokenizer of another model (the embedding model's: here a byte-level BPE
    of 600 tokens, which reads more tokens than MiniLM's), every chunk's ``n_tokens``
    is that tokenizer's count of its text alone, at most ``max_tokens``; chunks it
    reads as more are cut again at sentence starts; the chunks join to the text; the
    command line writes the same; a folder without a tokenizer is E136."""
    from transformers import AutoTokenizer

    import spacy_attnseg

    folder = tiny_model_dir("roberta")
    nlp = spacy_attnseg.load_pipeline(overrides={"components.attn_segmenter.max_tokens": 128})
    text = (DATA / "wikipedia" / "three_leads.txt").read_text(encoding="utf8")
    records = list(spacy_attnseg.chunks(nlp, [text], tokenizer=str(folder)))
    stock = list(spacy_attnseg.chunks(nlp, [text]))
    other = AutoTokenizer.from_pretrained(str(folder))
    assert "".join(r["text"] for r in records) == text
    for r in records:
        assert r["n_tokens"] == len(other.tokenize(r["text"])) <= 128, r["text"]
    assert any(len(other.tokenize(r["text"])) > 128 for r in stock)  # (so it had to cut)
    assert len(records) > len(stock)
    # a chunk starts inside a sentence only where that sentence alone reads as more
    starts = [sent.start_char for sent in nlp(text).sents]
    ends = starts[1:] + [len(text)]
    inside = [r["start"] for r in records if r["start"] not in starts]
    for start in inside:
        k = max(i for i, s in enumerate(starts) if s < start)
        assert len(other.tokenize(text[starts[k] : ends[k]])) > 128
    assert len(inside) < len(records) / 2
    path = tmp_path / "leads.txt"
    path.write_text(text, encoding="utf8")
    result = run_cli(["chunk", str(path), "--max-tokens", "128", "--tokenizer", str(folder), "-q"])
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == records
    # the pipeline's own model named as the tokenizer: the stock chunks
    own = spacy_attnseg.embedded_model_path()
    assert list(spacy_attnseg.chunks(nlp, [text], tokenizer=str(own))) == stock
    missing = tmp_path / "no-tokenizer"
    missing.mkdir()
    with pytest.raises(ValueError, match=r"\[E136\] Cannot count chunks with the tokenizer"):
        spacy_attnseg.chunks(nlp, [text], tokenizer=str(missing))
    for name, reason in ((str(path), "it is a file"), (str(tmp_path / "gone"), "no such folder")):
        with pytest.raises(ValueError, match=f"E136.*: {reason}"):
            spacy_attnseg.chunks(nlp, [text], tokenizer=name)
    # a path as a path (one that is missing stopped with an AttributeError), None as ""
    assert list(spacy_attnseg.chunks(nlp, [text], tokenizer=Path(own))) == stock
    assert list(spacy_attnseg.chunks(nlp, [text], tokenizer=None)) == stock
    for gone in (tmp_path / "gone", Path("gone") / "tokenizer"):
        with pytest.raises(ValueError, match=r"^\[E136\] Cannot count chunks with the tokenizer"):
            spacy_attnseg.chunks(nlp, [text], tokenizer=gone)
    with pytest.raises(TypeError, match=r"^\[E136\] .* 5: it is int, not the text or path"):
        spacy_attnseg.chunks(nlp, [text], tokenizer=5)  # type: ignore[arg-type]
    result = run_cli(["chunk", str(path), "--tokenizer", str(missing), "-q"])
    assert result.returncode == 2 and "[E136]" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_chunk_cut_again_keeps_the_sign_off_with_the_text_above(default_nlp: Any) -> None:
    """Cut again for another tokenizer's ``max_tokens``, a letter's chunks never start at
    its sign-off (``"Best regards,"``, the name and title below it), which closes the
    text above: before, some limits (23-25, 41-43 here) put it in a piece of its own."""
    from spacy_attnseg.records import ChunkSizer, chunk_records, closing_offsets

    text = (
        "Hi Anna,\n\nThe shipment left the warehouse on Monday. It should reach you by "
        "Friday. The invoice is attached, and payment is due in thirty days. Let me know "
        "if anything is missing.\n\nBest regards,\nTom Baker\nSales Manager\n"
    )
    doc = default_nlp(text)
    sign_off = {text.index(line) for line in ("Best regards,", "Tom Baker", "Sales Manager")}
    assert closing_offsets(doc) == sign_off
    tokenizer = minilm_tokenizer()
    for max_tokens in range(15, 49):
        records = chunk_records(doc, 0, "attn_segments", ChunkSizer(tokenizer, max_tokens))
        assert "".join(r["text"] for r in records) == text
        assert all(len(tokenizer.tokenize(r["text"])) <= max_tokens for r in records)
        assert not sign_off & {r["start"] for r in records}, max_tokens


def test_chunk_counts_fit_a_stock_tokenizer_and_the_pass() -> None:
    """A form feed (a PDF's page break) between two words is a space to the pass and
    nothing to a stock BERT tokenizer, which joins the words (``"the\x0cruns"``:
    ``"the"``, ``"##run"``, ``"##s"``, against ``"the"``, ``"runs"``). A chunk's
    ``n_tokens`` is the larger of the two readings, so it fits an embedding model that
    reads it either way, and the count is the same before the pipeline's first pass
    (which makes its tokenizer read the form feed as a space) and after it."""
    import spacy_attnseg
    from spacy_attnseg.capture import read_spaces_as_spaces
    from spacy_attnseg.records import chunk_sizer

    stock, spaces = minilm_tokenizer(), minilm_tokenizer()
    read_spaces_as_spaces(spaces)
    text = " ".join(f"The\x0cruns past river\x0ccorn number {i}." for i in range(30))
    blob = "Then\x0c" + "x" * 300 + " ends."  # one [UNK] joined, "then" and [UNK] apart
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": 24})
    sizer = chunk_sizer(nlp)
    assert sizer is not None
    first = [sizer.count(text), sizer.count(blob)]  # before any pass
    chunks = list(spacy_attnseg.chunks(nlp, [text, blob]))
    assert (
        [sizer.count(text), sizer.count(blob)]
        == first
        == [max(len(stock.tokenize(t)), len(spaces.tokenize(t))) for t in (text, blob)]
    )
    assert "".join(c["text"] for c in chunks) == text + blob
    readings = [(len(stock.tokenize(c["text"])), len(spaces.tokenize(c["text"]))) for c in chunks]
    assert [c["n_tokens"] for c in chunks] == [max(r) for r in readings]
    assert all(c["n_tokens"] <= 24 for c in chunks)
    # the two readings differ both ways among these chunks (the blob's: 1 and 2)
    assert any(a > b for a, b in readings) and any(a < b for a, b in readings)


def test_chunk_cli(tmp_path: Any) -> None:
    """Chunks cover each text, and each holds at most --max-tokens wordpieces, also where
    one token is longer than that (cut at wordpieces) or than the model reads (counted
    again)."""
    blob = "See " + "a.b." * 400 + " and then more words here."
    texts = [" ".join(PIECES), "", "One short text.", blob]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts), encoding="utf8")
    result = run_cli(["chunk", str(path), "--max-tokens", "40", "--min-sents", "1", "-q"])
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in result.stdout.splitlines()]
    for number, text in enumerate(texts):
        chunks = [r for r in records if r["doc"] == number]
        assert "".join(r["text"] for r in chunks) == text
        assert [r["chunk"] for r in chunks] == list(range(len(chunks)))
        for r in chunks:
            assert text[r["start"] : r["end"]] == r["text"]
            assert 0 < r["n_tokens"] <= 40
    assert len([r for r in records if r["doc"] == 0]) >= 3
    blob_chunks = [r for r in records if r["doc"] == 3]
    # 1,600 wordpieces in one token: the model read 510 of them
    n_blob = len(minilm_tokenizer().tokenize(blob))
    assert sum(r["n_tokens"] for r in blob_chunks) == n_blob > 1600
    # a boundary that costs more than any topic change removes: one chunk per document
    result = run_cli(["chunk", str(path), "--max-tokens", "0", "--penalty", "1000", "-q"])
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["doc"] for r in records] == [0, 2, 3]  # (the empty text has no chunk)
    assert [r["score"] for r in records] == [0.0, 0.0, 0.0]
    assert records[-1]["text"] == blob and records[-1]["n_tokens"] == n_blob


def test_chunks_in_python() -> None:
    """``spacy_attnseg.chunks`` gives the chunk records in Python: they join to each text,
    hold at most ``max_tokens`` wordpieces as the model's tokenizer counts their text, and
    carry a pair's meta; a pipeline without topic segments is refused (E016)."""
    import spacy_attnseg
    from spacy_attnseg.records import pipe_records

    nlp = spacy_attnseg.load_pipeline(overrides={"components.attn_segmenter.max_tokens": 48})
    texts = [" ".join(PIECES), "One short text."]
    records = list(spacy_attnseg.chunks(nlp, [(texts[0], {"id": "p"}), texts[1]]))
    tokenizer = minilm_tokenizer()
    for number, text in enumerate(texts):
        mine = [r for r in records if r["doc"] == number]
        assert "".join(r["text"] for r in mine) == text
        for r in mine:
            assert r["n_tokens"] == len(tokenizer.tokenize(r["text"])) <= 48
            assert r.get("meta") == ({"id": "p"} if number == 0 else None)
    assert len([r for r in records if r["doc"] == 0]) >= 3
    bare = spacy.blank("en")
    with pytest.raises(ValueError, match=r"\[E016\]"):
        spacy_attnseg.chunks(bare, texts)
    with pytest.raises(TypeError, match=r"^\[E118\] chunks\(\) takes an iterable of texts"):
        spacy_attnseg.chunks(nlp, texts[1])
    # an item that is no text stops with E130, which names it (before: a TypeError of
    # len(), or spaCy reading bytes as a serialized Doc)
    for bad in (None, 5, b"One. Two.", ("One.", "meta"), ("One.",)):
        error = re.escape(f"[E130] Item 1 (from 0) of the texts is {bad!r}:")
        with pytest.raises(TypeError, match=error):
            list(spacy_attnseg.chunks(nlp, ["Fine.", bad]))
    # a lone surrogate (a JSON escape) stops with E128, which names the item and the
    # character, for chunks and sentence records alike (before: a TypeError deep in the
    # tokenizer that sizes a document's parts)
    bad = "Fine. A \udc80 half."
    error = re.escape("[E128] The text of item 1 (from 0) holds \\udc80 at character 8,")
    for kind in ("chunks", "sentences"):
        with pytest.raises(ValueError, match=error):
            list(pipe_records(nlp, ["Fine.", (bad, {"id": 1})], kind, batch_size=2))
    # a batch size that is no int of at least 1 stops with E113, as --batch-size does
    # (before: a TypeError in a comparison for a text, and one document a batch for 0)
    for size in (0, "8", 2.5, numpy.int64(2)):
        error = re.escape(f"[E113] batch_size cannot be {size!r}: use a Python int of")
        with pytest.raises(ValueError, match=error):
            list(spacy_attnseg.chunks(nlp, ["Fine. Two.", "Three. Four."], batch_size=size))


def test_a_long_document_is_chunked_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document longer than ``PART_CHARACTERS`` is read in parts that end at its
    paragraph breaks (``text_parts``), each a Doc of its own: its chunks are those that
    each part gives alone, with offsets into the whole text and numbers running on, and
    they join to the text; so a document longer than ``nlp.max_length`` is chunked too
    (spaCy's E088 before)."""
    import spacy_attnseg
    from spacy_attnseg import records

    nlp = spacy_attnseg.load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    text = "\n\n".join(PIECES * 4)
    monkeypatch.setattr(records, "PART_CHARACTERS", 700)
    nlp.max_length = 900
    assert len(text) > 2 * nlp.max_length
    got = [r for r in spacy_attnseg.chunks(nlp, ["Short.", (text, {"id": 7})]) if r["doc"] == 1]
    parts = records.text_parts(text, 700)
    assert len(parts) == 3 and all(b - a <= 700 for a, b in parts)
    assert all(text[a:b].endswith("\n\n") for a, b in parts[:-1])
    want = []
    for a, b in parts:
        for r in spacy_attnseg.chunks(nlp, [text[a:b]]):
            want.append({**r, "doc": 1, "start": r["start"] + a, "end": r["end"] + a})
    assert [r["chunk"] for r in got] == list(range(len(got)))
    # (scores as a Doc alone and in a batch give them: the same to 1e-5)
    assert [{k: v for k, v in r.items() if k not in ("chunk", "meta", "score")} for r in got] == [
        {k: v for k, v in r.items() if k not in ("chunk", "score")} for r in want
    ]
    assert [r["score"] for r in got] == pytest.approx([r["score"] for r in want], abs=1e-5)
    assert all(text[r["start"] : r["end"]] == r["text"] and r["meta"] == {"id": 7} for r in got)
    assert "".join(r["text"] for r in got) == text
    # parts no longer than nlp.max_length where that is the lower bound
    nlp.max_length = 500
    parts = records.text_parts(text, 500)
    got = list(spacy_attnseg.chunks(nlp, [text]))
    assert "".join(r["text"] for r in got) == text
    assert {r["start"] for r in got} >= {a for a, _ in parts}


@pytest.mark.parametrize("joiner", ["\n\n", "\n"])
@pytest.mark.parametrize(
    "heading", ["## Install", "Install\n-------", "<h2>Install</h2>", "Install", "Steps:"]
)
def test_a_part_ends_before_a_heading_not_after_it(heading: str, joiner: str) -> None:
    """A long document's part ends at a blank line (or, in text without blank lines, a
    line break) after a sentence's end where its second half has one, so a heading (or
    a line that leads into what follows) starts the next part with its section instead
    of ending this one."""
    from spacy_attnseg.records import text_parts

    prose = "The valve was closed before the test. Pressure held for an hour."
    text = joiner.join([prose, prose, heading, prose, prose])
    before = text.index(heading)
    assert [a for a, _ in text_parts(text, before + len(heading) + 5)] == [0, before]


@pytest.mark.parametrize("sign_off", ["Best regards,\nTom Baker", "Cheers\n\nChris", "-- Kay"])
def test_a_part_does_not_open_with_a_sign_off(sign_off: str) -> None:
    """Of a long thread of e-mails, no part opens with a message's sign-off (the
    valediction, or the name below it in a paragraph of its own), which would open the
    next part's first chunk instead of closing its message: the part ends at another
    paragraph break of its second half. Before, 81-84 of these 93 limits ended a part
    right above one: the last blank line after a sentence's end is the one above the
    sign-off in every message."""
    from spacy_attnseg.records import text_parts

    mail = "\n\n".join(
        [
            "Hi Bob,",
            "The valve was closed before the test. Pressure held for an hour at the rated load.",
            "The report goes out on Friday. Let me know if you need the raw readings too.",
            sign_off,
            "",
        ]
    )
    text = mail * 12
    lines = {a for a in range(1, len(text)) if text[a - 1] == "\n"}
    closing = {a for a in lines if text[a:].startswith(tuple(sign_off.split("\n\n")))}
    closing |= {a for a in lines if text[a:].startswith("Chris")}
    assert len(closing) == 12 * len(sign_off.split("\n\n"))
    for limit in range(300, 1500, 13):
        parts = text_parts(text, limit)
        assert [b for _, b in parts[:-1]] == [a for a, _ in parts[1:]]
        assert not closing & {a for a, _ in parts}, limit


def test_a_part_does_not_open_inside_a_code_block() -> None:
    """Where the second half of a part holds the end of a prose paragraph before a
    fenced (or reStructuredText literal) code block, the part ends there and not at a
    place of the same kind inside the block: the next part would read the block's
    ``# comment`` lines as headings and its closing fence as an opening one. Inside a
    block longer than a part, a part still ends at a line break there."""
    from spacy_attnseg.records import text_parts

    prose = "The valve was closed before the test. Pressure held for an hour."
    code = "\n\n".join(['# check the valve\nprint("closed.")'] * 6)
    indented = "    " + code.replace("\n", "\n    ").replace("\n    \n", "\n\n")
    fenced = ("```python\n", "```python\n" + code + "\n```")
    literal = ("Run it::\n\n", "Run it::\n\n" + indented)  # (lines indented under "::")
    for opening, block in (fenced, literal):
        text = "\n\n".join([prose] * 5 + [block, prose])
        start = text.index(opening)
        limit = start + len(block) - 10  # (the block's start in the part's second half)
        assert limit // 2 < start and len(text) > limit
        assert [a for a, _ in text_parts(text, limit)][:2] == [0, start], opening
    long_block = "```\n" + "\n\n".join([code] * 3) + "\n```"
    parts = text_parts(long_block, 100)
    assert len(parts) > 3 and all(long_block[b - 1] == "\n" for _, b in parts[:-1])


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    text=st.lists(
        st.sampled_from(["word", "Word.", " ", "\n", "\n\n", "\n \n", '!" ', "x" * 30]),
        max_size=80,
    ).map("".join),
    limit=st.integers(4, 60),
)
def test_text_parts_cover_the_text_and_end_where_they_may(text: str, limit: int) -> None:
    """Parts cover the text in order, each of at most ``limit`` characters; each but the
    last ends where the best kind of end (``PART_ENDS``) found in its second half ends
    (these texts hold no sign-off, which a part's end avoids)."""
    from spacy_attnseg.records import PART_ENDS, text_parts

    parts = text_parts(text, limit)
    assert parts[0][0] == 0 and parts[-1][1] == len(text)
    assert all(b == c for (_, b), (c, _) in zip(parts[:-1], parts[1:], strict=True))
    assert all(0 < b - a <= limit for a, b in parts) or text == ""
    for a, b in parts[:-1]:
        ends = [
            [m.end() for m in pattern.finditer(text, a + limit // 2, a + limit)]
            for pattern in PART_ENDS
        ]
        best = next((found for found in ends if found), [a + limit])
        assert b == best[-1]


@settings(max_examples=200, derandomize=True, deadline=None)
@given(
    text=st.lists(st.sampled_from(["word", "Word.", " ", "\n\n", "字字", "a/a/"]), max_size=80).map(
        "".join
    ),
    characters=st.integers(1, 60),
    limit=st.integers(1, 80),
)
def test_document_parts_keep_each_part_within_its_size(
    text: str, characters: int, limit: int
) -> None:
    """Parts cover the text in order, each of at most ``characters`` characters and, but
    for a part of one character, at most ``limit`` in size, with its size; where no
    character weighs more than one, they are ``text_parts``'s."""
    from spacy_attnseg.records import document_parts, text_parts

    def size(part: str) -> int:  # "字" as four, as a dense wordpiece per character
        return len(part) + 3 * part.count("字")

    parts = document_parts(text, characters, limit, size)
    assert parts[0][0] == 0 and parts[-1][1] == len(text)
    assert all(b == c for (_, b, _), (c, _, _) in zip(parts[:-1], parts[1:], strict=True))
    assert all(n == size(text[a:b]) for a, b, n in parts)
    assert all(b - a <= characters and (n <= limit or b - a == 1) for a, b, n in parts if text)
    if "字" not in text and characters <= limit:
        assert [(a, b) for a, b, _ in parts] == text_parts(text, characters)


def test_text_dense_in_wordpieces_is_chunked_in_shorter_parts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text of about one wordpiece per character (a URL, CJK) is read in parts of at
    most ``PART_CHARACTERS / CHARACTERS_PER_WORDPIECE`` wordpieces, counted by the
    model's tokenizer, so fewer characters than prose; its batches hold as many at
    most; and its chunks still join to the text, each of at most ``max_tokens``."""
    import spacy_attnseg
    from spacy_attnseg import records

    nlp = spacy_attnseg.load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    tokenizer = nlp.get_pipe("transformer").model.tokenizer
    prose = "\n\n".join(PIECES[:2])
    dense = "http://example.com/" + "a/b" * 300 + " \u4e2d\u6587\u5b57" * 120
    monkeypatch.setattr(records, "PART_CHARACTERS", 700)
    monkeypatch.setattr(records, "BATCH_CHARACTERS", 700)
    seen: List[List[str]] = []
    pipe = nlp.pipe

    def counted(items: Any, **kwargs: Any) -> Any:
        if kwargs.get("as_tuples"):
            seen.append([text for text, _ in items])
        return pipe(items, **kwargs)

    monkeypatch.setattr(nlp, "pipe", counted)
    got = list(spacy_attnseg.chunks(nlp, [prose, dense]))
    for number, text in enumerate([prose, dense]):
        mine = [r for r in got if r["doc"] == number]
        assert "".join(r["text"] for r in mine) == text
        assert all(0 < r["n_tokens"] <= 64 for r in mine)
    parts = [part for batch in seen for part in batch]
    assert "".join(parts) == prose + dense
    wordpieces = [len(tokenizer.tokenize(part)) for part in parts]
    # the prose in parts by characters (it has fewer wordpieces than 700 / 4), the
    # dense text in more and shorter parts, each of at most 700 / 4 wordpieces
    assert all(len(part) <= 700 and 4 * n <= 700 for part, n in zip(parts, wordpieces, strict=True))
    assert len(dense) < 2 * 700 and len(parts) - len(records.text_parts(prose, 700)) >= 4
    for batch in seen:
        sizes = [max(len(part), 4 * len(tokenizer.tokenize(part))) for part in batch]
        assert len(batch) == 1 or sum(sizes) <= 700


# texts the tokenizer reads as more wordpieces in pieces than in the pass (control
# characters it drops join the letters around them; found by a property search)
TOKENIZER_HOSTILE = [
    "\x15\xffLhttp://example.com/a?b=c&d=e is a link\n\n\n--- \n \xda\u2028line sep\u2029"
    "para sep\n\n\U000bf75a\x96\xbd\xacY\x1f\xcf\xacThe river runs past an old mill.\n\n"
    "\U000d0561",
    "\xa9\xb2\xf0\U00031d0cm\x8e\U0001d518\U0001d52b\U0001d526 \U0001d52a\n\n\n\n\n"
    "\U00039b60?ra\xe3%\U0001e914\x00\x85\xba\xd3\U0002b30b\xd2O\x08\xe2K\U000c7ebcodef f(x):\n"
    "    return x * 2  3.14159 2.71828\n\n\n\n\n\xc1\x8alThe river runs past an old mill.\n",
]


def test_chunks_fit_as_the_tokenizer_reads_them_alone() -> None:
    """Every chunk is counted as the model's tokenizer reads its text alone, and cut at
    wordpieces where that is over ``max_tokens``, also where the pass counted fewer."""
    import spacy_attnseg
    from spacy_attnseg.capture import read_spaces_as_spaces

    nlp = spacy_attnseg.load_pipeline(overrides={"components.attn_segmenter.max_tokens": 8})
    tokenizer = minilm_tokenizer()
    # as the pipeline's tokenizer reads text: "\x1f", "\x85" split words there
    read_spaces_as_spaces(tokenizer)
    records = list(spacy_attnseg.chunks(nlp, TOKENIZER_HOSTILE))
    for number, text in enumerate(TOKENIZER_HOSTILE):
        mine = [r for r in records if r["doc"] == number]
        assert "".join(r["text"] for r in mine) == text
        for r in mine:
            assert r["n_tokens"] == len(tokenizer.tokenize(r["text"])) <= 8, r["text"]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_mean_and_unit_vectors_equal_per_sentence_means(seed: int, n_sents: int) -> None:
    rng = numpy.random.default_rng(seed)
    hidden = rng.normal(size=(2, 8, 5)).astype("float32")
    rows = numpy.sort(rng.choice(16, size=10, replace=False))
    row_sentence = numpy.sort(rng.integers(0, n_sents, size=10))
    means = topics.mean_vectors(hidden, rows, row_sentence, n_sents)
    got = topics.unit_vectors(means, standardise=False)
    flat = hidden.reshape((-1, 5)).astype("float64")
    expected_means = numpy.zeros((n_sents, 5))
    for s in range(n_sents):
        if (row_sentence == s).any():
            expected_means[s] = flat[rows[row_sentence == s]].mean(axis=0)
    assert numpy.allclose(means, expected_means, atol=1e-5)
    centred = expected_means - expected_means.mean(axis=0)
    norms = numpy.maximum(numpy.linalg.norm(centred, axis=1, keepdims=True), 1e-12)
    assert numpy.allclose(got, centred / norms, atol=1e-4)


@settings(max_examples=60, deadline=None)
@given(arrays(numpy.float64, st.tuples(st.integers(1, 12), st.integers(1, 6)), elements=floats))
def test_standardised_unit_vectors_follow_the_formula(means: numpy.ndarray) -> None:
    """Each dimension over (its std + the mean std), then unit length, written out with
    Python's statistics module (centred values at round-off level count as 0)."""
    import statistics

    rows = means.tolist()
    columns = list(zip(*rows, strict=True))
    floor = topics.ROUND_OFF * max(abs(x) for row in rows for x in row)
    centred_columns = [[x - statistics.fmean(col) for x in col] for col in columns]
    centred_columns = [[0.0 if abs(x) <= floor else x for x in col] for col in centred_columns]
    spreads = [statistics.pstdev(col) for col in centred_columns]
    mean_spread = statistics.fmean(spreads)
    expected = []
    for i in range(len(rows)):
        row = [col[i] for col in centred_columns]
        if len(rows) > 1 and mean_spread > 0:
            row = [x / (s + mean_spread) for x, s in zip(row, spreads, strict=True)]
        norm = max(sum(x * x for x in row) ** 0.5, 1e-12)
        expected.append([x / norm for x in row])
    got = topics.unit_vectors(means, standardise=True)
    assert numpy.allclose(got, numpy.array(expected).reshape(got.shape), atol=1e-9)


def test_standardise_keeps_a_loud_dimension_from_deciding() -> None:
    """Four topics of five sentences in 24 dimensions, plus two dimensions of loud noise
    (about 7 times the spread of the others, most of the total variance), over 40 random
    documents: unstandardised, the noise decides where the boundaries go and the topics
    are almost never found; standardised, they are found in about half."""
    found = {True: 0, False: 0}
    for seed in range(40):
        rng = numpy.random.default_rng(seed)
        pieces = numpy.repeat(rng.normal(size=(4, 24)), 5, axis=0)
        pieces += 0.5 * rng.normal(size=(20, 24))
        loud = numpy.hstack([pieces, 8 * rng.normal(size=(20, 2))])
        for standardise in found:
            found[standardise] += topics.segment(loud, standardise=standardise)[0] == [0, 5, 10, 15]
    assert found[True] >= 15 and found[False] <= 3


def naive_cost(vectors: numpy.ndarray, bounds: List[int]) -> float:
    total = 0.0
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        run = vectors[a:b]
        total += float(((run - run.mean(axis=0)) ** 2).sum())
    return total


def naive_credit(sizes: List[int], drift: float) -> float:
    """``drift * m ln m`` summed over runs of ``m`` units."""
    return sum(drift * m * math.log(m) for m in sizes if m > 0)


def brute_force_partition(
    vectors: numpy.ndarray,
    penalty: float,
    min_len: int,
    drift: float = 0.0,
    allowed: Optional[Sequence[bool]] = None,
    fit: Optional[Callable[[int, int], bool]] = None,
) -> float:
    """The lowest cost + penalty per boundary - drift * m ln m per run of m units, over
    every admissible segmentation (cut only where ``allowed``, if given; every run
    ``[a, b)`` one that ``fit(a, b)`` admits, if given); infinite where none is."""
    n = len(vectors)
    fit = fit or (lambda a, b: True)
    best = naive_cost(vectors, [0, n]) - naive_credit([n], drift) if fit(0, n) else math.inf
    points = [i for i in range(1, n) if allowed is None or allowed[i]]
    for k in range(1, n):
        for cut in itertools.combinations(points, k):
            bounds = [0, *cut, n]
            sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            runs = zip(bounds[:-1], bounds[1:], strict=True)
            if min(sizes) >= min_len and all(fit(a, b) for a, b in runs):
                total = naive_cost(vectors, bounds) + penalty * k - naive_credit(sizes, drift)
                best = min(best, total)
    return best


@settings(max_examples=150, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(1, 10), st.just(3)), elements=floats),
    st.floats(0, 3),
    st.integers(1, 3),
    st.sampled_from([0.0, 0.03, 0.5]),
)
def test_partition_is_optimal(
    vectors: numpy.ndarray, penalty: float, min_len: int, drift: float
) -> None:
    starts = topics.partition(vectors, penalty, min_len, drift=drift)
    bounds = [0, *starts, len(vectors)]
    sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    if starts:
        assert min(sizes) >= min_len
    got = naive_cost(vectors, bounds) + penalty * len(starts) - naive_credit(sizes, drift)
    expected = brute_force_partition(vectors, penalty, min_len, drift)
    assert got == pytest.approx(expected, abs=1e-9)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 9), st.integers(1, 4)), max_size=12),
    st.integers(0, 6),
    st.integers(0, 20),
)
def test_first_fits_counts_sentences_and_wordpieces(
    units: List[Tuple[int, int]], max_sents: int, max_tokens: int
) -> None:
    """``first_fits`` of units (paragraphs: wordpieces, sentences) is, per end, the first
    start whose run holds at most ``max_sents`` sentences and ``max_tokens``
    wordpieces, or the unit just before the end where no run reaches back that far."""
    sizes = numpy.array([size for size, _ in units], dtype="int64")
    counts = numpy.array([count for _, count in units], dtype="int64")
    got = topics.first_fits(sizes, max_sents, max_tokens, counts).tolist()
    expected = []
    for t in range(len(units) + 1):
        fitting = [
            a
            for a in range(t)
            if (max_sents == 0 or counts[a:t].sum() <= max_sents)
            and (max_tokens == 0 or sizes[a:t].sum() <= max_tokens)
        ]
        expected.append(min(fitting[0] if fitting else t, max(t - 1, 0)))
    assert got == expected


@settings(max_examples=150, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(1, 10), st.just(3)), elements=floats),
    st.lists(st.integers(1, 5), min_size=10, max_size=10),
    st.floats(0, 3),
    st.integers(1, 3),
    st.integers(0, 4),
    st.integers(0, 12),
    st.one_of(st.none(), st.lists(st.booleans(), min_size=10, max_size=10)),
)
def test_partition_within_size_limits_is_optimal(
    vectors: numpy.ndarray,
    sizes: List[int],
    penalty: float,
    min_len: int,
    max_sents: int,
    max_tokens: int,
    allowed: Optional[List[bool]],
) -> None:
    """With the size limits (``first_fits``: at most ``max_sents`` units and
    ``max_tokens`` wordpieces a run; a run with no start allowed inside it, a unit
    alone, always fits), the partition is the best segmentation whose every run is
    within them and ``min_len`` long, cut only where ``allowed``; where none is, it is
    the partition without the limits."""
    n = len(vectors)
    sizes = sizes[:n]
    cuts = None if allowed is None else numpy.array([True, *allowed[1:n]])

    def fit(a: int, b: int) -> bool:
        within_sents = max_sents == 0 or b - a <= max_sents
        within_tokens = max_tokens == 0 or sum(sizes[a:b]) <= max_tokens
        whole = not any(cuts is None or cuts[k] for k in range(a + 1, b))
        return whole or (within_sents and within_tokens)

    fits = topics.first_fits(numpy.array(sizes), max_sents, max_tokens)
    starts = topics.partition(vectors, penalty, min_len, allowed=cuts, fits=fits)
    expected = brute_force_partition(vectors, penalty, min_len, allowed=cuts, fit=fit)
    if math.isinf(expected):
        assert starts == topics.partition(vectors, penalty, min_len, allowed=cuts)
        return
    bounds = [0, *starts, len(vectors)]
    assert all(fit(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    got = naive_cost(vectors, bounds) + penalty * len(starts)
    assert got == pytest.approx(expected, abs=1e-9)


@settings(max_examples=150, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(1, 10), st.just(3)), elements=floats),
    st.floats(0, 3),
    st.sampled_from([0.0, 0.03]),
    st.lists(st.booleans(), min_size=10, max_size=10),
    st.sampled_from([2, 3, topics.MAX_UNITS]),
)
def test_partition_with_allowed_starts_is_optimal(
    vectors: numpy.ndarray, penalty: float, drift: float, allowed: List[bool], max_len: int
) -> None:
    """With ``allowed``, segments start only there, and the partition is the best such
    one (brute force); a run holds at most ``max_len`` of the allowed starts, so with
    few of them a run may be longer than ``max_len`` units."""
    n = len(vectors)
    allowed = allowed[:n]
    starts = topics.partition(vectors, penalty, 1, max_len=max_len, drift=drift, allowed=allowed)
    assert all(allowed[s] for s in starts)
    bounds = [0, *starts, n]
    sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    got = naive_cost(vectors, bounds) + penalty * len(starts) - naive_credit(sizes, drift)
    if max_len >= n:
        expected = brute_force_partition(vectors, penalty, 1, drift, allowed)
        assert got == pytest.approx(expected, abs=1e-9)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        assert sum(allowed[a:b]) + (not allowed[a]) <= max(max_len, 2)


@settings(max_examples=100, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(2, 11), st.just(3)), elements=floats),
    st.floats(0.05, 1),
    st.sampled_from([0, 1, 5, 30]),
    st.lists(st.integers(1, 3), min_size=1, max_size=7),
)
def test_a_short_text_pays_for_a_boundary_what_a_longer_one_would(
    means: numpy.ndarray, penalty: float, short_text: int, paragraph_sizes: List[int]
) -> None:
    """``short_text``: the partition of a text of ``n`` units and ``m`` sentences is the
    best one (brute force) with ``penalty * ln(max(n, short_text * n / m, 2))`` per
    boundary, with sentences as units and with paragraphs as units; 0 or a text at least
    that long: ``ln(max(n, 2))``. With fewer than ``FEW_PARAGRAPHS`` paragraphs the
    units are the sentences, and segments start only where paragraphs do."""
    n_sents = len(means)
    for paragraphs in (None, numpy.repeat(numpy.arange(len(paragraph_sizes)), paragraph_sizes)):
        allowed = None
        first = numpy.arange(n_sents)
        units = topics.unit_vectors(means, standardise=False)
        if paragraphs is not None:
            paragraphs = paragraphs[:n_sents]
            if len(paragraphs) < n_sents or paragraphs[-1] == 0:
                continue
            paragraph_first = numpy.flatnonzero(numpy.diff(paragraphs, prepend=-1) != 0)
            if len(paragraph_first) >= topics.FEW_PARAGRAPHS:
                first = paragraph_first
                units = topics.unit_vectors(
                    numpy.array([means[paragraphs == k].mean(axis=0) for k in range(len(first))]),
                    standardise=False,
                )
            else:
                allowed = numpy.isin(first, paragraph_first).tolist()
        n = len(units)
        price = penalty * math.log(max(n, short_text * n / n_sents, 2))
        starts, scores = topics.segment(
            means,
            penalty=penalty,
            drift=0.0,
            short_text=short_text,
            scale="unit",
            standardise=False,
            min_sents=1,
            paragraphs=paragraphs,
        )
        cut = [int(numpy.searchsorted(first, s)) for s in starts[1:]]
        assert [int(first[c]) for c in cut] == starts[1:]
        if paragraphs is not None:
            assert all(paragraphs[s] != paragraphs[s - 1] for s in starts[1:])
        got = naive_cost(units, [0, *cut, n]) + price * len(cut)
        assert got == pytest.approx(brute_force_partition(units, price, 1, 0, allowed), abs=1e-9)
        # each score: what its boundary removes (over sentence vectors) in the price of
        # a text of the sentences' number
        vectors = topics.unit_vectors(means, standardise=False)
        bounds = [*starts, n_sents]
        sentence_price = penalty * math.log(max(n_sents, short_text, 2))
        for k in range(1, len(starts)):
            drop = naive_cost(vectors, [bounds[k - 1], bounds[k + 1]]) - naive_cost(
                vectors, bounds[k - 1 : k + 2]
            )
            assert scores[k] == pytest.approx(drop / sentence_price, abs=1e-5)


def test_partition_within_max_len_is_optimal() -> None:
    """Runs of at most ``max_len`` units: the best such segmentation (brute force)."""
    rng = numpy.random.default_rng(11)
    vectors = rng.normal(size=(9, 3))
    for max_len, drift in ((3, 0.0), (4, 0.5), (2, 0.03)):
        starts = topics.partition(vectors, 0.4, 1, max_len=max_len, drift=drift)
        bounds = [0, *starts, 9]
        sizes = [b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        assert max(sizes) <= max_len
        best = min(
            naive_cost(vectors, [0, *cut, 9]) + 0.4 * len(cut) - naive_credit(list(runs), drift)
            for k in range(1, 9)
            for cut in itertools.combinations(range(1, 9), k)
            for runs in [numpy.diff([0, *cut, 9]).tolist()]
            if max(runs) <= max_len
        )
        got = naive_cost(vectors, bounds) + 0.4 * len(starts) - naive_credit(sizes, drift)
        assert got == pytest.approx(best, abs=1e-9)


def test_valid_drift() -> None:
    assert topics.valid_drift(0.0) and topics.valid_drift(topics.DRIFT)
    assert not any(topics.valid_drift(v) for v in (-0.01, float("nan"), float("inf")))


def test_drift_keeps_a_drifting_text_together() -> None:
    """Two texts of 40 sentences whose vectors drift (a random walk plus noise, as
    in-context vectors carry their neighbours): without the length credit the partition
    cuts each text into pieces; with the default it finds the one change of text."""
    found, plain_cuts, credited_cuts = 0, 0, 0
    for seed in range(10):
        rng = numpy.random.default_rng(seed)

        def text(n: int, rng: numpy.random.Generator = rng) -> numpy.ndarray:
            walk = numpy.cumsum(0.03 * rng.normal(size=(n, 48)), axis=0) + rng.normal(size=48)
            return walk + 0.35 * rng.normal(size=(n, 48))

        means = numpy.vstack([text(40), text(40)])
        plain = topics.segment(means, drift=0.0)[0]
        credited, scores = topics.segment(means)
        assert 40 in plain and 40 in credited
        assert min(scores[1:]) >= 1.0 - 1e-9  # every chosen boundary pays for itself
        plain_cuts += len(plain) - 1
        credited_cuts += len(credited) - 1
        found += credited == [0, 40]
    assert found >= 8 and credited_cuts < plain_cuts


def test_partition_finds_planted_topics_and_cuts_runs_at_max_len() -> None:
    rng = numpy.random.default_rng(0)
    centres = rng.normal(size=(6, 32))
    planted = numpy.repeat(centres, 8, axis=0) + 0.3 * rng.normal(size=(48, 32))
    starts, scores = topics.segment(planted)
    assert starts == [0, 8, 16, 24, 32, 40]
    assert scores[0] == 0.0 and min(scores[1:]) > 1.0
    # with a cap on the run length, a long homogeneous run is cut
    assert topics.partition(rng.normal(size=(50, 4)), 1e6, 1, max_len=10) != []


def test_few_paragraphs_are_read_by_their_sentences() -> None:
    """Two or three paragraphs of planted sentence vectors, each paragraph about the
    same thing as the others or each about its own: the partition cuts only where the
    topic changes. With the paragraphs as units (``FEW_PARAGRAPHS`` 0) two paragraphs
    come out as opposite vectors whatever they hold, and the decision is the same
    for both."""
    rng = numpy.random.default_rng(3)
    for sizes in ((5, 5), (6, 6), (4, 5, 4), (5, 5, 5)):
        paragraphs = numpy.repeat(numpy.arange(len(sizes)), sizes)
        starts = numpy.cumsum([0, *sizes[:-1]]).tolist()
        found = {}
        for same in (True, False):
            centres = rng.normal(size=(len(sizes), 384))
            if same:
                centres[:] = centres[0]
            means = numpy.vstack(
                [centres[k] + 0.7 * rng.normal(size=(m, 384)) for k, m in enumerate(sizes)]
            )
            found[same] = topics.segment(means, paragraphs=paragraphs)[0]
            if len(sizes) == 2:
                units = topics.unit_vectors(
                    numpy.array([means[paragraphs == k].mean(axis=0) for k in (0, 1)]),
                    standardise=True,
                )
                assert units[0] == pytest.approx(-units[1])
        assert found == {True: [0], False: starts}


def test_binary_segments_gives_the_count_asked_for() -> None:
    rng = numpy.random.default_rng(1)
    centres = rng.normal(size=(4, 16))
    planted = numpy.repeat(centres, 5, axis=0) + 0.2 * rng.normal(size=(20, 16))
    assert topics.binary_segments(topics.unit_vectors(planted, standardise=False), 4) == [5, 10, 15]
    starts, _ = topics.segment(planted, n_segments=2)
    assert len(starts) == 2


def test_boundary_scores_are_cost_drops_over_the_penalty() -> None:
    rng = numpy.random.default_rng(2)
    vectors = topics.unit_vectors(rng.normal(size=(12, 6)), standardise=False)
    drop_4 = naive_cost(vectors, [0, 9]) - naive_cost(vectors, [0, 4, 9])
    drop_9 = naive_cost(vectors, [4, 12]) - naive_cost(vectors, [4, 9, 12])
    unit = 0.5 * numpy.log(12)
    scores = topics.boundary_scores(vectors, [0, 4, 9], 0.5, scale="unit")
    assert scores == pytest.approx([0.0, drop_4 / unit, drop_9 / unit], abs=1e-5)
    unit *= naive_step_noise(vectors)
    scores = topics.boundary_scores(vectors, [0, 4, 9], 0.5)
    assert scores == pytest.approx([0.0, drop_4 / unit, drop_9 / unit], abs=1e-5)


def test_boundary_scores_take_off_the_length_credit() -> None:
    rng = numpy.random.default_rng(4)
    vectors = topics.unit_vectors(rng.normal(size=(12, 6)), standardise=False)
    unit = 0.5 * numpy.log(12) * naive_step_noise(vectors)
    credit = 0.2 * naive_step_noise(vectors)
    drop_4 = naive_cost(vectors, [0, 9]) - naive_cost(vectors, [0, 4, 9])
    drop_9 = naive_cost(vectors, [4, 12]) - naive_cost(vectors, [4, 9, 12])
    loss_4 = naive_credit([9], credit) - naive_credit([4, 5], credit)
    loss_9 = naive_credit([8], credit) - naive_credit([5, 3], credit)
    scores = topics.boundary_scores(vectors, [0, 4, 9], 0.5, drift=0.2)
    assert scores == pytest.approx(
        [0.0, (drop_4 - loss_4) / unit, (drop_9 - loss_9) / unit], abs=1e-5
    )


def naive_step_noise(vectors: numpy.ndarray) -> float:
    """The median half squared step between neighbours that differ (1.0 without one)."""
    halves = sorted(
        sum((a - b) ** 2 for a, b in zip(u, v, strict=True)) / 2
        for u, v in zip(vectors.tolist(), vectors.tolist()[1:], strict=False)
        if u != v
    )
    if not halves:
        return 1.0
    middle = len(halves) // 2
    return halves[middle] if len(halves) % 2 else (halves[middle - 1] + halves[middle]) / 2


@settings(max_examples=60, deadline=None)
@given(
    arrays(numpy.float64, st.tuples(st.integers(2, 30), st.integers(1, 5)), elements=floats),
    st.floats(0.05, 2.0),
)
def test_noise_scale_is_the_penalty_times_the_median_step(
    means: numpy.ndarray, penalty: float
) -> None:
    """scale="noise" is scale="unit" with the penalty times the document's step noise."""
    vectors = topics.unit_vectors(means, standardise=True)
    noise = max(naive_step_noise(vectors), 1e-6)
    assert topics.step_noise(vectors) == pytest.approx(noise, rel=1e-9, abs=1e-12)
    noisy, _ = topics.segment(means, penalty=penalty)
    plain, _ = topics.segment(
        means, penalty=penalty * noise, drift=topics.DRIFT * noise, scale="unit"
    )
    assert noisy == plain


def test_noise_scale_asks_more_of_a_document_without_coherent_pieces() -> None:
    """The same four distinct centres, once as coherent pieces of five sentences and once
    shuffled: unscaled, the penalty that finds the pieces also cuts the shuffled text;
    scaled by its step noise, the shuffled one (whose neighbours differ as much as any
    two sentences) keeps far fewer boundaries. (Without the length credit, whose own
    scale follows the penalty's, and at the price of the text's own length: the 30
    sentences of ``short_text`` leave the shuffled text whole either way.)"""
    rng = numpy.random.default_rng(7)
    pieces = numpy.repeat(rng.normal(size=(4, 24)), 5, axis=0) + 0.6 * rng.normal(size=(20, 24))
    shuffled = pieces[rng.permutation(20)]
    assert topics.segment(pieces, penalty=0.5)[0] == [0, 5, 10, 15]
    assert topics.segment(pieces, penalty=0.5, scale="unit")[0] == [0, 5, 10, 15]
    own = {"penalty": 0.5, "drift": 0.0, "short_text": 0}
    unscaled = len(topics.segment(shuffled, **own, scale="unit")[0])
    scaled = len(topics.segment(shuffled, **own)[0])
    assert scaled < unscaled
    assert len(topics.segment(shuffled, penalty=0.5, drift=0.0)[0]) == 1


def test_segments_start_only_at_paragraphs() -> None:
    rng = numpy.random.default_rng(3)
    centres = rng.normal(size=(3, 16))
    means = numpy.repeat(centres, 6, axis=0) + 0.2 * rng.normal(size=(18, 16))
    # paragraphs of 2 sentences; the topic changes at 6 and 12, both paragraph starts
    paragraphs = numpy.arange(18) // 2
    # unscaled: with three near-identical paragraphs per topic the step noise is tiny, and
    # the noise scale would also cut within a topic (this test is about where cuts go)
    starts, _ = topics.segment(means, paragraphs=paragraphs, scale="unit")
    assert starts == [0, 6, 12]
    # paragraphs of 4: a topic change inside a paragraph cannot start a segment
    starts, _ = topics.segment(means, paragraphs=numpy.arange(18) // 4)
    assert all(s % 4 == 0 for s in starts) and len(starts) > 1


def test_paragraph_penalty_prices_boundaries_between_paragraphs_only() -> None:
    """With paragraphs as units the partition pays ``paragraph_penalty`` per boundary
    (as ``penalty`` itself would), and with sentences as units it pays ``penalty``."""
    rng = numpy.random.default_rng(5)
    means = numpy.repeat(rng.normal(size=(3, 16)), 6, axis=0) + 0.6 * rng.normal(size=(18, 16))
    paragraphs = numpy.arange(18) // 2
    for low, high in ((0.05, 5.0), (0.5, 0.8)):
        by_low = topics.segment(means, penalty=low, paragraphs=paragraphs)
        by_high = topics.segment(means, penalty=high, paragraphs=paragraphs)
        assert (
            topics.segment(means, penalty=high, paragraph_penalty=low, paragraphs=paragraphs)
            == by_low
        )
        assert (
            topics.segment(means, penalty=low, paragraph_penalty=high, paragraphs=paragraphs)
            == by_high
        )
        assert topics.segment(means, penalty=low, paragraph_penalty=high) == topics.segment(
            means, penalty=low
        )
    # (the two penalties part on this document)
    assert (
        topics.segment(means, penalty=0.05, paragraphs=paragraphs)[0]
        != topics.segment(means, penalty=5.0, paragraphs=paragraphs)[0]
    )


def test_paragraph_starts(minilm_nlp: Any) -> None:
    from spacy_attnseg.sentences import paragraph_starts

    doc = minilm_nlp.make_doc("One here. Two here.\n\nThree here. \n \n Four.\nFive.")
    starts = [0, 3, 7, 11, 14]  # One, Two, Three, Four, Five
    assert [doc[i].text for i in starts] == ["One", "Two", "Three", "Four", "Five"]
    assert paragraph_starts(doc, numpy.array(starts)).tolist() == [True, False, True, True, False]


def _starts_after_periods(doc: Any) -> List[int]:
    """Token index of each sentence's first word: the first word and every word after a
    full stop."""
    words = [token for token in doc if not token.is_space]
    return [words[0].i] + [b.i for a, b in zip(words[:-1], words[1:], strict=True) if a.text == "."]


PARAGRAPHS = [
    "The river rises in the northern hills and runs south through farmland for most of its "
    "length. Mills were built along it in the eighteenth century.",
    "The town's football club was founded in 1887 and plays in the regional league. Its "
    "ground holds about four thousand people.",
    "A railway line reached the town in 1851 and closed to passengers in 1964. The old "
    "station is now a library.",
]


def test_paragraph_starts_one_paragraph_per_line(minilm_nlp: Any) -> None:
    from spacy_attnseg.sentences import lines_are_paragraphs, paragraph_starts

    text = "\n".join(PARAGRAPHS)
    assert lines_are_paragraphs(text)
    doc = minilm_nlp.make_doc(text)
    starts = _starts_after_periods(doc)
    assert [doc[i].text for i in starts] == ["The", "Mills", "The", "Its", "A", "The"]
    assert paragraph_starts(doc, numpy.array(starts)).tolist() == [True, False] * 3
    # Unicode's paragraph separator is a paragraph break in any text
    doc = minilm_nlp.make_doc("\u2029".join(PARAGRAPHS))
    assert paragraph_starts(doc, numpy.array(starts)).tolist() == [True, False] * 3


def test_long_lines_of_one_sentence_are_not_paragraphs(minilm_nlp: Any) -> None:
    """Lines of 100 characters or more that hold one sentence each are a text written one
    sentence per line: its sentences are not paragraphs, unless under
    ``SENTENCE_LINES_SHARE`` of its lines hold one sentence."""
    from spacy_attnseg.sentences import (
        SENTENCE_LINES_SHARE,
        lines_are_paragraphs,
        paragraph_starts,
    )

    sentences = [s for p in PARAGRAPHS for s in p.split(". ")]
    tail = ", as the records that the county council and the parish keep show in some detail."
    sentences = [s.rstrip(".") + tail for s in sentences]
    assert min(len(s) for s in sentences) >= 100
    for n_joined, lines_are in ((0, False), (1, False), (2, True)):
        # the first n_joined pairs of sentences share a line
        lines = [" ".join(sentences[2 * k : 2 * k + 2]) for k in range(n_joined)]
        lines += sentences[2 * n_joined :]
        text = "\n".join(lines)
        assert lines_are_paragraphs(text)
        doc = minilm_nlp.make_doc(text)
        starts = _starts_after_periods(doc)
        assert len(starts) == len(sentences)
        one = (len(lines) - n_joined) / len(lines)
        assert (one < SENTENCE_LINES_SHARE) == lines_are
        first = paragraph_starts(doc, numpy.array(starts))
        expected = [doc[i - 1].text == "\n" or i == 0 for i in starts] if lines_are else [True]
        assert first.tolist() == expected + [False] * (len(starts) - len(expected))


def test_paragraphs_of_one_sentence_are_sentences(
    default_nlp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where at least 4 in 5 paragraphs hold one sentence each, the partition's units are
    sentences (no ``paragraphs`` reach ``topics.segment``); paragraphs of two sentences
    stay the units."""
    from spacy_attnseg.sentences import sentence_paragraphs

    assert sentence_paragraphs([True] * 5)
    assert not sentence_paragraphs([True, True, True, True, False])  # 3 of 4 paragraphs
    assert sentence_paragraphs([True, True, True, True, True, False])  # 4 of 5
    assert not sentence_paragraphs([True, True, True, False, True, False])  # 2 of 4
    assert not sentence_paragraphs([True, False] * 3)
    assert not sentence_paragraphs([])
    seen: List[Any] = []
    segment = topics.segment

    def recorded(means: Any, **settings: Any) -> Any:
        seen.append(settings["paragraphs"])
        return segment(means, **settings)

    monkeypatch.setattr(topics, "segment", recorded)
    sentences = [s for p in PARAGRAPHS for s in p.split(". ")]
    default_nlp("\n\n".join(s.rstrip(".") + "." for s in sentences))
    default_nlp("\n\n".join(PARAGRAPHS))
    assert seen[0] is None
    assert seen[1] is not None and seen[1].tolist() == [0, 0, 1, 1, 2, 2]


def test_paragraph_starts_hard_wrapped(minilm_nlp: Any) -> None:
    import textwrap

    from spacy_attnseg.sentences import lines_are_paragraphs, paragraph_starts

    # wrapped at 72 characters: single line breaks fall inside sentences and are not
    # paragraph breaks; the blank line is
    text = "\n\n".join(textwrap.fill(p, 72) for p in PARAGRAPHS[:2])
    assert not lines_are_paragraphs(text) and text.count("\n") > 4
    doc = minilm_nlp.make_doc(text)
    starts = _starts_after_periods(doc)
    assert [doc[i].text for i in starts] == ["The", "Mills", "The", "Its"]
    assert paragraph_starts(doc, numpy.array(starts)).tolist() == [True, False, True, False]
    # one long line is one paragraph, not one per line
    assert not lines_are_paragraphs(PARAGRAPHS[0])


# -- scoring against gold segments ---------------------------------------------------


def _probe_errors(gold: Sequence[int], found: Sequence[int], n: int) -> tuple[float, float]:
    """Pk and WindowDiff from their definitions, over ``n`` units with segments starting
    at ``gold`` and ``found``: each unit's segment number, then every probe of units
    ``i`` and ``i + k`` (``k`` half the mean gold segment length, rounded half up)."""
    ref = [sum(1 for s in gold if 0 < s <= i) for i in range(n)]
    hyp = [sum(1 for s in found if 0 < s <= i) for i in range(n)]
    k = max(1, min(n - 1, math.floor(n / (2 * (ref[-1] + 1)) + 0.5)))
    probes = range(n - k)
    pk = sum((ref[i] == ref[i + k]) != (hyp[i] == hyp[i + k]) for i in probes) / len(probes)
    wd = sum(ref[i + k] - ref[i] != hyp[i + k] - hyp[i] for i in probes) / len(probes)
    return pk, wd


def test_evaluate_scores_topic_segments_against_gold_spans(default_nlp: Any) -> None:
    """``nlp.evaluate`` (and so ``spacy evaluate``) reports Pk and WindowDiff of the topic
    segments against a reference's ``doc.spans["attn_segments"]``, in the reference's own
    tokens (here words split at spaces, not spaCy's tokens), as the mean over the
    documents that have gold segments; None where none has."""
    from spacy.tokens import Doc
    from spacy.training import Example

    text = (DATA / "wikipedia" / "three_leads.txt").read_text(encoding="utf8")
    leads = [0, text.index("Andre Kirk Agassi"), text.index("Animal Farm is")]
    doc = default_nlp(text)
    found = [span.start_char for span in doc.spans["attn_segments"]]
    assert found == leads  # (the demo's three articles)

    words = text.split(" ")
    starts = list(itertools.accumulate([0] + [len(w) + 1 for w in words[:-1]]))

    def reference(gold: List[int]) -> Any:
        doc = Doc(default_nlp.vocab, words=words, spaces=[True] * (len(words) - 1) + [False])
        bounds = [starts.index(c) if c in starts else None for c in gold] + [len(doc)]
        assert None not in bounds
        pairs = zip(bounds[:-1], bounds[1:], strict=True)
        doc.spans["attn_segments"] = [doc[a:b] for a, b in pairs]
        return doc

    n = len(words)
    found_words = [starts.index(c) for c in leads]
    exact = Example(default_nlp.make_doc(text), reference(leads))
    # a gold segmentation that differs: the second lead split again, the third start later
    second = text.index("Described by", leads[1])
    third = starts[found_words[2] + 12]
    moved = Example(default_nlp.make_doc(text), reference([0, leads[1], second, third]))
    gold_words = [0, found_words[1], starts.index(second), found_words[2] + 12]
    expected = _probe_errors(gold_words, found_words, n)
    assert 0.05 < expected[0] < 0.5 and 0.05 < expected[1] < 0.5
    none = Example(default_nlp.make_doc(text), default_nlp.make_doc(text))

    scores = default_nlp.evaluate([exact, moved, none])
    assert scores["segments_pk"] == pytest.approx((0.0 + expected[0]) / 2)
    assert scores["segments_windowdiff"] == pytest.approx((0.0 + expected[1]) / 2)
    assert default_nlp.evaluate([moved])["segments_pk"] == pytest.approx(expected[0])
    scores = default_nlp.evaluate([none])
    assert scores["segments_pk"] is None and scores["segments_windowdiff"] is None


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    n=st.integers(2, 60),
    gold=st.lists(st.integers(1, 59), max_size=6),
    found=st.lists(st.integers(1, 59), max_size=6),
    missing=st.booleans(),
)
def test_segment_scores_follow_the_definitions(
    n: int, gold: List[int], found: List[int], missing: bool
) -> None:
    """On any segmentation of a text of ``n`` words (a predicted Doc without the group
    is one segment), ``score_segments`` gives the Pk and WindowDiff of the definitions."""
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_attnseg.scoring import score_segments

    vocab = spacy.blank("en").vocab
    gold = sorted({0, *(s for s in gold if s < n)})
    found = sorted({0, *(s for s in found if s < n)})

    def doc(starts: List[int], spans: bool) -> Doc:
        made = Doc(vocab, words=[f"w{i}" for i in range(n)])
        if spans:
            bounds = [*starts, n]
            made.spans["segs"] = [made[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        return made

    example = Example(doc(found, not missing), doc(gold, True))
    scores = score_segments([example], spans_key="segs")
    pk, wd = _probe_errors(gold, [0] if missing else found, n)
    assert scores["segments_pk"] == pytest.approx(pk)
    assert scores["segments_windowdiff"] == pytest.approx(wd)
    assert score_segments([example], spans_key="")["segments_pk"] is None


def test_gold_segments_are_read_by_their_starts_in_order() -> None:
    """A gold segment starts at each span after the first: tokens before the first span
    or between two spans belong to the segment before (a gold group built from
    character offsets may leave out white space); spans that overlap or come out of
    order stop with E143, which names the example and the spans (they were scored by
    their starts, sorted)."""
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_attnseg.scoring import score_segments

    vocab = spacy.blank("en").vocab
    n = 30

    def doc(*bounds: tuple[int, int]) -> Doc:
        made = Doc(vocab, words=[f"w{i}" for i in range(n)])
        made.spans["segs"] = [made[a:b] for a, b in bounds]
        return made

    def score(*gold: tuple[int, int]) -> Any:
        return score_segments([Example(doc((0, 12), (12, n)), doc(*gold))], spans_key="segs")

    exact = score((0, 12), (12, n))
    assert exact["segments_pk"] == 0.0
    assert score((3, 12), (12, n)) == exact  # text before the first span: the first segment
    assert score((0, 10), (12, 29)) == exact  # a gap: the segment before
    assert score((0, 10), (10, n))["segments_pk"] > 0.05
    for gold, detail in (
        (((0, 15), (12, n)), "a span at tokens 12..30 follows one that ends at token 15"),
        (((12, n), (0, 12)), "a span at tokens 0..12 follows one that ends at token 30"),
    ):
        with pytest.raises(ValueError, match=rf"\[E143\] .* example 0 .*{detail}"):
            score(*gold)
