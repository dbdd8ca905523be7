"""Documents of pieces of a treebank's documents (``paper.synthetic.treebank_pieces``,
``scripts/evaluate_topics.py --treebank-pieces``): the held-out kind of topic set made
from any CoNLL-U file, its gold sentences the pieces' sentences."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List

import pytest
from conftest import EWT_DEV, EWT_TEST, load_script, space_joined_pieces

from paper.synthetic import build, treebank_pieces
from spacy_attnseg.gold import read_conllu_documents

FILES = [EWT_DEV, EWT_TEST]


def test_pieces_are_runs_of_gold_sentences_of_different_documents() -> None:
    """Each document is ten runs of 3-11 consecutive gold sentences, each run from
    another document of the files, joined by spaces; a reference segment starts at each
    run; the same seed gives the same documents."""
    sources = [doc.sentences() for path in FILES for doc in read_conllu_documents(path)]
    docs = treebank_pieces(FILES, n_docs=5)
    assert len(docs) == 5
    assert [d.text for d in docs] == [d.text for d in treebank_pieces(FILES, n_docs=5)]
    assert [d.text for d in docs] != [d.text for d in treebank_pieces(FILES, n_docs=5, seed=3)]
    for doc in docs:
        assert len(doc.starts) == 10 and doc.starts[0] == 0
        used = []
        for piece in space_joined_pieces(doc.text, doc.starts):
            found = [
                k
                for k, sentences in enumerate(sources)
                for n in range(3, 12)
                for i in range(len(sentences) - n + 1)
                if " ".join(sentences[i : i + n]) == piece
            ]
            assert len(found) == 1, piece[:80]
            used += found
        assert len(set(used)) == 10


def conllu(n_docs: int, n_sents: int) -> str:
    lines = []
    for d in range(n_docs):
        lines.append(f"# newdoc id = d{d}")
        for s in range(n_sents):
            lines += [
                f"# text = Word{d}x{s} here.",
                f"1\tWord{d}x{s}\t_",
                "2\there\t_",
                "3\t.\t_",
                "",
            ]
    return "\n".join(lines) + "\n"


def test_fewer_than_ten_usable_documents_are_named(tmp_path: Path) -> None:
    """Ten pieces need ten documents of three sentences or more: with fewer the error
    names the files and the count, instead of ``random.sample``'s; ``build`` refuses the
    same way for any texts."""
    small = tmp_path / "small.conllu"
    small.write_text(conllu(9, 3) + conllu(4, 2).replace("newdoc id = d", "newdoc id = e"))
    with pytest.raises(ValueError, match=r"small\.conllu: 9 texts of three sentences"):
        treebank_pieces([small], n_docs=1)
    with pytest.raises(ValueError, match="^2 texts of three sentences or more, where 3 pieces"):
        build([["a", "b", "c"], ["d"], ["e", "f", "g", "h"]], n_docs=1, n_pieces=3)
    enough = tmp_path / "enough.conllu"
    enough.write_text(conllu(10, 3))
    (doc,) = treebank_pieces([enough], n_docs=1)
    assert len(doc.starts) == 10 and doc.text.count(" here.") == 30
    assert {word.split("x")[0] for word in doc.text.split() if word.startswith("Word")} == {
        f"Word{d}" for d in range(10)
    }


def test_the_option_scores_the_pieces_and_checks_its_files(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """``--treebank-pieces`` replaces the halves' sets by one named after the treebank,
    of ``--n-synthetic`` documents; a missing file stops the run before any model
    loads."""
    import torch

    evaluate_topics = load_script("evaluate_topics")
    calls: List[Dict[str, Any]] = []
    monkeypatch.setattr(evaluate_topics, "evaluate", lambda *a, **kw: calls.append(kw))
    threads = ["--threads", str(torch.get_num_threads())]  # (the script sets torch's)
    files = [str(path) for path in FILES]
    evaluate_topics.main(["--treebank-pieces", *files, "--n-synthetic", "3", *threads])
    sets = calls[0]["sets"]
    assert list(sets) == ["EWT pieces"]
    assert evaluate_topics.treebank_name([Path("notes.conllu")]) == "NOTES pieces"
    assert [d.text for d in sets["EWT pieces"]()] == [
        d.text for d in treebank_pieces(FILES, n_docs=3)
    ]
    with pytest.raises(SystemExit, match="no CoNLL-U file .*absent.conllu"):
        evaluate_topics.main(["--treebank-pieces", str(tmp_path / "absent.conllu"), *threads])
    assert len(calls) == 1
