"""Batched policies equal their plain references; statistical properties with fixed seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core import EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs import BernoulliBandit, GaussianBandit
from impactbandits.oracles import best_fixed_arm
from impactbandits.policies import EXP3, UCB1, ExploreThenCommit, Greedy, RoundRobin
from impactbandits.policies.kl_ucb import KLUCB
from impactbandits.policies.moss import MOSS
from impactbandits.policies.ucb_v import UCBV

from .reference_policies import (
    FixedArm,
    ReferenceETC,
    ReferenceEXP3,
    ReferenceGreedy,
    ReferenceKLUCB,
    ReferenceMOSS,
    ReferenceUCB1,
    ReferenceUCBV,
)
from .simulation import run_batch

REPS = list(range(8))


def _run(policy, env, rounds, reps=REPS, horizon=None, checkpoints=None, seed=21):
    return run_batch(
        policy,
        env,
        rounds,
        reps=reps,
        seed=seed,
        env_key=7,
        policy_key=8,
        horizon=horizon,
        checkpoints=checkpoints,
    )


@pytest.mark.parametrize(
    ("fast", "slow", "env"),
    [
        (UCB1(), ReferenceUCB1(), BernoulliBandit([0.3, 0.5, 0.55, 0.7])),
        (UCB1(), ReferenceUCB1(), GaussianBandit(n_arms=5, sigma=0.2)),
        (EXP3(gamma=0.05), ReferenceEXP3(0.05), BernoulliBandit([0.2, 0.6, 0.5])),
        (Greedy(), ReferenceGreedy(), BernoulliBandit([0.3, 0.5, 0.55, 0.7])),
        (ExploreThenCommit(m=7), ReferenceETC(7), GaussianBandit(n_arms=3, sigma=0.5)),
        (MOSS(), ReferenceMOSS(), BernoulliBandit([0.3, 0.5, 0.55, 0.7])),
        (MOSS(alpha=0.0), ReferenceMOSS(0.0), GaussianBandit(n_arms=5, sigma=0.2)),
        (KLUCB(), ReferenceKLUCB(), BernoulliBandit([0.3, 0.5, 0.55, 0.7])),
        (KLUCB(c=3.0), ReferenceKLUCB(c=3.0), BernoulliBandit([0.1, 0.15, 0.2])),
        (KLUCB(level="kl-ucb+"), ReferenceKLUCB(plus=True), BernoulliBandit([0.4, 0.5, 0.45])),
        (
            KLUCB(divergence="gaussian", sigma=0.2),
            ReferenceKLUCB(gaussian=True, sigma=0.2),
            GaussianBandit(n_arms=5, sigma=0.2),
        ),
        (UCBV(), ReferenceUCBV(), BernoulliBandit([0.3, 0.5, 0.55, 0.7])),
        (UCBV(zeta=1.0, c=0.5), ReferenceUCBV(1.0, 0.5), GaussianBandit(n_arms=4, sigma=0.1)),
    ],
    ids=[
        "ucb1-bernoulli",
        "ucb1-gaussian",
        "exp3",
        "greedy",
        "etc",
        "moss",
        "moss-gaussian",
        "kl-ucb",
        "kl-ucb-c3",
        "kl-ucb+",
        "kl-ucb-gaussian",
        "ucb-v",
        "ucb-v-gaussian",
    ],
)
def test_batched_policy_equals_plain_reference(fast, slow, env):
    a = _run(fast, env, 400)
    b = _run(BatchedSimplePolicy(slow), env, 400)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.reward, b.reward)


def test_round_robin_cycles():
    trajectory = _run(RoundRobin(), BernoulliBandit([0.1, 0.2, 0.3]), 10, reps=[0])
    np.testing.assert_array_equal(trajectory.pulls[0, -1], [4, 3, 3])
    assert trajectory.switches[0, -1] == 9


def test_etc_tuned_length_is_capped_and_commits():
    env = BernoulliBandit([0.4, 0.6])
    policy = ExploreThenCommit()
    t = _run(policy, env, 50, horizon=50)
    # m = min(⌈(T/K)^{2/3}(ln T)^{1/3}⌉, ⌊T/K⌋) = min(⌈8.55 · 1.576⌉, 25) = 14
    assert policy._m == 14
    assert np.all(t.pulls[:, 27] == 14)  # after 28 rounds: 14 pulls each
    assert np.all(t.switches[:, -1] <= 28)  # 27 switches while exploring, at most 1 to commit


def test_best_fixed_arm_equals_brute_force_over_fixed_policies():
    env = GaussianBandit(n_arms=4, sigma=0.1)
    times = np.array([1, 5, 50, 200])
    oracle_env = GaussianBandit(n_arms=4, sigma=0.1)
    oracle_env.reset(EnvironmentRandom(21, 7, REPS))
    optimum = best_fixed_arm(oracle_env, times)
    fixed = np.stack(
        [
            _run(BatchedSimplePolicy(FixedArm(a)), env, 200, checkpoints=times).expected
            for a in range(4)
        ]
    )
    np.testing.assert_allclose(optimum, fixed.max(axis=0), rtol=1e-12)


@pytest.mark.slow
def test_ucb1_regret_grows_logarithmically():
    """Two Bernoulli arms 0.3/0.7 (Δ = 0.4), 200 seeds, T from 10² to 10⁵ in one anytime run.

    Auer et al. (2002, Thm 1): E[R_T] ≤ 8 ln T / Δ + (1 + π²/3) Δ. Logarithmic growth means a
    constant regret increment per decade of T: the ratio of the increments over [10⁴, 10⁵] and
    [10³, 10⁴] is 1 (√T growth would give √10 ≈ 3.16, linear growth 10). With 200 seeds the
    standard error of each mean regret is below 1 for increments of about 16, so we accept
    [0.7, 1.4] (about ±4 standard errors). A straight-line fit against ln T over [10³, 10⁵]
    must explain ≥ 98% of the variance.
    """
    env = BernoulliBandit([0.3, 0.7])
    times = np.unique(np.round(np.geomspace(100, 100_000, 13)).astype(int))
    t = _run(UCB1(), env, int(times[-1]), reps=list(range(200)), checkpoints=times)
    regret = times * 0.7 - t.expected.mean(axis=0)
    bound = 8 * np.log(times) / 0.4 + (1 + math.pi**2 / 3) * 0.4
    assert np.all(regret <= bound), (regret, bound)
    at = {int(T): r for T, r in zip(times, regret, strict=True)}
    ratio = (at[100_000] - at[10_000]) / (at[10_000] - at[1000])
    assert 0.7 <= ratio <= 1.4, ratio
    late = times >= 1000
    slope, intercept = np.polyfit(np.log(times[late]), regret[late], 1)
    fitted = slope * np.log(times[late]) + intercept
    r2 = 1 - np.sum((regret[late] - fitted) ** 2) / np.sum(
        (regret[late] - regret[late].mean()) ** 2
    )
    assert slope > 0 and r2 >= 0.98, (slope, r2)


@pytest.mark.slow
def test_exp3_stays_finite_at_one_million_rounds():
    """T = 10⁶ with the horizon-tuned γ: no overflow, finite weights, and the expected regret
    below Auer et al.'s Corollary 3.2 bound 2√(e−1)·√(T K ln K) ≈ 3085 (K = 2)."""
    env = BernoulliBandit([0.3, 0.7])
    T = 1_000_000
    policy = EXP3()
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        t = _run(policy, env, T, reps=list(range(16)), horizon=T, checkpoints=[T // 10, T])
    assert np.all(np.isfinite(policy.log_w)) and np.all(np.isfinite(policy.p))
    regret = T * 0.7 - t.expected[:, -1]
    bound = 2 * math.sqrt(math.e - 1) * math.sqrt(T * 2 * math.log(2))
    assert np.all(np.isfinite(regret))
    assert regret.mean() <= bound, (regret.mean(), bound)
    assert np.all(t.pulls[:, -1, 1] > 0.9 * T)
