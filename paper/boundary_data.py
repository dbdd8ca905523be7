"""The sentence-boundary training and dev data of ``attn_senter`` (``.spacy`` files):
:func:`build`, behind ``scripts/make_boundary_data.py`` (``spacy project run
train-boundaries``), which holds the options and their defaults.

Sources (UD English EWT *test* is never read: it is what the trained pipelines are
evaluated on, and a path that looks like a test split is refused):

* **UD English EWT dev** (in-domain web text). Its documents are split by document into a
  held-out dev part (``--dev-fraction``, for model selection during ``spacy train``) and a
  training part. Both parts appear twice: as written ("raw") and in the "no punctuation"
  variant of ``paper.evaluation`` (every sentence's final ``.``/``!``/``?`` run
  removed and the sentence lowercased; gold starts recomputed).
* **UD English EWT train** (``--ewt-train``, optional; the shipped recipe uses it): every
  document joins the training part, in both variants. It is read after the dev split and
  draws nothing from the split's generator, so the held-out dev part and the WikiText
  documents are the same with or without it.
* **WikiText-2 test** (Wikipedia prose), for training only. It has no sentence annotation,
  so labels come from a rule splitter on the punctuated text: WikiText's tokenized
  spacing is undone (``" @-@ "`` -> ``-``, no space before ``, . ; :`` and so on), each
  paragraph is split with NLTK Punkt (the English parameters; of the rule splitters it
  has the best boundary F1 on EWT, 81.2, with 97.4 precision, and Wikipedia's edited prose
  is its home ground), and consecutive sentences of an article are grouped into documents
  of ``--wiki-min-words`` to ``--wiki-max-words`` words. The no-punctuation variant is then
  made from those sentences exactly as for EWT, so its labels are the punctuated text's.
  Headings are dropped. A share of the sampled WikiText documents
  (``--wiki-raw-fraction``) is used raw and the rest without punctuation, so the two
  variants never share text.

Every document becomes a ``Doc`` of a blank English tokenizer (the pipelines' tokenizer)
whose ``is_sent_start`` is set on every token (``evaluation.to_spacy_examples``); the
training file is shuffled with ``--seed``. ``stats.json`` beside the files lists the
documents, sentences and words of every part.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Dict, Iterable, List, Sequence

import spacy
from spacy.tokens import DocBin

from spacy_attnseg.gold import join_sentences

from .evaluation import (
    GoldDocument,
    load_splitter,
    read_conllu_documents,
    split_texts,
    strip_final_punctuation,
    to_spacy_examples,
)
from .wikitext import read_articles

WIKI_SPLITTER = "punkt"


# -- WikiText ---------------------------------------------------------------------------


def wikitext_articles(path: Path) -> List[List[str]]:
    """The articles of a WikiText file, each a list of readable paragraphs."""
    return [
        [p for section in article.sections for p in section]
        for article in read_articles(path, readable=True)
    ]


def wikitext_documents(
    path: Path, *, min_words: int, max_words: int, rng: random.Random
) -> List[List[str]]:
    """WikiText articles split into sentences (Punkt) and grouped into documents of
    ``min_words``..``max_words`` words (a random target per document)."""
    split = load_splitter(WIKI_SPLITTER)
    documents: List[List[str]] = []
    for article in wikitext_articles(path):
        sentences = [s for paragraph in article for s in split_texts(paragraph, split)]
        current: List[str] = []
        words = 0
        target = rng.randint(min_words, max_words)
        for sentence in sentences:
            n = len(sentence.split())
            if current and words + n > target:
                documents.append(current)
                current, words, target = [], 0, rng.randint(min_words, max_words)
            current.append(sentence)
            words += n
        if current and words >= min_words // 2:
            documents.append(current)
    return documents


# -- documents and variants -------------------------------------------------------------


def no_punct(sentences: Iterable[str]) -> List[str]:
    """The evaluation's no-punctuation variant of a document's sentences."""
    stripped = (strip_final_punctuation(s).lower() for s in sentences)
    return [s for s in stripped if s]


def short_documents(
    docs: Sequence[GoldDocument], share: float, rng: random.Random
) -> List[GoldDocument]:
    """Runs of 2 or 3 consecutive sentences of ``docs`` (cut one after another, each
    length drawn at random), each kept with probability ``share`` as a document of its
    own: short texts, which long documents do not teach."""
    out: List[GoldDocument] = []
    for doc in docs:
        sentences = [s.strip() for s in doc.sentences()]
        i = 0
        while i < len(sentences) - 1:
            k = rng.choice((2, 3))
            run = sentences[i : i + k]
            if len(run) >= 2 and rng.random() < share:
                out.append(join_sentences(run))
            i += k
    return out


def write_docbin(nlp: spacy.language.Language, docs: List[GoldDocument], path: Path) -> None:
    bin_ = DocBin(attrs=["ORTH", "SENT_START"], store_user_data=False)
    for example in to_spacy_examples(nlp, docs):
        bin_.add(example.reference)
    path.parent.mkdir(parents=True, exist_ok=True)
    bin_.to_disk(path)


def describe(docs: Sequence[GoldDocument]) -> Dict[str, int]:
    return {
        "docs": len(docs),
        "sentences": sum(len(d.starts) for d in docs),
        "words": sum(len(d.text.split()) for d in docs),
    }


def build(
    out_dir: Path,
    *,
    ewt: Path,
    wikitext: Path | None,
    dev_fraction: float,
    wiki_words: int,
    wiki_min_words: int,
    wiki_max_words: int,
    wiki_raw_fraction: float,
    seed: int,
    short_share: float = 0.0,
    ewt_train: Path | None = None,
) -> Dict[str, Dict[str, int]]:
    """Write ``train.spacy``, ``dev.spacy`` and ``stats.json`` to ``out_dir`` and return
    the statistics (documents, sentences and words of every part). ``wikitext=None`` or
    ``wiki_words=0``: EWT only. ``short_share`` > 0 adds :func:`short_documents` of the
    EWT training part, as written (drawn with their own generator, so the other parts
    stay as they are). ``ewt_train``: a treebank whose every document joins the EWT
    training part. A path to EWT whose name says "test" is refused."""
    for path in (ewt, ewt_train):
        if path is not None and "test" in path.name.lower():
            raise ValueError(f"refusing to train on {path}: the evaluation uses EWT test")
    rng = random.Random(seed)
    ewt_docs = read_conllu_documents(ewt)
    order = list(range(len(ewt_docs)))
    rng.shuffle(order)
    n_dev = max(1, round(dev_fraction * len(ewt_docs)))
    dev_ids, train_ids = set(order[:n_dev]), order[n_dev:]
    parts: Dict[str, List[GoldDocument]] = {}
    parts["ewt_train_raw"] = [ewt_docs[i] for i in sorted(train_ids)]
    if ewt_train is not None:
        parts["ewt_train_raw"] += read_conllu_documents(ewt_train)
    parts["ewt_train_nopunct"] = [
        join_sentences(no_punct(d.sentences())) for d in parts["ewt_train_raw"]
    ]
    parts["ewt_dev_raw"] = [ewt_docs[i] for i in sorted(dev_ids)]
    parts["ewt_dev_nopunct"] = [
        join_sentences(no_punct(d.sentences())) for d in parts["ewt_dev_raw"]
    ]
    if wikitext is not None and wiki_words > 0:
        wiki = wikitext_documents(
            wikitext, min_words=wiki_min_words, max_words=wiki_max_words, rng=rng
        )
        rng.shuffle(wiki)
        chosen: List[List[str]] = []
        words = 0
        for sentences in wiki:
            if words >= wiki_words:
                break
            chosen.append(sentences)
            words += sum(len(s.split()) for s in sentences)
        n_raw = round(wiki_raw_fraction * len(chosen))
        parts["wiki_raw"] = [join_sentences(s) for s in chosen[:n_raw]]
        parts["wiki_nopunct"] = [join_sentences(no_punct(s)) for s in chosen[n_raw:]]
    if short_share > 0:
        short_rng = random.Random(seed + 1)
        parts["ewt_train_short"] = short_documents(parts["ewt_train_raw"], short_share, short_rng)
    for name in parts:
        parts[name] = [d for d in parts[name] if d.text.strip()]
    train = [d for name, docs in parts.items() if "dev" not in name for d in docs]
    dev = parts["ewt_dev_raw"] + parts["ewt_dev_nopunct"]
    rng.shuffle(train)
    nlp = spacy.blank("en")
    write_docbin(nlp, train, out_dir / "train.spacy")
    write_docbin(nlp, dev, out_dir / "dev.spacy")
    stats = {name: describe(docs) for name, docs in parts.items()}
    stats["train"] = describe(train)
    stats["dev"] = describe(dev)
    settings = {
        "ewt": str(ewt),
        **({"ewt_train": str(ewt_train)} if ewt_train is not None else {}),
        "wikitext": None if wikitext is None else str(wikitext),
        "wiki_splitter": WIKI_SPLITTER,
        "dev_fraction": dev_fraction,
        "wiki_words": wiki_words,
        "wiki_doc_words": [wiki_min_words, wiki_max_words],
        "wiki_raw_fraction": wiki_raw_fraction,
        "seed": seed,
        **({"short_share": short_share} if short_share > 0 else {}),
    }
    (out_dir / "stats.json").write_text(
        json.dumps({"settings": settings, "parts": stats}, indent=2) + "\n", encoding="utf8"
    )
    return stats
