"""Wikipedia windows of 128 wordpieces, and the per-window arrays the statistics take.

The corpus analyses of Halevi et al. (2026) run on Wikipedia text cut into inputs of 128
wordpieces ([CLS], 126 wordpieces of text, [SEP]). Here the text is WikiText-2 (raw),
prepared as follows:

* **Paragraphs come from** ``paper.wikitext``: headings are left out (they have no
  sentence-final punctuation and would run into the next sentence) and WikiText's
  escapes undone; its spaces around punctuation are kept (the model's tokenizer splits
  punctuation anyway). A window never spans two articles; within an article it runs
  across sections and paragraphs.
* **Windows are cut at word boundaries** (whitespace-separated WikiText words), with the
  model's own tokenizer: words are added while the window has at most
  ``seq_len - n_special`` wordpieces (126 for BERT); a word never straddles two windows.
  Windows run across paragraphs within an article; the last window of an article is
  shorter (padded in the analyses). A word with more wordpieces than a window holds is
  dropped and counted (none in WikiText-2).
* **Sentences** come from the punctuated text: a sentence ends after a word made only of
  ``.``, ``!`` or ``?`` (WikiText writes sentence-final punctuation as its own word, so
  abbreviations such as ``U.S.`` never end one), together with the closing brackets and
  the closing double quote (by quote parity within the paragraph) that follow it, unless
  the next word starts with a lower-case letter (`` " Why ? " she asked``); a paragraph
  end also ends a sentence. A window that starts inside a sentence gives that
  partial sentence its own id. Wordpieces take the sentence of the spaCy token they
  belong to (the transformer's alignment); [CLS], [SEP] and padding get -1.

Each window is one :class:`~spacy.tokens.Doc` whose tokens are the window's words and
whose ``is_sent_start`` marks the sentences; the transformer's span getter is overridden
with ``spacy-transformers.doc_spans.v1`` so that one Doc is exactly one model input.
:func:`iter_window_arrays` streams Docs through the transformer in batches and yields
one :class:`WindowArrays` per window (attention maps, head outputs, ids, categories,
sentence ids, padded to ``seq_len``); nothing of a batch is kept once it is consumed.
"""

import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from spacy_attnseg.capture import (
    COLSUM_HEADS,
    COLSUMS,
    CONTEXT,
    CONTEXT_LAYERS,
    AttentionCapture,
    CaptureRequest,
)
from spacy_attnseg.families import n_layers_heads
from spacy_attnseg.windows import wordpiece_tokens

from .stats import CLS, PAD, PUNCT, SEP, WORD
from .wikitext import read_articles

#: The paper's input length: [CLS], 126 wordpieces, [SEP].
SEQ_LEN = 128
#: Characters of a word that ends a sentence (the word must consist of these only).
SENTENCE_FINAL = frozenset(".!?")
#: Words after a sentence-final word that still belong to the sentence it ends.
CLOSING = frozenset({")", "]", "}", "'", "''"})
#: The consumer name of the capture requests made here.
CONSUMER = "attnseg_analysis"


# -- text -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of prose: its article index and its words."""

    article: int
    words: Tuple[str, ...]


def read_wikitext(lines: Iterable[str]) -> Iterator[Paragraph]:
    """Paragraphs of a WikiText file's lines (``paper.wikitext``: headings left out,
    escapes undone), numbered by article from 0."""
    for article, found in enumerate(read_articles(list(lines))):
        for section in found.sections:
            for paragraph in section:
                words = tuple(paragraph.split())
                if words:
                    yield Paragraph(article, words)


def sentence_starts(words: Sequence[str]) -> List[bool]:
    """Whether each word of a paragraph starts a sentence (the module doc's rule)."""
    starts = [False] * len(words)
    if not words:
        return starts
    starts[0] = True
    quote_open = False
    ended = False
    for index, word in enumerate(words):
        if ended:
            closes_quote = word == '"' and quote_open
            if word in CLOSING or closes_quote:
                quote_open = quote_open and not closes_quote
                continue
            starts[index] = not word[:1].islower()
            ended = False
        if word == '"':
            quote_open = not quote_open
        if set(word) <= SENTENCE_FINAL:
            ended = True
    return starts


# -- windows ----------------------------------------------------------------------------------


@dataclass
class Window:
    """One model input: its article, words, sentence starts and wordpiece count (without
    the special tokens)."""

    article: int
    words: List[str] = field(default_factory=list)
    sent_starts: List[bool] = field(default_factory=list)
    n_wordpieces: int = 0


@dataclass
class WindowingStats:
    """What :func:`cut_windows` saw: paragraphs, words, wordpieces and dropped words."""

    n_paragraphs: int = 0
    n_words: int = 0
    n_wordpieces: int = 0
    dropped_words: int = 0


def n_special_tokens(tokenizer: Any) -> int:
    """How many special tokens the tokenizer adds around one text ([CLS] and [SEP])."""
    return int(tokenizer.num_special_tokens_to_add(pair=False))


def wordpiece_counts(tokenizer: Any, words: Sequence[str]) -> np.ndarray:
    """Wordpieces of each word when the words are tokenized as one space-joined text.

    A fast tokenizer's offsets give each wordpiece to the word its first character lies
    in; a slow tokenizer tokenizes every word on its own.
    """
    if not words:
        return np.zeros(0, dtype=np.int64)
    if not getattr(tokenizer, "is_fast", False):
        return np.array([len(tokenizer.tokenize(word)) for word in words], dtype=np.int64)
    text = " ".join(words)
    lengths = np.array([len(word) + 1 for word in words], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = np.asarray(encoding["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    owner = np.searchsorted(starts, offsets[:, 0], side="right") - 1
    return np.bincount(np.clip(owner, 0, len(words) - 1), minlength=len(words))


def cut_windows(
    paragraphs: Iterable[Paragraph],
    tokenizer: Any,
    *,
    seq_len: int = SEQ_LEN,
    stats: Optional[WindowingStats] = None,
) -> Iterator[Window]:
    """Pack the paragraphs' words into windows of at most ``seq_len`` wordpieces
    including the special tokens, cut at word boundaries and at article starts."""
    budget = seq_len - n_special_tokens(tokenizer)
    if budget < 1:
        raise ValueError(f"seq_len {seq_len} leaves no room for text")
    stats = stats if stats is not None else WindowingStats()
    current: Optional[Window] = None
    for paragraph in paragraphs:
        if current is not None and current.article != paragraph.article and current.words:
            yield current
            current = None
        if current is None:
            current = Window(paragraph.article)
        counts = wordpiece_counts(tokenizer, paragraph.words)
        starts = sentence_starts(paragraph.words)
        stats.n_paragraphs += 1
        stats.n_words += len(paragraph.words)
        stats.n_wordpieces += int(counts.sum())
        for word, start, count in zip(paragraph.words, starts, counts.tolist(), strict=True):
            if count > budget:
                stats.dropped_words += 1
                continue
            if current.n_wordpieces + count > budget and current.words:
                yield current
                current = Window(paragraph.article)
            current.words.append(word)
            current.sent_starts.append(start)
            current.n_wordpieces += count
    if current is not None and current.words:
        yield current


def window_doc(vocab: Vocab, window: Window) -> Doc:
    """The window as a Doc: one token per word, single spaces, sentence starts set (the
    first token always starts a sentence in spaCy)."""
    n_words = len(window.words)
    spaces = [True] * n_words
    if spaces:
        spaces[-1] = False
    starts: List[Optional[Union[bool, int]]] = list(window.sent_starts)
    if starts:
        starts[0] = True
    doc = Doc(vocab, words=window.words, spaces=spaces, sent_starts=starts)
    doc.user_data["article"] = window.article
    doc.user_data["n_wordpieces"] = window.n_wordpieces
    return doc


def build_windows(
    path: Union[str, Path], tokenizer: Any, vocab: Vocab, *, seq_len: int = SEQ_LEN
) -> Tuple[List[Doc], WindowingStats]:
    """All windows of a WikiText file as Docs, and the windowing statistics."""
    stats = WindowingStats()
    with Path(path).open(encoding="utf8") as handle:
        windows = cut_windows(read_wikitext(handle), tokenizer, seq_len=seq_len, stats=stats)
        docs = [window_doc(vocab, window) for window in windows]
    return docs, stats


def save_windows(docs: Iterable[Doc], path: Union[str, Path]) -> Path:
    """Write window Docs (words, spaces, sentence starts, article) to a ``.spacy`` file."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc_bin = DocBin(attrs=["ORTH", "SENT_START"], store_user_data=True)
    for doc in docs:
        doc_bin.add(doc)
    doc_bin.to_disk(out)
    return out


def select_windows(total: int, n_windows: int) -> np.ndarray:
    """Indices of ``n_windows`` windows spread evenly over ``total`` (all when
    ``n_windows`` is 0 or at least ``total``)."""
    if n_windows <= 0 or n_windows >= total:
        return np.arange(total)
    return np.unique(np.linspace(0, total - 1, n_windows).round().astype(np.int64))


def load_windows(path: Union[str, Path], vocab: Vocab, n_windows: int = 0) -> List[Doc]:
    """The window Docs of a ``.spacy`` file, ``n_windows`` of them spread evenly over the
    file (0: all)."""
    docs = list(DocBin().from_disk(Path(path)).get_docs(vocab))
    return [docs[int(index)] for index in select_windows(len(docs), n_windows)]


def window_summary(docs: Sequence[Doc], tokenizer: Any, stats: WindowingStats) -> Dict[str, Any]:
    """JSON-able description of the windows: counts, wordpieces and sentences per window."""
    special = n_special_tokens(tokenizer)
    sentences = np.array([sum(1 for _ in doc.sents) for doc in docs], dtype=np.int64)
    pieces = np.array([int(doc.user_data.get("n_wordpieces", 0)) for doc in docs], dtype=np.int64)
    articles = {doc.user_data.get("article") for doc in docs}
    budget = SEQ_LEN - special
    empty = np.zeros(1, dtype=np.int64)
    return {
        "n_windows": len(docs),
        "n_articles": len(articles),
        "n_paragraphs": stats.n_paragraphs,
        "n_words": stats.n_words,
        "n_wordpieces": stats.n_wordpieces,
        "dropped_words": stats.dropped_words,
        "special_tokens": special,
        "mean_wordpieces_per_window": float((pieces if pieces.size else empty).mean()),
        "full_windows": int((pieces >= budget - 2).sum()),
        "mean_sentences_per_window": float((sentences if sentences.size else empty).mean()),
        "median_sentences_per_window": float(np.median(sentences if sentences.size else empty)),
        "sentences_per_window_histogram": np.bincount(sentences).tolist() if sentences.size else [],
    }


# -- the model --------------------------------------------------------------------------------


def transformer_component(config: Any) -> str:
    """The name of the first spacy-transformers ``transformer`` component of a config."""
    components = config.get("components", {})
    for name in config.get("nlp", {}).get("pipeline", []):
        if components.get(name, {}).get("factory") == "transformer":
            return str(name)
    raise ValueError("the pipeline has no spacy-transformers `transformer` component")


def config_model_name(config: Any, component: str) -> str:
    """A readable name of the transformer a config loads: the package of the embedded
    model, else the last part of the model's name or path."""
    value = config["components"][component]["model"].get("name", "")
    if isinstance(value, Mapping):
        return str(value.get("package") or value.get("@misc") or "?")
    text = str(value)
    return Path(text).name or text


def analysis_overrides(config: Any, *, attentions: bool) -> Tuple[str, Dict[str, Any]]:
    """Config overrides for the analyses: the transformer component alone in the
    pipeline, one span per Doc (``doc_spans.v1``), and with ``attentions`` the eager
    attention maps of every layer in the model output."""
    name = transformer_component(config)
    model = config["components"][name]["model"]
    prefix = f"components.{name}.model"
    overrides: Dict[str, Any] = {
        "nlp.pipeline": [name],
        f"{prefix}.get_spans": {"@span_getters": "spacy-transformers.doc_spans.v1"},
    }
    if attentions:
        transformer_config = dict(model.get("transformer_config", {}) or {})
        transformer_config.update({"output_attentions": True, "attn_implementation": "eager"})
        overrides[f"{prefix}.transformer_config"] = transformer_config
    return name, overrides


@dataclass
class AnalysisModel:
    """A loaded transformer component set up for the analyses.

    ``punct_ids``: per vocabulary id, whether the wordpiece is punctuation (all its
    characters, prefixes such as ``##`` removed, are Unicode punctuation or symbols).
    """

    nlp: Language
    component: str
    model_name: str
    tokenizer: Any
    n_layers: int
    n_heads: int
    hidden: int
    attentions: bool
    context: bool
    colsum_layers: Tuple[int, ...]
    punct_ids: np.ndarray
    special_ids: Dict[str, Any]

    @property
    def pipe(self) -> Any:
        return self.nlp.get_pipe(self.component)


def _hf_model(pipe: Any) -> Any:
    return pipe.model.transformer


def punctuation_ids(tokenizer: Any) -> np.ndarray:
    """Bool per vocabulary id: the wordpiece is punctuation or symbols only."""
    size = len(tokenizer)
    out = np.zeros(size, dtype=bool)
    for index, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(size)))):
        text = str(piece or "")
        for prefix in ("##", "\u2581", "\u0120"):
            if text.startswith(prefix):
                text = text[len(prefix) :]
                break
        out[index] = bool(text) and all(unicodedata.category(ch)[0] in "PS" for ch in text)
    return out


def load_analysis_model(
    model: Union[str, Path],
    *,
    attentions: bool,
    context: bool,
    colsum_layers: Sequence[int] = (),
    gpu_id: int = -1,
) -> AnalysisModel:
    """Load a pipeline directory or config with only its transformer, one span per Doc,
    eager attention maps when ``attentions``, every layer's head outputs when
    ``context``, and the hooked column sums of all heads of ``colsum_layers``."""
    import spacy
    from spacy.util import load_config

    from spacy_attnseg.loading import load_pipeline

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    path = Path(model)
    is_dir = path.is_dir()
    config = load_config(path / "config.cfg" if is_dir else path, interpolate=False)
    name, overrides = analysis_overrides(config, attentions=attentions)
    if is_dir:
        exclude = [p for p in config["nlp"]["pipeline"] if p != name]
        overrides.pop("nlp.pipeline")
        nlp = spacy.load(path, exclude=exclude, config=overrides)
    else:
        nlp = load_pipeline(path, overrides=overrides)
    pipe: Any = nlp.get_pipe(name)
    hf_model = _hf_model(pipe)
    hf_model.eval()
    if attentions and not getattr(hf_model.config, "output_attentions", False):
        # A saved pipeline rebuilds the model from its stored config, without the
        # override; SDPA attention layers fall back to eager when asked for the maps.
        hf_model.config._attn_implementation = "eager"
        hf_model.config.output_attentions = True
    n_layers, n_heads = n_layers_heads(hf_model)
    tokenizer = pipe.model.tokenizer
    colsums = tuple(int(layer) % n_layers for layer in colsum_layers)
    if context or colsums:
        AttentionCapture.attach(pipe.model).request(
            CONSUMER,
            CaptureRequest(
                colsum_layers=colsums,
                colsum_heads=(),
                context_layers=None if context else (),
            ),
        )
    specials = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    cls_id = tokenizer.cls_token_id
    sep_id = tokenizer.sep_token_id
    return AnalysisModel(
        nlp=nlp,
        component=name,
        model_name=config_model_name(config, name),
        tokenizer=tokenizer,
        n_layers=n_layers,
        n_heads=n_heads,
        hidden=int(hf_model.config.hidden_size),
        attentions=attentions,
        context=context,
        colsum_layers=colsums,
        punct_ids=punctuation_ids(tokenizer),
        special_ids={"cls": cls_id, "sep": sep_id, "other": sorted(specials - {cls_id, sep_id})},
    )


# -- per-window arrays ------------------------------------------------------------------------


@dataclass
class WindowArrays:
    """One window's inputs to the statistics (see :mod:`.stats`), padded to ``seq_len``.

    ``attn`` ``(n_layers, n_heads, L, L)`` float32 or None; ``context``
    ``(n_layers, L, hidden)`` float32 or None; ``colsums`` ``(n_colsum_layers, n_heads,
    L)`` float32 or None (column sums over non-special queries, special columns zeroed);
    ``valid``, ``token_ids``, ``categories``, ``sentence_ids`` ``(L,)``; ``pieces``: the
    wordpiece strings (padding ``""``); ``length``: real wordpieces with specials.
    """

    index: int
    attn: Optional[np.ndarray]
    context: Optional[np.ndarray]
    colsums: Optional[np.ndarray]
    valid: np.ndarray
    token_ids: np.ndarray
    categories: np.ndarray
    sentence_ids: np.ndarray
    pieces: List[str]
    length: int


def to_numpy(array: Any) -> np.ndarray:
    """A NumPy copy of a NumPy, CuPy or torch array."""
    if hasattr(array, "detach"):
        return array.detach().cpu().numpy()
    if hasattr(array, "get"):
        return array.get()
    return np.asarray(array)


def wordpiece_categories(
    token_ids: np.ndarray,
    valid: np.ndarray,
    punct_ids: np.ndarray,
    special_ids: Dict[str, Any],
) -> np.ndarray:
    """Category of each wordpiece: [CLS], [SEP] (also other special tokens such as
    ``</s>``), punctuation, word or padding."""
    ids = np.asarray(token_ids, dtype=np.int64)
    in_vocab = (ids >= 0) & (ids < punct_ids.size)
    cats = np.where(in_vocab & punct_ids[np.clip(ids, 0, punct_ids.size - 1)], PUNCT, WORD)
    cats[np.isin(ids, special_ids.get("other", []))] = SEP
    if special_ids.get("sep") is not None:
        cats[ids == special_ids["sep"]] = SEP
    if special_ids.get("cls") is not None:
        cats[ids == special_ids["cls"]] = CLS
    cats[~np.asarray(valid, dtype=bool)] = PAD
    return cats.astype(np.int64)


def token_sentence_ids(doc: Doc) -> np.ndarray:
    """Sentence index of each token of a Doc (its first token starts sentence 0)."""
    if not len(doc):
        return np.zeros(0, dtype=np.int64)
    starts = np.array([bool(token.is_sent_start) for token in doc], dtype=bool)
    starts[0] = True
    return np.cumsum(starts) - 1


def wordpiece_sentence_ids(doc: Doc, align: Any, length: int) -> np.ndarray:
    """Sentence index of each wordpiece of a one-window Doc, -1 for wordpieces without a
    token ([CLS], [SEP], padding)."""
    tokens = wordpiece_tokens(align, 1, length)[0]
    sents = token_sentence_ids(doc)
    out = np.full(length, -1, dtype=np.int64)
    has = tokens >= 0
    out[has] = sents[tokens[has]]
    return out


def _pad(array: np.ndarray, axes: Sequence[int], seq_len: int) -> np.ndarray:
    width = [(0, 0)] * array.ndim
    for axis in axes:
        width[axis] = (0, seq_len - array.shape[axis])
    return np.pad(array, width) if any(w[1] for w in width) else array


def doc_arrays(
    doc: Doc, model: AnalysisModel, *, index: int = 0, seq_len: int = SEQ_LEN
) -> WindowArrays:
    """The arrays of one Doc processed by the model's transformer (one span per Doc)."""
    trf_data = doc._.trf_data
    wordpieces = trf_data.wordpieces
    ids = to_numpy(wordpieces.input_ids)
    if ids.shape[0] != 1:
        raise ValueError(f"expected one window per Doc, got {ids.shape[0]}: use doc_spans.v1")
    ids = ids[0].astype(np.int64)
    mask = to_numpy(wordpieces.attention_mask)[0] > 0
    width = ids.shape[0]
    length = int(mask.sum())
    if length > seq_len:
        raise ValueError(f"window {index} has {length} wordpieces, more than {seq_len}")
    output = trf_data.model_output
    sentence_ids = _pad(wordpiece_sentence_ids(doc, trf_data.align, width), [0], seq_len)
    sentence_ids[width:] = -1
    attn = context = colsums = None
    if model.attentions:
        maps = np.stack([to_numpy(layer)[0] for layer in output["attentions"]])
        attn = _pad(maps[..., :seq_len, :seq_len].astype(np.float32), [2, 3], seq_len)
    if model.context and CONTEXT in output:
        layers = to_numpy(output[CONTEXT_LAYERS])[0].tolist()
        if layers != list(range(model.n_layers)):
            raise ValueError(f"captured context layers {layers}, expected all")
        hidden = np.stack([to_numpy(layer)[0] for layer in output[CONTEXT]])
        context = _pad(hidden.astype(np.float32), [1], seq_len)
    if model.colsum_layers and COLSUMS in output:
        heads = to_numpy(output[COLSUM_HEADS])[0]
        sums = to_numpy(output[COLSUMS])[0].astype(np.float32)
        colsums = np.zeros((len(model.colsum_layers), model.n_heads, seq_len), np.float32)
        for row, (layer, head) in enumerate(heads.tolist()):
            if layer in model.colsum_layers:
                colsums[model.colsum_layers.index(layer), head, :width] = sums[row]
    valid = _pad(mask, [0], seq_len)
    token_ids = _pad(ids, [0], seq_len)
    pieces = list(trf_data.wordpieces.strings[0])[:width]
    pieces = [p if m else "" for p, m in zip(pieces, mask.tolist(), strict=True)]
    pieces += [""] * (seq_len - len(pieces))
    return WindowArrays(
        index=index,
        attn=attn,
        context=context,
        colsums=colsums,
        valid=valid,
        token_ids=token_ids,
        categories=wordpiece_categories(token_ids, valid, model.punct_ids, model.special_ids),
        sentence_ids=sentence_ids,
        pieces=pieces,
        length=length,
    )


def iter_window_arrays(
    model: AnalysisModel,
    docs: Iterable[Doc],
    *,
    batch_size: int = 32,
    seq_len: int = SEQ_LEN,
) -> Iterator[WindowArrays]:
    """Run the transformer over the window Docs in batches and yield each window's
    arrays; the Doc's transformer output is dropped once its arrays are taken."""
    import torch

    with torch.inference_mode():
        for index, doc in enumerate(model.pipe.pipe(docs, batch_size=batch_size)):
            arrays = doc_arrays(doc, model, index=index, seq_len=seq_len)
            doc._.trf_data = None
            yield arrays
