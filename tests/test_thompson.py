"""Thompson sampling equals its plain reference (Agrawal & Goyal's pseudo-code, one replication
at a time, the same stream positions) and has logarithmic regret."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.envs import BernoulliBandit, GaussianBandit
from impactbandits.envs.rested import RestedBandit
from impactbandits.policies.thompson import GaussianThompsonSampling, ThompsonSampling

from .reference_policies import ReferenceGaussianThompson, ReferenceThompson
from .simulation import PerReplication, run_batch

REPS = [0, 4, 9, 13]


def _run(policy, env, rounds=300, reps=REPS):
    return run_batch(policy, env, rounds, reps=reps, seed=31, env_key=3, policy_key=12)


@pytest.mark.parametrize(
    ("fast", "slow", "env"),
    [
        (ThompsonSampling(), lambda s: ReferenceThompson(s), BernoulliBandit([0.3, 0.5, 0.55])),
        (  # rewards in [0, 1] that are not 0/1: the binarizing draw matters
            ThompsonSampling(prior_alpha=0.5, prior_beta=2.0),
            lambda s: ReferenceThompson(s, (0.5, 2.0)),
            RestedBandit([[0.2, 0.7] * 150, [0.5] * 300, [0.45] * 300]),
        ),
        (
            ThompsonSampling(update="fractional"),
            lambda s: ReferenceThompson(s, binarize=False),
            RestedBandit([[0.2, 0.7] * 150, [0.5] * 300, [0.45] * 300]),
        ),
        (
            GaussianThompsonSampling(sigma=0.3),
            lambda s: ReferenceGaussianThompson(s, 0.3),
            GaussianBandit(n_arms=4, sigma=0.3),
        ),
    ],
    ids=["bernoulli", "binarize", "fractional", "gaussian"],
)
def test_thompson_equals_its_plain_reference(fast, slow, env):
    a = _run(fast, env)
    b = _run(PerReplication(slow), env)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.reward, b.reward)


@pytest.mark.slow
def test_thompson_regret_is_logarithmic_and_near_the_lai_robbins_rate():
    """Two Bernoulli arms 0.3/0.7, 100 seeds, T from 10² to 10⁴ (one anytime run). Agrawal &
    Goyal (2012) and Kaufmann, Korda & Munos (2012): TS is asymptotically optimal, regret
    ≈ Δ ln T / kl(0.3, 0.7) = 0.4/0.3389 ln T = 1.18 ln T, far below UCB1's bound 8 ln T / Δ.
    We check the regret added per decade: logarithmic growth keeps it constant, so the late
    decade adds at most 1.5x the early one (√T growth would give 3.2x), and at T = 10⁴ the mean
    regret is below 3 × 1.18 ln T (finite-time terms) and above 0."""
    env = BernoulliBandit([0.3, 0.7])
    times = np.array([100, 1000, 10_000])
    t = run_batch(ThompsonSampling(), env, 10_000, reps=range(100), seed=5, env_key=1,
                  policy_key=2, checkpoints=times)  # fmt: skip
    regret = times * 0.7 - t.expected.mean(axis=0)
    kl = 0.3 * math.log(0.3 / 0.7) + 0.7 * math.log(0.7 / 0.3)
    rate = 0.4 / kl
    assert 0 < regret[-1] < 3 * rate * math.log(10_000), regret
    assert (regret[2] - regret[1]) <= 1.5 * (regret[1] - regret[0]), regret
