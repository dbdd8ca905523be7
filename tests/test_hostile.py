"""Hostile inputs, batch independence and round trips through every component.

Two pipelines cover the components: the default one (``attn_senter`` sentences,
``attn_segmenter`` topic segments) and the ``attention`` one (``attn_segmenter``
sentences), each with ``attn_head_pairs`` added. Every input must come out with its
text, valid offsets, sentences and segments that cover the Doc, per-token scores of the
Doc's length, and the same decisions whether the Doc is processed alone or in a batch.
(A lone surrogate such as ``"\\ud800"`` is not here: spaCy's tokenizer itself cannot
hash it, before any component runs.)
"""

from __future__ import annotations

import base64
import logging
import os
import pickle
import typing
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_attnseg import load_pipeline
from spacy_attnseg.architectures import build_attn_features, build_attn_senter_model
from spacy_attnseg.components.head_pairs import make_attn_head_pairs
from spacy_attnseg.components.segmenter import make_attn_segmenter
from spacy_attnseg.components.senter import make_attn_senter
from spacy_attnseg.errors import Errors

WORDS = [
    "the",
    "river",
    "runs",
    "past",
    "an",
    "old",
    "mill",
    "where",
    "people",
    "once",
    "ground",
    "corn",
    "for",
    "bread",
]

HOSTILE: Dict[str, str] = {
    "empty": "",
    "whitespace": "  \t  ",
    "newlines": "\n\n\n\n",
    "one token": "Hello",
    "punctuation only": "?!... ;: -- !!! ???",
    "5000-char token": "a.b." * 1250,
    "5000-char token in text": "Before it. " + "a.b." * 1250 + " This is after. And more here.",
    "hyphen run": "Start. " + "x-" * 2500 + " Then a sentence. Another one.",
    # affixes that spaCy's tokenizer strips one at a time (quadratic without the cut)
    "punctuation runs": "Stop" + "!" * 3000 + " now. " + "<>" * 1500 + " " + "'s" * 900 + " end.",
    "control characters": "Bell\x07 here.\x00 Escape\x1b[31m red. Tab\tand\x0bvertical.",
    "zero-width": "zero\u200bwidth\u200c joiner\u200d here.\ufeff Next\u2060 one."
    + "\u200b\n\u200b\ufeff \u200bMore.\u200bStill.\u200b" * 3
    + "a.\u200b" * 300,
    "emoji": "Family 👨‍👩‍👧‍👦 and flags 🇺🇸🇯🇵🏳️‍🌈. Skin tone 👍🏽! Keycap 1️⃣?",
    "right-to-left": "مرحبا بالعالم. كيف حالك؟ שלום עולם. Hello again.",
    "CJK": "我喜欢猫。 你呢？ 他不喜欢狗！ 日本語の文です。",
    "mixed scripts": "Hello 世界! Привет мир. नमस्ते दुनिया। Γειά σου κόσμε; done",
    "combining marks": "Z\u0351\u0300a\u0302\u0303l\u0304g\u0305o\u0306. Te\u0301te\u0301.",
    "line without punctuation": " ".join(WORDS[i % len(WORDS)] for i in range(2000)),
    "many blank lines": "First part.\n\n\n\n\n\nSecond part.\n \n\t\nThird.",
    "page breaks and separators": "A page ends in the middle of a\n\x0csentence. Next\x0c"
    "page\x0c\x0c\x0b\x85\u2028\u2029\x1c\x1d\x1e\x1f end.\n\x0c\n\x0c",
    "markup": "<p>Hello <b>world</b>.</p>\n<script>alert('x');</script> {\"json\": [1, 2]}",
    "markup blocks, unclosed and repeated": "<pre>\n" * 40
    + "Title\n~~~~~\n~~~\n" * 20
    + "[source]\n----\n" * 15
    + "12\n\x0c" * 40
    + "\\section{x}\n== x\n<h2>x</h2>\n<!DOCTYPE html>\n" * 20
    + "<script>\n\x0c- 3 -\n text. ```",
    "pages joined without form feeds": "".join(
        f"Report | Page {k}\n" + "the river runs past an old mill where people once ground\n" * 5
        for k in range(30)
    )
    + "Note 1\n" * 10,
    "delimited rows, unbalanced quotes": "a,b,c\n" * 30
    + '"x,"y,z\n' * 5
    + "\t\t\n1\t2\n" * 20
    + "p;q;r\r\n" * 4
    + '"' * 50,
    "literal block marks, nested and repeated": "Like this::\n\n   # code::\n\n      deeper\n" * 200
    + "x::\r\n\r\n\tend" * 100
    + "::\n\n",
    # a start after each full stop without a space: the text read once, not per start
    "sentences without spaces, code spans, URLs": "It ended.Then it began. " * 300
    + "`a.B` ``c ` d.E`` `` f ` g " * 100
    + "https://a.b/c.D [x](y)[z][] " * 100
    + "`" * 40,
    "Org-mode lines, unclosed and repeated": "#+TITLE:\n"
    + "* \n** x\n#+begin_src\n" * 30
    + "#+end_src #+END_EXAMPLE\n*** y. z\n" * 10
    + "#+BEGIN_EXAMPLE",
}


def _pipelines() -> Dict[str, Any]:
    found = {}
    for name in ("default", "attention"):
        nlp = load_pipeline(name)
        nlp.add_pipe("attn_head_pairs")
        found[name] = nlp
    return found


@pytest.fixture(scope="module")
def pipelines() -> Dict[str, Any]:
    return _pipelines()


@pytest.fixture(scope="module")
def alone(pipelines: Dict[str, Any]) -> Callable[[str, str], Doc]:
    """Each hostile input processed alone by a pipeline, once per module: the Docs that
    ``test_hostile_input`` checks are those the batch test compares with."""
    docs: Dict[Tuple[str, str], Doc] = {}

    def doc_of(pipeline: str, name: str) -> Doc:
        if (pipeline, name) not in docs:
            docs[pipeline, name] = pipelines[pipeline](HOSTILE[name])
        return docs[pipeline, name]

    return doc_of


def check_doc(doc: Doc, text: str) -> None:
    """The invariants every processed Doc keeps."""
    assert doc.text == text
    assert "".join(token.text_with_ws for token in doc) == text
    for token in doc:
        assert text[token.idx : token.idx + len(token.text)] == token.text
    n = len(doc)
    if n:
        assert doc.has_annotation("SENT_START")
        sents = list(doc.sents)
        assert sents[0].start == 0 and sents[-1].end == n
        assert all(a.end == b.start for a, b in zip(sents[:-1], sents[1:], strict=True))
    for key in ("attn_segments", "fig5_segments"):
        if key in doc.spans:
            spans = list(doc.spans[key])
            bounds = [(span.start, span.end) for span in spans]
            if n:
                assert bounds[0][0] == 0 and bounds[-1][1] == n, key
                assert all(a[1] == b[0] for a, b in zip(bounds[:-1], bounds[1:], strict=True))
            assert len(doc.spans[key].attrs.get("scores", bounds)) == len(bounds)
    for attr in ("start_scores", "separator_scores"):
        if Doc.has_extension(attr) and getattr(doc._, attr) is not None:
            scores = getattr(doc._, attr)
            assert isinstance(scores, list) and len(scores) == n
            assert all(numpy.isfinite(scores))
    pairs = doc._.head_pairs
    if len(pairs):
        assert pairs.i.min() >= 0 and pairs.j.max() < n and (pairs.i < pairs.j).all()


def decisions(doc: Doc) -> Tuple[Any, ...]:
    spans = {key: [(s.start, s.end) for s in doc.spans[key]] for key in doc.spans}
    pairs = doc._.head_pairs
    return ([t.is_sent_start for t in doc], spans, pairs.i.tolist(), pairs.j.tolist())


def scores(doc: Doc) -> List[float]:
    values: List[float] = []
    for attr in ("start_scores", "separator_scores"):
        if Doc.has_extension(attr) and getattr(doc._, attr) is not None:
            values += getattr(doc._, attr)
    return values + doc._.head_pairs.score.tolist()


def assert_same(a: Doc, b: Doc, atol: float = 1e-5) -> None:
    assert decisions(a) == decisions(b)
    numpy.testing.assert_allclose(scores(a), scores(b), atol=atol)


@pytest.mark.parametrize("pipeline", ["default", "attention"])
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_input(alone: Callable[[str, str], Doc], pipeline: str, name: str) -> None:
    check_doc(alone(pipeline, name), HOSTILE[name])


@pytest.mark.parametrize("pipeline", ["default", "attention"])
def test_the_same_decisions_alone_and_in_batches(
    pipelines: Dict[str, Any], alone: Callable[[str, str], Doc], pipeline: str
) -> None:
    """Every hostile input in one stream (empty Docs between the long ones), in
    batches of 5, decides as it does alone."""
    names: List[str] = []
    for name in HOSTILE:
        names += [name, "empty"]
    texts = [HOSTILE[name] for name in names]
    for name, doc in zip(names, pipelines[pipeline].pipe(texts, batch_size=5), strict=True):
        check_doc(doc, HOSTILE[name])
        if HOSTILE[name]:
            assert_same(doc, alone(pipeline, name))


def test_an_overlong_token_leaves_the_text_after_it_scored(pipelines: Dict[str, Any]) -> None:
    """A 5,000-character token does not take the wordpieces of the tokens after it:
    they get features, and both sentence components end a sentence after it."""
    text = HOSTILE["5000-char token in text"]
    for name, attr in (("default", "start_scores"), ("attention", "separator_scores")):
        doc = pipelines[name](text)
        tail = [t.i for t in doc if t.text == "This"][0]
        # a sentence starts after the long token (at "This" or "And")
        assert any(doc[i].is_sent_start for i in range(tail, len(doc) - 1)), name
        data = doc._.trf_data
        assert data.align[tail].lengths.sum() > 0
        assert max(getattr(doc._, attr)[tail - 1 :]) > 0


def test_an_overlong_token_is_one_sentence_with_its_words(pipelines: Dict[str, Any]) -> None:
    """A token longer than the tokenizer reads at once is tokenized in pieces; where two
    pieces meet, no sentence starts (the tokenizer once marked every piece's first
    token: 11, 17 and 4 sentences here)."""
    number = "The value is " + "7" * 2000 + ". That is big."
    key = "The key is " + "ab" * 2000 + " and that is long."
    url = "https://example.com/search?q=" + "&".join(f"k{i}={i}" for i in range(60))
    link = f"See {url} for the details."
    for name, nlp in pipelines.items():
        assert [s.text for s in nlp(number).sents] == [number[:-13], "That is big."], name
        assert [s.text for s in nlp(key).sents] == [key], name
        assert [s.text for s in nlp(link + " Then come back.").sents] == [
            link,
            "Then come back.",
        ], name


def test_a_long_run_without_white_space_holds_no_sentence_start(
    pipelines: Dict[str, Any],
) -> None:
    """A base64 blob on one line and Chinese text without spaces, each a run of more than
    250 characters without white space: no sentence starts inside it, and the text
    around the blob is split as without it. Before ``sentences.runs_hold_no_start``,
    the default pipeline cut the blob into 12 sentences (one more inside it in the
    letter) and the Chinese text into 2, where one of its 250-character pieces began."""
    blob = base64.b64encode(bytes(range(256)) * 12).decode()
    chinese = "我喜欢猫。你呢？他不喜欢狗！" * 30
    letter = f"The key follows. {blob} Keep it safe. Do not share it."
    inside = range(letter.index(blob) + 1, letter.index(blob) + len(blob))
    for name, nlp in pipelines.items():
        blob_doc, chinese_doc, letter_doc = (nlp(text) for text in (blob, chinese, letter))
        assert [s.text for s in blob_doc.sents] == [blob], name
        assert [s.text for s in chinese_doc.sents] == [chinese], name
        assert not any(s.start_char in inside for s in letter_doc.sents), name
        if name == "default":
            sentences = [s.text for s in letter_doc.sents]
            assert sentences == ["The key follows.", blob, "Keep it safe.", "Do not share it."]
            assert len(blob_doc.spans["attn_segments"]) == 1


@contextmanager
def too_long_warnings(tokenizer: Any) -> Iterator[List[str]]:
    """The Hugging Face warnings that a sequence is longer than the model reads, given
    inside the block: the tokenizer's record that it gave one (it warns once) is
    cleared first."""
    from transformers.utils import logging as hf_logging

    from spacy_attnseg.windows import TOO_LONG_WARNING

    messages: List[str] = []

    class Recorder(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "sequence length is longer" in record.getMessage():
                messages.append(record.getMessage())

    tokenizer.deprecation_warnings.pop(TOO_LONG_WARNING, None)
    handler = Recorder()
    hf_logging.get_logger().addHandler(handler)
    try:
        yield messages
    finally:
        hf_logging.get_logger().removeHandler(handler)


def test_an_overlong_token_does_not_warn_of_indexing_errors(
    pipelines: Dict[str, Any],
) -> None:
    """spacy-transformers cuts a window of one overlong token to the model's length, so
    the tokenizer's warning that the model will fail on it is not given."""
    from spacy_attnseg.windows import TOO_LONG_WARNING

    nlp = pipelines["default"]
    tokenizer = nlp.get_pipe("transformer").model.tokenizer
    with too_long_warnings(tokenizer) as messages:
        doc = nlp(HOSTILE["5000-char token in text"])
        # the direct call warns, so the recorder would see spacy-transformers' call
        tokenizer.deprecation_warnings.pop(TOO_LONG_WARNING, None)
        tokenizer(["a.b." * 1250])
    assert doc.text == HOSTILE["5000-char token in text"]
    assert len(messages) == 1, messages


def test_counting_a_long_chunk_does_not_warn_of_indexing_errors(
    pipelines: Dict[str, Any],
) -> None:
    """``chunks`` counts each chunk's wordpieces with the model's tokenizer; a chunk of
    more than the model reads (no ``max_tokens``, one topic) is counted, not passed to
    the model, so the tokenizer's warning that the model will fail is not given."""
    from spacy_attnseg import chunks

    nlp = pipelines["default"]
    tokenizer = nlp.get_pipe("transformer").model.tokenizer
    text = "Hello world. " * 300
    with too_long_warnings(tokenizer) as messages:
        records = list(chunks(nlp, [text]))
    assert "".join(r["text"] for r in records) == text
    assert max(r["n_tokens"] for r in records) > tokenizer.model_max_length
    assert not messages, messages


def test_unicode_terminals_end_sentences(pipelines: Dict[str, Any]) -> None:
    for name, nlp in pipelines.items():
        for text, want in (
            (HOSTILE["CJK"], ["我喜欢猫。", "你呢？", "他不喜欢狗！", "日本語の文です。"]),
            ("هل أنت بخير؟ نعم", ["هل أنت بخير؟", "نعم"]),
        ):
            assert [s.text for s in nlp(text).sents] == want, name


# -- round trips -------------------------------------------------------------------


ROUND_TRIP_TEXTS = [
    "The first sentence is here. And a second one follows it! Does a third?",
    "",
    HOSTILE["CJK"],
    HOSTILE["emoji"],
    "Paragraph one ends here.\n\nParagraph two starts. It has two sentences.",
]


def _round_trips(nlp: Any, docs: List[Doc]) -> Iterable[Tuple[str, List[Doc]]]:
    bin_ = DocBin(store_user_data=True, docs=docs)
    yield "DocBin", list(DocBin().from_bytes(bin_.to_bytes()).get_docs(nlp.vocab))
    yield "pickle", [pickle.loads(pickle.dumps(doc)) for doc in docs]
    yield "to_bytes", [Doc(nlp.vocab).from_bytes(doc.to_bytes()) for doc in docs]


@pytest.mark.parametrize("pipeline", ["default", "attention"])
def test_serialized_docs_keep_every_annotation(pipelines: Dict[str, Any], pipeline: str) -> None:
    nlp = pipelines[pipeline]
    docs = list(nlp.pipe(ROUND_TRIP_TEXTS))
    for how, copies in _round_trips(nlp, docs):
        for doc, copy in zip(docs, copies, strict=True):
            assert copy.text == doc.text, how
            assert decisions(copy) == decisions(doc), how
            assert scores(copy) == scores(doc), how
            for key in doc.spans:
                assert copy.spans[key].attrs == doc.spans[key].attrs, how
            for attr in ("start_scores", "separator_scores"):
                if getattr(doc._, attr, None) is not None:
                    assert isinstance(getattr(copy._, attr), list), how


@pytest.mark.parametrize("pipeline", ["default", "attention"])
def test_merged_docs_keep_sentences_and_segments(pipelines: Dict[str, Any], pipeline: str) -> None:
    """``Doc.from_docs`` over processed Docs (pieces of one text through ``nlp.pipe``)
    joins their sentences and segments at their offsets. The per-token scores belong
    to each Doc, so spaCy leaves them out of the merged Doc with its one-line warning
    W101, as it does spacy-transformers' ``trf_data``: never with W102, which prints
    the whole list of scores."""
    import warnings

    nlp = pipelines[pipeline]
    docs = [doc for doc in nlp.pipe(ROUND_TRIP_TEXTS) if len(doc)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        merged = Doc.from_docs(docs)
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "W102" in m]
    skipped = {m.split("'")[1] for m in messages if "W101" in m}
    scored = {a for a in ("start_scores", "separator_scores") if getattr(docs[0]._, a) is not None}
    assert scored and scored <= skipped
    assert all(len(m) < 200 for m in messages)
    assert merged._.start_scores is None and merged._.separator_scores is None
    offsets = numpy.cumsum([0] + [len(doc) for doc in docs])
    starts = [
        offset + s.start for doc, offset in zip(docs, offsets[:-1], strict=True) for s in doc.sents
    ]
    assert [s.start for s in merged.sents] == starts
    segments = [
        (offset + s.start, offset + s.end)
        for doc, offset in zip(docs, offsets[:-1], strict=True)
        for s in doc.spans["attn_segments"]
    ]
    assert [(s.start, s.end) for s in merged.spans["attn_segments"]] == segments


@pytest.mark.parametrize("pipeline", ["default", "attention"])
def test_a_span_as_a_doc_carries_no_scores_of_other_tokens(
    pipelines: Dict[str, Any], pipeline: str
) -> None:
    """``Span.as_doc(copy_user_data=True)`` copies what a Doc holds per character span,
    not per-Doc values: the new Doc's per-token scores are None, never the whole
    Doc's list read from its first token on."""
    doc = pipelines[pipeline](ROUND_TRIP_TEXTS[0])
    assert doc._.start_scores is not None or doc._.separator_scores is not None
    part = doc[6:].as_doc(copy_user_data=True)
    assert part.text == doc[6:].text
    assert part._.start_scores is None and part._.separator_scores is None
    assert part[0]._.start_score is None and part[0]._.separator_score is None


@pytest.mark.parametrize("pipeline", ["default", "attention"])
def test_saved_pipeline_and_processes_decide_the_same(
    pipelines: Dict[str, Any], pipeline: str, tmp_path: Path
) -> None:
    """``to_disk`` + ``spacy.load`` and ``nlp.pipe(n_process=2)`` (whatever the parent's
    torch threads) give the same sentences, segments and pairs; scores within 1e-5;
    settings come back exactly as saved."""
    import torch

    nlp = pipelines[pipeline]
    expected = list(nlp.pipe(ROUND_TRIP_TEXTS))
    nlp.to_disk(tmp_path / "saved")
    loaded = spacy.load(tmp_path / "saved")
    for name in nlp.pipe_names:
        assert loaded.get_pipe_config(name) == nlp.get_pipe_config(name)
        for key, value in getattr(nlp.get_pipe(name), "cfg", {}).items():
            assert loaded.get_pipe(name).cfg[key] == value, (name, key)
    for doc, want in zip(loaded.pipe(ROUND_TRIP_TEXTS), expected, strict=True):
        assert_same(doc, want)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        forked = list(loaded.pipe(ROUND_TRIP_TEXTS, n_process=2, batch_size=2))
    finally:
        torch.set_num_threads(threads)
    for doc, want in zip(forked, expected, strict=True):
        check_doc(doc, want.text)
        assert_same(doc, want)


# -- faults --------------------------------------------------------------------------


def test_merge_threshold_must_be_a_non_negative_number() -> None:
    nlp = load_pipeline("attention")
    for value in (-1, -0.01):
        with pytest.raises(ValueError, match=r"\[E021\]"):
            nlp.add_pipe(
                "attn_head_pairs", name=f"pairs_{value}", config={"merge_threshold": value}
            )


def test_device_out_of_memory_is_a_coded_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """An allocation failure in the pass says what to do (E023) and no Doc comes out
    half annotated."""
    import torch

    nlp = load_pipeline()

    def out_of_memory(*args: Any, **kwargs: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    trf = nlp.get_pipe("transformer")
    monkeypatch.setattr(trf.model._func, "forward", out_of_memory)
    with pytest.raises(MemoryError, match=r"\[E023\].*batch_size"):
        nlp("A sentence. Another one.")
    with pytest.raises(MemoryError, match=r"\[E023\]"):
        list(nlp.pipe(["One.", "Two."]))
    monkeypatch.undo()
    doc = nlp("A sentence. Another one.")
    check_doc(doc, "A sentence. Another one.")


def test_corrupt_or_missing_pipeline_is_a_coded_error(tmp_path: Path) -> None:
    nlp = load_pipeline()
    nlp.to_disk(tmp_path / "saved")
    model = tmp_path / "saved" / "attn_senter" / "model"
    model.write_bytes(model.read_bytes()[:1000])
    with pytest.raises(ValueError, match=r"\[E022\].*nlp.to_disk"):
        load_pipeline(tmp_path / "saved")
    (tmp_path / "bad.cfg").write_text("not a config", encoding="utf8")
    with pytest.raises(ValueError, match=r"\[E022\]"):
        load_pipeline(tmp_path / "bad.cfg")
    with pytest.raises(ValueError, match=r"\[E014\]"):
        load_pipeline(tmp_path / "missing")
    for bad in (123, ["default"]):  # (a bare TypeError of pathlib's, before)
        with pytest.raises(TypeError, match=r"^\[E014\] Cannot read the model '(123|\['default)"):
            load_pipeline(bad)  # type: ignore[arg-type]
    assert Errors.E022.startswith("[E022]")


@pytest.mark.parametrize(
    "key,value,problem",
    [
        ("components.attn_segmenter.pice_tokens", 3, "unexpected argument: 'pice_tokens'"),
        ("components.attn_segmentr.piece_tokens", 3, "not a section value"),
        ("components.attn_segmenter.piece_tokens", "many", "'many' is not <class 'int'>"),
    ],
)
def test_a_setting_that_does_not_fit_is_named(
    tmp_path: Path, key: str, value: Any, problem: str
) -> None:
    """An override that names no setting, or gives one a value of the wrong type, is
    the coded error E029 naming the override and the problem (not the config's dump),
    for a shipped pipeline and a saved one; a wrong value that the component checks
    keeps its own code."""
    saved = tmp_path / "saved"
    load_pipeline("attention").to_disk(saved)
    for model in ("attention", saved):
        with pytest.raises(ValueError) as raised:
            load_pipeline(model, overrides={key: value})
        message = str(raised.value)
        assert message.startswith("[E029]") and key in message and problem in message
        assert "'nlp': <spacy" not in message and len(message) < 600
    with pytest.raises(ValueError, match=r"^\[E015\] Invalid `piece_tokens` 0"):
        load_pipeline("attention", overrides={"components.attn_segmenter.piece_tokens": 0})


# the type hints of a setting that takes numbers, and the text that spaCy's config
# validation lets through for each (it reads "3" as an int, then passes on the text)
NUMBER_HINTS = {
    int: "3",
    float: "0.5",
    Optional[int]: "3",
    Optional[float]: "0.5",
    List[int]: ["1", "2"],
    Optional[List[int]]: ["1", "2"],
    Sequence[int]: ["1", "2"],
    Optional[Sequence[int]]: ["1", "2"],
}


def number_settings(function: Callable[..., Any]) -> List[Tuple[str, Any]]:
    """Each setting of ``function`` whose type hint is in ``NUMBER_HINTS``, with its
    text."""
    hints = typing.get_type_hints(function)
    return [(key, NUMBER_HINTS[hint]) for key, hint in hints.items() if hint in NUMBER_HINTS]


FACTORIES = {
    "attn_segmenter": make_attn_segmenter,
    "attn_head_pairs": make_attn_head_pairs,
    "attn_senter": make_attn_senter,
}
ARCHITECTURES = {
    "spacy-attnseg.AttnFeatures.v1": build_attn_features,
    "spacy-attnseg.AttnSenterModel.v1": build_attn_senter_model,
}


#: every number setting of the architectures, with the text of one
ARCHITECTURE_NUMBERS = [
    (name, key, text)
    for name, function in ARCHITECTURES.items()
    for key, text in number_settings(function)
]


def test_every_number_setting_is_found() -> None:
    """The settings below are all the factories' and architectures' numbers: a hint the
    table lacks would leave a setting out of the test after it."""
    found = {
        name: [key for key, _ in number_settings(function)]
        for name, function in {**FACTORIES, **ARCHITECTURES}.items()
    }
    assert {"min_sents", "max_tokens", "segment_penalty", "layers"} <= set(found["attn_segmenter"])
    assert {"threshold", "merge_threshold", "heads"} <= set(found["attn_head_pairs"])
    assert {"threshold", "threshold_no_punct"} <= set(found["attn_senter"])
    assert {"width", "dropout", "nO"} <= set(found["spacy-attnseg.AttnSenterModel.v1"])
    assert {"context_layers", "colsum_layers"} <= set(found["spacy-attnseg.AttnFeatures.v1"])


@pytest.mark.parametrize(
    "factory,key,text",
    [
        (factory, key, text)
        for factory, function in FACTORIES.items()
        for key, text in number_settings(function)
    ],
)
def test_a_number_given_as_text_is_named(factory: str, key: str, text: Any) -> None:
    """A setting that takes numbers, given the text of one ("3", ["1", "2"]), passes
    spaCy's config validation with the text unchanged, which then stopped in a
    comparison with a bare TypeError (or, for a setting read later, was kept): E145
    names the setting and the value to give. The same value as a number gets past it
    (to E001: the pipeline has no transformer)."""
    nlp = spacy.blank("en")
    example = "[1, 2]" if isinstance(text, list) else text
    with pytest.raises(ValueError) as raised:
        nlp.add_pipe(factory, config={key: text})
    message = str(raised.value)
    assert message.startswith(f"[E145] The setting `{key}` of '{factory}' is given as text")
    assert f"`{key} = {example}`" in message
    number = [1, 2] if isinstance(text, list) else {"3": 3, "0.5": 0.5}[text]
    with pytest.raises(ValueError, match=r"^\[E001\]"):
        nlp.add_pipe(factory, config={key: number})


@pytest.mark.parametrize("architecture,key,text", ARCHITECTURE_NUMBERS)
def test_an_architecture_number_given_as_text_is_named(
    architecture: str, key: str, text: Any
) -> None:
    """The same for the registered architectures of attn_senter's model, through a
    shipped pipeline's overrides, where the text had stopped deep in Thinc (E022)."""
    path = "components.attn_senter.model"
    if architecture == "spacy-attnseg.AttnFeatures.v1":
        path += ".features"
    with pytest.raises(ValueError) as raised:
        load_pipeline("default", overrides={f"{path}.{key}": text})
    assert str(raised.value).startswith(
        f"[E145] The setting `{key}` of {architecture} is given as text"
    )


@pytest.mark.parametrize("architecture,key,text", ARCHITECTURE_NUMBERS)
def test_an_architecture_number_given_as_a_bool_is_named(
    architecture: str, key: str, text: Any
) -> None:
    """A direct call of an architecture (which spaCy's config validation does not check)
    with a bool where it takes numbers stops with E148: ``members=True`` built one
    member and ``depth=False`` no window layer, without a word. The number itself builds."""

    def build(value: Any) -> Any:
        if architecture == "spacy-attnseg.AttnFeatures.v1":
            return build_attn_features(**{key: value})
        return build_attn_senter_model(build_attn_features(), **{key: value})

    for value in [[1, True]] if isinstance(text, list) else [True, False]:
        with pytest.raises(ValueError) as raised:
            build(value)
        assert str(raised.value).startswith(
            f"[E148] The setting `{key}` of {architecture} is given as a bool, {value!r}"
        )
    assert build([1, 2] if isinstance(text, list) else {"3": 3, "0.5": 0.5}[text]) is not None


@pytest.mark.skipif(
    not os.environ.get("ATTNSEG_LONG"),
    reason="a 100,000-token document takes ~10 minutes on 2 cores: set ATTNSEG_LONG=1",
)
def test_a_100000_token_document(pipelines: Dict[str, Any]) -> None:
    text = " ".join(
        f"{' '.join(WORDS[(i + k) % len(WORDS)] for k in range(11))}." for i in range(8400)
    )
    for nlp in pipelines.values():
        doc = nlp(text)
        assert len(doc) >= 100_000
        check_doc(doc, text)
