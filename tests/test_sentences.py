"""Column scores -> separators -> sentence starts (spacy_attnseg.sentences)."""

from __future__ import annotations

import bisect
import csv
import io
import itertools
import random
import re
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy
import pytest
import spacy
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from spacy_attnseg import markup, topics
from spacy_attnseg.markup import (
    delimited_tables,
    fenced_code,
    html_blocks,
    in_code,
    literal_blocks,
    org_blocks,
    page_lines,
    running_lines,
    says_nothing,
    speaker,
    text_blocks,
)
from spacy_attnseg.sentences import (
    MARKED_HEADING,
    MIN_LIST_LINES,
    NOT_HEADING,
    PLAIN_HEADING,
    blocks_hold_one,
    candidate_mask,
    closing_sentences,
    continued_lines_hold,
    decide_starts,
    decision_targets,
    double_spaced,
    follows_final,
    hard_wrapped,
    heading_sentences,
    heads_prose,
    item_numbers,
    join_list_markers,
    layout_starts,
    lines_end_sentences,
    lower_starts_hold,
    next_starts,
    normalised_window_scores,
    page_furniture,
    paragraph_starts,
    placed_starts,
    quotes_open_lines,
    runs_hold_no_start,
    salutation_holds,
    salutations,
    salutes,
    sentence_scores,
    sentence_starts,
    sentence_texts,
    short_lines_end_sentences,
    signs_off,
    tags_open_lines,
    token_classes,
    unmarked_starts,
    validate_candidates,
)
from spacy_attnseg.tokenizer import MAX_RUN, create_tokenizer

#: A blank English pipeline, made once: making one per generated example costs more than
#: the rule under test.
EN = spacy.blank("en")
EWT_DEV = Path(__file__).resolve().parents[1] / "data" / "UD_English-EWT" / "en_ewt-ud-dev.conllu"
TEXT = (
    'He said "Stop!" Then he left?! OK. (See below.) "Why?" she asked.  '
    "Fine\u2026 \u201cYes.\u201d Done"
)
# Token indices of TEXT with spaCy's English tokenizer:
#  0 He  1 said  2 "  3 Stop  4 !  5 "  6 Then  7 he  8 left  9 ?  10 !  11 OK  12 .
# 13 (  14 See  15 below  16 .  17 )  18 "  19 Why  20 ?  21 "  22 she  23 asked  24 .
# 25 ' '  26 Fine  27 …  28 “  29 Yes  30 .  31 ”  32 Done


@pytest.fixture(scope="module")
def doc() -> Any:
    nlp = spacy.blank("en")
    doc = nlp(TEXT)
    assert [t.text for t in doc][:6] == ["He", "said", '"', "Stop", "!", '"']
    assert len(doc) == 33 and doc[25].is_space and doc[27].text == "\u2026"
    return doc


def test_next_starts(doc: Any) -> None:
    nxt = next_starts(doc)
    expected: Dict[int, int] = {
        4: 6,  # ! then the attached closing quote: next sentence at "Then"
        9: 11,  # ?! is one separator run
        10: 11,
        12: 13,  # an opening bracket starts the next sentence
        16: 18,  # .) closes; the quote after the space opens "Why?"
        20: 22,  # ?" closes
        24: 26,  # whitespace token stays in the ending sentence
        27: 28,  # an opening curly quote starts the next sentence
        30: 32,  # .” closes
        32: 33,  # the last token: end of doc
    }
    for i, start in expected.items():
        assert nxt[i] == start, (i, doc[i].text)
    # Words: the next sentence starts at the following token.
    assert nxt[0] == 1 and nxt[3] == 6 and nxt[1] == 2


def test_sentence_starts(doc: Any) -> None:
    separators = numpy.zeros(len(doc), dtype=bool)
    separators[[4, 9, 10, 16, 20, 27, 32]] = True
    starts = sentence_starts(doc, separators)
    assert numpy.flatnonzero(starts).tolist() == [0, 6, 11, 18, 22, 28]
    assert sentence_starts(doc, numpy.zeros(len(doc), dtype=bool)).tolist() == [True] + [False] * (
        len(doc) - 1
    )
    empty = EN("")
    assert sentence_starts(empty, numpy.zeros(0, dtype=bool)).tolist() == []


def test_sentence_scores(doc: Any) -> None:
    separators = numpy.zeros(len(doc), dtype=bool)
    separators[[4, 20]] = True
    for token, start in zip(doc, sentence_starts(doc, separators), strict=True):
        token.is_sent_start = bool(start)
    scores = numpy.zeros(len(doc))
    scores[4], scores[5], scores[20], scores[30] = 0.7, 0.2, 0.9, 0.3
    # Sentences: 0-5 (ends '!' '"'), 6-21 (ends '?' '"'), 22-32 (ends 'Done').
    assert sentence_scores(doc, scores.tolist()) == pytest.approx([0.7, 0.9, 0.0])


def test_candidate_mask(doc: Any) -> None:
    texts = [t.text for t in doc]
    any_mask = candidate_mask(doc, "any")
    assert any_mask.tolist() == [not t.isspace() for t in texts]
    punct = candidate_mask(doc, "punct")
    punct_texts = {'"', "!", "?", ".", "(", ")", "\u2026", "\u201c", "\u201d"}
    all_punct = [i for i, t in enumerate(texts) if t in punct_texts]
    assert [i for i, t in enumerate(doc) if t.is_punct] == all_punct
    # Opening brackets and quotes cannot end a sentence: '"' after a space (2, 18),
    # '(' (13) and '“' (28) are no candidates; the attached closing quotes (5, 21) are.
    assert numpy.flatnonzero(punct).tolist() == [i for i in all_punct if i not in (2, 13, 18, 28)]
    listed = candidate_mask(doc, [".", "?"])
    assert numpy.flatnonzero(listed).tolist() == [9, 12, 16, 20, 24, 30]


def test_validate_candidates() -> None:
    assert validate_candidates("any") == "any"
    assert validate_candidates("punct") == "punct"
    assert validate_candidates((".", "!")) == [".", "!"]
    for bad in ["foo", [], [1], None]:
        with pytest.raises(ValueError, match=r"\[E008\]"):
            validate_candidates(bad)  # type: ignore[arg-type]


def naive_normalised(colsums: numpy.ndarray) -> numpy.ndarray:
    out = numpy.zeros((colsums.shape[0], colsums.shape[2]))
    for w in range(colsums.shape[0]):
        summed = sum(colsums[w, h] for h in range(colsums.shape[1]))
        top = max(summed)
        if top > 0:
            out[w] = [value / top for value in summed]
    return out


def test_normalised_window_scores() -> None:
    rng = numpy.random.default_rng(0)
    colsums = rng.random((4, 3, 7)).astype("float32") * 5
    colsums[2] = 0.0  # a window without attention mass
    out = normalised_window_scores(colsums)
    assert out.shape == (4, 7)
    numpy.testing.assert_allclose(out, naive_normalised(colsums), rtol=1e-6)
    assert out[2].tolist() == [0.0] * 7
    assert numpy.allclose(out[[0, 1, 3]].max(axis=1), 1.0)


def test_normalised_scores_window_max_is_one(minilm_nlp: Any, sample_text: str) -> None:
    """On real captured column sums every window's top column scores exactly 1."""
    doc = minilm_nlp(sample_text)
    segmenter = minilm_nlp.get_pipe("attn_segmenter")
    colsums = segmenter.window_colsums(doc, segmenter.selected_heads())
    out = normalised_window_scores(colsums)
    numpy.testing.assert_allclose(out.max(axis=1), 1.0, rtol=1e-6)
    numpy.testing.assert_allclose(out, naive_normalised(numpy.asarray(colsums)), rtol=1e-5)


def test_real_text_separators(minilm_nlp: Any) -> None:
    """Through the embedded pipeline: closing quotes stay in the sentence they end, and
    an opening quote (which MiniLM's heads attend to strongly) ends no sentence."""
    text = (
        'The officer looked at the car and said "Stop right there!" Then he walked '
        'away slowly. She asked me "Why did you do that?" I did not answer her at all.'
    )
    doc = minilm_nlp(text)
    scores = {t.i: s for t, s in zip(doc, doc._.separator_scores, strict=True)}
    opening = [t.i for t in doc if t.text == '"' and t.nbor(-1).whitespace_]
    assert len(opening) == 2 and all(scores[i] == 0 for i in opening)
    expected = [
        'The officer looked at the car and said "Stop right there!"',
        "Then he walked away slowly.",
        'She asked me "Why did you do that?"',
        "I did not answer her at all.",
    ]
    # Whether the model's heads mark every one of these ends depends on the calibrated
    # heads; where a boundary is set, it falls after the closing quote, never before it
    # or after an opening quote: every predicted sentence joins consecutive expected ones.
    predicted = [s.text for s in doc.sents]
    assert len(predicted) >= 2
    position = 0
    for sentence in predicted:
        joined = ""
        while joined != sentence:
            assert position < len(expected), f"{sentence!r} splits an expected sentence"
            joined = f"{joined} {expected[position]}".strip()
            position += 1
            assert sentence.startswith(joined), f"{sentence!r} cuts inside {joined!r}"
    assert position == len(expected)


def test_layout_starts() -> None:
    nlp = spacy.blank("en")
    doc = nlp("\n\nTitle\n\nOne line.  Two\nthree \n\n")
    # 0 '\n\n'  1 Title  2 '\n\n'  3 One  4 line  5 .  6 ' '  7 Two  8 '\n'  9 three  10 '\n\n'
    assert [t.is_space for t in doc] == [1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1]
    predicted = numpy.zeros(len(doc), dtype="int32")
    predicted[[0, 6, 8]] = 1  # starts on whitespace: moved to the next word
    out = layout_starts(doc, predicted, paragraph_breaks=True)
    assert out.dtype == predicted.dtype and predicted[6] == 1  # a new array
    # the blank line before "Title" follows no text: no sentence of whitespace alone
    assert numpy.flatnonzero(out).tolist() == [0, 3, 7, 9]
    out = layout_starts(doc, predicted, paragraph_breaks=False)
    assert numpy.flatnonzero(out).tolist() == [0, 7, 9]
    # a start on trailing whitespace has no word to move to: dropped
    predicted[:] = 0
    predicted[10] = 1
    assert numpy.flatnonzero(layout_starts(doc, predicted, paragraph_breaks=True)).tolist() == [3]
    assert layout_starts(nlp(""), numpy.zeros(0, dtype="int32"), paragraph_breaks=True).size == 0


LIST = 'Buy milk and eggs\nCall the bank about the loan\n"Walk" the dog\nFinish the report'


def test_one_sentence_per_line() -> None:
    """A text whose line breaks often end sentences already has one sentence per line:
    every line break then ends one. In a text that is not hard-wrapped, as this list,
    0.3 of the line breaks is enough; none of them, or a single line break, leave the
    decisions as they are (``lines_end_sentences``); so does ``paragraph_breaks=False``."""
    nlp = spacy.blank("en")
    doc = nlp(LIST)
    lines = [0] + [t.i + 1 for t in doc if t.text == "\n"]
    assert [doc[i].text for i in lines] == ["Buy", "Call", '"', "Finish"]
    predicted = numpy.zeros(len(doc), dtype="int32")
    predicted[[lines[1], lines[2] + 1]] = 1  # the second start after the opening quote
    out = layout_starts(doc, predicted, paragraph_breaks=True)
    assert numpy.flatnonzero(out).tolist() == lines[1:]  # (the Doc's first token starts anyway)
    assert numpy.flatnonzero(layout_starts(doc, predicted, paragraph_breaks=False)).tolist() == [
        lines[1],
        lines[2],
    ]
    predicted[lines[2] + 1] = 0  # one line break of three, in a list: one sentence per line
    assert (
        numpy.flatnonzero(layout_starts(doc, predicted, paragraph_breaks=True)).tolist()
        == (lines[1:])
    )
    predicted[lines[1]] = 0  # none of them: this rule leaves them
    assert not lines_end_sentences(doc, predicted)[1:].any()
    # (the list's first line is short and unpunctuated, so each line below it starts one)
    assert (
        numpy.flatnonzero(layout_starts(doc, predicted, paragraph_breaks=True)).tolist()
        == (lines[1:])
    )
    two_lines = nlp("Buy milk\nCall the bank")
    predicted = numpy.zeros(len(two_lines), dtype="int32")
    predicted[3] = 1
    assert layout_starts(two_lines, predicted, paragraph_breaks=True).tolist() == predicted.tolist()


#: Lines, each with what a reader sees in it: whether it is short and ends without
#: punctuation (at most ten words, a letter, no closing mark; not a list item), and
#: whether it opens with a capital or a digit (after an opening bracket)
SHORT_LINES = {
    "Great Service": (True, True),
    "2 cups flour": (True, True),
    "(Optional) Notes": (True, True),
    "Dr Mcdonald is wonderful.": (False, True),
    "gone": (True, False),
    "library is closed.": (False, False),
    "Steps to follow:": (False, True),
    "Hello dear list members,": (False, True),
    "- open the valve": (False, False),
    "The committee met on Friday and agreed on the budget for next year": (False, True),
    ":)": (False, False),
}


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.sampled_from(sorted(SHORT_LINES)), min_size=2, max_size=8))
def test_short_lines_end_sentences(lines: list[str]) -> None:
    """With no start predicted, a line starts a sentence where the line above it starts
    one (the first does) and is short without punctuation, and the line itself opens
    with a capital or a digit: read top down from the labels of ``SHORT_LINES``, in any
    text of those lines that is not hard-wrapped; a list's item ends its sentence so
    too, where the text has a list (``MIN_LIST_LINES`` item lines or more). Nothing
    else starts."""
    text = "\n".join(lines)
    assume(not hard_wrapped(text))
    doc = EN(text)
    firsts = [0] + [t.i + 1 for t in doc if t.text == "\n"]
    listed = sum(line.startswith("- ") for line in lines) >= MIN_LIST_LINES
    heads = [True]
    for above, line in itertools.pairwise(lines):
        ends = SHORT_LINES[above][0] or (listed and above.startswith("- "))
        heads.append(heads[-1] and ends and SHORT_LINES[line][1])
    expected = [i for i, head in zip(firsts[1:], heads[1:], strict=True) if head]
    none = numpy.zeros(len(doc), dtype="int32")
    assert numpy.flatnonzero(short_lines_end_sentences(doc, none)).tolist() == expected


def test_short_lines_end_sentences_in_wrapped_text() -> None:
    """A short line without punctuation that starts no sentence ends none; given a
    start, it does. In hard-wrapped text a line that could not have taken the next
    line's first word was cut at the width and its sentence goes on (``"Board of
    Directors"``); a title that could have, over a paragraph, still ends its
    sentence."""
    starts = numpy.zeros
    doc = EN("The board met.\nlater in the day the\nBoard members left.")
    assert not short_lines_end_sentences(doc, starts(len(doc), "int32")).any()
    given_start = starts(len(doc), "int32")
    given_start[[t.i + 1 for t in doc if t.text == "\n"][0]] = 1
    assert numpy.flatnonzero(short_lines_end_sentences(doc, given_start)).tolist() == [
        [t.i for t in doc if t.text == "later"][0],
        [t.i for t in doc if t.text == "Board"][0],
    ]
    body = (
        "The committee met on Friday with the chairs of the three working groups and "
        "the Board of Directors, and agreed on the plan for the coming year after a long "
        "debate about the budget."
    )
    wrapped = textwrap.fill(body, 42)
    lines = wrapped.split("\n")
    cut = next(k for k, line in enumerate(lines) if line.startswith("Board"))
    assert len(lines[cut - 1].split()) <= 10
    text = "Minutes\n" + wrapped
    assert hard_wrapped(text)
    doc = EN(text)
    firsts = [t.i + 1 for t in doc if t.text == "\n"]
    # a start on the line above "Board of Directors", as the model might put one
    given_start = starts(len(doc), "int32")
    given_start[firsts[cut - 1]] = 1
    out = short_lines_end_sentences(doc, given_start)
    assert numpy.flatnonzero(out).tolist() == [firsts[0], firsts[cut - 1]]


#: Markdown wrapped by hand near a width, with some clauses on lines of their own, and
#: the sentences it holds; then a short list without markers
CLAUSE_LINES = (
    "If you cannot use a binary package,\n"
    "you need to install a compiler\n"
    "or the build tools of your platform.\n"
    "Without the extension, the pure Python code runs slowly.\n"
    "The reader takes bytes from a stream\n"
    "(or from a buffer filled through its `feed` method).\n"
    "Read the docstring for the options.\n"
    "msgpack also provides `dumps` and `loads`.\n"
    "It needs three more packages:\n"
    "numpy\n"
    "pandas\n"
    "[docs]: https://example.org/docs\n"
    "[api]: https://example.org/api"
)


def test_a_line_below_an_open_clause_continues_it(default_nlp: Any) -> None:
    """In text that opens its sentences with capitals, a line that opens in lower case
    (after an opening bracket or not) below a line of 20 characters or more that ends
    without a statement's end (a comma, a word) continues the sentence above, even
    where the line breaks end sentences; one below a line that ends a statement or a
    colon starts one (``"msgpack also..."``, ``"numpy"``), and so do the short lines of
    a list (``"pandas"``) and link reference definitions. Text written without
    capitals, or without punctuation, keeps a sentence a line (``lines_end_sentences``,
    then ``continued_lines_hold``, as ``line_rules`` runs them)."""
    lines = CLAUSE_LINES.split("\n")
    sentences = [" ".join(lines[0:3]), lines[3], " ".join(lines[4:6]), *lines[6:]]
    for text in (CLAUSE_LINES, CLAUSE_LINES.lower(), re.sub(r"[.!?]", "", CLAUSE_LINES)):
        doc = EN(text)
        firsts = [0] + [t.i + 1 for t in doc if t.text == "\n"]
        predicted = numpy.zeros(len(doc), dtype="int32")
        predicted[[firsts[k] for k in (3, 4, 6)]] = 1  # 3 line breaks of 12 end a sentence
        ended = lines_end_sentences(doc, predicted)
        out = numpy.flatnonzero(continued_lines_hold(doc, ended, token_classes(doc))).tolist()
        continued = (1, 2, 5) if text == CLAUSE_LINES else ()
        assert out == [i for k, i in enumerate(firsts) if k > 0 and k not in continued]
    found = [s.text.strip().replace("\n", " ") for s in default_nlp(CLAUSE_LINES).sents]
    assert found == sentences


def test_a_start_on_a_line_that_continues_a_clause_goes() -> None:
    """A sentence start the model put on a line that continues the clause above it (in
    lower case, below a line of 20 characters or more without a statement's end) goes,
    whether or not the text has a sentence a line; the starts on the other lines stay.
    Text written without capitals, or without punctuation, keeps every start."""
    for text in (CLAUSE_LINES, CLAUSE_LINES.lower(), re.sub(r"[.!?]", "", CLAUSE_LINES)):
        doc = EN(text)
        firsts = [0] + [t.i + 1 for t in doc if t.text == "\n"]
        predicted = numpy.zeros(len(doc), dtype="int32")
        predicted[firsts] = 1
        out = numpy.flatnonzero(continued_lines_hold(doc, predicted, token_classes(doc)))
        continued = (1, 2, 5) if text == CLAUSE_LINES else ()
        assert out.tolist() == [i for k, i in enumerate(firsts) if k not in continued]
        assert predicted[firsts].all()  # (the caller's array is left as it was)


def test_a_start_in_lower_case_without_punctuation_before_it_goes() -> None:
    """In text that opens its sentences with capitals, a start the model put inside a
    line on a word in lower case (after an opening bracket too) that no final
    punctuation precedes goes; one after final punctuation, one at a line's start, one
    on a capital, and every start in text written in lower case stay."""
    text = (
        "Nice teachers good school. They are kind (see the list) to all. The bus is late. "
        "We waited. It rained. Then we left. Really? yes, and the staff help.\nthe lines "
        "below are another rule's. Options match here."
    )
    doc = EN(text)
    at = {t.text: t.i for t in doc}  # (the words looked up below occur once)
    the_line = max(t.i for t in doc if t.text == "the" and doc[t.i - 1].text == "\n")
    chosen = [at["good"], at["They"], at["("], at["yes"], the_line, at["match"]]
    predicted = numpy.zeros(len(doc), dtype="int32")
    predicted[chosen] = 1
    out = lower_starts_hold(doc, predicted, token_classes(doc))
    assert numpy.flatnonzero(out).tolist() == [at["They"], at["yes"], the_line]
    assert predicted[chosen].all()  # (the caller's array is left as it was)
    lower = EN(text.lower())
    kept = lower_starts_hold(lower, predicted, token_classes(lower))
    assert kept.tolist() == predicted.tolist()


def test_a_review_run_on_is_one_sentence(default_nlp: Any) -> None:
    """The model split an EWT dev review at ``"Nice teachers | good school"``: no
    punctuation precedes ``"good"``, and the review opens its other sentences with
    capitals. The gold sentence is whole, and so is the pipeline's."""
    from paper.evaluation import read_conllu_documents

    review = next(d for d in read_conllu_documents(EWT_DEV) if "Nice teachers" in d.text)
    text = review.text
    good = text.index("Nice teachers good school") + len("Nice teachers ")
    assert good not in review.starts
    doc = default_nlp(text)
    assert good not in [s.start_char for s in doc.sents]
    assert text.index("Nice teachers") in [s.start_char for s in doc.sents]


#: a manual page as ``man`` writes it: titles over indented text, an option list, and a
#: paragraph's last word wrapped onto a line of its own
MANUAL_PAGE = (
    "NAME\n       sift - search a tree of files\n\nSYNOPSIS\n       sift [OPTION]... PATTERN"
    " [DIR]...\n\nDESCRIPTION\n       Search each DIR for files whose contents match PATTERN."
    " Print the names of the\n       matching files, one per line, in the order in which they"
    " are found on the\n       disk. Options that take a value accept it after an equals sign"
    " or as the\n       next argument, and long options may be abbreviated where that is\n"
    "       unambiguous.\n\n"
    + "".join(
        f"       -{c}, --{w}\n              {d}\n\n"
        for c, w, d in [
            ("a", "all", "do not skip files whose names start with a dot"),
            ("b", "brief", "print one line for each file"),
            ("c", "count", "print only the number of matching files"),
            ("d", "depth=N", "descend at most N levels below the starting point"),
            ("f", "force", "overwrite the output file without asking"),
            ("q", "quiet", "print nothing but errors"),
        ]
    )
    + "       Mandatory  arguments  to  long  options are mandatory for short options\n"
    "       too.\n\nAUTHOR\n       Written by Ann Example.\n"
)


def test_a_wrapped_last_word_stays_with_its_sentence(default_nlp: Any) -> None:
    """On a manual page, the model starts a sentence on the word ``"too."`` that the
    page wrapped onto a line of its own; it continues the sentence above."""
    doc = default_nlp(MANUAL_PAGE)
    sentences = [s.text.strip() for s in doc.sents]
    assert not [s for s in sentences if s.startswith("too")]
    assert any(s.startswith("Mandatory") and s.endswith("too.") for s in sentences)


def test_manual_titles() -> None:
    """A manual page's section titles: a line of capitals at the margin directly above
    an indented line, two or more on the page. Not a title: a line in mixed case or with
    punctuation, one with a blank line below it, one inside a fenced code block, nor a
    single such line in a text (a word in capitals over a quotation)."""
    from spacy_attnseg.sentences import manual_titles

    found = manual_titles(MANUAL_PAGE)
    assert [MANUAL_PAGE[a:b].split("\n")[0] for a, b in found] == [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "AUTHOR",
    ]
    assert [MANUAL_PAGE[b:].split()[0] for _, b in found] == ["sift", "sift", "Search", "Written"]
    body = "\n       Search each DIR for files.\n\n"
    assert manual_titles("NAME" + body + "Usage" + body) == []
    assert manual_titles("NAME" + body + "NOTE:" + body) == []
    assert manual_titles("NAME" + body + "USAGE\n" + body) == []
    assert manual_titles("NAME" + body + "```\nUSAGE" + body + "```\n") == []
    assert manual_titles("She said:\nSTOP\n    the car, now.") == []
    assert len(manual_titles("NAME" + body + "USAGE" + body)) == 2


def test_a_manual_page_is_read_by_its_sections(default_nlp: Any) -> None:
    """Each section title of a manual page is a sentence of its own and a heading: a
    chunk starts at each, and every chunk carries the title of the section it sits in
    (computed here from the text: the last title at or above the chunk's start)."""
    import spacy_attnseg

    doc = default_nlp(MANUAL_PAGE)
    titles = ["NAME", "SYNOPSIS", "DESCRIPTION", "AUTHOR"]
    sentences = [s.text.strip() for s in doc.sents]
    assert all(title in sentences for title in titles)
    at = {MANUAL_PAGE.index(title + "\n"): title for title in titles}
    records = list(spacy_attnseg.chunks(default_nlp, [MANUAL_PAGE]))
    assert set(at) <= {record["start"] for record in records}
    for record in records:
        above = [title for a, title in sorted(at.items()) if a <= record["start"]]
        assert record["headings"] == [above[-1]]


def test_three_lines_end_sentences_unless_hard_wrapped(default_nlp: Any) -> None:
    """Two line breaks, one of them already ending a sentence: every line ends one in
    text that is not hard-wrapped; text that looks hard-wrapped needs three line
    breaks. The default pipeline on a short note: a sentence per line."""
    nlp = spacy.blank("en")
    note = nlp("Meeting notes\nBudget approved\nNext steps pending review")
    assert not hard_wrapped(note.text)
    breaks = [t.i + 1 for t in note if t.text == "\n"]
    predicted = numpy.zeros(len(note), dtype="int32")
    predicted[breaks[0]] = 1
    assert numpy.flatnonzero(lines_end_sentences(note, predicted)).tolist() == breaks
    wrapped = nlp(textwrap.fill("the committee met on friday and agreed on the plan " * 2, 40))
    assert hard_wrapped(wrapped.text)
    breaks = [t.i + 1 for t in wrapped if t.text == "\n"]
    assert len(breaks) == 2
    predicted = numpy.zeros(len(wrapped), dtype="int32")
    predicted[breaks[0]] = 1
    assert lines_end_sentences(wrapped, predicted).tolist() == predicted.tolist()
    doc = default_nlp(note.text)
    assert [s.text.strip() for s in doc.sents] == note.text.split("\n")


def test_hard_wrapped() -> None:
    """Real sentences (EWT dev documents of four or more) hard-wrapped at any width are
    hard-wrapped; written one per line, nearly all are not; no line break, not either."""
    from paper.evaluation import read_conllu_documents

    docs = [d for d in read_conllu_documents(EWT_DEV)[:120] if len(d.starts) >= 4]
    assert len(docs) >= 40
    for width in (40, 72, 100):
        texts = [textwrap.fill(d.text, width) for d in docs]
        assert all(hard_wrapped(t) for t in texts if t.count("\n") >= 3)
    per_line = [hard_wrapped("\n".join(s.strip() for s in d.sentences())) for d in docs]
    assert sum(per_line) <= len(docs) * 0.05
    assert not hard_wrapped(docs[0].text.replace("\n", " "))


def wrapped_markdown(sentences: Any, width: int = 72) -> str:
    """Two hard-wrapped paragraphs of ``sentences`` around a Markdown table of long rows
    and a fenced code block."""
    half = len(sentences) // 2
    rows = "\n".join(
        f"| `{name}` | the setting chosen on the dev data for each of the models we "
        f"trained | a long cell with words and numbers such as 3.5 in it |"
        for name in ("alpha", "beta", "gamma", "delta")
    )
    paragraphs = [
        textwrap.fill(" ".join(part), width, break_on_hyphens=False, break_long_words=False)
        for part in (sentences[:half], sentences[half:])
    ]
    return (
        f"## Notes\n\n{paragraphs[0]}\n\n| name | meaning | comment |\n|---|---|---|\n{rows}"
        f"\n\n```python\nx = load(path)\nprint(x)\n```\n\n{paragraphs[1]}"
    )


def test_tables_and_code_do_not_decide_whether_prose_is_wrapped(default_nlp: Any) -> None:
    """A Markdown table's long rows and a code block's lines are the writer's lines: the
    hard-wrapped paragraphs around them are still hard-wrapped (EWT dev documents of
    six sentences or more; one of them, whose prose holds a long URL, is not), and the
    default pipeline starts hardly a sentence at a line break inside one of their
    sentences."""
    from paper.evaluation import read_conllu_documents

    docs = [d for d in read_conllu_documents(EWT_DEV)[:120] if len(d.starts) >= 6]
    assert len(docs) >= 20
    texts = [wrapped_markdown(d.sentences()) for d in docs]
    assert sum(map(hard_wrapped, texts)) >= 0.95 * len(texts)
    inside = started = 0
    for doc, gold in zip(default_nlp.pipe(texts), docs, strict=True):
        words = {s.split()[0] for s in gold.sentences()}
        for token in doc[1:]:
            if doc[token.i - 1].text == "\n" and not token.text.startswith(("|", "`", "print")):
                inside += token.text not in words
                started += token.text not in words and token.is_sent_start
    assert inside >= 100
    assert started <= 0.05 * inside


@pytest.mark.parametrize("n_lines", [3, 4, 8])
def test_lines_of_records_are_not_hard_wrapped(default_nlp: Any, n_lines: int) -> None:
    """A log whose lines open with a time stamp (each next line's first word too long
    to have fitted on the line before, as in hard-wrapped text) is lines of records:
    the default pipeline gives one sentence a line, the time stamp kept with its
    message."""
    messages = [
        "INFO started server",
        "WARN disk almost full",
        "ERROR failed to write file",
        "INFO retrying in 5 seconds",
        "INFO connected to database",
        "DEBUG query took 12 ms",
        "INFO request served",
        "WARN slow response from upstream",
    ]
    lines = [f"2024-01-01 12:00:0{i} {m}" for i, m in enumerate(messages[:n_lines])]
    text = "\n".join(lines) + "\n"
    assert not hard_wrapped(text)
    assert [s.text.strip() for s in default_nlp(text).sents] == lines


def test_wrapped_lines_opening_with_numbers_of_other_shapes_stay_hard_wrapped() -> None:
    """Hard-wrapped prose whose lines open with numbers of different shapes (a
    signature block) is not lines of records."""
    signature = (
        "Sara Shackleton Enron Wholesale Services\n1400 Smith Street, EB3801a Houston, TX\n"
        "77002 Ph: (713) 853-5620 Fax: (713)\n646-3490 Thanks. SS"
    )
    assert hard_wrapped(signature)


def test_unwrapped_lines_need_a_smaller_share() -> None:
    """With a third of its line breaks already ending sentences, a text whose lines
    are the writer's gets a start after every line break; the same share in a
    hard-wrapped text changes nothing."""
    nlp = spacy.blank("en")
    lines = ["the meeting moved to friday", "bring the report", "lunch is at noon"]
    unwrapped = nlp("\n".join(lines * 2))
    breaks = [t.i + 1 for t in unwrapped if t.text == "\n"]
    predicted = numpy.zeros(len(unwrapped), dtype="int32")
    predicted[breaks[:2]] = 1  # 2 of 5
    assert numpy.flatnonzero(lines_end_sentences(unwrapped, predicted)).tolist() == breaks
    wrapped = nlp(textwrap.fill(" ".join(lines * 3), 24))
    assert hard_wrapped(wrapped.text) and not hard_wrapped(unwrapped.text)
    breaks = [t.i + 1 for t in wrapped if t.text == "\n"]
    predicted = numpy.zeros(len(wrapped), dtype="int32")
    predicted[breaks[: len(breaks) // 3 + 1]] = 1  # over a third, under half
    assert (predicted[breaks] != 0).mean() < 0.5
    assert lines_end_sentences(wrapped, predicted).tolist() == predicted.tolist()


def test_short_lines_hold_their_sentences() -> None:
    """In text written one sentence per line, a start predicted inside a short line
    without final punctuation before it is dropped; one after final punctuation, on a
    list item, inside a line of 100 characters or more, or in hard-wrapped text where
    under 80% of the line breaks start a sentence, stays."""
    lines = ["buy milk today", "walk the dog twice", "email Sarah. Then call", "read it"]
    long_line = "the committee met on friday " * 4 + "and everyone agreed on the plan"
    doc = EN("\n".join([*lines, "tasks • wash up • iron", long_line]))
    assert len(long_line) >= 100
    firsts = [0] + [t.i + 1 for t in doc if t.text == "\n"]
    first = {t.text: t.i for t in reversed(doc)}
    inside = [
        first["the"],  # "walk | the dog twice": dropped
        first["Then"],  # after "email Sarah.": kept
        [t.i for t in doc if t.text == "\u2022"][1],  # a bullet item: kept
        first["everyone"],  # in the long line: kept
    ]
    assert [doc[i - 1].text for i in inside] == ["walk", ".", "up", "and"]
    predicted = numpy.zeros(len(doc), dtype="int32")
    predicted[firsts] = 1
    predicted[inside] = 1
    got = numpy.flatnonzero(lines_end_sentences(doc, predicted)).tolist()
    assert got == sorted(firsts + inside[1:])
    # hard-wrapped text: the lines need not be the writer's, so a start inside one
    # stays unless nearly every line break starts a sentence (a list of like lines)
    wrapped = EN(textwrap.fill(" ".join(["it rained and we left"] * 8), 24))
    assert hard_wrapped(wrapped.text)
    breaks = [t.i + 1 for t in wrapped if t.text == "\n"]
    we = [t.i for t in wrapped if t.text == "we" and t.i not in breaks]  # inside a line
    for n_started, kept in ((len(breaks) * 3 // 4, True), (len(breaks), False)):
        predicted = numpy.zeros(len(wrapped), dtype="int32")
        predicted[[0, *breaks[:n_started], we[0]]] = 1
        got = lines_end_sentences(wrapped, predicted)
        assert got[breaks].all() and bool(got[we[0]]) is kept


def test_a_list_without_punctuation_keeps_one_sentence_a_line(default_nlp: Any) -> None:
    """The default pipeline on a to-do list written one item per line, without
    punctuation: one sentence per line (the model alone splits some lines)."""
    items = [
        "Buy milk today",
        "Call the bank about the loan",
        "Walk the dog twice",
        "Read chapter 3 of the book",
        "Email Sarah about the party",
    ]
    doc = default_nlp("\n".join(items))
    assert [s.text.strip() for s in doc.sents] == items
    text = "\n".join(f"Line {i} is here" for i in range(12))
    assert len(list(default_nlp(text).sents)) == 12


def test_a_start_inside_a_short_line_counts_for_its_line() -> None:
    """A text whose line breaks start no sentence, but where the model starts one inside
    a short line without punctuation before it: that start belongs at its line's start,
    so the text has one sentence per line. A start after final punctuation does not
    count, nor does one in hard-wrapped text; a list too narrow to have been wrapped is
    not hard-wrapped."""
    note = EN("Buy milk\nWalk the dog\nCall mom")
    assert not hard_wrapped(note.text)
    firsts = [0] + [t.i + 1 for t in note if t.text == "\n"]
    predicted = numpy.zeros(len(note), dtype="int32")
    predicted[[0, [t.i for t in note if t.text == "the"][0]]] = 1  # "Walk | the dog"
    assert numpy.flatnonzero(lines_end_sentences(note, predicted)).tolist() == firsts
    marked = EN("buy milk\nemail Sarah. Then call\nwalk the dog")
    predicted = numpy.zeros(len(marked), dtype="int32")
    predicted[[0, [t.i for t in marked if t.text == "Then"][0]]] = 1
    assert lines_end_sentences(marked, predicted).tolist() == predicted.tolist()
    wrapped = EN(textwrap.fill(" ".join(["it rained and we left"] * 8), 24))
    assert hard_wrapped(wrapped.text)
    inside = [t.i for t in wrapped if t.text == "we" and not t.nbor(-1).is_space]
    breaks = [t.i + 1 for t in wrapped if t.text == "\n"]
    assert len(inside) == len(breaks) + 1  # one in every line: credited, every line would start
    predicted = numpy.zeros(len(wrapped), dtype="int32")
    predicted[[0, *inside]] = 1
    assert lines_end_sentences(wrapped, predicted).tolist() == predicted.tolist()


MARKDOWN = (
    "Intro text here. Run it:\n\n"
    "```bash\npython -m tool run. Then more\nls -la\n```\n\n"
    "After the code. ## not a heading\n\n"
    "## Usage notes and more\n\n"
    "| a | b |\n|---|:---:|\n| one. Two | three |\n\n"
    "| no | delimiter |\n| so | prose |\n\n"
    "```\n| a | b |\n|---|---|\n"  # a fence that never closes, a table inside it
)


def test_text_blocks() -> None:
    """Fenced code (to its closing fence, or to the end), Markdown heading lines and
    Markdown tables (with a delimiter row, outside code) are blocks; a ``##`` inside a
    line and rows without a delimiter row are not."""
    got = [MARKDOWN[a:b] for a, b in text_blocks(MARKDOWN)]
    assert got == [
        "```bash\npython -m tool run. Then more\nls -la\n```",
        "## Usage notes and more",
        "| a | b |\n|---|:---:|\n| one. Two | three |",
        "```\n| a | b |\n|---|---|\n",
    ]
    assert text_blocks("Plain prose. With | a bar and ## marks.") == []


def test_blocks_hold_one_sentence() -> None:
    """With a start predicted on every token, each block keeps only the start on its
    first token, and the first token after it starts a sentence."""
    doc = EN(MARKDOWN)
    predicted = numpy.ones(len(doc), dtype="int32")
    got = blocks_hold_one(doc, predicted, token_classes(doc))
    for a, b in text_blocks(doc.text):
        inside = [t.i for t in doc if a <= t.idx < b and not t.is_space]
        assert got[inside[0]] == 1 and not got[inside[1:]].any()
        after = [t.i for t in doc if t.idx >= b and not t.is_space]
        assert not after or got[after[0]] == 1
    outside = [t.i for t in doc if not any(a <= t.idx < b for a, b in text_blocks(doc.text))]
    assert got[outside].tolist() == predicted[outside].tolist()
    # the token after a block keeps with it where it closes the block's sentence
    closed = EN("| a | b |\n|---|---|\n| c | d |\n)")
    got = blocks_hold_one(closed, numpy.zeros(len(closed), dtype="int32"), token_classes(closed))
    assert numpy.flatnonzero(got).tolist() == [0]


def test_markdown_blocks_are_sentences_and_long_ones_chunk_at_rows(default_nlp: Any) -> None:
    """The default pipeline on a Markdown page: a code block, a heading line and a
    table are one sentence each; a table longer than ``max_tokens`` is chunked at its
    row starts, and the chunks join to the text."""
    from spacy_attnseg import load_pipeline
    from spacy_attnseg.records import chunks

    rows = "\n".join(f"| item {i} | the valve was checked. Then it was closed |" for i in range(30))
    text = (
        "## Checking the valves\n\nEach valve is checked once a week. The results go in "
        "a table.\n\n| item | result |\n|---|---|\n" + rows + "\n\n"
        "```python\nfor valve in valves: check(valve). log(valve)\nprint('done')\n```\n\n"
        "The table is kept for a year."
    )
    doc = default_nlp(text)
    sents = [s.text.strip() for s in doc.sents]
    assert "## Checking the valves" in sents
    assert [s for s in sents if s.startswith("| item |")] == [
        text[text.index("| item |") : text.index(rows) + len(rows)]
    ]
    assert [s for s in sents if s.startswith("```")][0].endswith("print('done')\n```")
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    records = list(chunks(nlp, [text]))
    assert "".join(r["text"] for r in records) == text
    assert all(r["n_tokens"] <= 64 for r in records)
    table = (text.index("| item |"), text.index(rows) + len(rows))
    starts = [r["start"] for r in records if table[0] < r["start"] < table[1]]
    assert len(starts) >= 2 and all(text[s - 1] == "\n" for s in starts)


def test_delimited_tables_are_sentences_and_long_ones_chunk_at_rows(default_nlp: Any) -> None:
    """A CSV table (as Python's ``csv`` writes it: quoted fields with commas inside,
    "\\r\\n" line ends) and a TSV one in text are one sentence each, whatever the
    punctuation in their cells (before, sentences ran from one row's last cell into the
    next row); one longer than ``max_tokens`` is chunked at its row starts. Prose with
    numbers (``"1,000,000"``), lists of words, or two rows only hold no table."""
    from spacy_attnseg import load_pipeline
    from spacy_attnseg.records import chunks

    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "site", "note"])
    for i in range(30):
        note = "Seal replaced, valve closed. Checked again." if i % 2 else "Fine."
        writer.writerow([i, ["north", "south"][i % 2], note])
    table = buffer.getvalue().rstrip()
    tsv = "name\tcity\nAnna\tOslo\nBen\tRome"
    text = f"The log of the valves follows.\n\n{table}\n\nThe staff:\n\n{tsv}\n\nThat is all."
    assert [text[a:b] for a, b in text_blocks(text)] == [table, tsv]
    prose = (
        "The plant cost 1,000,000,000 dollars,\n2,000,000 euros and 3,000,000 pounds,\n"
        "apples,pears,plums\nand more;then less;again\nx,y,z\n1,2,3"
    )
    assert text_blocks(prose) == []
    sents = [s.text.strip() for s in default_nlp(text).sents]
    assert sents == ["The log of the valves follows.", table, "The staff:", tsv, "That is all."]
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    records = list(chunks(nlp, [text]))
    assert "".join(r["text"] for r in records) == text
    assert all(r["n_tokens"] <= 64 for r in records)
    span = (text.index(table), text.index(table) + len(table))
    starts = [r["start"] for r in records if span[0] < r["start"] < span[1]]
    assert len(starts) >= 2 and all(text[s - 1] == "\n" for s in starts)


def test_csv_cells_with_line_breaks_stay_in_their_row(default_nlp: Any) -> None:
    """A CSV table whose quoted cells hold line breaks (a blank line too, as Python's
    ``csv`` writes a note of two paragraphs) is one sentence, from its header to its last
    row, and Python's ``csv`` reads the same rows back from it (before, the table was
    found nowhere and its notes' lines were sentences running into the next row); a
    stray quote in the prose above it does not take the table in. One longer than
    ``max_tokens`` is chunked at its rows' starts, not at a line inside a cell."""
    from spacy_attnseg import load_pipeline
    from spacy_attnseg.records import chunks

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    rows = [["id", "site", "note"]]
    rows += [[str(i), "north", "Seal replaced.\nValve closed."] for i in range(1, 4)]
    rows += [["4", "south", "Leak found.\n\nSent back, twice."], ["5", "west", "Fine"]]
    writer.writerows(rows)
    table = buffer.getvalue().rstrip()
    text = f'The log reads "as written\nbelow.\n\n{table}\n\nThat is all.'
    assert [text[a:b] for a, b in text_blocks(text)] == [table]
    assert list(csv.reader(io.StringIO(table))) == rows
    sents = [s.text.strip() for s in default_nlp(text).sents]
    assert table in sents and sents[-1] == "That is all."
    # a table longer than a chunk is cut at its rows' starts, never inside a cell
    buffer = io.StringIO()
    writer, starts = csv.writer(buffer, lineterminator="\n"), []
    for i in range(40):
        starts.append(buffer.tell())
        writer.writerow([i, "north", "Seal replaced.\nValve closed.\nChecked, twice."])
    table = buffer.getvalue()
    text = f"The log follows.\n\n{table}\nThat is all."
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    records = list(chunks(nlp, [text]))
    assert "".join(r["text"] for r in records) == text
    assert all(r["n_tokens"] <= 64 for r in records)
    inside = [r["start"] - len("The log follows.\n\n") for r in records[1:]]
    inside = [s for s in inside if 0 < s < len(table)]
    assert len(inside) >= 2 and set(inside) <= set(starts)


CELL = st.text(alphabet='ab .,"\n', max_size=8).map(lambda cell: f"x{cell}y")


@settings(max_examples=150, deadline=None)
@given(
    columns=st.integers(3, 5),
    cells=st.lists(st.lists(CELL, min_size=5, max_size=5), min_size=3, max_size=6),
)
def test_delimited_tables_find_what_csv_writes(columns: int, cells: list[list[str]]) -> None:
    """Any table of three rows or more that Python's ``csv`` writes (cells with commas,
    quotes, full stops and line breaks, quoted where they need it) between paragraphs
    of prose is one delimited table, from its first character to its last."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(row[:columns] for row in cells)
    table = buffer.getvalue().rstrip("\n")
    text = f"Some prose, then the table.\n\n{table}\n\nMore prose."
    start = text.index(table)
    assert delimited_tables(text) == [(start, start + len(table))]


def test_rest_directives_are_sentences(default_nlp: Any) -> None:
    """A reStructuredText directive, comment or target line (``".. note::"``, ``".. _x:"``)
    is one sentence, outside code; two dots inside a line are not one."""
    text = "Intro text here.\n\n.. code-block:: python\n\n   x = 1\n\n.. _label:\n\nMore text."
    assert [text[a:b] for a, b in text_blocks(text)] == [".. code-block:: python", ".. _label:"]
    assert text_blocks("```\n.. not a directive\n```") == [(0, 26)]  # the code block
    assert text_blocks("He paused.. and then went on.") == []
    sents = [s.text.strip() for s in default_nlp(".. note::\n\n   This is a note.\n\nBack.").sents]
    assert sents == [".. note::", "This is a note.", "Back."]


# Three patterns in their plain form, which reads a long line once per character (or
# per way of sharing out its spaces), and the characters their texts are drawn from:
# UNDERLINED, any line with a character that is not white space, the very next line a
# run of three or more of one adornment character; MEDIAWIKI, a run of one to six "=",
# text without "=" that is not all white space, the same run; PAGE_NUMBER, a footer's
# "Page 3 of 10"
AS_READ = {
    "UNDERLINED": re.compile(
        f"{markup.IN_LINE}*\\S{markup.IN_LINE}*{markup.NEXT_LINE}[ \t]*([=\\-~^*#+])\\1{{2,}}[ \t]*"
    ),
    "MEDIAWIKI": re.compile(
        f"(=(?: ?=){{0,5}}) ?[^={markup.LINE_END_CHARS}]*[^=\\s][^={markup.LINE_END_CHARS}]*? ?\\1"
    ),
    "PAGE_NUMBER": re.compile(
        "[ \t]*(?:(?:[Pp]age|[Pp]\\.|[Pp]g\\.?)[ \t]*)?[-–—]?[ \t]*"
        f"(?:\\d{{1,4}}|{markup.ROMAN_PAGE})"
        "[ \t]*[-–—]?(?:[ \t]*(?:of|/)[ \t]*\\d{1,4})?[ \t]*"
    ),
}
ALPHABETS = {
    "UNDERLINED": "aZ. \t\n\r\x0c\u2028=-~#",
    "MEDIAWIKI": "aZ. \t\n\r\x0c\u2028=-~#",
    "PAGE_NUMBER": "Pagep.g 0123ivx\t-–/of",
}


@pytest.mark.parametrize("name", sorted(AS_READ))
@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_line_patterns_match_what_they_read(name: str, data: Any) -> None:
    """``markup.UNDERLINED``, ``markup.MEDIAWIKI`` and ``markup.PAGE_NUMBER``, written so
    that a long line is read once (a long line without punctuation took seconds), match
    exactly the texts their plain forms match, with the same groups."""
    text = data.draw(st.text(alphabet=ALPHABETS[name], max_size=16))
    found, plain = getattr(markup, name).fullmatch(text), AS_READ[name].fullmatch(text)
    assert (found is None) == (plain is None)
    assert found is None or plain is None or found.groups() == plain.groups()


def test_underlined_headings_are_sentences(default_nlp: Any) -> None:
    """A line of text underlined as Markdown and reStructuredText write a heading is one
    sentence, also where the text follows on the next line; the last line of a
    paragraph or a letter above a rule, a rule under a rule, code and a ``"#"`` heading
    are not."""
    text = "Title\n=====\nBody text. More body.\n\nOther\n-----\nSecond body here."
    assert [text[a:b] for a, b in text_blocks(text)] == ["Title\n=====", "Other\n-----"]
    assert text_blocks("Some prose that\nwraps here\n-----\nand on.") == []
    assert text_blocks("=====\n=====\n\ntext") == []
    # a letter's last line above a divider
    assert text_blocks("Thank you.\n-----------\nJo") == []
    assert text_blocks("thank you\n***********\njo") == []
    assert text_blocks("```\nTitle\n=====\n```") == [(0, 19)]  # the code block
    assert text_blocks("    Title\n    =====\n\ntext") == []  # indented code
    assert text_blocks("# Title\n=====\n\ntext") == [(0, 7)]  # the "#" line
    sents = [s.text.strip() for s in default_nlp(text).sents]
    assert sents[:2] == ["Title\n=====", "Body text."]
    assert "Other\n-----" in sents


@pytest.mark.parametrize(
    "text,expected",
    [
        ("---", True),
        ("* * *\n", True),
        ("</div></body>", True),
        ("<!DOCTYPE html>", True),
        (".. _label:", True),
        (".. highlight:: c\n\n", True),
        ("<p>Text", False),
        ("Part 2", False),
        (":-)", True),
        ("He paused.. and went on.", False),
        ("<ann@example.org>", True),
    ],
)
def test_what_says_nothing_of_a_topic(text: str, expected: bool) -> None:
    assert says_nothing(text) is expected


LITERAL_PAGE = (
    "Sockets\n=======\n\n"
    "The client makes its socket like this::\n\n"
    "   # create an INET, STREAMing socket\n"
    "   s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n\n"
    "   # now connect to the web server on port 80\n"
    '   s.connect(("www.python.org", 80))\n\n'
    "When the connect completes, the socket can send a request for the page. The "
    "server answers with the page and closes the connection.\n"
)


def test_a_literal_block_is_code(default_nlp: Any) -> None:
    """A reStructuredText literal block (the lines indented under a line that ends with
    ``"::"`` and a blank line, to the first line that is not) is code: its ``"# ..."``
    comments, indented by three spaces, are no Markdown headings (they started
    segments and ended chunks), and the block is one sentence, as a fenced one is; the
    text after it, and a block at no deeper indentation, are not code."""
    page = LITERAL_PAGE
    code_start = page.index("   # create")
    code_end = page.index(")\n\nWhen") + 1
    assert literal_blocks(page) == [(code_start, code_end)]
    assert literal_blocks("  Here::\n\n  not deeper\n") == []
    last = "End::\r\n\r\n\tcode to the end"
    assert literal_blocks(last) == [(last.index("\t"), len(last))]
    comments = [m.start() for m in re.finditer("#", page)]
    assert in_code(page, comments).all()
    assert not in_code(page, [page.index("When")]).any()
    doc = default_nlp(page)
    starts = [s.start for s in doc.sents]
    flags = heading_sentences(doc, starts, paragraph_starts(doc, starts))
    marked = [s.text.strip() for s, f in zip(doc.sents, flags, strict=True) if f]
    assert marked == ["Sockets\n======="]
    block = page[code_start:code_end].strip()
    assert block in [s.text.strip() for s in doc.sents]  # one sentence, as a fenced block is
    assert not any(span.text.startswith("#") for span in doc.spans["attn_segments"])


def test_overlined_titles_are_marked_headings(default_nlp: Any) -> None:
    """A title between two lines of one adornment character, as a reStructuredText page
    opens (``"#####\\n  Title\\n#####"``), is one sentence and a marked heading (the
    model split it, and it was no heading, so a field line under it started a segment
    and the title ended one); three rules are no title, nor are two different ones, nor
    rules shorter than the line between them or around a statement."""
    rule = "*" * 28
    page = f".. _howto:\n\n{rule}\n  Regular Expression HOWTO\n{rule}\n\n"
    title = page[page.index(rule) : -2]
    assert [page[a:b] for a, b in text_blocks(page)] == [".. _howto:", title]
    assert text_blocks("-----\n-----\n-----\n\ntext") == []
    assert text_blocks("=====\nTitle\n-----\n\ntext") == []
    # rules shorter than the line between them, or around a statement: Markdown's
    assert text_blocks("----\nA longer line\n----\n\ntext") == []
    assert text_blocks("---------\nA prose line.\n---------\n\ntext") == []
    body = (
        ":Author: Ann Lee <ann@example.org>\n\nThis guide shows how to write patterns. "
        "It starts with single characters and builds up to groups.\n\nMatching\n"
        "========\n\nA pattern matches text from the left. The engine tries every "
        "position in turn.\n"
    )
    doc = default_nlp(page + body)
    starts = [s.start for s in doc.sents]
    texts = [s.text for s in doc.sents]
    flags = heading_sentences(doc, starts, paragraph_starts(doc, starts), texts)
    assert texts[1] == title + "\n\n"
    assert flags[1] == MARKED_HEADING
    segments = list(doc.spans["attn_segments"])
    assert segments[0].text.startswith(page + body[:30])
    assert [s.text.split("\n")[0] for s in segments[1:]] == ["Matching"]


def test_tilde_underlines_open_no_code(default_nlp: Any) -> None:
    """reStructuredText underlines a heading with tildes as Markdown fences code with
    them: a run of tildes under a line of text no longer than it is a heading's
    underline (the Python documentation's logging cookbook read as code between its
    headings, sentences of thousands of words), and a Markdown fence is one still; a
    fence closes only on a run of its own character, as long or longer."""
    page = (
        "Handlers\n~~~~~~~~\n\nA handler sends records on. It has a level.\n\n"
        "Filters\n~~~~~~~\n\nA filter drops records. It runs before the handler.\n"
    )
    assert fenced_code(page) == []
    assert [page[a:b] for a, b in text_blocks(page)] == ["Handlers\n~~~~~~~~", "Filters\n~~~~~~~"]
    sents = [s.text.strip() for s in default_nlp(page).sents]
    assert "A handler sends records on." in sents and "A filter drops records." in sents
    # Markdown's fences: after a line longer than the run, with an info string, at the start
    assert fenced_code("Run this:\n~~~\nmake\n~~~\nDone.") == [(10, 19)]
    assert fenced_code("~~~python\nx = 1\n~~~\nafter") == [(0, 16)]
    # a fence of the other character, or a shorter one, is code; a closing line says nothing more
    assert fenced_code("```\n~~~\ncode\n```\nafter") == [(0, 13)]
    assert fenced_code("````\n```\ncode\n````\nafter") == [(0, 14)]
    assert fenced_code("```\ncode\n``` not closed\nmore") == [(0, 28)]
    # backticks with a backtick after them are inline code, not a fence
    assert fenced_code("```x``` in a line\nprose") == []


FENCE_LINES = ["```", "````", "~~~", "~~~~", "```python", "~~~ text", "  ```", "``` x"]
TEXT_LINES = ["The valve was checked twice.", "print(value)  # the value", "then closed:"]


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.sampled_from(FENCE_LINES + TEXT_LINES + [""]), max_size=14))
def test_fenced_code_as_commonmark_reads_it(lines: list[str]) -> None:
    """Where ``fenced_code`` finds code, CommonMark (markdown-it-py, an independent
    parser) finds fenced blocks on the same lines, for any lines of fences, text and
    blank lines (the text lines longer than any run of tildes: the one place the two
    read differently is a reStructuredText underline)."""
    from markdown_it import MarkdownIt

    text = "\n".join(lines)
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    expected = [
        tuple(token.map)
        for token in MarkdownIt("commonmark").parse(text)
        if token.type == "fence" and token.map is not None
    ]
    found = [
        (bisect.bisect_right(starts, start) - 1, bisect.bisect_right(starts, close))
        if close < len(text)
        else (bisect.bisect_right(starts, start) - 1, len(text.splitlines()))
        for start, close in fenced_code(text)
    ]
    assert found == expected


def test_a_heading_stays_with_text_longer_than_a_chunk() -> None:
    """A heading whose table, or whose one long sentence, is longer than ``max_tokens``
    opens the first of its chunks, which are cut inside the table (at a row) or the
    sentence: no chunk holds a heading alone."""
    from spacy_attnseg import load_pipeline
    from spacy_attnseg.records import chunks

    rows = "\n".join(f"| item {i} | the valve was checked. Then it was closed |" for i in range(30))
    sentence = " ".join(f"valve {i} was checked by the night shift and closed" for i in range(12))
    text = (
        f"## Valve results\n\n| item | result |\n|---|---|\n{rows}\n\n"
        f"## Summary\n\nEvery {sentence}.\n\n## Notes\n\nThe table is kept for a year."
    )
    nlp = load_pipeline(overrides={"components.attn_segmenter.max_tokens": 64})
    records = list(chunks(nlp, [text]))
    assert "".join(r["text"] for r in records) == text
    assert all(r["n_tokens"] <= 64 for r in records)
    texts = [r["text"] for r in records]
    assert texts[0].startswith("## Valve results\n\n| item | result |\n|---|---|\n| item 0 |")
    assert any(t.startswith("## Summary\n\nEvery valve 0 was checked") for t in texts)
    assert not [t for t in texts if t.strip() in ("## Valve results", "## Summary")]


def test_quoted_lines_keep_their_marks(default_nlp: Any) -> None:
    """E-mail's and Markdown's quoted lines: the ``"> "`` that opens a line stays with
    that line's sentence instead of ending the sentence before (EWT dev documents,
    wrapped at 72 and quoted); quoted text is hard-wrapped as its own lines are."""
    from paper.evaluation import read_conllu_documents

    text = "> This is a quoted line that goes on.\n> And a second one here.\n\nThe reply."
    assert [s.text.strip() for s in default_nlp(text).sents] == [
        "> This is a quoted line that goes on.",
        "> And a second one here.",
        "The reply.",
    ]
    docs = [d for d in read_conllu_documents(EWT_DEV)[:120] if len(d.starts) >= 4]
    wrapped = [textwrap.fill(d.text, 72, break_on_hyphens=False) for d in docs]
    quoted = ["\n".join("> " + line for line in t.split("\n")) for t in wrapped]
    assert [hard_wrapped(q) for q in quoted] == [hard_wrapped(t) for t in wrapped]
    per_line = "\n".join(">> " + s.strip() for s in docs[0].sentences())
    assert not hard_wrapped(per_line)
    sents = [s.text.rstrip() for doc in default_nlp.pipe(quoted) for s in doc.sents]
    assert len(sents) >= 200
    assert sum(s.endswith(">") for s in sents) <= 0.02 * len(sents)


TAG_LINES = (
    "<h2>Library</h2>\n<p>The committee met. It agreed.</p>\n"
    '  <li class="new">Item one\n</p><p>Two tags\n<b>Bold</b> start\n'
    "<ann@example.org> wrote it.\n<3 hearts\n<br/>Broken"
)


N_TAG_TOKENS = len(EN(TAG_LINES))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=N_TAG_TOKENS, max_size=N_TAG_TOKENS))
def test_tags_that_open_a_line_stay_with_its_text(marked: List[bool]) -> None:
    """A start on the first word after the tags that open a line (``"<h2>Library"``,
    ``"<p>The"``, ``"</p><p>Two"``, ``"<b>Bold</b> start"``) moves onto the line's first
    tag; no other start moves (a tag inside a line, ``"<ann@example.org>"``, ``"<3"``,
    and a word that the tokenizer keeps in one token with its tag,
    ``'class="new">Item'``). The words that follow opening tags are named here by hand."""
    assert_moved_to_lines(TAG_LINES, marked, ("Library</h2", "The", "Two", "Bold</b"))


def assert_moved_to_lines(text: str, marked: List[bool], words: Tuple[str, ...]) -> None:
    """``tags_open_lines`` on ``text`` with the starts ``marked`` moves a start on each
    of ``words`` onto the first token of its line, and no other start."""
    doc = EN(text)
    starts = numpy.array(marked, dtype="int32")
    out = tags_open_lines(doc, starts)
    expected = starts.copy()
    for token in doc:
        if token.text in words and starts[token.i]:
            line_start = text.rfind("\n", 0, token.idx) + 1
            first = next(t.i for t in doc if t.idx >= line_start and not t.is_space)
            expected[first + 1 : token.i + 1] = 0
            expected[first] = 1
    assert out.tolist() == expected.tolist()


STAMP_LINES = (
    "[0:09] Ann Lee\nThe mill burned. It was rebuilt.\n\n[10:32 AM] <bob> Which mill?\n"
    "  [00:01:23.5] Speaker 2\nThe one at [0:09] on the map.\n[12] Footnote text\n[x] Done"
)


N_STAMP_TOKENS = len(EN(STAMP_LINES))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=N_STAMP_TOKENS, max_size=N_STAMP_TOKENS))
def test_a_time_stamp_that_opens_a_line_stays_with_its_text(marked: List[bool]) -> None:
    """A start on the first word after the time stamp that opens a line (``"[0:09]
    Ann"``, ``"[10:32 AM] <bob>"``, ``"[00:01:23.5] Speaker"``) moves onto the stamp's
    bracket; no other start moves (a stamp inside a line, a footnote's ``"[12]"``, a
    check box's ``"[x]"``). The words that follow stamps are named here by hand."""
    assert_moved_to_lines(STAMP_LINES, marked, ("Ann", "<", "Speaker"))


def test_a_speaker_label_after_a_time_stamp() -> None:
    """A speaker's label may follow a time stamp (``markup.TIME_STAMP``, the one that
    ``OPENING_STAMP`` reads too): ``"[10:32 AM] <bob>"``, ``"[00:01:23.5] Ann Lee:"``;
    after a footnote's ``"[12]"`` or a check box's ``"[x]"``, a word and a colon are
    none."""
    assert speaker("[10:32 AM] <bob> hi") == "bob"
    assert speaker("[00:01:23.5] Ann Lee: hello") == "ann lee"
    assert speaker("  [0:09] B: yes") == "b"
    assert speaker("Ann: [0:09] on the map") == "ann"
    assert speaker("[12] Note: see below") is None
    assert speaker("[x] Done: the list") is None


HTML_SECTIONS = {
    "Library": "The committee approved the new budget for the city library. Funding rose.",
    "Cats": "My cat refuses to eat dry food. She waits by the fridge every morning.",
    "Volcano": "The volcano erupted twice last week. Ash clouds closed the airport.",
}


def test_an_html_page_has_no_sentence_of_tags_alone(default_nlp: Any) -> None:
    """An HTML page through the default pipeline: each paragraph's ``<p>`` opens its
    first sentence (it was a sentence of its own, and a segment ended on it), and each
    section under its ``<h2>`` is a segment, the lines of tags alone with the text next
    to them (``"</body></html>"`` took the last sentence before it into a segment)."""
    body = "".join(f"<h2>{title}</h2>\n<p>{text}</p>\n" for title, text in HTML_SECTIONS.items())
    text = f"<html><body>\n<h1>City news</h1>\n{body}</body></html>"
    doc = default_nlp(text)
    sents = [s.text.strip() for s in doc.sents]
    assert not [s for s in sents if s == "<p>"]
    assert sum(s.startswith("<p>") for s in sents) == 3
    firsts = [span.text.split("\n")[0] for span in doc.spans["attn_segments"]]
    assert firsts == ["<html><body>", "<h2>Cats</h2>", "<h2>Volcano</h2>"]


def test_a_quotation_opens_a_sentence(default_nlp: Any) -> None:
    """The first quoted line after a line that is not quoted (e-mail's ``"Ann wrote:"``)
    starts a sentence on its marks, whatever the model says; the quoted lines after it
    keep the model's decisions."""
    text = "On Monday, Ann wrote:\n> the migration finished\n> at noon and\n> all is green"
    doc = EN(text)
    starts = numpy.zeros(len(doc), dtype="int32")
    starts[0] = 1
    marks = [t.i for t in doc if t.text == ">"]
    assert numpy.flatnonzero(quotes_open_lines(doc, starts)).tolist() == [0, marks[0]]
    starts[marks[0] + 1] = 1  # on the word after the marks: moved onto them
    assert numpy.flatnonzero(quotes_open_lines(doc, starts)).tolist() == [0, marks[0]]
    assert quotes_open_lines(EN("a\n> "), numpy.array([1, 0, 0, 0])).tolist() == [1, 0, 0, 0]
    reply = "Sounds good.\n\nOn Monday, Ann wrote:\n> The migration finished. All is green."
    assert [s.text.strip() for s in default_nlp(reply).sents] == [
        "Sounds good.",
        "On Monday, Ann wrote:",
        "> The migration finished.",
        "All is green.",
    ]


def test_markdown_emphasis_classes() -> None:
    """An emphasis marker attached to the word after it opens; one attached to the word
    before it continues, and a start put on it is dropped, unless final punctuation
    comes before it (``"*Stop.* Go"``), where the start moves on. Spaced ones (a bullet,
    a product) are neither."""
    doc = EN("- *Topic one*: **Note:** a * b _x_ *Stop.* Go")
    texts = [t.text for t in doc]
    classes = token_classes(doc)
    opened = [i for i in range(len(doc)) if classes.opens[i]]
    closed = [i for i in range(len(doc)) if classes.closes[i]]
    assert [texts[i] for i in opened] == ["*", "*", "*", "_", "*"]
    assert opened[:3] == [1, 6, 7]
    product = texts.index("a") + 1
    assert not classes.opens[product] and not classes.continues[product]
    assert [texts[i] for i in closed] == ["*", "*", "_"]
    assert all(classes.continues[closed]) and not classes.continues[[0, 14]].any()
    stop = texts.index("Stop")
    assert classes.continues[stop + 2] and not classes.closes[stop + 2]
    starts = numpy.zeros(len(doc), dtype="int32")
    starts[[closed[0], stop + 2]] = 1
    placed = placed_starts(doc, starts, paragraph_breaks=True)
    assert numpy.flatnonzero(placed).tolist() == [stop + 3]


def test_markdown_image_marks_open(default_nlp: Any) -> None:
    """A Markdown image's ``"!"`` after whitespace opens, as its ``"["`` does (it was
    final punctuation: the paragraph before took it); ``"!"`` attached to a word, or
    with a space after it, still ends a sentence."""
    doc = EN("Wow! ![a chart](c.png) and ![b](d.png) Stop ! [1]")
    classes = token_classes(doc)
    marks = [i for i, t in enumerate(doc) if t.text == "!"]
    assert [bool(classes.opens[i]) for i in marks] == [False, True, True, False]
    assert [bool(classes.continues[i]) for i in marks] == [True, False, False, True]
    text = (
        "We moved the cluster last week.\n\n![Latency before and after](img/l.png)\n\nIt went well."
    )
    assert [s.text.strip() for s in default_nlp(text).sents] == [
        "We moved the cluster last week.",
        "![Latency before and after](img/l.png)",
        "It went well.",
    ]


def test_badges_and_alerts_cut_no_word(default_nlp: Any) -> None:
    """A README's badges, images inside links (``"[![build](src)](href)"``), and
    GitHub's alert marker (``"[!IMPORTANT]"``) stay whole: the ``"!"`` after the ``"["``
    opens, and no start falls inside a word of a URL (the model put one on
    ``"-python"`` of ``"msgpack-python"``). Each badge line is a sentence."""
    badges = [
        "[![Build Status](https://github.com/msgpack/msgpack-python/actions/workflows/"
        "wheel.yml/badge.svg)](https://github.com/msgpack/msgpack-python/actions/workflows/"
        "wheel.yml)",
        "[![Documentation Status](https://readthedocs.org/projects/msgpack-python/badge/"
        "?version=latest)](https://msgpack-python.readthedocs.io/en/latest/?badge=latest)",
    ]
    alert = [
        "> [!IMPORTANT]",
        "> If the reader stops with an exception, it cannot be reused.",
        "> Create a new reader for the next stream.",
    ]
    text = "\n".join(["# MessagePack for Python", "", *badges, "", *alert, "", "It is fast."])
    doc = default_nlp(text)
    assert [s.text.strip() for s in doc.sents] == [
        "# MessagePack for Python",
        *badges,
        *alert,
        "It is fast.",
    ]
    classes = token_classes(doc)
    bangs = [t.i for t in doc if t.text == "!"]
    assert len(bangs) == 3
    assert [bool(classes.opens[i]) for i in bangs] == [True, True, False]


def test_html_comments_and_front_matter_are_sentences(default_nlp: Any) -> None:
    """An HTML comment on lines of its own and a page's front matter (YAML's or TOML's)
    are one sentence each; a comment that runs into text, one in code, an unclosed one
    and a rule that opens prose are not blocks."""
    page = (
        "---\ntitle: Migrating search\ndate: 2024-03-02\n---\n\n"
        "<!-- draft: do not publish yet.\n# Not a heading -->\n\nWe moved the cluster."
    )
    blocks = [page[a:b] for a, b in text_blocks(page)]
    assert blocks == [
        "---\ntitle: Migrating search\ndate: 2024-03-02\n---",
        "<!-- draft: do not publish yet.\n# Not a heading -->",
    ]
    toml = '+++\ntitle = "x"\n+++\nText.'
    assert [toml[a:b] for a, b in text_blocks(toml)] == ['+++\ntitle = "x"\n+++']
    assert text_blocks("---\nSome prose here.\n---\nMore.") == []
    assert text_blocks("Text <!-- inline --> more.\n<!-- a --> b\n<!-- open") == []
    assert text_blocks("```\n<!-- code -->\n```") == [(0, 21)]  # the code block
    assert html_blocks("<!--a-->\n" * 3) == [(0, 8), (9, 17), (18, 26)]
    sents = [s.text.strip() for s in default_nlp(page).sents]
    assert sents == [blocks[0], blocks[1], "We moved the cluster."]


def segment_first_lines(doc: Any) -> list[str]:
    """The first line of each of ``doc``'s topic segments."""
    return [span.text.split("\n")[0] for span in doc.spans["attn_segments"]]


HTML_PAGE = """<!DOCTYPE html>
<html>
<body>
<h1>Valve maintenance</h1>
<p>Check every valve once a week. Record the pressure before and after the test.</p>
<h2>Tools</h2>
<p>You need a torque wrench and a pressure gauge. Keep them calibrated.</p>
<pre><code>./check-valves --all
echo done. Next</code></pre>
<h2>Storage</h2>
<p>Store spare valves in a dry room. Label each shelf with the valve type.</p>
</body>
</html>
"""


def test_html_as_written(default_nlp: Any) -> None:
    """Raw HTML: a line of tags alone, a ``<pre>`` (``<script>``, ``<style>``) element
    on lines of its own and a heading element's line are one sentence each (the model
    split ``"<!"`` off ``"DOCTYPE"`` and the code at its ``"."``), and a heading
    element starts a segment as a Markdown heading does, the lines of tags alone above
    the first one with it; the paragraphs' sentences are the model's."""
    blocks = [HTML_PAGE[a:b] for a, b in text_blocks(HTML_PAGE)]
    assert blocks == [
        "<!DOCTYPE html>",
        "<html>",
        "<body>",
        "<h1>Valve maintenance</h1>",
        "<h2>Tools</h2>",
        "<pre><code>./check-valves --all\necho done. Next</code></pre>",
        "<h2>Storage</h2>",
        "</body>",
        "</html>",
    ]
    assert html_blocks("<SCRIPT>\nvar a;\n</script></div>\nx") == [(0, 31)]
    # an element that text follows on its last line, or that never closes, is no block
    assert html_blocks("<pre>\nx\n</pre> and text\n<style>\np {}\n") == []
    assert text_blocks("a <b>\n<p>Hi.</p>\n<3 you\n") == []
    doc = default_nlp(HTML_PAGE)
    sents = [s.text.strip() for s in doc.sents]
    assert set(blocks) <= set(sents), sents
    assert "<p>Check every valve once a week." in sents
    firsts = segment_first_lines(doc)
    assert {"<h2>Tools</h2>", "<h2>Storage</h2>"} <= set(firsts)
    # the lines of tags alone keep with the heading after them
    first = doc.spans["attn_segments"][0].text
    assert first.startswith("<!DOCTYPE html>\n<html>\n<body>\n<h1>Valve maintenance</h1>\n")


def test_latex_sections_are_headings(default_nlp: Any) -> None:
    """LaTeX's sectioning commands on a line of their own (starred, with a short title,
    a label or a comment after them) are marked headings: one sentence each, and each
    starts a segment; one that text follows on its line is not."""
    page = (
        "\\section{Introduction}\nTransformers compare every pair of tokens. This makes "
        "long documents expensive.\nWe study single heads.\n\n"
        "\\subsection*{Related work} \\label{sec:related} % cite more\nEarlier work used "
        "lexical cohesion. Later work used sentence embeddings.\n\n"
        "\\section[Method]{The method}\nWe choose the partition with the least cost. "
        "A penalty is paid per boundary.\n"
    )
    blocks = [page[a:b] for a, b in text_blocks(page)]
    assert blocks == [
        "\\section{Introduction}",
        "\\subsection*{Related work} \\label{sec:related} % cite more",
        "\\section[Method]{The method}",
    ]
    assert text_blocks("\\section{Intro} Text runs on here.\nMore.") == []
    assert text_blocks("\\sectionmark{x}\n\\item{a}\n") == []
    doc = default_nlp(page)
    assert segment_first_lines(doc) == blocks


def test_org_mode_as_written(default_nlp: Any) -> None:
    """On an Org-mode page (one with an in-buffer setting or block line, ``"#+..."``) a
    line of stars and a space at its very start is a marked heading (one sentence, a
    segment starts at each) and so is the ``#+TITLE:`` line; a setting's line is one
    sentence and a source block one from its ``#+BEGIN_SRC`` line to its ``#+END_SRC``
    (a ``"* "`` line inside it is code). Without such a line (or with one in a Markdown
    code block only), ``"* "`` is a Markdown bullet."""
    page = (
        "#+TITLE: Valve maintenance\n#+STARTUP: overview\n\n* Inspection\n"
        "Check every valve once a week. Record the pressure before and after the test.\n"
        "#+begin_src sh\n* not a heading\n./check-valves --all. echo done\n#+end_src\n\n"
        "* Storage\nStore spare valves in a dry room. Label each shelf with the valve "
        "type.\n** Labels\nPrint the labels on the office printer. Laminate them.\n"
    )
    blocks = [page[a:b] for a, b in text_blocks(page)]
    assert blocks == [
        "#+TITLE: Valve maintenance",
        "#+STARTUP: overview",
        "* Inspection",
        "#+begin_src sh\n* not a heading\n./check-valves --all. echo done\n#+end_src",
        "* Storage",
        "** Labels",
    ]
    assert org_blocks("* item one\n* item two\n\nText.") == ([], [])
    shown = "Org looks like this:\n\n```\n#+TITLE: x\n* Head\n```\n\n* item\n* item\n"
    assert org_blocks(shown) == ([], [])  # a Markdown page that shows Org in code
    assert org_blocks("#+TITLE: x\n#+BEGIN_EXAMPLE\n* y\n")[1] == [(0, 10)]  # unclosed
    doc = default_nlp(page)
    assert set(blocks) <= {s.text.strip() for s in doc.sents}
    assert segment_first_lines(doc) == [
        "#+TITLE: Valve maintenance",
        "* Inspection",
        "* Storage",
        "** Labels",
    ]


def test_asciidoc_as_written(default_nlp: Any) -> None:
    """AsciiDoc's ``== Title`` lines are marked headings (one sentence, a segment
    starts at each), not a line of wrapped prose that opens with ``==``; a listing
    under ``[source]`` is one block from that line to its closing ``----``, and a
    rule of dashes under no such line opens nothing."""
    page = (
        "== Inspection\n\nCheck every valve once a week. Record the pressure before and "
        "after the test.\n\n[source,bash]\n----\n./check-valves --all\necho done. Next\n"
        "----\n\n== Storage\n\nStore spare valves in a dry room. Label each shelf with "
        "the valve type.\n"
    )
    blocks = [page[a:b] for a, b in text_blocks(page)]
    assert blocks == [
        "== Inspection",
        "[source,bash]\n----\n./check-valves --all\necho done. Next\n----",
        "== Storage",
    ]
    assert text_blocks("a == b holds\n== 144. Similarly, floats,\n== Note: it ends.\n") == []
    assert fenced_code("Intro.\n\n----\n\nText.\n\n----\nMore.") == []
    doc = default_nlp(page)
    assert set(blocks) <= {s.text.strip() for s in doc.sents}
    assert segment_first_lines(doc) == ["== Inspection", "== Storage"]


SUBTITLES = (
    "1\n00:00:01,000 --> 00:00:04,000\nWelcome back to the show.\n\n"
    "2\n00:00:04,500 --> 00:00:08,000\nThe mill on the river was built\n\n"
    "3\n00:00:08,500 --> 00:00:11,000\nin 1820 by two brothers.\n\n"
    "4\n00:00:11,500 --> 00:00:14,000\nIt burned down in 1890."
)


def test_subtitle_cues_are_parts_of_sentences(default_nlp: Any) -> None:
    """A subtitle cue's number and timing lines (SubRip's, WebVTT's) are a block: no
    sentence starts inside them or at the cue's first word; a sentence runs on across
    them, or, after final punctuation, starts with them."""
    cues = [SUBTITLES[a:b] for a, b in text_blocks(SUBTITLES)]
    assert cues == [
        "1\n00:00:01,000 --> 00:00:04,000",
        "2\n00:00:04,500 --> 00:00:08,000",
        "3\n00:00:08,500 --> 00:00:11,000",
        "4\n00:00:11,500 --> 00:00:14,000",
    ]
    vtt = "WEBVTT\n\n00:01.000 --> 00:04.000 line:0\nHello.\n\n01:02:03.500 --> 01:02:05.000\nBye."
    assert [vtt[a:b] for a, b in text_blocks(vtt)] == [
        "00:01.000 --> 00:04.000 line:0",
        "01:02:03.500 --> 01:02:05.000",
    ]
    assert text_blocks("The arrow 1 --> 2 points right.\n10:30 --> 11:00 break") == []
    sents = [" ".join(s.text.split()) for s in default_nlp(SUBTITLES).sents]
    assert sents == [
        "1 00:00:01,000 --> 00:00:04,000 Welcome back to the show.",
        "2 00:00:04,500 --> 00:00:08,000 The mill on the river was built "
        "3 00:00:08,500 --> 00:00:11,000 in 1820 by two brothers.",
        "4 00:00:11,500 --> 00:00:14,000 It burned down in 1890.",
    ]
    # WebVTT's cue identifiers, one word each, head their cues as SubRip's numbers do
    named = re.sub(r"(?m)^(\d)\n", r"cue-\1\n", SUBTITLES)
    assert [named[a:b] for a, b in text_blocks(named)] == [
        "cue-" + SUBTITLES[a:b] for a, b in text_blocks(SUBTITLES)
    ]
    named_sents = [" ".join(s.text.split()) for s in default_nlp(named).sents]
    assert named_sents == [re.sub(r"\b(\d) 00:", r"cue-\1 00:", t) for t in sents]


def test_a_backchannel_or_a_turn_is_no_title() -> None:
    """A short line without closing punctuation, a paragraph of its own over prose, is a
    plain heading, but never where it says nothing (a listener's ``"mm-hmm"``,
    ``markup.backchannel``) or where it is a speaker's turn in a transcript
    (``markup.transcript_speakers``: ``"B: And then what"``)."""
    from spacy_attnseg.markup import SPEAKER_LABEL, backchannel, transcript_speakers

    turns = [
        "A: The mill on the river was built in 1820 by two brothers from the north.",
        "B: And then what",
        "A: It burned down in 1890, and the village rebuilt it in stone a year later.",
        "C: mm-hmm",
        "A: Today it is a museum, and visitors can watch the wheel turn on Sundays.",
    ]

    def flags(lines: List[str]) -> List[int]:
        doc = spacy.blank("en")("\n\n".join(lines))
        firsts = [0] + [t.i + 1 for t in doc if t.is_space and t.i + 1 < len(doc)]
        return heading_sentences(doc, firsts, [True] * len(firsts)).tolist()

    said = [line[SPEAKER_LABEL.match(line).end() :].strip() for line in turns]  # type: ignore
    assert flags(said) == [NOT_HEADING, PLAIN_HEADING, NOT_HEADING, NOT_HEADING, NOT_HEADING]
    assert transcript_speakers("\n\n".join(said)) == set()
    assert transcript_speakers("\n\n".join(turns)) == {"a", "b", "c"}
    assert flags(turns) == [NOT_HEADING] * 5
    assert [backchannel(t) for t in turns] == [False, False, False, True, False]
    assert [backchannel(t) for t in ("Yeah.", "<bob> oh okay", "[10:32] <ann> yes")] == [True] * 3
    assert not backchannel("Okay, so the budget") and not backchannel("Yes yes yes yes")
    # labels that no speaker says again, or few beside the text, make no transcript
    steps = ["Step 1: Unpack the frame", turns[0][3:], "Step 2: Fit the wheels", turns[2][3:]]
    assert transcript_speakers("\n\n".join(steps)) == set()
    assert flags(steps)[::2] == [PLAIN_HEADING, PLAIN_HEADING]
    mail = ["From: Ann", "Subject: The mill", *said[::2], "From: Bob", "Subject: Re: The mill"]
    assert transcript_speakers("\n".join(mail + said[::2])) == set()
    links = ["Email: ann@example.org", *[f"http://example.org/{k}" for k in range(6)]]
    assert transcript_speakers("\n".join(links)) == set()
    chat = ["[10:32] <ann> the mill", "[10:33] <bob> which one", "[10:35] <ann> on the river"]
    assert transcript_speakers("\n".join(chat)) == {"ann", "bob"}


def test_a_listeners_short_turn_leads_into_the_next() -> None:
    """``markup.leading_turns``: in a transcript, the short turns of a speaker whose
    turns are short (an interviewer) that lie above a longer turn, and none where every
    speaker talks at length (a meeting, whose short turns may end a topic) or in a chat
    of short lines alone."""
    from spacy_attnseg.markup import leading_turns

    answers = [
        "A: In a mill town on the river, where my father ran the wheel for forty years.",
        "A: We moved to the city when the mill closed, and I went to school there.",
        "A: I studied engineering, and the first bridge I built crossed that same river.",
    ]
    questions = ["Q: Where did you grow up", "Q: and then what", "Q: go on"]
    lines = [line for pair in zip(questions, answers, strict=True) for line in pair]
    text = "\n".join(lines)
    assert sorted(leading_turns(text)) == [text.index(q) for q in questions]
    spaced = "\n\n  ".join(lines)
    assert sorted(leading_turns(spaced)) == [spaced.index(q) for q in questions]
    meeting = [answers[0], "B: It burned down in 1890", answers[1], "B" + answers[2][1:]]
    meeting += [answers[2], "B" + answers[1][1:]]
    assert leading_turns("\n".join(meeting)) == set()
    chat = ["<ann> the mill", "<bob> which one", "<ann> on the river", "<bob> ah that one"]
    assert leading_turns("\n".join(chat)) == set()
    assert leading_turns("\n".join(questions + [answers[0][3:]] * 6)) == set()


def test_cue_lines_are_the_lines_below_a_cue_header() -> None:
    """``markup.cue_lines``: the timing line below a cue's number and the first line of
    text below the timing line (WebVTT's cues may have no number or identifier: that
    line alone), within the range asked for."""
    from spacy_attnseg.markup import cue_lines

    def opening(text: str, offsets: Any) -> List[str]:
        return [text[o:].split("\n")[0] for o in sorted(offsets)]

    assert opening(SUBTITLES, cue_lines(SUBTITLES)) == [
        "00:00:01,000 --> 00:00:04,000",
        "Welcome back to the show.",
        "00:00:04,500 --> 00:00:08,000",
        "The mill on the river was built",
        "00:00:08,500 --> 00:00:11,000",
        "in 1820 by two brothers.",
        "00:00:11,500 --> 00:00:14,000",
        "It burned down in 1890.",
    ]
    second = SUBTITLES.index("2\n")
    third = SUBTITLES.index("3\n")
    assert opening(SUBTITLES, cue_lines(SUBTITLES, second, third)) == [
        "00:00:04,500 --> 00:00:08,000",
        "The mill on the river was built",
    ]
    vtt = "WEBVTT\n\n00:01.000 --> 00:04.000 line:0\nHello.\n\n01:02:03.500 --> 01:02:05.000\nBye."
    assert opening(vtt, cue_lines(vtt)) == ["Hello.", "Bye."]
    named = vtt.replace("\n00:01", "\nintro\n00:01")
    assert opening(named, cue_lines(named)) == ["00:01.000 --> 00:04.000 line:0", "Hello.", "Bye."]
    assert cue_lines("The arrow 1 --> 2 points right.\nNext line.") == set()


PDF_PAGES = (
    "The pump at the north site was inspected on Monday. The seal was\n\n12\n\x0c"
    "worn and was replaced. The crew then moved to the south site.\n\nPage 13 of 40\n\x0c"
    "All valves passed. The report was filed on Friday.\n\x0cxiv\nThe next report "
    "follows in May."
)


def test_page_numbers_at_page_breaks(default_nlp: Any) -> None:
    """Text from PDF: a page number on the line a page break ends (a footer) is part of
    the sentence before it, which runs on into the next page unless it ended before
    the footer; one on the line after a page break (a header) is part of the sentence
    it opens or the one that runs across it. A number line away from a page break,
    and a line of prose before one, are no page numbers."""
    pages = [PDF_PAGES[a:b] for a, b in text_blocks(PDF_PAGES)]
    assert pages == ["12", "Page 13 of 40", "xiv"]
    assert text_blocks("Items:\n\n12\n\nMore.\nIt cost 12\n\x0cdollars.\nI\n\x0cwent") == []
    sents = [" ".join(s.text.split()) for s in default_nlp(PDF_PAGES).sents]
    assert sents == [
        "The pump at the north site was inspected on Monday.",
        "The seal was 12 worn and was replaced.",
        "The crew then moved to the south site. Page 13 of 40",
        "All valves passed.",
        "The report was filed on Friday.",
        "xiv The next report follows in May.",
    ]


def test_running_titles_at_page_breaks(default_nlp: Any) -> None:
    """A line at a page break, or the text's first line, whose text, numbers aside,
    comes back on three pages or more is a running footer or header (``page_lines``),
    read as a page number is: the footer is part of the sentence before it, the header
    of the sentence that runs across it; a line that comes back twice, or a long one,
    is text. Three pages, each with its header (the first page's opens the text and
    its first sentence), have their headers read so."""
    bodies = [
        "The pump at the north site was checked on Monday and the seal was",
        "replaced by the night crew. Then the crew moved on to",
        "the south site, where the valves were checked one by one.",
        "All of them passed the test. The report was filed on Friday.",
    ]
    text = "".join(
        f"Chapter 3. Methods\n\n{body}\n\nAnnual Report 2023 | {k + 1}\n\x0c"
        for k, body in enumerate(bodies)
    )
    footers, headers = page_lines(text)
    assert [text[a:b] for a, b in footers] == [f"Annual Report 2023 | {k}" for k in (1, 2, 3, 4)]
    assert [text[a:b] for a, b in headers] == ["Chapter 3. Methods"] * 4
    twice = "Draft\n\x0cText here.\nDraft\n\x0cMore text."
    assert page_lines(twice) == ([], [])
    across = (
        "The pump at the north site was checked on Monday and the seal was Annual Report "
        "2023 | 1 Chapter 3. Methods replaced by the night crew."
    )
    three = text[: text.index("Chapter 3. Methods", text.index(bodies[2]))]
    footers, headers = page_lines(three)
    assert [three[a:b] for a, b in headers] == ["Chapter 3. Methods"] * 3
    assert len(footers) == 3
    for pages in (text, three):
        sents = [" ".join(s.text.split()) for s in default_nlp(pages).sents]
        assert sents[0] == f"Chapter 3. Methods {across}", sents  # (page one's header too)
        assert not [s for s in sents if s.startswith("Annual Report")], sents


# Three pages of text from PDF joined without form feeds (as pypdf's text, page by page,
# joined by line breaks): a running header, a running footer with its page number
PAGES_JOINED = """Quarterly Report 2023
The company grew its revenue by 12 percent in the third quarter, driven by strong
demand for cloud services in Europe and Asia. Operating costs rose more slowly than
sales, and the margin improved for the fourth quarter in a row. The board ap-
proved a new buyback programme worth 2 billion dollars, to run until the end of
Quarterly Report 2023 | Page 1
next year. Analysts had expected a smaller programme.
Quarterly Report 2023
Headcount rose to 14,200 employees, most of them engineers hired in the new offices
in Lisbon and Warsaw. The company plans to hire another 1,000 people next year, mainly
in sales and customer support. Staff turnover fell to 8 percent, the lowest in five
years, which management credits to the new training scheme and higher
Quarterly Report 2023 | Page 2
salaries. The union welcomed the raise but asked for shorter hours.
Quarterly Report 2023
The weather in the region was unusually dry. Farmers reported lower yields of wheat
and barley, and the price of bread rose by a fifth. The government announced aid for
small farms and a plan to build new reservoirs in the south of the country. Water
Quarterly Report 2023 | Page 3
"""


def test_running_lines_without_page_breaks(default_nlp: Any) -> None:
    """In hard-wrapped text without form feeds, a short line that comes back, numbers
    aside, three times or more at about even gaps of five lines or more is a page's
    footer (its numbers change: a page number) or header (``running_lines``), read as
    one at a page break is: a sentence runs on across a footer. Lines that come back
    unevenly, a few lines apart, indented, as headings, or in text that is not
    hard-wrapped are text."""
    footers, headers = running_lines(PAGES_JOINED)
    assert [PAGES_JOINED[a:b] for a, b in footers] == [
        f"Quarterly Report 2023 | Page {k}" for k in (1, 2, 3)
    ]
    assert [PAGES_JOINED[a:b] for a, b in headers] == ["Quarterly Report 2023"] * 3
    assert page_furniture(PAGES_JOINED) == (footers, headers)
    sents = [" ".join(s.text.split()) for s in default_nlp(PAGES_JOINED).sents]
    across = (
        "Staff turnover fell to 8 percent, the lowest in five years, which management "
        "credits to the new training scheme and higher Quarterly Report 2023 | Page 2 "
        "salaries."
    )
    assert across in sents, sents
    assert not [s for s in sents if s.startswith(("Page", "Quarterly Report 2023 |"))], sents

    vocabulary = PAGES_JOINED.lower().replace(".", "").split()
    draw = random.Random(0)

    def page(body_lines: int, furniture: str, indent: str = "") -> str:
        words = " ".join(draw.choice(vocabulary) for _ in range(20 * body_lines))
        wrapped = textwrap.wrap(words, 72)[:body_lines]
        return "\n".join(wrapped) + "\n" + indent + furniture + "\n"

    uneven = "".join(page(n, "Thanks, Anna") for n in (5, 14, 6, 30))
    near = "".join(page(3, f"Item {k}") for k in range(6))
    indented = "".join(page(6, "return NULL;", "    ") for _ in range(4))
    headings = "".join(page(6, "## Methods") for _ in range(4))
    for text in (uneven, near, indented, headings):
        assert running_lines(text) == ([], []), text
    even = "".join(page(6, f"Log entry {k} saved") for k in range(4))
    footers = [f"Log entry {k} saved" for k in range(4)]
    assert [even[a:b] for a, b in running_lines(even)[0]] == footers
    assert [even[a:b] for a, b in page_furniture(even)[0]] == footers
    # a line of the fourth page that reads as the second page's number: the page numbers
    # that count up by one are the footers, the stray copy is text
    lines = "".join(page(6, f"Page {k + 1}") for k in range(5)).split("\n")
    stray = "\n".join([*lines[:24], "Page 2", *lines[24:]])
    footers = running_lines(stray)[0]
    assert [stray[a:b] for a, b in footers] == [f"Page {k}" for k in (1, 2, 3, 4, 5)]
    assert stray.index("Page 2", stray.index("Page 3")) not in {a for a, _ in footers}
    # lines of a few words each, as a log's or a list's: not hard-wrapped
    unwrapped = "".join(
        "\n".join(
            " ".join(draw.choice(vocabulary) for _ in range(draw.randint(3, 9))) for _ in range(6)
        )
        + f"\nLog entry {k} saved\n"
        for k in range(4)
    )
    logged = [f"Log entry {k} saved" for k in range(4)]
    assert [unwrapped[a:b] for a, b in running_lines(unwrapped)[0]] == logged
    assert not hard_wrapped(unwrapped) and page_furniture(unwrapped) == ([], [])
    # a line of another block (a reStructuredText directive) is that block
    directive = "".join(page(6, ".. note::") for _ in range(4))
    assert [directive[a:b] for a, b in running_lines(directive)[1]] == [".. note::"] * 4
    assert page_furniture(directive) == ([], [])


@settings(max_examples=60, deadline=None)
@given(
    lengths=st.lists(st.integers(10, 14), min_size=3, max_size=8),
    title=st.lists(st.sampled_from(["Annual", "Report", "Draft", "ACME", "|", "-"]), max_size=4),
    numbered=st.booleans(),
    blank=st.booleans(),
    stray=st.one_of(st.none(), st.tuples(st.integers(0, 7), st.integers(0, 13))),
    seed=st.integers(0, 2**16),
)
def test_running_lines_are_the_lines_put_at_page_ends(
    lengths: List[int],
    title: List[str],
    numbered: bool,
    blank: bool,
    stray: Optional[Tuple[int, int]],
    seed: int,
) -> None:
    """Pages of 10-14 lines of random words wrapped at 100 characters, joined by line
    breaks or blank lines, each ended by a line of ``title`` and, if ``numbered``, its
    page number: ``running_lines`` finds exactly the lines put there (footers where
    numbered, headers where not), and they do not make the text look unwrapped
    (``hard_wrapped``). Of five pages or more of 10-12 lines, a ``stray`` copy of an
    unnumbered title inside the text of the second, third or fourth (a line that quotes
    it: page, line), at least three lines from its ends, is text, and the copies at page
    ends are still found (before, the uneven gaps hid them all). Where spacing alone
    cannot tell, it is not asked: a copy nearer a page's end may stand for that page's
    running line in place of the one put there, one near the first page's top is that
    page's header, and one in the middle of a page a third longer than the others (or
    of one of four pages) cuts it into two as even as the rest (every copy running)."""
    draw = random.Random(seed)
    words = PAGES_JOINED.lower().replace(".", "").split()
    pages, put = [], []
    stray = stray if not numbered and len(lengths) > 4 else None
    for k, n_lines in enumerate(lengths):
        n_lines = n_lines if stray is None else min(n_lines, 12)
        body = " ".join(draw.choice(words) for _ in range(20 * n_lines + 20))
        wrapped = textwrap.wrap(body, 100, break_long_words=False)[:n_lines]
        put.append(" ".join([*title, str(k + 1)] if numbered else title))
        if stray is not None and k == 1 + stray[0] % 3:
            wrapped.insert(3 + stray[1] % (n_lines - 5), put[-1])
        pages.append("\n".join(wrapped))
    assume(any(c.isalnum() for c in put[0]))
    join = "\n\n" if blank else "\n"
    text, where = "", []  # (where: the put lines' starts)
    for page, line in zip(pages, put, strict=True):
        text += page + join
        where.append(len(text))
        text += line + join
    footers, headers = running_lines(text)
    assert [a for a, _ in (footers if numbered else headers)] == where
    assert [text[a:b] for a, b in (footers if numbered else headers)] == put
    assert not (headers if numbered else footers)
    assert hard_wrapped("\n\n".join(pages)) and hard_wrapped(text)


def test_a_footer_of_two_lines(default_nlp: Any) -> None:
    """A page's footer of two lines, a copyright line and the page number, at form
    feeds: the page number is ``page_lines``'s, the line above it a running line; the
    two are read as one footer (the sentence the page broke runs on across both), and
    neither short line makes the text look unwrapped (``hard_wrapped``: before, every
    line of this text was a sentence)."""
    text = re.sub(
        r"Quarterly Report 2023 \| Page (\d)\n",
        "(c) 2023 ACME Corp. All rights reserved.\n\\1\n\x0c",
        PAGES_JOINED,
    )
    footers, headers = page_furniture(text)
    assert [text[a:b] for a, b in footers] == ["1", "2", "3"]
    assert [text[a:b] for a, b in headers] == [
        "Quarterly Report 2023",
        "(c) 2023 ACME Corp. All rights reserved.",
    ] * 3
    assert hard_wrapped(text)
    sents = [" ".join(s.text.split()) for s in default_nlp(text).sents]
    assert (
        "Staff turnover fell to 8 percent, the lowest in five years, which management "
        "credits to the new training scheme and higher (c) 2023 ACME Corp. All rights "
        "reserved. 2 salaries." in sents
    ), sents
    assert "The union welcomed the raise but asked for shorter hours." in sents, sents


def test_markdown_bullets_and_emphasis_keep_their_sentences(default_nlp: Any) -> None:
    """The default pipeline on Markdown lists and emphasis: a ``"* "`` bullet is not a
    sentence of its own, nor an item's emphasised opening words."""
    cases = {
        "Some text here.\n\n* A short text of three lines takes the rule.\n"
        "* Another item is here.": [
            "Some text here.",
            "* A short text of three lines takes the rule.",
            "* Another item is here.",
        ],
        "- *Topic boundaries inside a sentence*: 58 of the synthetic set's 360 topic "
        "changes fall inside one sentence.\n- *A trained gap scorer*: a logistic "
        "regression per gap between units.": [
            "- *Topic boundaries inside a sentence*: 58 of the synthetic set's 360 topic "
            "changes fall inside one sentence.",
            "- *A trained gap scorer*: a logistic regression per gap between units.",
        ],
        "**Note:** the model runs once. **Warning:** do not run it twice.": [
            "**Note:** the model runs once.",
            "**Warning:** do not run it twice.",
        ],
    }
    for text, sentences in cases.items():
        assert [s.text.strip() for s in default_nlp(text).sents] == sentences


def test_a_short_list_without_punctuation(default_nlp: Any) -> None:
    """The default pipeline on a list of three short items without punctuation, where
    the model alone starts a sentence inside the second (``"Walk | the dog"``)."""
    doc = default_nlp("Buy milk\nWalk the dog\nCall mom")
    assert [s.text.strip() for s in doc.sents] == ["Buy milk", "Walk the dog", "Call mom"]


def test_titles_and_unpunctuated_lists_are_sentences(default_nlp: Any) -> None:
    """The default pipeline on a review under its title, as EWT's reviews open, and on
    a recipe whose ingredients are lines without punctuation: each line is a sentence
    (``short_lines_end_sentences``). The model alone keeps the title in the sentence
    below it and the ingredients in one sentence. The lines of an indented code block
    stay together."""
    review = "Great Service\nDr Mcdonald is wonderful. She answers all my questions."
    assert [s.text.strip() for s in default_nlp(review).sents] == [
        "Great Service",
        "Dr Mcdonald is wonderful.",
        "She answers all my questions.",
    ]
    recipe = "Ingredients\n2 cups flour\n1 cup sugar\n3 eggs\n\nMix the flour and sugar."
    assert [s.text.strip() for s in default_nlp(recipe).sents] == [
        "Ingredients",
        "2 cups flour",
        "1 cup sugar",
        "3 eggs",
        "Mix the flour and sugar.",
    ]
    code = "Example\n\n    foo bar\n    Baz qux\n    Quux\n\nDone here."
    assert [s.text.strip() for s in default_nlp(code).sents][1] == "foo bar\n    Baz qux\n    Quux"


def test_a_lists_last_item_ends_its_sentence(default_nlp: Any) -> None:
    """The last item of a list, without punctuation, ends its sentence above a line that
    opens with a capital (the model alone ran it on into that line); a single item
    wrapped by hand at a capitalised word stays one sentence (a list has at least
    ``MIN_LIST_LINES`` items)."""
    for text, last in [
        ("Steps:\n1) Open the box\n2) Remove the device\n3) Plug it in\nThat's it.", "That's it."),
        ("You need:\n* a laptop\n* a charger\nBring both tomorrow.", "Bring both tomorrow."),
        ("Agenda\n1. Budget\n2. Hiring\n3. Other business\nWe start at 10.", "We start at 10."),
    ]:
        sentences = [s.text.strip() for s in default_nlp(text).sents]
        assert sentences[-1] == last and len(sentences) == text.count("\n") + 1
    wrapped = "1. Open the lid carefully and remove the\nBattery from its slot."
    assert len(list(default_nlp(wrapped).sents)) == 1


@pytest.mark.parametrize(
    "items",
    [
        ["- open the valve", "- record the pressure", "- close the valve"],
        ["* open the valve", "* record the pressure"],
        ["1.) open the valve", "2.) record the pressure", "3.) close the valve"],
        ["• 9. open the valve", "• 10. record the pressure"],
        ["(a) open the valve", "(b) record the pressure"],
        ["iv. open the valve", "v.\trecord the pressure"],
    ],
)
def test_list_lines_start_sentences(items: list[str]) -> None:
    """Lines that open with a bullet or a list marker, two or more of them, each start a
    sentence (on the marker), with no start predicted anywhere; the line before the list
    keeps its sentence, and a text with one such line is left as it was."""
    nlp = spacy.blank("en")
    doc = nlp("steps to follow\n" + "\n".join(items) + "\nthen sign the log")
    none = numpy.zeros(len(doc), dtype="int32")
    starts = layout_starts(doc, none, paragraph_breaks=True)
    split = nlp(doc.text)
    for token, start in zip(split, starts, strict=True):
        token.is_sent_start = bool(start) or token.i == 0
    sentences = [sent.text.strip() for sent in split.sents]
    # the item's sentence runs to the next item, the last one takes the line after it
    assert sentences[0] == "steps to follow"
    assert [s.split("\n")[0] for s in sentences[1:]] == items
    one = nlp("the ratio was small\n- as the table shows -\nand it stayed so")
    assert not layout_starts(one, numpy.zeros(len(one), "int32"), paragraph_breaks=True)[1:].any()
    # without paragraph_breaks the layout adds nothing
    assert not layout_starts(doc, none, paragraph_breaks=False)[1:].any()


def test_hard_wrapped_lines_are_not_sentences() -> None:
    """Text wrapped at 40 characters: its line breaks fall inside sentences, and starts
    at the real sentence starts leave them alone."""
    sentences = [
        "The museum opens at nine in the morning on weekdays.",
        "It closes at five, except on Thursdays, when it stays open until eight.",
        "Entry is free for children under twelve and for members.",
        "Guided tours leave from the main hall every hour.",
    ]
    text = textwrap.fill(" ".join(sentences), 40)
    doc = EN(text)
    assert sum(t.text == "\n" for t in doc) >= 5
    predicted = numpy.zeros(len(doc), dtype="int32")
    firsts = {s.split()[0] for s in sentences[1:]}
    starts = [t.i for t in doc if t.text in firsts and doc[t.i - 1].text == "." or t.i == 0]
    assert len(starts) == 4
    predicted[starts] = 1
    assert numpy.flatnonzero(layout_starts(doc, predicted, paragraph_breaks=True)).tolist() == (
        starts
    )


def test_layout_starts_punctuation(doc: Any) -> None:
    # a start predicted on punctuation that ends the sentence before it (here on every
    # token of TEXT) moves to the token that next_starts gives after that punctuation;
    # a start after an opening bracket or quote (2 '"', 13 "(", 18 '"', 28 "“") moves onto it;
    # none is on the dialogue tag after a quoted question (22 "she" of '"Why?" she asked'),
    # nor on a word in lower case that no final punctuation precedes, in this text that
    # writes capitals (1 "said", 7 "he", 8 "left", 15 "below", 23 "asked")
    every = numpy.ones(len(doc), dtype=bool)
    out = layout_starts(doc, every, paragraph_breaks=True)
    closing = [4, 5, 9, 10, 12, 16, 17, 20, 21, 24, 25, 27, 30, 31]
    after_opening = [3, 14, 19, 29]
    tag = 22
    lower = [1, 7, 8, 15, 23]
    assert doc[tag].text == "she"
    assert [doc[i].text for i in lower] == ["said", "he", "left", "below", "asked"]
    assert numpy.flatnonzero(~out).tolist() == sorted(closing + after_opening + [tag] + lower)
    nxt = next_starts(doc)
    assert all(out[nxt[i]] for i in closing if nxt[i] < len(doc) and nxt[i] != tag)
    assert all(out[i - 1] for i in after_opening)
    words = numpy.zeros(len(doc), dtype="int32")
    words[after_opening] = 1
    assert numpy.flatnonzero(layout_starts(doc, words, paragraph_breaks=True)).tolist() == [
        2,
        13,
        18,
        28,
    ]
    one = EN("Hello!? Is that you?")
    predicted = numpy.array([1, 0, 1, 1, 0, 0, 0], dtype="int32")  # Hello ! ? Is that you ?
    assert layout_starts(one, predicted, paragraph_breaks=True).tolist() == [1, 0, 0, 1, 0, 0, 0]
    quoted = EN('"Why?" she asked.')
    predicted = numpy.array([0, 1, 0, 0, 0, 0, 0], dtype="int32")  # " Why ? " she asked .
    assert layout_starts(quoted, predicted, paragraph_breaks=True).tolist() == [0] * 7


@pytest.mark.parametrize(
    "text,first_words",
    [
        # footnote markers after final punctuation end the sentence they follow
        ("He went to school in Dulwich. [17] Placed in care, he was unhappy.", ["He", "Placed"]),
        ('It was "in love." [6] In later years, it faded.', ["It", "In"]),
        ("Byron left (in 1821). [22] [23] His poems were sad.", ["Byron", "His"]),
        ("The war ended in 1945. [citation needed] Peace came.", ["The", "Peace"]),
        ("It was long. [1, 2] Then it ended. [a] So it goes.", ["It", "Then", "So"]),
        # not after final punctuation: the marker stays where it stands
        ("See the work of Smith [3] for details. It was good.", ["See", "It"]),
        # an entry of a reference list starts its own sentence on its own line
        ("References.\n[1] Smith, J. The book.\n[2] Jones, K. A paper.", ["References", "[", "["]),
        # an elision is not a marker (the treebanks disagree where it belongs)
        ("They said so. [...] Then they left.", ["They", "["]),
        # a changelog's reference to an issue or a pull request stays with its item
        ("- Relax pinning. (#956)\n- Handle errors. (#918, #920)\n", ["-", "-"]),
        (
            "Fix it. (PR #12) Add a flag. (GH-1234) Drop it. (#7) End.",
            ["Fix", "Add", "Drop", "End"],
        ),
        # a number alone in brackets is a list's marker: it opens
        ("Do as follows. (1) Stir it. (2) Wait.", ["Do", "(", "("]),
    ],
)
def test_reference_markers_stay_with_their_sentence(text: str, first_words: Any) -> None:
    doc = EN(text)
    # a start proposed right after a full stop or a closing bracket lands after the markers
    proposed = numpy.array([i == 0 or doc[i - 1].text in {".", ")"} for i in range(len(doc))])
    found = layout_starts(doc, proposed.astype("int32"), paragraph_breaks=True)
    assert [doc[i].text for i in numpy.flatnonzero(found)] == first_words


def test_a_start_on_a_reference_marker_moves_past_it() -> None:
    doc = EN("He went to Dulwich. [17] [18] Placed in care, he was sad.")
    assert [t.text for t in doc][5:11] == ["[", "17", "]", "[", "18", "]"]
    for i in range(5, 11):
        proposed = numpy.zeros(len(doc), dtype="int32")
        proposed[[0, i]] = 1
        starts = layout_starts(doc, proposed, paragraph_breaks=False)
        assert numpy.flatnonzero(starts).tolist() == [0, 11]


@pytest.mark.parametrize(
    "text",
    [
        "See the work of Smith [3] for details.",
        "It fades when one stops taking classes [17], [18] and when one moves [20].",
        "It is lost (\u201cuse it or lose it\u201d [20]), or kept.",
        "Fixed the parser (#918) and the docs.",
    ],
)
def test_a_start_on_a_marker_after_a_word_is_dropped(text: str) -> None:
    """A footnote marker (or an issue's number) after a word on the same line starts no
    sentence: a start the model puts on any of its tokens is dropped, not moved on to
    the comma or word after it (the model put 10 such starts on GUM dev's academic
    article, ``"classes [17], [18] and"``); one on the word after it stays."""
    doc = EN(text)
    markers = [
        i
        for i, token in enumerate(doc)
        if token.text in ("[", "(") and doc[i + 1].text[0] in "#0123456789"
    ]
    assert markers
    for a in markers:
        b = next(i for i in range(a, len(doc)) if doc[i].text in ("]", ")")) + 1
        for i in range(a, b + 1):
            proposed = numpy.zeros(len(doc), dtype="int32")
            proposed[[0, i]] = 1
            starts = numpy.flatnonzero(layout_starts(doc, proposed, paragraph_breaks=False))
            if i < b:
                assert starts.tolist() == [0]
            elif doc[b].is_alpha:
                assert starts.tolist() == [0, b]


@pytest.mark.parametrize(
    "text,first_words",
    [
        # a number after the abbreviation that numbers it continues the sentence
        ("He was former World No. 1, who won. He left.", ["He", "He"]),
        ("He was former World No.\u00a01, who won. He left.", ["He", "He"]),
        ("See Vol. 2 and Fig. 3, pp. 45. It is short.", ["See", "It"]),
        ("It dates from c. 1500 or ca. 1050 BC. Then it fell.", ["It", "Then"]),
        ("He was ranked world no. 91. He won. Nos. 11 and 20 flew.", ["He", "He", "Nos"]),
        # a line break between them, another word, a capital initial: the start stays
        ("The list ends with No.\n2 opens the next one.", ["The", "2"]),
        ("It was built in 1999. 2000 came next.", ["It", "2000"]),
        ("It was written by John P. 5 copies were sold.", ["It", "5"]),
    ],
)
def test_a_number_keeps_its_abbreviation(text: str, first_words: Any) -> None:
    doc = EN(text)
    # a start proposed after every full stop, as the model may put them
    proposed = numpy.array([i == 0 or doc[i - 1].text.endswith(".") for i in range(len(doc))])
    found = layout_starts(doc, proposed.astype("int32"), paragraph_breaks=False)
    assert [doc[i].text.strip() for i in numpy.flatnonzero(found)] == first_words


@pytest.mark.parametrize(
    "text,first_words",
    [
        # a dialogue tag after a quoted question or exclamation goes on with it
        ('The door opened. "Who is there?" she asked. Nobody came.', ["The", '"', "Nobody"]),
        ("He waited. 'Is it over?' asked Mary. It was.", ["He", "'", "It"]),
        ("\u201cStop!\u201d  he shouted. They did.", ["\u201c", "They"]),
        # a capital, a line break, a full stop or no quote before the word: it starts
        ('"Why?" He left.', ['"', "He"]),
        ('"Why?"\nhe asked.', ['"', "he"]),
        ('He said "go." she left.', ["He", "she"]),
        ("Why? he asked.", ["Why", "he"]),
    ],
)
def test_a_dialogue_tag_goes_on_with_its_quote(text: str, first_words: Any) -> None:
    doc = EN(text)
    # a start proposed after every final mark, as the model may put them
    proposed = follows_final(doc).astype("int32")
    proposed[0] = 1
    found = layout_starts(doc, proposed, paragraph_breaks=False)
    assert [doc[i].text.strip() for i in numpy.flatnonzero(found)] == first_words


def test_the_default_pipeline_keeps_a_dialogue_tag_with_its_quote(default_nlp: Any) -> None:
    """The shipped ``attn_senter`` puts a start on "she" here (P(S) about 0.8): the tag
    rule keeps it in the quote's sentence, where UD treebanks put it."""
    doc = default_nlp('The door opened. "Who is there?" she asked quietly. Nobody answered.')
    assert [s.text for s in doc.sents] == [
        "The door opened.",
        '"Who is there?" she asked quietly.',
        "Nobody answered.",
    ]
    assert doc[10].text == "she" and doc[10]._.start_score > 0.5


LAYOUT_TEXTS = [
    TEXT,
    'Opening hours\n\nThe museum opens at nine. It closes at five.\n\n(Prices) "Free."',
    '\n\n"Why?" she asked. (Really.) Yes!? No\u2026 \u201cFine.\u201d\n\n\nEnd',
    "Milk and eggs\nCall the bank\n(about the loan)\nWalk the dog.\n\nFinish it\r\nthen rest",
]


# list items: markers on their own line or inline, with and without brackets
LIST_TEXT = "Steps:\n1. Open it.\n2. Stir. 3) Wait.\n(iv) Done. b. End.\n5.\nLast"


def test_join_list_markers() -> None:
    doc = EN(LIST_TEXT)
    # 0 Steps 1 : 2 \n 3 1 4 . 5 Open 6 it 7 . 8 \n 9 2 10 . 11 Stir 12 . 13 3 14 )
    # 15 Wait 16 . 17 \n 18 ( 19 iv 20 ) 21 Done 22 . 23 b. 24 End 25 . 26 \n 27 5 28 .
    # 29 \n 30 Last
    markers = [doc[i].text for i in (3, 9, 13, 18, 23, 27, 30)]
    assert markers == ["1", "2", "3", "(", "b.", "5", "Last"]
    every = numpy.zeros(len(doc), dtype="int32")
    every[[0, 3, 5, 9, 11, 13, 15, 18, 21, 23, 24, 27, 30]] = 1
    joined = join_list_markers(doc, every)
    assert joined.dtype == every.dtype and every[5] == 1  # a new array
    # the start after each marker-only sentence goes; after "5." a line break: it stays
    assert numpy.flatnonzero(joined).tolist() == [0, 3, 9, 13, 18, 23, 27, 30]
    # a marker that ends a longer sentence is no list marker
    doc = EN("See section 2. It explains the rest.")
    starts = numpy.array([1, 0, 0, 0, 1, 0, 0, 0, 0], dtype="int32")
    assert join_list_markers(doc, starts).tolist() == starts.tolist()
    assert layout_starts(doc, starts, paragraph_breaks=True).tolist() == starts.tolist()


# (predicted starts: after each marker, as the model may put them)
MARKER_ENDS_CASES = [
    # a marker that begins a line opens its item
    ("Steps:\n1.) Open it\n2.) Stir it", [0, 6, 12], [0, 3, 9]),
    # after final punctuation; after a bullet; continuing the marker its sentence opens
    ("It is red. 2. Blue. • 9. Cold ⁃10. Hot", [0, 6, 11, 14], [0, 4, 8, 12]),
    ("1. Buy milk 2. Buy tea 3. Go", [0, 6, 10], [0, 4, 8]),
    ("a) apples b) pears", [0, 5], [0, 3]),
    # a number that ends a sentence, or that does not continue the list, stays
    ("1. Buy milk 3. Go home", [0, 6], [0, 6]),
    ("See section 2. It explains. He had ii. Then", [0, 4, 7, 11], [0, 4, 7, 11]),
]


@pytest.mark.parametrize("text,predicted,expected", MARKER_ENDS_CASES)
def test_a_marker_that_ends_a_sentence_opens_the_next(
    text: str, predicted: list, expected: list
) -> None:
    doc = EN(text)
    starts = numpy.zeros(len(doc), dtype="int32")
    starts[predicted] = 1
    assert numpy.flatnonzero(join_list_markers(doc, starts)).tolist() == expected
    assert numpy.flatnonzero(layout_starts(doc, starts, paragraph_breaks=True)).tolist() == expected


def test_item_numbers() -> None:
    assert item_numbers("12") == {12}
    assert item_numbers("c") == {3}
    assert item_numbers("iv") == item_numbers("IV") == {4}
    assert item_numbers("i") == {1, 9} and item_numbers("xii") == {12}
    assert item_numbers("vv") == set()


# a page printed double-spaced, in lower case (``single_spaced``)
DOUBLE_PAGE = (
    "the river runs past an old mill where people\n\n"
    "once ground corn for bread and it was built in\n\n"
    "1820 by a family of millers from the north\n"
)


@settings(max_examples=60, deadline=None)
@given(
    which=st.integers(0, len(LAYOUT_TEXTS) + len(MARKER_ENDS_CASES) + 1),
    bits=st.lists(st.booleans(), min_size=60, max_size=60),
    paragraph_breaks=st.booleans(),
)
# a marker line ("5.") before the last line: the line rules read the list items' starts
@example(which=4, bits=[False] * 60, paragraph_breaks=True)
# the double-spaced page, every token a separator
@example(
    which=len(LAYOUT_TEXTS) + len(MARKER_ENDS_CASES) + 1, bits=[True] * 60, paragraph_breaks=True
)
def test_decide_starts_equals_layout_of_sentence_starts(
    which: int, bits: list, paragraph_breaks: bool
) -> None:
    """The sweepable decision (targets + fixed starts) that calibration and evaluation
    use equals the step-by-step rule: separators -> next starts -> layout rules (on a
    page printed double-spaced too, which both read single-spaced)."""
    texts = LAYOUT_TEXTS + [LIST_TEXT] + [case[0] for case in MARKER_ENDS_CASES] + [DOUBLE_PAGE]
    assert double_spaced(DOUBLE_PAGE)
    doc = EN(texts[which])
    separators = numpy.array(bits[: len(doc)], dtype=bool)
    scores = separators.astype("float32")
    expected = layout_starts(
        doc, sentence_starts(doc, separators), paragraph_breaks=paragraph_breaks
    ).astype(bool)
    expected[0] = True
    got = decide_starts(doc, scores, 0.5, paragraph_breaks=paragraph_breaks)
    assert got.tolist() == expected.tolist()


def test_follows_final_and_where_a_start_lands(doc: Any) -> None:
    # (token indices of TEXT above)
    marked = numpy.flatnonzero(follows_final(doc)).tolist()
    # the tokens after a run of closers that holds final punctuation: after '!"', "?!",
    # ".", '.)"', '?"', ". ", "…", ".”" (not after an opening bracket or quote)
    assert marked == [5, 6, 10, 11, 13, 17, 18, 21, 22, 25, 26, 28, 31, 32]
    # unmarked_starts reads where layout_starts moves a start predicted on token i from
    # decision_targets' target of token i - 1: past a run of closers, back onto openers
    targets, _ = decision_targets(doc, paragraph_breaks=False)
    lands = {4: 6, 9: 11, 24: 26, 19: 18, 14: 13, 29: 28, 6: 6, 32: 32, 7: None}
    for i, expected in lands.items():
        one = numpy.zeros(len(doc), dtype="int32")
        one[i] = 1
        laid = layout_starts(doc, one, paragraph_breaks=False)
        # (7 "he", in lower case after "Then" without punctuation, starts none)
        assert numpy.flatnonzero(laid).tolist() == ([] if expected is None else [expected]), i
        assert targets[i - 1] == (i if expected is None else expected), i
    end = EN("End.")  # a start on the final "." lands past the end
    assert not layout_starts(end, numpy.array([0, 1], dtype="int32"), paragraph_breaks=False)[1]
    assert decision_targets(end, paragraph_breaks=False)[0][0] == len(end)


# Eight punctuated sentences; "Because" (token 4 of sentence 1, a capital, so the rule
# on lower case without punctuation leaves it to the threshold) could start one
EDITED = " ".join(f"Sentence {k} ends here Because it must." for k in range(8))


def _probs(doc: Any, extra: Dict[int, float]) -> numpy.ndarray:
    probs = numpy.zeros(len(doc), dtype="float32")
    for token in doc[1:]:
        if doc[token.i - 1].text == ".":
            probs[token.i] = 0.9
    for i, p in extra.items():
        probs[i] = p
    return probs


def test_unmarked_starts_in_edited_text() -> None:
    doc = EN(EDITED)
    assert doc[4].text == "Because"
    probs = _probs(doc, {4: 0.5})
    plain = layout_starts(doc, (probs >= 0.25).astype("int32"), paragraph_breaks=True)
    assert plain[4] and plain.sum() == 8  # (token 0 is the component's to set)
    got = unmarked_starts(doc, probs, 0.25, 0.775, paragraph_breaks=True)
    assert not got[4] and got.sum() == 7  # the start without punctuation needs 0.775
    assert unmarked_starts(doc, _probs(doc, {4: 0.8}), 0.25, 0.775, paragraph_breaks=True)[4]
    # threshold_unmarked at or below threshold: the plain decision
    assert unmarked_starts(doc, probs, 0.25, 0.25, paragraph_breaks=True).tolist() == (
        plain.tolist()
    )


def test_unmarked_starts_where_punctuation_is_rare() -> None:
    """Where fewer than 75% of the starts follow final punctuation (text that mostly
    lost it), starts without it keep ``threshold``."""
    doc = EN(EDITED.replace(".", "").replace("must", "must."))
    words = [t.i for t in doc if t.text == "Sentence" and t.i > 0]
    probs = numpy.zeros(len(doc), dtype="float32")
    probs[words] = 0.4
    got = unmarked_starts(doc, probs, 0.25, 0.775, paragraph_breaks=True)
    assert numpy.flatnonzero(got).tolist() == words


def test_unmarked_starts_counts_a_quote_after_a_full_stop() -> None:
    """A start predicted on the word after an opening quote lands on the quote, which
    follows the full stop: it keeps ``threshold``."""
    doc = EN(EDITED + ' "Why not?" he asked.')
    why = next(t.i for t in doc if t.text == "Why")
    probs = _probs(doc, {why - 1: 0.0, why: 0.3})
    got = unmarked_starts(doc, probs, 0.25, 0.775, paragraph_breaks=True)
    assert got[why - 1] and not got[why]


@settings(max_examples=60, deadline=None)
@given(
    which=st.integers(0, len(LAYOUT_TEXTS) + len(MARKER_ENDS_CASES)),
    marked=st.sets(st.integers(1, 79), max_size=10),
)
@example(which=5, marked={6, 12})  # "Steps:\n1.) Open it\n2.) Stir it", items' first words
def test_join_list_markers_does_not_depend_on_the_first_token_being_marked(
    which: int, marked: set
) -> None:
    """The first token starts the Doc's first sentence whether or not ``starts`` marks
    it, so the list-marker rule decides every later start the same either way."""
    texts = LAYOUT_TEXTS + [EDITED] + [case[0] for case in MARKER_ENDS_CASES]
    doc = EN(texts[which])
    starts = numpy.zeros(len(doc), dtype="int32")
    starts[[i for i in marked if i < len(doc)]] = 1
    unmarked = join_list_markers(doc, starts)
    starts[0] = 1
    assert unmarked[1:].tolist() == join_list_markers(doc, starts)[1:].tolist()


@settings(max_examples=60, deadline=None)
@given(
    which=st.integers(0, len(LAYOUT_TEXTS)),
    marked_p=st.sampled_from([0.0, 0.95]),
    values=st.dictionaries(st.integers(0, 79), st.floats(0.0, 1.0, width=32), max_size=8),
    threshold=st.sampled_from([0.1, 0.25, 0.5]),
    unmarked=st.sampled_from([0.3, 0.6, 0.9]),
    paragraph_breaks=st.booleans(),
)
# a probability at ``threshold_unmarked`` itself, in float32
@example(
    which=0, marked_p=0.95, values={1: 0.9}, threshold=0.1, unmarked=0.9, paragraph_breaks=False
)
def test_unmarked_starts_lie_between_the_two_thresholds(
    which: int,
    marked_p: float,
    values: dict,
    threshold: float,
    unmarked: float,
    paragraph_breaks: bool,
) -> None:
    """Every start that ``threshold_unmarked`` alone makes is kept, and none is added to
    those that ``threshold`` makes. (Likely starts after final punctuation and a few
    others elsewhere: the documents where the rule applies.)

    Not on lists run together on one line (``MARKER_ENDS_CASES``): there the list-marker
    rule reads the sentence around each marker, so a start more or fewer elsewhere can
    change it, and no order between the two thresholds' layouts holds ("1. Buy milk 2.
    Buy tea 3. Go" with a start at "milk" under the lower threshold only keeps "2." with
    "milk"). ``test_join_list_markers_*`` cover those texts. Nor, with paragraph breaks,
    on a text of short lines (``LAYOUT_TEXTS[3]``): there ``lines_end_sentences`` reads
    how many lines already hold a start, so a start more on one line can make every line
    a sentence and take away a start inside another (a start at "and" of "Milk and eggs"
    that the higher threshold alone keeps)."""
    assume(not (paragraph_breaks and which == 3))
    texts = LAYOUT_TEXTS + [EDITED]
    doc = EN(texts[which])
    probs = numpy.where(follows_final(doc), marked_p, 0.0).astype("float32")
    for i, value in values.items():
        if i < len(doc):
            probs[i] = value
    got = unmarked_starts(doc, probs, threshold, unmarked, paragraph_breaks=paragraph_breaks)

    def laid(t: float) -> numpy.ndarray:
        starts = (probs >= t).astype("int32")
        return layout_starts(doc, starts, paragraph_breaks=paragraph_breaks).astype(bool)

    low, high = laid(threshold), laid(max(threshold, unmarked))
    # (the first token starts the text's first sentence whatever either reading gives it)
    assert not (high & ~got.astype(bool))[1:].any()
    assert not (got.astype(bool) & ~low)[1:].any()


HEADED_TEXT = (
    "# Attention heads\n\nHeads differ. Some track syntax.\n\nResults\n\nThey held up well."
    "\n\nSetup notes\n=====\n\nWe used two cores.\n\nDear Anna,\n\nThanks for it.\n\n"
    "See the table below\nfor the numbers. Use # as a comment. Then stop.\n\nLast words"
)


def test_heading_sentences() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    doc = nlp(HEADED_TEXT)
    predicted = numpy.array([t.is_sent_start is True for t in doc], dtype="int32")
    sent_starts = numpy.flatnonzero(layout_starts(doc, predicted, paragraph_breaks=True))
    ends = [*sent_starts[1:].tolist(), len(doc)]
    texts = [doc[a:b].text.strip() for a, b in zip(sent_starts.tolist(), ends, strict=True)]
    flags = heading_sentences(doc, sent_starts, paragraph_starts(doc, sent_starts))
    # the same from the sentences' texts, as the segmenter passes them
    raw = [doc[a:b].text for a, b in zip(sent_starts.tolist(), ends, strict=True)]
    given = heading_sentences(doc, sent_starts, paragraph_starts(doc, sent_starts), raw)
    assert given.tolist() == flags.tolist()
    headings = [text for text, flag in zip(texts, flags, strict=True) if flag]
    # marked (Markdown, underlined) or a short paragraph of one line without closing
    # punctuation; not "Dear Anna," (a comma), not a sentence in mid-line, not two lines,
    # and not the last sentence (it heads nothing)
    assert headings == ["# Attention heads", "Results", "Setup notes\n====="], texts
    assert [int(flag) for flag in flags if flag] == [MARKED_HEADING, PLAIN_HEADING, MARKED_HEADING]
    assert "Last words" in texts and "Dear Anna," in texts


def test_a_list_item_heads_nothing() -> None:
    """A short paragraph of one line that opens with a bullet is a list item, not a plain
    heading (a changelog's one fix under its heading was one, so the headings of every
    version ran together); a numbered line may be a heading."""
    text = (
        "Results\n\n* Faster loading\n\n- Fewer crashes by @anna in #12\n\n"
        "\u2022 Smaller wheels\n\n1. Introduction\n\nThe text of it goes on. It ends."
    )
    doc = spacy.blank("en")(text)
    firsts = [0] + [t.i + 1 for t in doc[:-1] if t.is_space and "\n\n" in t.text]
    flags = heading_sentences(doc, firsts, paragraph_starts(doc, firsts))
    assert [doc[i].text for i in firsts] == ["Results", "*", "-", "\u2022", "1", "The"]
    assert flags.tolist() == [PLAIN_HEADING, 0, 0, 0, PLAIN_HEADING, 0]


@settings(max_examples=200, deadline=None)
@given(
    flags=st.lists(st.sampled_from([NOT_HEADING, PLAIN_HEADING, MARKED_HEADING]), max_size=12),
    data=st.data(),
)
def test_heads_prose_reads_the_paragraph_after(flags: list[int], data: Any) -> None:
    """``heads_prose`` against the paragraphs written out: a plain heading heads prose
    where the sentences after it up to the next paragraph (or heading) are two or more,
    or hold 25 words or more."""
    n = len(flags)
    first = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    words = data.draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    texts = [" ".join(["word"] * w) for w in words]
    found = heads_prose(numpy.array(flags, dtype="int8"), first, texts).tolist()
    for k in range(n):
        after: list[int] = []
        for j in range(k + 1, n):
            if (after and first[j]) or flags[j]:
                break
            after.append(words[j])
        expected = flags[k] == PLAIN_HEADING and (len(after) >= 2 or sum(after) >= 25)
        assert found[k] == expected, (k, flags, first, words)


def test_plain_headings_over_prose_start_segments(default_nlp: Any) -> None:
    """Text with its section titles on lines of their own and no markup (from HTML, a
    word processor or PDF): a title over a paragraph of prose starts a segment, as a
    marked heading does; short lines over short lines (a list, a letter's end) do not."""
    sections = {
        "Early life": "Anna was born in a small mill town on the river in 1820. Her father "
        "ran the mill and her mother kept the accounts. She learned to read from the "
        "ledgers before she was five.",
        "Career at sea": "At sixteen she signed on to a whaling ship out of Nantucket. The "
        "voyage lasted four years and took the crew around Cape Horn twice.",
        "Later years": "She settled in Boston and wrote a memoir of the voyages. The book "
        "sold well and was translated into French and German.",
    }
    text = "\n\n".join(f"{title}\n\n{body}" for title, body in sections.items())
    doc = default_nlp(text)
    assert segment_first_lines(doc) == list(sections)
    listed = (
        "Apples\n\nOranges\n\nPears\n\nPlums\n\nThe fruit came in on Monday. It sold out by noon."
    )
    doc = default_nlp(listed)
    assert len(doc.spans["attn_segments"]) == 1


def test_marked_headings() -> None:
    """Marked headings: Markdown's, MediaWiki's (as written and as WikiText writes it),
    and a line whose underline is a sentence of its own (both are the heading); a rule
    of dashes under a blank line, or under a paragraph of two lines, underlines
    nothing."""
    lines = [
        "== Early life ==",
        "He was born in Ohio.",
        " = = Career = = ",
        "He sold shoes.",
        "Awards",
        "------",
        "He won two.",
        "",
        "------",
        "Later he wrote that it had gone well",
        "and that he would do it again.",
        "------",
        "The end came soon.",
    ]
    doc = EN("\n".join(lines))
    # one sentence a line (the lines of the two-line paragraph together)
    firsts = [0] + [t.i + 1 for t in doc[:-1] if "\n" in t.text and t.is_space]
    firsts = [i for i in firsts if i < len(doc)]
    starts = [f for f in firsts if not doc[f].text.startswith("and")]
    texts = sentence_texts(doc, starts)
    flags = heading_sentences(doc, starts, numpy.zeros(len(starts), dtype=bool), texts)
    marked = [t.strip() for t, f in zip(texts, flags, strict=True) if f == MARKED_HEADING]
    assert marked == ["== Early life ==", "= = Career = =", "Awards", "------"], texts
    assert not (flags == PLAIN_HEADING).any()


def test_a_mediawiki_page_title_is_a_heading_and_a_formula_is_not() -> None:
    """On a MediaWiki page (one with a section heading), ``= Title =`` between whole
    paragraphs is the page's title, above its sections in the heading paths; a formula
    that WikiText leaves on a line of its own inside a sentence is not. As in WikiText,
    a page's title may follow a section left empty or a closing quote, and open a
    paragraph that does not open with a capital."""
    from spacy_attnseg.sentences import heading_paths

    paragraphs = [
        " = Robert Boulter = ",
        " Robert Boulter is an English actor . ",
        " = = Career = = ",
        " The filter has inductance L ",
        " = 1 henry and capacitance C = ",
        " 1 farad . The prototype can be scaled . ",
        " = = Filmography = = ",
        " = Du Fu = ",
        " Du Fu was a Chinese poet . ",
        " = = Works = = ",
        ' He wrote the line " the state is broken . " ',
        " = Ironclad warship = ",
        " An ironclad is a steam @-@ propelled warship . ",
        " = iPod = ",
        " iPod is a line of portable media players . ",
    ]
    doc = spacy.blank("en")("\n\n".join(paragraphs))
    starts = [0] + [t.i + 1 for t in doc[:-1] if t.is_space and "\n\n" in t.text]
    texts = sentence_texts(doc, starts)
    assert len(texts) == len(paragraphs)
    flags = heading_sentences(doc, starts, numpy.ones(len(starts), dtype=bool), texts)
    marked = [t.strip() for t, f in zip(texts, flags, strict=True) if f == MARKED_HEADING]
    assert marked == [p.strip() for p in paragraphs if p.startswith(" =") and "henry" not in p]
    paths, _, _ = heading_paths(texts, flags, [1, 3, 8, 10, 12, 14])
    assert paths == [
        [[1, "Robert Boulter"]],
        [[1, "Robert Boulter"], [2, "Career"]],
        [[1, "Du Fu"]],
        [[1, "Du Fu"], [2, "Works"]],
        [[1, "Ironclad warship"]],
        [[1, "iPod"]],
    ]


def test_no_heading_in_code_or_a_formula() -> None:
    """A ``#`` comment in a fenced or indented code block, and a formula between two
    single ``=``, are no headings; the same ``#`` line outside code is."""
    nlp = spacy.blank("en")
    lines = [
        "Run it like this.",
        "```",
        "# set the path",
        "path = 1",
        "```",
        "Or indent it.",
        "    # set the path",
        "    path = 1",
        "= 1 rad / s and a nominal impedance k =",
        "Then go on.",
        "# set the path",
        "The end.",
    ]
    doc = nlp("\n".join(lines))
    starts = [0] + [t.i + 1 for t in doc[:-1] if t.is_space and "\n" in t.text]
    texts = sentence_texts(doc, starts)
    flags = heading_sentences(doc, starts, numpy.ones(len(starts), dtype=bool), texts)
    marked = [k for k, flag in enumerate(flags) if flag == MARKED_HEADING]
    assert marked == [10], [(t, int(f)) for t, f in zip(texts, flags, strict=True)]
    assert in_code("a\n```\nb\n```\nc\n    d", [0, 2, 6, 12, 16]).tolist() == [
        False,
        True,
        True,
        False,
        True,
    ]


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(
            list("ab .!?\n\t\u00a0\u2028") + ["\U0001f600", "\u0301", "\ud7ff"]
        ),
        max_size=60,
    ),
    cuts=st.sets(st.integers(1, 60), max_size=8),
)
@example(text="", cuts=set())
@example(text="  a. \U0001f600 b!\n\n", cuts={2, 5})
def test_sentence_texts_equal_span_texts(text: str, cuts: set) -> None:
    """Each sentence's text sliced from ``doc.text`` is its ``Span.text``: leading
    whitespace tokens kept, the last token's trailing space left out, astral characters
    and combining marks counted as Python counts them."""
    doc = EN(text)
    starts = sorted({0, *(c for c in cuts if c < len(doc))}) if len(doc) else []
    ends = [*starts[1:], len(doc)] if starts else []
    expected = [doc[a:b].text for a, b in zip(starts, ends, strict=True)]
    assert sentence_texts(doc, starts) == expected
    assert sentence_texts(doc, []) == []


LINE_PARTS = [
    "The valve was checked.",
    "the night shift closed it",
    "## Results",
    "| a | b |",
    "|---|---|",
    "```",
    "> quoted text",
    "- an item",
    "2. a step",
    "Title",
    "=====",
    "== Section ==",
    "*Note:* read this",
    "",
    "    indented code",
    "For example::",
]


# line ends that are not a line feed, each with how it writes a blank line: Windows', old
# Mac text's, a word processor's (a vertical tab), a page break and a PDF page's end (a
# form feed), NEL, Unicode's separators, a record separator
LINE_ENDS = [
    ("\r\n", "\r\n\r\n"),
    ("\r", "\r\r"),
    ("\x0b", "\x0b\x0b"),
    ("\x0c", "\x0c\x0c"),
    ("\n\x0c", "\n\x0c\n\x0c"),
    ("\x85", "\x85\x85"),
    ("\u2028", "\u2029"),
    ("\u2028", "\u2028\u2028"),
    ("\x1e", "\x1e\x1e"),
]


def with_line_ends(text: str, end: str, blank: str) -> str:
    """``text`` with each ``"\\n\\n"`` written ``blank`` and each other ``"\\n"`` ``end``."""
    return re.sub("\n\n?", lambda m: blank if len(m.group()) == 2 else end, text)


@settings(max_examples=80, deadline=None)
@given(
    lines=st.lists(st.sampled_from(LINE_PARTS), min_size=1, max_size=12),
    starts=st.sets(st.integers(0, 80), max_size=10),
    ends=st.sampled_from(LINE_ENDS),
)
@example(
    lines=["## Notes", "", "Meeting notes", "Budget approved", "Next steps"],
    starts=set(),
    ends=("\r", "\r\r"),
)
@example(
    lines=["Intro", "", "    indented code", "== Section ==", "text"],
    starts=set(),
    ends=("\x0c", "\x0c\x0c"),
)
@example(  # (a paragraph separator between two rows: no table, as with a blank line)
    lines=["| a | b |", "", "|---|---|"], starts=set(), ends=("\u2028", "\u2029")
)
@example(  # (nor between a line and its underline: no heading)
    lines=["the night shift closed it", "", "====="], starts=set(), ends=("\u2028", "\u2029")
)
@example(  # (nor where the adornment is a sentence of its own)
    lines=["The valve was checked.", "", "====="], starts={0, 4}, ends=("\u2028", "\u2029")
)
@example(  # (a literal block's mark, then a paragraph separator: its blank line)
    lines=["For example::", "", "    indented code", "Title", "====="],
    starts=set(),
    ends=("\u2028", "\u2029"),
)
def test_line_ends_do_not_change_the_layout_rules(lines: Any, starts: set, ends: Any) -> None:
    """Lines that end in any of Unicode's line ends (``markup.LINE_END``: Windows'
    ``"\\r\\n"``, a lone ``"\\r"``, a form feed, ...), with blank lines written with
    them or as a paragraph separator, are lines: the layout rules give the same starts
    as for ``"\\n"`` (the tokens match one to one)."""
    unix = EN("\n".join(lines))
    other = EN(with_line_ends(unix.text, *ends))
    assert len(unix) == len(other)
    predicted = numpy.zeros(len(unix), dtype="int32")
    predicted[[s for s in starts if s < len(unix)]] = 1
    for breaks in (True, False):
        expected = layout_starts(unix, predicted, paragraph_breaks=breaks)
        assert (
            layout_starts(other, predicted, paragraph_breaks=breaks).tolist() == expected.tolist()
        )
    assert hard_wrapped(other.text) == hard_wrapped(unix.text)
    sentences = numpy.flatnonzero(expected)
    paragraphs = paragraph_starts(unix, sentences)
    assert paragraph_starts(other, sentences).tolist() == paragraphs.tolist()
    headings = heading_sentences(unix, sentences, paragraphs)
    assert heading_sentences(other, sentences, paragraphs).tolist() == headings.tolist()


def test_line_ends_do_not_change_the_sentences(default_nlp: Any) -> None:
    """The default pipeline gives the same sentences to a text whatever its line ends
    (``"\\n"``, ``"\\r\\n"``, ``"\\r"``, a form feed, ...: ``LINE_ENDS``): EWT dev
    documents one sentence per line, without final punctuation, hard-wrapped, and as
    Markdown pages. Each kind of line end is checked on two of the documents (each
    document with two kinds), in all four forms."""
    from paper.evaluation import read_conllu_documents
    from spacy_attnseg.gold import strip_final_punctuation

    docs = [d for d in read_conllu_documents(EWT_DEV)[:16] if len(d.starts) >= 3]
    docs = docs[: len(LINE_ENDS)]
    assert len(docs) == len(LINE_ENDS)
    forms = []
    for d in docs:
        sentences = d.sentences()
        forms.append(
            [
                "\n".join(sentences),
                "\n".join(strip_final_punctuation(s).lower() for s in sentences),
                textwrap.fill(d.text, 72),
                wrapped_markdown(sentences),
            ]
        )

    def sentences_of(texts: Any) -> Any:
        return [[" ".join(s.text.split()) for s in doc.sents] for doc in default_nlp.pipe(texts)]

    expected = sentences_of([text for texts in forms for text in texts])
    for k, ends in enumerate(LINE_ENDS):
        chosen = [k, (k + 1) % len(forms)]
        texts = [with_line_ends(text, *ends) for i in chosen for text in forms[i]]
        wanted = [expected[4 * i + j] for i in chosen for j in range(4)]
        assert sentences_of(texts) == wanted, ends


def bulleted(items: List[str], indent: str) -> str:
    """A Markdown page: a line, then a bulleted list of ``items``, each hard-wrapped at
    70 characters with its wrapped lines indented by ``indent``."""
    wrapped = [textwrap.fill(item, 70).replace("\n", "\n" + indent) for item in items]
    return "Notes on the documents follow.\n\n" + "\n".join(f"* {item}" for item in wrapped) + "\n"


def test_indentation_does_not_change_the_sentences(default_nlp: Any) -> None:
    """A list whose items wrap onto indented lines (Markdown's, reStructuredText's):
    the default pipeline gives the same sentences whether the wrapped lines are
    indented by two or three spaces or a tab (the word features read a line break
    without its indentation); EWT dev documents as the items. Before, a line break
    indented by spaces was a rare word to the model, which started more sentences at
    it than at one indented by a tab."""
    from paper.evaluation import read_conllu_documents

    items = [d.text for d in read_conllu_documents(EWT_DEV)[:40] if len(d.starts) >= 2][:30]
    pages = [bulleted(items, indent) for indent in ("\t", "  ", "   ")]
    found = [[" ".join(s.text.split()) for s in doc.sents] for doc in default_nlp.pipe(pages)]
    assert len(found[0]) > len(items)
    for indent, sentences in zip(("  ", "   "), found[1:], strict=True):
        assert sentences == found[0], repr(indent)


def test_wrapped_list_items_are_not_lines_of_one_sentence(default_nlp: Any) -> None:
    """In a list whose items wrap onto indented lines, the wrapped lines are the
    item's (``item_continuations``), not lines that hold a sentence each
    (``lines_end_sentences``): each item below is one sentence, not one per line."""
    text = (
        "Some notes on the release follow here.\n\n"
        "* The first item is a long one that wraps onto the next line of the text\n"
        "  because it holds many words, and the sentence goes on until it ends.\n"
        "* The second item also wraps onto a second line, since the writer had a lot\n"
        "  to say about it.\n"
        "* A third one.\n"
    )
    for form in (text, text.replace("* ", "1. ", 1).replace("* ", "2. ", 1).replace("* ", "3. ")):
        doc = default_nlp(form)
        items = [m.start() for m in re.finditer(r"^(?:\* |\d\. )", form, re.M)]
        assert [s.start_char for s in doc.sents] == [0, *items]


def test_line_breaks_are_read_as_line_feeds() -> None:
    """The word features of a whitespace token with line ends are those of its line
    ends written as line feeds: the indentation around them and other kinds of line
    end do not count; a blank line holding spaces is a blank line."""
    from spacy_attnseg.components.senter import read_line_breaks_as_line_feeds

    nlp = spacy.blank("en")
    doc = nlp.make_doc("One.\n   Two.\r\n\tThree.  \n \n  Four.   Five.\x0c  Six.")
    read_line_breaks_as_line_feeds([doc])

    def features(text: str, vocab: Any = nlp.vocab) -> Tuple[str, ...]:
        lexeme = vocab[text]
        return (lexeme.norm_, lexeme.prefix_, lexeme.suffix_, lexeme.shape_)

    spaces = [t.text for t in doc if t.is_space]
    assert spaces == ["\n   ", "\r\n\t", " \n \n  ", "  ", "\x0c  "]
    for text, like in zip(spaces, ["\n", "\n", "\n\n", None, "\n"], strict=True):
        if like is None:  # (no line end: as a fresh vocab has it)
            assert features(text) == features(text, spacy.blank("en").vocab)
            assert features(text) != features("\n")
        else:
            assert features(text) == features(like), repr(text)


def test_a_token_of_its_own_norm_reads_its_line_breaks_as_line_feeds(tmp_path: Path) -> None:
    """A token that holds a NORM of its own (spaCy's ``Doc.from_docs``, as the shipped
    tokenizer joins the pieces of a text with a run of more than 250 characters
    without white space, or a ``DocBin``) takes the NORM of its line ends written as line
    feeds too; a white-space token without a line end keeps its own."""
    from spacy.tokens import DocBin

    from spacy_attnseg.components.senter import read_line_breaks_as_line_feeds
    from spacy_attnseg.tokenizer import with_defaults

    nlp = spacy.blank("en")
    nlp.tokenizer = with_defaults(nlp)
    text = "A long run: " + "x" * 300 + " ends.\r\n \t Next line.\u00a0Done."
    first = nlp.make_doc(text)
    bin_path = tmp_path / "docs.spacy"
    DocBin(docs=[nlp.make_doc(text)]).to_disk(bin_path)
    stored = list(DocBin().from_disk(bin_path).get_docs(nlp.vocab))[0]
    assert [t.norm_ for t in first if "\n" in t.text] == ["\r\n \t "]  # (its own NORM)
    nbsp = [t.norm_ for t in first if t.text == "\u00a0"]
    assert nbsp == ["  "]  # (spaCy's special case)
    read_line_breaks_as_line_feeds([first, stored])
    for doc in (first, stored):
        assert [t.norm_ for t in doc if "\n" in t.text] == [nlp.vocab["\n"].norm_]
        assert [t.norm_ for t in doc if t.text == "\u00a0"] == nbsp
    # a Doc made after the lexeme changed reads the same
    assert [t.norm_ for t in nlp.make_doc(text) if "\n" in t.text] == ["\n"]


def test_a_text_with_a_long_run_gets_the_same_scores_every_time(default_nlp: Any) -> None:
    """The first pass over a text with a run of more than 250 characters and a line end
    the vocab has not read before gives the P(start) of every later pass (the line
    end's NORM was the raw text's in the first pass only, 0.09 off at one token)."""
    text = (
        "Notes from the field.\r\n  \t  \t" + "a" * 300 + " Dr. Smith arrived at 3.5 p.m.\u2028"
        "\t \t  Was it worth it?\r\n \t\t \tThe river runs past the old mill.\n"
    )
    line_ends = [
        t.text for t in default_nlp.make_doc(text) if t.text.isspace() and t.text.strip(" \n")
    ]
    assert len(line_ends) == 3
    # (the vocab has not read them as line feeds yet, or the test would be one of nothing)
    assert all(default_nlp.vocab[e].norm_ not in ("\n", "\n\n") for e in line_ends)
    first = default_nlp(text)._.start_scores
    assert default_nlp(text)._.start_scores == first


@pytest.mark.parametrize(
    "text,continued",
    [
        # a Markdown list whose items wrap onto indented lines
        ("Intro.\n\n* First item\n  wraps here\n* Second\n  and here\n", ["wraps", "and"]),
        # numbered items (reStructuredText's), a tab, and a further paragraph of an item
        ("1. One\n\tgoes on\n2. Two\n\n   more of two\n", ["goes", "more"]),
        # an indented line under prose, and lines at the margin after an item
        ("Prose line\n  indented prose\n- item\nnot indented\n  nor this\n", []),
        # a bullet or a marker alone on its line opens an item all the same
        ("Intro.\n*\n  wraps here\n2.\n  and here\n", ["wraps", "and"]),
    ],
)
def test_item_continuations(text: str, continued: List[str]) -> None:
    """The lines indented under a list item, and only they, continue it."""
    from spacy_attnseg.sentences import item_continuations

    doc = EN(text)
    assert [doc[i].text for i in item_continuations(doc)] == continued


def test_item_continuations_are_tokens_that_start_lines() -> None:
    """A line whose text starts inside a token (a tokenizer that keeps a line break in
    a token) gives no token: every index returned starts its line."""
    from spacy.tokens import Doc

    from spacy_attnseg.sentences import item_continuations

    doc = Doc(EN.vocab, words=["-", "item\n  wrapped", "\n  ", "more"], spaces=[True] * 3 + [False])
    assert doc.text == "- item\n  wrapped \n   more"
    assert [doc[i].text for i in item_continuations(doc)] == ["more"]


@settings(max_examples=300, deadline=None)
@given(
    marker=st.sampled_from(
        ["", "*", "-", "+", "–", "•", "1.", "12)", "(iv)", "b)", "A.)", "• 9.", "•  10.", "1.5"]
    ),
    gap=st.sampled_from(["", " ", "  ", "\t"]),
    rest=st.sampled_from(["", "Walk the dog", "x", "*", "2. more", ".5 of it"]),
)
def test_items_read_alike_on_text_and_tokens(marker: str, gap: str, rest: str) -> None:
    """A line opens a list item by its text (``opens_item_line``, which the paragraph
    rules read) exactly when its first token does (``opens_item``, which the sentence
    rules read)."""
    from spacy_attnseg.sentences import opens_item, opens_item_line, token_classes

    words = (marker + gap + rest).strip()
    assume(words)
    doc = EN(f"Above.\n{words}\nBelow.")
    first = next(t.i for t in doc if t.idx == len("Above.\n"))
    assert opens_item_line(words) == opens_item(doc, first, token_classes(doc).space)


# lines of a page with lists: items, lines indented (by spaces or a tab), lines at the
# margin, blank lines
LIST_PAGE_LINES = {
    "item": ["* first point", "- next point", "1. numbered point", "b) lettered point"],
    "indented": ["  goes on here", "   and on", "\tafter a tab"],
    "margin": ["Plain text here.", "More words"],
    "blank": [""],
}


@settings(max_examples=100, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(sorted(LIST_PAGE_LINES)), min_size=1, max_size=30),
    pick=st.integers(0, 11),
)
def test_item_continuations_follow_the_lines(kinds: List[str], pick: int) -> None:
    """``item_continuations`` against a walk over the page's lines as strings: an
    indented line continues the item above it when the last line that is neither
    indented nor blank opens an item (blank lines between change nothing)."""
    from spacy_attnseg.sentences import item_continuations

    lines = [LIST_PAGE_LINES[kind][pick % len(LIST_PAGE_LINES[kind])] for kind in kinds]
    text = "\n".join(lines)
    expected, offset, in_item = [], 0, False
    for kind, line in zip(kinds, lines, strict=True):
        if kind == "item":
            in_item = True
        elif kind == "margin":
            in_item = False
        elif kind == "indented" and in_item and offset > 0:
            expected.append(offset + len(line) - len(line.lstrip()))
        offset += len(line) + 1
    doc = EN(text)
    assert [doc[i].idx for i in item_continuations(doc)] == expected


@pytest.mark.parametrize(
    "text, opened",
    [
        # paragraphs whose first lines are indented (four spaces, a tab), one of one line
        (
            "    The mill stood by the river.\nIt ground corn for bread.\n"
            "    Today it is a museum.\nVisitors come on Sundays.\n"
            "    “We keep it running,” she said.\n    Nobody owns the land.\nThe council asked.\n",
            ["Today", "“We", "Nobody"],
        ),
        (
            "The mill stood.\n\tIt ground corn for the bread of the valley, and flour\n"
            "for the town.\n\t2 people work there now, and they keep the wheel turning\n"
            "on Sundays.\n",
            ["It", "2"],
        ),
        # one indented first line is no evidence of the layout
        ("The mill stood.\n    Today it is a museum.\nVisitors come.\n", []),
        # a quotation indented as a block: no paragraph's body below its first line
        (
            "He wrote:\n    The mill stood.\n    It ground corn.\nThen he left.\n"
            "    Today it is gone.\n    Nothing is left.\n",
            [],
        ),
        # a hanging indent (references): the lines above the indented ones are full
        (
            "Smith, J. (2020). A study of mills and the rivers that drive their wheels.\n"
            "    Journal of Rivers, 12, 1-10.\n"
            "Jones, K. (2019). Corn and bread in the north: a history of the old mills.\n"
            "    Mill Studies, 3, 5-9.\n"
            "Brown, A. (2018). How the people of the valley once ground their corn here.\n"
            "    Valley Press.\n",
            [],
        ),
        # a list's wrapped items, and definitions under their terms (numpydoc)
        ("* First item.\n  Second line of it.\nText.\n* Next item.\n  More of it.\nEnd.\n", []),
        ("x : int\n    The value.\ny : str\n    The name.\nMore text.\n", []),
        # a line under a sentence's end that opens in lower case continues it
        ("Done here.\n    and more.\nok\nDone.\n    and more.\nok\n", []),
        # the same layout inside a fenced code block
        ("```\nDone.\n    Return it.\nok\nDone.\n    Return it.\nok\n```\nText.\n", []),
        # different indentations: those of most first lines open paragraphs
        (
            "Intro ends.\n  One paragraph opens here and its body runs on below it\n"
            "at the margin.\n  Two paragraphs open so, and the body of this one runs on\n"
            "at the margin too.\n      Three is indented further, a line a writer set apart\n"
            "from the rest.\n",
            ["One", "Two"],
        ),
    ],
)
def test_indented_paragraphs(text: str, opened: List[str]) -> None:
    """A text that indents its paragraphs' first lines, and only such a text, has
    paragraphs opened by indentation."""
    from spacy_attnseg.sentences import indented_paragraphs

    assert [text[a:].split()[0] for a in indented_paragraphs(text)] == opened


WORDS = ["the", "mill", "river", "corn", "bread", "stood", "by", "ground", "people", "once"]


@settings(max_examples=100, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 4), min_size=1, max_size=12),
    indent=st.sampled_from(["  ", "    ", "\t", "   "]),
    seed=st.integers(0, 1000),
)
def test_indented_paragraphs_follow_the_paragraphs(
    lengths: List[int], indent: str, seed: int
) -> None:
    """``indented_paragraphs`` against the paragraphs a text was written from: each
    paragraph of ``lengths`` lines (a capital first, a short line with a full stop
    last), its first line indented. The layout shows where at least two paragraphs of
    two or more lines each follow the text's start or another such paragraph (a body at
    the margin below an indented line that follows a short one at the margin); then
    every paragraph but the first opens by its indentation."""
    from spacy_attnseg.sentences import MIN_INDENTED_PARAGRAPHS, indented_paragraphs

    draw = random.Random(seed)
    paragraphs = []
    for n in lengths:
        # (lines of ten words, the last of one: it ends short of the text's width)
        lines = [" ".join(draw.choice(WORDS) for _ in range(10)) for _ in range(n - 1)]
        lines.append(draw.choice(WORDS) + ".")
        lines[0] = indent + lines[0].capitalize()
        paragraphs.append(lines)
    text = "\n".join(line for lines in paragraphs for line in lines) + "\n"
    shown = sum(n >= 2 and (k == 0 or lengths[k - 1] >= 2) for k, n in enumerate(lengths))
    openings, offset = [], 0
    for k, lines in enumerate(paragraphs):
        if k:
            openings.append(offset + len(indent))
        offset += sum(len(line) + 1 for line in lines)
    expected = openings if shown >= MIN_INDENTED_PARAGRAPHS else []
    assert indented_paragraphs(text) == expected


def segment_openings(doc: Any, opened: Any) -> Set[int]:
    """The offsets where the default pipeline's topic segments may start, besides a
    rule's line: each paragraph's first sentence (``opened``: per sentence of ``doc``,
    whether it opens one), and every sentence of a paragraph of ``LONG_PARAGRAPH``
    sentences or more where such paragraphs hold ``LONG_SHARE`` of the sentences (a
    page whose layout marks few of its paragraphs is segmented by its sentences)."""
    long = topics.long_paragraph_sentences(opened)
    inside = bool(long.mean() >= topics.LONG_SHARE)
    return {
        sent.start_char
        for sent, first, in_long in zip(doc.sents, opened, long, strict=True)
        if first or (inside and in_long)
    }


def test_indented_first_lines_open_paragraphs(default_nlp: Any) -> None:
    """EWT dev documents as the paragraphs of a hard-wrapped text whose first lines are
    indented (two or four spaces, a tab), no blank lines. Each document that opens with
    a capital, a digit or a quote, after one that ends with a full stop, question or
    exclamation mark, opens a paragraph (others may be a sentence's lines: e-mail
    without final punctuation, a line in lower case); it opens a sentence too, and the
    topic segments start at such paragraphs (or at a rule, a line that keeps with the
    text after it), as where blank lines separate them, or inside the long paragraphs
    that the ones not found make, where those hold a third of the text
    (``segment_openings``)."""
    from paper.evaluation import read_conllu_documents

    texts = [d.text for d in read_conllu_documents(EWT_DEV)[:60] if len(d.starts) >= 2][:30]
    shown = [
        k
        for k in range(1, len(texts))
        if re.search(r"[.!?][\"')\]]*$", texts[k - 1].strip())
        and re.match(r"[\"'(]*[A-Z0-9]", texts[k].strip())
    ]
    assert len(shown) >= 15
    for indent in ("  ", "    ", "\t"):
        page = "\n".join(textwrap.fill(t, 70, initial_indent=indent) for t in texts) + "\n"
        begins = [m.end() for m in re.finditer(rf"^{indent}", page, re.M)]
        openings = [begins[k] for k in shown]
        doc = default_nlp(page)
        firsts = [s.start for s in doc.sents]
        assert set(openings) <= {doc[i].idx for i in firsts}, repr(indent)
        opened = paragraph_starts(doc, firsts)
        assert [doc[i].idx for i, o in zip(firsts, opened, strict=True) if o][1:] == openings
        # (a line without letters or digits, a rule, keeps with the text after it)
        rules = [m.start() for m in re.finditer(r"^[^\w\n]+$", page, re.M)]
        segments = [span.start_char for span in doc.spans["attn_segments"]]
        allowed = segment_openings(doc, opened) | set(rules)
        assert len(segments) > 1 and set(segments[1:]) <= allowed, repr(indent)


MILL = (
    "The river runs past an old mill where people once ground corn for bread. It was "
    "built in 1820 by a family of millers from the north, who had come south after a "
    "bad harvest and stayed for three generations.",
    "Today the mill is a museum. Visitors can see the wheel turn on Sundays, and a guide "
    "explains how the stones were dressed and how the flour was sold at the market.",
    "Nobody knows who owns the land now. The council has asked for records, but none "
    "have been found in the county archive or in the papers of the family.",
)


def test_short_line_paragraphs() -> None:
    """Hard-wrapped paragraphs without blank lines or indentation, as a PDF's text gives
    them: a line that ends a sentence short of the text's width ends its paragraph, and
    the next line opens one if it opens with a capital or a digit. Not where the text
    has a blank line or an indented line (the author marked the paragraphs), not in
    text that is not hard-wrapped, not above a line in lower case or a list's item."""
    from spacy_attnseg.sentences import short_line_paragraphs

    pages = [textwrap.fill(p, 60) for p in MILL]
    text = "\n".join(pages)
    openings = [text.index(p.split()[0] + " " + p.split()[1]) for p in MILL[1:]]
    assert short_line_paragraphs(text) == openings
    assert short_line_paragraphs("\n\n".join(pages)) == []
    assert short_line_paragraphs("\n  ".join(pages)) == []
    # one sentence per line, short lines: not hard-wrapped, every line is a sentence
    assert short_line_paragraphs("Walk the dog.\nFeed the cat.\nCall Ann.\n") == []
    lower = "\n".join([pages[0], "and " + pages[1]])
    assert short_line_paragraphs(lower) == []
    item = "\n".join([pages[0], "1. " + pages[1]])
    assert short_line_paragraphs(item) == []


def test_double_spaced() -> None:
    """A text with a blank line below every line, across which its sentences go on in
    lower case, is double-spaced, and its blank lines break no paragraph; not the same
    lines single-spaced, nor paragraphs of one line each between blank lines (even where
    one goes on in lower case). The page in lower case is double-spaced by its shape
    alone (``wrapped_page``): its lines are cut at a width, most of them inside a
    sentence."""
    from spacy_attnseg.sentences import double_spaced, paragraph_break_tokens

    lines = textwrap.fill(" ".join(MILL), 60).split("\n")
    # (the page's sentences go on across three line breaks or more)
    assert sum(a[-1] not in ".!?" and b[0].islower() for a, b in itertools.pairwise(lines)) >= 3
    page = "\n\n".join(lines) + "\n"
    assert double_spaced(page)
    assert not double_spaced("\n".join(lines))
    assert not double_spaced("\n\n".join(MILL))
    assert double_spaced(page.lower())
    # paragraphs of a line each, one going on from the other's clause (a post's title)
    assert not double_spaced(MILL[0].rstrip(".") + "\n\nand " + MILL[1] + "\n\n" + MILL[2])
    nlp = spacy.blank("en")
    assert not paragraph_break_tokens(nlp(page)).any()
    breaks = paragraph_break_tokens(nlp("\n\n".join(MILL)))
    assert [t.text for t in nlp("\n\n".join(MILL)) if breaks[t.i]] == ["\n\n", "\n\n"]


def test_a_page_is_read_by_its_shape_in_text_of_any_case() -> None:
    """``wrapped_page``: lines between blank lines, in lower case without punctuation,
    are a double-spaced page's where they are cut at a width of 40 characters or more
    (``WRAPPED_PAGE_WIDTH``) and most of them inside a sentence; not a list of short
    items (each line could take the next line's first word), not lines narrower than a
    page, not paragraphs of a line each that end their sentences, and not two lines
    (``WRAPPED_PAGE_LINES``: a long title above a short paragraph)."""
    from spacy_attnseg.sentences import WRAPPED_PAGE_LINES, WRAPPED_PAGE_WIDTH

    words = " ".join(MILL).lower().replace(".", "").replace(",", "")
    for width in (WRAPPED_PAGE_WIDTH + 10, 60, 72, 90):
        lines = textwrap.fill(words, width).split("\n")
        assert double_spaced("\n\n".join(lines))
        assert double_spaced("\n\n".join(lines[:WRAPPED_PAGE_LINES]))
        assert not double_spaced("\n\n".join(lines[: WRAPPED_PAGE_LINES - 1]))
    assert not double_spaced("\n\n".join(textwrap.fill(words, 30).split("\n")))
    items = ["walk the dog", "feed the cat", "call ann about the mill", "buy bread", "rest"]
    assert not double_spaced("\n\n".join(items))
    ended = [textwrap.shorten(p.lower(), 70, placeholder=".") for p in MILL]
    assert all(line.endswith(".") for line in ended)
    assert not double_spaced("\n\n".join(ended))
    title = "the annual report of the regional transit authority for the year"
    assert not double_spaced(title + "\n\nit carried more riders than ever")


# the words of a double-spaced page, wrapped at 60 (``test_single_spaced_...``)
PAGE_WORDS = ("the river runs past an old mill where people once ground corn " * 4).split()


@given(
    words=st.lists(
        st.text(alphabet="abcdefghij", min_size=1, max_size=12), min_size=1, max_size=120
    ),
    width=st.integers(min_value=20, max_value=100),
    blank=st.sampled_from(["\n\n", "\n \n", "\r\n\r\n", "\n\n\n"]),
)
@settings(max_examples=80, deadline=None)
# a page in every run, its blank lines of one line break more or two (one stays blank)
@example(words=PAGE_WORDS, width=60, blank="\n\n")
@example(words=PAGE_WORDS, width=60, blank="\n\n\n")
def test_single_spaced_drops_one_line_break_a_blank_line(
    words: List[str], width: int, blank: str
) -> None:
    """``single_spaced``: a Doc of the same tokens, each whitespace token of two line
    breaks or more one line break shorter, where the text is double-spaced; the Doc
    itself where it is not."""
    from spacy_attnseg.sentences import LINE_BREAK, single_spaced

    text = blank.join(textwrap.fill(" ".join(words), width).split("\n"))
    doc = EN(text)
    view = single_spaced(doc)
    if not double_spaced(text):
        assert words != PAGE_WORDS  # (the examples are pages)
        assert view is doc
        return
    assert len(view) == len(doc)
    for a, b in zip(doc, view, strict=True):
        assert a.whitespace_ == b.whitespace_
        if a.is_space and len(LINE_BREAK.findall(a.text)) >= 2:
            assert len(LINE_BREAK.findall(b.text)) == len(LINE_BREAK.findall(a.text)) - 1
            assert "".join(LINE_BREAK.split(b.text)) == "".join(LINE_BREAK.split(a.text))
        else:
            assert b.text == a.text


def test_a_double_spaced_page_has_the_paragraphs_of_its_text() -> None:
    """``paragraph_starts`` reads a page printed double-spaced single-spaced: a
    manuscript's paragraphs, marked by an indented first line, or by a short last line,
    open where they open in the same page without its blank lines (not only the first,
    as when no blank line of the page was a paragraph break)."""
    for indent in ("    ", ""):
        single = "\n".join(textwrap.fill(p, 60, initial_indent=indent) for p in MILL)
        double = single.replace("\n", "\n\n")
        assert double_spaced(double)
        a, b = EN(single), EN(double)
        assert [t.text.strip() for t in a] == [t.text.strip() for t in b]
        words = [t for t in a if not t.is_space]  # (a sentence starts after each ".")
        starts = [0] + [word.i for before, word in itertools.pairwise(words) if before.text == "."]
        want = paragraph_starts(a, starts)
        assert want.tolist().count(True) == len(MILL)
        assert paragraph_starts(b, starts).tolist() == want.tolist()


def test_a_double_spaced_page_has_the_sentences_of_its_text(default_nlp: Any) -> None:
    """The default pipeline finds the same sentences in a hard-wrapped page whether or
    not a blank line sits below each line (as the text of a double-spaced manuscript
    gives them): a blank line there starts no sentence in the middle of a clause, and a
    line that goes on in lower case is the sentence's above it (``continued_lines``
    reads the line above that holds text)."""
    text = " ".join(MILL)
    single = textwrap.fill(text, 60)
    double = single.replace("\n", "\n\n")
    want = [" ".join(s.text.split()) for s in default_nlp(single).sents]
    assert len(want) == 6
    assert [" ".join(s.text.split()) for s in default_nlp(double).sents] == want


def test_a_double_spaced_page_in_lower_case_has_the_sentences_of_its_text(
    default_nlp: Any,
) -> None:
    """The same page in lower case without punctuation, as a speech transcript writes
    it, where nothing but the page's shape tells a blank line from a paragraph break:
    the rules about lines read the page single-spaced (``single_spaced``), so that a
    line is no sentence of its own. Most of its line breaks end no sentence, and each
    sentence starts where one starts in the text (``MILL``'s sentences) or in the page
    single-spaced (the model reads a blank line a little differently from a line
    break, so the two need not agree)."""
    sentences = [s.lower().replace(",", "") for p in MILL for s in p.rstrip(".").split(". ")]
    text = " ".join(sentences)
    single = textwrap.fill(text, 60)
    double = single.replace("\n", "\n\n")

    def starts(page: str) -> List[int]:  # (as word indices)
        return [len(page[: s.start_char].split()) for s in default_nlp(page).sents]

    gold = [len(" ".join(sentences[:k]).split()) for k in range(len(sentences))]
    lines = [len(" ".join(single.split("\n")[:k]).split()) for k in range(len(single.split("\n")))]
    found = starts(double)
    assert set(found) <= set(gold) | set(starts(single))
    assert len(set(found[1:]) & set(lines)) < (len(lines) - 1) / 2


def test_blank_lines_inside_most_sentences_open_no_paragraphs() -> None:
    """Where more of a text's blank lines fall inside its sentences than before them (a
    subtitle file's cues, which cut sentences anywhere), they open no paragraphs: only
    the first sentence does. Where most fall before a sentence, each such opens one."""
    from spacy_attnseg.sentences import breaks_split_sentences, paragraph_break_tokens

    nlp = spacy.blank("en")
    cues = (
        "1\n00:00:01,000 --> 00:00:03,000\nThe river runs past an old\n\n"
        "2\n00:00:03,000 --> 00:00:05,000\nmill. People once ground corn\n\n"
        "3\n00:00:05,000 --> 00:00:07,000\nfor bread there. Today it\n\n"
        "4\n00:00:07,000 --> 00:00:09,000\nis a museum.\n\n"
        "5\n00:00:09,000 --> 00:00:11,000\nVisitors come on Sundays.\n"
    )
    doc = nlp(cues)
    firsts = [0] + [t.i for t in doc if t.text in ("People", "Today", "Visitors")]
    breaks = paragraph_break_tokens(doc)
    assert breaks_split_sentences(doc, firsts, breaks)  # 3 of the 4 inside
    assert paragraph_starts(doc, firsts).tolist() == [True, False, False, False]
    # each cue a sentence: every blank line before one
    whole = nlp("\n\n".join(MILL))
    firsts = [0] + [t.i + 1 for t in whole if t.text == "." and t.i + 1 < len(whole)]
    firsts = [i + 1 if whole[i].is_space else i for i in firsts]
    assert not breaks_split_sentences(whole, firsts, paragraph_break_tokens(whole))
    assert paragraph_starts(whole, firsts).tolist() == [True, False, True, False, True, False]


SENTENCE_WORDS = ["mill", "river", "corn", "bread", "stood", "ground", "people", "valley"]


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.lists(st.integers(3, 14), min_size=1, max_size=5), min_size=1, max_size=8),
    width=st.integers(30, 90),
    seed=st.integers(0, 1000),
)
def test_short_line_paragraphs_never_split_a_wrapped_paragraph(
    sizes: List[List[int]], width: int, seed: int
) -> None:
    """In paragraphs of sentences (``sizes``: words per sentence) wrapped by
    ``textwrap`` at any width and joined by line breaks, every paragraph that
    ``short_line_paragraphs`` opens is one the text was written with: a line break
    inside a paragraph is never read as a paragraph's end."""
    from spacy_attnseg.sentences import short_line_paragraphs

    draw = random.Random(seed)
    paragraphs = [
        " ".join(
            " ".join(draw.choice(SENTENCE_WORDS) for _ in range(n)).capitalize() + "."
            for n in sentences
        )
        for sentences in sizes
    ]
    wrapped = [textwrap.fill(p, width) for p in paragraphs]
    text = "\n".join(wrapped)
    openings = {sum(len(w) + 1 for w in wrapped[:k]) for k in range(1, len(wrapped))}
    assert set(short_line_paragraphs(text)) <= openings


def test_hard_wrapped_paragraphs_open_at_short_lines(default_nlp: Any) -> None:
    """EWT dev documents as the paragraphs of a hard-wrapped text without blank lines
    (a PDF's text): the paragraphs that ``short_line_paragraphs`` finds (those after a
    line that ends a sentence short of the width) open sentences and paragraphs, and
    the topic segments start only at them, at a rule's line, or inside the long
    paragraphs that the missed ones make, which hold a third of the text here
    (``segment_openings``)."""
    from paper.evaluation import read_conllu_documents
    from spacy_attnseg.sentences import short_line_paragraphs

    texts = [d.text for d in read_conllu_documents(EWT_DEV)[:60] if len(d.starts) >= 2][:30]
    wrapped = [textwrap.fill(t, 70) for t in texts]
    page = "\n".join(wrapped) + "\n"
    firsts_of_texts = {sum(len(w) + 1 for w in wrapped[:k]) for k in range(len(wrapped))}
    found = short_line_paragraphs(page)
    assert len(found) >= 10 and set(found) <= firsts_of_texts
    doc = default_nlp(page)
    firsts = [s.start for s in doc.sents]
    assert set(found) <= {doc[i].idx for i in firsts}
    opened = paragraph_starts(doc, firsts)
    assert [doc[i].idx for i, o in zip(firsts, opened, strict=True) if o][1:] == found
    rules = [m.start() for m in re.finditer(r"^[^\w\n]+$", page, re.M)]
    segments = [span.start_char for span in doc.spans["attn_segments"]]
    assert topics.long_paragraph_sentences(opened).mean() >= topics.LONG_SHARE
    assert len(segments) > 1 and set(segments[1:]) <= segment_openings(doc, opened) | set(rules)


#: spaCy's English tokenizer that reads a long run in pieces, as the pipelines' does
RUN_TOKENIZER = create_tokenizer()(EN)
RUN_PARTS = st.one_of(
    st.sampled_from(
        ["Word", "ends.", "(a)", "x=1&y=2", "\n", "\n\n", "猫。", "  ", "[!NOTE]", "(?)Ok", "a-b.C"]
    ),
    st.sampled_from(["a/B", "snake_Case", "<!--x-->", "[text](Link)", "[text][]", "done.Next"]),
    st.tuples(st.sampled_from(["ab", "7", "a.b", "k=v&", "猫。", "!"]), st.integers(1, 200)).map(
        lambda pair: pair[0] * pair[1]
    ),
)
#: parts whose extent ``test_no_sentence_starts_inside_a_long_run_or_a_word`` records:
#: inline code (from its first backtick to its last), a URL (from its first character)
CODE_PARTS = ["`re.Pattern`", "``a ` b.C``", "`install .`:", "`--all`"]
URL_PARTS = ["https://a.b/c-D.E#f.G", "www.x.org/Y_z"]
FENCED = "\n```\nx.Y z(a)B\n```\n"


@settings(max_examples=80, deadline=None)
@given(
    parts=st.lists(
        st.one_of(RUN_PARTS, st.sampled_from([*CODE_PARTS, *URL_PARTS, FENCED])), max_size=10
    ),
    seed=st.integers(0, 2**16),
)
def test_no_sentence_starts_inside_a_long_run_or_a_word(parts: List[str], seed: int) -> None:
    """Of any starts, ``runs_hold_no_start`` keeps exactly those on a token that is not
    inside a run of more than ``MAX_RUN`` characters without white space (its first
    token is not inside), the runs found here character by character, nor right after a
    cased letter, a digit, a joiner (``"/"``, ``"_"``, ...), or a ``!`` or ``?`` that
    follows an opening bracket; nor, with no white space before it, inside a URL, inside
    inline code or right after it, in a fenced code block, or at a link's ``"("`` or
    ``"["`` after its ``"]"``; nor after inline code and spaces on its line. The code
    spans and URLs are the parts' own extents."""
    parts = parts or ["Word"]
    text = " ".join(parts)
    bounds = numpy.cumsum([0] + [len(part) + 1 for part in parts])
    code = [(a, a + len(p)) for a, p in zip(bounds, parts, strict=False) if p in CODE_PARTS]
    urls = [(a, a + len(p)) for a, p in zip(bounds, parts, strict=False) if p in URL_PARTS]
    code = [(a, b if text[b - 1] == "`" else b - 1) for a, b in code]  # ("`install .`:")
    # a fenced block: from its opening line to the start of its closing line
    fences = [(a + 1, a + len(p) - 4) for a, p in zip(bounds, parts, strict=False) if p == FENCED]
    doc = RUN_TOKENIZER(text)
    starts = numpy.random.default_rng(seed).integers(0, 2, len(doc)).astype("int32")
    kept = runs_hold_no_start(doc, starts)
    assert kept.dtype == starts.dtype
    for token in doc:
        first = last = token.idx
        while first > 0 and not text[first - 1].isspace():
            first -= 1
        while last < len(text) and not text[last].isspace():
            last += 1
        inside = not text[token.idx].isspace() and token.idx > first and last - first > MAX_RUN
        before = text[max(token.idx - 2, 0) : token.idx]
        in_word = token.idx > first and (
            before[-1].isdigit()
            or before[-1].isupper()
            or before[-1].islower()
            or before[-1] in "/\\_=@#%&+~^|"
            or before in ("(!", "(?", "[!", "[?", "<!", "<?")
        )
        idx = token.idx
        in_markup = idx > first and (
            any(a < idx <= b for a, b in code + fences)
            or any(a < idx < b for a, b in urls)
            or (text[idx - 1] == "]" and text[idx] in "([")
        )
        after_code = any(b < idx and not text[b:idx].strip(" \t") for _, b in code)
        cut = inside or in_word or in_markup or after_code
        assert kept[token.i] == (0 if cut else starts[token.i]), (token.i, token.text[:20])


def test_names_in_code_and_links_are_not_cut(default_nlp: Any) -> None:
    """Passages of two packages' descriptions (idna's and httpcore's, both BSD-3-Clause),
    where the model started sentences inside inline code, after ``"idna."`` and
    ``"ssl."``: no sentence starts inside a code span, and each list item is a sentence,
    a changelog item's issue reference after its full stop with it."""
    idna = (
        "## Exceptions\n\nAll errors raised during conversion derive from the `idna.IDNAError`\n"
        "base class. The more specific exceptions are:\n\n"
        "* `idna.IDNABidiError` — raised when a label contains an illegal\n"
        "  combination of left-to-right and right-to-left characters.\n"
        "* `idna.InvalidCodepoint` — raised when a label contains a codepoint\n"
        "  that is INVALID for IDNA.\n"
        "* `idna.InvalidCodepointContext` — raised when a CONTEXTO or CONTEXTJ\n"
        "  codepoint appears in a position whose contextual requirements are\n"
        "  not satisfied."
    )
    httpcore = (
        "## Version 1.0.6 (October 1st, 2024)\n\n"
        "- Relax `trio` dependency pinning. (#956)\n"
        "- Handle `trio` raising `NotImplementedError` on unsupported platforms. (#955)\n"
        "- Handle mapping `ssl.SSLError` to `httpcore.ConnectError`. (#918)\n\n"
        "## 1.0.5 (March 27th, 2024)\n\n"
        "- Handle `EndOfStream` exception for anyio backend. (#899)\n"
        "- Allow trio `0.25.*` series in package dependancies. (#903)"
    )
    for text in (idna, httpcore):
        starts = {s.start_char for s in default_nlp(text).sents}
        names = [m.span() for m in re.finditer(r"`[^`\n]+`", text)]
        assert len(names) >= 4
        assert not [text[a:b] for a, b in names if any(a < x < b for x in starts)]
    items = re.split(r"\n(?=\* )", idna.split("\n\n")[-1])
    assert [s.text.strip() for s in default_nlp(idna).sents][-4:] == [
        "The more specific exceptions are:",
        *items,
    ]
    # each changelog line is a sentence, its issue reference with it (``"(#956)"``)
    lines = [line for line in httpcore.split("\n") if line]
    assert [s.text.strip() for s in default_nlp(httpcore).sents] == lines


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("— Mark Twain", True),
        ("―Anonymous, 1887\n\n", True),
        (" -- Ann Lee <ann@example.org>  Tue, 20 Sep 2022 12:17:15 -0400\n", True),
        ("--\nAnn Lee\nFinance, Acme Corp", True),
        ("--", True),
        ("Thanks,\nAnn", True),
        ("Best regards,", True),
        ("Kind regards,\nAnn Lee\n", True),
        ("Cheers!", True),
        ("Cheers\nChris", True),
        ("Cheers", False),  # alone, it may be a title: what follows decides
        ("Love", False),
        ("---", False),  # a rule
        ("--author\n", False),  # a command's option, as a manual page lists them
        ("--block-size=SIZE", False),
        ("--Sally", True),
        ("— and then the river ran past the mill.", False),  # final punctuation
        ("—Where are you going?", False),
        ("Thanks for the help with the budget.", False),
        ("Best of all, the mill still runs", False),
        ("-- " + " ".join(["word"] * 12), False),  # too long for a sign-off
        ("Thanks,\nAnn Lee, Head of Finance, Acme", False),
    ],
)
def test_signs_off(text: str, want: bool) -> None:
    assert signs_off(text) is want


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("Hi Tom,", True),
        ("Dear Mr. Smith,", True),
        ("Dear Sir or Madam:", True),
        ("Hello everyone!", True),
        ("Hi Tom", True),
        ("Good morning team,", True),
        ("Hi. I am Tom.", False),
        ("Hi Tom. The review moved.", False),
        ("Hiking is fun", False),
        ("Hey Jude don't make it bad", False),  # no "," and more than three words
        ("Dear all, " + "the meeting is moved to Thursday at noon,", False),
        ("Sara,", True),  # names alone before a comma
        ("Mr. Lee,", True),
        ("Team,", True),
        ("Thanks,", False),  # a valediction
        ("Kind regards,", False),
        ("Anna Berg Lee Smith,", False),  # more than three words
        ("Paris, France", False),
        ("sara,", False),
    ],
)
def test_salutes(line: str, want: bool) -> None:
    assert salutes(line) is want


EMAILS = (
    "Hi Tom,\n\nThe budget review is moved to Thursday, so bring the spreadsheet.\n\n"
    "Thanks,\nAnna\n\n--\nAnna Berg\nFinance, Acme Corp\n\n"
    "Dear Mr. Hale,\n\nMy cat has been sick all week and the vet wants her on a diet.\n\n"
    "Best,\nTom\n\n\u2014 Tom Hale"
)


def test_closings_and_salutations_of_letters() -> None:
    """The sentences that close a letter (a valediction, the name below it, a signature
    after "--", an attribution after a dash) and those that open one (a salutation on a
    line of its own), each line a sentence here."""
    doc = EN(EMAILS)
    firsts = [0] + [t.i + 1 for t in doc[:-1] if t.is_space and "\n" in t.text]
    texts = sentence_texts(doc, firsts)
    assert len(texts) == EMAILS.count("\n") - EMAILS.count("\n\n") + 1
    closing = closing_sentences(doc, firsts, paragraph_starts(doc, firsts), texts)
    closed = [text.strip() for text, flag in zip(texts, closing, strict=True) if flag]
    assert closed == [
        "Thanks,",
        "Anna",
        "--",
        "Anna Berg",
        "Finance, Acme Corp",
        "Best,",
        "Tom",
        "\u2014 Tom Hale",
    ]
    greeting = salutations(doc, firsts, texts)
    assert [text.strip() for text, flag in zip(texts, greeting, strict=True) if flag] == [
        "Hi Tom,",
        "Dear Mr. Hale,",
    ]
    # a name in a paragraph of its own below a valediction closes too, but a short line
    # below an attribution is a heading of what follows
    for text, want in (
        ("We met.\n\nCheers\n\nChris\n\nP.S. The car is fixed.", [0, 1, 1, 0]),
        ("We met.\n\n\u2014 Mark Twain\n\nEarly life\n\nHe was born.", [0, 1, 0, 0]),
        # a valediction alone closes above a name or at the end, not above prose
        ("We met.\n\nLove\n\nLove is patient. It is kind.", [0, 0, 0]),
        ("We met.\n\nCheers", [0, 1]),
        # not a valediction in mid-line: there it opens a text
        ("We met.\n\nThanks. sara My assistant has my numbers.", [0, 0]),
    ):
        paragraphs = EN(text)
        firsts = [0] + [t.i + 1 for t in paragraphs[:-1] if t.is_space]
        found = closing_sentences(paragraphs, firsts, [True] * len(firsts))
        assert found.astype(int).tolist() == want, text
    # a sign-off that opens the text closes nothing; the last line greets nothing
    assert not closing_sentences(doc, [0], [True])[0]
    assert not salutations(EN("Hi Tom,\n"), [0])[0]


def test_a_salutation_line_is_one_sentence() -> None:
    """No sentence starts inside a salutation's line, whatever the model said there
    (here: a start on every word below); elsewhere, the starts stand, a greeting in
    mid-line too."""
    text = (
        "Dear Mr. Smith,\n\nThe budget review is moved to Thursday. Please bring the "
        "costs. Hi Tom, see you there.\n\nHi all\n\nThe mill is closed. It opens on Monday."
    )
    doc = EN(text)
    said = ("Dear", "Smith", "The", "Please", "Hi", "Tom", "all", "It")
    starts = numpy.array([t.text in said for t in doc], dtype="int32")
    held = salutation_holds(doc)
    assert [t.text for t, flag in zip(doc, held, strict=True) if flag] == [
        "Mr.",
        "Smith",
        ",",
        "all",
    ]
    decided = layout_starts(doc, starts, paragraph_breaks=True)
    kept = [t.text for t in doc if decided[t.i]]
    assert kept == ["Dear", "The", "Please", "Hi", "Tom", "Hi", "The", "It"]


LETTERS = (
    "Hi Tom,\n\nThe quarterly budget review is moved to Thursday at 3 pm. Please bring the "
    "spreadsheet with the travel costs and the new hardware requests. Finance wants the "
    "numbers before Friday, and the auditors will check every invoice.\n\nThanks,\nAnna\n\n"
    "--\nAnna Berg\nFinance, Acme Corp\n\nDear Mr. Hale,\n\nMy cat has been sick all "
    "week, so I took her to the vet this morning. The vet said she needs a special diet, "
    "more water and a quiet place to sleep. She is eating again and purring.\n\nBest,\nTom\n"
)
QUOTES = (
    "The only way to do great work is to love what you do. If you haven't found it yet, "
    "keep looking.\n\n\u2014 Steve Jobs\n\nTwo things are infinite: the universe and "
    "human stupidity; and I'm not sure about the universe.\n\n\u2014 Albert Einstein\n\n"
    "Interest rates rose again this quarter as the central bank tried to slow inflation. "
    "Mortgage applications fell to their lowest level in a decade.\n\n\u2014 Financial Times\n"
)


def test_letters_and_quotes_keep_their_openings_and_closings(default_nlp: Any) -> None:
    """A letter's salutation opens its segment and its valediction and signature close
    it; a quote's attribution closes the quote and heads nothing. So no segment starts
    on a closing line, and with two segments asked for, each letter is one."""
    from spacy_attnseg import load_pipeline

    doc = default_nlp(LETTERS)
    sents = [sent.text.strip() for sent in doc.sents]
    assert sents[0] == "Hi Tom," and "Dear Mr. Hale," in sents
    assert "Thanks,\nAnna" in sents and "--\nAnna Berg\nFinance, Acme Corp" in sents
    assert set(segment_first_lines(doc)) <= {"Hi Tom,", "Dear Mr. Hale,"}
    nlp = load_pipeline(overrides={"components.attn_segmenter.n_segments": 2})
    both = nlp(LETTERS)
    letters = [span.text_with_ws for span in both.spans["attn_segments"]]
    second = LETTERS.index("Dear Mr. Hale,")
    assert letters == [LETTERS[:second], LETTERS[second:]]
    doc = default_nlp(QUOTES)
    group = doc.spans["attn_segments"]
    assert not any(span.text.startswith("\u2014") for span in group)
    assert group.attrs["headings"] == [[] for _ in group]
    assert [t.text for t in doc if t.is_sent_start and t.text == "\u2014"] == ["\u2014"] * 3
