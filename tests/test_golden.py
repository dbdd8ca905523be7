"""The English Golden Rules (``paper.golden``): the vendored cases and their scoring."""

from __future__ import annotations

import re
from typing import Any, List

import pytest

from paper import golden


@pytest.fixture(scope="module")
def cases() -> List[golden.Case]:
    return golden.read_cases()


def test_the_vendored_cases(cases: List[golden.Case]) -> None:
    assert [case.number for case in cases] == list(range(1, 49))
    assert (golden.GOLDEN_RULES / "LICENSE.txt").read_text(encoding="utf8").startswith("MIT")
    for case in cases:
        # the sentences are the text, in order, with only whitespace between them
        pattern = r"\s*".join(re.escape(sentence) for sentence in case.sentences)
        assert re.fullmatch(r"\s*" + pattern + r"\s*", case.text), case.number
        gold = case.gold()
        assert gold.sentences() == list(case.sentences)


def test_scores_of_known_splits(cases: List[golden.Case]) -> None:
    starts = {case.text: case.gold().starts for case in cases}
    perfect = golden.score(lambda text: starts[text], cases)
    assert perfect["passed"] == 48 and perfect["failed"] == []
    assert perfect["p"] == perfect["r"] == perfect["f"] == 100.0
    # a start on the space before a sentence is the same split
    before = golden.score(lambda text: [max(0, s - 1) for s in starts[text]], cases)
    assert before["passed"] == 48
    # no split passes exactly the one-sentence cases
    single = [case.number for case in cases if len(case.sentences) == 1]
    none = golden.score(lambda text: [0], cases)
    assert none["passed"] == len(single) == 18 and none["r"] == 0.0
    assert sorted(set(range(1, 49)) - set(none["failed"])) == single
    # a start inside a word breaks that case only
    first_split = next(case for case in cases if len(case.sentences) > 1)
    assert not golden.passes(first_split, [0, first_split.gold().starts[1] + 1])


def test_the_default_pipeline_keeps_list_markers_with_their_items(
    default_nlp: Any, cases: List[golden.Case]
) -> None:
    lists = [case for case in cases if case.rule.startswith("List")]
    assert [case.number for case in lists] == list(range(31, 39))
    split = golden.pipeline_split(default_nlp)
    failed = golden.score(split, lists)["failed"]
    assert failed == [], failed


def test_the_report_names_why_a_system_is_missing(cases: List[golden.Case]) -> None:
    starts = {case.text: case.gold().starts for case in cases}
    rows = [
        {"system": "gold", **golden.score(lambda text: starts[text], cases)},
        {"system": "none", **golden.score(lambda text: [0], cases)},
        {"system": "pysbd", "unavailable": "pysbd is not installed"},
    ]
    lines = golden.markdown(rows, cases).splitlines()
    assert "| gold | 48 / 48 | 100.0 | 100.0 | 100.0 |" in lines
    assert "| pysbd | n/a | n/a | n/a | n/a |" in lines
    assert "- pysbd: unavailable: pysbd is not installed" in lines
    # every case with more than one sentence is failed by "none" alone
    failed = [line for line in lines if line.endswith("| none |")]
    assert len(failed) == 48 - 18


def test_the_trained_boundaries_report_names_why_a_system_is_missing() -> None:
    from paper.trained import markdown

    rows = [
        {"system": "a", "variant": "raw", "p": 90.0, "r": 80.0, "f": 84.7, "docs_per_s": 10},
        {"system": "punkt", "variant": "raw", "unavailable": "nltk is not installed"},
    ]
    lines = markdown(rows, "Title", ["A note."]).splitlines()
    assert "| a | raw | 90.0 | 80.0 | 84.7 | 10 | \u2013 |" in lines
    assert "| punkt | raw | n/a | n/a | n/a | n/a | n/a |" in lines
    assert "- punkt (raw): unavailable: nltk is not installed" in lines
    assert lines[-1] == "A note."
