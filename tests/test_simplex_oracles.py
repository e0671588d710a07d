"""Exact simplex oracles for action-dependent bandits (Tang, Ho & Liu 2021, Section 4, Eq. 6).

References: brute-force enumeration of compositions on small grids, the threshold method as a
second exact algorithm on large grids, hand-derived hard cases, and the naive methods that the
hard cases defeat (implemented here to show the traps are real).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from impactbandits.errors import SpecError
from impactbandits.oracles.simplex import (
    best_continuous_policy,
    best_fixed_policy,
    brute_force_policy,
    compositions,
    continuous_value,
    grid_gap_bound,
)
from impactbandits.policies.impact_index import (
    ENUMERATION_LIMIT,
    brute_force_index,
    enumerate_index,
    index_value,
    maximise_index,
    maximise_index_by_thresholds,
    paper_bonus,
)

RANDOM_CHUNKS = 6
INSTANCES_PER_CHUNK = 600
VALUE_RTOL = 1e-12
VALUE_ATOL = 1e-12
CONTINUOUS_TOL = 1e-9


def same_value(a: float, b: float) -> bool:
    return (math.isinf(a) and math.isinf(b) and a == b) or math.isclose(
        a, b, rel_tol=VALUE_RTOL, abs_tol=VALUE_ATOL
    )


def score_of(levels: np.ndarray, scores: np.ndarray) -> float:
    return float(scores[np.arange(scores.shape[0]), levels - 1].sum())


def assert_composition(levels: np.ndarray, n_groups: int, total: int) -> None:
    assert levels.shape == (n_groups,)
    assert np.issubdtype(levels.dtype, np.integer)
    assert np.all(levels >= 1)
    assert int(levels.sum()) == total


def sqrt_bonus(a: float):
    return lambda c: np.sqrt(a / np.asarray(c, dtype=float))


def inverse_bonus(a: float):
    return lambda c: a / np.asarray(c, dtype=float)


def step_bonus(height: float, cut: float):
    """Non-increasing, flat pieces: many exact ties between counts."""
    return lambda c: np.where(np.asarray(c) <= cut, height, 0.0)


def random_bonus(rng: np.random.Generator, n_groups: int):
    kind = rng.integers(5)
    if kind == 0:
        return sqrt_bonus(float(rng.uniform(0.0, 4.0)))
    if kind == 1:
        return paper_bonus(n_groups, int(rng.integers(1, 500)))
    if kind == 2:
        return inverse_bonus(float(rng.uniform(0.0, 3.0)))
    if kind == 3:
        return step_bonus(float(rng.uniform(0.0, 2.0)), float(rng.integers(1, 4)))
    return lambda c: np.zeros(np.shape(c))


def random_instance(rng: np.random.Generator):
    n_groups = int(rng.integers(2, 7))
    total = int(rng.integers(n_groups, 13))
    shape = (n_groups, total)
    if rng.random() < 0.5:
        scores = rng.integers(0, 4, shape).astype(float)  # integer scores: exact ties
    else:
        scores = rng.random(shape) * (np.arange(1, total + 1) / total)
    low = 0 if rng.random() < 0.3 else 1
    counts = rng.integers(low, int(rng.integers(low + 1, 6)), shape)
    if low == 0 and rng.random() < 0.5:  # few zeros, sometimes only at unusable levels
        counts = np.where(rng.random(shape) < 0.1, 0, np.maximum(counts, 1))
    return scores, counts, random_bonus(rng, n_groups)


def naive_threshold_value(scores, counts, bonus) -> float:
    """The trap (b): max_c [best score with all counts ≥ c] + b(c), no "exactly c" flag."""
    comps = compositions(*scores.shape)
    rows = np.arange(scores.shape[0])
    score = scores[rows, comps - 1].sum(axis=1)
    mins = counts[rows, comps - 1].min(axis=1)
    best = -np.inf
    for c in np.unique(counts):
        ok = mins >= c
        if np.any(ok):
            best = max(best, float(score[ok].max() + bonus(np.array([float(c)]))[0]))
    return best


def unique_minimum_value(scores, counts, bonus) -> float:
    """The trap (a): only vectors whose minimum count is attained by exactly one group."""
    comps = compositions(*scores.shape)
    rows = np.arange(scores.shape[0])
    picked = counts[rows, comps - 1]
    mins = picked.min(axis=1)
    once = (picked == mins[:, None]).sum(axis=1) == 1
    index = scores[rows, comps - 1].sum(axis=1) + bonus(mins.astype(float))
    return float(index[once].max())


# ------------------------------------------------------------------------------------------
# Random instances against brute force
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk", range(RANDOM_CHUNKS))
def test_maximise_index_matches_brute_force(chunk):
    rng = np.random.default_rng(1000 + chunk)
    over_estimates = 0
    for _ in range(INSTANCES_PER_CHUNK):
        scores, counts, bonus = random_instance(rng)
        n_groups, total = scores.shape
        ref_levels, ref_value = brute_force_index(scores, counts, bonus)
        levels, value = maximise_index(scores, counts, bonus)
        t_levels, t_value = maximise_index_by_thresholds(scores, counts, bonus)
        for got_levels, got_value in ((levels, value), (t_levels, t_value)):
            assert_composition(got_levels, n_groups, total)
            assert same_value(got_value, ref_value), (scores, counts, got_value, ref_value)
            assert index_value(got_levels, scores, counts, bonus) == got_value
            if math.isinf(ref_value):  # zero-count convention: best score among +∞ vectors
                assert math.isclose(
                    score_of(got_levels, scores), score_of(ref_levels, scores), abs_tol=1e-12
                )
        if np.all(scores == np.round(scores)):
            # Integer scores: ties are exact, and both return the lexicographically smallest.
            assert np.array_equal(levels, ref_levels)
        if not math.isinf(ref_value) and np.all(counts > 0):
            naive = naive_threshold_value(scores, counts, bonus)
            assert naive >= ref_value - 1e-12
            over_estimates += naive > ref_value + 1e-9
    assert over_estimates > 0  # the trap is common, not only hand-made


@settings(max_examples=150, deadline=None)
@given(
    n_groups=st.integers(1, 4),
    extra=st.integers(0, 6),
    seed=st.integers(0, 2**32 - 1),
    a=st.floats(0.0, 10.0),
)
def test_maximise_index_property(n_groups, extra, seed, a):
    rng = np.random.default_rng(seed)
    total = n_groups + extra
    scores = rng.integers(-3, 4, (n_groups, total)).astype(float) / 4
    counts = rng.integers(0, 4, (n_groups, total))
    bonus = sqrt_bonus(a)
    ref_levels, ref_value = brute_force_index(scores, counts, bonus)
    levels, value = maximise_index(scores, counts, bonus)
    assert same_value(value, ref_value)
    assert np.array_equal(levels, ref_levels)  # dyadic scores: exact ties, lexicographic rule


def test_thresholds_accept_non_monotone_bonus_and_pinning_refuses_it():
    rng = np.random.default_rng(7)

    def wiggly(c):
        return np.sin(np.asarray(c, dtype=float)) + 1.0

    for _ in range(300):
        scores, counts, _ = random_instance(rng)
        _, ref = brute_force_index(scores, counts, wiggly)
        _, value = maximise_index_by_thresholds(scores, counts, wiggly)
        assert same_value(value, ref)
    with pytest.raises(SpecError, match="non-increasing"):
        maximise_index(np.zeros((2, 4)), np.array([[1, 2, 3, 4], [1, 2, 3, 4]]), wiggly)


def test_large_grid_pinning_agrees_with_thresholds():
    """K = 10, M = 40 (C(39, 9) ≈ 2.1·10⁸ compositions): two independent exact methods agree."""
    rng = np.random.default_rng(11)
    n_groups, total = 10, 40
    level_share = np.arange(1, total + 1) / total
    for case in range(12):
        scores = rng.random((n_groups, total)) * level_share
        high = (5, 5000, 40)[case % 3]
        counts = rng.integers(1, high + 1, (n_groups, total))
        for bonus in (paper_bonus(n_groups, int(counts.sum())), sqrt_bonus(0.05)):
            levels, value = maximise_index(scores, counts, bonus)
            t_levels, t_value = maximise_index_by_thresholds(scores, counts, bonus)
            assert_composition(levels, n_groups, total)
            assert same_value(value, t_value)
            assert np.array_equal(levels, t_levels)  # float scores: the maximiser is unique


# ------------------------------------------------------------------------------------------
# Hand-built hard cases
# ------------------------------------------------------------------------------------------


def test_trap_a_minimum_attained_by_several_groups():
    # K = 2, M = 4, b(c) = 6/c. Level 4 is unusable (the other group needs ≥ 1 level).
    #   (1,3): S = 0.1 + 0.1 = 0.2, counts (4, 5): min 4 (one group)   -> 0.2 + 1.5 = 1.7
    #   (2,2): S = 0.5 + 0.5 = 1.0, counts (2, 2): min 2 (both groups) -> 1.0 + 3.0 = 4.0  *
    #   (3,1): S = 0.2 + 0.2 = 0.4, counts (3, 3): min 3 (both groups) -> 0.4 + 2.0 = 2.4
    scores = np.array([[0.1, 0.5, 0.2, 0.0], [0.2, 0.5, 0.1, 0.0]])
    counts = np.array([[4, 2, 3, 9], [3, 2, 5, 9]])
    bonus = inverse_bonus(6.0)
    for method in (maximise_index, maximise_index_by_thresholds, brute_force_index):
        levels, value = method(scores, counts, bonus)
        assert levels.tolist() == [2, 2]
        assert value == pytest.approx(4.0)
    # Counting only vectors whose minimum is attained once finds (1,3) at 1.7 instead.
    assert unique_minimum_value(scores, counts, bonus) == pytest.approx(1.7)

    # K = 3, M = 6, b(c) = 10/c; s(k, 2) = 1 and n(k, 2) = 5 for every k, else s = 0, n = 10.
    #   (2,2,2): S = 3, min 5 attained by all three groups -> 3 + 2 = 5  *
    #   any other vector has at most one level 2 (the other two would force the third to 2):
    #   with one, S = 1 and min 5 -> 3; with none, S = 0 and min 10 -> 1.
    scores3 = np.zeros((3, 6))
    scores3[:, 1] = 1.0
    counts3 = np.full((3, 6), 10)
    counts3[:, 1] = 5
    bonus3 = inverse_bonus(10.0)
    for method in (maximise_index, maximise_index_by_thresholds, brute_force_index):
        levels, value = method(scores3, counts3, bonus3)
        assert levels.tolist() == [2, 2, 2]
        assert value == pytest.approx(5.0)
    assert unique_minimum_value(scores3, counts3, bonus3) == pytest.approx(3.0)


def test_trap_b_threshold_without_exactly_c_flag_over_estimates():
    # K = 2, M = 3, b(c) = 6/c. Level 3 is unusable.
    #   (1,2): S = 0 + 0 = 0, counts (1, 2): min 1  -> 0 + 6   = 6.0  *
    #   (2,1): S = 1 + 1 = 2, counts (10, 10): min 10 -> 2 + 0.6 = 2.6
    # Naive: at c = 1 every vector has counts ≥ 1, the best score is 2 (from (2,1)), and
    # 2 + b(1) = 8.0 > 6.0, although (2,1) only earns b(10) = 0.6.
    scores = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    counts = np.array([[1, 10, 7], [10, 2, 7]])
    bonus = inverse_bonus(6.0)
    for method in (maximise_index, maximise_index_by_thresholds, brute_force_index):
        levels, value = method(scores, counts, bonus)
        assert levels.tolist() == [1, 2]
        assert value == pytest.approx(6.0)
    assert naive_threshold_value(scores, counts, bonus) == pytest.approx(8.0)
    assert index_value(np.array([2, 1]), scores, counts, bonus) == pytest.approx(2.6)


def test_zero_counts_follow_the_initialisation_convention():
    # K = 2, M = 3. n(0, 1) = 0 is usable: only (1,2) contains it -> +∞, whatever its score.
    # n(1, 3) = 0 is at an unusable level (group 0 would need level 0): no effect.
    scores = np.array([[0.0, 5.0, 5.0], [0.0, 5.0, 5.0]])
    counts = np.array([[0, 5, 5], [5, 5, 0]])
    bonus = sqrt_bonus(1.0)
    for method in (maximise_index, maximise_index_by_thresholds, brute_force_index):
        levels, value = method(scores, counts, bonus)
        assert levels.tolist() == [1, 2]
        assert value == math.inf

    # Only the unusable zero: finite. (1,2): 0 + 5 + b(5); (2,1): 5 + 0 + b(5); tie -> (1,2).
    counts = np.array([[5, 5, 5], [5, 5, 0]])
    for method in (maximise_index, maximise_index_by_thresholds, brute_force_index):
        levels, value = method(scores, counts, bonus)
        assert value == pytest.approx(5.0 + math.sqrt(0.2))
        if method is not maximise_index_by_thresholds:
            assert levels.tolist() == [1, 2]

    # Several +∞ vectors: the best score among them. K = 3, M = 5, zeros at (0,1) and (2,3).
    scores = np.array([[0.0, 0.1, 0.2, 0.3, 0.4], [0.5, 0.4, 0.3, 0.2, 0.1], [0.0, 0.0, 1.0, 0, 0]])
    counts = np.ones((3, 5))
    counts[0, 0] = 0
    counts[2, 2] = 0
    # Vectors with j_0 = 1 or j_2 = 3: best is (1,1,3) with S = 0 + 0.5 + 1.0 = 1.5.
    for method in (maximise_index, maximise_index_by_thresholds, brute_force_index):
        levels, value = method(scores, counts, sqrt_bonus(2.0))
        assert value == math.inf
        assert levels.tolist() == [1, 1, 3]


def test_input_validation():
    bonus = sqrt_bonus(1.0)
    with pytest.raises(SpecError):
        maximise_index(np.zeros((3, 2)), np.ones((3, 2)), bonus)  # M < K
    with pytest.raises(SpecError):
        maximise_index(np.zeros((2, 3)), np.ones((2, 4)), bonus)
    with pytest.raises(SpecError):
        maximise_index(np.zeros((2, 3)), -np.ones((2, 3)), bonus)
    with pytest.raises(SpecError):
        maximise_index(np.full((2, 3), np.nan), np.ones((2, 3)), bonus)
    with pytest.raises(SpecError):
        index_value(np.array([1, 1]), np.zeros((2, 3)), np.ones((2, 3)), bonus)
    with pytest.raises(SpecError):
        best_fixed_policy(np.zeros(4))


def test_single_group_and_compositions():
    assert compositions(1, 5).tolist() == [[5]]
    comps = compositions(4, 9)
    assert len(comps) == math.comb(8, 3)
    assert np.all(comps.sum(axis=1) == 9) and np.all(comps >= 1)
    assert [tuple(c) for c in comps] == sorted(tuple(c) for c in comps)
    levels, value = maximise_index(
        np.array([[0.0, 0.0, 0.7]]), np.array([[3, 3, 4]]), sqrt_bonus(4)
    )
    assert levels.tolist() == [3]
    assert value == pytest.approx(0.7 + 1.0)


def test_enumerate_index_and_pinning_agree_on_learner_sized_grids():
    """The learners scan a precomputed table on small grids (``ENUMERATION_LIMIT``) and use the
    pinning DP beyond; both must return the same maximiser there (the speed comparison lives in
    ``benchmarks/``)."""
    rng = np.random.default_rng(17)
    for n_groups, total in ((2, 21), (3, 15), (4, 12)):
        assert math.comb(total - 1, n_groups - 1) <= ENUMERATION_LIMIT
        table = compositions(n_groups, total)
        for _ in range(200):
            scores = rng.random((n_groups, total)) * (np.arange(1, total + 1) / total)
            counts = rng.integers(0 if rng.random() < 0.2 else 1, 40, (n_groups, total))
            bonus = paper_bonus(n_groups, int(rng.integers(2, 10_000)))
            levels, value = enumerate_index(table, scores, counts, bonus)
            ref_levels, ref_value = maximise_index(scores, counts, bonus)
            assert same_value(value, ref_value)
            if not math.isinf(value):
                assert np.array_equal(levels, ref_levels)
    with pytest.raises(SpecError, match="table"):
        enumerate_index(compositions(3, 6), np.zeros((2, 6)), np.ones((2, 6)), paper_bonus(2, 3))


# ------------------------------------------------------------------------------------------
# p* oracles
# ------------------------------------------------------------------------------------------


def test_best_fixed_policy_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(1500):
        n_groups = int(rng.integers(1, 6))
        total = int(rng.integers(n_groups, 13))
        if rng.random() < 0.5:
            values = rng.integers(0, 3, (n_groups, total)).astype(float)
        else:
            values = rng.random((n_groups, total))
        ref_levels, ref_value = brute_force_policy(values)
        levels, value = best_fixed_policy(values)
        assert_composition(levels, n_groups, total)
        assert math.isclose(value, ref_value, rel_tol=VALUE_RTOL, abs_tol=VALUE_ATOL)
        assert np.array_equal(levels, ref_levels)  # both lexicographically smallest


def random_reward_family(rng: np.random.Generator, n_groups: int):
    """Reward curves [0, 1] → [0, 1] with their Lipschitz constants."""
    fns, lips = [], []
    for _ in range(n_groups):
        kind = rng.integers(4)
        a = float(rng.uniform(0.2, 1.0))
        if kind == 0:  # linear, decreasing
            b = float(rng.uniform(0.0, a))
            fns.append(lambda f, a=a, b=b: a - b * np.asarray(f))
            lips.append(b)
        elif kind == 1:  # concave decreasing
            b = float(rng.uniform(0.0, a))
            fns.append(lambda f, a=a, b=b: a - b * np.asarray(f) ** 2)
            lips.append(2 * b)
        elif kind == 2:  # concave increasing (saturating)
            c = float(rng.uniform(0.5, 6.0))
            fns.append(lambda f, a=a, c=c: a * (1 - np.exp(-c * np.asarray(f))))
            lips.append(a * c)
        else:  # non-monotone bump
            c = float(rng.uniform(0.0, 1.0))
            w = float(rng.uniform(0.2, 0.6))
            fns.append(lambda f, a=a, c=c, w=w: a * np.maximum(0.0, 1 - np.abs(f - c) / w))
            lips.append(a / w)
    return fns, max(lips)


def test_best_continuous_policy_sandwich():
    rng = np.random.default_rng(21)
    for _ in range(30):
        n_groups = int(rng.integers(2, 6))
        fns, lip = random_reward_family(rng, n_groups)
        resolution = 12 * int(rng.integers(1, 6))
        p, value = best_continuous_policy(fns, lip, resolution)
        assert p.shape == (n_groups,)
        assert np.all(p >= 0) and np.all(p <= 1)
        assert math.isclose(p.sum(), 1.0, abs_tol=1e-12)
        assert value == pytest.approx(continuous_value(p, fns), abs=1e-15)

        # Zero-inclusive grid at the same resolution: lower bound, plus the certified gap.
        grid = np.arange(resolution + 1) / resolution
        grid_values = np.stack([grid * f(grid) for f in fns])
        shifted = np.full((n_groups, resolution + n_groups), -1e9)
        shifted[:, : resolution + 1] = grid_values
        _, zero_grid = best_fixed_policy(shifted)
        assert zero_grid - CONTINUOUS_TOL <= value
        assert value <= zero_grid + grid_gap_bound(n_groups, lip, resolution) + CONTINUOUS_TOL

        # The paper's positive grid P_ε at a resolution dividing N (so P_ε ⊂ the zero grid).
        coarse = resolution // 2 if resolution // 2 >= n_groups else resolution
        eps_grid = np.arange(1, coarse + 1) / coarse
        _, positive = best_fixed_policy(np.stack([eps_grid * f(eps_grid) for f in fns]))
        gap = grid_gap_bound(n_groups, lip, coarse, include_zero=False)
        assert positive - CONTINUOUS_TOL <= value <= positive + gap + CONTINUOUS_TOL


def test_best_continuous_policy_matches_water_filling_for_linear_rewards():
    # r_k(f) = a_k − b_k f gives g(p) = Σ a_k p_k − b_k p_k²: concave, KKT solution
    # p_k = max(0, (a_k − λ)/(2 b_k)) with λ set by Σ p_k = 1.
    rng = np.random.default_rng(8)
    for _ in range(10):
        n_groups = int(rng.integers(2, 7))
        a = rng.uniform(0.3, 1.0, n_groups)
        b = rng.uniform(0.1, 1.0, n_groups) * a
        fns = [lambda f, a=a[k], b=b[k]: a - b * np.asarray(f) for k in range(n_groups)]
        lo, hi = -10.0, 10.0
        for _ in range(200):
            lam = (lo + hi) / 2
            if np.maximum(0.0, (a - lam) / (2 * b)).sum() > 1:
                lo = lam
            else:
                hi = lam
        p_star = np.maximum(0.0, (a - lam) / (2 * b))
        p, value = best_continuous_policy(fns, float(b.max()), 50)
        assert value == pytest.approx(float((a * p_star - b * p_star**2).sum()), abs=1e-10)
        assert np.abs(p - p_star).max() < 1e-5


def test_grid_gap_bound_formulas_and_checks():
    assert grid_gap_bound(4, 1.0, 10) == pytest.approx(2.0 * 4 * 0.1 / 2)
    assert grid_gap_bound(4, 1.0, 10, include_zero=False) == pytest.approx(2.0 * (6 + 2) * 0.1)
    # A vertex optimum: r_0 ≡ 1, r_1 ≡ 0. The zero grid contains (1, 0); P_ε does not.
    fns = [lambda f: np.ones_like(np.asarray(f, dtype=float)), lambda f: np.zeros_like(f)]
    p, value = best_continuous_policy(fns, 0.0, 10)
    assert value == pytest.approx(1.0)
    assert p.tolist() == [1.0, 0.0]
    _, positive = best_fixed_policy(np.stack([np.arange(1, 11) / 10, np.zeros(10)]))
    assert 1.0 - positive == pytest.approx(0.1)
    assert 1.0 - positive <= grid_gap_bound(2, 0.0, 10, include_zero=False)
    with pytest.raises(SpecError, match="Lipschitz"):
        best_continuous_policy([lambda f: np.asarray(f), lambda f: 1 - np.asarray(f)], 0.5, 10)
    with pytest.raises(SpecError):
        best_continuous_policy([lambda f: 2 * np.ones_like(f)], 0.0, 10)
