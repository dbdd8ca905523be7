"""The pipelines' tokenizer: spaCy's, to the token, on text without long runs of
characters other than white space; a long run cut into pieces of ``MAX_RUN`` characters,
each tokenized by spaCy's tokenizer, the text unchanged; a zero-width space or U+FEFF
read as a space, and a white-space token of its own or of the white space next to it."""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any, List, Tuple

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_attnseg import load_pipeline
from spacy_attnseg.tokenizer import (
    MAX_RUN,
    UNAMBIGUOUS_FINAL,
    ZERO_WIDTH,
    RunTokenizer,
    ZeroWidthTokenizer,
    create_marker_tokenizer,
    create_tokenizer,
    create_zero_width_tokenizer,
    cuts,
    pieces,
    reads_as_space,
)


def tokens(doc: Any) -> List[Tuple[str, str, str]]:
    return [(token.text, token.whitespace_, token.norm_) for token in doc]


@pytest.fixture(scope="module")
def both() -> Tuple[Any, Any]:
    """spaCy's English tokenizer and ``RunTokenizer`` built from the same defaults."""
    nlp = spacy.blank("en")
    return nlp.tokenizer, create_tokenizer()(nlp)


@pytest.fixture(scope="module")
def zero_width() -> Tuple[Any, Any]:
    """``RunTokenizer`` (``.v1``) and ``ZeroWidthTokenizer`` (``.v2``), each on a
    vocabulary of its own."""
    run_tokenizer = create_tokenizer()(spacy.blank("en"))
    assert type(run_tokenizer) is RunTokenizer
    return run_tokenizer, create_zero_width_tokenizer()(spacy.blank("en"))


PARTS = st.one_of(
    st.sampled_from(["Mr.", "U.S.", "don't", "e-mail", "(a)", "<>", "'s", "http://a.b/c"]),
    st.sampled_from([".", "!", "?", "...", '"', " ", "  ", "\n", "\n\n", "\t", "\u00a0"]),
    st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8),
    st.tuples(st.sampled_from(["!", "<>", "x", "'s", "a.", "😀"]), st.integers(1, 400)).map(
        lambda pair: pair[0] * pair[1]
    ),
)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(text=st.lists(PARTS, max_size=12).map("".join))
def test_spacys_tokens_where_no_run_is_cut(both: Tuple[Any, Any], text: str) -> None:
    """Where ``text`` has no run longer than ``MAX_RUN``, the tokens are spaCy's; where
    it has, the text comes back, every piece's runs are at most ``MAX_RUN`` long, the
    cuts lie inside the long runs, and the tokens (text, white space, norm) are spaCy's
    tokens of each piece. Either way no token after the first starts a sentence."""
    spacy_tokenizer, run_tokenizer = both
    doc = run_tokenizer(text)
    assert doc.text == text
    # no sentence starts: the pieces' first tokens are not marked (the sentence
    # components decide, as on spaCy's tokens)
    assert all(token.is_sent_start is None for token in doc[1:])
    long_runs = [m.span() for m in re.finditer(rf"\S{{{MAX_RUN + 1},}}", text)]
    if not long_runs:
        assert cuts(text) == [0]
        assert tokens(doc) == tokens(spacy_tokenizer(text))
        return
    parts = list(pieces(text))
    assert "".join(parts) == text
    assert all(max(map(len, part.split()), default=0) <= MAX_RUN for part in parts)
    assert all(any(a <= cut < b for a, b in long_runs) for cut in cuts(text)[1:])
    assert tokens(doc) == [pair for part in parts for pair in tokens(spacy_tokenizer(part))]


ZERO_WIDTH_PARTS = st.one_of(
    PARTS,
    st.sampled_from(["\u200b", "\ufeff", "\u200b\u200b", " \u200b", "\u200b\n", "x.\u200bY"]),
)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(text=st.lists(ZERO_WIDTH_PARTS, max_size=12).map("".join))
def test_zero_width_characters_read_as_spaces(zero_width: Tuple[Any, Any], text: str) -> None:
    """Every token other than white space is the token ``RunTokenizer`` makes at the same
    place of the text with a space for each zero-width character (text, norm); every
    zero-width character is in a white-space token (``is_space``), none next to another;
    the text comes back; text without them gets ``RunTokenizer``'s tokens."""
    run_tokenizer, zero_width_tokenizer = zero_width
    doc = zero_width_tokenizer(text)
    assert doc.text == text
    spaced = "".join(" " if character in ZERO_WIDTH else character for character in text)
    words = [(t.idx, t.text, t.norm_) for t in doc if not t.is_space]
    assert words == [(t.idx, t.text, t.norm_) for t in run_tokenizer(spaced) if not t.is_space]
    for token in doc:
        assert token.is_space == reads_as_space(token.text)
        assert token.is_space or not set(token.text) & set(ZERO_WIDTH)
    pairs = zip(doc[:-1], doc[1:], strict=True)
    assert not any(a.is_space and b.is_space and not a.whitespace_ for a, b in pairs)
    if spaced == text:
        assert tokens(doc) == tokens(run_tokenizer(text))


@pytest.fixture(scope="module")
def marker() -> Tuple[Any, Any]:
    """``ZeroWidthTokenizer`` as ``.v2`` builds it and as ``.v3`` does (with
    ``GLUED_MARKER_INFIXES`` and ``terminal_infix``), each on a vocabulary of its own."""
    return (
        create_zero_width_tokenizer()(spacy.blank("en")),
        create_marker_tokenizer()(spacy.blank("en")),
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("built in 1990.[3] The", "built in 1990 . [ 3 ] The"),
        ("down.[4][5][6] Nobody", "down . [ 4 ] [ 5 ] [ 6 ] Nobody"),
        ("wet.[a] Then", "wet . [ a ] Then"),
        ("true.[citation needed] Then", "true . [ citation needed ] Then"),
        ("claimed.[note 3] Then", "claimed . [ note 3 ] Then"),
        ("Done![12] Next", "Done ! [ 12 ] Next"),
        ("seen.[4, 5] and.[6–8] so", "seen . [ 4 , 5 ] and . [ 6–8 ] so"),
        ('said."[3] Next', 'said . " [ 3 ] Next'),
        ("end.[3]\nNext", "end . [ 3 ] \n Next"),
        # a chain of numbered indexes is split at its "]["
        ("v[0][1] = 2", "v[0 ] [ 1 ] = 2"),
    ],
)
def test_a_glued_footnote_marker_is_split(
    marker: Tuple[Any, Any], text: str, expected: str
) -> None:
    """``.v3`` splits a footnote marker glued to the punctuation that ends a sentence,
    as text copied from Wikipedia holds them; ``.v2`` kept ``"1990.[3"`` one token."""
    zero_width_tokenizer, marker_tokenizer = marker
    doc = marker_tokenizer(text)
    assert doc.text == text
    assert [t.text for t in doc] == expected.split(" ")
    assert [t.text for t in zero_width_tokenizer(text)] != expected.split(" ")


@pytest.mark.parametrize(
    "text", ["long[1] and", "version 2.0[1] ok", "see [3]. Then", "cut.[...] Then", "a[i]."]
)
def test_a_marker_after_a_word_stays_as_spacy_makes_it(marker: Tuple[Any, Any], text: str) -> None:
    """A marker glued to a word or a number without punctuation, one after a space, an
    elision and an index: ``.v3``'s tokens are ``.v2``'s."""
    zero_width_tokenizer, marker_tokenizer = marker
    assert tokens(marker_tokenizer(text)) == tokens(zero_width_tokenizer(text))


@settings(max_examples=150, derandomize=True, deadline=None)
@given(
    text=st.lists(
        st.one_of(
            ZERO_WIDTH_PARTS,
            st.sampled_from(["[", "]", "[3]", ".[", "][", "x.[1]", "[a]", "v[0][1]", "2", "。"]),
        ),
        max_size=12,
    ).map("".join)
)
def test_the_marker_tokenizer_only_splits_further(marker: Tuple[Any, Any], text: str) -> None:
    """``.v3``'s tokens are ``.v2``'s, some of them split: every place ``.v2`` starts a
    token, ``.v3`` does, white space and norms of the tokens they share the same; text
    without ``"["`` and without another script's terminal (``UNAMBIGUOUS_FINAL``) gets
    the same tokens."""
    zero_width_tokenizer, marker_tokenizer = marker
    before, after = zero_width_tokenizer(text), marker_tokenizer(text)
    assert after.text == text
    assert {t.idx for t in before} <= {t.idx for t in after}
    kept = {(t.idx, t.text): t for t in after}
    for token in before:
        if (token.idx, token.text) in kept:
            assert kept[token.idx, token.text].whitespace_ == token.whitespace_
            assert kept[token.idx, token.text].is_space == token.is_space
    if "[" not in text and not set(text) & UNAMBIGUOUS_FINAL:
        assert tokens(after) == tokens(before)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("第一句话。第二句话！English", "第一句话 。 第二句话 ！ English"),
        ("これは本です。それはペンです。", "これは本です 。 それはペンです 。"),
        ("ok؟yes end।next what‽really", "ok ؟ yes end । next what ‽ really"),
    ],
)
def test_another_scripts_terminal_inside_a_run_is_split(
    marker: Tuple[Any, Any], text: str, expected: str
) -> None:
    """``.v3`` splits the other scripts' sentence terminals (``terminal_infix``) inside
    a run without white space, where ``.v2``, as spaCy's English tokenizer, split them
    only off a run's end."""
    zero_width_tokenizer, marker_tokenizer = marker
    assert [t.text for t in marker_tokenizer(text)] == expected.split(" ")
    assert [t.text for t in zero_width_tokenizer(text)] != expected.split(" ")


def test_a_sentence_ends_at_another_scripts_terminal(default_nlp: Any) -> None:
    """A CJK full stop or exclamation mark always ends its sentence
    (``sentences.UNAMBIGUOUS_FINAL``), also where no space follows it, as CJK text
    writes it; with ``.v2``'s tokens this text was one sentence."""
    text = "这是第一句话。这是第二句话！English follows here."
    doc = default_nlp(text)
    assert [s.text.strip() for s in doc.sents] == [
        "这是第一句话。",
        "这是第二句话！",
        "English follows here.",
    ]


def test_a_sentence_ends_before_a_glued_footnote_marker(default_nlp: Any) -> None:
    """Text copied from Wikipedia glues its footnote markers to the sentence they
    follow; each sentence ends after its markers (``sentences.REFERENCE_MARKER``), where
    with ``.v2``'s tokens the sentences after the first two ran together."""
    text = (
        "The bridge was built in 1990.[3] The next year it burned down.[4][5] Nobody was "
        "hurt.[citation needed] It was rebuilt in stone.[a]"
    )
    doc = default_nlp(text)
    assert doc.text == text
    assert [s.text.strip() for s in doc.sents] == [
        "The bridge was built in 1990.[3]",
        "The next year it burned down.[4][5]",
        "Nobody was hurt.[citation needed]",
        "It was rebuilt in stone.[a]",
    ]


def test_a_sentence_starts_after_a_zero_width_space(default_nlp: Any) -> None:
    """Web text holds zero-width spaces, and files joined together a byte-order mark at
    each one's start; spaCy's tokenizer read ``"noticed.\u200bThen"`` as one token, at
    which no sentence could start."""
    text = (
        "\ufeffThe river runs past an old mill.\u200bPeople once ground corn there."
        "\ufeffThe second file opens here. It has two sentences."
    )
    doc = default_nlp(text)
    assert doc.text == text
    assert [s.text.strip(ZERO_WIDTH + " ") for s in doc.sents] == [
        "The river runs past an old mill.",
        "People once ground corn there.",
        "The second file opens here.",
        "It has two sentences.",
    ]
    assert [t.text for t in doc if t.is_space] == ["\ufeff", "\u200b", "\ufeff"]


def test_a_long_run_of_punctuation(both: Tuple[Any, Any]) -> None:
    """20,000 "!" after a word: spaCy's tokenizer strips them one at a time, each time
    searching the rest (quadratic: about a minute on this machine); cut, each "!" is
    still a token of its own, and the text and the word around them are unchanged."""
    text = "Wait" + "!" * 20_000 + " ok. " + "<>" * 3000 + "\n" + "x" * 600
    doc = both[1](text)
    assert doc.text == text
    assert [t.text for t in doc[:3]] == ["Wait", "!", "!"]
    assert sum(t.text == "!" for t in doc) == 20_000
    assert sum(t.text in ("<", ">") for t in doc) == 6000
    assert [t.text for t in doc[-3:]] == ["x" * 250, "x" * 250, "x" * 100]
    assert all(len(t) <= MAX_RUN for t in doc)


def test_the_shipped_pipelines_use_it_and_keep_it(tmp_path: Path) -> None:
    nlp = load_pipeline("default")
    assert isinstance(nlp.tokenizer, ZeroWidthTokenizer)
    assert isinstance(pickle.loads(pickle.dumps(nlp.tokenizer)), ZeroWidthTokenizer)
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert isinstance(loaded.tokenizer, ZeroWidthTokenizer)
    text = "Look: " + "?!" * 400 + " Then\u200ba sentence.\u200b\n\ufeffMore."
    assert tokens(loaded.tokenizer(text)) == tokens(nlp.tokenizer(text))
    assert [t.is_space for t in loaded.tokenizer(text)] == [t.is_space for t in nlp(text)]
    assert nlp.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy-attnseg.Tokenizer.v3"


@pytest.mark.parametrize(
    "text", ["abc \ud800 def. Next one.", "\udcff", "ok " + "!" * 600 + "\udc80"]
)
def test_a_lone_surrogate_is_a_coded_error(
    both: Tuple[Any, Any], default_nlp: Any, text: str
) -> None:
    """A text that holds a lone half of a surrogate pair (``json.loads`` of an escape,
    bytes decoded with ``surrogateescape``) stops with E128, which names the character
    and where it is (spaCy's tokenizer stops with a ``UnicodeEncodeError`` deep in its
    string store), through the pipeline and ``nlp.pipe`` alike; the replacement E128
    suggests keeps the text's length and runs."""
    spacy_tokenizer, run_tokenizer = both
    with pytest.raises(UnicodeEncodeError):
        spacy_tokenizer(text)
    position = re.search("[\ud800-\udfff]", text)
    assert position is not None
    code = f"\\u{ord(position.group()):04x} at character {position.start()},"
    for call in (run_tokenizer, default_nlp, lambda t: next(default_nlp.pipe([t]))):
        with pytest.raises(ValueError, match="E128") as error:
            call(text)
        assert code in str(error.value)
    replaced = text.encode("utf-8", "replace").decode("utf-8")
    assert len(replaced) == len(text) and default_nlp(replaced).text == replaced
