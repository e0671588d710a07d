"""The policies made cheaper for issue 29 play exactly as the plain rules they implement.

Each reference below is the policy's rule as the library computed it before (the same
floating-point operations in the same order, so the same bits), written plainly for one
replication and recomputing every index of every arm in every round: KL-UCB and SW-KL-UCB with
a full 32-halving bisection per arm (no cut-offs, no memo), R-ed-UCB / R-less-UCB and RAW-UCB
from per-arm prefix sums. The library's readable form and its compiled step must give the same
arms and rewards in every round, on instances with exact ties (equal curves, no noise), arms
absent from the window, means above 1 and below 0 (Gaussian noise), and the rising instances
of the figures. :func:`impactbandits.policies.kl_ucb.kl_argmax` is also checked directly
against the plain argmax on random sequences of statistics and levels.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy, SimplePolicy
from impactbandits.core.simulate import Trajectory, simulate
from impactbandits.kernels.dispatch import simulate_compiled
from impactbandits.policies.kl_ucb import HALVINGS, kl_argmax, kl_memo_init
from impactbandits.registry import build_environment, build_policy

# -- plain references ----------------------------------------------------------------------

EPS = 1e-15


def _kl(p: float, q: float) -> float:
    q = min(max(q, EPS), 1.0 - EPS)
    value = 0.0
    if p > 0.0:
        value += p * math.log(p / q)
    if p < 1.0:
        value += (1.0 - p) * math.log((1.0 - p) / (1.0 - q))
    return value


def _kl_bound(mean: float, pulls: float, level: float) -> float:
    low, high = mean, 1.0
    for _ in range(32):
        middle = (low + high) / 2.0
        if pulls * _kl(mean, middle) <= level:
            low = middle
        else:
            high = middle
    return low


def _first_max(values: list[float]) -> int:
    best, best_value = 0, -math.inf
    for i, value in enumerate(values):
        if value > best_value:
            best, best_value = i, value
    return best


class ReferenceKLUCB(SimplePolicy):
    """Bernoulli KL-UCB: every arm's bound by a full bisection every round."""

    deterministic = True

    def __init__(self, c: float = 0.0, plus: bool = False) -> None:
        self.c, self.plus = c, plus

    def reset(self, space, horizon, rng):
        self.counts = [0.0] * space.n
        self.sums = [0.0] * space.n
        self.t = 0

    def select(self):
        self.t += 1
        values = []
        for n, s in zip(self.counts, self.sums, strict=True):
            if n > 0:
                x = float(self.t) / n if self.plus else float(self.t)
                log_x = math.log(x)
                level = log_x + self.c * math.log(max(log_x, 1.0))
                values.append(_kl_bound(s / n, n, level))
            else:
                values.append(math.inf)
        return _first_max(values)

    def update(self, action, feedback):
        self.counts[action] += 1.0
        self.sums[action] += float(feedback.reward)


class ReferenceSWKLUCB(SimplePolicy):
    """SW-KL-UCB: the window's counts and sums updated as the ring buffer does (the play
    leaving the window subtracted), every arm's bound by a full bisection every round."""

    deterministic = True

    def __init__(self, window: int, c: float = 0.0) -> None:
        self.window, self.c = window, c

    def reset(self, space, horizon, rng):
        self.counts = [0.0] * space.n
        self.sums = [0.0] * space.n
        self.ring: deque[tuple[int, float]] = deque()
        self.t = 0

    def select(self):
        self.t += 1
        plays = min(self.t - 1, self.window)
        if plays == 0:
            return 0
        log_m = math.log(plays)
        level = log_m + self.c * math.log(max(log_m, 1.0))
        values = [
            _kl_bound(s / n, n, level) if n > 0 else math.inf
            for n, s in zip(self.counts, self.sums, strict=True)
        ]
        return _first_max(values)

    def update(self, action, feedback):
        if len(self.ring) == self.window:
            old, reward = self.ring.popleft()
            self.counts[old] -= 1.0
            self.sums[old] -= reward
        reward = float(feedback.reward)
        self.counts[action] += 1.0
        self.sums[action] += reward
        self.ring.append((action, reward))


class ReferenceRisingUCB(SimplePolicy):
    """R-ed-UCB / R-less-UCB (paper variant): each arm's prefix sums Σ X(l) and Σ l·X(l), the
    windows' sums from them and the index recomputed for every arm every round."""

    deterministic = True

    def __init__(self, epsilon: float = 0.25, alpha: float = 4.0, sigma: float = 0.1) -> None:
        self.epsilon, self.alpha, self.sigma = epsilon, alpha, sigma

    def reset(self, space, horizon, rng):
        self.prefix = [[0.0] for _ in range(space.n)]
        self.moments = [[0.0] for _ in range(space.n)]
        self.t = 0

    def index(self, arm: int) -> float:
        s, m = self.prefix[arm], self.moments[arm]
        n = len(s) - 1
        h = math.floor(self.epsilon * n)
        if h == 0:
            return math.inf
        a, b = s[n] - s[n - h], s[n - h] - s[n - 2 * h]
        c, d = m[n] - m[n - h], m[n - h] - m[n - 2 * h]
        t, hf = float(self.t), float(h)
        trend = (hf * (a + b) + t * (a - b) - (c - d)) / hf**2
        log_term = self.alpha * math.log(t)
        return trend + self.sigma * (t - n + hf - 1) * math.sqrt(10.0 * log_term / hf**3)

    def select(self):
        self.t += 1
        return _first_max([self.index(i) for i in range(len(self.prefix))])

    def update(self, action, feedback):
        x = float(feedback.reward)
        s, m = self.prefix[action], self.moments[action]
        m.append(m[-1] + len(s) * x)
        s.append(s[-1] + x)


def _grid(limit: int, m: float) -> list[int]:
    if m <= 1.0:
        return list(range(1, limit + 1))
    out, power = {1}, 1.0
    while power <= limit:
        out.add(math.ceil(power - 1e-9))
        power *= m
    return sorted(w for w in out if w <= limit)


class ReferenceRawUCB(SimplePolicy):
    """RAW-UCB: every arm's minimum over its windows of the last-h average plus the width,
    recomputed every round from the arm's prefix sums."""

    deterministic = True

    def __init__(self, alpha: float = 1.4, sigma: float = 1.0, m: float = 1.1) -> None:
        self.alpha, self.sigma, self.m = alpha, sigma, m

    def reset(self, space, horizon, rng):
        self.prefix = [[0.0] for _ in range(space.n)]
        self.t = 0

    def select(self):
        counts = [len(p) - 1 for p in self.prefix]
        if 0 in counts:
            return counts.index(0)
        log_term = self.alpha * math.log(max(self.t, 1))
        values = []
        for p, n in zip(self.prefix, counts, strict=True):
            ucb = [
                (p[n] - p[n - h]) / h + math.sqrt(2.0 * self.sigma**2 * log_term / h)
                for h in _grid(n, self.m)
            ]
            values.append(min(ucb))
        return _first_max(values)

    def update(self, action, feedback):
        p = self.prefix[action]
        p.append(p[-1] + float(feedback.reward))
        self.t += 1


# -- running the three forms ----------------------------------------------------------------

REPS = (0, 3, 7)


def _readable(policy, env_factory, rounds: int, horizon: int | None) -> Trajectory:
    return simulate(
        env_factory(),
        policy,
        rounds,
        horizon,
        np.arange(1, rounds + 1),
        EnvironmentRandom(5, 101, REPS),
        BatchRNG.from_key(5, (202,), REPS),
    )


def _compiled(policy, env_factory, rounds: int, horizon: int | None) -> Trajectory | None:
    env, rng = env_factory(), BatchRNG.from_key(5, (202,), REPS)
    env.reset(EnvironmentRandom(5, 101, REPS))
    policy.reset(env.action_space, horizon, rng)
    times = np.arange(1, rounds + 1)
    done = simulate_compiled(env, policy, rounds, times, len(REPS), rng)
    return None if done is None else Trajectory(times, *done)


def _arms(trajectory: Trajectory) -> np.ndarray:
    """The arm played in every round, from the cumulative pulls."""
    pulls = trajectory.pulls
    steps = np.diff(pulls, axis=1, prepend=np.zeros_like(pulls[:, :1]))
    return np.argmax(steps, axis=2)


def _same(reference: Trajectory, other: Trajectory, what: str) -> None:
    arms_ref, arms = _arms(reference), _arms(other)
    if not np.array_equal(arms_ref, arms):
        r, t = (int(i) for i in np.argwhere(arms_ref != arms)[0])
        raise AssertionError(
            f"{what}: replication {REPS[r]}, round {t + 1}: arm {arms[r, t]} instead of "
            f"{arms_ref[r, t]}"
        )
    for name in ("reward", "expected", "pulls", "switches"):
        assert np.array_equal(getattr(reference, name), getattr(other, name)), (what, name)


def _check(reference: SimplePolicy, kind: str, params: dict, env_spec, rounds: int) -> None:
    policy = build_policy(kind, params)
    horizon = rounds if policy.requires_horizon else None
    make_env = lambda: build_environment(*env_spec)  # noqa: E731
    expected = _readable(BatchedSimplePolicy(reference), make_env, rounds, horizon)
    _same(expected, _readable(policy, make_env, rounds, horizon), "readable form")
    if not kernels.available():
        return
    fast = _compiled(build_policy(kind, params), make_env, rounds, horizon)
    if fast is None:
        assert kernels.backend() == "aot", "the compiled loop should run this pair"
        pytest.skip("no loop built ahead of time for this step")
    _same(expected, fast, "compiled step")


L = 700
#: Instances: exact ties (equal constant arms, no noise), near ties (Gaussian noise around equal
#: means, rewards outside [0, 1]), means above 1 and below 0 (and tied, noise-free), a
#: stationary Bernoulli bandit with equal means, and the rising instances of the figures.
ENVIRONMENTS = {
    "ties": ("constant", {"means": [0.5, 0.5, 0.3, 0.5], "length": L}),
    "near-ties": ("constant", {"means": [0.6, 0.6, 0.58, 0.6, 0.2], "length": L,
                               "noise": "gaussian", "sigma": 0.3}),
    "above-and-below": ("gaussian", {"means": [1.3, 0.9, 1.3, -0.2], "sigma": 0.0}),
    "noisy-above": ("rested", {"curves": [[0.95] * L, [0.9] * L, [0.97] * L],
                               "noise": "gaussian", "sigma": 0.2}),
    "bernoulli": ("bernoulli", {"means": [0.5, 0.5, 0.5, 0.4]}),
    "rising-15": ("rising", {"instance": "15-arms", "length": L}),
    "rising-2": ("rising", {"instance": "2-arms", "length": L}),
    "restless": ("rising-restless", {"instance": "15-arms", "length": L}),
}  # fmt: skip


@pytest.fixture(params=["aot", "jit"])
def backend(request, monkeypatch):
    """The compiled step on the loops built ahead of time (skipped where the module or the
    step's entry is missing) and on numba's JIT."""
    from impactbandits.kernels import aot

    if not kernels.available():
        return None
    if request.param == "aot" and not aot.current().usable:
        pytest.skip(f"ahead-of-time kernels {aot.current().reason}")
    if request.param == "jit" and kernels.planned() is None:
        pytest.skip("numba not installed")
    monkeypatch.setenv(kernels.KERNELS_ENV, request.param)
    return request.param


KLUCB_CASES = [
    ({}, {}),
    ({"c": 3.0}, {"c": 3.0}),
    ({"level": "kl-ucb+", "c": 1.0}, {"c": 1.0, "plus": True}),
]


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
@pytest.mark.parametrize("params, reference", KLUCB_CASES, ids=["c0", "c3", "plus"])
def test_kl_ucb_plays_as_the_full_bisection(env, params, reference):
    _check(ReferenceKLUCB(**reference), "kl-ucb", params, ENVIRONMENTS[env], 500)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
@pytest.mark.parametrize("window, c", [(6, 3.0), (40, 0.0), (252, 3.0)])
def test_sw_kl_ucb_plays_as_the_full_bisection(env, window, c):
    params = {"window": window, "c": c}
    _check(ReferenceSWKLUCB(window, c), "sw-kl-ucb", params, ENVIRONMENTS[env], 500)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
@pytest.mark.parametrize("kind", ["r-ed-ucb", "r-less-ucb"])
@pytest.mark.parametrize("params", [{}, {"epsilon": 0.5, "alpha": 2.0, "sigma": 0.3}])
def test_rising_ucb_plays_as_its_recomputed_index(env, kind, params):
    _check(ReferenceRisingUCB(**params), kind, params, ENVIRONMENTS[env], 600)


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("env", sorted(ENVIRONMENTS))
@pytest.mark.parametrize(
    "params",
    [{}, {"grid": 1.0, "sigma": 0.05}, {"alpha": 0.5, "sigma": 0.2, "grid": 1.5}],
    ids=["default", "every-window", "coarse"],
)
def test_raw_ucb_plays_as_its_recomputed_index(env, params):
    reference = ReferenceRawUCB(
        params.get("alpha", 1.4), params.get("sigma", 1.0), params.get("grid", 1.1)
    )
    _check(reference, "raw-ucb", params, ENVIRONMENTS[env], 500)


# -- kl_argmax against the plain argmax -------------------------------------------------------


def _plain_argmax(counts, sums, levels) -> int:
    values = [
        _kl_bound(s / n, n, level) if n > 0 else math.inf
        for n, s, level in zip(counts, sums, levels, strict=True)
    ]
    return _first_max(values)


@pytest.mark.parametrize("seed", range(6))
def test_kl_argmax_is_the_plain_argmax_over_sequences_of_statistics(seed):
    """Statistics that change one or two arms at a time (the memos and resumed bisections
    carry over), tied arms, means outside [0, 1], levels that grow, stay, shrink or are NaN;
    the kernel run as Python (the compiled loop runs the same code: the tests above)."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    counts = rng.integers(0, 4, k).astype(float)
    sums = np.round(counts * rng.uniform(-0.2, 1.2, k), 2)
    scratch = kl_memo_init(k)
    levels, rest = scratch[0], scratch[1:]
    level = 1.0
    for _ in range(150):
        move = rng.random()
        arm = int(rng.integers(k))
        if move < 0.4:
            counts[arm] += 1.0
            sums[arm] += float(rng.choice([0.0, 1.0, 0.5, 1.3, -0.1]))
        elif move < 0.5 and k > 1:  # copy another arm: an exact tie
            other = int(rng.integers(k))
            counts[arm], sums[arm] = counts[other], sums[other]
        elif move < 0.6 and counts[arm] > 0:  # a play leaves a window
            counts[arm] -= 1.0
            sums[arm] = round(sums[arm] - 0.5, 2) if counts[arm] > 0 else 0.0
        step = rng.random()
        if step < 0.6:
            level += float(rng.exponential(0.05))
        elif step < 0.7:
            level -= 0.01
        elif step < 0.72:
            level = math.nan
        elif math.isnan(level):
            level = 2.0
        if rng.random() < 0.3:  # per-arm levels (KL-UCB+)
            levels[:] = level + rng.uniform(0.0, 0.1, k)
        else:
            levels[:] = level
        expected = _plain_argmax(counts, sums, levels)
        assert kl_argmax(counts, sums, levels, *rest) == expected


def test_kl_argmax_memo_is_keyed_by_the_arms_statistics():
    """A memo made for one (count, sum) is not read for another: the arm's values change."""
    counts, sums = np.array([4.0, 4.0]), np.array([2.0, 2.0])
    scratch = kl_memo_init(2)
    levels, rest = scratch[0], scratch[1:]
    levels[:] = 1.5
    assert kl_argmax(counts, sums, levels, *rest) == 0  # exact tie: the lowest arm
    sums[1] = 2.5
    assert kl_argmax(counts, sums, levels, *rest) == 1
    counts[1], sums[1] = 40.0, 20.0  # the same mean, more pulls: a smaller bound
    assert kl_argmax(counts, sums, levels, *rest) == 0
    assert np.isnan(rest[0]).sum() < 2 * HALVINGS  # the memos were filled
