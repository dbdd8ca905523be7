"""Statistics and figures of ``spacy_attnseg.analysis`` on small hand-made windows."""

import json
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import pytest

from paper import figures
from paper.stats import (
    CLS,
    PAD,
    PUNCT,
    SEP,
    WORD,
    AttentionReceived,
    PairStatistics,
    SummedAttention,
    band_mass,
    block_matrix,
    high_attention_columns,
    high_similarity_pairs_window,
    normalised_similarity,
    same_sentence_chance,
)

Window = Dict[str, np.ndarray]


# -- synthetic windows ------------------------------------------------------------------------


def make_window(
    rng: np.random.Generator, n_layers: int = 3, n_heads: int = 4, length: int = 16, d: int = 4
) -> Window:
    """A random window with [CLS], sentences ending in punctuation, [SEP] and padding;
    head outputs built so that some pairs repeat tokens, share sentences or lie close."""
    n_valid = int(rng.integers(length // 2, length + 1))
    categories = np.full(length, PAD)
    categories[:n_valid] = WORD
    categories[0] = CLS
    categories[n_valid - 1] = SEP
    sentence_ids = np.full(length, -1)
    token_ids = np.zeros(length, dtype=np.int64)
    sentence = 0
    for pos in range(1, n_valid - 1):
        sentence_ids[pos] = sentence
        if rng.random() < 0.25 or pos == n_valid - 2:
            categories[pos] = PUNCT
            token_ids[pos] = 1012
            sentence += 1
        else:
            token_ids[pos] = 2000 + int(rng.integers(0, 6))
    token_ids[0], token_ids[n_valid - 1] = 101, 102
    valid = categories != PAD

    logits = rng.normal(size=(n_layers, n_heads, length, length))
    logits[:, :, :, ~valid] = -np.inf
    attn = np.exp(logits - logits.max(axis=-1, keepdims=True))
    attn /= attn.sum(axis=-1, keepdims=True)

    context = rng.normal(scale=0.3, size=(n_layers, length, n_heads * d))
    token_vectors = {t: rng.normal(size=d) for t in np.unique(token_ids)}
    for layer in range(n_layers):
        for head in range(n_heads):
            block = context[layer, :, head * d : (head + 1) * d]
            if head % 2 == 0:
                block += np.array([token_vectors[t] for t in token_ids])
            else:
                block += np.where(sentence_ids[:, None] % 2 == 0, 1.0, -1.0) * np.ones(d)
    return {
        "attn": attn,
        "context": context,
        "valid": valid,
        "token_ids": token_ids,
        "categories": categories,
        "sentence_ids": sentence_ids,
    }


def feed(
    windows: List[Window], n_layers: int = 3, n_heads: int = 4, length: int = 16
) -> Tuple[SummedAttention, AttentionReceived, PairStatistics]:
    summed = SummedAttention(n_layers, n_heads, length)
    received = AttentionReceived(n_layers, n_heads, length)
    pairs = PairStatistics(n_layers, n_heads, length)
    for w in windows:
        summed.update(w["attn"], w["valid"])
        received.update(w["attn"], w["valid"], w["categories"])
        pairs.update(w["context"], w["valid"], w["token_ids"], w["categories"], w["sentence_ids"])
    return summed, received, pairs


@pytest.fixture(scope="module")
def windows() -> List[Window]:
    rng = np.random.default_rng(0)
    return [make_window(rng) for _ in range(12)]


@pytest.fixture(scope="module")
def fed(windows: List[Window]) -> Tuple[SummedAttention, AttentionReceived, PairStatistics]:
    return feed(windows)


# -- a hand-made window -----------------------------------------------------------------------

# [CLS] w1 w2 w3 | w4 w5 w6 [SEP]: sentence 0 = positions 1-3, sentence 1 = positions 4-6.
HAND_TOKENS = np.array([101, 5, 7, 5, 9, 7, 5, 102])
HAND_CATEGORIES = np.array([CLS, WORD, WORD, WORD, WORD, WORD, WORD, SEP])
HAND_SENTENCES = np.array([-1, 0, 0, 0, 1, 1, 1, -1])
HAND_VALID = np.ones(8, dtype=bool)


def hand_context() -> np.ndarray:
    """One layer, three heads of dimension 2.

    Head 0: C[1,2] = C[1,6] = C[2,6] = 1, C[1,4] = C[2,4] = C[4,6] = 0.5, C[3,5] = 0.2
    (below 0.3); [CLS] and [SEP] have huge vectors that must not count. Head 1: only
    positions 2 and 5 (both token 7) are similar. Head 2: all zeros, no pairs.
    """
    head0 = np.array(
        [[10, 0], [1, 0], [1, 0], [0, 1], [0.5, 0], [0, 0.2], [1, 0], [10, 0]], dtype=float
    )
    head1 = np.zeros((8, 2))
    head1[[2, 5]] = [1.0, 0.0]
    head1[[0, 7]] = [5.0, 5.0]
    head2 = np.zeros((8, 2))
    return np.concatenate([head0, head1, head2], axis=1)[None]


def test_pairs_hand_made() -> None:
    keep = HAND_VALID & (HAND_CATEGORIES >= PUNCT)
    head, i, j, score = high_similarity_pairs_window(hand_context()[0], keep, 3, 0.3)
    got = sorted(
        zip(head.tolist(), i.tolist(), j.tolist(), np.round(score, 6).tolist(), strict=True)
    )
    assert got == [
        (0, 1, 2, 1.0),
        (0, 1, 4, 0.5),
        (0, 1, 6, 1.0),
        (0, 2, 4, 0.5),
        (0, 2, 6, 1.0),
        (0, 4, 6, 0.5),
        (1, 2, 5, 1.0),
    ]
    normalised = normalised_similarity(hand_context()[0], keep, 3)
    assert normalised.shape == (3, 8, 8)
    np.testing.assert_allclose(normalised, normalised.transpose(0, 2, 1))
    assert normalised[0, 3, 5] == pytest.approx(0.2)
    assert not normalised[:, 0].any() and not normalised[:, :, 7].any()
    assert not normalised[2].any()


def test_pair_statistics_hand_made() -> None:
    stats = PairStatistics(1, 3, 8, threshold=0.3)
    stats.update(hand_context(), HAND_VALID, HAND_TOKENS, HAND_CATEGORIES, HAND_SENTENCES)
    res = stats.result()
    assert res["n_pairs"] == [[6, 1, 0]]
    # Head 0 pairs: (1,2) (1,4) (1,6) (2,4) (2,6) (4,6); only (1,6) joins equal tokens,
    # only (1,2) and (4,6) lie within one sentence.
    assert res["equal_token_probability"][0] == pytest.approx([1 / 6, 1.0, None])
    assert res["same_sentence_probability"][0][:2] == pytest.approx([2 / 6, 0.0])
    assert res["same_sentence_equal_token_probability"][0][0] == 0.0
    assert res["same_sentence_equal_token_probability"][0][1] is None
    # Six non-special positions in two sentences of 3: (3*2 + 3*2) / (6*5).
    assert res["same_sentence_chance"][0][:2] == pytest.approx([0.4, 0.4])
    assert res["same_sentence_chance"][0][2] is None
    assert res["mean_window_same_sentence_chance"] == pytest.approx(0.4)
    # Tokens 5,7,5,9,7,5: (3*2 + 2*1) / 30; within sentences: 5,7,5 and 9,7,5 -> 2 / 12.
    assert res["equal_token_chance"][0][0] == pytest.approx(8 / 30)
    assert res["same_sentence_equal_token_chance"][0][0] == pytest.approx(2 / 12)
    assert res["mean_distance"][0] == pytest.approx([17 / 6, 3.0, None])
    assert res["distance_histogram"][0][0] == [0, 1, 2, 1, 1, 1, 0, 0]
    assert res["distance_histogram"][0][1] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert res["layer_distance_histogram"][0] == [0, 1, 2, 2, 1, 1, 0, 0]
    assert res["layer_mean_distance"][0] == pytest.approx(20 / 7)
    # Token 5 is in 5 of head 0's 6 pairs; head 1's one pair is 7-7.
    assert res["anchor_share_mean"][0] == pytest.approx([5 / 6, 1.0, None])
    assert res["anchor_windows"][0] == [1, 1, 0]
    assert res["distinct_anchor_histogram"][0] == [0, 0, 1, 0]
    assert res["mean_distinct_anchors"][0] == pytest.approx(2.0)
    counts = stats.arrays()["count_maps"][0]
    assert counts[0].sum() == 6 and counts[0, 1, 6] == 1 and counts[0, 6, 1] == 0
    assert counts[1, 2, 5] == 1
    layer_sum = stats.arrays()["layer_similarity_sum"][0]
    assert layer_sum[1, 2] == pytest.approx(1.0) and layer_sum[2, 5] == pytest.approx(1.0)
    json.dumps(res, allow_nan=False)


def test_same_sentence_chance() -> None:
    sentences = np.array([-1, 0, 0, 0, 1, 1, 1, -1])
    keep = np.array([False, True, True, True, True, True, True, False])
    assert same_sentence_chance(sentences, keep) == pytest.approx(0.4)
    # A position without sentence counts in n but in no sentence: (2 + 6) / (5 * 4).
    assert same_sentence_chance(np.array([0, 0, 1, 1, 1, -1]), np.ones(6, bool)) == (
        pytest.approx(8 / 30)
    )
    assert same_sentence_chance(np.array([0]), np.array([True])) == 0.0


# -- naive loops on random windows ------------------------------------------------------------


def naive_pairs(context: np.ndarray, keep: np.ndarray, n_heads: int, threshold: float) -> list:
    length, hidden = context.shape
    d = hidden // n_heads
    out = []
    for h in range(n_heads):
        x = context[:, h * d : (h + 1) * d]
        sims = {}
        for a in range(length):
            for b in range(length):
                if a != b and keep[a] and keep[b]:
                    sims[(a, b)] = float(x[a] @ x[b])
        top = max(sims.values()) if sims else 0.0
        for (a, b), value in sims.items():
            if a < b and top > 0 and value / top >= threshold:
                out.append((h, a, b, value / top))
    return out


def test_pairs_match_naive_loop(windows: List[Window]) -> None:
    for w in windows[:4]:
        keep = w["valid"] & (w["categories"] >= PUNCT) & (w["categories"] != PAD)
        for layer in range(w["context"].shape[0]):
            head, i, j, score = high_similarity_pairs_window(w["context"][layer], keep, 4, 0.3)
            naive = naive_pairs(w["context"][layer], keep, 4, 0.3)
            assert [(h, a, b) for h, a, b, _ in naive] == list(
                zip(head.tolist(), i.tolist(), j.tolist(), strict=True)
            )
            np.testing.assert_allclose(score, [s for *_, s in naive])


def test_pair_statistics_match_naive_loop(windows: List[Window], fed: Any) -> None:
    stats: PairStatistics = fed[2]
    n_layers, n_heads, length = 3, 4, 16
    n_pairs = np.zeros((n_layers, n_heads))
    equal = np.zeros((n_layers, n_heads))
    same = np.zeros((n_layers, n_heads))
    equal_same = np.zeros((n_layers, n_heads))
    chance = np.zeros((n_layers, n_heads))
    hist = np.zeros((n_layers, n_heads, length))
    maps = np.zeros((n_layers, n_heads, length, length))
    shares: Dict[Tuple[int, int], List[float]] = {}
    distinct = np.zeros((n_layers, n_heads + 1))
    for w in windows:
        tok, sent = w["token_ids"], w["sentence_ids"]
        keep = w["valid"] & np.isin(w["categories"], [PUNCT, WORD])
        positions = np.flatnonzero(keep)
        same_count = sum(
            1 for a in positions for b in positions if a != b and sent[a] == sent[b] >= 0
        )
        window_chance = same_count / (len(positions) * (len(positions) - 1))
        for layer in range(n_layers):
            anchors = set()
            for h in range(n_heads):
                found = [
                    (a, b)
                    for hh, a, b, _ in naive_pairs(w["context"][layer], keep, n_heads, 0.3)
                    if hh == h
                ]
                for a, b in found:
                    n_pairs[layer, h] += 1
                    equal[layer, h] += tok[a] == tok[b]
                    same[layer, h] += sent[a] == sent[b] >= 0
                    equal_same[layer, h] += tok[a] == tok[b] and sent[a] == sent[b] >= 0
                    chance[layer, h] += window_chance
                    hist[layer, h, b - a] += 1
                    maps[layer, h, a, b] += 1
                if found:
                    counter: Counter = Counter()
                    for a, b in found:
                        counter.update({tok[a], tok[b]})
                    best = max(counter.values())
                    anchor = min(t for t, c in counter.items() if c == best)
                    anchors.add(anchor)
                    shares.setdefault((layer, h), []).append(best / len(found))
            distinct[layer, len(anchors)] += 1
    res = stats.result()
    np.testing.assert_array_equal(res["n_pairs"], n_pairs)
    np.testing.assert_allclose(np.array(res["equal_token_probability"], float), equal / n_pairs)
    np.testing.assert_allclose(np.array(res["same_sentence_probability"], float), same / n_pairs)
    np.testing.assert_allclose(
        np.array(res["same_sentence_equal_token_probability"], float), equal_same / same
    )
    np.testing.assert_allclose(np.array(res["same_sentence_chance"], float), chance / n_pairs)
    np.testing.assert_array_equal(res["distance_histogram"], hist)
    np.testing.assert_array_equal(stats.arrays()["count_maps"], maps)
    np.testing.assert_array_equal(res["distinct_anchor_histogram"], distinct)
    for (layer, h), values in shares.items():
        assert res["anchor_share_mean"][layer][h] == pytest.approx(np.mean(values))
        assert res["anchor_share_std"][layer][h] == pytest.approx(np.std(values), abs=1e-9)
        assert res["anchor_windows"][layer][h] == len(values)
    assert np.array(res["anchor_share_histogram"]).sum() == len(sum(shares.values(), []))


# -- attention statistics ---------------------------------------------------------------------


def hand_attention() -> Tuple[np.ndarray, np.ndarray]:
    """One layer, two heads over 4 positions, the last one padding."""
    head0 = np.array(
        [
            [0.5, 0.5, 0.0, 0.0],
            [0.2, 0.6, 0.2, 0.0],
            [0.1, 0.1, 0.8, 0.0],
            [0.25, 0.25, 0.25, 0.25],
        ]
    )
    head1 = np.eye(4)
    return np.stack([head0, head1])[None], np.array([True, True, True, False])


def test_summed_attention_hand_made() -> None:
    attn, valid = hand_attention()
    summed = SummedAttention(1, 2, 4, column_threshold=0.9)
    summed.update(attn, valid)
    res = summed.result()
    # Head 0 over the 3 real queries: diagonal .5+.6+.8, next .5+.2, previous .2+.1.
    assert res["total_mass"][0] == pytest.approx([3.0, 3.0])
    assert res["diagonal_fraction"][0] == pytest.approx([1.9 / 3, 1.0])
    assert res["next_token_fraction"][0] == pytest.approx([0.7 / 3, 0.0])
    assert res["previous_token_fraction"][0] == pytest.approx([0.3 / 3, 0.0])
    assert res["layer_diagonal_fraction"] == pytest.approx([4.9 / 6])
    # Column sums of head 0: .8, 1.2, 1.0 -> only column 1 reaches 0.9 of the maximum.
    # Head 1's columns all reach it, so nothing of it is left.
    assert res["mean_zeroed_columns"][0] == [1.0, 3.0]
    assert res["diagonal_fraction_after_column_zeroing"][0] == pytest.approx([1.3 / 1.8, None])
    assert res["next_token_fraction_after_column_zeroing"][0][0] == pytest.approx(0.2 / 1.8)
    arrays = summed.arrays()
    expected = np.array([[0.5, 0, 0, 0], [0.2, 0, 0.2, 0], [0.1, 0, 0.8, 0], [0, 0, 0, 0]])
    np.testing.assert_allclose(arrays["layer_maps_zeroed_columns"][0], expected)
    only = np.zeros((4, 4))
    only[2, 0] = 0.1
    np.testing.assert_allclose(arrays["layer_maps_zeroed_columns_diagonals"][0], only)
    np.testing.assert_allclose(arrays["layer_maps"][0, :3, :3], attn[0, 0, :3, :3] + np.eye(3))
    assert not arrays["head_maps"][..., 3, :].any() and not arrays["head_maps"][..., 3].any()
    json.dumps(res, allow_nan=False)


def test_band_mass() -> None:
    maps = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(band_mass(maps), [0 + 5 + 10 + 15, 1 + 6 + 11, 4 + 9 + 14])


def received_window() -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    categories = np.array([CLS, WORD, PUNCT, SEP, PAD])
    valid = categories != PAD
    attn = np.array(
        [
            [0.7, 0.1, 0.1, 0.1, 0.0],
            [0.4, 0.2, 0.3, 0.1, 0.0],
            [0.1, 0.1, 0.2, 0.6, 0.0],
            [0.25, 0.25, 0.25, 0.25, 0.0],
            [0.2, 0.2, 0.2, 0.2, 0.2],
        ]
    )[None, None]
    return attn, valid, categories


def test_attention_received_hand_made() -> None:
    attn, valid, categories = received_window()
    received = AttentionReceived(1, 1, 5, column_threshold=0.7)
    received.update(attn, valid, categories)
    res = received.result()
    # Received from the 4 real queries: [CLS] 1.45, word .65, punctuation .85, [SEP] 1.05.
    expected = [1.45 / 4, 1.05 / 4, 0.85 / 4, 0.65 / 4, 0.0]
    assert res["head_share"][0][0] == pytest.approx(expected)
    assert res["layer_share"][0] == pytest.approx(expected)
    assert res["token_share"] == pytest.approx([0.25, 0.25, 0.25, 0.25, 0.0])
    # Column sums over the word and punctuation queries: .5 .3 .5 .7 (total 2); among
    # the non-special columns (.3, .5) only the punctuation reaches 0.7 of the maximum.
    assert res["top_column_share"] == pytest.approx([0.25])
    assert res["top_separator_column_share"] == pytest.approx([0.25])
    assert res["mean_top_columns"] == pytest.approx([1.0])
    assert res["top_column_category_share"][0] == pytest.approx([0, 0, 1, 0, 0])

    everything = AttentionReceived(1, 1, 5, column_threshold=0.7, exclude_special_columns=False)
    everything.update(attn, valid, categories)
    res = everything.result()
    # All real columns: .5/.7, .3/.7, .5/.7, 1 -> [CLS], punctuation and [SEP].
    assert res["top_column_share"] == pytest.approx([1.7 / 2])
    assert res["top_separator_column_share"] == pytest.approx([1.2 / 2])
    assert res["mean_top_columns"] == pytest.approx([3.0])
    assert res["top_column_category_share"][0] == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0, 0])
    json.dumps(res, allow_nan=False)


def test_high_attention_columns() -> None:
    attn, valid, categories = received_window()
    queries = valid & np.isin(categories, [PUNCT, WORD])
    flags = high_attention_columns(attn, queries=queries, threshold=0.7)
    assert flags.tolist() == [True, False, True, True, False]
    flags = high_attention_columns(
        attn, queries=queries, candidates=np.isin(categories, [PUNCT, WORD]), threshold=0.7
    )
    assert flags.tolist() == [False, False, True, False, False]


def test_block_matrix() -> None:
    rng = np.random.default_rng(1)
    sim = rng.random((5, 5))
    sim = sim + sim.T
    flags = np.array([False, True, False, True, False])  # blocks {0,1} {2,3} {4}
    valid = np.array([True, True, True, True, False])
    out = block_matrix(sim, flags, valid=valid)
    block = [0, 0, 1, 1, 2]
    for a in range(5):
        for b in range(5):
            cells = [
                sim[x, y]
                for x in range(5)
                for y in range(5)
                if block[x] == block[a]
                and block[y] == block[b]
                and x != y
                and valid[x]
                and valid[y]
            ]
            expected = np.mean(cells) if cells and valid[a] and valid[b] else 0.0
            assert out[a, b] == pytest.approx(expected)
    assert out[0, 1] == pytest.approx(sim[0, 1])  # the 2x2 diagonal block without diagonal
    assert out[0, 2] == pytest.approx(sim[:2, 2:4].mean())
    with_diagonal = block_matrix(sim, flags, exclude_diagonal=False)
    assert with_diagonal[4, 4] == pytest.approx(sim[4, 4])


# -- merging and streaming --------------------------------------------------------------------


def assert_same(a: Any, b: Any) -> None:
    ra, rb = a.result(), b.result()
    assert ra.keys() == rb.keys()
    for key in ra:
        if key == "category_names":
            assert ra[key] == rb[key]
            continue
        np.testing.assert_allclose(
            np.array(ra[key], dtype=float), np.array(rb[key], dtype=float), err_msg=key
        )
    for key, value in a.arrays().items():
        np.testing.assert_allclose(value, b.arrays()[key], err_msg=key)


def test_merge_equals_single_pass(windows: List[Window], fed: Any) -> None:
    first: Tuple[Any, ...] = feed(windows[:5])
    second: Tuple[Any, ...] = feed(windows[5:])
    for whole, part, rest in zip(fed, first, second, strict=True):
        assert_same(whole, part.merge(rest))


def test_merge_rejects_other_settings() -> None:
    with pytest.raises(ValueError, match="threshold"):
        PairStatistics(1, 2, 4, threshold=0.3).merge(PairStatistics(1, 2, 4, threshold=0.5))
    with pytest.raises(TypeError):
        SummedAttention(1, 2, 4).merge(AttentionReceived(1, 2, 4))  # type: ignore[arg-type]


def test_bad_shapes_raise(windows: List[Window]) -> None:
    w = windows[0]
    with pytest.raises(ValueError, match="attn"):
        SummedAttention(3, 4, 15).update(w["attn"], w["valid"])
    with pytest.raises(ValueError, match="context"):
        PairStatistics(2, 4, 16).update(
            w["context"], w["valid"], w["token_ids"], w["categories"], w["sentence_ids"]
        )


def shapes(acc: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {k: v.shape for k, v in acc.arrays().items()}
    out.update({k: np.shape(v) for k, v in acc.result().items()})
    return out


def test_streaming_keeps_shapes_constant(windows: List[Window]) -> None:
    one: Tuple[Any, ...] = feed(windows[:1])
    many: Tuple[Any, ...] = feed(windows * 3)
    for a, b in zip(one, many, strict=True):
        assert shapes(a) == shapes(b)
        json.dumps(b.result(), allow_nan=False)
    assert many[0].n_windows == many[2].n_windows == 36


# -- figures ----------------------------------------------------------------------------------


def is_png(path: Path) -> bool:
    """A PNG with something drawn on it: the image is read back, is at least 200 pixels a
    side, and at least 2 % of its pixels are not the background colour."""
    if not (path.exists() and path.read_bytes()[:4] == b"\x89PNG"):
        return False
    from matplotlib.image import imread

    image = imread(path)[..., :3]
    if min(image.shape[:2]) < 200:
        return False
    background = image[0, 0]
    drawn = np.abs(image - background).sum(axis=-1) > 0.05
    return bool(drawn.mean() > 0.02)


def test_fig2(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig2_summed_attention(fed[0], tmp_path / "f2.png", head=1))


def test_fig3(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig3_column_zeroing(fed[0], tmp_path / "f3.png"))


def test_fig4(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig4_attention_received(fed[1], tmp_path / "f4.png"))


def test_fig5(windows: List[Window], tmp_path: Path) -> None:
    w = windows[0]
    keep = w["valid"] & np.isin(w["categories"], [PUNCT, WORD])
    sim = normalised_similarity(w["context"][-1], keep, 4)[0]
    path = figures.plot_fig5_block_similarity(
        w["attn"][-1, 0], sim, tmp_path / "sub" / "f5.png", valid=w["valid"]
    )
    assert is_png(path)


def test_fig6(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig6_repeated_tokens(fed[2], tmp_path / "f6.png"))


def test_fig7(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig7_distance_histograms(fed[2], tmp_path / "f7.png", layer=0))


def test_fig8(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig8_same_sentence(fed[2], tmp_path / "f8.png"))


def test_fig10(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig10_similarity_locations(fed[2], tmp_path / "f10.png"))
    path = figures.plot_fig10_similarity_locations(
        fed[2], tmp_path / "f10b.png", heads=[(0, 1), (-1, 2), (1, 3)]
    )
    assert is_png(path)


def test_fig11(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig11_anchor_tokens(fed[2], tmp_path / "f11.png"))


def test_fig12(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig12_layer_similarity(fed[2], tmp_path / "f12.png"))


def test_fig13(fed: Any, tmp_path: Path) -> None:
    assert is_png(figures.plot_fig13_layer_distances(fed[2], tmp_path / "f13.png"))


TOPIC_TABLE = {
    "attn_segmenter": {"pk": 0.2, "pk_interval": [0.15, 0.25]},
    "no boundary": {"pk": 0.45, "pk_interval": [0.4, 0.5], "pk_minus_attn_segmenter": [0.2, 0.3]},
    "peer (second pass)": {
        "pk": 0.22,
        "pk_interval": [0.18, 0.27],
        "pk_minus_attn_segmenter": [-0.01, 0.05],
    },
    "a report before intervals": {"pk": 0.3},
    "reference_segments_per_doc": 10.0,
}


def test_topic_rows_read_each_system_in_order() -> None:
    """Every system but the one left out, in the table's order, with its intervals where
    the report has them; a tie where the paired difference holds zero."""
    rows = figures.topic_rows(TOPIC_TABLE, leave_out=["no boundary"])
    assert rows == [
        ("attn_segmenter", 0.2, (0.15, 0.25), None),
        ("peer (second pass)", 0.22, (0.18, 0.27), (-0.01, 0.05)),
        ("a report before intervals", 0.3, None, None),
    ]
    assert [row.tie for row in rows] == [False, True, False]
    both = figures.topic_rows(TOPIC_TABLE)
    assert both[1].name == "no boundary" and not both[1].tie  # 0.2 to 0.3: clearly behind


def test_topic_figure_has_a_panel_a_set(tmp_path: Path) -> None:
    """Two panels a row: three sets take a second row of panels, as high as the first,
    and a second column; no set, no figure."""
    from matplotlib.image import imread

    one = figures.plot_topic_segments({"a": TOPIC_TABLE}, tmp_path / "one.png")
    three = figures.plot_topic_segments(
        {name: TOPIC_TABLE for name in ("a", "b", "c")}, tmp_path / "sub" / "three.png"
    )
    assert is_png(one) and is_png(three)
    (high_1, wide_1), (high_3, wide_3) = imread(one).shape[:2], imread(three).shape[:2]
    title_band = round(figures.TOPIC_KEY_INCHES * figures.DPI)
    assert high_3 - high_1 == high_1 - title_band > 0 and wide_3 > wide_1
    with pytest.raises(ValueError, match="no sets"):
        figures.plot_topic_segments({}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()


def test_figures_from_saved_results(fed: Any, tmp_path: Path) -> None:
    """Figures drawn from JSON-reloaded results plus arrays, as a corpus run saves them."""
    pairs = fed[2]
    data = {**json.loads(json.dumps(pairs.result())), **pairs.arrays()}
    assert is_png(figures.plot_fig8_same_sentence(data, tmp_path / "f8.png"))
    paths = figures.plot_all(tmp_path / "all", summed=fed[0], received=fed[1], pairs=data)
    assert sorted(paths) == sorted(
        ["fig2", "fig3", "fig4", "fig6", "fig7", "fig8", "fig10", "fig11", "fig12", "fig13"]
    )
    assert all(is_png(p) for p in paths.values())
