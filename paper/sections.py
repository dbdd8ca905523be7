"""The paper's Fig. 5 segments (``attn_head_pairs``) against WikiText-2 section
boundaries, beside TextTiling and trivial baselines: Pk and WindowDiff.

Run by ``scripts/evaluate_segments.py`` (``spacy project run evaluate-segments``)::

    python scripts/evaluate_segments.py --wikitext data/wikitext-2/wiki.test.raw \
        --config configs/minilm.cfg --out metrics/fig5_segments

Data and reference
------------------
``wiki.test.raw`` holds 60 articles. A line ``" = X = "`` followed by at least three
blank lines starts an article, ``" = = Y = = "`` a section, ``" = = = Z = = = "`` (and
deeper) a sub-section. (Two lines of the "Constant k filter" article look like titles,
``" = 1 henry and capacitance C = "``, but are broken formula text followed by only two
blank lines; the blank-line rule keeps them as text.) Heading lines are removed from the
text the systems see. The reference segments of an article are its lead (the text
before the first section) and its **sections**; sub-sections do *not* start a
reference segment by default, since they continue their section's topic and are often a
single paragraph (``--subsections`` counts them too). Segments without text are dropped.
WikiText's escapes ``@-@``, ``@,@``, ``@.@`` are undone (``guest @-@ starring`` ->
``guest-starring``); its other spacing (``actor . He``) is kept.

Units
-----
Every paragraph (line) is split into sentences by one fixed splitter (``--splitter``,
default NLTK Punkt, see :data:`paper.evaluation.SPLITTERS`), so reference boundaries
always fall between sentences and every system segments the same sentence sequence; a
system only chooses which sentence gaps are boundaries. Each article is one document:
its sentences joined by single spaces (paragraph breaks are not shown to the systems).
Pk and WindowDiff (``paper.segmentation_metrics``) are computed per article in
**sentences**, with ``k`` = half the article's mean reference segment length in
sentences, and averaged over articles (macro average).

Held-out protocol
-----------------
The articles are split in file order: the first half (30 articles) is the **tuning**
half, the second half (30 articles) the **test** half reported in the table
(``--max-articles`` caps the number used from each half). Free parameters are chosen
on the tuning half by the lowest mean Pk (ties: lowest mean WindowDiff):

* ``attn_head_pairs`` (the component's ``doc.spans["fig5_segments"]``, blocks = the given
  sentences): its ``layers`` (one layer, all heads) and ``merge_threshold`` (grid 0.00
  .. 2.00, step 0.01). On the tuning half, one pass captures the head outputs of every
  layer; per layer the token similarity matrix of the component
  (``similarity.segment_similarity``) is computed once and the component's merge rule
  (``segments.merges`` over ``segments.neighbour_similarities``: merge block a+1 into
  the segment iff ``cross >= merge_threshold * ref``) is applied for every grid value
  (the result for one article is checked against ``semantic_segments`` itself). On the
  test half the real component runs with the chosen values;
* embedding TextTiling: block size (sentences per side, from 1, 2, 3, 4, 5, 6, 8, 10,
  15, 20);
* NLTK TextTiling keeps its defaults (``w=20, k=10``, block comparison, HC cutoff): its
  defaults are the published ones, and it is slow (block comparison in Python, about
  half a minute per half), so it is run on the test half only (``--texttiling-tuning``
  scores the tuning half too). The stop-word list is spaCy's English ``STOP_WORDS``
  (NLTK's default needs the ``stopwords`` corpus download, which is not available
  offline).

Systems
-------
* ``attn_head_pairs``: a segment boundary before every block (sentence) not merged into
  the previous segment. The test half runs the real component; the merge rule is also
  applied to the neighbour similarities of the same pass, to check the component against
  it on every test article (boundaries that differ are counted in the JSON).
* ``attn_head_pairs`` (segment count matched): Pk rewards few boundaries when reference
  segments are long, so the Pk-optimal threshold may merge almost everything. As a
  second operating point, per layer the ``merge_threshold`` whose mean number of
  segments per tuning article is closest to the reference's is taken, then the layer
  with the lowest tuning Pk; on the test half the merge rule is applied to the
  similarity matrix of that layer from the same pass.
* NLTK TextTiling (``nltk.tokenize.TextTilingTokenizer``): it places boundaries only at
  paragraph breaks (``"\\n\\n"``), so the article is given to it with every sentence as
  its own paragraph (sentences joined by ``"\\n\\n"``) and each returned segment start
  maps to the sentence that starts there. NLTK ignores a paragraph break less than
  100 characters after the previous one, so some sentence gaps are never candidates. If
  it raises (text too short) the article gets no boundaries (counted in the JSON).
* embedding TextTiling: one vector per sentence, the mean of the MiniLM
  ``last_hidden_state`` over the sentence's wordpieces (every window in which they
  occur; ``spacy_attnseg.topics.sentence_means``), from the same transformer pass as
  ``attn_head_pairs``, unstandardised. At each gap, the cosine similarity of the mean
  vectors of the ``b`` sentences before and the ``b`` after it; depth score of a gap =
  (highest similarity reached climbing left while it does not decrease - its
  similarity) + (same to the right) (Hearst 1997); boundaries at the valleys (local
  minima) whose depth exceeds mean - std/2 of the valleys' depths (TextTiling's HC
  cutoff). No smoothing. These are ``attn_segmenter``'s ``texttiling`` functions
  (``spacy_attnseg.topics``) with a minimum of one sentence a segment.
* trivial baselines: a boundary after every sentence; no boundary; evenly spaced with
  the article's own reference mean segment length (an oracle: it knows the number of
  sections); evenly spaced with the tuning half's mean segment length (no oracle).

Writes ``OUT.json`` (rows with per-article scores, choices and tuning curves, reference
statistics, settings, runtime) and ``OUT.md`` (one table and notes).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy

from spacy_attnseg import topics
from spacy_attnseg.segments import BandedSimilarity, merges, neighbour_similarities

from . import topic_peers
from .evaluation import cpu_seconds, load_splitter, machine_settings, split_texts
from .segmentation_metrics import boundaries_from_starts, default_k, pk, window_diff
from .wikitext import Article as WikiArticle
from .wikitext import read_articles

MERGE_GRID = [round(0.01 * i, 2) for i in range(0, 201)]
BLOCK_GRID = [1, 2, 3, 4, 5, 6, 8, 10, 15, 20]
CAPTURE_CONSUMER = "evaluate_segments"
SPANS_KEY = "fig5_segments"


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


@dataclass
class Article:
    """One article: its sentences and the reference segment of each."""

    title: str
    sentences: List[str]
    segment_ids: List[int]

    @property
    def gaps(self) -> List[int]:
        """Reference gap sequence: 1 between sentences of different segments."""
        ids = self.segment_ids
        return [int(a != b) for a, b in zip(ids[:-1], ids[1:], strict=True)]

    @property
    def n_segments(self) -> int:
        return len(set(self.segment_ids))


def split_articles(raw: Sequence[WikiArticle], split: Callable[[str], List[int]]) -> List[Article]:
    """Sentences of every paragraph (the same splitter for all systems)."""
    articles = []
    for title, segments in ((a.title, a.sections) for a in raw):
        sentences: List[str] = []
        segment_ids: List[int] = []
        for seg_id, paragraphs in enumerate(segments):
            for paragraph in paragraphs:
                found = split_texts(paragraph, split)
                sentences += found
                segment_ids += [seg_id] * len(found)
        # renumber: segments left without sentences must not count
        remap = {old: new for new, old in enumerate(dict.fromkeys(segment_ids))}
        articles.append(Article(title, sentences, [remap[s] for s in segment_ids]))
    return [a for a in articles if len(a.sentences) >= 2]


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------


def score_article(article: Article, hyp_starts: Iterable[int]) -> Tuple[float, float, int]:
    """Pk, WindowDiff (k = half the reference mean segment length, in sentences) and the
    number of hypothesis segments."""
    n = len(article.sentences)
    hyp = boundaries_from_starts(sorted(set(hyp_starts) | {0}), n)
    ref = article.gaps
    k = default_k(ref)
    return pk(ref, hyp, k), window_diff(ref, hyp, k), sum(hyp) + 1


def score_system(articles: Sequence[Article], starts: Sequence[Iterable[int]]) -> Dict[str, Any]:
    per = [score_article(a, s) for a, s in zip(articles, starts, strict=True)]
    return {
        "pk": float(numpy.mean([p for p, _, _ in per])),
        "wd": float(numpy.mean([w for _, w, _ in per])),
        "segments_per_article": float(numpy.mean([n for _, _, n in per])),
        "per_article": [{"pk": round(p, 4), "wd": round(w, 4), "segments": n} for p, w, n in per],
    }


# ---------------------------------------------------------------------------
# Systems that need no model
# ---------------------------------------------------------------------------


def evenly_spaced(n_units: int, mean_length: float) -> List[int]:
    """Segment starts every ``mean_length`` units (rounded half up)."""
    starts = {0}
    j = 1
    while True:
        start = int(numpy.floor(j * mean_length + 0.5))
        if start >= n_units:
            break
        starts.add(start)
        j += 1
    return sorted(starts)


def nltk_texttiling(
    articles: Sequence[Article], w: int = 20, k: int = 10
) -> Tuple[List[List[int]], int]:
    """Sentence starts from NLTK TextTiling (``paper.topic_peers``), every sentence a
    paragraph; and the number of articles it could not segment (given no boundary)."""
    found = [topic_peers.nltk_texttiling(a.sentences, w=w, k=k) for a in articles]
    return [starts or [0] for starts in found], sum(starts is None for starts in found)


def embedding_texttiling(vectors: numpy.ndarray, block: int) -> List[int]:
    """Sentence starts (0 first) by TextTiling on the sentence vectors (module
    docstring)."""
    sims = topics.gap_similarities(vectors, block)
    depth = topics.depth_scores(sims)
    return [0] + topics.choose_boundaries(depth, sims, cutoff=0.5, min_sents=1)


# ---------------------------------------------------------------------------
# The transformer pass
# ---------------------------------------------------------------------------


def build_doc(nlp: Any, sentences: Sequence[str]) -> Any:
    """A Doc of the sentences joined by spaces, with exactly those sentence starts."""
    doc = nlp.make_doc(" ".join(sentences))
    offsets = set()
    position = 0
    for sentence in sentences:
        offsets.add(position)
        position += len(sentence) + 1
    for token in doc:
        token.is_sent_start = token.idx in offsets
    n_starts = sum(1 for token in doc if token.is_sent_start)
    if n_starts != len(sentences):
        raise ValueError(f"{n_starts} token-aligned sentence starts for {len(sentences)}")
    return doc


def sentence_token_starts(doc: Any) -> numpy.ndarray:
    return numpy.array([sent.start for sent in doc.sents], dtype="int64")


def sentence_vectors(doc: Any, starts: numpy.ndarray) -> numpy.ndarray:
    """Mean ``last_hidden_state`` of each sentence's wordpieces (all windows)."""
    from thinc.api import to_numpy

    trf_data = doc._.trf_data
    hidden = to_numpy(trf_data.model_output.last_hidden_state)
    sentence_of_token = topics.sentence_index(starts, len(doc))
    return topics.sentence_means(hidden, trf_data.align, sentence_of_token, len(starts))


Neighbours = Tuple[numpy.ndarray, numpy.ndarray]


def neighbours(S: Any, starts: numpy.ndarray) -> Neighbours:
    """``segments.neighbour_similarities`` (cross, ref) of the sentences (blocks) that
    start at ``starts``, from a token similarity ``S`` (dense or banded)."""
    sim = S if isinstance(S, BandedSimilarity) else BandedSimilarity.from_dense(S)
    if len(starts) < 2:
        return numpy.zeros((0,)), numpy.zeros((0,))
    return neighbour_similarities(sim, numpy.r_[starts, len(sim)])


def merge_starts(pair: Neighbours, merge_threshold: float) -> List[int]:
    """Sentence starts of the segments the Fig. 5 merge rule (``segments.merges``)
    leaves at ``merge_threshold``."""
    kept = numpy.flatnonzero(~merges(pair[0], pair[1], merge_threshold))
    return [0] + (kept + 1).tolist()


def load(config: str, threads: int) -> Any:
    import torch

    from spacy_attnseg.loading import load_pipeline

    torch.set_num_threads(threads)
    nlp = load_pipeline(config)
    from spacy_transformers import Transformer

    names = [n for n, p in nlp.pipeline if isinstance(p, Transformer)]
    if not names:
        raise SystemExit(f"{config}: no spacy-transformers component")
    for name in list(nlp.pipe_names):
        if name != names[0]:
            nlp.remove_pipe(name)
    return nlp


def stream_docs(
    nlp: Any, articles: Sequence[Article], batch_size: int
) -> Iterator[Tuple[Article, Any]]:
    docs = (build_doc(nlp, a.sentences) for a in articles)
    yield from zip(articles, nlp.pipe(docs, batch_size=batch_size), strict=True)


def layer_similarities(doc: Any, trf: Any, n_heads: int) -> Iterator[Tuple[int, Any]]:
    """``(layer, token similarity matrix)`` of every layer whose head outputs were
    captured for ``doc``: the matrix ``attn_head_pairs`` builds its segments from
    (``similarity.segment_similarity``, all heads, special tokens left out)."""
    from spacy_attnseg.capture import CONTEXT, CONTEXT_LAYERS, keep_mask
    from spacy_attnseg.similarity import segment_similarity
    from spacy_attnseg.windows import wordpiece_tokens

    trf_data = doc._.trf_data
    output = trf_data.model_output
    wordpieces = trf_data.wordpieces
    mask = keep_mask(
        wordpieces.input_ids, wordpieces.attention_mask, trf.model.tokenizer.all_special_ids
    )
    n_win, length = wordpieces.input_ids.shape
    wp2tok = wordpiece_tokens(trf_data.align, n_win, length)
    layers = [int(x) for x in output[CONTEXT_LAYERS][0]]
    for layer, context in zip(layers, output[CONTEXT], strict=True):
        yield layer, segment_similarity(context, mask, wp2tok, len(doc), n_heads, None)


def tuning_pass(
    config: str, articles: Sequence[Article], threads: int, batch_size: int
) -> Dict[str, Any]:
    """One pass over the tuning half: neighbouring sentences' similarities of every
    layer, sentence vectors."""
    from spacy_attnseg.capture import (
        CONTEXT,
        CONTEXT_LAYERS,
        AttentionCapture,
        CaptureRequest,
        release,
    )
    from spacy_attnseg.components.head_pairs import sentence_ends
    from spacy_attnseg.families import n_layers_heads
    from spacy_attnseg.segments import semantic_segments

    nlp = load(config, threads)
    trf = nlp.get_pipe(nlp.pipe_names[0])
    n_layers, n_heads = n_layers_heads(trf.model.transformer)
    capture = AttentionCapture.attach(trf.model)
    capture.request(CAPTURE_CONSUMER, CaptureRequest(context_layers=None))
    pairs: List[Dict[int, Neighbours]] = []
    vectors: List[numpy.ndarray] = []
    check: Dict[str, Any] = {}
    for article, doc in stream_docs(nlp, articles, batch_size):
        starts = sentence_token_starts(doc)
        per_layer: Dict[int, Neighbours] = {}
        for layer, S in layer_similarities(doc, trf, n_heads):
            per_layer[layer] = neighbours(S, starts)
            if not check and layer == n_layers - 1:
                # the merge rule here against the component's own function
                mismatches = {}
                for m in (0.4, 0.5, 0.75, 1.0):
                    segs = semantic_segments(sentence_ends(doc), S, merge_threshold=m)
                    ours = starts[merge_starts(per_layer[layer], m)]
                    mismatches[str(m)] = len(set(ours.tolist()) ^ {s for s, _, _ in segs})
                check = {"article": article.title, "layer": layer, "mismatches": mismatches}
            del S
        release(doc._.trf_data.model_output, (CONTEXT, CONTEXT_LAYERS))
        pairs.append(per_layer)
        vectors.append(sentence_vectors(doc, starts))
    capture.withdraw(CAPTURE_CONSUMER)
    return {
        "neighbours": pairs,
        "vectors": vectors,
        "check": check,
        "n_layers": n_layers,
        "n_heads": n_heads,
    }


def test_pass(
    config: str,
    articles: Sequence[Article],
    layer: int,
    merge_threshold: float,
    extra_layers: Sequence[int],
    threads: int,
    batch_size: int,
) -> Dict[str, Any]:
    """One pass over the test half. The real ``attn_head_pairs`` component (``layer``,
    ``merge_threshold``) gives the reported segments; the neighbour similarities of
    ``layer`` and ``extra_layers`` are computed from the same pass (for the count-matched
    row and to check the merge rule against the component on every article)."""
    from spacy_attnseg.capture import AttentionCapture, CaptureRequest
    from spacy_attnseg.families import n_layers_heads

    nlp = load(config, threads)
    transformer = nlp.pipe_names[0]
    trf = nlp.get_pipe(transformer)
    _, n_heads = n_layers_heads(trf.model.transformer)
    component = nlp.add_pipe(
        "attn_head_pairs",
        config={
            "transformer": transformer,
            "layers": [layer],
            "heads": [],
            "spans_key": SPANS_KEY,
            "merge_threshold": merge_threshold,
        },
    )
    wanted = sorted({layer, *extra_layers})
    AttentionCapture.attach(trf.model).request(
        CAPTURE_CONSUMER, CaptureRequest(context_layers=tuple(wanted))
    )
    starts_out: List[List[int]] = []
    vectors: List[numpy.ndarray] = []
    pairs: List[Dict[int, Neighbours]] = []
    mismatches = 0
    component_s = 0.0
    with nlp.select_pipes(disable=["attn_head_pairs"]):
        for _, doc in stream_docs(nlp, articles, batch_size):
            starts = sentence_token_starts(doc)
            pairs.append(
                {
                    captured: neighbours(S, starts)
                    for captured, S in layer_similarities(doc, trf, n_heads)
                    if captured in wanted
                }
            )
            vectors.append(sentence_vectors(doc, starts))
            t0 = time.perf_counter()
            doc = component(doc)
            component_s += time.perf_counter() - t0
            index = {int(t): i for i, t in enumerate(starts)}
            found = sorted(index[span.start] for span in doc.spans[SPANS_KEY])
            starts_out.append(found)
            replica = merge_starts(pairs[-1][layer], merge_threshold)
            mismatches += len(set(found) ^ set(replica))
    return {
        "starts": starts_out,
        "vectors": vectors,
        "neighbours": pairs,
        "replica_mismatches": mismatches,
        "component_s": component_s,
    }


# ---------------------------------------------------------------------------
# Tuning
# ---------------------------------------------------------------------------


def tune_attn(
    articles: Sequence[Article], pairs: Sequence[Dict[int, Neighbours]]
) -> Dict[str, Any]:
    """Layer and merge_threshold by the lowest mean Pk on the tuning half; and, as a
    second operating point, per layer the threshold whose mean number of segments per
    article is closest to the reference's, then the layer with the lowest Pk there."""
    layers = sorted(pairs[0])
    target = float(numpy.mean([a.n_segments for a in articles]))
    curves: Dict[int, List[Tuple[float, float, float, float]]] = {}
    for layer in layers:
        curve = []
        for m in MERGE_GRID:
            starts = [merge_starts(r[layer], m) for r in pairs]
            scores = score_system(articles, starts)
            curve.append((m, scores["pk"], scores["wd"], scores["segments_per_article"]))
        curves[layer] = curve
    best = min(
        ((layer, *point) for layer, curve in curves.items() for point in curve),
        key=lambda t: (round(t[2], 12), round(t[3], 12), t[0], t[1]),
    )
    matched = min(
        (
            (layer, *min(curve, key=lambda t: (abs(t[3] - target), t[1], t[0])))
            for layer, curve in curves.items()
        ),
        key=lambda t: (round(t[2], 12), round(t[3], 12), t[0]),
    )
    per_layer_best: Dict[str, Dict[str, float]] = {}
    for layer, curve in curves.items():
        m, p, w, n = min(curve, key=lambda t: (t[1], t[2]))
        per_layer_best[str(layer)] = {
            "merge_threshold": m,
            "pk": round(p, 4),
            "wd": round(w, 4),
            "segments_per_article": round(n, 2),
        }
    return {
        "layer": best[0],
        "merge_threshold": best[1],
        "tuning_pk": best[2],
        "tuning_wd": best[3],
        "tuning_segments_per_article": best[4],
        "count_matched": {
            "target_segments_per_article": round(target, 2),
            "layer": matched[0],
            "merge_threshold": matched[1],
            "tuning_pk": matched[2],
            "tuning_wd": matched[3],
            "tuning_segments_per_article": matched[4],
        },
        "per_layer_best": per_layer_best,
        "grid": [MERGE_GRID[0], MERGE_GRID[-1], 0.01],
        "curves (merge_threshold, pk, wd, segments/article)": {
            str(layer): [[m, round(p, 4), round(w, 4), round(n, 2)] for m, p, w, n in curve]
            for layer, curve in curves.items()
        },
    }


def tune_embedding(articles: Sequence[Article], vectors: Sequence[numpy.ndarray]) -> Dict[str, Any]:
    results = []
    for block in BLOCK_GRID:
        starts = [embedding_texttiling(v, block) for v in vectors]
        scores = score_system(articles, starts)
        results.append((block, scores["pk"], scores["wd"]))
    best = min(results, key=lambda t: (t[1], t[2], t[0]))
    return {
        "block": best[0],
        "tuning_pk": best[1],
        "tuning_wd": best[2],
        "curve": [[b, round(p, 4), round(w, 4)] for b, p, w in results],
    }


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------


def reference_stats(articles: Sequence[Article]) -> Dict[str, Any]:
    n_sent = [len(a.sentences) for a in articles]
    n_seg = [a.n_segments for a in articles]
    return {
        "articles": len(articles),
        "sentences": int(sum(n_sent)),
        "segments": int(sum(n_seg)),
        "sentences_per_article": round(float(numpy.mean(n_sent)), 1),
        "segments_per_article": round(float(numpy.mean(n_seg)), 2),
        "sentences_per_segment": round(sum(n_sent) / sum(n_seg), 2),
        "mean_k": round(float(numpy.mean([default_k(a.gaps) for a in articles])), 2),
    }


def evaluate(
    wikitext: Path,
    config: str,
    out: Path,
    *,
    threads: int = 2,
    batch_size: int = 4,
    splitter: str = "punkt",
    max_articles: Optional[int] = None,
    subsections: bool = False,
    texttiling_tuning: bool = False,
) -> Dict[str, Any]:
    """Tune on the first half of the articles, report on the second (module docstring);
    writes ``OUT.json`` and ``OUT.md`` and returns what the JSON holds."""
    started = time.perf_counter()
    load_before = os.getloadavg()
    timings: Dict[str, float] = {}

    raw = read_articles(wikitext, subsections=subsections)
    articles = split_articles(raw, load_splitter(splitter))
    half = (len(articles) + 1) // 2
    tuning, test = articles[:half], articles[half:]
    if max_articles is not None:
        tuning, test = tuning[:max_articles], test[:max_articles]
    print(f"{len(tuning)} tuning and {len(test)} test articles", file=sys.stderr)

    t0, c0 = time.perf_counter(), cpu_seconds()
    tuned = tuning_pass(config, tuning, threads, batch_size)
    timings["tuning_pass_s"] = time.perf_counter() - t0
    timings["tuning_pass_cpu_s"] = cpu_seconds() - c0
    t0, c0 = time.perf_counter(), cpu_seconds()
    attn_choice = tune_attn(tuning, tuned["neighbours"])
    emb_choice = tune_embedding(tuning, tuned["vectors"])
    timings["grid_search_s"] = time.perf_counter() - t0
    print(
        f"tuning pass {timings['tuning_pass_s']:.0f}s; attn layer {attn_choice['layer']} "
        f"merge_threshold {attn_choice['merge_threshold']}; embedding block {emb_choice['block']}",
        file=sys.stderr,
    )

    t0, c0 = time.perf_counter(), cpu_seconds()
    tested = test_pass(
        config,
        test,
        attn_choice["layer"],
        attn_choice["merge_threshold"],
        [attn_choice["count_matched"]["layer"]],
        threads,
        batch_size,
    )
    timings["test_pass_s"] = time.perf_counter() - t0
    timings["test_pass_cpu_s"] = cpu_seconds() - c0
    timings["attn_head_pairs_component_s"] = tested["component_s"]

    t0, c0 = time.perf_counter(), cpu_seconds()
    tt_test, tt_test_fail = nltk_texttiling(test)
    tt_tuning: Optional[List[List[int]]] = None
    tt_tuning_fail: Optional[int] = None
    if texttiling_tuning:
        tt_tuning, tt_tuning_fail = nltk_texttiling(tuning)
    timings["nltk_texttiling_s"] = time.perf_counter() - t0
    timings["nltk_texttiling_cpu_s"] = cpu_seconds() - c0

    matched = attn_choice["count_matched"]
    tuning_mean = sum(len(a.sentences) for a in tuning) / sum(a.n_segments for a in tuning)
    n_layers = tuned["n_layers"]
    systems: List[Dict[str, Any]] = [
        {
            "system": "attn_head_pairs",
            "params": f"layer {attn_choice['layer']} of {n_layers} (from 0), all heads, "
            f"merge_threshold {attn_choice['merge_threshold']:.2f}",
            "test": tested["starts"],
            "tuning": [
                merge_starts(r[attn_choice["layer"]], attn_choice["merge_threshold"])
                for r in tuned["neighbours"]
            ],
        },
        {
            "system": "attn_head_pairs (segment count matched on tuning half)",
            "params": f"layer {matched['layer']}, all heads, merge_threshold "
            f"{matched['merge_threshold']:.2f} (merge rule applied to the same pass)",
            "test": [
                merge_starts(r[matched["layer"]], matched["merge_threshold"])
                for r in tested["neighbours"]
            ],
            "tuning": [
                merge_starts(r[matched["layer"]], matched["merge_threshold"])
                for r in tuned["neighbours"]
            ],
        },
        {
            "system": "embedding TextTiling (MiniLM mean-pooled)",
            "params": f"block {emb_choice['block']} sentences, cutoff mean - std/2",
            "test": [embedding_texttiling(v, emb_choice["block"]) for v in tested["vectors"]],
            "tuning": [embedding_texttiling(v, emb_choice["block"]) for v in tuned["vectors"]],
        },
        {
            "system": "NLTK TextTiling",
            "params": "w 20, k 10 (defaults), sentences as paragraphs",
            "test": tt_test,
            "tuning": tt_tuning,
        },
        {
            "system": "every sentence a boundary",
            "params": "",
            "test": [list(range(len(a.sentences))) for a in test],
            "tuning": [list(range(len(a.sentences))) for a in tuning],
        },
        {
            "system": "no boundary",
            "params": "",
            "test": [[0] for _ in test],
            "tuning": [[0] for _ in tuning],
        },
        {
            "system": "evenly spaced (article's reference mean length; oracle)",
            "params": "knows each article's number of sections",
            "test": [
                evenly_spaced(len(a.sentences), len(a.sentences) / a.n_segments) for a in test
            ],
            "tuning": [
                evenly_spaced(len(a.sentences), len(a.sentences) / a.n_segments) for a in tuning
            ],
        },
        {
            "system": "evenly spaced (tuning half's mean length)",
            "params": f"every {tuning_mean:.1f} sentences",
            "test": [evenly_spaced(len(a.sentences), tuning_mean) for a in test],
            "tuning": [evenly_spaced(len(a.sentences), tuning_mean) for a in tuning],
        },
    ]
    rows = []
    for system in systems:
        test_scores = score_system(test, system["test"])
        tuning_scores: Dict[str, Any] = {"pk": None, "wd": None}
        if system["tuning"] is not None:
            tuning_scores = score_system(tuning, system["tuning"])
        rows.append(
            {
                "system": system["system"],
                "params": system["params"],
                "pk": round(test_scores["pk"], 4),
                "wd": round(test_scores["wd"], 4),
                "segments_per_article": round(test_scores["segments_per_article"], 2),
                "tuning_pk": _round(tuning_scores["pk"]),
                "tuning_wd": _round(tuning_scores["wd"]),
                "per_article": test_scores["per_article"],
            }
        )
        print(
            f"{system['system']:50s} Pk={rows[-1]['pk']:.3f} WD={rows[-1]['wd']:.3f} "
            f"(tuning Pk={rows[-1]['tuning_pk']})",
            file=sys.stderr,
        )

    elapsed = time.perf_counter() - started
    ref_test, ref_tuning = reference_stats(test), reference_stats(tuning)
    unit = "sections and sub-sections" if subsections else "sections (sub-sections not counted)"
    payload = {
        "title": f"Semantic segments on WikiText-2 test ({len(test)} test articles; "
        f"reference: {unit}; Pk and WindowDiff in sentences, mean over articles)",
        "rows": rows,
        "test_articles": [a.title for a in test],
        "tuning_articles": [a.title for a in tuning],
        "reference": {"test": ref_test, "tuning": ref_tuning, "unit": unit},
        "attn_head_pairs_choice": attn_choice,
        "attn_replica_check": {
            "tuning_first_article": tuned["check"],
            "test_all_articles_mismatched_boundaries": tested["replica_mismatches"],
        },
        "embedding_texttiling_choice": emb_choice,
        "nltk_texttiling_failures": {"test": tt_test_fail, "tuning": tt_tuning_fail},
        "settings": {
            "config": str(config),
            "wikitext": str(wikitext),
            "splitter": splitter,
            "torch_threads": threads,
            "batch_size": batch_size,
            "max_articles": max_articles,
            "subsections": subsections,
            **machine_settings(load_before),
        },
        "timings_s": {
            **{k: round(v, 1) for k, v in timings.items()},
            "total": round(elapsed, 1),
            "process_cpu_total": round(cpu_seconds(), 1),
        },
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(
        json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf8"
    )
    write_markdown(Path(f"{out}.md"), payload)
    print(Path(f"{out}.md").read_text(encoding="utf8"))
    return payload


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(value, 4)


def _cell(value: Optional[float]) -> str:
    return "\u2013" if value is None else f"{value:.3f}"


def write_markdown(path: Path, payload: Dict[str, Any]) -> None:
    ref = payload["reference"]["test"]
    lines = [
        f"# {payload['title']}",
        "",
        "| system | Pk | WindowDiff | segments/article | Pk (tuning half) | WD (tuning half) "
        "| parameters |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in payload["rows"]:
        lines.append(
            f"| {row['system']} | {row['pk']:.3f} | {row['wd']:.3f} "
            f"| {row['segments_per_article']:.1f} | {_cell(row['tuning_pk'])} "
            f"| {_cell(row['tuning_wd'])} | {row['params']} |"
        )
    attn = payload["attn_head_pairs_choice"]
    emb = payload["embedding_texttiling_choice"]
    settings = payload["settings"]
    check = payload["attn_replica_check"]
    tuning_check = check["tuning_first_article"]
    matched = attn["count_matched"]
    lines += [
        "",
        "Notes:",
        "",
        f"- Reference (test half): {ref['articles']} articles, {ref['sentences_per_article']} "
        f"sentences and {ref['segments_per_article']} segments per article "
        f"({ref['sentences_per_segment']} sentences per segment); mean k = {ref['mean_k']} "
        "sentences (k = half the article's mean reference segment length).",
        f"- Sentence units: every paragraph split by `{settings['splitter']}`; the same "
        "units for every system. Headings removed; paragraphs joined by spaces.",
        f"- Tuning half (first {payload['reference']['tuning']['articles']} articles in file "
        "order) chose, by lowest mean Pk: attn_head_pairs layer "
        f"{attn['layer']} and merge_threshold {attn['merge_threshold']:.2f} (grid 0.00-2.00, "
        f"{attn['tuning_segments_per_article']:.1f} segments per tuning article); embedding "
        f"TextTiling block {emb['block']}. NLTK TextTiling keeps its defaults (run on the "
        "tuning half only with `--texttiling-tuning`).",
        "- The count-matched attn_head_pairs row takes, per layer, the merge_threshold whose "
        "mean number of segments per tuning article is closest to the reference's "
        f"({matched['target_segments_per_article']}), then the layer with the lowest tuning Pk: "
        f"layer {matched['layer']}, merge_threshold {matched['merge_threshold']:.2f}. It applies "
        "the component's merge rule (`segments.merges`, as `segments.semantic_segments` "
        "applies it) to the similarity matrix of the same pass.",
        "- Check: boundaries that differ between the merge rule on the same pass and the "
        "component: "
        f"{check['test_all_articles_mismatched_boundaries']} over all test articles (at the "
        f"reported setting); on '{tuning_check.get('article')}' (last layer) "
        f"{tuning_check.get('mismatches')} at several merge thresholds.",
        "- Pk and WindowDiff favour under-segmentation when the reference segments are long: "
        "'no boundary' is a strong baseline here.",
        f"- Runtime: {payload['timings_s']['total']:.0f} s wall, "
        f"{payload['timings_s']['process_cpu_total']:.0f} s CPU ({settings['torch_threads']} "
        f"torch threads; 1-min load average before/after {settings['load_average_before'][0]}/"
        f"{settings['load_average_after'][0]} on {settings['machine']}).",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
