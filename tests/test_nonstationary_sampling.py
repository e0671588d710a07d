"""D-TS, SW-TS and SW-KL-UCB equal their plain references (the papers' pseudo-code, one
replication at a time, the same stream positions), their compiled steps equal their readable
forms bit for bit, they pass the policy contract, and they track a switch of the best arm that
their stationary counterparts miss."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core.policy import SimplePolicy
from impactbandits.envs import BernoulliBandit, GaussianBandit
from impactbandits.envs.restless import RestlessBandit
from impactbandits.policies.kl_ucb import KLUCB, kl_upper_bound
from impactbandits.policies.kl_ucb_window import SlidingWindowKLUCB
from impactbandits.policies.thompson import ThompsonSampling
from impactbandits.policies.thompson_nonstationary import (
    DiscountedThompsonSampling,
    SlidingWindowThompsonSampling,
)
from impactbandits.registry import build_environment
from impactbandits.testing import check_compiled_step, check_policy

from .simulation import PerReplication, run_batch

REPS = [0, 4, 9, 13]
ROUNDS = 300


# --- references, straight from the pseudo-code ------------------------------------------------


class ReferenceDiscountedThompson(SimplePolicy):
    """Raj & Kalyani (2017), Algorithm 2 (dTS): θ_k ~ Beta(S_k + α₀, F_k + β₀) for every arm,
    play the largest (first on ties), then S_k ← γ S_k + 1{k = I_t} r̃, F_k ← γ F_k +
    1{k = I_t} (1 − r̃) for every arm k; r̃ a Bernoulli(r) draw (``binarize``) or r itself."""

    def __init__(self, stream, gamma, prior=(1.0, 1.0), binarize=True):
        self.stream, self.gamma, self.prior, self.binarize = stream, gamma, prior, binarize

    def reset(self, space, horizon, rng):
        from impactbandits.core.streams import stream_beta, stream_uniform

        self._beta, self._uniform = stream_beta, stream_uniform
        self.k, self.t = space.n, 0
        self.S = [0.0] * self.k
        self.F = [0.0] * self.k

    def select(self):
        self.t += 1
        draws = [
            self._beta(self.stream, self.S[k] + self.prior[0], self.F[k] + self.prior[1], k,
                       self.t)
            for k in range(self.k)
        ]  # fmt: skip
        return max(range(self.k), key=lambda k: (draws[k], -k))

    def update(self, action, feedback):
        r = float(feedback.reward)
        if self.binarize:
            r = 1.0 if self._uniform(self.stream, 2 * self.k, self.t, 0) < r else 0.0
        for k in range(self.k):
            played = k == action
            self.S[k] = self.gamma * self.S[k] + (r if played else 0.0)
            self.F[k] = self.gamma * self.F[k] + (1.0 - r if played else 0.0)


class ReferenceSlidingWindowThompson(SimplePolicy):
    """Trovò et al. (2020), SW-TS: the Beta posterior of each arm from the (binarized) outcomes
    of the last τ plays, S_{t,τ}(k) and F_{t,τ}(k) recounted from the history every round."""

    def __init__(self, stream, tau, prior=(1.0, 1.0)):
        self.stream, self.tau, self.prior = stream, tau, prior

    def reset(self, space, horizon, rng):
        from impactbandits.core.streams import stream_beta, stream_uniform

        self._beta, self._uniform = stream_beta, stream_uniform
        self.k, self.t = space.n, 0
        self.history = []  # (arm, outcome) of every round

    def select(self):
        self.t += 1
        window = self.history[-self.tau :]
        draws = []
        for k in range(self.k):
            s = sum(o for a, o in window if a == k)
            f = sum(1.0 - o for a, o in window if a == k)
            draws.append(self._beta(self.stream, s + self.prior[0], f + self.prior[1], k, self.t))
        return max(range(self.k), key=lambda k: (draws[k], -k))

    def update(self, action, feedback):
        u = self._uniform(self.stream, 2 * self.k, self.t, 0)
        self.history.append((action, 1.0 if u < float(feedback.reward) else 0.0))


class ReferenceSlidingWindowKLUCB(SimplePolicy):
    """KL-UCB on Garivier & Moulines' window: after t plays, with N_i and X̄_i the plays and
    mean reward of arm i among the last τ, play an arm with N_i = 0 (lowest first), else
    argmax_i max{q ≥ X̄_i : N_i d(X̄_i, q) ≤ ln m + c ln max(1, ln m)}, m = min(t, τ)."""

    def __init__(self, stream, tau, c=0.0):
        self.tau, self.c = tau, c

    def reset(self, space, horizon, rng):
        self.k = space.n
        self.history = []  # (arm, reward) of every round

    def select(self):
        window = self.history[-self.tau :]
        counts = [sum(1 for a, _ in window if a == i) for i in range(self.k)]
        for i in range(self.k):
            if counts[i] == 0:
                return i
        m = min(len(self.history), self.tau)
        level = math.log(m) + self.c * math.log(max(math.log(m), 1.0))
        index = []
        for i in range(self.k):
            mean = sum(r for a, r in window if a == i) / counts[i]
            index.append(kl_upper_bound(mean, float(counts[i]), level))
        return max(range(self.k), key=lambda i: (index[i], -i))

    def update(self, action, feedback):
        self.history.append((action, float(feedback.reward)))


# --- environments ------------------------------------------------------------------------------


def _switching(noise="beta-mean"):
    """Three restless arms whose best switches at round 150 (rewards in (0, 1), not 0/1)."""
    h = ROUNDS // 2
    return RestlessBandit(
        [[0.8] * h + [0.3] * h, [0.5] * (2 * h), [0.2] * h + [0.7] * h], noise=noise
    )


def _dyadic():
    """Piecewise-constant noise-free rewards that are multiples of 1/8: every windowed sum is
    exact, so recounting the window and the ring buffer's running sums agree to the bit."""
    h = ROUNDS // 2
    return RestlessBandit([[0.875] * h + [0.25] * h, [0.375] * (2 * h), [0.5] * h + [0.625] * h])


def _run(policy, env, rounds=ROUNDS, horizon=None):
    return run_batch(policy, env, rounds, reps=REPS, seed=31, env_key=3, policy_key=12,
                     horizon=horizon)  # fmt: skip


def _same(fast, slow, env, horizon=None):
    a = _run(fast, env, horizon=horizon)
    b = _run(PerReplication(slow), env, horizon=horizon)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.reward, b.reward)
    return a


# --- (a) equal to the references ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fast", "slow", "env"),
    [
        (
            DiscountedThompsonSampling(),
            lambda s: ReferenceDiscountedThompson(s, 0.95),
            BernoulliBandit([0.3, 0.5, 0.55]),
        ),
        (
            DiscountedThompsonSampling(discount=0.9, prior_alpha=0.5, prior_beta=2.0),
            lambda s: ReferenceDiscountedThompson(s, 0.9, (0.5, 2.0)),
            _switching(),
        ),
        (
            DiscountedThompsonSampling(discount=0.8, update="fractional"),
            lambda s: ReferenceDiscountedThompson(s, 0.8, binarize=False),
            _switching(),
        ),
    ],
    ids=["bernoulli", "switching", "fractional"],
)
def test_discounted_thompson_equals_its_plain_reference(fast, slow, env):
    _same(fast, slow, env)


@pytest.mark.parametrize(
    ("fast", "slow", "env"),
    [
        (
            SlidingWindowThompsonSampling(window=25),
            lambda s: ReferenceSlidingWindowThompson(s, 25),
            BernoulliBandit([0.3, 0.5, 0.55]),
        ),
        (
            SlidingWindowThompsonSampling(window=40, prior_alpha=2.0, prior_beta=0.5),
            lambda s: ReferenceSlidingWindowThompson(s, 40, (2.0, 0.5)),
            _switching(),
        ),
    ],
    ids=["bernoulli", "switching"],
)
def test_sliding_window_thompson_equals_its_plain_reference(fast, slow, env):
    _same(fast, slow, env)


def test_sliding_window_thompson_default_window_is_the_ceiling_of_root_t():
    """``window = None``: τ = ⌈T^{1−β}⌉, β = 1/2 (Metelli et al.'s code): ⌈√300⌉ = 18."""
    tau = math.ceil(ROUNDS ** (1 - 0.5))
    assert tau == 18
    assert SlidingWindowThompsonSampling().requires_horizon
    _same(
        SlidingWindowThompsonSampling(),
        lambda s: ReferenceSlidingWindowThompson(s, tau),
        _switching(),
        horizon=ROUNDS,
    )


@pytest.mark.parametrize(
    ("fast", "slow", "env"),
    [
        (
            SlidingWindowKLUCB(window=30),
            lambda s: ReferenceSlidingWindowKLUCB(s, 30),
            BernoulliBandit([0.3, 0.5, 0.55]),
        ),
        (
            SlidingWindowKLUCB(window=40, c=3.0),
            lambda s: ReferenceSlidingWindowKLUCB(s, 40, 3.0),
            _dyadic(),
        ),
        (  # the default window (252) is evicted from only in the last rounds here
            SlidingWindowKLUCB(),
            lambda s: ReferenceSlidingWindowKLUCB(s, 252),
            BernoulliBandit([0.2, 0.45, 0.4, 0.5]),
        ),
    ],
    ids=["bernoulli", "dyadic-switching", "default"],
)
def test_sliding_window_kl_ucb_equals_its_plain_reference(fast, slow, env):
    _same(fast, slow, env)


def test_sliding_window_kl_ucb_horizon_window_is_sw_ucbs():
    """``window = None``: SW-UCB's τ = ⌊4√(T ln T)⌋ (= 165 for T = 300)."""
    tau = math.floor(4 * math.sqrt(ROUNDS * math.log(ROUNDS)))
    assert tau == 165
    assert SlidingWindowKLUCB(window=None).requires_horizon
    assert not SlidingWindowKLUCB().requires_horizon
    _same(
        SlidingWindowKLUCB(window=None),
        lambda s: ReferenceSlidingWindowKLUCB(s, tau),
        BernoulliBandit([0.3, 0.5, 0.55]),
        horizon=ROUNDS,
    )


@pytest.mark.parametrize(
    "forgetful",
    [DiscountedThompsonSampling(discount=1.0), SlidingWindowThompsonSampling(window=ROUNDS)],
    ids=["d-ts-gamma-1", "sw-ts-window-T"],
)
def test_thompson_that_forgets_nothing_is_thompson_sampling(forgetful):
    """γ = 1 and τ ≥ T read the same stream positions as Thompson sampling and count the
    same (0/1) outcomes: the same actions and rewards."""
    env = _switching()
    a, b = _run(forgetful, env), _run(ThompsonSampling(), env)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    np.testing.assert_array_equal(a.reward, b.reward)


# --- (b) compiled step = readable form, (c) the contract ---------------------------------------

FACTORIES = {
    "d-ts": lambda: DiscountedThompsonSampling(),
    "d-ts-fractional": lambda: DiscountedThompsonSampling(
        discount=0.8, prior_alpha=0.5, prior_beta=2.0, update="fractional"
    ),
    "sw-ts": lambda: SlidingWindowThompsonSampling(),
    "sw-ts-window": lambda: SlidingWindowThompsonSampling(window=7, update="fractional"),
    "sw-kl-ucb": lambda: SlidingWindowKLUCB(),
    "sw-kl-ucb-window": lambda: SlidingWindowKLUCB(window=9, c=3.0),
    "sw-kl-ucb-horizon": lambda: SlidingWindowKLUCB(window=None),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_compiled_step_equals_the_readable_form(name):
    def env():
        return build_environment("bernoulli", {"means": [0.3, 0.7, 0.5, 0.65]})

    assert check_compiled_step(FACTORIES[name], env)


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_policy_contract(name):
    check_policy(FACTORIES[name])
    check_policy(FACTORIES[name], lambda: GaussianBandit(n_arms=4, sigma=0.3))


# --- (d) behaviour: tracking a switch of the best arm ------------------------------------------


def _late_pulls_of_new_best(policy, rounds=2000):
    """Two restless arms: arm 0 at 0.9 then 0.4, arm 1 at 0.6 throughout (Beta observations),
    so the best arm switches from 0 to 1 at T/2. Mean pulls of arm 1 in the last quarter."""
    h = rounds // 2
    env = RestlessBandit([[0.9] * h + [0.4] * h, [0.6] * rounds], noise="beta-mean")
    t = run_batch(policy, env, rounds, reps=range(20), seed=3, env_key=5, policy_key=6,
                  horizon=rounds, checkpoints=[3 * rounds // 4, rounds])  # fmt: skip
    return float(np.mean(t.pulls[:, 1, 1] - t.pulls[:, 0, 1]))


@pytest.fixture(scope="module")
def stationary_late_pulls():
    return {
        "ts": _late_pulls_of_new_best(ThompsonSampling()),
        "kl-ucb": _late_pulls_of_new_best(KLUCB()),
    }


@pytest.mark.parametrize(
    ("policy", "baseline"),
    [
        (DiscountedThompsonSampling(), "ts"),
        (SlidingWindowThompsonSampling(), "ts"),
        (SlidingWindowKLUCB(), "kl-ucb"),
    ],
    ids=["d-ts", "sw-ts", "sw-kl-ucb"],
)
def test_forgetting_tracks_a_switch_that_the_stationary_policy_misses(
    policy, baseline, stationary_late_pulls
):
    """Of the last 500 rounds, the stationary policy (its estimate of arm 0 built on ~1000
    pulls at 0.9) plays the new best arm ~40 (TS) / ~150 (KL-UCB) times; the forgetful ones,
    whose statistics hold ~20 (γ = 0.95), 45 (⌈√2000⌉) or 252 recent plays, ~370–440 times
    (fixed seeds). Without the discount or the eviction they would be their stationary
    counterparts."""
    late = _late_pulls_of_new_best(policy)
    stationary = stationary_late_pulls[baseline]
    assert late > 300, late
    assert late > stationary + 200, (late, stationary)
