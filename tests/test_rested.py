"""Rested environments, curve validation and the Lindner et al. policies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits import ExperimentSpec
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.curves import single_peaked_curves
from impactbandits.envs.rested import RestedBandit
from impactbandits.envs.rested_families import (
    DecreasingBandit,
    IncreasingBandit,
    SinglePeakedBandit,
)
from impactbandits.errors import SpecError
from impactbandits.experiments.cells import expand
from impactbandits.policies.improving import HKR
from impactbandits.policies.nonstationary import UCB, DiscountedUCB, RExp3, SlidingWindowUCB
from impactbandits.policies.spo import SPO, linear_optimistic_sum

from .reference_rested import ReferenceDiscountedUCB, ReferenceSlidingWindowUCB, ReferenceSPO
from .simulation import run_batch


def _run(policy, env, rounds, horizon=None, reps=range(6), seed=4):
    return run_batch(
        policy, env, rounds, reps=reps, seed=seed, env_key=3, policy_key=5, horizon=horizon
    )


def test_rested_rewards_follow_pull_counts_and_noise_is_common():
    curves = [[0.1, 0.2, 0.3, 0.4], [0.9, 0.8, 0.7, 0.6]]
    env = RestedBandit(curves)
    env.reset(EnvironmentRandom(0, 1, [0]))
    rewards = [float(env.step(np.array([a])).feedback.reward[0]) for a in (0, 1, 0, 0, 1)]
    assert rewards == [0.1, 0.9, 0.2, 0.3, 0.8]
    noisy = RestedBandit(curves, noise="gaussian", sigma=0.1)
    noisy.reset(EnvironmentRandom(0, 1, [0, 1]))
    a = [noisy.step(np.array(x)).feedback.reward for x in ([0, 1], [1, 0])]
    noisy.reset(EnvironmentRandom(0, 1, [0, 1]))
    b = [noisy.step(np.array(x)).feedback.reward for x in ([1, 0], [0, 1])]
    # replication r's first pull of an arm has the same noise whatever the order of play
    assert a[0][0] - 0.1 == pytest.approx(b[1][0] - 0.1) and a[1][0] - 0.9 == b[0][0] - 0.9
    assert a[0][1] == b[1][1] and a[1][1] == b[0][1]


def test_bounded_beta_noise_is_within_the_bound_and_centred():
    env = RestedBandit([[0.5] * 5000], noise="beta", sigma=0.2)
    env.reset(EnvironmentRandom(0, 1, range(4)))
    noise = np.concatenate([env.step(np.zeros(4, int)).feedback.reward - 0.5 for _ in range(5000)])
    assert noise.min() >= -0.2 and noise.max() <= 0.2
    assert abs(noise.mean()) < 0.003  # sd of Beta(2,2) scaled: 0.2·2·0.2236 = 0.089; /√20000
    assert noise.std() == pytest.approx(0.2 * 2 * math.sqrt(1 / 20), rel=0.03)


@pytest.mark.parametrize(
    ("curves", "message"),
    [
        ([[0.1, 0.2], [0.3, 1.5]], "arm 1 has value 1.5 at pull 2"),
        ([[0.1, float("nan")], [0.3, 0.5]], "arm 0 has value nan at pull 2"),
        ([[-0.1, 0.2], [0.3, 0.5]], "arm 0 has value -0.1 at pull 1"),
    ],
)
def test_curve_validation_names_arm_and_index(curves, message):
    with pytest.raises(SpecError, match=message):
        RestedBandit(curves)


def test_short_curves_are_refused_before_running():
    spec = dict(
        name="x",
        environments=[{"kind": "rested", "curves": [[0.5] * 10, [0.4] * 10]}],
        policies=[{"kind": "ucb"}],
        horizons=[5, 20],
    )
    with pytest.raises(SpecError, match=r"environments\[0\]\.curves: each arm needs at least 20"):
        expand(ExperimentSpec.create(**spec))


def test_callable_curves_by_import_path():
    env = RestedBandit(["numpy:sqrt", "numpy:log1p"], length=1)  # sqrt(1) = 1, log1p(1) = .69
    np.testing.assert_allclose(env.curves[:, 0], [1.0, math.log(2)])


def test_linear_optimistic_sum_equals_loop():
    rng = np.random.default_rng(0)
    for _ in range(500):
        value, slope, R = rng.uniform(-0.2, 1.3), rng.uniform(-0.05, 0.05), int(rng.integers(0, 60))
        if rng.random() < 0.2:
            slope = 0.0
        loop = sum(min(1.0, value + k * slope) for k in range(1, R + 1))
        assert float(linear_optimistic_sum(np.array(value), np.array(slope), R)) == pytest.approx(
            loop, abs=1e-9
        )


@pytest.mark.parametrize("instance", [1, 2, 3])
def test_spo_noise_free_equals_algorithm_1_reference(instance):
    env = SinglePeakedBandit(instance=instance, length=1500)
    for T in (40, 700, 1500):
        fast = _run(SPO(), env, T, horizon=T, reps=[0])
        slow = _run(BatchedSimplePolicy(ReferenceSPO()), env, T, horizon=T, reps=[0])
        np.testing.assert_array_equal(fast.pulls, slow.pulls)


def test_spo_on_decreasing_curves_is_greedy_after_the_initial_phase():
    """Lemma 2 of Lindner et al.: after N_init pulls of every arm SPO pulls argmax_i f_i(n_i)."""
    env = DecreasingBandit([0.9, 0.8, 0.85], [0.1, 0.5, 0.3], [0.01, 0.002, 0.005], length=500)
    T = 500
    policy = SPO()
    env.reset(EnvironmentRandom(0, 1, [0]))
    policy.reset(env.action_space, T, BatchRNG.from_key(0, (1,), [0]))
    for t in range(1, T + 1):
        action = policy.select()
        if t > policy.initial * 3:
            assert action[0] == int(np.argmax(policy.last[0]))
        policy.update(action, env.step(action).feedback)


def test_discounted_ucb_equals_history_recomputation():
    env = SinglePeakedBandit(instance=2, noise="gaussian", sigma=0.1, length=400)
    for gamma in (0.9, 0.99, 1.0):
        fast = _run(DiscountedUCB(discount=gamma), env, 300)
        slow = _run(BatchedSimplePolicy(ReferenceDiscountedUCB(gamma)), env, 300)
        np.testing.assert_array_equal(fast.pulls, slow.pulls)
    np.testing.assert_array_equal(
        _run(UCB(), env, 300).pulls, _run(DiscountedUCB(discount=1.0), env, 300).pulls
    )


def test_sliding_window_ucb_equals_history_recomputation():
    env = SinglePeakedBandit(instance=1, noise="gaussian", sigma=0.1, length=400)
    for window in (1, 5, 37):
        fast = _run(SlidingWindowUCB(window=window), env, 300)
        slow = _run(BatchedSimplePolicy(ReferenceSlidingWindowUCB(window)), env, 300)
        np.testing.assert_array_equal(fast.pulls, slow.pulls)


def test_default_tunings_follow_the_authors():
    space = SinglePeakedBandit(length=10).action_space
    rng = BatchRNG.from_key(0, (1,), [0])
    d, s, r = DiscountedUCB(), SlidingWindowUCB(), RExp3()
    for p in (d, s, r):
        p.reset(space, 10_000, rng)
    assert d._gamma == pytest.approx(1 - 1 / (4 * 100))
    assert s._tau == math.floor(4 * math.sqrt(10_000 * math.log(10_000)))
    k_log_k = 2 * math.log(2)
    assert r.batch == math.ceil(k_log_k ** (1 / 3) * (10_000 / 2) ** (2 / 3))
    assert r._gamma == pytest.approx(min(1, math.sqrt(k_log_k / ((math.e - 1) * r.batch))))


def test_hkr_commits_to_the_best_increasing_arm():
    env = IncreasingBandit("inc_1", alpha=0.5, length=3000)
    t = _run(BatchedSimplePolicy(HKR()), env, 3000, horizon=3000, reps=[0])
    pulls = t.pulls[0]
    assert pulls[-1, 0] > 2900  # f1 → 1 beats f2 → 0.5
    # once eliminated, arm 1 is never pulled again
    stops = np.flatnonzero(np.diff(pulls[:, 1]) > 0)
    assert np.all(np.diff(pulls[stops[-1] + 1 :, 1]) == 0)


def test_single_peaked_instances_match_reproduction_facts():
    curves = single_peaked_curves(instance=3, length=20_000)
    assert curves.shape == (2, 20_000)
    assert np.all((curves >= 0) & (curves <= 1))
    # Figure 1: arm 1 starts higher, arm 2 has the higher asymptote
    assert curves[0, 100] > curves[1, 100] and curves[1, -1] > curves[0, -1]


def _highs_shifted(lower, upper, horizon):
    """max Σ_{j=n+2}^{T} v_j subject to (⋆), written out densely for scipy's HiGHS."""
    from scipy.optimize import linprog

    n = len(lower)
    size = horizon  # variables v_1..v_T
    c = np.zeros(size)
    c[n + 1 :] = -1.0  # v_{n+2}..v_T
    rows, rhs = [], []
    for j in range(size - 1):  # v_j − v_{j+1} ≤ 0
        row = np.zeros(size)
        row[j], row[j + 1] = 1.0, -1.0
        rows.append(row)
        rhs.append(0.0)
    for j in range(2, size):  # v_j − 2 v_{j−1} + v_{j−2} ≤ 0
        row = np.zeros(size)
        row[j], row[j - 1], row[j - 2] = 1.0, -2.0, 1.0
        rows.append(row)
        rhs.append(0.0)
    bounds = [(max(0.0, lo), min(1.0, up)) for lo, up in zip(lower, upper, strict=True)]
    bounds += [(0.0, 1.0)] * (size - n)
    result = linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=bounds, method="highs")
    return None if result.status == 2 else -result.fun


def test_spo_authors_code_variant_objective_equals_highs():
    from impactbandits.oracles.concave_bound import ConcaveBound

    rng = np.random.default_rng(7)
    policy = SPO(noise_bound=0.05, variant="authors-code")
    checked = 0
    for _ in range(60):
        n, horizon = int(rng.integers(2, 12)), int(rng.integers(15, 60))
        truth = np.minimum(1.0, 0.2 + 0.3 * np.sqrt(np.arange(1, n + 1) / rng.uniform(2, 9)))
        observed = truth + rng.uniform(-0.05, 0.05, n)
        bound = ConcaveBound.from_intervals(observed - 0.05, observed + 0.05)
        expected = _highs_shifted(observed - 0.05, observed + 0.05, horizon)
        if expected is None:
            assert not bound.feasible
            continue
        policy.horizon = horizon
        assert policy._shifted_objective(bound) == pytest.approx(expected, abs=1e-7)
        checked += 1
    assert checked >= 40


def test_spo_variants_differ_but_both_pass_the_contract():
    from impactbandits.testing import check_policy

    check_policy(
        lambda: SPO(noise_bound=0.1, variant="authors-code"),
        env_factory=lambda: SinglePeakedBandit(instance=3, noise="gaussian", sigma=0.05),
    )
    env = SinglePeakedBandit(instance=3, length=3000, noise="gaussian", sigma=0.05)
    paper = _run(SPO(noise_bound=0.1), env, 3000, horizon=3000)
    authors = _run(SPO(noise_bound=0.1, variant="authors-code"), env, 3000, horizon=3000)
    assert not np.array_equal(paper.pulls, authors.pulls)


def test_curve_import_paths_that_fail_name_the_arm():
    with pytest.raises(SpecError, match=r"^curves\[1\]: cannot import 'no_such_module:f'"):
        RestedBandit([[0.1, 0.2], "no_such_module:f"])
    with pytest.raises(SpecError, match=r"^curves\[0\]: cannot import 'numpy:no_such_function'"):
        RestedBandit(["numpy:no_such_function"])
