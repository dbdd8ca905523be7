"""The attn_segmenter component in spaCy pipelines: boundaries, extensions, batching,
multiprocessing, serialization, scoring, edge cases and error codes."""

from __future__ import annotations

import copy
import json
import os
import pickle
import re
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import numpy
import pytest
import spacy
import torch
from conftest import EWT_TEST, SAMPLE_TXT, long_sample_text, transformer_only_nlp
from spacy.language import Language
from spacy.tokens import Doc

import spacy_attnseg
from paper.evaluation import read_conllu_documents, to_spacy_examples
from spacy_attnseg.capture import COLSUM_HEADS, COLSUMS
from spacy_attnseg.sentences import layout_starts, sentence_starts


def starts(doc: Doc) -> List[int]:
    return [sent.start for sent in doc.sents]


@pytest.fixture(scope="module")
def fresh_nlp() -> Any:
    """A MiniLM pipeline this module may modify (restoring what it changes)."""
    return spacy_attnseg.load_pipeline("attention")


# -- boundaries and extensions --------------------------------------------------------


def test_sentences_and_separator_scores(minilm_nlp: Any, sample_text: str) -> None:
    doc = minilm_nlp(sample_text)
    segmenter = minilm_nlp.get_pipe("attn_segmenter")
    threshold = segmenter.threshold
    sents = list(doc.sents)
    assert len(sents) >= 5
    assert "".join(s.text_with_ws for s in sents) == sample_text

    scores = doc._.separator_scores
    assert isinstance(scores, list) and len(scores) == len(doc)
    assert [token._.separator_score for token in doc] == scores
    values = numpy.array(scores)
    assert ((values >= 0) & (values <= 1)).all()
    # candidates = "punct": only punctuation can score.
    assert all(s == 0 for s, token in zip(scores, doc, strict=True) if not token.is_punct)

    # Independent rule: after each token scoring >= threshold, skip the following
    # closing punctuation/quotes/whitespace attached to it; the next token starts a
    # sentence; nothing else does (except token 0).
    expected: Set[int] = {0}
    for i, score in enumerate(scores):
        if score >= threshold:
            j = i + 1
            while j < len(doc) and (
                doc[j].is_space
                or doc[j].text in {".", "!", "?", "...", ")", "]", "”"}
                or (doc[j].text in {'"', "'"} and not doc[j - 1].whitespace_)
            ):
                j += 1
            if j < len(doc):
                expected.add(j)
    assert set(starts(doc)) == expected
    # Every sentence but the last ends in punctuation (or whitespace after it).
    for sent in sents[:-1]:
        assert sent[-1].is_punct or sent[-1].is_space, sent.text


def test_sample_txt_boundaries(minilm_nlp: Any) -> None:
    text = SAMPLE_TXT.read_text(encoding="utf8")
    doc = minilm_nlp(text)
    segmenter = minilm_nlp.get_pipe("attn_segmenter")
    # step by step from the written scores: separators -> next starts -> layout rules
    separators = numpy.array(doc._.separator_scores) >= segmenter.threshold
    expected = layout_starts(doc, sentence_starts(doc, separators), paragraph_breaks=True)
    assert starts(doc) == [int(i) for i in numpy.flatnonzero(expected)]
    firsts = [sent[0].text for sent in doc.sents]
    assert len(firsts) >= 4 and firsts[0] == "The"


# -- overwrite ------------------------------------------------------------------------


@Language.component("test_attnseg_preset_starts")
def preset_starts(doc: Doc) -> Doc:
    """Mark token 1 as a sentence start and token ``PRESET_NOT_START`` as not one,
    leaving every other token unset."""
    if len(doc) > 1:
        doc[1].is_sent_start = True
    index = PRESET.get("not_start")
    if index is not None and index < len(doc):
        doc[index].is_sent_start = False
    return doc


PRESET: Dict[str, int] = {}


def test_overwrite(fresh_nlp: Any, minilm_nlp: Any) -> None:
    text = SAMPLE_TXT.read_text(encoding="utf8")
    own = starts(minilm_nlp(text))
    segmenter = fresh_nlp.get_pipe("attn_segmenter")
    fresh_nlp.add_pipe("sentencizer", before="attn_segmenter")
    try:
        with fresh_nlp.select_pipes(disable=["attn_segmenter"]):
            sentencizer_only = starts(fresh_nlp(text))
        assert sentencizer_only != own, "the sample must separate the two splitters"

        segmenter.cfg["overwrite"] = False
        doc = fresh_nlp(text)
        assert starts(doc) == sentencizer_only
        assert doc._.separator_scores is not None

        segmenter.cfg["overwrite"] = True
        assert starts(fresh_nlp(text)) == own
    finally:
        segmenter.cfg["overwrite"] = False
        fresh_nlp.remove_pipe("sentencizer")

    # Partly set boundaries: kept without overwrite, everything else filled in.
    PRESET["not_start"] = own[2]
    fresh_nlp.add_pipe("test_attnseg_preset_starts", before="attn_segmenter")
    try:
        doc = fresh_nlp(text)
        expected = (set(own) - {own[2]}) | {1}
        assert set(starts(doc)) == expected
        segmenter.cfg["overwrite"] = True
        assert starts(fresh_nlp(text)) == own
    finally:
        segmenter.cfg["overwrite"] = False
        fresh_nlp.remove_pipe("test_attnseg_preset_starts")


# -- batching and multiprocessing -----------------------------------------------------


def annotations(docs: List[Doc]) -> Tuple[List[List[int]], List[List[float]]]:
    return [starts(d) for d in docs], [list(d._.separator_scores) for d in docs]


def assert_same(got: Tuple, want: Tuple) -> None:
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1], strict=True):
        numpy.testing.assert_allclose(a, b, atol=1e-5)


def test_pipe_batches_match_one_doc_at_a_time(fresh_nlp: Any, sample_texts: List[str]) -> None:
    texts = ["", *sample_texts[:6], "  ", *sample_texts[6:]]
    one_by_one = annotations([fresh_nlp(text) for text in texts])
    transformer = fresh_nlp.get_pipe("transformer")
    saved = transformer.cfg["max_batch_items"]
    try:
        transformer.cfg["max_batch_items"] = 256
        small = annotations(list(fresh_nlp.pipe(texts, batch_size=3)))
        transformer.cfg["max_batch_items"] = 10**6
        large = annotations(list(fresh_nlp.pipe(texts, batch_size=len(texts))))
    finally:
        transformer.cfg["max_batch_items"] = saved
    assert_same(small, one_by_one)
    assert_same(large, one_by_one)
    assert sum(len(s) for s in one_by_one[0]) > len(texts)


def test_pipe_n_process(minilm_nlp: Any, sample_texts: List[str]) -> None:
    texts = sample_texts[:8]
    single = annotations(list(minilm_nlp.pipe(texts, batch_size=2)))
    # Forked workers deadlock in torch's intra-op thread pool once the parent has used
    # it with several threads; one thread avoids that (spaCy's advice for n_process).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        multi = annotations(list(minilm_nlp.pipe(texts, batch_size=2, n_process=2)))
    finally:
        torch.set_num_threads(threads)
    assert_same(multi, single)


def topic_annotations(docs: List[Doc]) -> Tuple[List[Any], List[List[float]]]:
    """Sentence starts and topic segments (decisions), then both components' scores."""
    decided = [(starts(d), [(s.start, s.end) for s in d.spans["attn_segments"]]) for d in docs]
    scores = [d._.start_scores + list(d.spans["attn_segments"].attrs["scores"]) for d in docs]
    return decided, scores


def test_pickled_and_copied_pipelines_decide_as_the_original(
    default_nlp: Any, sample_texts: List[str]
) -> None:
    """``pickle`` and ``copy.deepcopy`` of the default pipeline give a pipeline whose
    components read their own transformer's pass (before, pickling failed on the
    components' reference to their pipeline, and a deep copy's components counted as not
    running, so nothing was captured: E006)."""
    texts = [long_sample_text(3000), *sample_texts[9:12]]
    want = topic_annotations(list(default_nlp.pipe(texts)))
    assert sum(len(segments) for _, segments in want[0]) > len(texts)
    for copied in (pickle.loads(pickle.dumps(default_nlp)), copy.deepcopy(default_nlp)):
        assert_same(topic_annotations(list(copied.pipe(texts))), want)
        with copied.select_pipes(disable=["attn_segmenter"]):
            assert "attn_segments" not in copied(texts[0]).spans
    assert_same(topic_annotations(list(default_nlp.pipe(texts))), want)


def test_memory_zones_decide_as_outside_them(default_nlp: Any, sample_texts: List[str]) -> None:
    """Inside spaCy's ``nlp.memory_zone()`` (a service's way to free the strings each
    batch adds), the default pipeline gives the sentences, segments, scores, headings and
    chunks it gives outside one, for words its vocabulary has not seen, in two zones in a
    row (the second after the first's strings are freed)."""
    words = " ".join(f"Qzv{n}xw" for n in range(12))
    texts = [
        f"# Zqwrel {words}\n\n{long_sample_text(1500)}\n\n## Fyrbol\n\n{sample_texts[11]}",
        f"{words}. {sample_texts[10]}",
    ]

    def decisions(docs: List[Doc]) -> Any:
        headings = [list(d.spans["attn_segments"].attrs["headings"]) for d in docs]
        return (*topic_annotations(docs), headings, [[s.text for s in d.sents] for d in docs])

    zoned = []
    for _ in range(2):
        with default_nlp.memory_zone():
            zoned.append(decisions(list(default_nlp.pipe(texts))))
            zoned.append(list(spacy_attnseg.chunks(default_nlp, texts)))
    outside = decisions(list(default_nlp.pipe(texts)))
    chunks = list(spacy_attnseg.chunks(default_nlp, texts))
    assert any(outside[2][0]) and len(chunks) > len(texts)
    for want, got in ((outside, zoned[0]), (outside, zoned[2])):
        assert_same(got[:2], want[:2])
        assert got[2:] == want[2:]
    assert zoned[1] == zoned[3] == chunks


def test_threads_share_a_pipeline(default_nlp: Any, sample_texts: List[str]) -> None:
    """A pipeline called from several threads at once (a web server's worker threads)
    decides as it does from one: its transformer passes run in turn (the capture keeps
    one pass's state, and the Hugging Face fast tokenizer refuses a second thread,
    "Already borrowed"); before, such calls failed with that error, with tensor shapes
    that did not match, or with E006."""
    texts = [long_sample_text(3000), *sample_texts[5:12]]
    want = [topic_annotations([default_nlp(text)]) for text in texts]
    got: Dict[Tuple[int, int, int], Any] = {}
    errors: List[str] = []

    def work(thread: int) -> None:
        try:
            for repeat in range(2):
                for k in range(len(texts)):
                    i = (k + 3 * thread) % len(texts)
                    got[(thread, repeat, i)] = topic_annotations([default_nlp(texts[i])])
        except Exception:
            errors.append(traceback.format_exc())

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[0]
    assert len(got) == 3 * 2 * len(texts)
    for (_, _, i), annotated in got.items():
        assert_same(annotated, want[i])


FORK_SCRIPT = """
import json, signal, sys
import torch
torch.set_num_threads(1)
from spacy_attnseg import load_pipeline

signal.alarm(60)  # (a child that waits for ever stops the script instead)
nlp = load_pipeline()
texts = json.loads(sys.argv[1])
def annotate(docs):
    return [[s.start for s in d.sents] for d in docs]
single = annotate(nlp.pipe(texts))
nlp("Warm.")
forward = nlp.get_pipe("transformer").model._func
with forward._lock:  # as while another thread of this process runs a pass
    multi = annotate(nlp.pipe(texts, n_process=2))
print(json.dumps([single, multi]))
"""


def test_pipe_n_process_while_another_thread_runs_a_pass(sample_texts: List[str]) -> None:
    """Processes forked while another thread of the parent holds the transformer's pass
    lock make their own lock (``capture._forked_child``): ``nlp.pipe(texts,
    n_process=2)`` gives the sentences of one process instead of waiting for ever."""
    texts = sample_texts[6:12]
    result = run_python(FORK_SCRIPT, json.dumps(texts), timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    single, multi = json.loads(result.stdout.strip().splitlines()[-1])
    assert multi == single and sum(len(starts) for starts in single) > len(texts)


SPAWN_SCRIPT = """
import json, multiprocessing, sys
import torch
torch.set_num_threads(1)
from spacy_attnseg import load_pipeline

if __name__ == "__main__":
    multiprocessing.set_start_method("spawn")
    nlp = load_pipeline()
    texts = json.loads(sys.argv[1])
    def annotate(docs):
        return [[[s.start for s in d.sents], [[g.start, g.end] for g in d.spans["attn_segments"]]]
                for d in docs]
    print(json.dumps([annotate(nlp.pipe(texts)), annotate(nlp.pipe(texts, n_process=2))]))
"""


def test_pipe_n_process_where_processes_spawn(sample_texts: List[str]) -> None:
    """``nlp.pipe(texts, n_process=2)`` where worker processes start by spawning (the
    default on macOS and Windows), which pickles the pipeline: the same sentences and
    segments as one process."""
    texts = [long_sample_text(3000), *sample_texts[9:12]]
    result = run_python(SPAWN_SCRIPT, json.dumps(texts))
    assert result.returncode == 0, result.stderr[-3000:]
    single, multi = json.loads(result.stdout.strip().splitlines()[-1])
    assert multi == single
    assert sum(len(segments) for _, segments in single) > 4


# -- serialization --------------------------------------------------------------------

LOAD_SCRIPT = """
import json, sys
import torch
torch.set_num_threads(2)
import spacy
assert "spacy_attnseg" not in sys.modules
nlp = spacy.load(sys.argv[1])
text = open(sys.argv[2], encoding="utf8").read()
doc = nlp(text)
print(json.dumps({
    "pipe_names": nlp.pipe_names,
    "cfg": nlp.get_pipe("attn_segmenter").cfg,
    "starts": [s.start for s in doc.sents],
    "scores": doc._.separator_scores,
    "output_keys": list(doc._.trf_data.model_output.keys()),
}))
"""


def run_python(script: str, *args: str, timeout: int = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false")
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_to_disk_and_load_in_fresh_process(
    fresh_nlp: Any, sample_text: str, tmp_path: Path
) -> None:
    segmenter = fresh_nlp.get_pipe("attn_segmenter")
    saved = dict(segmenter.cfg)
    try:
        segmenter.cfg.update({"threshold": 0.4, "layers": [2], "heads": [9]})
        segmenter.install_capture()
        doc = fresh_nlp(sample_text)
        fresh_nlp.to_disk(tmp_path / "pipeline")
    finally:
        segmenter.cfg.update(saved)
        segmenter.install_capture()
    (tmp_path / "text.txt").write_text(sample_text, encoding="utf8")

    result = run_python(LOAD_SCRIPT, str(tmp_path / "pipeline"), str(tmp_path / "text.txt"))
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    assert loaded["pipe_names"] == ["transformer", "attn_segmenter"]
    assert loaded["cfg"]["threshold"] == 0.4
    assert loaded["cfg"]["layers"] == [2] and loaded["cfg"]["heads"] == [9]
    assert COLSUMS in loaded["output_keys"], "hooks were not reinstalled after loading"
    assert loaded["starts"] == starts(doc)
    assert len(loaded["starts"]) > 3
    numpy.testing.assert_allclose(loaded["scores"], doc._.separator_scores, atol=1e-5)


def test_component_bytes_roundtrip(tiny_model_dir: Any, build_nlp: Any) -> None:
    model_dir = tiny_model_dir("bert")
    given = {"threshold": 0.3, "heads": [1, 3], "segment_pieces_ratio": None}
    source = build_nlp(model_dir, segmenter=given)
    target = build_nlp(model_dir)
    segmenter = target.get_pipe("attn_segmenter")
    segmenter.from_bytes(source.get_pipe("attn_segmenter").to_bytes())
    got, want = dict(segmenter.cfg), dict(source.get_pipe("attn_segmenter").cfg)
    # srsly's JSON reader parses 0.3 as 0.30000000000000004.
    assert got.pop("threshold") == pytest.approx(want.pop("threshold")) == 0.3
    assert got == want and got["segment_pieces_ratio"] is None  # (null, not the default)
    # The capture request follows the loaded configuration.
    doc = target("One sentence here. Another one there! And a third?")
    heads = numpy.asarray(doc._.trf_data.model_output[COLSUM_HEADS])[0].tolist()
    assert heads == [[1, 1], [1, 3]]


# -- scoring --------------------------------------------------------------------------


def test_evaluate_reports_sents_f(minilm_nlp: Any) -> None:
    gold = read_conllu_documents(EWT_TEST)[:10]
    examples = to_spacy_examples(minilm_nlp, gold)
    scores = minilm_nlp.evaluate(examples)
    assert {"sents_p", "sents_r", "sents_f"} <= set(scores)

    # Independent: sentence spans (start, last token) of the pipeline's docs vs gold.
    tp = n_pred = n_gold = 0
    for example, doc in zip(examples, minilm_nlp.pipe([g.text for g in gold]), strict=True):
        pred = {(s.start, s.end - 1) for s in doc.sents}
        ref = {(s.start, s.end - 1) for s in example.reference.sents}
        tp += len(pred & ref)
        n_pred += len(pred)
        n_gold += len(ref)
    p, r = tp / n_pred, tp / n_gold
    assert scores["sents_p"] == pytest.approx(p)
    assert scores["sents_r"] == pytest.approx(r)
    assert scores["sents_f"] == pytest.approx(2 * p * r / (p + r))
    assert 0.3 < scores["sents_f"] < 1.0


# -- edge cases -----------------------------------------------------------------------


def test_empty_and_whitespace_docs(minilm_nlp: Any) -> None:
    empty = minilm_nlp("")
    assert len(empty) == 0
    assert empty._.separator_scores == []
    assert list(empty.sents) == []

    for text in ["   ", "\n\n", " \t\n "]:
        doc = minilm_nlp(text)
        assert len(doc) >= 1
        assert doc._.separator_scores == [0.0] * len(doc)
        assert [s.text for s in doc.sents] == [text]

    text = "\n\nThe first sentence ends here.  The second one ends there.\n"
    doc = minilm_nlp(text)
    assert doc[0].is_space and doc[0].is_sent_start
    assert "".join(s.text_with_ws for s in doc.sents) == text

    docs = list(minilm_nlp.pipe(["", "   ", "Fine. Yes.", ""], batch_size=2))
    assert [len(d._.separator_scores) for d in docs] == [0, 1, len(docs[2]), 0]
    with minilm_nlp.select_pipes(enable=["transformer", "attn_segmenter"]):
        assert [d._.separator_scores for d in minilm_nlp.pipe(["", " "])] == [[], [0.0]]


def test_segments_of_sentences_nobody_set_are_a_coded_error(
    default_nlp: Any, sample_text: str
) -> None:
    """The default pipeline's segmenter (``sentences = false``) segments the sentences
    ``attn_senter`` sets: without it (disabled here; removed alike), a Doc of more than
    one token stops with E131, which says what to add (before, the Doc was one segment
    without a word, or spaCy's E030 came from inside the span writer). Sentences set
    on the Doc by hand, or by another component, are segmented; a one-token Doc needs
    none."""
    want = default_nlp(sample_text)
    with default_nlp.select_pipes(disable=["attn_senter"]):
        with pytest.raises(ValueError, match=r"E131\] 'attn_segmenter' has `sentences = false`"):
            default_nlp(sample_text)
        doc = default_nlp.make_doc(sample_text)
        sentence_starts = {sent.start for sent in want.sents}
        for token in doc:
            token.is_sent_start = token.i in sentence_starts
        doc = default_nlp(doc)
        assert starts(doc) == starts(want)
        segments = [(span.start, span.end) for span in doc.spans["attn_segments"]]
        assert segments == [(span.start, span.end) for span in want.spans["attn_segments"]]
        assert len(segments) > 1
        one = default_nlp("Hello")
        assert [(span.start, span.end) for span in one.spans["attn_segments"]] == [(0, 1)]


@pytest.mark.parametrize("batch_size", [0, -2])
def test_a_batch_size_below_one_is_a_coded_error(default_nlp: Any, batch_size: int) -> None:
    """``nlp.pipe(texts, batch_size=0)`` stops with E129, named by the last of the
    components that read the pass, in the shipped pipeline and without its segmenter or
    senter (before, spacy-transformers' transformer passed no Doc on, and ``nlp.pipe``
    gave nothing back for three texts)."""
    for disabled, last in (([], "attn_segmenter"), (["attn_segmenter"], "attn_senter")):
        error = rf"E129\] '{last}' was given batch_size {batch_size}:"
        with default_nlp.select_pipes(disable=disabled), pytest.raises(ValueError, match=error):
            list(default_nlp.pipe(["A.", "B.", "C."], batch_size=batch_size))
    with default_nlp.select_pipes(enable=["transformer"]):  # (the loss, without them)
        assert list(default_nlp.pipe(["A.", "B.", "C."], batch_size=0)) == []


@pytest.mark.parametrize("batch_size", ["2", 2.5, numpy.int64(2), True])
def test_a_batch_size_that_is_no_int_is_a_coded_error(default_nlp: Any, batch_size: Any) -> None:
    """A batch size that is not a Python int (a text, a float, a NumPy integer, a bool)
    stops with E129, which shows its repr (a text in quotes), where it stopped in spaCy's
    ``minibatch`` or in a comparison with a TypeError (a bool was taken as a batch of
    one)."""
    error = re.escape(f"[E129] 'attn_segmenter' was given batch_size {batch_size!r}:")
    with pytest.raises(ValueError, match=error):
        list(default_nlp.pipe(["A.", "B.", "C."], batch_size=batch_size))


def test_blank_lines_end_sentences(fresh_nlp: Any) -> None:
    segmenter = fresh_nlp.get_pipe("attn_segmenter")
    # headings without punctuation and a blank line after each
    text = (
        "Opening hours\n\nThe museum opens at nine. It closes at five.\n\nPrices\n\nEntry is free."
    )
    expected_sents = [
        "Opening hours\n\n",
        "The museum opens at nine. ",
        "It closes at five.\n\n",
        "Prices\n\n",
        "Entry is free.",
    ]
    assert [s.text_with_ws for s in fresh_nlp(text).sents] == expected_sents
    doc = fresh_nlp.get_pipe("transformer")(fresh_nlp.make_doc(text))
    segmenter.cfg["paragraph_breaks"] = False
    try:
        decisions = segmenter.predict([doc])
    finally:
        segmenter.cfg["paragraph_breaks"] = True
    separators = decisions[0].scores >= segmenter.threshold
    attention_only = [int(i) for i in numpy.flatnonzero(sentence_starts(doc, separators))]
    segmenter.set_annotations([doc], decisions)
    assert starts(doc) == attention_only
    # without the rule the headings run into the next sentence
    assert [doc[i].text for i in attention_only] == ["Opening", "It", "Prices"]


# -- errors ---------------------------------------------------------------------------


def test_error_no_transformer() -> None:
    with pytest.raises(ValueError, match=r"\[E001\]"):
        spacy.blank("en").add_pipe("attn_segmenter")
    with pytest.raises(ValueError, match=r"\[E001\]"):
        spacy.blank("en").add_pipe("attn_segmenter", config={"transformer": "trf"})


@pytest.mark.filterwarnings(r"ignore:\[W002\]")  # (an uncalibrated tiny model)
def test_error_transformer_after_component(tiny_model_dir: Any) -> None:
    nlp = transformer_only_nlp(tiny_model_dir("bert"))
    nlp.add_pipe("attn_segmenter", first=True)
    nlp.initialize()
    # the message names the running pipeline (it said "pipeline: ?")
    running = r"\(pipeline: \['attn_segmenter', 'transformer'\]\)"
    with pytest.raises(ValueError, match=rf"\[E001\] .*{running}"):
        nlp("A sentence. Another one.")
    nlp.add_pipe("attn_head_pairs")
    with nlp.select_pipes(enable=["attn_head_pairs"]):
        disabled = r"pipeline: \['attn_head_pairs'\]; disabled: \['attn_segmenter', 'transformer'\]"
        with pytest.raises(
            ValueError,
            match=rf"\[E001\] .* before 'attn_head_pairs' .*{disabled}",
        ):
            nlp("A sentence. Another one.")


def test_a_threshold_lies_in_zero_to_one() -> None:
    """The one rule for every decision threshold (three components, two commands): a
    number in (0, 1], where NaN and the infinities lie nowhere; a component built
    directly with a NaN threshold (no config to stop it) stops with E010."""
    from spacy_attnseg.components.head_pairs import AttnHeadPairs
    from spacy_attnseg.errors import check_threshold

    for good in (1e-9, 0.5, 1, 1.0):
        check_threshold(good)
    for bad in (float("nan"), float("inf"), -float("inf"), 0, 0.0, -0.1, 1.0000001):
        with pytest.raises(ValueError, match=re.escape(f"[E010] Invalid `threshold` {bad}:")):
            check_threshold(bad)
    with pytest.raises(ValueError, match=r"^\[E010\] Invalid `threshold` nan"):
        AttnHeadPairs(spacy.blank("en"), "pairs", threshold=float("nan"))


def test_error_tok2vec_named_transformer() -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", name="transformer")
    with pytest.raises(ValueError, match=r"\[E002\].*tok2vec"):
        nlp.add_pipe("attn_segmenter")


@pytest.mark.parametrize(
    "config,code",
    [
        ({"threshold": 0}, "E010"),
        ({"threshold": 1.5}, "E010"),
        ({"candidates": "foo"}, "E008"),
        ({"candidates": []}, "E008"),
        ({"candidates": [".", ""]}, "E008"),  # (an empty text is no token's: no sentences)
        ({"preset": "x"}, "E012"),
        ({"segment_method": "kmeans"}, "E019"),
        ({"segment_penalty": -1.0}, "E020"),
        ({"paragraph_penalty": -2.0}, "E020"),
        ({"paragraph_penalty": 0.0}, "E020"),
        ({"segment_drift": -0.1}, "E122"),
        ({"segment_pieces_ratio": 0.0}, "E149"),
        ({"segment_pieces_ratio": -1.25}, "E149"),
        ({"segment_scale": "log"}, "E028"),
        ({"min_sents": 0}, "E015"),
        ({"max_tokens": -5}, "E015"),
        ({"long_sentence_tokens": -1}, "E015"),
        ({"piece_tokens": 0}, "E015"),
        ({"segment_layers": 0}, "E015"),  # (with "hidden": no layer, one segment)
        ({"segment_short_text": -1}, "E015"),
        ({"min_sents": 5, "max_sents": 2}, "E125"),
        # (the sentence spans would replace the topic segments)
        ({"sents_key": "attn_segments"}, "E134"),
        ({"sents_key": "parts", "spans_key": "parts"}, "E134"),
    ],
)
@pytest.mark.filterwarnings(r"ignore:\[W002\]")  # (an uncalibrated tiny model)
def test_config_errors_at_construction(
    config: Dict[str, Any], code: str, tiny_model_dir: Any
) -> None:
    nlp = transformer_only_nlp(tiny_model_dir("bert"))
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        nlp.add_pipe("attn_segmenter", config=config)


@pytest.mark.parametrize(
    "config,message",
    [
        ({"min_sents": 0}, "Invalid `min_sents` 0: it must be a whole number of at least 1."),
        ({"max_tokens": -5}, "Invalid `max_tokens` -5: it must be a whole number of at least 0."),
        ({"piece_tokens": 0}, "Invalid `piece_tokens` 0: it must be a whole number of at least 1."),
        ({"min_sents": 5, "max_sents": 2}, "`min_sents` 5 is more than `max_sents` 2"),
    ],
)
def test_limit_errors_name_the_least_value(config: Dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as error:
        spacy_attnseg.load_pipeline(
            "attention", overrides={f"components.attn_segmenter.{k}": v for k, v in config.items()}
        )
    assert message in str(error.value)
    # max_sents 0 is no limit, so any min_sents goes with it
    overrides = {"components.attn_segmenter.min_sents": 5, "components.attn_segmenter.max_sents": 0}
    segmenter = spacy_attnseg.load_pipeline("attention", overrides=overrides).get_pipe(
        "attn_segmenter"
    )
    assert (segmenter.cfg["min_sents"], segmenter.cfg["max_sents"]) == (5, 0)


def test_error_layer_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"\[E004\].*layer 10.*6 layers"):
        spacy_attnseg.load_pipeline(
            "attention", overrides={"components.attn_segmenter.layers": [10]}
        )


@pytest.mark.parametrize(
    "segmenter,code",
    [({"layers": [-3]}, "E004"), ({"layers": [2]}, "E004"), ({"heads": [20]}, "E005")],
)
def test_error_layer_head_tiny(
    segmenter: Dict[str, Any], code: str, tiny_model_dir: Any, build_nlp: Any
) -> None:
    nlp = build_nlp(tiny_model_dir("bert"), segmenter=segmenter, initialize=False)
    with pytest.raises(ValueError, match=rf"\[{code}\]"):
        nlp.initialize()


def test_error_unsupported_architecture_raised_at_setup(
    tiny_model_dir: Any, build_nlp: Any
) -> None:
    model_dir = tiny_model_dir("bert", position_embedding_type="relative_key")
    nlp = build_nlp(model_dir, initialize=False)
    with pytest.raises(ValueError, match=r"\[E003\]") as excinfo:
        nlp.initialize()
    frames = traceback.extract_tb(excinfo.value.__traceback__)
    assert any(frame.name == "install_capture" for frame in frames)
    assert not any(f"{os.sep}torch{os.sep}" in frame.filename for frame in frames)
    assert "output_attentions" in str(excinfo.value)

    # The remedy the message gives works: the component reads `attentions` instead.
    nlp = build_nlp(
        model_dir,
        transformer_config={"output_attentions": True, "attn_implementation": "eager"},
    )
    doc = nlp("The first sentence is here. The second sentence follows it! A third?")
    output = doc._.trf_data.model_output
    assert "attentions" in output and COLSUMS not in output
    scores = numpy.array(doc._.separator_scores)
    assert scores.max() > 0 and ((scores >= 0) & (scores <= 1)).all()
