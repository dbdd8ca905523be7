"""Scale-out on Dask (``spacy_attnseg.scale``, ``--engine dask``) and progress bars.

The distributed runs use real local clusters of two worker processes and are compared
with ``nlp.pipe`` in this process: same sentence starts, segments (with scores) and
``doc._.head_pairs``.
"""

from __future__ import annotations

import datetime
import fcntl
import json
import math
import os
import pickle
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy
import pytest
import spacy
import torch
from conftest import REPO, ewt_texts, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import DocBin

from spacy_attnseg import load_pipeline, records
from spacy_attnseg.records import (
    chunk_records,
    chunk_sizer,
    segments_key,
    sentence_record,
    text_batches,
)
from spacy_attnseg.scale import WORKER_ENVIRON, Job, Packed, partition_size, partitions, run

BATCH = 4
N_DOCS = 24


@pytest.fixture(scope="module")
def texts() -> List[str]:
    return ewt_texts()[:N_DOCS]


@pytest.fixture(scope="module")
def pairs_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default pipeline with attn_head_pairs (all heads of the last layer), saved."""
    nlp = load_pipeline("default")
    nlp.add_pipe("attn_head_pairs", config={"layers": [-1], "threshold": 0.5})
    path = tmp_path_factory.mktemp("pairs_model") / "pipeline"
    nlp.to_disk(path)
    return path


@pytest.fixture()
def one_thread() -> Iterator[None]:
    """torch on one thread, as each worker runs."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def meta_of(number: int) -> Dict[str, Any]:
    """What the test's JSON lines carry beside "text": an id on every other line."""
    return {"id": f"doc-{number}", "tags": [number]} if number % 2 else {}


def jsonl(texts: List[str], path: Path) -> Path:
    lines = [json.dumps({"text": t, **meta_of(n)}) + "\n" for n, t in enumerate(texts)]
    path.write_text("".join(lines), encoding="utf8")
    return path


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(0, 40), st.integers(1, 9), st.integers(1, 5))
def test_partitions_cover_the_input_in_whole_batches(n: int, size: int, batch: int) -> None:
    items = [str(i) for i in range(n)]
    size = partition_size(size, batch)
    assert size % batch == 0 and size >= batch
    parts = list(partitions(iter(items), size))
    assert [x for _, part in parts for x in part] == items
    assert [first for first, _ in parts] == list(range(0, n, size))
    assert all(len(part) == size for _, part in parts[:-1])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(0, 30), max_size=25),
    st.integers(1, 6),
    st.integers(1, 40),
    st.sampled_from([None, 3]),
)
def test_text_batches_keep_the_order_within_both_limits(
    sizes: List[int], batch: int, max_size: int, weight: Optional[int]
) -> None:
    """Within ``batch`` items and ``max_size`` in size (characters by default; with a
    ``size``, what it says), each batch full before the next."""
    items = [("x" * size, {"n": n}) for n, size in enumerate(sizes)]

    def size(item: Tuple[str, Dict[str, int]]) -> int:
        return len(item[0]) if weight is None else weight * len(item[0]) + item[1]["n"] % 2

    if weight is None:
        batches = list(text_batches(iter(items), batch, max_size))
    else:
        batches = list(text_batches(iter(items), batch, max_size, size))
    assert [item for part in batches for item in part] == items
    for part in batches:
        total = sum(size(item) for item in part)
        assert len(part) <= batch and (total <= max_size or len(part) == 1)
    for a, b in zip(batches[:-1], batches[1:], strict=True):  # each full before the next
        total = sum(size(item) for item in a)
        assert len(a) == batch or total + size(b[0]) > max_size


def test_long_documents_run_in_batches_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of long documents goes through ``nlp.pipe`` one or a few at a time
    (``records.BATCH_CHARACTERS``), in order, with their metadata."""
    nlp = spacy.blank("en")
    seen: List[int] = []
    pipe = nlp.pipe

    def counted(items: Any, **kwargs: Any) -> Any:
        if kwargs.get("as_tuples"):  # (spaCy calls pipe again on the texts alone)
            seen.append(len(items))
        return pipe(items, **kwargs)

    monkeypatch.setattr(nlp, "pipe", counted)
    monkeypatch.setattr(records, "BATCH_CHARACTERS", 100)
    texts = ["Short one."] * 3 + ["Long. " * 30, ("Long too. " * 20, {"id": 7})] + ["End."] * 2
    out = list(records.pipe_docs(nlp, texts, batch_size=4, reader="this test reads"))
    assert [doc.text for doc, _ in out] == [t if isinstance(t, str) else t[0] for t in texts]
    assert out[4][1] == {"id": 7} and out[0][1] == {}
    assert seen == [3, 1, 1, 2]


def test_job_rejects_unknown_values() -> None:
    with pytest.raises(ValueError, match=r"\[E024\]"):
        Job(model="default", output="xml")
    with pytest.raises(ValueError, match=r"\[E024\]"):
        list(run(["a"], Job(model="default", output="sentences"), engine="spark"))
    for size in (0, "16", 2.5, numpy.int64(16)):
        with pytest.raises(ValueError, match=r"^\[E113\] batch_size / threads cannot be"):
            Job(model="default", output="chunks", batch_size=size)
        with pytest.raises(ValueError, match=r"^\[E113\] batch_size / threads cannot be"):
            Job(model="default", output="chunks", threads=size)
    job = Job(model="default", output="chunks")
    # one string is no iterable of texts (it ran a document per character)
    with pytest.raises(TypeError, match=r"^\[E118\] scale.run\(\) takes an iterable of texts"):
        next(run("One. Two.", job))
    for value in (0, "16", 2.5, numpy.int64(16), True):
        # checked before any partition is cut or any engine is imported
        with pytest.raises(ValueError, match=r"^\[E015\] Invalid `size` "):
            next(run(["a"], job, size=value))
        with pytest.raises(ValueError, match=r"^\[E015\] Invalid `workers` "):
            next(run(["a"], job, engine="dask", workers=value))


def test_local_run_equals_nlp_pipe(default_nlp: Any, texts: List[str]) -> None:
    """Without an engine the partitions run here and give nlp.pipe's records."""
    job = Job(model="default", output="chunks", batch_size=BATCH, threads=torch.get_num_threads())
    lines = [line for part in run(texts[:9], job, size=BATCH) for line in part]
    key = segments_key(default_nlp)
    docs = default_nlp.pipe(texts[:9], batch_size=BATCH)
    sizer = chunk_sizer(default_nlp)
    expected = [r for n, doc in enumerate(docs) for r in chunk_records(doc, n, key, sizer)]
    assert [json.loads(line) for line in lines] == expected
    assert [r["doc"] for r in expected][-1] == 8


def nested(depth: int) -> Any:
    """A JSON array nested ``depth`` levels deep."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_docbin_meta_that_msgpack_cannot_hold_stops_with_e142(default_nlp: Any) -> None:
    """A document's other fields go into its DocBin as ``doc.user_data["meta"]``, in
    MessagePack: an integer beyond 64 bits or nesting past 511 levels stopped deep in
    its packer (OverflowError, "recursion limit exceeded"); now E142 names the document.
    The deepest meta it holds comes back whole."""
    job = Job(model="default", output="docbin", batch_size=BATCH, threads=torch.get_num_threads())
    deepest = {"x": nested(510)}
    items = [("One. Two.", {"id": 1}), ("Three. Four.", deepest)]
    (data,) = run(items, job, size=BATCH)
    docs = list(DocBin().from_bytes(data).get_docs(default_nlp.vocab))
    assert docs[0].user_data["meta"] == {"id": 1}
    value, depth = docs[1].user_data["meta"]["x"], 1
    while value:
        value, depth = value[0], depth + 1
    assert depth == 510
    for meta, reason in (
        ({"id": 2**64}, "an integer beyond 64 bits"),
        ({"id": -(2**63) - 1}, "an integer beyond 64 bits"),
        ({"x": nested(511)}, "nest deeper than it goes"),
    ):
        with pytest.raises(
            ValueError, match=rf"\[E142\] The other fields of document 1 .*{reason}"
        ):
            list(run([("One. Two.", {"id": 1}), ("Three.", meta)], job, size=BATCH))
    # JSON lines keep such fields as they are
    chunks = Job(model="default", output="chunks", batch_size=BATCH, threads=job.threads)
    (lines,) = run([("Three.", {"id": 2**64})], chunks, size=BATCH)
    assert json.loads(lines[0])["meta"] == {"id": 2**64}


@pytest.mark.parametrize(
    "meta,reason,in_docbin",
    [
        ({"when": datetime.date(2026, 1, 2)}, "Object of type date is not JSON", "E144"),
        ({"tags": {"a", "b"}}, "Object of type set is not JSON", "E144"),
        ({"score": math.nan}, "it holds NaN or an infinity", "kept"),
        ({"score": [math.inf]}, "it holds NaN or an infinity", "kept"),
        ({"x": nested(5000)}, "they nest deeper than the JSON writer goes", "E142"),
    ],
)
def test_meta_that_json_cannot_hold_stops_with_e144(
    default_nlp: Any, meta: Dict[str, Any], reason: str, in_docbin: str
) -> None:
    """Other fields given through the Python API that JSON has no form for (a date, a
    set, NaN, nesting past the writer's limit) stopped as the records were written
    (TypeError from ``json.dumps``), or wrote a NaN that strict JSON readers refuse; now
    E144 names the document before its pass, for both JSON outputs. In a DocBin, a value
    of a type MessagePack cannot hold is E144 too, nesting past its limit E142, and a
    number it holds (NaN, an infinity) is kept."""
    items = [("One. Two.", {"id": 1}), ("Three. Four.", meta)]
    for output in ("chunks", "sentences"):
        job = Job(model="default", output=output, batch_size=BATCH, threads=1)
        with pytest.raises(ValueError, match=rf"\[E144\] .* document 1 .*JSON lines: {reason}"):
            list(run(items, job, size=BATCH))
    docbin = Job(model="default", output="docbin", batch_size=BATCH, threads=1)
    if in_docbin == "kept":
        (data,) = run(items, docbin, size=BATCH)
        docs = list(DocBin().from_bytes(data).get_docs(default_nlp.vocab))
        kept = docs[1].user_data["meta"]["score"]
        assert math.isnan(kept) if isinstance(kept, float) else math.isinf(kept[0])
    else:
        where = "a DocBin: can not" if in_docbin == "E144" else "in a DocBin: they nest"
        with pytest.raises(ValueError, match=rf"\[{in_docbin}\] .* document 1 .*{where}"):
            list(run(items, docbin, size=BATCH))


def test_dask_docbin_equals_one_process(
    pairs_model: Path, texts: List[str], tmp_path: Path, one_thread: None
) -> None:
    """`segment --engine dask --workers 2 -o x.spacy` on a local cluster of two
    processes: sentences, segments and head pairs as nlp.pipe here."""
    output = tmp_path / "docs.spacy"
    args = ["segment", str(jsonl(texts, tmp_path / "in.jsonl")), "-f", "jsonl", "-m"]
    args += [str(pairs_model), "-o", str(output), "--batch-size", str(BATCH)]
    args += ["--partition-size", "6", "--engine", "dask", "--workers", "2", "-q"]
    result = run_cli(args)
    assert result.returncode == 0, result.stderr[-3000:]
    nlp = load_pipeline(str(pairs_model))
    got = list(DocBin().from_disk(output).get_docs(nlp.vocab))
    want = list(nlp.pipe(texts, batch_size=BATCH))
    assert len(got) == len(want) == N_DOCS
    n_pairs = 0
    for number, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a.text == b.text
        # (msgpack reads a list back as a tuple)
        assert json.loads(json.dumps(a.user_data.get("meta", {}))) == meta_of(number)
        assert [s.start for s in a.sents] == [s.start for s in b.sents]
        for key in ("attn_segments", "attn_sents", "fig5_segments"):
            assert [(s.start, s.end, s.label_) for s in a.spans[key]] == [
                (s.start, s.end, s.label_) for s in b.spans[key]
            ]
            assert a.spans[key].attrs["scores"] == b.spans[key].attrs["scores"]
        # the same pairs; scores up to float32 rounding (a worker's numpy runs its BLAS
        # on one thread, dask's default, and may sum in another order than here)
        for column in ("layer", "head", "i", "j"):
            assert numpy.array_equal(
                getattr(a._.head_pairs, column), getattr(b._.head_pairs, column)
            )
        assert numpy.allclose(a._.head_pairs.score, b._.head_pairs.score, rtol=0, atol=1e-6)
        assert a._.start_scores == b._.start_scores
        n_pairs += len(b._.head_pairs)
    assert n_pairs > 100


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A running local Dask cluster of two worker processes."""
    distributed = pytest.importorskip("distributed")
    import dask

    # the workers' environment of the engine's own local clusters (no malloc trimming
    # setting that this process's later subprocesses would inherit)
    with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}):
        local = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
    with local:
        yield local


def test_chunks_on_a_running_cluster_equal_one_process(
    cluster: Any, texts: List[str], tmp_path: Path, one_thread: None
) -> None:
    """`chunk --scheduler ADDRESS` (an existing cluster) writes the same lines as
    `chunk` in one process, and `segment -f jsonl` likewise (this process on one torch
    thread, as each worker runs: on two, a score can differ in its sixth decimal)."""
    data = str(jsonl(texts, tmp_path / "in.jsonl"))
    common = ["--batch-size", str(BATCH), "--partition-size", "8", "-q"]
    engine = ["--engine", "dask", "--scheduler", cluster.scheduler_address]
    for command in (["chunk", data, "--max-tokens", "64"], ["segment", data, "-f", "jsonl"]):
        here = run_cli([*command, *common])
        there = run_cli([*command, *common, *engine])
        assert here.returncode == 0 and there.returncode == 0, there.stderr[-3000:]
        assert there.stdout == here.stdout
        records = [json.loads(line) for line in here.stdout.splitlines()]
        assert len(records) >= N_DOCS
        # each line's other fields come back with every record of its document
        numbers = [r["doc"] for r in records] if command[0] == "chunk" else range(N_DOCS)
        assert [r.get("meta", {}) for r in records] == [meta_of(n) for n in numbers]


def test_deep_fields_reach_the_workers(cluster: Any, one_thread: None) -> None:
    """A document's other fields, however deep the command line reads them (Dask's
    task parser and pickle both recursed into them: 600 levels overflowed the stack),
    and integers beyond 64 bits, come back from the workers as they went; items that
    are not JSON travel as they are."""
    job = Job(model="default", output="chunks", batch_size=BATCH, threads=1)
    deep = {"x": nested(900), "id": 2**70, "score": 0.5}
    items: List[Any] = [("One. Two.", deep), "Three.", ("Four.", {"when": (1, 2)})]
    here = [line for part in run(items, job, size=BATCH) for line in part]
    address = cluster.scheduler_address
    there = [line for part in run(items, job, engine="dask", address=address) for line in part]
    assert there == here and len(here) == 3
    assert json.loads(here[0])["meta"]["id"] == 2**70
    packed = Packed.of(items)
    assert packed.state and pickle.loads(pickle.dumps(packed)).texts() == [
        ("One. Two.", json.loads(json.dumps(deep))),
        "Three.",
        ("Four.", {"when": [1, 2]}),
    ]
    # NaN travels as Python's JSON writes it (a DocBin holds it; JSON lines stop with E144)
    nan = Packed.of([("Six.", {"score": float("nan")})])
    assert nan.state and math.isnan(pickle.loads(pickle.dumps(nan)).texts()[0][1]["score"])
    raw = Packed.of([("Five.", {"at": object})])  # not JSON: as it is
    assert raw.items is not None and raw.texts()[0][1]["at"] is object


def test_sentence_records_hold_sentences_and_segments(default_nlp: Any) -> None:
    doc = default_nlp(ewt_texts()[3])
    record = sentence_record(doc, "attn_segments")
    assert [(s["start"], s["end"]) for s in record["sents"]] == [
        (s.start_char, s.end_char) for s in doc.sents
    ]
    segments = doc.spans["attn_segments"]
    assert [s["score"] for s in record["segments"]] == [
        round(x, 4) for x in segments.attrs["scores"]
    ]
    assert record["segments"][-1]["end"] == segments[-1].end_char


def run_on_a_terminal(args: List[str]) -> str:
    """Run the command line with stderr on a pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    # a terminal of 24 x 100 characters (a new pseudo-terminal has 0 columns)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    process = subprocess.Popen(
        [sys.executable, "-m", "spacy_attnseg", *args],
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env=env,
        cwd=str(REPO),
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=240)
    os.close(leader)
    assert process.returncode == 0
    return b"".join(chunks).decode("utf8", "replace")


def test_progress_bar_on_a_terminal_only(texts: List[str], tmp_path: Path) -> None:
    """A bar in docs with docs/s when stderr is a terminal (a real pseudo-terminal for
    the command in a fresh interpreter), none with --quiet or into a pipe."""
    data = str(jsonl(texts[:6], tmp_path / "in.jsonl"))
    shown = run_on_a_terminal(["chunk", data, "--batch-size", "2"])
    assert "6doc" in shown and "doc/s" in shown
    quiet = run_cli(["chunk", data, "--batch-size", "2", "--quiet"], tty=True)
    assert quiet.returncode == 0 and "doc/s" not in quiet.stderr
    assert "doc/s" in run_cli(["pairs", data, "-f", "jsonl"], tty=True).stderr
    piped = run_cli(["pairs", data, "-f", "jsonl"])
    assert piped.returncode == 0 and "doc/s" not in piped.stderr
    assert {json.loads(line)["doc"] for line in piped.stdout.splitlines()} == set(range(6))
