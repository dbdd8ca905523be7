"""The Wikipedia set (``paper.wikipedia``, ``data/wikipedia``): wikitext pages into
sections of prose (``scripts/make_wikipedia_set.py``), the vendored articles, and their
documents for the topic evaluation (``scripts/evaluate_topics.py --wikipedia``)."""

from __future__ import annotations

import bz2
import gzip
import re
import zipfile
from typing import Any, Dict, List

import pytest
from conftest import load_script as script
from conftest import space_joined_pieces

from paper import wikipedia
from paper.evaluation import load_splitter, split_texts
from paper.synthetic import half_of

LEAD = (
    "'''Ironwork''' is the craft of shaping [[iron]] into tools, gates and railings by "
    "hand.<ref>{{cite book|title=Iron}}</ref> It is {{lang|fr|ferronnerie}} in French."
)
PAGE = f"""{{{{Infobox craft|name=Ironwork}}}}
{LEAD}
[[File:Gate.jpg|thumb|A gate made by a smith in the old way.]]
Smiths heat the metal in a forge until it glows and can be bent without cracking.

== History ==
Early smiths worked bog iron, which they smelted in small clay furnaces near the marsh.
=== Medieval guilds ===
Guilds set the prices of nails and horseshoes, and they trained <!-- apprentices --> boys.
* A list item is not prose, whatever its length may be in words.
{{| class="wikitable"
| A table row is not prose either, however long the row is.
|}}

== See also ==
* [[Blacksmith]]

== Techniques ==
Drawing out lengthens a bar, and upsetting makes it shorter and thicker at one end.
Short line.
Punching makes a hole by driving a hot drift through the softened bar on an anvil.

[[Category:Crafts]]
[[de:Kunstschmiede]]
"""


def test_a_page_becomes_sections_of_prose() -> None:
    """The lead and each top-level section with text: markup reduced to its text;
    templates, references, comments, files, categories, interlanguage links, list
    items, tables, subsection headings and short lines gone; sections without prose (See
    also) dropped."""
    pytest.importorskip("mwparserfromhell")
    assert script("make_wikipedia_set").sections(PAGE) == [
        {
            "heading": None,
            "paragraphs": [
                "Ironwork is the craft of shaping iron into tools, gates and railings by "
                "hand. It is in French.",
                "Smiths heat the metal in a forge until it glows and can be bent without cracking.",
            ],
        },
        {
            "heading": "History",
            "paragraphs": [
                "Early smiths worked bog iron, which they smelted in small clay furnaces "
                "near the marsh.",
                "Guilds set the prices of nails and horseshoes, and they trained boys.",
            ],
        },
        {
            "heading": "Techniques",
            "paragraphs": [
                "Drawing out lengthens a bar, and upsetting makes it shorter and thicker "
                "at one end.",
                "Punching makes a hole by driving a hot drift through the softened bar on "
                "an anvil.",
            ],
        },
    ]


def more_parts(n: int) -> str:
    return PAGE + "\n".join(
        f"== Part {k} ==\nThe smith {k} made railings for the town hall, and the mayor paid."
        for k in range(n)
    )


def test_pages_that_are_not_articles_are_left_out() -> None:
    """Redirects, disambiguation pages, lists, and articles of fewer than eight
    paragraphs (the page above has six) or three sections."""
    pytest.importorskip("mwparserfromhell")
    make = script("make_wikipedia_set")
    assert make.article("Ironwork", more_parts(2))["sections"][-1]["heading"] == "Part 1"
    assert make.article("Ironwork", more_parts(1)) == {}
    assert make.article("Ironwork", "#REDIRECT [[Metalwork]]") == {}
    assert make.article("Iron (disambiguation)", more_parts(2)) == {}
    assert make.article("List of smiths", more_parts(2)) == {}
    line = "Lead text that is long enough to be a paragraph of prose here.\n"
    two_sections = line * 8 + "== One ==\n" + line
    assert make.article("Ironwork", two_sections) == {}
    assert make.article("Ironwork", two_sections + "== Two ==\n" + line)


def test_the_script_reads_the_dump_out_of_the_wheel(tmp_path: Any) -> None:
    """From a wheel holding the dump to the gzipped JSON lines, byte for byte the same on
    a second run; a page of too little text is left out."""
    pytest.importorskip("mwparserfromhell")
    make = script("make_wikipedia_set")
    long_page = more_parts(6)
    xml = "".join(
        f'<page><title>{title}</title><text xml:space="preserve">{text}</text></page>'
        for title, text in (("Ironwork", long_page.replace("&", "&amp;")), ("Stub", LEAD))
    )
    wheel = tmp_path / "gensim.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        out.writestr(make.MEMBER, bz2.compress(xml.replace("<ref>", "&lt;ref&gt;").encode()))
    outs = [tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"]
    for out_path in outs:
        assert make.main([str(wheel), "--out", str(out_path)]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    articles = wikipedia.read_articles(outs[0])
    assert [a["title"] for a in articles] == ["Ironwork"]
    headings = [s["heading"] for s in articles[0]["sections"]]
    assert headings == [None, "History", "Techniques", *[f"Part {k}" for k in range(6)]]
    with gzip.open(outs[0], "rt", encoding="utf8") as lines:
        assert "<ref" not in lines.read()


def test_the_vendored_articles() -> None:
    articles = wikipedia.read_articles()
    assert len(articles) == 84
    assert all(len(a["sections"]) >= 3 for a in articles)
    # only a lead has no heading (an article whose lead holds no prose starts with a section)
    assert all(s["heading"] for a in articles for s in a["sections"][1:])
    paragraphs = [p for a in articles for s in a["sections"] for p in s["paragraphs"]]
    assert sum(len(p.split()) for p in paragraphs) > 350_000
    assert all(len(p.split()) >= 8 for p in paragraphs)
    # no markup left: templates, links, bold and italics, tags, tables, headings, entities
    markup = re.compile(r"\{\{|\}\}|\[\[|\]\]|''|<[a-z/]|\||==|&[a-z]+;")
    assert [p for p in paragraphs if markup.search(p)] == []


@pytest.mark.parametrize("separator", [" ", "\n\n"])
def test_section_docs_split_the_articles_into_halves(separator: str) -> None:
    """The tuning half and the report half together are the articles, once each; a
    document's reference segments start where its sections do."""
    articles = wikipedia.read_articles()
    docs = wikipedia.section_docs("tune", separator) + wikipedia.section_docs("report", separator)
    assert len(wikipedia.section_docs("tune", separator)) == len(articles) // 2
    assert len(docs) == len(articles)
    for doc, article in zip(docs, articles, strict=True):
        sections = [s["paragraphs"] for s in article["sections"]]
        assert doc.text == separator.join(p for section in sections for p in section)
        assert len(doc.starts) == len(sections)
        for start, section in zip(doc.starts, sections, strict=True):
            assert doc.text.startswith(section[0], start)


def test_piece_docs_join_runs_of_sentences_of_different_articles_of_a_half() -> None:
    """Each document is ten runs of 3-11 consecutive sentences, each run from another
    article of its half, joined by spaces; a reference segment starts at each run."""
    punkt = load_splitter("punkt")
    articles = wikipedia.read_articles()
    texts = {
        half: [
            " ".join(" ".join(p.split()) for s in a["sections"] for p in s["paragraphs"])
            for a in half_of(articles, half)
        ]
        for half in ("tune", "report")
    }
    for half in ("tune", "report"):
        docs = wikipedia.piece_docs(half, 6)
        assert len(docs) == 6
        assert [d.text for d in docs] == [d.text for d in wikipedia.piece_docs(half, 6)]
        for doc in docs:
            assert len(doc.starts) == 10 and doc.starts[0] == 0
            sources = []
            for piece in space_joined_pieces(doc.text, doc.starts):
                assert 3 <= len(split_texts(piece, punkt)) <= 11, piece[:80]
                found = [i for i, text in enumerate(texts[half]) if " ".join(piece.split()) in text]
                assert len(found) == 1, piece[:80]
                assert not any(
                    " ".join(piece.split()) in text
                    for text in texts["report" if half == "tune" else "tune"]
                )
                sources += found
            assert len(set(sources)) == 10


def test_the_wikipedia_option_scores_the_articles_of_its_half(
    monkeypatch: Any, tmp_path: Any
) -> None:
    """``--wikipedia`` replaces the halves' sets by the articles of ``--half``, without
    and with paragraph breaks, beside Choi's sets where ``--choi`` is given too."""
    import torch

    evaluate_topics = script("evaluate_topics")
    calls: List[Dict[str, Any]] = []
    monkeypatch.setattr(evaluate_topics, "evaluate", lambda *a, **kw: calls.append(kw))
    threads = ["--threads", str(torch.get_num_threads())]  # (the script sets torch's)
    evaluate_topics.main(["--wikipedia", "--half", "tune", "--no-peers", *threads])
    sets = calls[0]["sets"]
    assert list(sets) == [
        "Wikipedia sections",
        "Wikipedia sections, paragraphs",
        "Wikipedia pieces",
    ]
    assert len(sets["Wikipedia pieces"]()) == 40  # --n-synthetic's default
    docs = sets["Wikipedia sections, paragraphs"]()
    assert [d.text for d in docs] == [d.text for d in wikipedia.section_docs("tune", "\n\n")]
    assert sets["Wikipedia sections"]()[0].text == wikipedia.section_docs("tune")[0].text
    (tmp_path / "choi" / "3-11").mkdir(parents=True)
    (tmp_path / "choi" / "3-11" / "1.ref").write_text("==========\nA.\n==========\n")
    evaluate_topics.main(["--wikipedia", "--choi", str(tmp_path / "choi"), "--no-peers", *threads])
    assert list(calls[1]["sets"]) == [
        "Choi 3-11",
        "Wikipedia sections",
        "Wikipedia sections, paragraphs",
        "Wikipedia pieces",
    ]
    report = calls[1]["sets"]["Wikipedia sections"]()
    assert [d.text for d in report] == [d.text for d in wikipedia.section_docs("report")]
    evaluate_topics.main(["--no-peers", *threads])
    assert calls[2]["sets"] is None
