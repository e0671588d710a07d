"""Ranks by paired comparisons (issue 30, item 5: ties are ties), against independent
references: SciPy's paired t-test, Holm's method worked by hand, and ranks read off by hand."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from impactbandits.experiments.paired_ranks import holm, paired_pvalues, paired_ranking


def test_holm_by_hand():
    # sorted 0.01, 0.03, 0.04 -> 3·0.01 = 0.03, 2·0.03 = 0.06, 1·0.04 = 0.04 -> running max
    assert holm(np.array([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    assert holm(np.array([0.5, 0.9])) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm(np.array([])).size == 0


def test_pvalues_equal_scipys_paired_t_test():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 12)) + np.array([[0.0], [0.3], [1.0], [0.31]])
    mean, p = paired_pvalues(x)
    for a in range(4):
        for b in range(4):
            if a == b:
                assert p[a, b] == 1.0
                continue
            ref = stats.ttest_rel(x[a], x[b])
            assert p[a, b] == pytest.approx(ref.pvalue, rel=1e-10)
            assert mean[a, b] == pytest.approx(np.mean(x[a] - x[b]))


def test_identical_policies_tie_and_constant_offsets_are_certain():
    base = np.array([0.3, 0.1, 0.7, 0.2])
    x = np.vstack([base, base, base + 0.05])
    ranking = paired_ranking(x)
    assert list(ranking.ranks) == [1, 1, 3]
    assert ranking.p_value[0, 1] == 1.0 and ranking.p_value[0, 2] == 0.0


def test_near_zero_scores_that_differ_only_by_rounding_tie():
    # the FICO rows at T = 10,000: twelve policies at ±1e-16 per step on every seed, each with
    # its own consistent rounding pattern (which a t-test alone would call significant)
    rng = np.random.default_rng(0)
    pattern = rng.choice([-2.27e-17, 0.0, 4.5e-17, -1.6e-16], size=(12, 1))
    x = pattern + rng.normal(scale=1e-18, size=(12, 30))
    assert list(paired_ranking(x).ranks) == [1] * 12
    # a real difference of 1e-6 per step next to them is kept
    y = np.vstack([x, x[0] + 1e-6])
    assert list(paired_ranking(y).ranks) == [1] * 12 + [13]


def test_rank_is_one_plus_the_number_significantly_better():
    # A clearly best; B and C indistinguishable (same noise, means 1e-3 apart); D clearly worst
    rng = np.random.default_rng(1)
    noise = rng.normal(scale=0.5, size=30)
    jitter = rng.normal(scale=0.3, size=(2, 30))
    x = np.vstack([noise, noise + 2.0 + jitter[0], noise + 2.001 + jitter[1], noise + 5.0])
    ranking = paired_ranking(x)
    assert list(ranking.ranks) == [1, 2, 2, 4]
    assert not ranking.significant[1, 2]


def test_one_seed_separates_nothing():
    assert list(paired_ranking(np.array([[0.1], [0.9]])).ranks) == [1, 1]


def test_seeds_needed_against_a_recount_with_scipy():
    rng = np.random.default_rng(7)
    x = np.vstack([rng.normal(size=40), rng.normal(size=40) + 0.6])

    def separated(n: int) -> bool:  # one pair: Holm changes nothing
        return bool(stats.ttest_rel(x[0, :n], x[1, :n]).pvalue <= 0.05)

    final = separated(40)
    needed = 40
    for n in range(39, 1, -1):
        if separated(n) != final:
            break
        needed = n
    else:
        needed = 1 if not final else 2  # one seed separates nothing
    ranking = paired_ranking(x)
    assert final and ranking.seeds_needed == needed and 2 < needed < 40


def test_bad_scores_are_refused():
    with pytest.raises(ValueError, match="finite"):
        paired_ranking(np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="non-empty"):
        paired_ranking(np.zeros((0, 3)))
