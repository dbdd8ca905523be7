"""The benchmark protocol's child process (``python -m paper.benchmark``): what it
measures, not how fast (speed is reported by ``spacy project run benchmark-*``, never
asserted)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import spacy

from paper import benchmark
from spacy_attnseg import capture


def test_worker_measures_the_cycled_documents(capsys: Any) -> None:
    benchmark.worker(["one", "sentences", "3", "1"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    texts = benchmark.cycle()[:3]
    tokenizer = spacy.blank("en").tokenizer
    assert result["mode"] == "sentences" and result["n_docs"] == 3
    assert result["n_tokens"] == sum(len(tokenizer(text)) for text in texts)
    assert result["seconds"] > 0 and result["docs_per_s"] == 3 / result["seconds"]
    assert result["peak_rss_mb"] >= result["peak_rss_before_mb"] > 0


def test_build_gives_each_mode_its_components() -> None:
    assert benchmark.build("transformer").pipe_names == ["transformer"]
    # the pass as a component runs it (windows in chunks), capturing nothing
    alone = benchmark.build("pass")
    assert alone.pipe_names == ["transformer"]
    output = alone("One sentence. Another one.")._.trf_data.model_output
    assert not any(key.startswith("attnseg_") for key in output)
    hf_model = alone.get_pipe("transformer").model.transformer
    assert isinstance(hf_model.forward, capture._ChunkedForward)
    sentences = benchmark.build("sentences")
    assert sentences.get_pipe("attn_segmenter").cfg["spans_key"] == ""
    # pairs modes: attn_head_pairs in place of attn_segmenter, on the heads the mode names
    for mode, heads in (("pairs_layer", []), ("pairs_head", [0])):
        nlp = benchmark.build(mode)
        assert nlp.pipe_names == ["transformer", "attn_head_pairs"]
        cfg = nlp.get_pipe("attn_head_pairs").cfg
        assert (cfg["layers"], cfg["heads"]) == ([-1], heads)


def test_long_text_reaches_the_length() -> None:
    text = benchmark.long_text(2000)
    assert len(spacy.blank("en").tokenizer(text)) >= 2000
    assert text.startswith(benchmark.cycle()[0])
    assert Path(benchmark.EWT_TEST).exists()


def test_interleaved_worker_times_every_mode_over_the_same_batches(
    capsys: Any, monkeypatch: Any
) -> None:
    """One process, every configuration over each batch in turn (the order rotating),
    ``--rounds`` times: each configuration sees the same batches, and its time is the
    sum of its fastest time per batch."""
    seen: List[Tuple[str, Tuple[str, ...]]] = []

    class Recorder:
        def __init__(self, mode: str) -> None:
            self.mode = mode

        def pipe(self, texts: List[str], batch_size: int) -> Iterator[str]:
            seen.append((self.mode, tuple(texts)))
            return iter(texts)

    monkeypatch.setattr(benchmark, "build", lambda mode, *args: Recorder(mode))
    n_docs = 2 * benchmark.BATCH_SIZE + 3
    benchmark.worker(["interleaved", "transformer,sentences", str(n_docs), "1", "--rounds", "2"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["n_docs"] == n_docs and result["batch_size"] == benchmark.BATCH_SIZE
    assert result["rounds"] == 2
    assert set(result["seconds"]) == {"transformer", "sentences"}
    assert all(seconds > 0 for seconds in result["seconds"].values())
    # after one warm-up batch each: 3 batches x 2 rounds x 2 modes, every batch in turn
    timed = seen[2:]
    texts = benchmark.texts(n_docs)
    size = benchmark.BATCH_SIZE
    batches = [tuple(texts[i : i + size]) for i in range(0, n_docs, size)]
    assert len(timed) == 3 * 2 * 2
    for mode in ("transformer", "sentences"):
        assert [batch for m, batch in timed if m == mode] == batches * 2
    assert [m for m, _ in timed[:4]] == ["transformer", "sentences", "sentences", "transformer"]


def test_gpu_check_counts_the_decisions_that_differ(tmp_path: Path) -> None:
    """paper.gpu_check's records of a run and its comparison of two runs (run here on
    the CPU twice, then with one sentence start, one segment and one score changed)."""
    import copy

    from paper import gpu_check

    path = tmp_path / "run.json"
    gpu_check.worker(["one", "default", str(path), "--n-docs", "3", "--gpu-id", "-1"])
    records = json.loads(path.read_text())
    assert len(records) == 3 and records[0]["starts"] and records[0]["spans"]["attn_segments"]
    same = gpu_check._compare(records, records)
    assert (same["starts_differ"], same["spans_differ"], same["max_score_diff"]) == (0, 0, 0.0)
    other = copy.deepcopy(records)
    other[0]["starts"] = other[0]["starts"][1:]
    other[1]["spans"]["attn_segments"][0][1] += 1
    other[2]["scores"]["start_scores"][5] += 0.25
    changed = gpu_check._compare(records, other)
    assert changed["sentence_starts"] == sum(len(r["starts"]) for r in records)
    assert changed["starts_differ"] == 1
    # a span that moved is one span gone and one new
    assert changed["spans_differ"] == 2
    assert abs(changed["max_score_diff"] - 0.25) < 1e-6


def test_layout_benchmark_reads_each_layout(tmp_path: Path, default_nlp: Any) -> None:
    """``scripts/benchmark.py layout``: one document per layout and length, of at least
    that many tokens, written in its layout (the paragraphs and headings the rules find
    are those the text was written with), and the report of every one."""
    from paper.wikitext import read_articles
    from spacy_attnseg.sentences import indented_paragraphs

    first = read_articles(benchmark.WIKITEXT_TEST, readable=True)[0]
    n_paragraphs = sum(len(section) for section in first.sections)
    blank = benchmark.layout_article("blank lines", first)
    assert blank.count("\n\n") == n_paragraphs - 1 and "\n\n\n" not in blank
    indented = benchmark.layout_article("indented paragraphs", first)
    assert "\n\n" not in indented
    assert len(indented_paragraphs(indented)) == n_paragraphs - 1
    page = benchmark.layout_article("Markdown", first)
    assert page.startswith(f"# {first.headings[0]}\n\n")
    assert page.count("\n## ") == len(first.sections) - 1
    assert page.count("```") == 2 * (n_paragraphs // benchmark.CODE_EVERY)
    assert "\n  " in page and "\n* " in page  # list items, their wrapped lines indented
    out = tmp_path / "layout"
    benchmark.layout(out, ",".join(benchmark.LAYOUTS), "500,1000", 1)
    results = json.loads(out.with_suffix(".json").read_text())["results"]
    nlp = spacy.blank("en")
    for name in benchmark.LAYOUTS:
        for n in ("500", "1000"):
            text = benchmark.layout_text(name, int(n))
            row = results[name][n]
            assert row["n_tokens"] == len(nlp.make_doc(text)) >= int(n)
            assert all(row[step] > 0 for step in benchmark.LAYOUT_STEPS)
    for name in ("blank lines", "hard-wrapped", "hard-wrapped without blank lines"):
        row = results[name]["1000"]
        text = benchmark.layout_text(name, 1000)
        paragraphs = len([p for p in text.split("\n\n") if p.strip()])
        if name == "hard-wrapped without blank lines":
            # (a paragraph is read where the line above it ends a sentence short of the
            # width: its count lies between one and the paragraphs written)
            written = len(benchmark.layout_text("blank lines", 1000).split("\n\n"))
            assert 1 < row["n_paragraphs"] <= written
            continue
        assert row["n_paragraphs"] == paragraphs, name
    # a transcript: an article a line, lower case without punctuation, each line a
    # sentence (its utterance) where the benchmark gives line starts, one sentence where
    # it does not
    text = benchmark.layout_text("transcript", 1000)
    assert results["transcript"]["1000"]["n_sentences"] == text.count("\n") + 1
    assert text == text.lower() and "," not in text
    text = benchmark.layout_text("transcript", 6000)
    lines = text.count("\n") + 1
    assert lines >= 3
    assert benchmark.layout_seconds(default_nlp, text, line_starts=True)["n_sentences"] == lines
    assert benchmark.layout_seconds(default_nlp, text)["n_sentences"] == 1
    row = results["indented paragraphs"]["1000"]
    text = benchmark.layout_text("indented paragraphs", 1000)
    assert row["n_paragraphs"] == len([x for x in text.split("\n") if x.startswith("    ")])
    report = out.with_suffix(".md").read_text()
    assert all(f"| {name} | " in report for name in benchmark.LAYOUTS)


def test_dense_worker_chunks_each_kind_of_text(capsys: Any, monkeypatch: Any) -> None:
    """``one-dense`` chunks one text of the kind and length asked for, and counts its
    wordpieces and parts as the model's tokenizer and ``records.chunk_parts`` do."""
    from spacy_attnseg import load_pipeline, records

    # the worker sets the rule's constant for its process: here, this test's only
    monkeypatch.setattr(records, "CHARACTERS_PER_WORDPIECE", records.CHARACTERS_PER_WORDPIECE)

    tokenizer = load_pipeline().get_pipe("transformer").model.tokenizer
    for kind in benchmark.DENSE_KINDS:
        text = benchmark.dense_text(kind, 1500)
        assert len(text) == 1500
        per_character = len(tokenizer.tokenize(text)) / len(text)
        assert per_character < 0.4 if kind == "prose" else per_character >= 0.4
    benchmark.worker(["one-dense", "cjk", "1500", "1", "4"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["kind"] == "cjk" and result["characters"] == 1500
    assert result["wordpieces"] == len(tokenizer.tokenize(benchmark.dense_text("cjk", 1500)))
    # 1,500 characters are one part; the worker asserts that its chunks join to the text
    # and that each holds at most 128 wordpieces, so they are at least as many as that
    # many wordpieces need
    assert result["parts"] == 1 and result["most_part_wordpieces"] == result["wordpieces"]
    assert result["chunks"] >= result["wordpieces"] / 128
