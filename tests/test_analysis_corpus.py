"""Windows of WikiText, per-window arrays, the extra statistics and the claims report of
``spacy_attnseg.analysis``; an end-to-end run over a few windows with the real MiniLM."""

import json
import re
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.vocab import Vocab
from test_analysis_stats import is_png
from thinc.types import Ragged

from paper import corpus, wikitext, window_stats
from paper.claims import evaluate_claims, render_report
from paper.stats import CLS, PAD, PUNCT, SEP, WORD
from spacy_attnseg.loading import CONFIGS, embedded_model_path

ROOT = Path(__file__).resolve().parent.parent
WIKITEXT = ROOT / "data" / "wikitext-2" / "wiki.test.raw"

# WikiText's layout: " " lines around paragraphs, three or more blank lines after a heading
HAND_TEXT = "\n".join(
    [
        " ",
        " = First Article = ",
        " ",
        " ",
        " ",
        " The cat sat on the mat . It was a 1 @,@ 000 @-@ year @-@ old cat ! Was it ? ",
        " ",
        " = = A section = = ",
        " ",
        " ",
        " ",
        ' He said " stop . " Then the U.S. team left ( for good . ) The end . ',
        " = 1 henry and capacitance C = ",
        " ",
        " = Second Article = ",
        " ",
        " ",
        " ",
        " Short one . Another sentence follows here , and it is long enough to need several ",
        " windows of sixteen wordpieces when cut . ",
    ]
)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(embedded_model_path())


# -- text -------------------------------------------------------------------------------------


def test_headings_and_detokenize() -> None:
    lines = HAND_TEXT.split("\n")
    found = {lines[i].strip(): wikitext.heading(lines, i) for i in range(len(lines))}
    assert found["= First Article ="] == (1, "First Article")
    assert found["= = A section = ="] == (2, "A section")
    # a formula line looks like a heading but is prose (fewer than three blank lines follow)
    assert found["= 1 henry and capacitance C ="] is None
    assert wikitext.heading([" = = = 2000 – 2005 = = = ", "", "", ""], 0) == (3, "2000 – 2005")
    assert wikitext.heading([" He scored = 3 points .", "", "", ""], 0) is None
    assert wikitext.heading([" = = Unbalanced = ", "", "", ""], 0) is None
    assert wikitext.detokenize(" a 1 @,@ 000 @-@ year @-@ old , 3 @.@ 5 m ") == (
        "a 1,000-year-old , 3.5 m"
    )
    assert wikitext.detokenize(' He said " stop . " ( it was n\'t ) ', readable=True) == (
        'He said "stop." (it wasn\'t)'
    )


def test_read_wikitext_leaves_out_headings() -> None:
    paragraphs = list(corpus.read_wikitext(HAND_TEXT.splitlines()))
    assert [p.article for p in paragraphs] == [0, 0, 0, 1, 1]
    assert paragraphs[0].words[:3] == ("The", "cat", "sat")
    assert "1,000-year-old" in paragraphs[0].words
    assert paragraphs[2].words[0] == "="  # the formula line is prose
    articles = wikitext.read_articles(HAND_TEXT.splitlines())
    assert [(a.title, len(a.sections)) for a in articles] == [
        ("First Article", 2),
        ("Second Article", 1),
    ]
    # each kept section's heading, the lead's being the title
    assert [a.headings for a in articles] == [["First Article", "A section"], ["Second Article"]]


def _split(text: str) -> List[str]:
    return text.split()


def test_sentence_starts() -> None:
    words = _split('He said " stop . " Then the U.S. team left ( for good . ) The end !')
    starts = corpus.sentence_starts(words)
    assert [w for w, s in zip(words, starts, strict=True) if s] == ["He", "Then", "The"]
    # An opening quote after a full stop starts the next sentence.
    words = _split('It ended . " Why ? " she asked .')
    starts = corpus.sentence_starts(words)
    assert [i for i, s in enumerate(starts) if s] == [0, 3]
    assert corpus.sentence_starts([]) == []


# -- windows ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seq_len", [16, 24, 128])
def test_cut_windows(tokenizer: Any, seq_len: int) -> None:
    paragraphs = list(corpus.read_wikitext(HAND_TEXT.splitlines()))
    stats = corpus.WindowingStats()
    windows = list(corpus.cut_windows(paragraphs, tokenizer, seq_len=seq_len, stats=stats))
    # No text lost, order kept, articles never mixed.
    assert [w for win in windows for w in win.words] == [w for p in paragraphs for w in p.words]
    assert stats.dropped_words == 0
    assert stats.n_words == sum(len(p.words) for p in paragraphs)
    for window in windows:
        ids = tokenizer(" ".join(window.words))["input_ids"]
        assert len(ids) <= seq_len
        assert len(ids) == window.n_wordpieces + 2
    articles = [w.article for w in windows]
    assert articles == sorted(articles) and set(articles) == {0, 1}
    if seq_len == 128:
        assert len(windows) == 2  # one per article
    else:
        assert len(windows) > 2
        # A window is only cut short when the next word would not fit.
        for window, following in zip(windows, windows[1:], strict=False):
            if following.article == window.article:
                first = int(corpus.wordpiece_counts(tokenizer, following.words[:1])[0])
                assert window.n_wordpieces + first > seq_len - 2


def test_window_docs_round_trip(tokenizer: Any, tmp_path: Path) -> None:
    vocab = Vocab()
    paragraphs = corpus.read_wikitext(HAND_TEXT.splitlines())
    windows = list(corpus.cut_windows(paragraphs, tokenizer, seq_len=24))
    docs = [corpus.window_doc(vocab, window) for window in windows]
    path = corpus.save_windows(docs, tmp_path / "w.spacy")
    loaded = corpus.load_windows(path, vocab)
    assert [d.text for d in loaded] == [" ".join(w.words) for w in windows]
    for doc, window in zip(loaded, windows, strict=True):
        starts = [bool(t.is_sent_start) for t in doc]
        assert starts[1:] == window.sent_starts[1:]
        assert doc.user_data["n_wordpieces"] == window.n_wordpieces
    assert len(corpus.load_windows(path, vocab, n_windows=2)) == 2
    assert corpus.select_windows(10, 3).tolist() == [0, 4, 9]  # spread evenly
    assert corpus.select_windows(3, 0).tolist() == [0, 1, 2]


def test_wordpiece_categories() -> None:
    punct = np.zeros(20, dtype=bool)
    punct[[5, 6]] = True
    ids = np.array([1, 7, 5, 8, 6, 3, 2, 0, 0])
    valid = np.array([1, 1, 1, 1, 1, 1, 1, 0, 0], dtype=bool)
    cats = corpus.wordpiece_categories(ids, valid, punct, {"cls": 1, "sep": 2, "other": [3]})
    assert cats.tolist() == [CLS, WORD, PUNCT, WORD, PUNCT, SEP, SEP, PAD, PAD]


def test_punctuation_ids(tokenizer: Any) -> None:
    table = corpus.punctuation_ids(tokenizer)
    for piece, expected in (
        (".", True),
        (",", True),
        ("$", True),
        ("cat", False),
        ("##s", False),
        ("1974", False),
    ):
        assert table[tokenizer.convert_tokens_to_ids(piece)] == expected, piece


def test_wordpiece_sentence_ids() -> None:
    # Tokens: "It ends . Next one ." with sentences [0, 0, 0, 1, 1, 1]; wordpieces:
    # [CLS] it end ##s . next one . [SEP] [PAD]
    doc = Doc(
        Vocab(),
        words=["It", "ends", ".", "Next", "one", "."],
        sent_starts=[True, False, False, True, False, False],
    )
    rows = np.array([1, 2, 3, 4, 5, 6, 7], dtype="int32")
    lengths = np.array([1, 2, 1, 1, 1, 1], dtype="int32")
    align = Ragged(rows, lengths)  # type: ignore[arg-type]
    got = corpus.wordpiece_sentence_ids(doc, align, 10)
    assert got.tolist() == [-1, 0, 0, 0, 0, 1, 1, 1, -1, -1]
    assert corpus.token_sentence_ids(doc).tolist() == [0, 0, 0, 1, 1, 1]


# -- extra statistics ---------------------------------------------------------------------------


def test_random_pair_distance() -> None:
    mask = np.ones(10, dtype=bool)
    assert window_stats.random_pair_distance(mask) == pytest.approx(11 / 3)
    mask = np.zeros(6, dtype=bool)
    mask[[0, 2, 5]] = True  # pairs 2, 5, 3
    assert window_stats.random_pair_distance(mask) == pytest.approx(10 / 3)
    assert window_stats.random_pair_distance(np.zeros(4, bool)) == 0.0


def test_separator_columns() -> None:
    sums = np.array([[1.0, 0.0, 4.0, 1.0], [0.0, 0.0, 4.0, 2.0]])  # summed: 1 0 8 3
    assert window_stats.separator_columns(sums, 0.3).tolist() == [False, False, True, True]


def test_near_diagonal_share() -> None:
    maps = np.zeros((2, 5, 5))
    maps[0, 0, 1] = maps[0, 1, 0] = 1.0  # distance 1
    maps[0, 0, 4] = 2.0  # distance 4
    maps[0, 2, 2] = 9.0  # diagonal: ignored
    got = window_stats.near_diagonal_share(maps, width=2)
    assert got[0] == pytest.approx(0.5) and np.isnan(got[1])


def test_similarity_histogram() -> None:
    hist = window_stats.SimilarityHistogram(n_layers=1, bins=10)
    maps = np.zeros((1, 2, 4, 4))
    # Upper-triangle pairs of positions 0..2 (position 3 masked out): (0,1) (0,2) (1,2).
    maps[0, 0, 0, 1], maps[0, 0, 0, 2], maps[0, 0, 1, 2] = 0.05, 0.35, 0.95
    maps[0, 1, 0, 1], maps[0, 1, 0, 2], maps[0, 1, 1, 2] = -0.2, 0.65, 1.0
    maps[0, :, 0, 3] = 0.5  # masked
    hist.update(maps, np.array([1, 1, 1, 0], dtype=bool))
    assert hist.counts[0].tolist() == [1, 0, 0, 1, 0, 0, 1, 0, 0, 2]
    assert hist.negative.tolist() == [1]
    result = hist.result()
    assert result["below_0.1"] == [pytest.approx(2 / 6)]
    assert result["0.1_to_0.6"] == [pytest.approx(1 / 6)]
    assert result["0.6_and_above"] == [pytest.approx(3 / 6)]
    assert result["above_threshold_0.3"] == [pytest.approx(4 / 6)]
    # 1/6 over 5 bins against 3/6 over 4 bins.
    assert result["gap_density_ratio"] == [pytest.approx((1 / 30) / (3 / 24))]


def test_block_contrast() -> None:
    # Positions 1..4 real; separator at 2: blocks {1, 2} and {3, 4}.
    maps = np.zeros((1, 6, 6))
    maps[0, 1, 2] = 0.9  # within
    maps[0, 3, 4] = 0.5  # within
    maps[0, 1, 3] = 0.1  # between
    maps[0, 2, 4] = 0.4  # between
    maps[0, 0, 5] = 5.0  # special positions: ignored
    mask = np.array([0, 1, 1, 1, 1, 0], dtype=bool)
    flags = np.array([0, 0, 1, 0, 0, 0], dtype=bool)
    contrast = window_stats.BlockContrast(1, threshold=0.3)
    contrast.update(maps, mask, flags)
    result = contrast.result()
    assert result["within_mean"] == [pytest.approx(1.4 / 2)]  # pairs (1,2), (3,4)
    assert result["between_mean"] == [pytest.approx(0.5 / 4)]  # (1,3) (1,4) (2,3) (2,4)
    assert result["pooled_ratio"] == pytest.approx(0.7 / 0.125)
    assert result["high_within_share"] == [pytest.approx(2 / 3)]
    assert result["high_within_chance"] == [pytest.approx(2 / 6)]
    assert result["mean_separators"] == pytest.approx(1.0)
    merged = window_stats.BlockContrast(1, threshold=0.3)
    merged.merge(contrast).merge(contrast)
    assert merged.result()["within_mean"] == result["within_mean"]


def test_window_reference_and_shared_component() -> None:
    reference = window_stats.WindowReference(seq_len=6)
    reference.update(np.array([0, 1, 1, 1, 1, 0], bool), np.array([-1, 0, 0, 1, 1, -1]))
    result = reference.result()
    assert result["mean_sentences"] == pytest.approx(2.0)
    assert result["mean_random_pair_distance"] == pytest.approx(5 / 3)
    shared = window_stats.SharedComponent(n_layers=1, n_heads=2)
    context = np.zeros((1, 3, 4))
    context[0, :, :2] = [1.0, 2.0]  # head 0: identical vectors -> share 1
    context[0, 0, 2:], context[0, 1, 2:] = [1.0, 0.0], [-1.0, 0.0]  # head 1: mean 0
    shared.update(context, np.array([1, 1, 0], bool))
    assert shared.result()["share"] == [[pytest.approx(1.0), pytest.approx(0.0)]]


def test_window_accumulators_merge_as_one_pass() -> None:
    """Every window statistic fed with two shards and merged equals one fed with all."""
    rng = np.random.default_rng(3)
    windows = []
    for _ in range(6):
        mask = rng.random(6) < 0.8
        windows.append(
            {
                "maps": rng.random((2, 6, 6)),
                "mask": mask,
                "flags": rng.random(6) < 0.3,
                "sentences": np.where(mask, np.cumsum(rng.random(6) < 0.3), -1),
                "context": rng.normal(size=(1, 6, 4)),
            }
        )

    def fed(part: List[Dict[str, Any]]) -> List[Any]:
        made = [
            window_stats.SimilarityHistogram(n_layers=1, bins=5),
            window_stats.BlockContrast(2, threshold=0.3),
            window_stats.WindowReference(seq_len=6),
            window_stats.SharedComponent(n_layers=1, n_heads=2),
        ]
        for w in part:
            made[0].update(w["maps"][None], w["mask"])
            made[1].update(w["maps"], w["mask"], w["flags"])
            made[2].update(w["mask"], w["sentences"])
            made[3].update(w["context"], w["mask"])
        return made

    for whole, first, rest in zip(fed(windows), fed(windows[:2]), fed(windows[2:]), strict=True):
        merged = first.merge(rest)
        assert merged.n_windows == 6
        assert_close(merged.result(), whole.result())


def assert_close(got: Any, expected: Any) -> None:
    """Equal JSON-able results, numbers up to rounding (sums are taken in another order)."""
    if isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            assert_close(got[key], expected[key])
    elif isinstance(expected, list):
        assert len(got) == len(expected)
        for a, b in zip(got, expected, strict=True):
            assert_close(a, b)
    elif isinstance(expected, float):
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
    else:
        assert got == expected


def test_claims_without_results() -> None:
    claims = evaluate_claims({"corpus": None, "attention": None, "pairs": None})
    assert claims and all(c.holds is None for c in claims)
    text = render_report({}, claims, figures_dir="figures", report_path="reports/x.md")
    assert "0 of 0 claims hold" in text and "not measured" in text


# -- end to end with the embedded MiniLM ----------------------------------------------------------


@pytest.fixture(scope="module")
def analysis_run(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    from paper import run

    out = tmp_path_factory.mktemp("analysis")
    metrics, figures = out / "metrics", out / "figures"
    config = CONFIGS / "minilm.cfg"
    windows = out / "windows.spacy"
    results = {
        "corpus": run.run_windows(WIKITEXT, windows, metrics, model=config),
        "attention": run.run_attention(
            config, windows, metrics, figures, n_windows=5, batch_size=4, progress=False
        ),
        "example": run.run_example(config, windows, metrics, figures),
        "pairs": run.run_pairs(
            config, windows, metrics, figures, n_windows=5, batch_size=4, progress=False
        ),
    }
    return {"out": out, "metrics": metrics, "figures": figures, "results": results}


def test_end_to_end_json_and_figures(analysis_run: Dict[str, Any]) -> None:
    results = analysis_run["results"]
    assert results["corpus"]["n_windows"] > 2000  # all of WikiText-2 test
    assert results["corpus"]["dropped_words"] == 0
    assert results["attention"]["run"]["n_windows"] == 5
    assert results["pairs"]["pairs"]["n_windows"] == 5
    for name in ("corpus", "attention", "example", "pairs"):
        data = json.loads((analysis_run["metrics"] / f"{name}.json").read_text())
        assert data == json.loads(json.dumps(results[name]))
    shares = np.asarray(results["attention"]["received"]["layer_share"], dtype=float)
    assert shares.shape == (6, 5) and np.allclose(shares.sum(axis=1), 1.0)
    example = results["example"]
    assert example["wordpieces"][0] == "[CLS]" and example["wordpieces"][-1] == "[SEP]"
    assert len(example["wordpieces"]) <= corpus.SEQ_LEN
    expected = {
        "fig02_summed_attention.png",
        "fig03_column_zeroing.png",
        "fig04_received.png",
        "fig04_window_attention.png",
        "fig05_block_similarity.png",
        "fig06_repeated_tokens.png",
        "fig07_distances.png",
        "fig08_same_sentence.png",
        "fig10_locations.png",
        "fig11_anchors.png",
        "fig12_layer_similarity.png",
        "fig12_layer_similarity_window.png",
        "fig13_layer_distances.png",
        "fig_similarity_distribution.png",
    }
    written = {p.name for p in analysis_run["figures"].glob("*.png")}
    assert expected <= written
    for name in expected:
        assert (analysis_run["figures"] / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_end_to_end_window_arrays(analysis_run: Dict[str, Any]) -> None:
    """The arrays of a real window: specials, categories and sentence ids line up."""
    model = corpus.load_analysis_model(CONFIGS / "minilm.cfg", attentions=True, context=True)
    docs = corpus.load_windows(analysis_run["out"] / "windows.spacy", model.nlp.vocab, 2)
    arrays: List[corpus.WindowArrays] = list(corpus.iter_window_arrays(model, docs))
    assert len(arrays) == 2
    for window, doc in zip(arrays, docs, strict=True):
        n = window.length
        assert n == doc.user_data["n_wordpieces"] + 2 <= corpus.SEQ_LEN
        assert window.attn is not None and window.attn.shape == (6, 12, 128, 128)
        assert window.context is not None and window.context.shape == (6, 128, 384)
        assert window.categories[0] == CLS and window.categories[n - 1] == SEP
        assert (window.categories[n:] == PAD).all() and not window.valid[n:].any()
        assert window.sentence_ids[0] == -1 and window.sentence_ids[n - 1] == -1
        inner = window.sentence_ids[1 : n - 1]
        assert (np.diff(inner) >= 0).all()
        assert inner.max() + 1 == sum(1 for _ in doc.sents)
        assert np.allclose(window.attn[:, :, :n, :n].sum(axis=-1), 1.0, atol=1e-4)
        # Punctuation wordpieces are punctuation.
        pieces = [window.pieces[i] for i in np.flatnonzero(window.categories == PUNCT)]
        assert pieces and all(not p.isalnum() for p in pieces)


def test_end_to_end_report(analysis_run: Dict[str, Any]) -> None:
    from paper.claims import write_report
    from paper.run import load_metrics

    report = analysis_run["out"] / "reports" / "paper_claims.md"
    path, claims = write_report(
        load_metrics(analysis_run["metrics"]),
        figures_dir=analysis_run["figures"],
        report_path=report,
    )
    text = path.read_text()
    assert len(claims) >= 18 and all(c.holds is not None for c in claims)
    assert "](../figures/fig05_block_similarity.png)" in text
    assert text.count("\n| ") >= len(claims)
    for claim in claims:
        assert claim.statement.split("|")[0][:30] in text


def test_wikitext_markdown_pages_are_the_paragraph_docs_with_headings() -> None:
    """Each section of a Markdown page starts at its heading; without the heading lines
    a page is the same article as the set with blank lines between paragraphs."""
    from paper.topic_eval import wikitext_markdown_docs, wikitext_paragraph_docs

    pages, plain = wikitext_markdown_docs("tune"), wikitext_paragraph_docs("tune")
    assert len(pages) == len(plain) == 30
    for page, doc in zip(pages, plain, strict=True):
        blocks = page.text.split("\n\n")
        assert blocks[0].startswith("# ") and not blocks[1].startswith("#")
        assert [page.text[s : s + 1] for s in page.starts] == ["#"] * len(page.starts)
        assert len(page.starts) == len(doc.starts)
        assert "\n\n".join(b for b in blocks if not b.startswith("#")) == doc.text


def test_short_text_sets() -> None:
    """The sets of short texts: documents of one, two and three pieces of the synthetic
    set's texts, the same pieces with spaces or blank lines between them; and every EWT
    dev document of three or more sentences, one reference segment, its paragraphs
    those of ``# newpar``."""
    from paper.synthetic import build
    from paper.topic_eval import ewt_documents, short_docs, synthetic_texts

    spaced, paragraphs = short_docs("tune", 4), short_docs("tune", 4, "\n\n")
    assert [len(d.starts) for d in spaced] == [1] * 4 + [2] * 4 + [3] * 4
    built = build(synthetic_texts("tune"), n_docs=4, n_pieces=2, seed=22)
    assert [(d.text, d.starts) for d in spaced[4:8]] == [(d.text, d.starts) for d in built]
    for a, b in zip(spaced, paragraphs, strict=True):
        ends = [*a.starts[1:], len(a.text)]
        pieces = [a.text[x:y].strip() for x, y in zip(a.starts, ends, strict=True)]
        assert b.text == "\n\n".join(pieces) and "\n" not in a.text
        assert [b.text[x : x + 20] for x in b.starts] == [p[:20] for p in pieces]
    documents = ewt_documents("tune")
    assert len(documents) == 228 and all(d.starts == [0] for d in documents)
    assert sum("\n\n" in d.text for d in documents) > 100
    posts = [d.text for d in documents if d.text.startswith("What is the nearest National")]
    assert posts == [
        "What is the nearest National Park to Birmingham, UK?\n\nThe Peak District "
        "(Derbyshire) is the closest. The South Shropshire Hills are far closer. They are not "
        "a national park, but are extremely beautiful. www.visitsouthshropshire.co.uk"
    ]


def test_another_pipelines_segments_map_by_character_offset(
    default_nlp: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pipeline scored beside the default (``variants``) may tokenize otherwise: its
    segments map onto the default's tokens by character offset, so one that starts its
    segments exactly at the reference's characters scores Pk 0. (Here its tokens are the
    text's words with their punctuation, 7 before the change of topic where the default
    has 10: mapped by token index, its boundary would fall three tokens early.) Each
    pass over the set, and the scoring, has a progress bar on stderr named by the set
    and the step."""
    import spacy

    from paper.synthetic import TopicDocument
    from paper.topic_eval import run

    text = "Cats purr. Cats nap. Cats hunt mice. Rain falls. Rain floods roads. Rain stops."
    change = text.index("Rain")
    other = spacy.blank("en")
    other.tokenizer = lambda t: Doc(other.vocab, words=t.split(" "))

    @spacy.Language.component("test_char_segments")
    def char_segments(doc: Doc) -> Doc:
        doc.spans["attn_segments"] = [
            doc.char_span(0, change - 1),
            doc.char_span(change, len(text)),
        ]
        return doc

    other.add_pipe("test_char_segments")
    words = other(text)
    assert words.spans["attn_segments"][1].start == 7
    assert [t.text for t in default_nlp(text)].index("Rain") == 10
    table = run(
        default_nlp,
        None,
        [TopicDocument(text=text, starts=[0, change])],
        peers=False,
        tune=False,
        variants={"words": other},
        label="two topics",
    )
    assert table["words"]["pk"] == 0.0 and table["words"]["segments_per_doc"] == 2
    assert table["no boundary"]["pk"] > 0
    bars = capsys.readouterr().err
    for step in ("attn_segmenter", "words", "scores"):  # (no peers: the scores alone)
        assert f"two topics: {step}: 100%" in bars


def test_topic_evaluation_scores_only_the_sets_named(tmp_path: Any, monkeypatch: Any) -> None:
    """``only`` scores the named sets and never builds the others; an unknown name is
    refused before any pipeline loads, with the names it could be. Pipelines of other
    settings (``against``) and other models (``against_models``) get rows of their own,
    paired with the default's on the same documents."""
    import json

    from paper.synthetic import TopicDocument
    from paper.topic_eval import UnknownSets, evaluate
    from spacy_attnseg import load_pipeline

    def never() -> Any:
        raise AssertionError("a set that was not named was built")

    from spacy_attnseg.topics import PENALTY

    text = "Cats purr. Cats nap. Cats hunt mice. Rain falls. Rain floods roads. Rain stops."
    docs = [TopicDocument(text=text, starts=[0, text.index("Rain")])]
    # two more pipelines: the first's penalty is too high for any boundary (its row is
    # "no boundary"), the second's is the default's (its row is attn_segmenter's)
    key = "components.attn_segmenter.segment_penalty"
    payload = evaluate(
        "report",
        tmp_path / "only",
        peers=False,
        sets={"a": never, "b": lambda: docs},
        only=["b"],
        against=[{key: 1e6}, {key: PENALTY}],
        against_models=["attention"],
    )
    assert list(payload["results"]) == ["b"]
    assert json.loads((tmp_path / "only.json").read_text())["results"].keys() == {"b"}
    table = payload["results"]["b"]
    assert table["reference_segments_per_doc"] == 2.0
    # one document: each interval is its own score, and the paired one the difference
    own, none = table["attn_segmenter"], table["no boundary"]
    assert own["pk_interval"] == [own["pk"]] * 2 and "pk_minus_attn_segmenter" not in own
    assert none["pk_minus_attn_segmenter"] == [pytest.approx(none["pk"] - own["pk"], abs=1e-4)] * 2
    assert own["pk"] < none["pk"]  # the default finds the change of topic
    variant = table["attn_segmenter (segment_penalty=1000000.0)"]
    assert {k: v for k, v in variant.items() if k != "docs_per_s"} == none
    same = table[f"attn_segmenter (segment_penalty={PENALTY})"]
    assert same["pk_minus_attn_segmenter"] == [0.0, 0.0]
    paired = ("docs_per_s", "pk_minus_attn_segmenter")
    assert {k: v for k, v in same.items() if k not in paired} == {
        k: v for k, v in own.items() if k != "docs_per_s"
    }
    # another model with its own settings: its own row, paired with the default's on the
    # same document (one document: the interval is the difference itself)
    other = table["attn_segmenter (model=attention)"]
    assert (
        other["pk_minus_attn_segmenter"] == [pytest.approx(other["pk"] - own["pk"], abs=1e-4)] * 2
    )
    attention = load_pipeline("attention")(text)
    starts = [span.start for span in attention.spans["attn_segments"]]
    assert other["segments_per_doc"] == len(starts)
    report = (tmp_path / "only.md").read_text()
    assert f"| no boundary | {none['pk']:.3f} | {none['pk']:.3f} to {none['pk']:.3f} | " in report
    assert is_png(tmp_path / "only.png")  # the same results, drawn

    def no_load(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a pipeline loaded before the set names were checked")

    monkeypatch.setattr("spacy_attnseg.load_pipeline", no_load)
    with pytest.raises(UnknownSets, match=r"\['c'\].*\['a', 'b'\]"):
        evaluate("tune", tmp_path / "x", sets={"a": never, "b": never}, only=["c"])
    assert not (tmp_path / "x.json").exists()


def test_tuning_half_scores_its_lowercase_set_only_when_named(
    tmp_path: Any, monkeypatch: Any
) -> None:
    """On the tuning half the WikiText pieces written as a transcript (the set that chose
    ``piece_tokens``) are scored only when named, so the sets that choose every other
    setting stay nine; named, they are the only set scored, built from the tuning half.
    The hard-wrapped articles (paragraphs marked by nothing, or by indented first lines)
    and the WikiText pieces as subtitles and double-spaced are scored only when named,
    on either half."""
    from paper import topic_eval
    from paper.synthetic import TopicDocument

    text = "Cats purr. Cats nap. Cats hunt mice. Rain falls. Rain floods roads. Rain stops."
    built: List[tuple] = []

    def maker(name: str) -> Any:
        def make(half: str, *args: Any) -> List[TopicDocument]:
            built.append((name, half, *args))
            return [TopicDocument(text=text, starts=[0, text.index("Rain")])]

        return make

    for name in (
        "synthetic_docs",
        "wikipieces_docs",
        "wikitext_docs",
        "wikitext_paragraph_docs",
        "wikitext_markdown_docs",
        "wikitext_wrapped_docs",
        "ewt_documents",
        "short_docs",
    ):
        monkeypatch.setattr(topic_eval, name, maker(name))
    tuned = topic_eval.evaluate("tune", tmp_path / "nine", peers=False)["results"]
    assert len(tuned) == 9 and topic_eval.SPOKEN_PIECES not in tuned
    assert not {topic_eval.WRAPPED_PARAGRAPHS, topic_eval.INDENTED_PARAGRAPHS} & set(tuned)
    assert not [b for b in built if b[0] == "wikitext_wrapped_docs"]
    built.clear()
    wrapped = topic_eval.evaluate(
        "tune",
        tmp_path / "wrapped",
        peers=False,
        only=[topic_eval.WRAPPED_PARAGRAPHS, topic_eval.INDENTED_PARAGRAPHS],
    )["results"]
    assert list(wrapped) == [topic_eval.WRAPPED_PARAGRAPHS, topic_eval.INDENTED_PARAGRAPHS]
    assert built == [("wikitext_wrapped_docs", "tune"), ("wikitext_wrapped_docs", "tune", "    ")]
    assert ("wikipieces_docs", "tune", 40, topic_eval.spoken) not in built
    built.clear()
    named = topic_eval.evaluate(
        "tune", tmp_path / "named", peers=False, only=[topic_eval.SPOKEN_PIECES]
    )["results"]
    assert list(named) == [topic_eval.SPOKEN_PIECES]
    assert built == [("wikipieces_docs", "tune", 40, topic_eval.spoken)]
    assert not {topic_eval.CUE_PIECES, topic_eval.DOUBLE_PIECES} & set(tuned)
    built.clear()
    layouts = [topic_eval.CUE_PIECES, topic_eval.DOUBLE_PIECES]
    laid = topic_eval.evaluate("tune", tmp_path / "laid", peers=False, only=layouts)["results"]
    assert list(laid) == layouts
    assert built == [("wikipieces_docs", "tune", 40), ("wikipieces_docs", "tune", 40)]


def test_sweep_option_adds_one_pipeline_a_value(monkeypatch: Any) -> None:
    """``scripts/evaluate_topics.py --sweep KEY=V1,V2`` asks for one more pipeline per
    value (after the one of ``--against``'s settings), values parsed as ``--set``'s; a
    sweep without values is refused before anything loads."""
    import torch
    from conftest import load_script

    script = load_script("evaluate_topics")
    calls: List[Dict[str, Any]] = []
    monkeypatch.setattr(script, "evaluate", lambda *args, **kwargs: calls.append(kwargs))
    key = "components.attn_segmenter."
    threads = ["--threads", str(torch.get_num_threads())]  # (the script sets torch's)
    script.main(
        ["--no-peers", "--set", "piece_tokens=8", "--against", "long_sentence_tokens=0", *threads]
        + ["--against", "segment_vectors=hidden", "--sweep", "piece_tokens=24, 32"]
        + ["--against-model", "mpnet", "--against-model", "configs/minilm.cfg"]
    )
    assert calls[0]["overrides"] == {f"{key}piece_tokens": 8}
    assert calls[0]["against"] == [
        {f"{key}long_sentence_tokens": 0, f"{key}segment_vectors": "hidden"},
        {f"{key}piece_tokens": 24},
        {f"{key}piece_tokens": 32},
    ]
    assert calls[0]["against_models"] == ["mpnet", "configs/minilm.cfg"]
    script.main(["--no-peers", *threads])
    assert calls[1]["against"] == [] and calls[1]["against_models"] == []
    for wrong in ("piece_tokens", "piece_tokens=", "=24"):
        with pytest.raises(SystemExit) as refused:
            script.main(["--sweep", wrong])
        assert refused.value.code == 2
    assert len(calls) == 2
    assert calls[1]["replays"] == {}
    script.main(["--no-peers", "--replay", "pieces_ratio=1.5, null", *threads])
    assert calls[2]["replays"] == {"pieces_ratio": [1.5, None]}
    # (a keyword topics.segment lacks, or a value that is no finite number, stops before a
    # pass)
    wrongs = ["pieces_ratios=1.5", "means=1", "pieces_ratio=", "pieces_ratio=high"]
    for wrong in [*wrongs, "pieces_ratio=nan", "pieces_ratio=inf"]:
        with pytest.raises(SystemExit) as refused:
            script.main(["--replay", wrong])
        assert refused.value.code == 2
    assert len(calls) == 3


@pytest.mark.parametrize("long_sentence_tokens", [0, 3])
def test_penalty_sweep_at_the_default_penalty_repeats_the_default(
    tmp_path: Any, long_sentence_tokens: int
) -> None:
    """A penalty swept from the same pass (``penalties``) at the component's own penalty
    gives the component's row, also where a document is too short to split (two
    sentences: the component returns one segment before the partition runs), and where
    the units are pieces of sentences (``long_sentence_tokens`` 3, pieces of 2)."""
    from paper.synthetic import TopicDocument
    from paper.topic_eval import evaluate
    from spacy_attnseg.topics import PENALTY

    text = "Cats purr. Cats nap. Cats hunt mice. Rain falls. Rain floods roads. Rain stops."
    short = "Snow fell. It melted."
    docs = [
        TopicDocument(text=text, starts=[0, text.index("Rain")]),
        TopicDocument(text=short, starts=[0]),
    ]
    key = "components.attn_segmenter."
    payload = evaluate(
        "report",
        tmp_path / "sweep",
        overrides={f"{key}long_sentence_tokens": long_sentence_tokens, f"{key}piece_tokens": 2},
        peers=False,
        sets={"b": lambda: docs},
        penalties=[PENALTY],
    )
    table = payload["results"]["b"]
    own, swept = table["attn_segmenter"], table[f"attn_segmenter (penalty {PENALTY})"]
    assert {
        k: v for k, v in swept.items() if k not in ("docs_per_s", "pk_minus_attn_segmenter")
    } == {k: v for k, v in own.items() if k != "docs_per_s"}
    assert swept["pk_minus_attn_segmenter"] == [0.0, 0.0]


def test_a_replayed_setting_is_the_component_with_that_setting(tmp_path: Any) -> None:
    """A keyword of ``topics.segment`` replayed from the same pass (``replays``) gives
    what the component gives with that setting: ten WikiText pieces, each a paragraph,
    cut where each begins at the shipped ``pieces_ratio`` (the component's row) and
    left whole where the paragraphs never read as pieces (null: the component's own
    segments with ``segment_pieces_ratio`` null, from a pass of its own)."""
    import spacy_attnseg
    from paper.topic_eval import evaluate, wikipieces_docs
    from spacy_attnseg.topics import PIECES_RATIO

    pieces = wikipieces_docs("tune", 4, separator="\n\n")[3]
    payload = evaluate(
        "report",
        tmp_path / "replay",
        peers=False,
        sets={"p": lambda: [pieces]},
        replays={"pieces_ratio": [PIECES_RATIO, None]},
    )
    table = payload["results"]["p"]
    own, shipped = table["attn_segmenter"], table[f"attn_segmenter (pieces_ratio {PIECES_RATIO})"]
    assert own["segments_per_doc"] == len(pieces.starts) == 10
    assert shipped["pk"] == own["pk"] and shipped["segments_per_doc"] == 10
    never = spacy_attnseg.load_pipeline(
        "default", overrides={"components.attn_segmenter.segment_pieces_ratio": None}
    )
    assert len(never(pieces.text).spans["attn_segments"]) == 1
    assert table["attn_segmenter (pieces_ratio None)"]["segments_per_doc"] == 1
    # a replayed row named as a swept penalty's would replace it: refused before the pass
    with pytest.raises(ValueError, match="two rows named 'attn_segmenter \\(penalty 0.5\\)'"):
        evaluate(
            "report",
            tmp_path / "both",
            peers=False,
            sets={"p": lambda: [pieces]},
            penalties=[0.5],
            replays={"penalty": [0.5]},
        )


def pieces(doc: Any) -> List[str]:
    """The text of each reference segment of a ``TopicDocument``."""
    ends = [*doc.starts[1:], len(doc.text)]
    return [doc.text[a:b] for a, b in zip(doc.starts, ends, strict=True)]


def test_spoken_pieces_are_the_wikitext_pieces_without_punctuation_or_capitals() -> None:
    """The transcript set keeps every word of the punctuated pieces (lower case, its
    marks at the ends dropped, WikiText's joins closed) and the same topic changes."""
    import re

    from paper.topic_eval import spoken, wikipieces_docs

    assert spoken('The 1 @,@ 000 @-@ year " war " ( of U.S. ) ended , didn \'t it ?') == (
        "the 1,000-year war of u.s ended didn't it"
    )
    spoken_docs, written = wikipieces_docs("tune", 3, spoken), wikipieces_docs("tune", 3)
    for doc, plain in zip(spoken_docs, written, strict=True):
        assert doc.text == doc.text.lower() and not re.search(r"(^|\s)\W|\W(\s|$)", doc.text)
        assert len(doc.starts) == len(plain.starts) == 10
        for piece, original in zip(pieces(doc), pieces(plain), strict=True):
            words = re.findall(r"[a-z0-9]+", original.lower())
            assert re.findall(r"[a-z0-9]+", piece) == words


def test_subtitles_and_double_spaced_pages_keep_the_pieces() -> None:
    """``subtitle_cues``: the WikiText pieces' words in numbered cues of nine, each with
    its timing line (three seconds a cue), its words wrapped at 42 characters, the cues
    apart by blank lines; ``double_spaced_page``: the same words wrapped at 72 with a
    blank line below every line. The reference starts at the same words in each."""
    from paper.topic_eval import double_spaced_page, subtitle_cues, wikipieces_docs

    cue = re.compile(r"(\d+)\n(\d\d:\d\d:\d\d),000 --> (\d\d:\d\d:\d\d),000\n")
    for doc in wikipieces_docs("report", 3):
        firsts = [doc.text[s:].split()[0] for s in doc.starts]
        cues = subtitle_cues(doc)
        heads = list(cue.finditer(cues.text))
        assert [int(m.group(1)) for m in heads] == list(range(1, len(heads) + 1))
        seconds = [3 * k for k in range(len(heads) + 1)]
        stamps = [f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}" for s in seconds]
        assert [(m.group(2), m.group(3)) for m in heads] == list(
            zip(stamps[:-1], stamps[1:], strict=True)
        )
        bodies = cue.split(cues.text)[4::4]
        assert all(b.endswith("\n\n") and "\n\n" not in b[:-2] for b in bodies)
        assert [len(b.split()) for b in bodies[:-1]] == [9] * (len(bodies) - 1)
        assert " ".join(bodies).split() == doc.text.split()
        assert max(len(line) for b in bodies for line in b.split("\n")) <= 42
        assert [cues.text[s:].split()[0] for s in cues.starts] == firsts
        page = double_spaced_page(doc)
        lines = page.text.split("\n\n")
        assert all(line and "\n" not in line and len(line) <= 72 for line in lines)
        assert " ".join(lines).split() == doc.text.split()
        assert [page.text[s:].split()[0] for s in page.starts] == firsts


def test_titled_pieces_keep_the_pieces() -> None:
    """``titled``: the WikiText pieces below a title line and a blank line; the first
    reference segment starts at the title, the others at the same words."""
    from paper.topic_eval import PIECES_TITLE, titled, wikipieces_docs

    for doc in wikipieces_docs("report", 3):
        page = titled(doc)
        assert page.text == f"{PIECES_TITLE}\n\n{doc.text}"
        assert doc.starts[0] == page.starts[0] == 0 and len(page.starts) == len(doc.starts)
        firsts = [doc.text[s:].split()[0] for s in doc.starts[1:]]
        assert [page.text[s:].split()[0] for s in page.starts[1:]] == firsts


def test_pieces_below_front_matter_keep_the_pieces() -> None:
    """``below_front_matter``: the WikiText pieces as one paragraph below five short
    paragraphs, each followed by a blank line; the front matter is a reference segment
    of its own, and the others start at the same words."""
    from paper.topic_eval import FRONT_MATTER, below_front_matter, wikipieces_docs

    for doc in wikipieces_docs("report", 3):
        page = below_front_matter(doc)
        head = "\n\n".join(FRONT_MATTER) + "\n\n"
        assert page.text == head + doc.text
        assert page.starts == [0] + [len(head) + s for s in doc.starts]
        assert [page.text[s:].split()[0] for s in page.starts[1:]] == [
            doc.text[s:].split()[0] for s in doc.starts
        ]


@pytest.mark.parametrize("interview", [False, True])
def test_a_meeting_transcript_keeps_the_pieces(interview: bool) -> None:
    """``meeting_transcript``: the WikiText pieces' sentences, lower case without
    punctuation (``spoken``), in turns of one or two sentences a line after the labels
    of four speakers in turn, a listener's backchannel after some turns inside a piece;
    each piece opens a turn, where its reference starts, and no turn holds two pieces.
    As an interview (``INTERVIEW_PIECES``' form): every turn the interviewee's
    (``"A: ..."``), every listener's line an interviewer's question (``"Q: go on"``)."""
    from paper.topic_eval import (
        INTERVIEWEE,
        INTERVIEWER,
        LISTENER_LINES,
        QUESTION_LINES,
        meeting_transcript,
        spoken,
        wikipieces_docs,
    )

    heard = QUESTION_LINES if interview else LISTENER_LINES
    for seed, doc in enumerate(wikipieces_docs("report", 3)):
        if interview:
            transcript = meeting_transcript(doc, seed, QUESTION_LINES, INTERVIEWEE, INTERVIEWER)
        else:
            transcript = meeting_transcript(doc, seed)
        lines = transcript.text.rstrip("\n").split("\n")
        labels = [line.split(": ", 1)[0] for line in lines]
        said = [line.split(": ", 1)[1] for line in lines]
        listened = [k for k, words in enumerate(said) if words in heard]
        assert listened and 0 not in listened
        if interview:
            assert labels == [
                INTERVIEWER if k in listened else INTERVIEWEE for k in range(len(lines))
            ]
        else:
            assert labels == ["ABCD"[k % 4] for k in range(len(lines))]
        turns = [words for k, words in enumerate(said) if k not in listened]
        assert " ".join(turns).split() == spoken(doc.text).split()
        offsets = [sum(len(line) + 1 for line in lines[:k]) for k in range(len(lines))]
        assert set(transcript.starts) <= set(offsets)
        firsts = [offsets.index(s) for s in transcript.starts]
        pieces = zip(doc.starts, [*doc.starts[1:], len(doc.text)], strict=True)
        lasts = [*firsts[1:], len(lines)]
        for (a, b), first, last in zip(pieces, firsts, lasts, strict=True):
            words = [w for k in range(first, last) if k not in listened for w in said[k].split()]
            assert words == spoken(doc.text[a:b]).split()


def test_a_headed_transcript_keeps_the_pieces() -> None:
    """``headed_transcript``: the WikiText pieces' sentences, punctuated (the same
    characters, spaced as prose), in turns of one
    to three sentences, each below a line of a speaker's name and a time that grows
    (``HEADED_SPEAKERS`` in turn), the turns apart by blank lines; each piece opens a
    turn, where its reference starts at the header. As a chat, the same without the
    blank lines."""
    from paper.topic_eval import HEADED_SPEAKERS, headed_transcript, wikipieces_docs
    from paper.wikitext import detokenize

    for seed, doc in enumerate(wikipieces_docs("report", 3)):
        transcript = headed_transcript(doc, seed)
        turns = transcript.text.split("\n\n")
        assert turns[-1] == ""
        chat = headed_transcript(doc, seed, "\n")
        assert chat.text == transcript.text.replace("\n\n", "\n")
        assert chat.starts == [s - transcript.text.count("\n\n", 0, s) for s in transcript.starts]
        headers = [turn.split("\n", 1)[0] for turn in turns[:-1]]
        names = [header.split("  ")[0] for header in headers]
        assert names == [HEADED_SPEAKERS[k % 3] for k in range(len(names))]
        times = [header.split("  ")[1].split(":") for header in headers]
        seconds = [60 * int(m) + int(s) for m, s in times]
        assert seconds == sorted(set(seconds))
        said = " ".join(turn.split("\n", 1)[1] for turn in turns[:-1])
        assert "".join(said.split()) == "".join(detokenize(doc.text).split())
        offsets = [transcript.text.index(turn) for turn in turns[:-1]]
        assert set(transcript.starts) <= set(offsets)
        assert len(transcript.starts) == len(doc.starts)


@pytest.mark.parametrize("indent", ["", "    "])
def test_wrapped_articles_keep_the_sections(indent: str) -> None:
    """``wikitext_wrapped_docs``: each article's paragraphs hard-wrapped at 72 between
    words, their first lines indented by ``indent``, no blank lines, and the reference
    where each section's first paragraph begins (the paragraphs of the blank-line form,
    in order); in tokens, the first section starts at the document's start, before its
    indent, and every section at a token of its own."""
    from paper.topic_eval import token_starts, wikitext_paragraph_docs, wikitext_wrapped_docs

    tokenizer = spacy.blank("en")
    wrapped = wikitext_wrapped_docs("report", indent)
    blank = wikitext_paragraph_docs("report")
    assert len(wrapped) == len(blank) == 30
    for doc, plain in zip(wrapped, blank, strict=True):
        assert "\n\n" not in doc.text
        assert max(len(line) for line in doc.text.split("\n")) <= 72
        assert " ".join(doc.text.split()) == " ".join(plain.text.split())
        firsts = [plain.text[s:].split()[0] for s in plain.starts]
        assert [doc.text[s:].split()[0] for s in doc.starts] == firsts
        assert all(
            s == len(indent) or doc.text[s - len(indent) - 1 : s] == "\n" + indent
            for s in doc.starts
        )
        tokens = tokenizer.make_doc(doc.text)
        reference = token_starts(tokens, doc.starts)
        assert reference[0] == 0 and len(reference) == len(doc.starts)
        assert [tokens[i].idx for i in reference[1:]] == doc.starts[1:]
        if indent:
            paragraphs = plain.text.split("\n\n")
            opened = [line for line in doc.text.split("\n") if line.startswith(indent)]
            assert [line[4:] for line in opened] == [
                p[: len(line) - 4] for p, line in zip(paragraphs, opened, strict=True)
            ]
