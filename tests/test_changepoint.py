"""Change-point-detection bandits — CUSUM-UCB, M-UCB, GLR-klUCB — against plain references
written from the papers' pseudo-code (one replication, lists and loops, the same stream
positions), their compiled steps against the readable forms, the contract, and detection with
fixed seeds: an alarm soon after a change of the best arm, rarely one before it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.streams import stream_uniform
from impactbandits.envs import BernoulliBandit
from impactbandits.envs.piecewise import PiecewiseStationaryBandit
from impactbandits.errors import SpecError
from impactbandits.policies.cusum_ucb import CUSUMUCB
from impactbandits.policies.glr_klucb import GLRklUCB, glr_threshold, h_inverse, t_function
from impactbandits.policies.m_ucb import MUCB
from impactbandits.testing import check_compiled_step, check_policy

from .simulation import PerReplication, run_batch

REPS = [0, 3, 5, 8, 11, 14]
#: Bernoulli arms whose means jump twice, after a third and two thirds of the rounds (400 and
#: 800 of 1200); the best arm changes each time.
MEANS = [[0.8, 0.5, 0.3], [0.2, 0.5, 0.9], [0.7, 0.1, 0.4]]
ROUNDS = 1200


def _piecewise(length: int = ROUNDS) -> PiecewiseStationaryBandit:
    return PiecewiseStationaryBandit(MEANS, [0, length // 3, 2 * length // 3], length=length)


# ---------------------------------------------------------------------------------------------
# Plain references, one replication each
# ---------------------------------------------------------------------------------------------


def kl(p, q):
    """Bernoulli divergence, 0 ln 0 = 0, q kept in [1e-15, 1 − 1e-15]."""
    q = min(max(q, 1e-15), 1 - 1e-15)
    out = 0.0
    if p > 0:
        out += p * math.log(p / q)
    if p < 1:
        out += (1 - p) * math.log((1 - p) / (1 - q))
    return out


class ReferenceCUSUMUCB:
    """Liu, Lee & Shroff (2018), Algorithm 1 (CD-UCB) with Algorithm 2 (two-sided CUSUM): with
    probability α a uniform arm, else UCB on each arm's rewards since its last alarm with
    sqrt(ξ ln n_t / N_t(i)), n_t = Σ N_t(i); Algorithm 2 run on the played arm's history; on an
    alarm the history is emptied (τ_i = t + 1). Uniforms at channel 0, slots 0 and 1."""

    def __init__(self, words, breakpoints=1, alpha=None, h=None, m=150, eps=0.1, xi=2.0):
        self.words, self.breakpoints = words, breakpoints
        self.alpha, self.h, self.m, self.eps, self.xi = alpha, h, m, eps, xi

    def reset(self, space, horizon, rng=None):
        self.k, self.t = space.n, 0
        self.history = [[] for _ in range(self.k)]
        if self.h is None:
            self.h = math.log(horizon / self.breakpoints)
        if self.alpha is None:
            ratio = horizon / self.breakpoints
            self.alpha = min(1.0, math.sqrt(math.log(ratio) / ratio))

    def select(self):
        self.t += 1
        if stream_uniform(self.words, 0, self.t, 0) < self.alpha:
            return min(int(stream_uniform(self.words, 0, self.t, 1) * self.k), self.k - 1)
        plays = [len(h) for h in self.history]
        for i in range(self.k):
            if plays[i] == 0:
                return i
        n_t = sum(plays)
        values = [
            sum(self.history[i]) / plays[i] + math.sqrt(self.xi * math.log(n_t) / plays[i])
            for i in range(self.k)
        ]
        return values.index(max(values))

    def cusum(self, y):
        """Algorithm 2 on y_1, …, y_k: True if g⁺ or g⁻ reaches h."""
        if len(y) <= self.m:
            return False
        u0 = sum(y[: self.m]) / self.m
        g_plus = g_minus = 0.0
        for y_k in y[self.m :]:
            g_plus = max(0.0, g_plus + (y_k - u0 - self.eps))
            g_minus = max(0.0, g_minus + (u0 - y_k - self.eps))
            if g_plus >= self.h or g_minus >= self.h:
                return True
        return False

    def update(self, arm, feedback):
        reward = float(feedback.reward)
        self.history[arm].append(reward)
        if self.cusum(self.history[arm]):
            self.history[arm] = []


class ReferenceMUCB:
    """Cao et al. (2019), Algorithm 1: A = (t − τ) mod ⌊K/γ⌋ played if A < K, else UCB1 with
    sqrt(2 ln(t − τ)/n_k) on the data since τ; Algorithm 2 on the played arm's last w rewards
    (|Σ second half − Σ first half| > b); an alarm empties every arm's history, τ = t."""

    def __init__(self, words, window, threshold, gamma):
        self.w, self.b, self.gamma = window, threshold, gamma

    def reset(self, space, horizon, rng=None):
        self.k, self.t, self.tau = space.n, 0, 0
        self.z = [[] for _ in range(self.k)]

    def select(self):
        self.t += 1
        if self.gamma > 0:
            a = (self.t - self.tau) % math.floor(self.k / self.gamma)
            if a < self.k:
                return a
        for i in range(self.k):
            if not self.z[i]:
                return i
        values = [
            sum(z) / len(z) + math.sqrt(2 * math.log(self.t - self.tau) / len(z)) for z in self.z
        ]
        return values.index(max(values))

    def update(self, arm, feedback):
        reward = float(feedback.reward)
        self.z[arm].append(reward)
        if len(self.z[arm]) >= self.w:
            window = self.z[arm][-self.w :]
            half = self.w // 2
            if abs(sum(window[half:]) - sum(window[:half])) > self.b:
                self.tau = self.t
                self.z = [[] for _ in range(self.k)]


class ReferenceGLRklUCB:
    """Besson et al. (2022), Algorithm 1: arm A − 1 if A = t mod ⌊K/α⌋ ∈ {1..K} (α = α₀√k in
    episode k, or α₀), else kl-UCB with level ln(t − τ_k) + c ln ln(t − τ_k) (0 at 1), the bound
    solved by Brent's method (not the library's bisection); the Bernoulli GLR test on the played
    arm's history (every split, or every Δs-th, every Δn-th observation); local or global
    restarts."""

    def __init__(
        self, words, delta=None, alpha=None, growing=True, local=True, theory=False, c=0.0,
        every_n=1, every_s=1,
    ):  # fmt: skip
        self.delta, self.alpha0, self.growing, self.local = delta, alpha, growing, local
        self.theory, self.c, self.every_n, self.every_s = theory, c, every_n, every_s

    def reset(self, space, horizon, rng=None):
        self.k, self.t, self.episode = space.n, 0, 1
        self.z = [[] for _ in range(self.k)]
        self.tau = [0] * self.k
        if self.delta is None:
            self.delta = 1 / math.sqrt(horizon)
        if self.alpha0 is None:
            self.alpha0 = min(1.0, math.sqrt(self.k * math.log(horizon) / horizon))

    def bound(self, mean, n, level):
        from scipy.optimize import brentq

        if mean >= 1.0 or n * kl(mean, 1 - 1e-15) <= level:
            return 1.0
        if level <= 0:
            return mean
        return brentq(lambda q: n * kl(mean, q) - level, mean, 1 - 1e-15, xtol=1e-14)

    def select(self):
        self.t += 1
        alpha = self.alpha0
        if self.growing:
            alpha = min(1.0, self.alpha0 * math.sqrt(self.episode))
        a = self.t % math.floor(self.k / alpha)
        if 1 <= a <= self.k:
            return a - 1
        for i in range(self.k):
            if not self.z[i]:
                return i
        values = []
        for i in range(self.k):
            x = self.t - self.tau[i]
            level = math.log(x) + self.c * math.log(math.log(x)) if x > 1 else 0.0
            values.append(self.bound(sum(self.z[i]) / len(self.z[i]), len(self.z[i]), level))
        return values.index(max(values))

    def beta(self, n):
        level = math.log(3 * n * math.sqrt(n) / self.delta)
        if not self.theory:
            return level
        return 2 * t_function(level / 2) + 6 * math.log(1 + math.log(n))

    def glr(self, z):
        n = len(z)
        total = sum(z)
        mean = total / n
        left = 0.0
        for s in range(1, n):
            left += z[s - 1]
            if s % self.every_s:
                continue
            stat = s * kl(left / s, mean) + (n - s) * kl((total - left) / (n - s), mean)
            if stat >= self.beta(n):
                return True
        return False

    def update(self, arm, feedback):
        reward = float(feedback.reward)
        self.z[arm].append(reward)
        n = len(self.z[arm])
        if n < 2 or n % self.every_n or not self.glr(self.z[arm]):
            return
        self.episode += 1
        for i in [arm] if self.local else range(self.k):
            self.z[i] = []
            self.tau[i] = self.t


def _run(policy, env, rounds=ROUNDS, reps=REPS):
    return run_batch(
        policy, env, rounds, reps=reps, seed=17, env_key=41, policy_key=43, horizon=rounds
    )


def _same_actions(fast, slow, env_factory, rounds=ROUNDS):
    a = _run(fast, env_factory())
    b = _run(slow, env_factory())
    np.testing.assert_array_equal(a.pulls, b.pulls)  # every round a checkpoint: the actions
    np.testing.assert_array_equal(a.reward, b.reward)
    return fast


# ---------------------------------------------------------------------------------------------
# (a) the batched policies take the references' actions, restarts included
# ---------------------------------------------------------------------------------------------

CUSUM_CASES = [
    ({"breakpoints": 2, "warmup": 50, "drift": 0.1}, {"breakpoints": 2, "m": 50, "eps": 0.1}),
    (
        {"alpha": 0.05, "threshold": 3.0, "warmup": 20, "drift": 0.02, "xi": 0.5},
        {"alpha": 0.05, "h": 3.0, "m": 20, "eps": 0.02, "xi": 0.5},
    ),
]


@pytest.mark.parametrize(("params", "ref"), CUSUM_CASES, ids=["tuned", "explicit"])
def test_cusum_ucb_equals_reference(params, ref):
    fast = _same_actions(
        CUSUMUCB(**params), PerReplication(lambda w: ReferenceCUSUMUCB(w, **ref)), _piecewise
    )
    assert fast.alarms.min() >= 1  # the restarts were exercised


@pytest.mark.parametrize(
    ("params", "explicit"),
    [
        ({"window": 160}, None),
        ({"window": 40, "threshold": 6.0, "gamma": 0.15}, (40, 6.0, 0.15)),
        ({"window": 30, "threshold": 5.0, "gamma": 0.0}, (30, 5.0, 0.0)),
    ],
    ids=["tuned", "explicit", "no-exploration"],
)
def test_m_ucb_equals_reference(params, explicit):
    if explicit is None:  # the paper's b and γ for T = 1200, K = 3, Υ = 1 (by hand)
        b = math.sqrt(160 / 2 * math.log(2 * 3 * 1200**2))
        gamma = math.sqrt(3 * (2 * b + 3 * math.sqrt(160)) / (2 * 1200))
        explicit = (160, b, gamma)
    fast = _same_actions(
        MUCB(**params), PerReplication(lambda w: ReferenceMUCB(w, *explicit)), _piecewise
    )
    assert fast.alarms.min() >= 1


@pytest.mark.parametrize(
    ("params", "ref"),
    [
        ({}, {}),
        (
            {
                "restart": "global",
                "threshold": "theory",
                "exploration": "fixed",
                "alpha": 0.1,
                "delta": 0.05,
                "c": 3.0,
                "test_every": 3,
                "split_every": 2,
            },
            {
                "local": False,
                "theory": True,
                "growing": False,
                "alpha": 0.1,
                "delta": 0.05,
                "c": 3.0,
                "every_n": 3,
                "every_s": 2,
            },
        ),
    ],
    ids=["defaults", "global-theory-subsampled"],
)
def test_glr_klucb_equals_reference(params, ref):
    fast = _same_actions(
        GLRklUCB(**params), PerReplication(lambda w: ReferenceGLRklUCB(w, **ref)), _piecewise
    )
    assert fast.alarms.min() >= 1


# ---------------------------------------------------------------------------------------------
# (b) compiled steps give the readable forms' bits; (c) the contract
# ---------------------------------------------------------------------------------------------

#: name: (factory, rounds of the compiled check on the piecewise bandit, restarts expected)
FACTORIES = {
    "cusum-ucb": (lambda: CUSUMUCB(warmup=30, drift=0.1), 600, True),
    "cusum-ucb-defaults": (CUSUMUCB, 600, True),
    "m-ucb": (lambda: MUCB(window=100, threshold=20.0, gamma=0.2), 600, True),
    "m-ucb-defaults": (MUCB, 600, False),  # Remark 1's w exceeds the horizon: no alarm
    "glr-klucb": (GLRklUCB, 600, True),
    "glr-klucb-global-theory": (
        lambda: GLRklUCB(
            restart="global", threshold="theory", exploration="fixed", c=3.0, split_every=3
        ),
        1200,
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_compiled_step_equals_readable(name):
    pytest.importorskip("numba")
    factory, rounds, restarts = FACTORIES[name]
    assert check_compiled_step(factory, lambda: _piecewise(rounds), rounds=rounds)
    assert check_compiled_step(factory, lambda: BernoulliBandit([0.3, 0.7, 0.5]), rounds=300)
    # the readable run that check compared with (its seeds and replications) restarted arms
    policy = factory()
    run_batch(
        policy, _piecewise(rounds), rounds, reps=[0, 3, 7], seed=5, env_key=101,
        policy_key=202, horizon=rounds,
    )  # fmt: skip
    assert (policy.alarms.min() >= 1) == restarts


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    factory = FACTORIES[name][0]
    check_policy(factory)
    check_policy(factory, env_factory=lambda: _piecewise(120))


@pytest.mark.parametrize(
    "factory", [CUSUMUCB, MUCB, GLRklUCB, lambda: MUCB(window=10, threshold=2.0)]
)
def test_horizon_derived_defaults_need_the_horizon(factory):
    policy = factory()
    assert policy.requires_horizon
    rng = BatchRNG.from_key(1, (2,), [0])
    with pytest.raises(SpecError):
        policy.reset(BernoulliBandit([0.5, 0.5]).action_space, None, rng)


def test_fully_specified_policies_are_anytime():
    assert not CUSUMUCB(alpha=0.1, threshold=5.0).requires_horizon
    assert not MUCB(window=10, threshold=2.0, gamma=0.1).requires_horizon
    assert not GLRklUCB(alpha=0.1, delta=0.01).requires_horizon


def test_invalid_settings_are_spec_errors():
    with pytest.raises(SpecError, match="even"):
        MUCB(window=31)
    rng = BatchRNG.from_key(1, (2,), [0])
    with pytest.raises(SpecError, match="breakpoints"):
        CUSUMUCB(breakpoints=50).reset(BernoulliBandit([0.5, 0.5]).action_space, 50, rng)


def test_default_tunings_by_hand():
    rng = BatchRNG.from_key(1, (2,), [0])
    space = BernoulliBandit([0.5, 0.5, 0.5]).action_space
    cusum = CUSUMUCB(breakpoints=4)
    cusum.reset(space, 10_000, rng)
    assert cusum._h == pytest.approx(math.log(2500))
    assert cusum._alpha == pytest.approx(math.sqrt(4 * math.log(2500) / 10_000))
    m_ucb = MUCB(breakpoints=2)
    m_ucb.reset(space, 10_000, rng)
    root = math.sqrt(math.log(2 * 3 * 1e8)) + math.sqrt(math.log(2e4))
    w = math.ceil(400 * root**2)
    assert m_ucb._w == w + w % 2 and m_ucb._w % 2 == 0
    b = math.sqrt(m_ucb._w / 2 * math.log(6e8))
    assert m_ucb._b == pytest.approx(b)
    assert m_ucb._gamma == pytest.approx(math.sqrt(2 * 3 * (2 * b + 3 * math.sqrt(m_ucb._w)) / 2e4))
    glr = GLRklUCB()
    glr.reset(space, 10_000, rng)
    assert glr._delta == pytest.approx(0.01)
    assert glr._alpha0 == pytest.approx(math.sqrt(3 * math.log(1e4) / 1e4))


def test_glr_thresholds():
    for u in (1.0, 1.5, 4.0, 30.0):
        assert h_inverse(u - math.log(u)) == pytest.approx(u, rel=1e-12)
    # 𝒯(x) ≈ x + 4 ln(1 + x + √(2x)) for x ≥ 5 (Kaufmann & Koolen's approximation), ~ x
    for x in (10.0, 50.0, 200.0):
        approx = x + 4 * math.log(1 + x + math.sqrt(2 * x))
        assert t_function(x) == pytest.approx(approx, rel=0.03)
    assert glr_threshold(100, 0.01, 0.0) == pytest.approx(math.log(3 * 1000 / 0.01))
    level = math.log(3 * 1000 / 0.01)
    theory = 2 * t_function(level / 2) + 6 * math.log(1 + math.log(100))
    assert glr_threshold(100, 0.01, 1.0) == pytest.approx(theory)
    assert theory > 3 * level  # the lemma's threshold is the conservative one


# ---------------------------------------------------------------------------------------------
# (d) detection: soon after the best arm changes, rarely before
# ---------------------------------------------------------------------------------------------

DETECT_ROUNDS, BREAK = 2000, 1000
DETECT_REPS = list(range(16))
#: Alarms within this many rounds after the change count as detections.
DELAY = 200


def _alarm_rounds(policy):
    """First alarm before/at the change and first after it, per replication (0: none)."""
    env = PiecewiseStationaryBandit([[0.8, 0.3], [0.2, 0.6]], [0, BREAK], length=DETECT_ROUNDS)
    env.reset(EnvironmentRandom(7, 11, DETECT_REPS))
    policy.reset(env.action_space, DETECT_ROUNDS, BatchRNG.from_key(7, (13,), DETECT_REPS))
    before = np.zeros(len(DETECT_REPS), dtype=np.int64)
    after = np.zeros(len(DETECT_REPS), dtype=np.int64)
    seen = policy.alarms.copy()
    for t in range(1, DETECT_ROUNDS + 1):
        actions = policy.select()
        policy.update(actions, env.step(actions).feedback)
        new = policy.alarms > seen
        seen = policy.alarms.copy()
        target = before if t <= BREAK else after
        target[new & (target == 0)] = t
    return before, after


@pytest.mark.slow
@pytest.mark.parametrize(
    "factory",
    [
        lambda: CUSUMUCB(warmup=150, drift=0.1),  # Besson et al.'s tuning for easy problems
        lambda: MUCB(window=200),
        GLRklUCB,
    ],
    ids=["cusum-ucb", "m-ucb", "glr-klucb"],
)
def test_detects_the_change_of_the_best_arm(factory):
    before, after = _alarm_rounds(factory())
    false_alarms = int((before > 0).sum())
    detected = int(((after > BREAK) & (after <= BREAK + DELAY)).sum())
    assert false_alarms <= 2, before
    assert detected >= 14, after - BREAK
