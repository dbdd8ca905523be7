"""The pipelines' tokenizer: spaCy's, to the token, on text without long runs of
characters other than white space; a long run cut into pieces of ``MAX_RUN`` characters,
each tokenized by spaCy's tokenizer, the text unchanged."""

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
from spacy_attnseg.tokenizer import MAX_RUN, RunTokenizer, create_tokenizer, cuts, pieces


def tokens(doc: Any) -> List[Tuple[str, str, str]]:
    return [(token.text, token.whitespace_, token.norm_) for token in doc]


@pytest.fixture(scope="module")
def both() -> Tuple[Any, Any]:
    """spaCy's English tokenizer and ``RunTokenizer`` built from the same defaults."""
    nlp = spacy.blank("en")
    return nlp.tokenizer, create_tokenizer()(nlp)


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
    assert isinstance(nlp.tokenizer, RunTokenizer)
    assert isinstance(pickle.loads(pickle.dumps(nlp.tokenizer)), RunTokenizer)
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    assert isinstance(loaded.tokenizer, RunTokenizer)
    text = "Look: " + "?!" * 400 + " Then a sentence."
    assert tokens(loaded.tokenizer(text)) == tokens(nlp.tokenizer(text))
    assert nlp.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy-attnseg.Tokenizer.v1"


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
