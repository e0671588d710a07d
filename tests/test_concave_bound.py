"""The exact LP (⋆) solver of Lindner et al. (2021, Section 4, Theorem 2) against HiGHS, its
incremental form against the one-shot form, Theorem 2 on random truths, and hand-derived cases."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from impactbandits.oracles import concave_bound
from impactbandits.oracles.concave_bound import ConcaveBound, capped_linear_sum, lp_bound
from impactbandits.oracles.concave_bound_reference import (
    lp_bound_highs,
    lp_solution_highs,
    lp_violation,
    optimal_sequence,
)

#: Agreement required with HiGHS (objective, absolute).
HIGHS_ABS = 1e-7
#: Agreement between our two exact implementations (float rounding only).
EXACT_ABS = 1e-9
#: Feasibility slack accepted for HiGHS's own solution (its tolerances are 1e-10).
HIGHS_SLACK = 1e-7
FAMILIES = ["noise_free", "noisy", "clipped", "decreasing", "single_peaked", "tight_random"]
INSTANCES_PER_FAMILY = 500
SMALL_N = (1, 2, 3)
MAX_N = 60
MAX_R = 200
SMALL_R_MAX = 10
NOISE_LEVELS = (0.005, 0.02, 0.05, 0.1, 0.2)
#: How far an interval placed wholly outside [0, 1] sits from it.
OUTSIDE = 0.01


# ----------------------------------------------------------------------------- generators


def _concave_truth(rng: np.random.Generator, size: int) -> np.ndarray:
    """A random concave nondecreasing f(1..size) with values in [0, 1]."""
    j = np.arange(1, size + 1, dtype=float)
    kind = rng.integers(4)
    if kind == 0:  # random nonincreasing increments, capped at 1
        increments = np.sort(rng.exponential(rng.uniform(0.005, 0.2), size))[::-1]
        f = rng.uniform(0.0, 0.5) + np.cumsum(increments) - increments[0]
    elif kind == 1:  # c·(1 − (1 + s·j)^−p)
        c, s, p = rng.uniform(0.2, 1.0), rng.uniform(0.01, 2.0), rng.uniform(0.1, 2.0)
        f = c * (1.0 - (1.0 + s * j) ** -p)
    elif kind == 2:  # straight line, capped at 1
        f = rng.uniform(0.0, 0.6) + rng.uniform(0.0, 0.1) * j
    else:  # constant
        f = np.full(size, rng.uniform(0.0, 1.0))
    return np.minimum(f, 1.0)


def _sizes(rng: np.random.Generator) -> tuple[int, int]:
    n = int(rng.choice(SMALL_N)) if rng.random() < 0.3 else int(rng.integers(4, MAX_N + 1))
    pick = rng.integers(4)
    r = [0, 1, int(rng.integers(2, SMALL_R_MAX + 1)), int(rng.integers(SMALL_R_MAX, MAX_R + 1))]
    return n, r[pick]


def _around(rng: np.random.Generator, f: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounded-noise intervals ŷ ± ε with ŷ = f + noise, |noise| ≤ ε: they contain f."""
    y = f + rng.uniform(-eps, eps, f.size)
    return y - eps, y + eps


def _instance(rng: np.random.Generator, family: str) -> tuple[np.ndarray, np.ndarray, int]:
    n, r = _sizes(rng)
    if family == "noise_free":
        f = _concave_truth(rng, n)
        return f, f.copy(), r
    if family == "noisy":
        return (*_around(rng, _concave_truth(rng, n), float(rng.choice(NOISE_LEVELS))), r)
    if family == "clipped":  # truths hugging 0 or 1, wide intervals, some infinite ends
        f = _concave_truth(rng, n)
        f = np.maximum(f, 1.0 - rng.uniform(0, 0.05)) if rng.random() < 0.5 else 0.05 * f
        lo, up = _around(rng, f, rng.uniform(0.1, 0.6))
        lo[rng.random(n) < 0.1] = -np.inf
        up[rng.random(n) < 0.1] = np.inf
        if rng.random() < 0.1:  # one interval wholly outside [0, 1]: empty after clipping
            j = rng.integers(n)
            lo[j], up[j] = (1.0 + OUTSIDE, 1.0 + 2 * OUTSIDE) if lo[j] > 0.5 else (-OUTSIDE, -0.0)
        return lo, up, r
    if family == "decreasing":
        f = _concave_truth(rng, n)[::-1].copy()
        if rng.random() < 0.5:
            return f, f.copy(), r
        return (*_around(rng, f, float(rng.choice(NOISE_LEVELS[:3]))), r)
    if family == "single_peaked":  # rises, then falls after a random tipping point
        f = _concave_truth(rng, n)
        peak = int(rng.integers(1, n + 1))
        f[peak:] = f[peak - 1] - np.cumsum(rng.uniform(0, 0.1, n - peak))
        f = np.clip(f, 0.0, 1.0)
        return (*_around(rng, f, float(rng.choice(NOISE_LEVELS[:3]))), r)
    if family == "tight_random":  # narrow intervals at random heights: mostly infeasible
        lo = rng.uniform(-0.1, 1.1, n)
        return lo, lo + rng.uniform(-0.01, 0.1, n), r
    raise AssertionError(family)


# ----------------------------------------------------------------------------- against HiGHS


@pytest.mark.parametrize("family", FAMILIES)
def test_lp_bound_equals_highs(family: str) -> None:
    rng = np.random.default_rng([2021, FAMILIES.index(family)])
    verdicts = {True: 0, False: 0}
    for _ in range(INSTANCES_PER_FAMILY):
        lo, up, r = _instance(rng, family)
        ours, highs = lp_bound(lo, up, r), lp_bound_highs(lo, up, r)
        assert (ours is None) == (highs is None), (lo, up, r, ours, highs)
        verdicts[ours is not None] += 1
        if ours is not None:
            assert highs is not None
            assert abs(ours - highs) <= HIGHS_ABS, (lo, up, r, ours, highs)
    assert verdicts[True] > 0
    if family in ("noise_free", "noisy"):  # intervals around a concave increasing truth
        assert verdicts[False] == 0
    else:
        assert verdicts[False] > 0


@pytest.mark.parametrize("seed", range(4))
def test_lp_bound_equals_highs_large(seed: int) -> None:
    rng = np.random.default_rng([7, seed])
    n, r = 400, 3000
    lo, up = _around(rng, _concave_truth(rng, n), 0.1)
    ours, highs = lp_bound(lo, up, r), lp_bound_highs(lo, up, r)
    assert ours is not None and highs is not None
    assert abs(ours - highs) <= HIGHS_ABS


# ----------------------------------------------------------------------------- incremental form


@pytest.mark.parametrize("family", FAMILIES)
def test_incremental_equals_one_shot(family: str) -> None:
    rng = np.random.default_rng([99, FAMILIES.index(family)])
    for _ in range(40):
        lo, up, r = _instance(rng, family)
        bound = ConcaveBound()
        assert bound.value(r) == r  # no observation: the all-ones curve
        was_feasible = True
        for t in range(lo.size):
            bound.add(float(lo[t]), float(up[t]))
            assert bound.n == t + 1
            if not was_feasible:
                assert not bound.feasible  # infeasible stays infeasible
            was_feasible = bound.feasible
            horizons = [r, 0, 1, 7, int(rng.integers(0, 10 * MAX_R))]
            for remaining in horizons:  # any call order, increasing or not
                got, want = bound.value(remaining), lp_bound(lo[: t + 1], up[: t + 1], remaining)
                assert (got is None) == (want is None)
                assert got is None or abs(got - want) <= EXACT_ABS
            assert bound.feasible == (want is not None)


@pytest.mark.parametrize("budget", [0, concave_bound.DENSE_TANGENT_BUDGET])
def test_one_shot_tangent_paths(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    # lp_bound finds the tangent slopes σ_k densely or (budget 0) by vectorised binary search.
    monkeypatch.setattr(concave_bound, "DENSE_TANGENT_BUDGET", budget)
    rng = np.random.default_rng(17)
    for case in range(300):
        lo, up, r = _instance(rng, FAMILIES[case % len(FAMILIES)])
        got, want = lp_bound(lo, up, r), ConcaveBound.from_intervals(lo, up).value(r)
        assert (got is None) == (want is None)
        assert got is None or abs(got - want) <= EXACT_ABS
    f = _concave_truth(rng, 1500)  # noise-free: every point is a hull vertex
    assert abs(lp_bound(f, f, 5000) - ConcaveBound.from_intervals(f, f).value(5000)) <= EXACT_ABS


def test_incremental_decreasing_remaining_like_spo() -> None:
    rng = np.random.default_rng(5)
    f = _concave_truth(rng, 300)
    lo, up = _around(rng, f, 0.05)
    bound = ConcaveBound.from_intervals(lo[:50], up[:50])
    for t, remaining in enumerate(range(250, 0, -1)):
        if t % 3 == 0:  # this arm is pulled every third round
            bound.add(float(lo[bound.n]), float(up[bound.n]))
        got = bound.value(remaining)
        want = lp_bound(lo[: bound.n], up[: bound.n], remaining)
        assert got is not None and want is not None and abs(got - want) <= EXACT_ABS


def test_sequences_that_turn_infeasible() -> None:
    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(3, 40))
        f = _concave_truth(rng, n)
        tip = int(rng.integers(1, n))
        f[tip:] = f[tip - 1] - 0.05 * np.arange(1, n - tip + 1)  # clearly decreasing
        lo, up = _around(rng, np.clip(f, 0, 1), 0.01)
        bound = ConcaveBound()
        history = []
        for t in range(n):
            bound.add(float(lo[t]), float(up[t]))
            history.append(bound.feasible)
            assert bound.feasible == (lp_bound(lo[: t + 1], up[: t + 1], 1) is not None)
        assert history == sorted(history, reverse=True)  # True…True False…False


def test_extend_copy_and_properties() -> None:
    lo, up = np.array([0.0, 0.1, 0.15]), np.array([0.0, 0.1, 1.0])
    bound = ConcaveBound.from_intervals(lo, up)
    assert bound.n == 3 and bound.feasible
    assert bound.max_last_value == pytest.approx(0.2)  # 2·0.1 − 0
    assert bound.max_last_increment == pytest.approx(0.1)
    twin = bound.copy()
    twin.add(0.9, 0.9)  # v_4 ≤ v_3 + 0.1 ≤ 0.3 < 0.9: infeasible
    assert not twin.feasible and twin.value(3) is None and twin.max_last_value is None
    assert bound.feasible and bound.n == 3  # the original is untouched
    twin.extend([0.0, 0.0], [1.0, 1.0])
    assert twin.n == 6 and not twin.feasible
    single = ConcaveBound()
    single.add(0.4, 0.6)
    assert single.max_last_increment == math.inf and single.value(5) == 5.0
    restored = pickle.loads(pickle.dumps(bound))  # policies holding bounds get pickled
    restored.add(0.25, 0.3)
    bound.add(0.25, 0.3)
    assert restored.n == bound.n == 4 and restored.value(9) == bound.value(9)


# ----------------------------------------------------------------------------- Theorem 2


def test_theorem2_upper_bound_and_tightness() -> None:
    rng = np.random.default_rng(2)
    for case in range(300):
        n, r = _sizes(rng)
        f = _concave_truth(rng, n + r)
        widths = rng.uniform(0, 0.2, (2, n)) * (rng.random((2, n)) < 0.8)
        lo, up = f[:n] - widths[0], f[:n] + widths[1]  # contain f(j), sometimes exactly
        bound = lp_bound(lo, up, r)
        assert bound is not None
        # Upper bound: never below the true future reward.
        assert bound >= f[n:].sum() - EXACT_ABS
        # Tightness: the curve built in the proof is feasible for (⋆) and attains the bound.
        witness = optimal_sequence(lo, up, r)
        assert witness is not None and witness.size == n + r
        assert lp_violation(witness, lo, up) <= EXACT_ABS
        assert abs(witness[n:].sum() - bound) <= EXACT_ABS
        if case % 3 == 0:  # … and HiGHS's optimum is a concave increasing curve of equal value
            solution = lp_solution_highs(lo, up, r)
            assert solution is not None
            assert lp_violation(solution, lo, up) <= HIGHS_SLACK
            assert np.all(np.diff(solution) >= -HIGHS_SLACK)
            assert np.all(np.diff(solution, n=2) <= HIGHS_SLACK)
            assert abs(solution[n:].sum() - bound) <= HIGHS_ABS


def test_witness_is_none_when_infeasible() -> None:
    assert optimal_sequence([0.6, 0.5], [0.6, 0.5], 3) is None


# ----------------------------------------------------------------------------- hand-derived


def test_single_observation_bound_is_r() -> None:
    # n = 1: no concavity constraint involves v_2, so v_2 = v_3 = … = 1 is feasible for any v_1
    # in the interval (v_3 = 1 ≤ 2·v_2 − v_1 = 2 − v_1); each future term is at most 1. So R.
    assert lp_bound([0.3], [0.5], 7) == 7.0
    assert lp_bound([0.0], [0.0], 1) == 1.0
    assert lp_bound([0.3], [0.5], 0) == 0.0
    assert lp_bound_highs([0.3], [0.5], 7) == pytest.approx(7.0)


def test_noise_free_linear() -> None:
    # f(j) = 0.1 + 0.05·j, L = U = f, n = 4, R = 20. The past is fixed, every later increment is
    # ≤ Δ_4 = 0.05, so v_{4+k} ≤ min(1, f(4) + 0.05·k) = min(1, 0.3 + 0.05·k), attained by the
    # capped line. 0.3 + 0.05·k < 1 iff k ≤ 13: Σ_{k≤13} (0.3 + 0.05k) = 3.9 + 0.05·91 = 8.45,
    # plus 7 terms equal to 1: 15.45.
    f = 0.1 + 0.05 * np.arange(1, 5)
    assert lp_bound(f, f, 20) == pytest.approx(15.45, abs=1e-12)
    assert ConcaveBound.from_intervals(f, f).value(20) == pytest.approx(15.45, abs=1e-12)
    # Same data, R = 3: 0.35 + 0.40 + 0.45 = 1.2.
    assert lp_bound(f, f, 3) == pytest.approx(1.2, abs=1e-12)


def test_two_observations() -> None:
    # n = 2, v_1 ∈ [0.2, 0.3], v_2 ∈ [0.4, 0.5], R = 3. Concavity at j = 3: v_3 ≤ 2v_2 − v_1
    # ≤ 1 − 0.2 = 0.8, and increments after that are ≤ v_2 − v_1 ≤ 0.3. The curve
    # (0.2, 0.5, 0.8, 1, 1) is feasible (increments 0.3, 0.3, 0.2, 0), so the bound is
    # 0.8 + 1 + 1 = 2.8.
    assert lp_bound([0.2, 0.4], [0.3, 0.5], 3) == pytest.approx(2.8, abs=1e-12)


def test_early_increment_binds() -> None:
    # v_1 = 0, v_2 = 0.1 exactly, v_3 ∈ [0, 1]. Every increment is ≤ Δ_2 = 0.1, so
    # v_j ≤ 0.1·(j − 1): the future v_4..v_7 ≤ 0.3, 0.4, 0.5, 0.6 (sum 1.8), attained by
    # v_j = 0.1·(j − 1).
    assert lp_bound([0.0, 0.1, 0.0], [0.0, 0.1, 1.0], 4) == pytest.approx(1.8, abs=1e-12)


def test_last_increment_limited_by_first_point() -> None:
    # v_1 = 0, v_2 ∈ [0, 1], v_3 = 0.5. Concavity: v_2 ≥ (v_1 + v_3)/2 = 0.25, so
    # Δ_3 = 0.5 − v_2 ≤ 0.25, attained with v_2 = 0.25. Future (R = 2): v_4 ≤ 0.75, v_5 ≤ 1;
    # (0, 0.25, 0.5, 0.75, 1) is feasible: bound 1.75.
    assert lp_bound([0.0, 0.0, 0.5], [0.0, 1.0, 0.5], 2) == pytest.approx(1.75, abs=1e-12)


def test_constant_data() -> None:
    # L = U = 0.5 three times: increments 0, so every future value is ≤ 0.5 (and 0.5 works).
    assert lp_bound([0.5] * 3, [0.5] * 3, 5) == pytest.approx(2.5, abs=1e-12)


def test_unconstrained_after_clipping() -> None:
    # Every interval covers [0, 1] after clipping: the all-ones curve is feasible, bound R.
    assert lp_bound([-1.0, -np.inf, -1.0], [2.0, 2.0, np.inf], 6) == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ([0.6, 0.5], [0.6, 0.5]),  # strictly decreasing, noise-free
        ([0.5, 0.0], [0.6, 0.4]),  # v_2 ≤ 0.4 < 0.5 ≤ v_1
        ([0.0, 0.1, 0.5], [0.0, 0.1, 0.5]),  # v_3 ≤ 2·0.1 − 0 = 0.2 < 0.5: not concave
        ([1.2], [1.5]),  # above 1: [1.2, 1] is empty after clipping
        ([-0.5], [-0.1]),  # below 0: [0, −0.1] is empty after clipping
        ([0.3, 0.4], [0.2, 0.9]),  # crossed interval
    ],
)
def test_infeasible_cases(lower: list[float], upper: list[float]) -> None:
    assert lp_bound(lower, upper, 4) is None
    assert lp_bound_highs(lower, upper, 4) is None
    assert ConcaveBound.from_intervals(lower, upper).value(4) is None


def test_capped_linear_sum_matches_direct_sum() -> None:
    rng = np.random.default_rng(3)
    for _ in range(2000):
        x = float(rng.choice([rng.uniform(0, 1), 1.0, 0.0]))
        d = float(rng.choice([0.0, rng.exponential(0.05), rng.uniform(0, 2), 1e-300]))
        r = int(rng.integers(0, 300))
        direct = float(np.minimum(1.0, x + d * np.arange(1, r + 1)).sum())
        assert capped_linear_sum(x, d, r) == pytest.approx(direct, abs=1e-9)


def _monotone_chain(y: np.ndarray) -> list[int]:
    """Textbook upper hull of (j, y_j) (Andrew's monotone chain), collinear points dropped."""
    hull: list[int] = []
    for i in range(y.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (y[i1] - y[i0]) * (i - i0) <= (y[i] - y[i0]) * (i1 - i0):
                hull.pop()
            else:
                break
        hull.append(i)
    return hull


@pytest.mark.parametrize("passes", [0, 1, 3, concave_bound.MAX_HULL_PASSES])
def test_upper_hull_matches_monotone_chain(monkeypatch: pytest.MonkeyPatch, passes: int) -> None:
    # The vectorised elimination passes, then the monotone-chain finish on what is left (passes
    # = 0 runs the finish alone; few passes hand it partly reduced candidate lists).
    monkeypatch.setattr(concave_bound, "MAX_HULL_PASSES", passes)
    rng = np.random.default_rng(4)
    j = np.arange(1, 2001, dtype=float)
    cases = [
        np.cumsum(rng.normal(size=20_000)),
        np.sqrt(j) + rng.uniform(-0.5, 0.5, j.size),
        np.sqrt(j),
        j**2,
        0.3 * j,
        np.zeros(5),
        np.array([1.0]),
        np.array([0.0, 1.0]),
        rng.uniform(size=3),
    ]
    for y in cases:
        # Same hull curve; vertex lists may differ only by points collinear up to rounding.
        grid = np.arange(y.size, dtype=float)
        ours = concave_bound._upper_hull(y)
        chain = np.asarray(_monotone_chain(y))
        curve = np.interp(grid, ours.astype(float), y[ours])
        scale = 1.0 + np.abs(y).max()
        assert np.abs(curve - np.interp(grid, chain.astype(float), y[chain])).max() <= 1e-12 * scale
        assert np.all(y <= curve + 1e-12 * scale)
        assert ours[0] == 0 and ours[-1] == y.size - 1 and np.all(np.diff(ours) > 0)


# ----------------------------------------------------------------------------- inputs


def test_invalid_inputs() -> None:
    with pytest.raises(ValueError, match="NaN"):
        lp_bound([0.1, np.nan], [0.2, 0.3], 2)
    with pytest.raises(ValueError, match="equal length"):
        lp_bound([0.1], [0.2, 0.3], 2)
    with pytest.raises(ValueError, match="n >= 1"):
        lp_bound([], [], 2)
    with pytest.raises(ValueError, match="non-negative integer"):
        lp_bound([0.1], [0.2], -1)
    with pytest.raises(ValueError, match="NaN"):
        ConcaveBound().add(math.nan, 0.5)
    with pytest.raises(ValueError, match="remaining"):
        ConcaveBound().value(-1)
