"""The ``malloc_trim`` component: Docs pass through unchanged, it serializes with the
pipeline, it trims after each batch, and a trim hands freed heap pages back to the
operating system."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, List

import numpy
import pytest
import spacy

from spacy_attnseg.components import malloc_trim as memory
from spacy_attnseg.components.malloc_trim import MallocTrim

STATM = Path("/proc/self/statm")
TEXTS = [f"Sentence {i} is here. And another one {i}! Is it the last?" for i in range(10)]


def resident_mb() -> float:
    """The process's resident set size now, in MiB."""
    pages = int(STATM.read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def sentencizer_nlp(trim: bool) -> Any:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    if trim:
        nlp.add_pipe("malloc_trim", last=True)
    return nlp


def test_factory_builds_the_component() -> None:
    nlp = sentencizer_nlp(trim=True)
    assert nlp.pipe_names == ["sentencizer", "malloc_trim"]
    assert isinstance(nlp.get_pipe("malloc_trim"), MallocTrim)
    assert nlp.get_pipe_meta("malloc_trim").factory == "malloc_trim"


def test_transformer_docs_pass_through_unchanged(minilm_nlp: Any, sample_texts: List[str]) -> None:
    docs = list(minilm_nlp.pipe(sample_texts[:5] + sample_texts[-1:], batch_size=4))
    before = [
        (
            doc.to_bytes(exclude=["user_data"]),
            [token.is_sent_start for token in doc],
            numpy.array(doc._.separator_scores, copy=True),
            doc._.trf_data,
        )
        for doc in docs
    ]
    component: Any = spacy.blank("en").add_pipe("malloc_trim")
    passed = list(component.pipe(iter(docs), batch_size=5))
    passed.append(component(docs[0]))
    assert [id(doc) for doc in passed] == [id(doc) for doc in docs] + [id(docs[0])]
    for doc, (data, starts, scores, trf_data) in zip(docs, before, strict=True):
        assert doc.to_bytes(exclude=["user_data"]) == data
        assert [token.is_sent_start for token in doc] == starts
        numpy.testing.assert_array_equal(doc._.separator_scores, scores)
        assert doc._.trf_data is trf_data


def test_pipeline_output_identical_with_and_without() -> None:
    plain, trimmed = sentencizer_nlp(trim=False), sentencizer_nlp(trim=True)
    expected = [doc.to_bytes() for doc in plain.pipe(TEXTS, batch_size=3)]
    assert [doc.to_bytes() for doc in trimmed.pipe(TEXTS, batch_size=3)] == expected
    assert trimmed(TEXTS[0]).to_bytes() == plain(TEXTS[0]).to_bytes()


def test_trims_after_each_batch_is_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    consumed: List[Any] = []
    trims: List[int] = []

    def fake_trim(pad: int) -> int:
        assert pad == 0
        trims.append(len(consumed))
        return 1

    monkeypatch.setattr(memory, "_MALLOC_TRIM", fake_trim)
    nlp = sentencizer_nlp(trim=True)
    for doc in nlp.pipe(TEXTS, batch_size=4):
        consumed.append(doc)
    # After docs 1-4, 5-8 and the last, partial batch 9-10; never in the middle.
    assert trims == [4, 8, 10]
    nlp(TEXTS[0])
    assert trims == [4, 8, 10, 10]


def test_serialization_round_trip(tmp_path: Path) -> None:
    nlp = sentencizer_nlp(trim=True)
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == ["sentencizer", "malloc_trim"]
    assert isinstance(loaded.get_pipe("malloc_trim"), MallocTrim)
    assert loaded.config["components"]["malloc_trim"]["factory"] == "malloc_trim"
    assert [doc.to_bytes() for doc in loaded.pipe(TEXTS)] == [
        doc.to_bytes() for doc in nlp.pipe(TEXTS)
    ]

    from_bytes = sentencizer_nlp(trim=True).from_bytes(nlp.to_bytes())
    assert from_bytes.pipe_names == ["sentencizer", "malloc_trim"]
    component = nlp.get_pipe("malloc_trim")
    assert isinstance(component.from_bytes(component.to_bytes()), MallocTrim)


def test_missing_malloc_trim_warns_once_and_passes_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory, "_MALLOC_TRIM", None)
    monkeypatch.setattr(memory, "_MISSING_REASON", "platform darwin, C library unknown")
    monkeypatch.setattr(memory, "_WARNED", False)
    assert not memory.has_malloc_trim()
    assert memory.trim_heap() is False
    with pytest.warns(UserWarning, match=r"\[W001\].*platform darwin") as record:
        nlp = sentencizer_nlp(trim=True)
    assert len(record) == 1
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        second = sentencizer_nlp(trim=True)
    assert not [w for w in again if "[W001]" in str(w.message)]
    expected = [doc.to_bytes() for doc in sentencizer_nlp(trim=False).pipe(TEXTS)]
    assert [doc.to_bytes() for doc in nlp.pipe(TEXTS, batch_size=3)] == expected
    assert second(TEXTS[0]).text == TEXTS[0]


@pytest.mark.skipif(not memory.has_malloc_trim(), reason="the C library has no malloc_trim")
@pytest.mark.skipif(not STATM.exists(), reason="no /proc/self/statm to read RSS from")
def test_trim_returns_freed_heap_pages_to_the_system() -> None:
    nlp = sentencizer_nlp(trim=True)
    nlp("Warm up the pipeline.")
    size, count = 32 * 1024, 6400  # 200 MiB in buffers below glibc's mmap threshold
    start = resident_mb()
    buffers = [b"\x01" * size for _ in range(count)]  # filled, so resident
    allocated = resident_mb() - start
    assert allocated > 180, f"allocating 200 MiB raised RSS by only {allocated:.0f} MiB"
    # The last buffer, allocated last, stays alive above the others, so the heap's top
    # cannot shrink when they are freed: glibc keeps their pages resident.
    keep = buffers[-1]
    del buffers
    held = resident_mb()
    assert held - start > 150, "the freed buffers left the heap without a trim"
    assert len(list(nlp.pipe(["One doc.", "Two docs."], batch_size=16))) == 2
    released = held - resident_mb()
    assert released > 150, f"only {released:.0f} of 200 MiB freed went back to the system"
    assert keep[:1] == b"\x01"
