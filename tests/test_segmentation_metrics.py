"""Tests for Pk and WindowDiff (``spacy_attnseg.scoring``, through
``paper.segmentation_metrics``, which adds segment lengths and bootstrap intervals).

The expected values were computed by hand from the definitions (see
``spacy_attnseg.scoring``'s docstring); the comments list the probes (windows of ``k``
gaps) that count as errors.
"""

from __future__ import annotations

import random

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paper.segmentation_metrics import (
    boundaries_from_masses,
    boundaries_from_starts,
    default_k,
    mean_interval,
    pk,
    window_diff,
)

# 10 units in segments of 3, 3, 4: boundaries after units 2 and 5 (gaps 2 and 5).
REF = [0, 0, 1, 0, 0, 1, 0, 0, 0]


def test_boundaries_from_masses_and_starts():
    assert boundaries_from_masses([3, 3, 4]) == REF
    assert boundaries_from_starts([0, 3, 6], 10) == REF
    assert boundaries_from_starts([6, 3, 3], 10) == REF
    assert boundaries_from_masses([1]) == []
    assert boundaries_from_masses([1, 1, 1]) == [1, 1]
    with pytest.raises(ValueError):
        boundaries_from_masses([2, 0])
    with pytest.raises(ValueError, match=r"\[E137\] A segment starts at unit 10, outside"):
        boundaries_from_starts([10], 10)


def test_default_k_is_half_the_mean_segment_length():
    # 10 units / (2 * 3 segments) = 1.67 -> 2
    assert default_k(REF) == 2
    # 6 units in 2 segments: 1.5 rounds half up to 2
    assert default_k(boundaries_from_masses([3, 3])) == 2
    # 20 units in 2 segments: 5
    assert default_k(boundaries_from_masses([12, 8])) == 5
    # one segment of 4 units: 2
    assert default_k([0, 0, 0]) == 2
    # one segment of 2 units: 1
    assert default_k([0]) == 1
    with pytest.raises(ValueError):
        default_k([])


def test_perfect_hypothesis_scores_zero():
    assert pk(REF, REF) == 0.0
    assert window_diff(REF, REF) == 0.0
    assert window_diff(REF, REF, weighted=True) == 0.0


def test_hand_computed_shifted_boundary():
    # Hypothesis: segments 5, 5 (gap 4). k = 2, probes i = 0..7 over gaps [i, i+1].
    # ref counts: 0 1 1 0 1 1 0 0 ; hyp counts: 0 0 0 1 1 0 0 0
    # presence differs at i = 1, 2, 3, 5 -> Pk = 4/8; counts differ at the same four.
    hyp = boundaries_from_masses([5, 5])
    assert pk(REF, hyp) == pytest.approx(4 / 8)
    assert window_diff(REF, hyp) == pytest.approx(4 / 8)


def test_hand_computed_pk_and_windowdiff_differ():
    # Hypothesis: segments 3, 1, 6 (gaps 2 and 3). k = 2:
    # ref counts: 0 1 1 0 1 1 0 0 ; hyp counts: 0 1 2 1 0 0 0 0
    # presence differs at i = 3, 4, 5 -> Pk = 3/8;
    # counts differ at i = 2, 3, 4, 5 -> WindowDiff = 4/8.
    hyp = boundaries_from_masses([3, 1, 6])
    assert pk(REF, hyp) == pytest.approx(3 / 8)
    assert window_diff(REF, hyp) == pytest.approx(4 / 8)
    # k = 3, probes i = 0..6 over gaps [i, i+2]:
    # ref counts: 1 1 1 1 1 1 0 ; hyp counts: 1 2 2 1 0 0 0
    # presence differs at i = 4, 5 -> 2/7; counts differ at i = 1, 2, 4, 5 -> 4/7.
    assert pk(REF, hyp, k=3) == pytest.approx(2 / 7)
    assert window_diff(REF, hyp, k=3) == pytest.approx(4 / 7)


def test_hand_computed_trivial_hypotheses():
    # k = 2: ref windows with a boundary at i = 1, 2, 4, 5, without at i = 0, 3, 6, 7.
    everywhere = [1] * 9
    nowhere = [0] * 9
    assert pk(REF, everywhere) == pytest.approx(4 / 8)
    assert pk(REF, nowhere) == pytest.approx(4 / 8)
    # every window differs in count for the all-boundaries hypothesis (2 vs <= 1)
    assert window_diff(REF, everywhere) == pytest.approx(1.0)
    assert window_diff(REF, nowhere) == pytest.approx(4 / 8)
    # k = 3 weighted: hyp counts 3 everywhere, ref counts 1 1 1 1 1 1 0
    # -> |diff| = 2 2 2 2 2 2 3 -> 15/7; unweighted 7/7; Pk only i = 6 -> 1/7.
    assert window_diff(REF, everywhere, k=3, weighted=True) == pytest.approx(15 / 7)
    assert window_diff(REF, everywhere, k=3) == pytest.approx(1.0)
    assert pk(REF, everywhere, k=3) == pytest.approx(1 / 7)


def test_bad_input_raises():
    with pytest.raises(ValueError, match=r"\[E140\]"):
        pk(REF, REF[:-1])
    with pytest.raises(ValueError, match=r"\[E141\] The window width k=0 must lie in 1\.\.9"):
        window_diff(REF, REF, k=0)
    with pytest.raises(ValueError, match=r"\[E141\]"):
        pk(REF, REF, k=10)
    with pytest.raises(ValueError, match=r"\[E139\]"):
        pk([], [])
    with pytest.raises(ValueError, match=r"\[E138\]"):
        pk([[0, 1]], [[0, 1]])


def test_accepts_strings_and_booleans():
    as_string = "".join(str(g) for g in REF)
    hyp = [bool(g) for g in boundaries_from_masses([3, 1, 6])]
    assert pk(as_string, hyp) == pytest.approx(3 / 8)
    assert window_diff(list(as_string), hyp) == pytest.approx(4 / 8)


def _random_gaps(rng: random.Random, n_gaps: int, rate: float) -> list:
    return [1 if rng.random() < rate else 0 for _ in range(n_gaps)]


def test_windowdiff_is_never_below_pk():
    rng = random.Random(0)
    for _ in range(200):
        n = rng.randint(1, 60)
        ref = _random_gaps(rng, n, 0.15)
        hyp = _random_gaps(rng, n, rng.choice([0.0, 0.1, 0.3, 1.0]))
        assert window_diff(ref, hyp) >= pk(ref, hyp)


def test_matches_nltk():
    segmentation = pytest.importorskip("nltk.metrics.segmentation")
    rng = random.Random(1)
    for _ in range(300):
        n = rng.randint(1, 80)
        ref = _random_gaps(rng, n, rng.choice([0.05, 0.1, 0.3]))
        hyp = _random_gaps(rng, n, rng.choice([0.0, 0.05, 0.2, 0.5, 1.0]))
        k = default_k(ref) if rng.random() < 0.5 else rng.randint(1, n)
        ref_s = "".join(map(str, ref))
        hyp_s = "".join(map(str, hyp))
        assert pk(ref, hyp, k) == pytest.approx(segmentation.pk(ref_s, hyp_s, k))
        assert window_diff(ref, hyp, k) == pytest.approx(segmentation.windowdiff(ref_s, hyp_s, k))
        assert window_diff(ref, hyp, k, weighted=True) == pytest.approx(
            segmentation.windowdiff(ref_s, hyp_s, k, weighted=True)
        )


def test_interval_of_two_documents_is_their_two_scores():
    # resampling two scores gives means a (1/4), (a + b) / 2 (1/2), b (1/4): the
    # 2.5th and 97.5th percentiles of 2,000 such means are a and b
    assert mean_interval([0.2, 0.6]) == pytest.approx((0.2, 0.6))
    assert mean_interval([0.3] * 17) == pytest.approx((0.3, 0.3))


def test_interval_of_many_documents_is_the_normal_one():
    """For 400 scores the bootstrap interval of the mean is the textbook
    mean +- 1.96 s / sqrt(n) within a few per cent of its width."""
    scores = numpy.random.default_rng(3).beta(2, 5, size=400)
    low, high = mean_interval(scores, n_resamples=4000)
    half = 1.96 * scores.std(ddof=1) / numpy.sqrt(len(scores))
    assert (high - low) / 2 == pytest.approx(half, rel=0.08)
    assert (low + high) / 2 == pytest.approx(scores.mean(), abs=0.1 * half)
    narrow, wide = mean_interval(scores, level=0.5), mean_interval(scores, level=0.99)
    assert wide[0] < low < narrow[0] < narrow[1] < high < wide[1]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=1, max_size=40),
    st.floats(-1, 1),
    st.integers(0, 2**32 - 1),
)
def test_interval_holds_the_mean_and_moves_with_the_scores(
    scores: list, shift: float, seed: int
) -> None:
    low, high = mean_interval(scores, seed=seed)
    assert low - 1e-12 <= float(numpy.mean(scores)) <= high + 1e-12
    assert mean_interval(scores, seed=seed) == (low, high)
    moved = mean_interval([x + shift for x in scores], seed=seed)
    assert moved == pytest.approx((low + shift, high + shift), abs=1e-9)


@pytest.mark.parametrize("scores", [[], [[0.1, 0.2]]])
def test_interval_of_no_scores_or_a_table_raises(scores: list) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        mean_interval(scores)


@pytest.mark.parametrize("level", [0.0, 1.0, 95])
def test_interval_level_outside_zero_and_one_raises(level: float) -> None:
    with pytest.raises(ValueError, match="level"):
        mean_interval([0.1, 0.2], level=level)
