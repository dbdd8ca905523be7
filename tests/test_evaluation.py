"""Tests for the sentence-boundary evaluation protocol and baseline splitters."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List

import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from paper.evaluation import (
    SPLITTERS,
    BoundaryScores,
    GoldDocument,
    SplitFn,
    SplitterUnavailable,
    available_splitters,
    boundary_positions,
    doc_sentence_starts,
    evaluate_splitter,
    load_splitter,
    machine_settings,
    read_conllu_documents,
    score_boundaries,
    split_texts,
    splitter_rows,
    strip_final_punctuation,
    to_spacy_examples,
    write_table,
)
from spacy_attnseg.gold import read_conllu_paragraphs

EWT_TEST = Path(__file__).resolve().parents[1] / "data" / "UD_English-EWT" / "en_ewt-ud-test.conllu"


def _token_rows(words: List[str], no_space_after: List[int]) -> str:
    rows = []
    for i, word in enumerate(words, start=1):
        misc = "SpaceAfter=No" if i in no_space_after else "_"
        rows.append(f"{i}\t{word}\t{word.lower()}\tX\tX\t_\t0\tdep\t_\t{misc}")
    return "\n".join(rows)


TINY_CONLLU = f"""# newdoc id = doc-a
# sent_id = a-1
# newpar id = a-p1
# text = Hello world.
{_token_rows(["Hello", "world", "."], [2])}

# sent_id = a-2
# text = "Is it raining?"
{_token_rows(['"', "Is", "it", "raining", "?", '"'], [1, 4, 5])}

# sent_id = a-3
# text = no punctuation here
{_token_rows(["no", "punctuation", "here"], [])}

# newdoc id = doc-b
# sent_id = b-1
# text = Wow!!! (Really?)
{_token_rows(["Wow", "!!!", "(", "Really", "?", ")"], [1, 3, 4, 5])}

# sent_id = b-2
# text = ?
{_token_rows(["?"], [])}

# sent_id = b-3
{_token_rows(["Rebuilt", "from", "tokens", "."], [3])}

"""


@pytest.fixture()
def tiny_path(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.conllu"
    path.write_text(TINY_CONLLU, encoding="utf8")
    return path


def test_evaluate_trained_scores_every_pipeline_and_splitter(
    tiny_path: Path, tmp_path: Path
) -> None:
    """``paper.trained.evaluate`` (``scripts/evaluate_trained.py``): a row per pipeline and
    splitter in every variant, a pipeline's row the score of that pipeline's own
    sentence starts, and the run's notes under the table and in the JSON."""
    from paper.evaluation import VARIANTS, read_conllu_variants
    from paper.trained import evaluate
    from spacy_attnseg import load_pipeline

    out = tmp_path / "trained"
    payload = evaluate(
        ["attention"],
        tiny_path,
        out,
        splitters=["sentencizer"],
        batch_size=4,
        threads=1,
        notes=["The weights of this run."],
    )
    rows = payload["rows"]
    assert [(r["system"], r["variant"]) for r in rows] == [
        (system, variant) for system in ("attention", "sentencizer") for variant in VARIANTS
    ]
    nlp = load_pipeline("attention")
    for variant, docs in read_conllu_variants(tiny_path).items():
        predicted = [[s.start_char for s in nlp(doc.text).sents] for doc in docs]
        expected = score_boundaries(docs, predicted).to_dict()
        (row,) = [r for r in rows if r["system"] == "attention" and r["variant"] == variant]
        assert [row[key] for key in "prf"] == [expected[key] for key in "prf"]
    table = Path(f"{out}.md").read_text(encoding="utf8")
    assert table.rstrip().endswith("\n- The weights of this run.")
    assert table.count("| attention |") == len(VARIANTS)
    assert json.loads(Path(f"{out}.json").read_text(encoding="utf8")) == payload
    assert payload["notes"] == ["The weights of this run."]


def test_read_conllu_documents_raw(tiny_path: Path) -> None:
    docs = read_conllu_documents(tiny_path)
    assert len(docs) == 2
    a, b = docs
    assert a.text == 'Hello world. "Is it raining?" no punctuation here'
    assert a.starts == [0, 13, 30]
    assert [a.text[s : s + 5] for s in a.starts] == ["Hello", '"Is i', "no pu"]
    # The third sentence has no "# text" and is rebuilt from FORM + SpaceAfter.
    assert b.text == "Wow!!! (Really?) ? Rebuilt from tokens."
    assert b.starts == [0, 17, 19]


def test_read_conllu_paragraphs(tiny_path: Path, tmp_path: Path) -> None:
    """Documents as paragraphs of ``# text`` comments: a sentence without one (b-3) is
    left out; a ``# newpar`` starts a paragraph, one that holds nothing is dropped."""
    assert read_conllu_paragraphs(tiny_path) == [
        [["Hello world.", '"Is it raining?"', "no punctuation here"]],
        [["Wow!!! (Really?)", "?"]],
    ]
    path = tmp_path / "paragraphs.conllu"
    path.write_text(
        "# text = Before any document.\n\n"
        "# newdoc\n# newpar\n# newpar\n# text = One.\n\n# text = Two.\n\n"
        "# newpar id = p2\n# text =  Three. \n\n# newdoc\n# newpar\n\n"
        "# newdoc\n# text = Four.\n\n# newpar\n# text = Five.\n",
        encoding="utf8",
    )
    assert read_conllu_paragraphs(path) == [
        [["Before any document."]],
        [["One.", "Two."], ["Three."]],
        [["Four."], ["Five."]],
    ]


def test_paragraph_layouts_keep_every_sentence_and_lay_out_the_paragraphs() -> None:
    """``paper.trained.paragraph_layouts`` of EWT test: in each layout, a document's
    sentences and their boundaries are those ``read_conllu_documents`` reads (compared
    whitespace-insensitively); its paragraphs are the lines, or the blocks between blank
    lines (wrapped or not), and a wrapped line is at most 72 characters unless it is one
    word."""
    from paper.trained import PARAGRAPH_LAYOUTS, paragraph_layouts

    joined = read_conllu_documents(EWT_TEST)
    paragraphs = read_conllu_paragraphs(EWT_TEST)
    corpora = paragraph_layouts(EWT_TEST)
    assert list(corpora) == list(PARAGRAPH_LAYOUTS)
    for layout, (separator, width) in PARAGRAPH_LAYOUTS.items():
        docs = corpora[layout]
        assert len(docs) == len(joined) == len(paragraphs)
        for doc, plain, paras in zip(docs, joined, paragraphs, strict=True):
            assert doc.text.split() == plain.text.split()
            assert boundary_positions(doc.text, doc.starts) == boundary_positions(
                plain.text, plain.starts
            )
            if separator == "\n\n" or not width:  # wrapped lines hide where one ends
                blocks = doc.text.split(separator)
                assert [b.split() for b in blocks] == [" ".join(p).split() for p in paras]
            lines = doc.text.split("\n")
            if width:
                assert all(len(line) <= width or " " not in line for line in lines)
            else:
                assert len(lines) == len(paras)


def test_glued_markers_add_only_markers_at_sentence_ends() -> None:
    """``paper.trained.glued_markers`` of EWT test: "raw" is ``read_conllu_documents``;
    the marked documents hold the same sentences with a footnote marker glued to about
    half of those that end with ``. ! ?`` and to no other, the starts where the
    sentences start; the same seed gives the same text."""
    from paper.trained import ENDS_WITH_FINAL, glued_markers

    corpora = glued_markers(EWT_TEST)
    raw, marked = corpora["raw"], corpora["raw, footnote markers glued"]
    assert raw == read_conllu_documents(EWT_TEST)
    marker = re.compile(r"\[(?:\d+|\d+\]\[\d+|a|citation needed|\d+, \d+)\]$")
    glued = final = 0
    for plain, doc in zip(raw, marked, strict=True):
        assert len(doc.starts) == len(plain.starts)
        for before, after in zip(plain.sentences(), doc.sentences(), strict=True):
            final += bool(ENDS_WITH_FINAL.search(before))
            if after != before:
                assert after.startswith(before) and ENDS_WITH_FINAL.search(before)
                assert marker.fullmatch(after[len(before) :])
                glued += 1
    assert 0.45 < glued / final < 0.55
    assert glued_markers(EWT_TEST)["raw, footnote markers glued"] == marked


def test_read_conllu_documents_no_punct(tiny_path: Path) -> None:
    a, b = read_conllu_documents(tiny_path, strip_final_punct=True)
    assert a.text == 'hello world "is it raining" no punctuation here'
    assert a.starts == [0, 12, 28]
    # "?" becomes empty and is dropped; inner "!!!" stays, final "?" inside ")" goes.
    assert b.text == "wow!!! (really) rebuilt from tokens"
    assert b.starts == [0, 16]
    for doc in (a, b):
        assert not re.search(r"[.!?][\"')\]]*$", doc.text)


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Hello world.", "Hello world"),
        ("Really?!", "Really"),
        ("And so on...", "And so on"),
        ('He said "yes!"', 'He said "yes"'),
        ("(What about it??)", "(What about it)"),
        ("It ended.\u201d ", "It ended\u201d"),
        ("Well they play :)", "Well they play :)"),
        ("bacon! :)", "bacon! :)"),
        ("Dr. Who is here", "Dr. Who is here"),
        ("...", ""),
    ],
)
def test_strip_final_punctuation(sentence: str, expected: str) -> None:
    assert strip_final_punctuation(sentence) == expected


def test_boundary_positions_whitespace_insensitive() -> None:
    text = "One.  Two.\nThree."
    # Offsets 4 and 5 are the spaces before "Two", 6 is "T": 4 non-ws chars before each.
    assert boundary_positions(text, [4]) == {4}
    assert boundary_positions(text, [5]) == {4}
    assert boundary_positions(text, [6]) == {4}
    assert boundary_positions(text, [0, 6, 11]) == {4, 8}
    # The same boundaries in a differently spaced text get the same positions.
    assert boundary_positions("One. Two. Three.", [0, 5, 10]) == {4, 8}


def test_boundary_positions_first_and_end() -> None:
    text = "  One. Two.  "
    # Offsets 0..2 all map to position 0, which is not counted by default.
    assert boundary_positions(text, [0, 1, 2, 7]) == {4}
    assert boundary_positions(text, [0, 7], include_first=True) == {0, 4}
    # A "start" after the last non-whitespace character is no boundary.
    assert boundary_positions(text, [11, 13]) == set()
    with pytest.raises(ValueError):
        boundary_positions(text, [14])
    with pytest.raises(ValueError):
        boundary_positions(text, [-1])


def test_score_boundaries_hand_computed() -> None:
    docs = [
        GoldDocument("Hi there. How are you? Fine.", [0, 10, 23]),
        GoldDocument("One. Two.", [0, 5]),
    ]
    # Doc 1: gold positions {8, 18}; predicted 9 (the space) -> 8, 14 ("are") -> 11.
    # Doc 2: gold {3}; nothing predicted.
    scores = score_boundaries(docs, [[0, 9, 14], []])
    assert (scores.tp, scores.n_pred, scores.n_gold) == (1, 2, 3)
    assert scores.p == pytest.approx(0.5)
    assert scores.r == pytest.approx(1 / 3)
    assert scores.f == pytest.approx(0.4)
    assert scores.to_dict() == {
        "p": 50.0,
        "r": 33.3,
        "f": 40.0,
        "tp": 1,
        "n_pred": 2,
        "n_gold": 3,
        "docs_per_s": None,
    }
    perfect = score_boundaries(docs, [[0, 10, 23], [0, 5]])
    assert (perfect.p, perfect.r, perfect.f) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError):
        score_boundaries(docs, [[0]])


def test_boundary_scores_empty_denominators() -> None:
    scores = BoundaryScores.from_counts(0, 0, 0)
    assert (scores.p, scores.r, scores.f) == (0.0, 0.0, 0.0)


def test_doc_sentence_starts() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    doc = nlp("First one. Second one! Third?")
    assert doc_sentence_starts(doc) == [0, 11, 23]


def test_to_spacy_examples_alignment() -> None:
    nlp = spacy.blank("en")
    text = "Hello world. This is it.  Next"
    # 26 is "Next"; 12 is the space before "This" (first token at/after it is "This").
    docs = [GoldDocument(text, [0, 12, 26]), GoldDocument("", [0])]
    examples = to_spacy_examples(nlp, docs)
    assert len(examples) == 2
    eg = examples[0]
    assert eg.predicted.text == text
    assert [t.text for t in eg.predicted] == [t.text for t in eg.reference]
    assert not eg.predicted.has_annotation("SENT_START")
    flags = [(t.text, t.is_sent_start) for t in eg.reference]
    assert flags == [
        ("Hello", True),
        ("world", False),
        (".", False),
        ("This", True),
        ("is", False),
        ("it", False),
        (".", False),
        (" ", False),
        ("Next", True),
    ]
    assert doc_sentence_starts(eg.reference) == [0, 13, 26]
    assert len(examples[1].reference) == 0


def test_evaluate_splitter_with_custom_splitter() -> None:
    docs = [
        GoldDocument("Hi there. How are you? Fine.", [0, 10, 23]),
        GoldDocument("One. Two.", [0, 5]),
    ]

    def split(text: str) -> List[int]:
        return [0] + [m.end() for m in re.finditer(r"[.!?]\s+", text)]

    scores = evaluate_splitter(split, docs)
    assert (scores.tp, scores.n_pred, scores.n_gold) == (3, 3, 3)
    assert scores.f == 1.0
    assert scores.docs_per_s is not None and scores.docs_per_s > 0


def test_unavailable_splitter_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def factory() -> SplitFn:
        import not_a_real_module_xyz  # noqa: F401

        raise AssertionError("unreachable")

    monkeypatch.setitem(SPLITTERS, "fake", factory)
    with pytest.raises(SplitterUnavailable, match="not_a_real_module_xyz"):
        load_splitter("fake")
    status = available_splitters()
    assert status["sentencizer"] is None
    assert status["fake"] is not None and "not_a_real_module_xyz" in status["fake"]


def test_splitter_rows_score_every_variant_or_say_why_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> SplitFn:
        import not_a_real_module_xyz  # noqa: F401

        raise AssertionError("unreachable")

    monkeypatch.setitem(SPLITTERS, "fake", missing)
    monkeypatch.setitem(SPLITTERS, "rule", lambda: lambda text: [0, 10])
    corpora = {
        "raw": [GoldDocument("Hi there. How are you?", [0, 10])],
        "no-punct": [GoldDocument("hi there how are you", [0, 9])],
    }
    rows = splitter_rows(["rule", "fake"], corpora)
    assert [(r["system"], r["variant"]) for r in rows[:2]] == [
        ("rule", "raw"),
        ("rule", "no-punct"),
    ]
    assert (rows[0]["f"], rows[1]["f"]) == (100.0, 0.0)
    # an unavailable splitter: a row for each of the corpora's variants, as an available one
    variants = [(r["system"], r["variant"]) for r in rows[2:]]
    assert variants == [("fake", "raw"), ("fake", "no-punct")]
    assert all("not_a_real_module_xyz" in r["unavailable"] for r in rows[2:])


@pytest.mark.parametrize("name", sorted(SPLITTERS))
def test_splitters_find_obvious_boundaries(name: str) -> None:
    try:
        split = load_splitter(name)
    except SplitterUnavailable as error:
        pytest.skip(str(error))
    text = "The cat sat on the mat. Then it left the house. It never came back."
    starts = split(text)
    assert boundary_positions(text, starts) == boundary_positions(text, [0, 24, 48])


def test_write_table(tmp_path: Path) -> None:
    rows = [
        {"system": "a", "variant": "raw", **BoundaryScores.from_counts(1, 2, 3).to_dict()},
        {"system": "b", "variant": "raw", "unavailable": "b is not installed"},
    ]
    md, js = tmp_path / "out" / "t.md", tmp_path / "out" / "t.json"
    write_table(rows, md, js, "Title")
    data = json.loads(js.read_text(encoding="utf8"))
    assert data == {"title": "Title", "rows": rows}
    lines = md.read_text(encoding="utf8").splitlines()
    assert lines[0] == "# Title"
    assert lines[2] == "| system | P | R | F1 | docs/s | variant |"
    assert lines[4] == "| a | 50.0 | 33.3 | 40.0 | \u2013 | raw |"
    assert lines[5] == "| b | n/a | n/a | n/a | n/a | raw |"
    assert "b is not installed" in lines[-1]


def test_sentencizer_on_ewt_test_matches_reference() -> None:
    docs = read_conllu_documents(EWT_TEST)
    assert len(docs) == 316
    assert sum(len(d.starts) for d in docs) == 2077
    split = load_splitter("sentencizer")
    scores = evaluate_splitter(split, docs)
    assert abs(100 * scores.f - 78.7) <= 1.0
    no_punct = read_conllu_documents(EWT_TEST, strip_final_punct=True)
    assert evaluate_splitter(split, no_punct).f < 0.05


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ('He said, "Don\'t go!" (really?)', "He said Don't go really"),
        ("e-mail me -- now...", "e-mail me now"),
        ("It costs $5 - or 10%.", "It costs 5 or 10"),
        ("snake_case and 'quoted' words", "snake case and quoted words"),
        ("?!", ""),
    ],
)
def test_strip_all_punctuation(sentence: str, expected: str) -> None:
    from spacy_attnseg.gold import strip_all_punctuation

    assert strip_all_punctuation(sentence) == expected


def test_lower_no_punct_variant_keeps_the_words_and_starts() -> None:
    """The speech-like variant has the raw documents' words (lowercased, punctuation
    gone) and a start at every sentence that kept a word."""
    from paper.evaluation import read_conllu_variants

    variants = read_conllu_variants(EWT_TEST)
    raw, bare = variants["raw"], variants["lower-no-punct"]
    assert len(raw) == len(bare)
    for a, b in zip(raw[:40], bare[:40], strict=True):
        # nothing but words (an apostrophe or hyphen inside a word stays)
        assert re.sub(r"[^\w\s'\u2019-]|_", " ", b.text) == b.text
        assert b.text == b.text.lower()
        words_a = re.findall(r"[^\W_]+", a.text.lower())
        assert re.findall(r"[^\W_]+", b.text) == words_a
        assert len(b.starts) <= len(a.starts) and b.starts[0] == 0


def test_split_texts_strips_and_drops_empty_sentences() -> None:
    text = "Hi there.  Bye. "
    assert split_texts(text, lambda t: [11]) == ["Hi there.", "Bye."]
    # a repeated start, a start at 0 and one at the end change nothing
    assert split_texts(text, lambda t: [0, 11, 11, len(t)]) == ["Hi there.", "Bye."]
    assert split_texts(text, lambda t: []) == ["Hi there.  Bye."]
    assert split_texts("   ", lambda t: [1]) == []


def test_machine_settings_record_the_load_before_and_after() -> None:
    settings = machine_settings([1.234, 0.5, 0.25])
    assert settings["load_average_before"] == [1.23, 0.5, 0.25]
    assert len(settings["load_average_after"]) == 3
    assert "CPUs, Python 3." in settings["machine"]


@settings(max_examples=50, deadline=None)
@given(
    sentences=st.lists(
        st.text(alphabet="ab .!?\u00e9", min_size=1, max_size=12).map(str.strip).filter(bool),
        min_size=1,
        max_size=6,
    ),
    separator=st.sampled_from([" ", "\n", "\n\n"]),
)
def test_join_sentences_round_trip(sentences: List[str], separator: str) -> None:
    """Sentences joined with any separator come back as they were, each starting where
    its text is."""
    from spacy_attnseg.gold import join_sentences

    doc = join_sentences(sentences, separator)
    assert doc.text == separator.join(sentences)
    assert [doc.text[s : s + len(t)] for s, t in zip(doc.starts, sentences, strict=True)] == (
        sentences
    )
    assert doc.sentences() == sentences
