"""Plainly written references for rebounding bandits (tests/test_rebounding.py).

Written from the model's statement (Leqi et al. 2021, as ported in
:mod:`impactbandits.envs.rebounding`: satiation starts at 0, a pull of arm k in round t pays
b_k − λ_k s_k and then s ← γ (s + 1{pulled}) for every arm), independently of
:mod:`impactbandits.oracles.rebounding`: Python floats and loops, one replication, brute force
over every arm sequence.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy


def rewards_along(base, retention, influence, arms: Sequence[int]) -> list[float]:
    """Expected reward of every round along ``arms`` from zero satiation."""
    s = [0.0] * len(base)
    out = []
    for a in arms:
        out.append(float(base[a]) - float(influence[a]) * s[a])
        s[a] += 1.0
        s = [float(g) * x for g, x in zip(retention, s, strict=True)]
    return out


def brute_force_optimum(base, retention, influence, horizon: int) -> float:
    """The best total expected reward over every arm sequence of length ``horizon``."""
    best = -math.inf if horizon else 0.0
    for arms in itertools.product(range(len(base)), repeat=horizon):
        best = max(best, sum(rewards_along(base, retention, influence, arms)))
    return best


def greedy_arms(base, retention, influence, rounds: int) -> list[int]:
    """The arm of highest current expected reward, ties to the lowest index."""
    s = [0.0] * len(base)
    arms = []
    for _ in range(rounds):
        values = [float(base[k]) - float(influence[k]) * s[k] for k in range(len(base))]
        a = values.index(max(values))
        arms.append(a)
        s[a] += 1.0
        s = [float(g) * x for g, x in zip(retention, s, strict=True)]
    return arms


def best_block(base, retention, influence, state: Sequence[float], w: int) -> tuple[int, ...]:
    """The ``w``-arm sequence of highest total expected reward from ``state`` (first best in
    lexicographic order), totals accumulated round by round."""
    best, best_total = None, -math.inf
    for plan in itertools.product(range(len(base)), repeat=w):
        s, total = [float(x) for x in state], 0.0
        for a in plan:
            total = total + (float(base[a]) - float(influence[a]) * s[a])
            s[a] += 1.0
            s = [float(g) * x for g, x in zip(retention, s, strict=True)]
        if total > best_total:
            best, best_total = plan, total
    assert best is not None
    return best


class PlainLookahead(SimplePolicy):
    """Greedy / w-lookahead with the parameters from ``space.known``."""

    deterministic = True

    def __init__(self, lookahead: int = 1) -> None:
        self.w = lookahead

    def reset(self, space, horizon, rng) -> None:
        self.b = [float(x) for x in space.known["base"]]
        self.g = [float(x) for x in space.known["retention"]]
        self.lam = [float(x) for x in space.known["influence"]]
        self.s = [0.0] * space.n
        self.queue: list[int] = []

    def select(self) -> int:
        if not self.queue:
            self.queue = list(best_block(self.b, self.g, self.lam, self.s, self.w))
        return self.queue.pop(0)

    def update(self, action, feedback: Feedback) -> None:
        self.s[int(action)] += 1.0
        self.s = [g * x for g, x in zip(self.g, self.s, strict=True)]


def plain_estimates(ys: Sequence[float]) -> tuple[float, float, float]:
    """``(b̂, γ̂, λ̂)`` from consecutive rewards: least squares of y_{j+1} on (y_j, 1)."""
    x, z = list(ys[:-1]), list(ys[1:])
    mx, mz = sum(x) / len(x), sum(z) / len(z)
    sxx = sum((xi - mx) ** 2 for xi in x)
    sxz = sum((xi - mx) * (zi - mz) for xi, zi in zip(x, z, strict=True))
    gamma = min(max(sxz / sxx if sxx > 0 else 0.0, 0.0), math.nextafter(1.0, 0.0))
    intercept = mz - gamma * mx
    b = float(ys[0])
    lam = ((1 - gamma) * b - intercept) / gamma if gamma > 0 else 0.0
    return b, gamma, max(lam, 0.0)


class PlainEEP(SimplePolicy):
    """Explore ``m`` consecutive pulls of each arm, estimate, then plan with w-lookahead."""

    deterministic = True

    def __init__(self, explore: int, lookahead: int = 1) -> None:
        self.m, self.w = explore, lookahead

    def reset(self, space, horizon, rng) -> None:
        self.k = space.n
        self.t = 0
        self.ys: list[list[float]] = [[] for _ in range(self.k)]
        self.planner: PlainLookahead | None = None

    def select(self) -> int:
        self.t += 1
        if self.planner is None:
            return (self.t - 1) // self.m
        return self.planner.select()

    def update(self, action, feedback: Feedback) -> None:
        if self.planner is not None:
            self.planner.update(action, feedback)
            return
        self.ys[int(action)].append(float(feedback.reward))
        if self.t == self.k * self.m:
            est = [plain_estimates(y) for y in self.ys]
            planner = PlainLookahead(self.w)
            planner.b = [e[0] for e in est]
            planner.g = [e[1] for e in est]
            planner.lam = [e[2] for e in est]
            planner.s, planner.queue = [0.0] * self.k, []
            for arm in range(self.k):
                for _ in range(self.m):
                    planner.update(arm, feedback)
            self.planner = planner
