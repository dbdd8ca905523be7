"""The Python documentation set (``paper.pydocs``): reST pages into sections of prose
paragraphs, and the documents built from them."""

from __future__ import annotations

import re

from paper import pydocs

PAGE = """\
.. _tut-example:

***********************
  A page about spam
***********************

The first paragraph is the lead of this page and it ends a sentence.
It runs over two lines of the source.

Short one.

Spam and eggs
=============

The :func:`sorted` function and the ``key`` argument are described in
`the guide <https://example.org/guide>`_ for **everyone**.

A paragraph introducing code with a double colon at its end here::

    >>> sorted([3, 1, 2])
    [1, 2, 3]

.. note::

   An indented note that belongs to a directive and is not prose.

* A list item that is a whole sentence of eight words or more.

A deeper heading
----------------

Text under a deeper heading stays in the section above it, as here.

Ham
===

>>> print("a session line")

Last section paragraph with enough words to count as prose!
"""


def test_parse_keeps_prose_by_top_level_section() -> None:
    assert pydocs.parse(PAGE) == [
        [
            "The first paragraph is the lead of this page and it ends a sentence. "
            "It runs over two lines of the source."
        ],
        [
            "The sorted function and the key argument are described in the guide for everyone.",
            "A list item that is a whole sentence of eight words or more.",
            "Text under a deeper heading stays in the section above it, as here.",
        ],
        ["Last section paragraph with enough words to count as prose!"],
    ]


def test_plain_text_of_inline_markup() -> None:
    assert pydocs.plain("- Use :meth:`~object.__init__` or `this <x>`_ [#]_.") == (
        "Use object.__init__ or this."
    )
    assert pydocs.plain("#. *One* of ``two``") == "One of two"


def test_the_vendored_pages() -> None:
    pages = pydocs.read_pages()
    assert len(pages) == 40
    assert all(len(page.sections) >= 3 for page in pages)
    paragraphs = [p for page in pages for section in page.sections for p in section]
    assert len(paragraphs) > 1500
    # no reST markup left: roles, literals, link targets, directives
    leftovers = [p for p in paragraphs if re.search(r":[a-z]+:`|``|`_|^\.\. ", p)]
    assert leftovers == []


def test_section_docs_start_where_their_sections_start() -> None:
    pages = pydocs.read_pages()
    for separator in (" ", "\n\n"):
        docs = pydocs.section_docs(separator)
        assert len(docs) == len(pages)
        for doc, page in zip(docs, pages, strict=True):
            assert len(doc.starts) == len(page.sections)
            for start, section in zip(doc.starts, page.sections, strict=True):
                assert doc.text.startswith(section[0], start)
            paragraphs = [p for section in page.sections for p in section]
            assert doc.text == separator.join(paragraphs)


def test_piece_docs_have_ten_pieces() -> None:
    docs = pydocs.piece_docs(4)
    assert len(docs) == 4
    for doc in docs:
        assert len(doc.starts) == 10 and doc.starts[0] == 0
        assert all(doc.text[s - 1] == " " for s in doc.starts[1:])
