"""Plainly written references for blocking bandits (tests/test_blocking.py).

Written from the model's statement (Basu et al. 2019, as ported: an arm pulled in round t is
available again from round t + D; a pick of a blocked arm is an idle round paying 0 and renewing
nothing), independently of :mod:`impactbandits.oracles.blocking`: they track the round of each
arm's last real pull, never the blocking state, and use plain Python loops.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy


def available(last: dict[int, int], delays: Sequence[int], arm: int, t: int) -> bool:
    """Arm ``arm`` can be pulled in round ``t`` (1-based) given its last real pull."""
    return arm not in last or t - last[arm] >= delays[arm]


def expected_rewards(means, delays, arms: Sequence[int]) -> list[float]:
    """Expected reward of every round along ``arms`` (blocked picks pay 0)."""
    last: dict[int, int] = {}
    out = []
    for t, arm in enumerate(arms, start=1):
        if available(last, delays, arm, t):
            out.append(float(means[arm]))
            last[arm] = t
        else:
            out.append(0.0)
    return out


def brute_force_optimum(means, delays, horizon: int) -> float:
    """The best total expected reward over every arm sequence of length ``horizon``."""
    best = 0.0
    for arms in itertools.product(range(len(means)), repeat=horizon):
        best = max(best, math.fsum(expected_rewards(means, delays, arms)))
    return best


def plain_dp(means, delays, horizons: Sequence[int]) -> list[float]:
    """``OPT(T)`` by forward value iteration over "rounds since each arm's last pull" (capped
    at the delay), for every ``T`` in ``horizons``, without any extrapolation."""
    k = len(means)
    cap = [int(d) for d in delays]
    start = tuple(cap)  # every arm pulled "long ago"
    states, frontier = {start}, [start]
    while frontier:  # the reachable states
        nxt = []
        for s in frontier:
            for a in range(k):
                n = _next(s, a, cap)
                if n not in states:
                    states.add(n)
                    nxt.append(n)
        frontier = nxt
    edges = {
        s: [(float(means[a]) if s[a] >= cap[a] else 0.0, _next(s, a, cap)) for a in range(k)]
        for s in states
    }
    value = dict.fromkeys(states, 0.0)
    out, need = {0: 0.0}, max(horizons)
    for t in range(1, need + 1):
        value = {s: max(r + value[n] for r, n in edges[s]) for s in states}
        out[t] = value[start]
    return [out[h] for h in horizons]


def _next(since: tuple[int, ...], arm: int, cap: list[int]) -> tuple[int, ...]:
    pulled = since[arm] >= cap[arm]
    return tuple(
        1 if (i == arm and pulled) else min(since[i] + 1, cap[i]) for i in range(len(since))
    )


def greedy_rewards(means, delays, horizon: int) -> list[float]:
    """Oracle Greedy: each round, the available arm with the highest mean (ties: lowest
    index); idle when none is available."""
    last: dict[int, int] = {}
    out = []
    for t in range(1, horizon + 1):
        free = [i for i in range(len(means)) if available(last, delays, i, t)]
        if not free:
            out.append(0.0)
            continue
        arm = free[0]
        for i in free:
            if means[i] > means[arm]:
                arm = i
        last[arm] = t
        out.append(float(means[arm]))
    return out


def periodic_average(means, delays, schedule: Sequence[int]) -> float:
    """Long-run average of repeating ``schedule`` from the start: play whole periods until the
    rounds since each arm's last pull (capped) repeat at a period boundary, then average the
    periods between the two visits."""
    k, period = len(means), len(schedule)
    last: dict[int, int] = {}
    seen: dict[tuple[int, ...], int] = {}
    totals: list[float] = []
    t = 0
    while True:
        key = tuple(min(t - last[i], delays[i]) if i in last else delays[i] for i in range(k))
        if key in seen:
            first = seen[key]
            return math.fsum(totals[first:]) / ((len(totals) - first) * period)
        seen[key] = len(totals)
        total = 0.0
        for arm in schedule:
            t += 1
            if available(last, delays, arm, t):
                total += means[arm]
                last[arm] = t
        totals.append(total)


class UCBGreedyReference(SimplePolicy):
    """UCB Greedy for one replication: the available arm with the highest
    ``mean + sqrt(c ln t / n)``, arms never pulled first, ties to the lowest index, arm 0 when
    none is available; idle rounds are not counted."""

    deterministic = True

    def __init__(self, c: float = 8.0) -> None:
        self.c = c

    def reset(self, space, horizon, rng) -> None:
        self.delays = [int(d) for d in space.known["delays"]]
        self.k = space.n
        self.t = 0
        self.last: dict[int, int] = {}
        self.n = [0] * self.k
        self.total = [0.0] * self.k

    def select(self) -> int:
        self.t += 1
        best, best_value = 0, -math.inf
        for i in range(self.k):
            if not available(self.last, self.delays, i, self.t):
                continue
            if self.n[i] == 0:
                value = math.inf
            else:
                value = self.total[i] / self.n[i] + math.sqrt(self.c * math.log(self.t) / self.n[i])
            if value > best_value:
                best, best_value = i, value
        return best

    def update(self, action, feedback: Feedback) -> None:
        arm = int(action)
        if available(self.last, self.delays, arm, self.t):
            self.last[arm] = self.t
            self.n[arm] += 1
            self.total[arm] += float(feedback.reward)
