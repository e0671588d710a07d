"""Exact oracles for delay-dependent payoffs (``impactbandits.oracles.delay``, B2DEP).

Paper: Cella & Cesa-Bianchi, AISTATS 2020. The paper's worked examples are recomputed; the exact
optimum is checked against brute force over periodic schedules, Karp's algorithm and an
independent value iteration; Theorem 2 and the Theorem-1 reduction are checked on many small
instances. References here track "rounds since the last pull" directly, never the delay state.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pytest

from impactbandits.oracles import delay, delay_graph, mean_cycle, periodic_maintenance
from impactbandits.oracles.delay import (
    OptimalPolicy,
    best_periodic_schedule,
    delay_states,
    f_table,
    ghost,
    greedy_schedule,
    greedy_value,
    optimal_value,
    payoff,
    periodic_schedule_value,
    pmsp_feasible,
    pmsp_instance,
    pmsp_schedule,
    r0,
    ranking_order,
    ranking_schedule,
    ranking_value,
    ranking_values,
)

TOL = 1e-12
N_BRUTE_FORCE_INSTANCES = 300
BRUTE_FORCE_PERIOD = 9
N_THEOREM2_INSTANCES = 1000
FIG3_MU = (1.0, 13 / 15)
FIG3_DELAYS = (2, 2)
FIG3_F = (0.3, 0.25)


# --- independent references ----------------------------------------------------------------------


def f_of(f: Callable[[int], float] | Sequence[float], tau: int) -> float:
    return float(f(tau)) if callable(f) else float(f[tau - 1])


def expected_rewards(mu, delays, f, arms: Sequence[int]) -> list[float]:
    """Eq. 1 along an arm sequence from the all-fresh start, tracking raw rounds since a pull."""
    last: dict[int, int] = {}
    out = []
    for t, arm in enumerate(arms):
        tau = t - last[arm] if arm in last else 0
        penalty = f_of(f, tau) if 0 < tau <= delays[arm] else 0.0
        out.append(mu[arm] * (1.0 - penalty))
        last[arm] = t
    return out


def reference_long_run(mu, delays, f, schedule: Sequence[int]) -> float:
    """Average over one period played after enough warm-up periods."""
    period = len(schedule)
    warm = (max(delays) // period + 2) * period
    rewards = expected_rewards(mu, delays, f, list(schedule) * (warm // period + 1))
    return math.fsum(rewards[warm : warm + period]) / period


def reference_greedy(mu, delays, f, horizon: int) -> list[int]:
    """Eq. 2 with the documented tie-break, on raw rounds since the last pull."""
    last: dict[int, int] = {}
    pulls = []
    for t in range(horizon):
        pays = []
        for arm in range(len(mu)):
            tau = t - last[arm] if arm in last else 0
            penalty = f_of(f, tau) if 0 < tau <= delays[arm] else 0.0
            pays.append(mu[arm] * (1.0 - penalty))
        best = max(pays)
        ties = [a for a in range(len(mu)) if pays[a] >= best - delay.TIE_TOL]
        arm = min(ties, key=lambda a: (-mu[a], a))
        pulls.append(arm)
        last[arm] = t
    return pulls


def reference_graph(mu, delays, f):
    """Delay-state graph by plain BFS, transition written out from Section 3."""
    k = len(mu)
    start = (0,) * k
    index = {start: 0}
    queue = [start]
    succ, reward = [], []
    for state in queue:
        row_s, row_r = [], []
        for arm in range(k):
            tau = state[arm]
            penalty = f_of(f, tau) if 0 < tau <= delays[arm] else 0.0
            row_r.append(mu[arm] * (1.0 - penalty))
            nxt = tuple(
                (1 if delays[j] >= 1 else 0)
                if j == arm
                else (state[j] + 1 if 0 < state[j] < delays[j] else 0)
                for j in range(k)
            )
            if nxt not in index:
                index[nxt] = len(queue)
                queue.append(nxt)
            row_s.append(index[nxt])
        succ.append(row_s)
        reward.append(row_r)
    return queue, np.array(succ), np.array(reward)


def value_iteration_bounds(succ: np.ndarray, reward: np.ndarray, rounds: int = 20_000):
    """Bounds min ΔV ≤ λ* ≤ max ΔV from value iteration made aperiodic (stay w.p. 1/2)."""
    values = np.zeros(succ.shape[0])
    for _ in range(rounds):
        new = (reward + 0.5 * values[succ]).max(axis=1) + 0.5 * values
        diff = new - values
        values = new - new[0]
        if diff.max() - diff.min() < 1e-11:
            break
    return diff.min(), diff.max()


def random_instance(rng: np.random.Generator, max_arms: int, max_delay: int, min_delay: int = 0):
    k = int(rng.integers(1, max_arms + 1))
    delays = rng.integers(min_delay, max_delay + 1, size=k)
    grid = rng.random() < 0.5  # coarse grid: frequent ties
    mu = rng.integers(0, 7, size=k) / 6 if grid else rng.random(k)
    f = -np.sort(-(rng.integers(0, 5, size=max_arms + 1) / 4 if grid else rng.random(max_arms + 1)))
    return mu, delays, f


# --- Eq. 1, the state, f conventions -------------------------------------------------------------


def test_payoff_follows_eq1():
    mu, delays = (1.0, 0.5, 0.8), (2, 1, 0)
    f = (0.3, 0.25, 0.1)
    tau = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [3, 3, 3]])
    expected = np.array([[1.0, 0.5, 0.8], [0.7, 0.35, 0.8], [0.75, 0.5, 0.8], [1.0, 0.5, 0.8]])
    np.testing.assert_allclose(payoff(mu, delays, f, tau), expected, rtol=0, atol=TOL)
    by_callable = payoff(mu, delays, lambda t: (0.3, 0.25)[t - 1], tau[1])
    np.testing.assert_allclose(by_callable, [0.7, 0.35, 0.8], rtol=0, atol=TOL)


def test_f_array_entry_zero_is_f_of_one():
    np.testing.assert_array_equal(f_table([0.5, 0.25], 2), [0.0, 0.5, 0.25])
    np.testing.assert_array_equal(f_table(lambda t: 2.0**-t, 3), [0.0, 0.5, 0.25, 0.125])
    with pytest.raises(ValueError, match="f"):
        f_table([0.5], 2)
    with pytest.raises(ValueError, match="f"):
        f_table([0.5, 1.5], 2)


def test_delay_states_two_arms_and_paper_transition():
    states = {tuple(s) for s in delay_states([2, 2]).tolist()}
    assert states == {(0, 0), (1, 0), (0, 1), (2, 1), (1, 2)}
    rng = np.random.default_rng(3)
    for _ in range(30):
        mu, delays, f = random_instance(rng, 4, 3)
        ours = {tuple(s) for s in delay_states(delays).tolist()}
        theirs = set(reference_graph(mu, delays, f)[0])
        assert ours == theirs


@pytest.mark.parametrize(
    ("delays", "count"),
    [([1] * 70, 71), ([2] * 40, 1 + 40 + 40 * 39), ([2] * 3 + [1] * 61, 1 + 64 + 3 * 63)],
)
def test_delay_states_with_many_arms(delays, count):
    """Π(d_i + 1) overflows int64 here: states are encoded by which arm sits at each delay."""
    assert math.prod(d + 1 for d in delays) > 2**62
    states = delay_states(delays)
    assert states.shape == (count, len(delays))
    assert len({tuple(row) for row in states.tolist()}) == count


def test_optimal_value_with_many_arms_matches_karp():
    rng = np.random.default_rng(13)
    delays = [2] * 3 + [1] * 61
    mu, f = rng.random(len(delays)), np.array([0.9, 0.4])
    howard = optimal_value(mu, delays, f)
    assert howard.value == pytest.approx(optimal_value(mu, delays, f, method="karp").value)
    assert howard.value == pytest.approx(reference_long_run(mu, delays, f, howard.cycle), abs=TOL)


# --- Section 3: the greedy counter-example -------------------------------------------------------


@pytest.mark.parametrize("eps", [0.0, 0.01, 0.1, 0.2])
def test_section3_greedy_example(eps):
    mu, delays, f = (1.0, 0.5 - eps), (1, 1), (lambda tau: 0.5)
    assert greedy_schedule(mu, delays, f) == ((0,), (0,))  # "always pulls arm 1"
    for horizon in (1, 7, 101):
        greedy_total = greedy_value(mu, delays, f, horizon) * horizon
        alternate_total = periodic_schedule_value(mu, delays, f, (0, 1), horizon) * horizon
        assert greedy_total == pytest.approx(1 + (horizon - 1) / 2, abs=1e-9)
        assert alternate_total == pytest.approx(1 + (horizon - 1) / 2 * (1.5 - eps), abs=1e-9)
    best = optimal_value(mu, delays, f)
    assert best.value == pytest.approx((1.5 - eps) / 2, abs=TOL)
    assert best.cycle == (0, 1)
    ratio = greedy_value(mu, delays, f) / best.value
    assert ratio == pytest.approx(2 / (3 - 2 * eps), abs=TOL)
    # The paper's "≤ 2/3" is the ε → 0 limit; for ε > 0 the long-run ratio is slightly larger.
    assert ratio >= 2 / 3 - TOL
    assert (ratio > 2 / 3 + 1e-6) == (eps > 0)


# --- Figure 3 and Fact 1 -------------------------------------------------------------------------


def test_figure3_ranking_values_tie_at_070():
    values = ranking_values(FIG3_MU, FIG3_DELAYS, FIG3_F)
    np.testing.assert_allclose(values, [0.7, 0.7], rtol=0, atol=TOL)
    mu2, f1, f2 = Fraction(13, 15), Fraction(3, 10), Fraction(1, 4)
    assert 1 - f1 == (1 - f2) * (1 + mu2) / 2 == Fraction(7, 10)  # exact tie
    assert ghost(FIG3_MU, FIG3_DELAYS, FIG3_F) == (1, pytest.approx(0.7, abs=TOL))  # smallest m
    assert ranking_value(FIG3_MU, FIG3_DELAYS, FIG3_F, 2) == pytest.approx(0.7, abs=TOL)


def test_figure3_fact1_alternating_beats_both():
    schedule = ranking_schedule(FIG3_MU, (2, 1))  # one cycle of π_2, then one of π_1
    assert schedule == (0, 1, 0)
    value = periodic_schedule_value(FIG3_MU, FIG3_DELAYS, FIG3_F, schedule)
    assert value == pytest.approx((0.75 + 0.7 + 13 / 15) / 3, abs=TOL)
    assert value > 0.7 + 0.07
    rotated = periodic_schedule_value(
        FIG3_MU, FIG3_DELAYS, FIG3_F, ranking_schedule(FIG3_MU, (1, 2))
    )
    assert rotated == pytest.approx(value, abs=TOL)
    best = optimal_value(FIG3_MU, FIG3_DELAYS, FIG3_F)
    assert best.value >= value
    assert best.value == pytest.approx(1.7 * (1 + 13 / 15) / 4, abs=TOL)  # cycle 1, 1, 2, 2
    assert best.cycle == (0, 0, 1, 1)


def test_fact1_on_random_two_arm_ties():
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 50:
        f1, f2 = np.sort(rng.random(2))[::-1]
        mu2 = 2 * (1 - f1) / (1 - f2) - 1  # makes g(1) = g(2)
        if not 0 < mu2 <= 1:
            continue
        mu, delays, f = (1.0, mu2), (2, 2), (f1, f2)
        g = ranking_values(mu, delays, f)
        assert g[0] == pytest.approx(g[1], abs=TOL)
        alternating = periodic_schedule_value(mu, delays, f, ranking_schedule(mu, (2, 1)))
        assert alternating >= g[0] - TOL
        checked += 1


def test_fact1_proof_formula_for_alternation():
    """Value of π_n then π_m (m < n): (μ_{1→m}(n) + μ_{1→m}(m) + μ_{m+1→n}(m+n)) / (m+n)."""
    rng = np.random.default_rng(12)
    for _ in range(100):
        mu, delays, f = random_instance(rng, 5, 6)
        k = len(mu)
        if k < 2:
            continue
        m, n = sorted(rng.choice(np.arange(1, k + 1), size=2, replace=False))
        order = ranking_order(mu)
        tau = np.zeros((3, k), dtype=np.int64)
        tau[0, order[:m]], tau[1, order[:m]], tau[2, order[m:n]] = n, m, m + n
        pays = payoff(mu, delays, f, tau)
        formula = (pays[0, order[:m]].sum() + pays[1, order[:m]].sum()) + pays[2, order[m:n]].sum()
        value = periodic_schedule_value(mu, delays, f, ranking_schedule(mu, (n, m)))
        assert value == pytest.approx(formula / (m + n), abs=TOL)


# --- Section 5: the 3-arm example ----------------------------------------------------------------


def test_three_arm_example_under_eq1_is_monotone():
    mu, delays = (1.0, 2 / 3, 0.5), (2, 2, 2)
    values = ranking_values(mu, delays, lambda tau: 2.0**-tau)
    np.testing.assert_allclose(values, [1 / 2, 5 / 8, 13 / 18], rtol=0, atol=TOL)
    assert values[0] < values[1] < values[2]  # not the paper's g(2) < g(1) < g(3)
    # f indexed from 0 (f(τ) = 2^-(τ-1)) does not give the paper's order either.
    shifted = ranking_values(mu, delays, lambda tau: 2.0 ** -(tau - 1))
    np.testing.assert_allclose(shifted, [0, 5 / 12, 13 / 18], rtol=0, atol=TOL)
    assert shifted[0] < shifted[1] < shifted[2]
    # Counting τ from 0 (π_m meets its arms at τ = m − 1) gives g(2) < g(3) < g(1).
    k, f = len(mu), (lambda tau: 2.0**-tau)
    from_zero = [payoff(mu, delays, f, np.full(k, m - 1))[:m].mean() for m in range(1, k + 1)]
    np.testing.assert_allclose(from_zero, [1, 5 / 12, 13 / 24], rtol=0, atol=TOL)
    assert from_zero[1] < from_zero[2] < from_zero[0]


def test_three_arm_example_paper_order_with_retained_fraction():
    """The paper's g(2) < g(1) < g(3) holds if 2^-τ is the fraction *kept*: f = 1 − 2^-τ."""
    mu, delays = (1.0, 2 / 3, 0.5), (2, 2, 2)
    values = ranking_values(mu, delays, lambda tau: 1 - 2.0**-tau)
    np.testing.assert_allclose(values, [1 / 2, 5 / 24, 13 / 18], rtol=0, atol=TOL)
    assert values[1] < values[0] < values[2]
    assert ghost(mu, delays, lambda tau: 1 - 2.0**-tau)[0] == 3


def test_three_arm_example_paper_order_under_eq1_needs_larger_f2():
    """Under Eq. 1: g(2) < g(1) < g(3) iff f(1) > 5/18 and f(2) > (6 f(1) − 1)/5."""
    mu, delays = (1.0, 2 / 3, 0.5), (2, 2, 2)
    values = ranking_values(mu, delays, lambda tau: 0.5)  # the f of the Section-3 example
    np.testing.assert_allclose(values, [1 / 2, 5 / 12, 13 / 18], rtol=0, atol=TOL)
    assert values[1] < values[0] < values[2]
    rng = np.random.default_rng(9)
    for _ in range(200):
        f = np.sort(rng.random(2))[::-1]
        g = ranking_values(mu, delays, f)
        claimed = f[0] > 5 / 18 and f[1] > (6 * f[0] - 1) / 5
        assert (g[1] < g[0] < g[2]) == claimed


def test_g_is_not_monotone_under_eq1():
    values = ranking_values((1.0, 0.6, 0.5), (2, 2, 2), (0.5, 0.5))
    np.testing.assert_allclose(values, [0.5, 0.4, 0.7], rtol=0, atol=TOL)


# --- ranking policies, g(m), r*, r_0 -------------------------------------------------------------


def test_g_is_the_long_run_value_of_pi_m_and_unsorted_input_is_ranked():
    rng = np.random.default_rng(5)
    for _ in range(60):
        mu, delays, f = random_instance(rng, 5, 4)
        perm = rng.permutation(len(mu))
        mu, delays = mu[perm], delays[perm]
        values = ranking_values(mu, delays, f)
        for m in range(1, len(mu) + 1):
            schedule = ranking_schedule(mu, (m,))
            assert values[m - 1] == pytest.approx(
                reference_long_run(mu, delays, f, schedule), abs=TOL
            )
            # G_T of π_m = Σ_{j≤m} mu_(j) (first cycle, all fresh) + (T − m) g(m) for T = c·m.
            horizon = 5 * m
            total = periodic_schedule_value(mu, delays, f, schedule, horizon) * horizon
            first = math.fsum(mu[a] for a in schedule)
            assert total == pytest.approx(first + (horizon - m) * values[m - 1], abs=1e-9)
        np.testing.assert_allclose(ranking_value(mu, delays, f, np.arange(1, len(mu) + 1)), values)


def test_ranking_values_agree_with_the_ghost_regret_oracle():
    """``oracles.ranking.ranking_cumulative`` (the regret oracle, sorted input, f vectorised
    over τ as the environment gives it) adds exactly m·g(m) per cycle after the first."""
    from impactbandits.oracles.ranking import ranking_cumulative

    rng = np.random.default_rng(10)
    for _ in range(50):
        mu, delays, f = random_instance(rng, 6, 5)
        order = ranking_order(mu)
        table = np.asarray(f, dtype=float)

        def f_vectorised(tau: np.ndarray, table: np.ndarray = table) -> np.ndarray:
            return table[np.clip(tau - 1, 0, table.size - 1)]

        values = ranking_values(mu, delays, f)
        for m in range(1, len(mu) + 1):
            ends = np.array([m, 2 * m, 5 * m])
            cumulative = ranking_cumulative(mu[order], delays[order], f_vectorised, m, ends)
            np.testing.assert_allclose(
                np.diff(cumulative) / np.array([1, 3]), m * values[m - 1], rtol=0, atol=1e-9
            )


def test_ghost_ties_go_to_smallest_m():
    assert ghost((1.0, 1.0), (0, 0), (0.5,))[0] == 1
    assert ghost((0.5, 0.5, 0.5), (1, 1, 1), (1.0,))[0] == 2  # g = (0, 0.5, 0.5)


def test_r0_is_where_greedy_first_repeats():
    """Theorem 2 remark: π_greedy pulls the r_0 best arms first, then repeats one of them."""
    rng = np.random.default_rng(7)
    for _ in range(300):
        mu, delays, f = random_instance(rng, 6, 5)
        mu = rng.random(len(mu))  # distinct means
        r = r0(mu, delays, f)
        order = ranking_order(mu).tolist()
        pulls = reference_greedy(mu, delays, f, len(mu) + 1)
        assert pulls[:r] == order[:r]
        if r < len(mu):
            assert pulls[r] in order[:r]


# --- the greedy policy ---------------------------------------------------------------------------


def test_greedy_value_matches_step_by_step_simulation():
    rng = np.random.default_rng(8)
    for _ in range(100):
        mu, delays, f = random_instance(rng, 5, 4)
        transient, cycle = greedy_schedule(mu, delays, f)
        horizon = len(transient) + 3 * len(cycle) + int(rng.integers(0, 5))
        pulls = reference_greedy(mu, delays, f, horizon)
        unrolled = (list(transient) + list(cycle) * horizon)[:horizon]
        assert pulls == unrolled
        rewards = expected_rewards(mu, delays, f, pulls)
        assert greedy_value(mu, delays, f, horizon) == pytest.approx(
            math.fsum(rewards) / horizon, abs=TOL
        )
        assert greedy_value(mu, delays, f) == pytest.approx(
            reference_long_run(mu, delays, f, cycle), abs=TOL
        )


# --- the exact optimum ---------------------------------------------------------------------------


def test_optimal_value_equals_brute_force_on_tiny_instances():
    rng = np.random.default_rng(1)
    compared = 0
    for _ in range(N_BRUTE_FORCE_INSTANCES):
        mu, delays, f = random_instance(rng, 3, 2)
        best = optimal_value(mu, delays, f)
        karp = optimal_value(mu, delays, f, method="karp")
        brute = best_periodic_schedule(mu, delays, f, BRUTE_FORCE_PERIOD)
        assert isinstance(best, OptimalPolicy)
        assert best.value == pytest.approx(karp.value, abs=TOL)
        assert best.value == pytest.approx(reference_long_run(mu, delays, f, best.cycle), abs=TOL)
        assert brute.value <= best.value + TOL  # a periodic schedule is a closed walk
        if len(best.cycle) <= BRUTE_FORCE_PERIOD:
            assert brute.value == pytest.approx(best.value, abs=TOL)
            compared += 1
    assert compared == N_BRUTE_FORCE_INSTANCES


def test_optimal_value_brute_force_period_10():
    mu, delays, f = (0.9, 0.7, 0.4), (2, 2, 1), (0.8, 0.6)
    best = optimal_value(mu, delays, f)
    brute = best_periodic_schedule(mu, delays, f, 10)
    assert brute.value == pytest.approx(best.value, abs=TOL)


@pytest.mark.parametrize(
    ("delays", "seed"), [((3, 3, 2, 3), 0), ((4, 4, 4, 3, 2), 1), ((5, 5, 5, 5), 2), ((6, 2, 6), 3)]
)
def test_howard_matches_karp_and_value_iteration(delays, seed):
    rng = np.random.default_rng(seed)
    k = len(delays)
    mu = rng.random(k)
    f = np.sort(rng.random(max(delays)))[::-1]
    howard = optimal_value(mu, delays, f)
    karp = optimal_value(mu, delays, f, method="karp")
    assert howard.value == pytest.approx(karp.value, abs=TOL)
    _, succ, reward = reference_graph(mu, delays, f)
    low, high = value_iteration_bounds(succ, reward)
    assert low - 1e-9 <= howard.value <= high + 1e-9
    assert high - low < 1e-8


def test_optimal_value_on_larger_instance_beats_heuristics():
    mu = np.array([0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1])  # Figure 2 means
    delays = np.array([6, 1, 5, 2, 4, 3, 6])
    f = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    best = optimal_value(mu, delays, f)
    assert best.value >= ghost(mu, delays, f)[1] - TOL
    assert best.value >= greedy_value(mu, delays, f) - TOL
    assert best.value == pytest.approx(reference_long_run(mu, delays, f, best.cycle), abs=TOL)


# --- Theorem 2 -----------------------------------------------------------------------------------


def test_theorem2_chain_through_r0_on_random_instances():
    """The first half of the proof: g(r*) ≥ g(r_0) ≥ (1 − f(r_0)) · (μ_1 + … + μ_{r_0}) / r_0."""
    rng = np.random.default_rng(2)
    for _ in range(N_THEOREM2_INSTANCES):
        mu, delays, f = random_instance(rng, 4, 3)
        r = r0(mu, delays, f)
        _, best_g = ghost(mu, delays, f)
        top = np.sort(mu)[::-1][:r]
        assert best_g >= ranking_value(mu, delays, f, r) - TOL
        assert ranking_value(mu, delays, f, r) >= (1 - f_table(f, r)[r]) * top.mean() - TOL


def test_theorem2_bound_with_equal_delays():
    """g(r*) ≥ (1 − f(r_0)) · OPT on random instances whose arms share one delay."""
    rng = np.random.default_rng(4)
    for _ in range(N_THEOREM2_INSTANCES):
        mu, delays, f = random_instance(rng, 4, 3, min_delay=1)
        delays = np.full(len(mu), delays[0])
        r = r0(mu, delays, f)
        best = optimal_value(mu, delays, f).value
        assert ghost(mu, delays, f)[1] >= (1 - f_table(f, r)[r]) * best - TOL


def test_theorem2_bound_on_random_instances_and_where_it_fails():
    """Mixed delays: the bound holds whenever every top-r_0 arm has d_i ≥ r_0 − 1 (observed on
    this sample); its violations need an arm that a block of r_0 rounds can pull twice in full."""
    rng = np.random.default_rng(6)
    violations = 0
    for _ in range(N_THEOREM2_INSTANCES):
        mu, delays, f = random_instance(rng, 4, 3, min_delay=1)
        r = r0(mu, delays, f)
        best = optimal_value(mu, delays, f).value
        holds = ghost(mu, delays, f)[1] >= (1 - f_table(f, r)[r]) * best - TOL
        top_delays = delays[ranking_order(mu)[:r]]
        if np.all(top_delays >= r - 1):
            assert holds
        violations += not holds
    assert violations < N_THEOREM2_INSTANCES // 100


def test_theorem2_counterexample():
    """μ = (1, 5/6, 1/6), d = (2, 1, 1), f = (1, 1, 0, …): r_0 = 3, f(r_0) = 0, g(r*) = 2/3,
    but cycling 1, 2, 3, 2 earns 17/24: arm 2 (d = 1) is pulled twice per 4 rounds in full."""
    mu, delays, f = (1.0, 5 / 6, 1 / 6), (2, 1, 1), (1.0, 1.0, 0.0)
    assert r0(mu, delays, f) == 3
    assert ghost(mu, delays, f) == (3, pytest.approx(2 / 3, abs=TOL))
    best = optimal_value(mu, delays, f)
    assert best.value == pytest.approx(17 / 24, abs=TOL)
    assert periodic_schedule_value(mu, delays, f, (0, 1, 2, 1)) == pytest.approx(17 / 24)
    assert ghost(mu, delays, f)[1] < (1 - f[2]) * best.value - 0.04


# --- Theorem 1: the PMSP reduction ---------------------------------------------------------------

FEASIBLE = [(1,), (2, 2), (2, 4), (2, 4, 4), (3, 3, 3), (4, 4, 4, 4), (4, 6, 6), (2, 6, 6, 6)]
INFEASIBLE = [(2, 3), (2, 5), (3, 4), (3, 4, 6), (4, 4, 4, 6)]


def brute_force_pmsp(periods: Sequence[int]) -> bool:
    """Try every offset vector and look for a collision over one common period."""
    horizon = math.lcm(*periods)
    for offsets in itertools.product(*(range(p) for p in periods)):
        busy = [t for o, p in zip(offsets, periods, strict=True) for t in range(o, horizon, p)]
        if len(busy) == len(set(busy)):
            return True
    return False


@pytest.mark.parametrize("periods", FEASIBLE + INFEASIBLE)
def test_pmsp_reduction(periods):
    feasible = periods in FEASIBLE
    assert pmsp_feasible(periods) == brute_force_pmsp(periods) == feasible
    mu, delays, f = pmsp_instance(periods)
    assert mu.tolist() == [1.0] * len(periods) + [0.0]
    assert delays.tolist() == [p - 1 for p in periods] + [0]
    bound = sum(m / (d + 1) for m, d in zip(mu, delays, strict=True))
    assert bound == pytest.approx(float(sum(Fraction(1, p) for p in periods)), abs=TOL)
    best = optimal_value(mu, delays, f)
    if feasible:
        assert best.value == pytest.approx(bound, abs=TOL)
        schedule = pmsp_schedule(periods)
        assert periodic_schedule_value(mu, delays, f, schedule) == pytest.approx(bound, abs=TOL)
        for machine, period in enumerate(periods):
            times = [t for t, a in enumerate(schedule) if a == machine]
            gaps = np.diff([*times, times[0] + len(schedule)])
            assert set(gaps.tolist()) == {period}
    else:
        assert pmsp_schedule(periods) is None
        assert best.value < bound - 1e-6


# --- input checks and limits ---------------------------------------------------------------------


def test_invalid_inputs_raise_value_error(monkeypatch):
    with pytest.raises(ValueError, match="mu"):
        optimal_value([1.2, 0.5], [1, 1], [0.5])
    with pytest.raises(ValueError, match="delays"):
        optimal_value([1.0, 0.5], [1, -1], [0.5])
    with pytest.raises(ValueError, match="delays"):
        optimal_value([1.0, 0.5], [1.5, 1], [0.5])
    with pytest.raises(ValueError, match="f"):
        optimal_value([1.0, 0.5], [3, 1], [0.5, 0.4])
    with pytest.raises(ValueError, match="schedule"):
        periodic_schedule_value([1.0, 0.5], [1, 1], [0.5], [0, 2])
    with pytest.raises(ValueError, match="periods"):
        pmsp_instance([2, 2, 2])
    with pytest.raises(ValueError, match="max_period"):
        best_periodic_schedule([0.5] * 5, [1] * 5, [0.5], 12)
    monkeypatch.setattr(delay_graph, "MAX_DELAY_STATES", 100)
    with pytest.raises(ValueError, match="reachable delay states"):
        optimal_value([0.5] * 5, [4] * 5, [0.5] * 4)
    monkeypatch.setattr(mean_cycle, "KARP_MAX_STATES", 5)
    with pytest.raises(ValueError, match="karp"):
        optimal_value([0.5] * 3, [2] * 3, [0.5] * 2, method="karp")


def test_moved_names_are_still_importable_from_delay():
    """The state graph, the mean-cycle solver and the PMSP reduction moved out of ``delay``."""
    moved = {
        delay_graph: ["MAX_DELAY_EDGES", "MAX_DELAY_STATES", "delay_states"],
        mean_cycle: ["HOWARD_MAX_ITERATIONS", "HOWARD_TOL", "KARP_MAX_STATES"],
        periodic_maintenance: [
            "MAX_PMSP_PERIOD",
            "pmsp_feasible",
            "pmsp_instance",
            "pmsp_schedule",
        ],
    }
    for module, names in moved.items():
        for name in names:
            assert getattr(delay, name) is getattr(module, name), name


def test_mean_cycle_solver_on_a_graph_that_is_not_a_delay_graph():
    """``max_mean_cycle`` needs only successors and rewards: 0 → 1 → 2 → 0 (mean 2) beats the
    self-loops (1 at node 0, 1.5 at node 2), and node 3 is unreachable from the start."""
    succ = np.array([[0, 1], [2, 1], [2, 0], [3, 3]], dtype=np.int32)
    reward = np.array([[1.0, 2.0], [3.0, 0.0], [1.5, 1.0], [9.0, 9.0]])
    graph = mean_cycle.CycleGraph(succ=succ, reward=reward, start=0)
    for method in ("howard", "karp"):
        assert mean_cycle.max_mean_cycle(graph, method=method) == (0, 1, 1)
    with pytest.raises(ValueError, match="method"):
        mean_cycle.max_mean_cycle(graph, method="bellman")
