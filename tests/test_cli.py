"""``python -m spacy_attnseg``: its commands' output, input errors and help. Commands run
in this process (``conftest.run_cli``); the ones marked ``process=True`` check the same
in a fresh interpreter reading a real pipe."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import shutil
from pathlib import Path
from typing import Any, List, Optional

import pytest
from conftest import PIECES, REPO, SAMPLE_TXT, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc, Span
from spacy.vocab import Vocab

from spacy_attnseg.records import text_lines


def squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("model", [None, "attention"])
def test_segment_text_file(model: Optional[str], default_nlp: Any, minilm_nlp: Any) -> None:
    """The default is the shipped attn_senter pipeline; --model names another one (the
    default's run is a fresh interpreter: the module's entry point)."""
    args = ["segment", "data/sample.txt", *(["--model", model] if model else [])]
    result = run_cli(args, process=model is None)
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    text = SAMPLE_TXT.read_text(encoding="utf8")
    nlp = default_nlp if model is None else minilm_nlp
    expected = [squash(s.text) for s in nlp(text).sents if s.text.strip()]
    assert len(lines) >= 4
    assert lines == expected
    assert squash(" ".join(lines)) == squash(text)


def test_segment_text_file_topic_segments(default_nlp: Any) -> None:
    """Three articles' leads run together (no paragraph breaks) print as three groups of
    sentence lines, an empty line between them: the topic segments of the same pipeline
    in Python, each starting where an article's lead starts."""
    path = "data/wikipedia/three_leads.txt"
    result = run_cli(["segment", path])
    assert result.returncode == 0, result.stderr[-3000:]
    groups = [group.splitlines() for group in result.stdout.rstrip("\n").split("\n\n")]
    doc = default_nlp((REPO / path).read_text(encoding="utf8"))
    assert groups == [
        [squash(sent.text) for sent in span.sents] for span in doc.spans["attn_segments"]
    ]
    openings = [group[0].split(" ")[:2] for group in groups]
    assert openings == [["Alchemy", "is"], ["Andre", "Kirk"], ["Animal", "Farm"]]
    # the leads' own sentences (Agassi's first one holds "World No. 1, who was")
    assert [len(group) for group in groups] == [5, 4, 5]


# a Doc's tokens: words and runs of whitespace (which spaCy keeps as tokens of their own)
TOKENS = st.sampled_from(["river", "mill", ".", "\n\n", "  ", "\t"])
WORDS = st.lists(TOKENS, min_size=1, max_size=30)


@settings(max_examples=200, derandomize=True, deadline=None)
@given(words=WORDS, data=st.data())
def test_text_lines_hold_each_segment(words: List[str], data: Any) -> None:
    """``segment --format text`` prints each topic segment that holds text as its own
    group of lines (the segment's text, whitespace runs made one space), the groups
    apart by one empty line, each line within one sentence, nothing before or after:
    also where a segment starts inside a sentence or on whitespace. Without a spans key,
    one line a sentence."""
    doc = Doc(Vocab(), words=words, spaces=[False] * len(words))
    positions = st.lists(st.integers(1, len(doc) - 1), unique=True) if len(doc) > 1 else st.just([])
    sent_starts = set(data.draw(positions))
    for token in doc:
        token.is_sent_start = token.i == 0 or token.i in sent_starts
    cuts = [0, *sorted(data.draw(positions)), len(doc)]
    doc.spans["topics"] = [Span(doc, a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    lines = list(text_lines(doc, "topics"))
    groups = [group.split("\n") for group in "\n".join(lines).split("\n\n")] if lines else []
    # tokens here join without spaces: compare the text without its whitespace
    expected = ["".join(span.text.split()) for span in doc.spans["topics"] if span.text.strip()]
    assert ["".join(group).replace(" ", "") for group in groups] == expected
    assert all(line and line == squash(line) for group in groups for line in group)
    sentences = [squash(sent.text) for sent in doc.sents]
    assert all(any(line in sent for sent in sentences) for group in groups for line in group)
    assert list(text_lines(doc, "")) == [line for line in sentences if line]


DEV = "data/UD_English-EWT/en_ewt-ud-dev.conllu"
FIRST = (
    "The Gerstenslager Company was a maker of body panels for several major auto makers. "
    "In the 1950s the company was best known for making large custom vehicles. "
    "The company started in 1860 as a carriage factory!"
)
THIRD = (
    'She said "wait here." Then   she left the room and walked down the long corridor to '
    "the office.\nNobody followed her, and nobody asked where she was going."
)


def test_segment_text_of_a_jsonl_file_warns(tmp_path: Any) -> None:
    """--format text reads a file as one document of text, also a .jsonl file: it runs,
    with a warning that names --format jsonl."""
    path = tmp_path / "docs.jsonl"
    path.write_text(json.dumps({"text": "One. Two."}) + "\n", encoding="utf8")
    result = run_cli(["segment", str(path)])
    assert result.returncode == 0, result.stderr[-3000:]
    assert "[W004]" in result.stderr and "--format jsonl" in squash(result.stderr)
    assert "One." in result.stdout  # (the JSON line, read as text)
    result = run_cli(["segment", str(path), "--format", "jsonl"])
    assert "[W004]" not in result.stderr


def test_segment_jsonl_stdin() -> None:
    texts = [FIRST, "", THIRD]
    stdin = "".join(json.dumps({"text": t, "id": i}) + "\n" for i, t in enumerate(texts))
    result = run_cli(["segment", "-", "--format", "jsonl"], stdin=stdin, process=True)
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["text"] for r in records] == texts
    assert records[1]["sents"] == []
    for record in (records[0], records[2]):
        text, sents = record["text"], record["sents"]
        assert len(sents) >= 2
        pieces = [text[s["start"] : s["end"]] for s in sents]
        # Offsets slice the text back: in order, covering it with only whitespace
        # between sentences.
        assert sents[0]["start"] == 0 and sents[-1]["end"] == len(text)
        for a, b in zip(sents, sents[1:], strict=False):
            assert a["start"] < a["end"] <= b["start"]
            assert text[a["end"] : b["start"]].strip() == ""
        assert squash(" ".join(pieces)) == squash(text)
        assert all(0.0 <= s["score"] <= 1.0 for s in sents)
    first = [FIRST[s["start"] : s["end"]].strip() for s in records[0]["sents"]]
    assert first == [
        "The Gerstenslager Company was a maker of body panels for several major auto makers.",
        "In the 1950s the company was best known for making large custom vehicles.",
        "The company started in 1860 as a carriage factory!",
    ]
    third = [THIRD[s["start"] : s["end"]].strip() for s in records[2]["sents"]]
    assert third[0] == 'She said "wait here."'
    assert third[-1] == "Nobody followed her, and nobody asked where she was going."


@pytest.mark.parametrize(
    "stdin,detail",
    [
        ('{"text": "Fine."}\nnot json\n', "[E112] Line 2 of the input is not a JSON object"),
        ('{"text": "Fine."}\n\n{"body": "Fine."}\n', "[E112] Line 3 of the input is not a JSON"),
        ('{"body": "Fine."}\n', 'string field "text" (no field "text"; its strings are in "body":'),
        ('{"n": 5}\n', 'string field "text" (no field "text"), nor a string.'),
        ('{"text": 5}\n', 'string field "text" (its "text" is a number)'),
        ('{"text": null}\n', 'string field "text" (its "text" is null)'),
        ('{"text": ["One.", "Two."]}\n', 'string field "text" (its "text" is an array)'),
        (
            '"One. Two."\n5\n',
            "[E112] Line 2 of the input is not a JSON object with a string field "
            '"text" (it is a number), nor a string.',
        ),
        # a lone surrogate escape: spaCy's tokenizer cannot encode it
        ('{"text": "Fine."}\n{"text": "Odd \\udcff."}\n', "[E116] Line 2 of the input: its"),
        ('{"text": "A smile \\ud83d\\ude00 here."}\n{"text": "\\ud83d"}\n', "[E116] Line 2"),
        # one JSON array: its items are the documents
        ('\n [{"text": "Fine."},\n {"body": "x"}]', "[E112] Item 2 of the input's JSON array is"),
        ('[{"text": "Fine."}, {"text": "\\udcff"}]', "[E116] Item 2 of the input's JSON array:"),
        ('[{"text": "Fine."},\n {"text": ', '[E126] The input starts with "[" but is not one JSON'),
        ('{"text": "Fine."}\n[{"text": "Fine."}]\n', "[E112] Line 2 of the input is not"),
        # nested deeper than Python's JSON reader goes (its RecursionError, before)
        (
            '{"text": "Fine.", "m": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            "[E112] Line 1 of the input is not a JSON object with a string field "
            '"text" (not JSON: nested deeper than the JSON reader goes',
        ),
        ("[" * 100_000 + "]" * 100_000, "(nested deeper than the JSON reader goes"),
        # values Python reads that the output could not write back as JSON (NaN,
        # Infinity) or could not write at all (an integer over Python's digit limit)
        ('{"text": "Fine.", "score": NaN}\n', '"text" (it holds NaN, which JSON does not allow'),
        ('{"text": "Fine."}\n{"text": "Fine.", "m": [-Infinity]}\n', "Line 2 of the input is"),
        ('{"text": "Fine.", "x": 1e400}\n', "(it holds the number 1e400, beyond what a 64-bit"),
        ('{"text": "Fine.", "id": -' + "7" * 5000 + "}\n", "an integer of 5,000 digits, more"),
        (
            '[{"text": "Fine.", "x": NaN}]',
            '[E126] The input starts with "[" but is not one JSON '
            "array (it holds NaN, which JSON does not allow: write null or a string)",
        ),
    ],
)
def test_segment_jsonl_bad_input(stdin: str, detail: str) -> None:
    result = run_cli(["segment", "-", "--format", "jsonl"], stdin=stdin)
    assert result.returncode == 2
    assert detail in squash(result.stderr)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "command,reader",
    [
        (["segment", "-f", "jsonl", "-o", "d.spacy"], "a DocBin (`segment --output`) holds"),
        (["pairs"], "`pairs` reads"),
        (["view", "-o", "v.html"], "`view` reads"),
    ],
)
def test_a_document_read_whole_past_max_length_is_a_coded_error(
    tmp_path: Any, command: List[str], reader: str
) -> None:
    """A DocBin, the head pairs and the head view hold each document whole: one longer
    than ``nlp.max_length`` (1,000,000 characters) stops with E127, which names it and
    says what to do, before the model reads it (spaCy's E088 spoke of the parser and
    NER)."""
    long = "word " * 210_000
    if command[0] == "view":  # (one document: a text file)
        path, number = tmp_path / "long.txt", 0
        path.write_text(long)
    else:
        path, number = tmp_path / "docs.jsonl", 1
        path.write_text(json.dumps({"text": "Short."}) + "\n" + json.dumps({"text": long}) + "\n")
    outputs = ("d.spacy", "v.html")
    args = [command[0], str(path), *[str(tmp_path / a) if a in outputs else a for a in command[1:]]]
    result = run_cli(args if command[0] == "view" else [*args, "-q"])  # (view: no bar)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    message = squash(result.stderr)
    assert f"[E127] Document {number} has 1,050,000 characters, more than" in message
    assert f"and {reader} each document whole" in message
    assert "`segment` (without --output) and `chunk` read a long document in parts" in message


def test_segment_reads_a_long_document_in_parts(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document longer than ``PART_CHARACTERS`` is read as ``chunk`` reads it, in
    parts that end at paragraph breaks (``text_parts``), each a Doc of its own: as text,
    its lines are each part's lines read alone, an empty line between parts (a segment
    starts where a part does); as JSON, one record with the whole text and each part's
    sentences and segments at their offsets in it. Nothing is lost, and the limit of
    ``nlp.max_length`` no longer applies."""
    from spacy_attnseg import records

    text = "\n\n".join(PIECES * 4)
    monkeypatch.setattr(records, "PART_CHARACTERS", 700)
    parts = records.text_parts(text, 700)
    assert len(parts) == 3 and all(text[a:b].endswith("\n\n") for a, b in parts[:-1])
    whole = tmp_path / "long.txt"
    whole.write_text(text)
    alone = []
    for i, (a, b) in enumerate(parts):
        (tmp_path / f"part{i}.txt").write_text(text[a:b])
        result = run_cli(["segment", str(tmp_path / f"part{i}.txt"), "-q"])
        assert result.returncode == 0
        alone.append(result.stdout.strip("\n"))
    result = run_cli(["segment", str(whole), "-q"])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "\n\n".join(alone) + "\n"
    assert len(result.stdout.split("\n\n")) >= 3
    # as JSON lines, among other documents
    lines = [json.dumps({"text": t, "id": i}) for i, t in enumerate(["Short.", text, "Last."])]
    (tmp_path / "docs.jsonl").write_text("\n".join(lines) + "\n")
    result = run_cli(["segment", str(tmp_path / "docs.jsonl"), "-f", "jsonl", "-q"])
    assert result.returncode == 0, result.stderr
    got = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["meta"] for r in got] == [{"id": 0}, {"id": 1}, {"id": 2}]
    assert [r["text"] for r in got] == ["Short.", text, "Last."]
    want: dict = {"sents": [], "segments": []}
    for a, b in parts:
        result = run_cli(["segment", "-", "-f", "jsonl", "-q"], stdin=json.dumps(text[a:b]))
        part = json.loads(result.stdout)
        for field in want:
            want[field] += [
                {**x, "start": x["start"] + a, "end": x["end"] + a} for x in part[field]
            ]
    for field in want:
        assert [(x["start"], x["end"]) for x in got[1][field]] == [
            (x["start"], x["end"]) for x in want[field]
        ]
        assert [x["score"] for x in got[1][field]] == pytest.approx(
            [x["score"] for x in want[field]], abs=1e-3
        )
    segments = got[1]["segments"]
    assert segments[0]["start"] == 0 and segments[-1]["end"] <= len(text)
    assert {a for a, _ in parts} <= {s["start"] for s in segments}
    assert all(x["end"] <= y["start"] for x, y in zip(segments[:-1], segments[1:], strict=True))


@pytest.mark.parametrize(
    "command,name,content,where",
    [
        ("chunk", "notes.txt", b"Fine line.\nAlso fine.\nCaf\xe9 au lait.\n", "byte 3 of line 3"),
        (
            "segment",
            "docs.jsonl",
            b'{"text": "Fine."}\n{"text": "Caf\xe9."}\n',
            "byte 13 of line 2",
        ),
    ],
)
def test_input_that_is_not_utf8_is_a_coded_error(
    tmp_path: Any, command: str, name: str, content: bytes, where: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    result = run_cli([command, str(path)])
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"is not UTF-8 text: byte 0xe9 at {where}" in squash(result.stderr)
    assert "[E115]" in result.stderr and "Traceback" not in result.stderr
    assert "iconv -f latin1 -t utf-8" in squash(result.stderr)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
@pytest.mark.parametrize("command, name", [("chunk", "doc.txt"), ("segment", "docs.jsonl")])
def test_utf16_input_names_its_encoding(
    tmp_path: Any, command: str, name: str, encoding: str
) -> None:
    """A file that Windows saved as UTF-16 or UTF-32 (with its byte-order mark) stops
    with E115, whose iconv command names that encoding (before: latin1, which would
    have turned every second byte into a NUL character)."""
    path = tmp_path / name
    text = '{"text": "Hello there. Bye."}\n' if name.endswith(".jsonl") else "Hello there. Bye.\n"
    mark = {"utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    path.write_bytes(mark + text.encode(encoding))
    result = run_cli([command, str(path), *(["--format", "jsonl"] if command == "segment" else [])])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    family = encoding.split("-be")[0]
    assert "[E115]" in result.stderr and f"iconv -f {family} -t utf-8" in squash(result.stderr)


@pytest.mark.parametrize(
    "suffix, compress",
    [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress)],
    ids=["gzip", "bzip2", "xz"],
)
def test_compressed_input_reads_as_its_text(tmp_path: Any, suffix: str, compress: Any) -> None:
    """A gzip, bzip2 or xz file (``docs.jsonl.gz``, ``notes.txt.xz``) reads as the text
    it holds, and its name without the compression's ending says the format: the same
    chunks as the file uncompressed (before, E115 advised ``iconv -f latin1`` for the
    compressed bytes)."""
    contents = {
        "docs.jsonl": "".join(json.dumps({"text": t}) + "\n" for t in (FIRST, THIRD)),
        "notes.txt": FIRST + "\n\n" + THIRD,
    }
    for name, content in contents.items():
        plain, packed = tmp_path / name, tmp_path / (name + suffix)
        plain.write_text(content, encoding="utf8")
        packed.write_bytes(compress(content.encode("utf8")))
        want = run_cli(["chunk", str(plain), "--max-tokens", "24", "-q"])
        got = run_cli(["chunk", str(packed), "--max-tokens", "24", "-q"])
        assert want.returncode == 0 and got.returncode == 0, got.stderr[-2000:]
        assert got.stdout == want.stdout
        docs = {json.loads(line)["doc"] for line in got.stdout.splitlines()}
        assert docs == ({0, 1} if name.endswith(".jsonl") else {0})


@pytest.mark.parametrize(
    "name, content, message",
    [
        (
            "docs.jsonl.gz",
            gzip.compress(b'{"text": "Fine. Also fine."}\n' * 50)[:40],
            "[E132] Cannot decompress {path}: Compressed file ended before the end-of-stream",
        ),
        (
            "notes.txt.gz",
            gzip.compress(b"Fine. Also fine.\n" * 50)[:40],
            "[E132] Cannot decompress {path}: Compressed file ended before the end-of-stream",
        ),
        ("paper.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "[E133] {path} is a PDF, not text:"),
        ("report.docx", b"PK\x03\x04\x14\x00\x06\x00", "[E133] {path} is a zip archive"),
    ],
    ids=["gzip lines cut short", "gzip text cut short", "PDF", "docx"],
)
def test_damaged_or_binary_input_is_a_coded_error(
    tmp_path: Any, name: str, content: bytes, message: str
) -> None:
    """A compressed file cut short stops with E132; a PDF or a zip archive (a .docx)
    with E133, which says to extract the text (before, E115 advised ``iconv -f
    latin1``, which would have turned their bytes into text to segment)."""
    path = tmp_path / name
    path.write_bytes(content)
    for command in ("chunk", "segment"):
        result = run_cli([command, str(path)])
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert message.format(path=path) in squash(result.stderr)


def test_chunk_skips_an_empty_text_and_keeps_whitespace() -> None:
    texts = [FIRST, "", "  \n "]
    stdin = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    result = run_cli(["chunk", "-", "--max-tokens", "24", "-q"], stdin=stdin)
    assert result.returncode == 0, result.stderr[-3000:]
    chunks = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted({c["doc"] for c in chunks}) == [0, 2]
    assert "".join(c["text"] for c in chunks if c["doc"] == 0) == FIRST
    assert [(c["text"], c["n_tokens"]) for c in chunks if c["doc"] == 2] == [("  \n ", 0)]


def test_a_byte_order_mark_and_crlf_line_ends_read_as_plain_json_lines() -> None:
    record = json.dumps({"text": FIRST})
    result = run_cli(
        ["chunk", "-", "--max-tokens", "24", "-q"], stdin=f"\ufeff{record}\r\n{record}\n"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    chunks = [json.loads(line) for line in result.stdout.splitlines()]
    first = [{k: v for k, v in c.items() if k != "doc"} for c in chunks if c["doc"] == 0]
    second = [{k: v for k, v in c.items() if k != "doc"} for c in chunks if c["doc"] == 1]
    assert len(first) >= 2 and first == second
    assert "".join(c["text"] for c in first) == FIRST


def test_json_lines_escape_what_readers_take_for_line_ends(tmp_path: Path) -> None:
    """NEXT LINE, LINE SEPARATOR and PARAGRAPH SEPARATOR may stand as they are inside a
    JSON string, but Python's ``str.splitlines`` (and other readers) end a line at each:
    every command writes them as escapes, in the text and in the other fields, so each
    output line is one whole record, and both read back as they went in."""
    text = "One line\u2028two lines.\u2029Three here.\x85Next part. " + FIRST
    note = "a\u2028b\u2029c\x85d"
    line = json.dumps({"text": text, "note": note}) + "\n"
    path = tmp_path / "text.jsonl"
    path.write_text(line, encoding="utf8")
    outputs = {}
    for name, args in [
        ("chunk", ["chunk", "-", "--max-tokens", "24", "-q"]),
        ("segment", ["segment", "-", "--format", "jsonl", "-q"]),
        ("pairs", ["pairs", str(path), "--layer", "-1", "--head", "3", "-f", "jsonl"]),
    ]:
        result = run_cli(args, stdin=line if "-" in args else None)
        assert result.returncode == 0, result.stderr[-3000:]
        assert not {"\x85", "\u2028", "\u2029"} & set(result.stdout)
        assert result.stdout.splitlines() == result.stdout.split("\n")[:-1]
        outputs[name] = [json.loads(line) for line in result.stdout.splitlines()]
        assert outputs[name] and all(r["meta"] == {"note": note} for r in outputs[name])
    assert len(outputs["chunk"]) >= 2 and "".join(c["text"] for c in outputs["chunk"]) == text
    assert [r["text"] for r in outputs["segment"]] == [text]


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_output_is_utf8_whatever_the_locale_encoding(encoding: str, tmp_path: Path) -> None:
    """Where standard output's encoding lacks a character of the text (a latin-1 locale,
    a Windows pipe's cp1252), the commands stopped with UnicodeEncodeError: they print
    UTF-8 whatever the locale, JSON lines and text alike."""
    text = "Chinese 中文 here. An emoji 🙂 too. Ünïcödé and ß stay."
    path = tmp_path / "text.txt"
    path.write_text(text, encoding="utf8")
    env = {"PYTHONIOENCODING": encoding}
    chunked = run_cli(["chunk", str(path), "-q"], process=True, env=env)
    assert chunked.returncode == 0, chunked.stderr[-3000:]
    assert "".join(json.loads(line)["text"] for line in chunked.stdout.splitlines()) == text
    printed = run_cli(["segment", str(path)], process=True, env=env)
    assert printed.returncode == 0, printed.stderr[-3000:]
    assert squash(printed.stdout) == squash(text)


@pytest.mark.parametrize(
    "args,message",
    [
        (["segment", "data/sample.txt", "--format", "xml"], "[E113] --format cannot be 'xml'"),
        (["chunk", "data/sample.txt", "--engine", "ray"], "[E113] --engine cannot be 'ray'"),
        (["view", "data/sample.txt", "--max-pairs", "0"], "[E113] --max-pairs cannot be 0"),
        (["chunk", "no/such/file.jsonl"], "[E111] The input file no/such/file.jsonl does not"),
        (["segment", "tests"], "[E117] Cannot open the input tests: Is a directory"),
        (["calibrate", "data/sample.txt", "out"], "[E114] Cannot read gold sentences from"),
        (["calibrate", "no/such.conllu", "out"], "[E114] Cannot read gold sentences from no/"),
        # (0 summed one head, after the whole calibration)
        (["calibrate", DEV, "out", "--max-heads", "0"], "[E113] --max-heads cannot be 0: use a"),
        (["chunk", "data/sample.txt", "--penalty", "nan"], "[E020] Invalid `segment_penalty` nan"),
        # (a NaN or infinite threshold stopped in spaCy's config, E961, with a dump of it)
        (["pairs", "data/sample.txt", "--threshold", "nan"], "[E010] Invalid `threshold` nan"),
        (["pairs", "data/sample.txt", "--threshold", "inf"], "[E010] Invalid `threshold` inf"),
        (["pairs", "data/sample.txt", "--threshold", "0"], "[E010] Invalid `threshold` 0.0"),
        (["view", "data/sample.txt", "--threshold", "nan"], "[E010] Invalid `threshold` nan"),
        (["view", "data/sample.txt", "--threshold", "1.5"], "[E010] Invalid `threshold` 1.5"),
        (
            ["segment", "data/sample.txt", "-f", "jsonl", "-o", "Makefile"],
            "[E123] Cannot write to --output Makefile (it is an existing file)",
        ),
        (["view", "data/sample.txt", "-o", "tests"], "[E135] Cannot use the path tests: it is a"),
        (["calibrate", DEV, "Makefile"], "[E135] Cannot use the path Makefile: it is an existing"),
        (["calibrate", DEV, "out", "--save", "Makefile"], "[E135] Cannot use the path Makefile"),
        (["calibrate", DEV, "out", "--candidates", '[".",'], "[E008] Invalid value for `candid"),
    ],
)
def test_bad_options_are_coded_usage_errors(args: List[str], message: str) -> None:
    result = run_cli(args)
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in squash(result.stderr)
    assert "Traceback" not in result.stderr


def test_an_output_path_the_system_refuses_is_a_coded_error(tmp_path: Path) -> None:
    """An output under a file, which only writing it finds out, stops with E135 and the
    system's reason, not a bare ``[Errno 20]`` (an error's "[E" once let that through
    as coded)."""
    (tmp_path / "file").write_text("x", encoding="utf8")
    result = run_cli(["view", "data/sample.txt", "-o", str(tmp_path / "file" / "v.html")])
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"[E135] Cannot use the path {tmp_path}/file/v.html: Not a directory." in squash(
        result.stderr
    )


def test_output_of_json_lines_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """``-o out.jsonl`` would have made a directory of DocBins named out.jsonl."""
    output = tmp_path / "out.jsonl"
    result = run_cli(["segment", "data/sample.txt", "-f", "jsonl", "-o", str(output)])
    assert result.returncode == 2, result.stderr[-2000:]
    assert "(.jsonl is not .spacy)" in squash(result.stderr)
    assert "redirect standard output" in squash(result.stderr)
    assert not output.exists()


@pytest.mark.parametrize("command", ["segment", "chunk"])
def test_gpu_id_without_a_usable_gpu_is_a_coded_error(command: str) -> None:
    from thinc.util import has_cupy_gpu

    if has_cupy_gpu:
        pytest.skip("this machine has a GPU that thinc can use")
    result = run_cli([command, "data/sample.txt", "--gpu-id", "0"])
    assert result.returncode == 1, result.stderr[-2000:]
    assert "[E121] Cannot run on GPU 0: " in squash(result.stderr)
    assert "leave --gpu-id out (-1) to run on the CPU" in squash(result.stderr)
    assert "Traceback" not in result.stderr and not result.stdout


def test_pairs_jsonl_equals_the_component(tmp_path: Any) -> None:
    import spacy_attnseg

    path = tmp_path / "text.txt"
    path.write_text(FIRST, encoding="utf8")
    result = run_cli(["pairs", str(path), "--layer", "-1", "--head", "3", "--format", "jsonl"])
    assert result.returncode == 0, result.stderr[-3000:]
    records = [json.loads(line) for line in result.stdout.splitlines()]
    pairs = [r for r in records if "anchor" not in r]
    anchors = [r["anchor"] for r in records if "anchor" in r]
    nlp = spacy_attnseg.load_pipeline("attention")
    nlp.add_pipe("attn_head_pairs", config={"layers": [-1], "heads": [3], "threshold": 0.3})
    doc = nlp(FIRST)
    assert [(r["layer"], r["head"], r["i"], r["j"]) for r in pairs] == [
        (r["layer"], r["head"], r["i"], r["j"]) for r in doc._.head_pairs.to_records(doc)
    ]
    assert len(pairs) > 0 and {(a["layer"], a["head"]) for a in anchors} == {(5, 3)}


def test_calibrate_cli_writes_back_what_it_chose(tmp_path: Any) -> None:
    import spacy
    from conftest import EWT_DEV

    # the first ten documents of EWT dev
    lines, docs = [], 0
    for line in EWT_DEV.read_text(encoding="utf8").splitlines():
        if line.startswith("# newdoc"):
            docs += 1
            if docs > 10:
                break
        lines.append(line)
    data = tmp_path / "dev.conllu"
    data.write_text("\n".join(lines) + "\n\n", encoding="utf8")
    result = run_cli(
        ["calibrate", str(data), str(tmp_path / "out"), "--save", str(tmp_path / "pipe")]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    best = json.loads((tmp_path / "out" / "calibration.json").read_text())["best"]
    loaded = spacy.load(tmp_path / "pipe")
    segmenter = loaded.get_pipe("attn_segmenter")
    config = loaded.config["components"]["attn_segmenter"]
    for key in ("layers", "heads", "threshold"):
        assert segmenter.cfg[key] == pytest.approx(best[key]) == config[key]


@pytest.fixture(scope="module")
def saved_default(tmp_path_factory: pytest.TempPathFactory, default_nlp: Any) -> Any:
    path = tmp_path_factory.mktemp("cli") / "default"
    default_nlp.to_disk(path)
    return path


@pytest.mark.parametrize("command", ["segment", "pairs"])
@pytest.mark.parametrize("format", ["text", "jsonl"])
def test_every_command_and_format_on_a_saved_pipeline(
    command: str, format: str, saved_default: Any
) -> None:
    """A saved trained pipeline (transformer + attn_senter + attn_segmenter) works with
    every command and format."""
    stdin = (
        json.dumps({"text": FIRST}) + "\n" if (command, format) == ("segment", "jsonl") else FIRST
    )
    result = run_cli([command, "-", "--format", format, "--model", str(saved_default)], stdin)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip()
    if format == "jsonl":
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert records and all(isinstance(record, dict) for record in records)


@pytest.mark.parametrize(
    "args",
    [["segment"], ["segment", "-f", "jsonl"], ["chunk"], ["pairs"]],
    ids=["segment", "segment jsonl", "chunk", "pairs"],
)
def test_a_batch_size_of_zero_is_a_coded_error(args: List[str]) -> None:
    """--batch-size 0 stops every command that takes it with E113, a usage error, before
    any model loads (pairs printed nothing before: the transformer passed no Doc on;
    segment on plain text ran, since one text makes one batch; chunk named threads)."""
    result = run_cli([args[0], "-", *args[1:], "--batch-size", "0"], '{"text": "One. Two."}')
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "[E113] --batch-size cannot be 0: use a whole number of at least 1." in squash(
        result.stderr
    )


def test_a_pipeline_that_cannot_load_is_a_coded_error_without_traceback(
    saved_default: Any, tmp_path: Any
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(saved_default, broken)
    (broken / "attn_senter" / "model").write_bytes(b"\x00" * 100)
    for model in (str(broken), str(tmp_path / "missing")):
        result = run_cli(["segment", "-", "--model", model], stdin=FIRST)
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        assert "[E022]" in result.stderr or "[E014]" in result.stderr


def test_help_lists_every_command_on_one_line_and_reflows_paragraphs() -> None:
    """The command list gives each command one line of its own; a command's help joins
    the lines of each docstring paragraph (they break where the source does, not where
    the terminal does) and prints square brackets as written."""
    from spacy_attnseg.cli import app

    names = [c.name for c in app.registered_commands]
    listing = run_cli(["--help"])
    assert listing.returncode == 0, listing.stderr
    rows = [line.split() for line in listing.stdout.splitlines()]
    listed = [row[0] for row in rows if row and row[0] in names]
    assert listed == names
    for row in rows:
        if row and row[0] in names:
            assert not row[-1].endswith("..."), row
    for command in ("segment", "chunk"):
        text = run_cli([command, "--help"]).stdout
        description = text.split("\n\n")[1:3]  # the first two paragraphs after Usage
        assert "Split text into sentences" in description[0] or command == "chunk"
        for paragraph in description:
            lines = [line.strip() for line in paragraph.splitlines()]
            for line, after in zip(lines[:-1], lines[1:], strict=True):
                # filled to the width: the next line's first word did not fit
                assert len(line) + 1 + len(after.split()[0]) > 70, (line, after)
    error = run_cli(["segment", "data/sample.txt", "--format", "xml"])
    assert "[E113]" in error.stderr


def test_other_fields_of_a_json_line_come_back_as_meta(tmp_path: Any) -> None:
    """Every output line of a document carries the other fields of its input line as
    "meta" (an id to join chunks back to their source); a line with "text" alone gets
    none."""
    lines = [
        {"text": SAMPLE_TXT.read_text(encoding="utf8"), "id": "a-1", "source": {"page": 3}},
        {"text": "No fields here. Only text."},
    ]
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf8")
    want = [{"id": "a-1", "source": {"page": 3}}, {}]
    chunks = run_cli(["chunk", str(data), "--max-tokens", "64", "-q"])
    assert chunks.returncode == 0, chunks.stderr[-3000:]
    records = [json.loads(line) for line in chunks.stdout.splitlines()]
    assert {r["doc"] for r in records} == {0, 1} and len(records) > 2
    assert all(r.get("meta", {}) == want[r["doc"]] for r in records)
    for number, line in enumerate(lines):
        assert "".join(r["text"] for r in records if r["doc"] == number) == line["text"]
    pairs = run_cli(["pairs", str(data), "-f", "jsonl", "--head", "0", "-q"])
    assert pairs.returncode == 0, pairs.stderr[-3000:]
    records = [json.loads(line) for line in pairs.stdout.splitlines()]
    assert {r["doc"] for r in records} == {0, 1}
    assert all(r.get("meta", {}) == want[r["doc"]] for r in records)


def test_text_key_reads_the_text_from_another_field(tmp_path: Any) -> None:
    """``--text-key`` (spaCy ``apply``'s option) names the field that holds a document's
    text, as exported documents name it (``"content"``, ``"page_content"``); every other
    field, a "text" among them, comes back as "meta". Without it, E112 names the fields
    that hold strings and the option."""
    body = SAMPLE_TXT.read_text(encoding="utf8")
    lines = [
        {"id": 1, "content": body, "text": "a summary", "tags": ["x"]},
        {"content": "One sentence here. Another one there."},
    ]
    data = tmp_path / "export.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf8")
    want = [{"id": 1, "text": "a summary", "tags": ["x"]}, {}]
    chunks = run_cli(["chunk", str(data), "--text-key", "content", "--max-tokens", "64", "-q"])
    assert chunks.returncode == 0, chunks.stderr[-3000:]
    records = [json.loads(line) for line in chunks.stdout.splitlines()]
    assert {r["doc"] for r in records} == {0, 1} and len(records) > 2
    for number, line in enumerate(lines):
        mine = [r for r in records if r["doc"] == number]
        assert "".join(r["text"] for r in mine) == line["content"]
        assert all(r.get("meta", {}) == want[number] for r in mine)
    segmented = run_cli(["segment", str(data), "-f", "jsonl", "--text-key", "content", "-q"])
    assert segmented.returncode == 0, segmented.stderr[-3000:]
    out = [json.loads(line) for line in segmented.stdout.splitlines()]
    assert [r["text"] for r in out] == [line["content"] for line in lines]
    assert [r.get("meta", {}) for r in out] == want
    pairs = run_cli(["pairs", str(data), "-f", "jsonl", "--text-key", "content", "--head", "0"])
    assert pairs.returncode == 0, pairs.stderr[-3000:]
    found = [json.loads(line) for line in pairs.stdout.splitlines()]
    pairs_found = [r for r in found if "token_i" in r]
    assert {r["doc"] for r in pairs_found} == {0, 1}
    for r in pairs_found:  # (tokens of the text read, not of the summary in "text")
        assert r["token_i"] in lines[r["doc"]]["content"] and r.get("meta", {}) == want[r["doc"]]
    # the field that holds the text, named by the error
    missing = run_cli(["chunk", str(data), "-q"])
    assert missing.returncode == 2
    assert (
        '[E112] Line 2 of the input is not a JSON object with a string field "text" (no '
        'field "text"; its strings are in "content": --text-key names the field to read)'
    ) in squash(missing.stderr)
    wrong = run_cli(["chunk", "-", "--text-key", "body", "-q"], stdin='[{"body": 3}]')
    assert 'with a string field "body" (its "body" is a number)' in squash(wrong.stderr)


def test_chunk_reads_json_lines_by_suffix_and_other_files_whole(tmp_path: Any) -> None:
    """A Markdown file is one document (before, every file but .txt was read as JSON
    lines and stopped with E112); a .ndjson file is JSON lines (objects, or strings: the
    texts); a .json file that holds one JSON array, its items (the same)."""
    text = "# Notes\n\n" + SAMPLE_TXT.read_text(encoding="utf8")
    page = tmp_path / "notes.md"
    page.write_text(text, encoding="utf8")
    lines = tmp_path / "docs.ndjson"
    lines.write_text(json.dumps({"text": "One. Two."}) + "\n" + json.dumps(text) + "\n")
    array = tmp_path / "docs.json"
    array.write_text(json.dumps([{"text": "One. Two."}, text], indent=2))
    for path, texts in ((page, [text]), (lines, ["One. Two.", text]), (array, ["One. Two.", text])):
        result = run_cli(["chunk", str(path), "--max-tokens", "64", "-q"])
        assert result.returncode == 0, result.stderr[-3000:]
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert sorted({r["doc"] for r in records}) == list(range(len(texts)))
        for number, want in enumerate(texts):
            assert "".join(r["text"] for r in records if r["doc"] == number) == want


@pytest.mark.parametrize(
    "content, warned",
    [
        (json.dumps({"text": "One. Two."}) + "\n" + json.dumps({"text": "Three."}), True),
        (json.dumps(["One. Two.", "Three."]), True),
        (json.dumps({"id": 7, "text": "One. Two. Three."}, indent=2), True),
        ('{"id": 7}\n[1, 2]', False),  # JSON, but no documents
        ("[Draft] One. Two.\n{Three} four.", False),
        ("[" * 2000 + "]" * 2000, False),  # (deeper than the JSON reader: a crash, before)
    ],
)
def test_json_documents_in_a_text_file_warn(tmp_path: Any, content: str, warned: bool) -> None:
    """A file that holds JSON documents (JSON lines, an array, one pretty-printed object)
    under a name read as text is still read whole, as its name says, with W005 (chunk,
    pairs) or W004 (segment) saying how to read it one document at a time (before, its
    JSON syntax was chunked without a word); other text and JSON without a "text" do
    not warn."""
    path = tmp_path / "docs.txt"
    path.write_text(content, encoding="utf8")
    result = run_cli(["chunk", str(path), "-q"])
    assert result.returncode == 0, result.stderr[-3000:]
    assert ("[W005]" in result.stderr) is warned
    assert "".join(json.loads(line)["text"] for line in result.stdout.splitlines()) == content
    if warned:
        assert ".jsonl, .ndjson, .json" in squash(result.stderr)
        result = run_cli(["pairs", str(path), "-q"])
        assert result.returncode == 0 and "[W005]" in result.stderr
        result = run_cli(["segment", str(path)])
        assert result.returncode == 0 and "[W004]" in result.stderr


@pytest.mark.parametrize("content", ["", "\n  \n\n", "[]", " [ ]\n"])
def test_an_input_without_documents_warns(tmp_path: Any, content: str) -> None:
    """JSON lines with no line other than white space, or an empty JSON array, hold no
    document: chunk, segment and pairs write nothing and say so (W007) instead of ending
    without a word; one document is read without the warning."""
    path = tmp_path / "docs.jsonl"
    path.write_text(content, encoding="utf8")
    for args in (["chunk", "-q"], ["segment", "--format", "jsonl"], ["pairs", "-q"]):
        result = run_cli([args[0], str(path), *args[1:]])
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout == ""
        assert f"[W007] {path} holds no documents" in squash(result.stderr)
    result = run_cli(["chunk", "-", "-q"], stdin=content)
    assert result.stdout == "" and "[W007] standard input holds" in squash(result.stderr)
    one = (
        json.dumps(["One. Two."]) if "[" in content else content + json.dumps({"text": "One. Two."})
    )
    path.write_text(one, encoding="utf8")
    result = run_cli(["chunk", str(path), "-q"])
    assert result.returncode == 0 and "[W007]" not in result.stderr
    assert [json.loads(line)["text"] for line in result.stdout.splitlines()] == ["One. Two."]


def test_chunk_penalty_prices_boundaries_between_paragraphs_too(tmp_path: Any) -> None:
    """--penalty sets the cost of every boundary, between paragraphs as between
    sentences: a low one cuts a text with paragraph breaks at every paragraph, a high one
    keeps it together as one topic (farm animals), and 0 is E020 (a boundary's score is
    measured in penalties)."""
    paragraphs = [
        "The horse sleeps in the barn at night. It eats hay every morning.",
        "Our cows graze on the hill behind the farm. They give milk twice a day.",
        "Goats climb the old stone walls. Children feed them bread.",
        "Sheep are shorn in early summer. Their wool is sold at the market.",
        "A donkey pulls the cart to the village. It is slow but strong.",
    ]
    page = tmp_path / "farm.txt"
    page.write_text("\n\n".join(paragraphs) + "\n", encoding="utf8")
    chunks = {}
    for penalty in ("0.05", "5"):
        args = ["chunk", str(page), "--max-tokens", "0", "-q", "--penalty", penalty]
        result = run_cli(args)
        assert result.returncode == 0, result.stderr[-3000:]
        chunks[penalty] = [json.loads(line)["text"].strip() for line in result.stdout.splitlines()]
    assert chunks["0.05"] == paragraphs
    assert chunks["5"] == ["\n\n".join(paragraphs)]
    zero = run_cli(["chunk", str(page), "--penalty", "0"])
    assert zero.returncode != 0 and "[E020] Invalid `segment_penalty` 0.0" in squash(zero.stderr)
