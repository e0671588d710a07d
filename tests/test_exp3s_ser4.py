"""Exp3.S and SER4 equal their plain references (the papers' pseudo-code, one replication at a
time, reading the same stream positions), their compiled steps equal their readable forms bit
for bit, they pass the policy contract, and they follow a best arm that switches where EXP3 and
successive elimination without resets do not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import Discrete
from impactbandits.core.streams import stream_uniform
from impactbandits.envs.rested import RestedBandit
from impactbandits.errors import SpecError
from impactbandits.policies.classic import EXP3
from impactbandits.policies.exp3s import Exp3S
from impactbandits.policies.ser4 import Ser4
from impactbandits.registry import build_environment
from impactbandits.testing import check_compiled_step, check_policy

from .simulation import PerReplication, run_batch

REPS = [0, 4, 9, 13]


# ---------------------------------------------------------------- plain references


class ReferenceExp3S(SimplePolicy):
    """Auer et al. (2002), Fig. 5, as written: w_i(1) = 1, never renormalised;
    p_i = (1 − γ) w_i / W + γ/K; the arm by the inverse CDF at the uniform of channel 0;
    w_j ← w_j exp(γ x̂_j / K) + (e α / K) W with x̂ the importance-weighted reward. γ and α of
    Corollary 8.3 (α = 1/T, γ = min(1, sqrt(K (S ln(KT) + e) / ((e − 1) T)))) unless given."""

    def __init__(self, stream, gamma=None, alpha=None, hardness=1):
        self.stream, self.gamma, self.alpha, self.hardness = stream, gamma, alpha, hardness

    def reset(self, space, horizon, rng):
        K, T = space.n, horizon
        self.K, self.t = K, 0
        self.g = self.gamma
        if self.g is None:
            self.g = min(1.0, math.sqrt(K * (self.hardness * math.log(K * T) + math.e)
                                        / ((math.e - 1) * T)))  # fmt: skip
        self.a = 1.0 / T if self.alpha is None else self.alpha
        self.w = [1.0] * K

    def select(self):
        self.t += 1
        W = 0.0
        for w in self.w:
            W += w
        self.p = [(1.0 - self.g) * w / W + self.g / self.K for w in self.w]
        total = 0.0
        for q in self.p:
            total += q
        threshold = stream_uniform(self.stream, 0, self.t, 0) * total
        cumulative = 0.0
        for i, q in enumerate(self.p):
            cumulative += q
            if cumulative >= threshold:
                return i
        return self.K - 1

    def update(self, action, feedback):
        x = float(feedback.reward)
        W = 0.0
        for w in self.w:
            W += w
        new = []
        for j, w in enumerate(self.w):
            x_hat = x / self.p[j] if j == action else 0.0
            new.append(w * math.exp(self.g * x_hat / self.K) + math.e * self.a / self.K * W)
        self.w = new


class ReferenceSer4(SimplePolicy):
    """SER4 as our module docstring states it: round-robins over S in random order (the next arm
    uniform among those not yet played, the uniform of channel 0), eliminate k ≠ best if
    μ̂_max − μ̂_k + ε ≥ 2 sqrt(ln(4Kτ²/δ)/(2τ)) after each, then reset with probability φ (the
    uniform of channel 1). δ = 1/T, ε = 1/(KT), φ = 1/sqrt(K sqrt(KT)) unless given."""

    def __init__(self, stream, delta=None, epsilon=None, phi=None):
        self.stream, self.delta, self.epsilon, self.phi = stream, delta, epsilon, phi

    def reset(self, space, horizon, rng):
        K, T = space.n, horizon
        self.K, self.t = K, 0
        self.d = 1.0 / T if self.delta is None else self.delta
        self.e = 1.0 / (T * K) if self.epsilon is None else self.epsilon
        self.f = math.sqrt(T / (T * K * math.sqrt(K * T))) if self.phi is None else self.phi
        self._restart()

    def _restart(self):
        self.S = list(range(self.K))
        self.sums = [0.0] * self.K
        self.tau = 1
        self.played = []

    def select(self):
        self.t += 1
        left = [k for k in self.S if k not in self.played]
        u = stream_uniform(self.stream, 0, self.t, 0)
        return left[min(int(u * len(left)), len(left) - 1)]

    def update(self, action, feedback):
        self.sums[action] += float(feedback.reward)
        self.played.append(action)
        if len(self.played) < len(self.S):
            return
        tau = self.tau
        mean = {k: self.sums[k] / tau for k in self.S}
        best = max(self.S, key=lambda k: (mean[k], -k))
        width = math.sqrt(math.log(4 * self.K * tau * tau / self.d) / (2 * tau))
        self.S = [k for k in self.S if k == best or mean[best] - mean[k] + self.e < 2 * width]
        self.tau += 1
        self.played = []
        if stream_uniform(self.stream, 1, self.t, 0) < self.f:
            self._restart()


# ---------------------------------------------------------------- (a) references


def _run(policy, env, rounds, horizon):
    return run_batch(
        policy, env, rounds, reps=REPS, seed=31, env_key=3, policy_key=14, horizon=horizon
    )


def _piecewise(length, means=((0.8, 0.3, 0.5), (0.2, 0.3, 0.9))):
    return build_environment(
        "piecewise",
        {"means": [list(m) for m in means], "change_points": [0, length // 2], "length": length},
    )


@pytest.mark.parametrize(
    ("fast", "slow", "env", "rounds"),
    [
        (Exp3S(), lambda s: ReferenceExp3S(s), _piecewise(600), 600),
        (
            Exp3S(gamma=0.3, alpha=0.05),
            lambda s: ReferenceExp3S(s, 0.3, 0.05),
            RestedBandit([[0.2, 0.7] * 200, [0.5] * 400, [0.45] * 400, [0.1] * 400]),
            400,
        ),
        (Exp3S(hardness=3), lambda s: ReferenceExp3S(s, hardness=3), _piecewise(500), 500),
        (Ser4(), lambda s: ReferenceSer4(s), _piecewise(600), 600),
        (  # eliminations and resets within the run
            Ser4(delta=0.1, epsilon=0.0, phi=0.02),
            lambda s: ReferenceSer4(s, 0.1, 0.0, 0.02),
            build_environment("bernoulli", {"means": [0.1, 0.9, 0.5, 0.85]}),
            800,
        ),
        (  # a large ε: every arm but the empirical best goes once the width is below ε/2
            Ser4(delta=0.2, epsilon=0.4, phi=0.01),
            lambda s: ReferenceSer4(s, 0.2, 0.4, 0.01),
            RestedBandit([[0.2, 0.7] * 200, [0.5] * 400, [0.45] * 400]),
            400,
        ),
    ],
    ids=[
        "exp3s-tuned",
        "exp3s-explicit",
        "exp3s-hardness",
        "ser4-default",
        "ser4-eliminates",
        "ser4-epsilon",
    ],
)
def test_equals_its_plain_reference(fast, slow, env, rounds):
    a = _run(fast, env, rounds, rounds)
    b = _run(PerReplication(slow), env, rounds, rounds)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.reward, b.reward)


def test_ser4_reference_cases_exercise_elimination():
    """The comparison above is not vacuous: on the 4-arm instance SER4 eliminates the worst arm
    (0.1) between resets, so it is pulled less than the best (0.9) in every replication, which a
    round-robin never does (measured: 116–170 pulls against 210–228)."""
    env = build_environment("bernoulli", {"means": [0.1, 0.9, 0.5, 0.85]})
    t = _run(Ser4(delta=0.1, epsilon=0.0, phi=0.02), env, 800, 800)
    final = t.pulls[:, -1, :]
    assert (final[:, 1] > final[:, 0] + 30).all(), final


# ---------------------------------------------------------------- (b) compiled = readable


@pytest.mark.skipif(not kernels.available(), reason="no compiled loops (numba not installed)")
@pytest.mark.parametrize(
    ("factory", "means", "rounds"),
    [
        (lambda: Exp3S(), [0.3, 0.7, 0.5], 400),
        (lambda: Exp3S(gamma=0.2, alpha=0.01, hardness=2), [0.1, 0.9, 0.5, 0.85, 0.2], 600),
        (lambda: Exp3S(gamma=1.0, alpha=0.0), [0.4, 0.6], 200),
        (lambda: Ser4(), [0.3, 0.7, 0.5], 400),
        (lambda: Ser4(delta=0.1, epsilon=0.0, phi=0.02), [0.1, 0.9, 0.5, 0.85], 1500),
        (lambda: Ser4(delta=0.2, epsilon=0.4, phi=0.0), [0.2, 0.3, 0.8], 600),
    ],
)
def test_compiled_equals_readable(factory, means, rounds):
    env = lambda: build_environment("bernoulli", {"means": means})  # noqa: E731
    assert check_compiled_step(factory, env, rounds=rounds)


# ---------------------------------------------------------------- (c) contract


@pytest.mark.parametrize(
    "factory",
    [
        lambda: Exp3S(),
        lambda: Exp3S(gamma=0.1, alpha=0.001),
        lambda: Ser4(),
        lambda: Ser4(delta=0.05, epsilon=0.01, phi=0.01),
    ],
    ids=["exp3s", "exp3s-anytime", "ser4", "ser4-anytime"],
)
def test_contract(factory):
    check_policy(factory)


@pytest.mark.parametrize(
    ("policy", "field"),
    [(Exp3S(), "gamma"), (Exp3S(gamma=0.1), "alpha"), (Ser4(delta=0.1, phi=0.1), "epsilon")],
)
def test_horizon_derived_defaults_need_the_horizon(policy, field):
    assert policy.requires_horizon
    with pytest.raises(SpecError) as caught:
        policy.reset(Discrete(3), None, BatchRNG.from_key(1, (2,), [0]))
    assert caught.value.field == field


def test_explicit_parameters_make_them_anytime():
    assert not Exp3S(gamma=0.1, alpha=0.0).requires_horizon
    assert not Ser4(delta=0.1, epsilon=0.0, phi=0.0).requires_horizon


def test_corollary_8_3_defaults():
    """α = 1/T and γ = min(1, sqrt(K (S ln(KT) + e) / ((e − 1) T))), e.g. K = 2, T = 4000,
    S = 1: γ = sqrt(2 (ln 8000 + e) / (1.71828 · 4000)) = 0.05836."""
    policy = Exp3S()
    policy.reset(Discrete(2), 4000, BatchRNG.from_key(1, (2,), [0]))
    assert policy._alpha == 1 / 4000
    assert policy._gamma == pytest.approx(0.058362, abs=1e-6)
    small = Exp3S(hardness=50)
    small.reset(Discrete(10), 100, BatchRNG.from_key(1, (2,), [0]))
    assert small._gamma == 1.0


# ---------------------------------------------------------------- (d) behaviour

T = 4000


def _share(policy, arm, first, last):
    """Per replication (20 seeds), the fraction of rounds first+1 … last spent on ``arm``, on two
    Bernoulli arms whose means swap from (0.8, 0.2) to (0.2, 0.8) at T/2."""
    env = _piecewise(T, means=((0.8, 0.2), (0.2, 0.8)))
    t = run_batch(policy, env, T, reps=range(20), seed=7, env_key=1, policy_key=2, horizon=T,
                  checkpoints=[first, last])  # fmt: skip
    return (t.pulls[:, 1, arm] - t.pulls[:, 0, arm]) / (last - first)


def test_exp3s_follows_the_switch_where_exp3_does_not():
    """EXP3's weight of the old best arm grows without bound in the first half and takes as
    long to undo; Exp3.S's shared mass e α W/K keeps the other arm's weight within reach.
    Measured: Exp3.S spends 0.95 of the last quarter on the new best arm (every seed > 0.93),
    EXP3 0.17."""
    assert _share(Exp3S(), 1, 3 * T // 4, T).min() > 0.8
    assert _share(EXP3(), 1, 3 * T // 4, T).mean() < 0.4


def test_ser4_follows_the_switch_where_successive_elimination_does_not():
    """With φ = 0 SER4 is SER3 (successive elimination without resets): it eliminates the
    arm that will become the best and never plays it again (0 of the last quarter). SER4 with
    φ = 0.002 per round-robin resets and re-eliminates: 0.79 of the last quarter on the new best
    arm on average, and 0.79 of the second quarter on the first best (a round-robin, or an
    elimination that never fires, gives 0.5)."""
    ser4 = Ser4(delta=1 / T, epsilon=1 / (2 * T), phi=0.002)
    ser3 = Ser4(delta=1 / T, epsilon=1 / (2 * T), phi=0.0)
    assert _share(ser4, 1, 3 * T // 4, T).mean() > 0.65
    assert _share(ser4, 0, T // 4, T // 2).mean() > 0.65
    assert _share(ser3, 1, 3 * T // 4, T).max() < 0.05
