"""Learning the order of the arms for B2DEP (Cella & Cesa-Bianchi 2020, §7).

* :class:`BanditRanker` — Algorithm 2 with the calibration scheme of §7 (groups of d_0 arms
  cycled twice, first cycle discarded), which ranks the arms by their baseline means;
* :class:`RankerThenLow` — the full pipeline ranker → π_low
  (:class:`~impactbandits.policies.delay.PiLow`'s schedule over the learned order), for
  environments that do not reveal the order.

The pipeline runs readable (it has no compiled step); its phases are "ranking", then the
ranking policies "pi_1" … "pi_k" of π_low.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import Arms, PositiveFloat
from impactbandits.policies.delay import (
    DEFAULT_DELTA,
    OpenProbability,
    _check_delta,
    _LowSchedule,
)

__all__ = ["BanditRanker", "RankerThenLow"]


class BanditRanker:
    """BanditRanker (Cella & Cesa-Bianchi 2020, Algorithm 2) with §7's calibration for B2DEP.

    Sampling round r: the active arms are split into groups of d_0 (padded with other arms
    when a group is short — their samples are discarded); each group is cycled twice and only
    the second cycle is recorded, so every recorded pull finds its arm at τ = d_0 > d_i
    (baseline payoff). After the round, with ε_r = √(ln(2kr(r+1)/δ)/(2r)) (Eq. 6) and the
    active arms sorted by empirical mean (ties to the lower index), an arm [i] whose mean is
    more than 2ε_r below every active arm ranked above it and more than 2ε_r above every
    active arm ranked below it is removed, splitting its segment of the ordering into the arms
    above, [i], and the arms below. It stops when at most one arm is active; the segments then
    give the order. Needs k ≥ d_0 (d_0 distinct arms to calibrate a group).
    """

    def __init__(self, k: int, delta: float, d0: int) -> None:
        if k < d0:
            raise SpecError(
                "d0", f"calibration needs at least d0 = {d0} arms, the instance has {k}"
            )
        self.k, self.delta, self.d0 = k, delta, d0
        self.active = list(range(k))
        self.sums = [0.0] * k
        self.counts = [0] * k
        self.segments: list[list[int]] = [list(range(k))]
        self.r = 0
        self.schedule: list[tuple[int, bool]] = []
        self.done = k <= 1
        if not self.done:
            self._plan_round()

    def _plan_round(self) -> None:
        self.r += 1
        schedule: list[tuple[int, bool]] = []
        active = self.active
        for start in range(0, len(active), self.d0):
            group = active[start : start + self.d0]
            padding = [a for a in range(self.k) if a not in group][: self.d0 - len(group)]
            cycle = group + padding
            schedule += [(a, False) for a in cycle]
            schedule += [(a, a in group) for a in cycle]
        self.schedule = schedule[::-1]  # popped from the end

    def arm(self) -> int:
        return self.schedule[-1][0]

    def record(self, reward: float) -> None:
        arm, keep = self.schedule.pop()
        if keep:
            self.sums[arm] += reward
            self.counts[arm] += 1
        if not self.schedule:
            self._eliminate()
            self.done = len(self.active) <= 1
            if not self.done:
                self._plan_round()

    def _eliminate(self) -> None:
        r = self.r
        eps = math.sqrt(math.log(2.0 * self.k * r * (r + 1) / self.delta) / (2.0 * r))
        mean = {a: self.sums[a] / self.counts[a] for a in self.active}
        ranked = sorted(self.active, key=lambda a: (-mean[a], a))
        for position, arm in enumerate(ranked):
            above, below = ranked[:position], ranked[position + 1 :]
            if above and not mean[arm] + 2 * eps < min(mean[a] for a in above):
                continue
            if below and not mean[arm] - 2 * eps > max(mean[a] for a in below):
                continue
            self.active.remove(arm)
            for index, segment in enumerate(self.segments):
                if arm in segment:
                    upper = [a for a in segment if a in above]
                    lower = [a for a in segment if a in below]
                    pieces = [p for p in (upper, [arm], lower) if p]
                    self.segments[index : index + 1] = pieces
                    break

    @property
    def order(self) -> list[int]:
        return [arm for segment in self.segments for arm in segment]


class RankerThenLow(SimplePolicy):
    """The full pipeline of Cella & Cesa-Bianchi (2020, §7): BanditRanker (confidence
    ``ranker_delta``, calibration bound ``d0`` > max_i d_i) learns the order, then π_low runs
    over it for the remaining rounds. Horizon-aware; phases "ranking", "pi_1" … "pi_k"."""

    deterministic = True

    requires_horizon = True

    def __init__(
        self,
        d0: Arms = 7,
        ranker_delta: OpenProbability = DEFAULT_DELTA,
        delta: OpenProbability = DEFAULT_DELTA,
        width_scale: PositiveFloat = 1.0,
    ) -> None:
        _check_delta(delta)
        _check_delta(ranker_delta, "ranker_delta")
        self.d0, self.ranker_delta = int(d0), float(ranker_delta)
        self.delta, self.width_scale = float(delta), float(width_scale)

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        if horizon is None:
            raise SpecError("horizon", "ranker-low needs the horizon")
        self.T, self.k = horizon, space.n
        self.phases = ("ranking", *(f"pi_{m}" for m in range(1, self.k + 1)))
        self.ranker = BanditRanker(self.k, self.ranker_delta, self.d0)
        self.t = 0
        self.low: _LowSchedule | None = None
        if self.ranker.done:
            self.low = _LowSchedule(self.ranker.order, self.T, self.delta, self.width_scale)

    def select(self) -> int:
        return self.ranker.arm() if self.low is None else self.low.arm()

    def current_phase(self) -> int:
        return 0 if self.low is None else self.low.current

    def update(self, action: Any, feedback: Feedback) -> None:
        self.t += 1
        if self.low is not None:
            self.low.record(float(feedback.reward))
            return
        self.ranker.record(float(feedback.reward))
        if self.ranker.done:
            self.low = _LowSchedule(
                self.ranker.order, self.T - self.t, self.delta, self.width_scale
            )
