"""Learners over ranking policies for B2DEP (Cella & Cesa-Bianchi 2020, §6–8).

A ranking policy π_m cycles over the m best arms 1, …, m (by baseline mean). A *play* of π_m is
one cycle (m rounds). Switching to a different π_m leaves the arms' delays uncalibrated, so the
first play after a switch is not used for estimates.

* :class:`PiLow` — π_low (Algorithm 1): stages s with T_s = T^{1−2^{−s}}, each active π_m
  played ⌊T_s/(m|A_s|)⌋ + 1 times (at least 2; the first play is discarded), elimination with
  C_s; O(k ln ln T) switches.
* :class:`PiUCB` — π_ucb (§8): UCB1 over the ranking policies; each selected policy is rolled
  out twice and only the second roll-out updates its estimate.
* :class:`BanditRanker` — Algorithm 2 with the calibration scheme of §7 (groups of d_0 arms
  cycled twice, first cycle discarded), and :class:`RankerThenLow`, the full pipeline
  ranker → π_low that does not need the order.

The order comes from the environment's ``known["ranking"]`` when it reveals it. The authors'
code shrank confidence widths by ad-hoc factors; ``width_scale`` multiplies C_s (π_low) and the
UCB bonus (π_ucb) — 1, the paper's constants, by default. Phases are the ranking policies
("pi_1" … "pi_k"), so the runner's phase switches are the policy switches charged by the
environment's switching cost.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import PositiveFloat, PositiveInt

__all__ = ["BanditRanker", "PiLow", "PiUCB", "RankerThenLow", "stage_count"]

#: δ used in the paper's experiments (§8).
DEFAULT_DELTA = 0.1
#: A confidence δ ∈ (0, 1) (Algorithms 1 and 2).
OpenProbability = Annotated[float, Field(gt=0.0, lt=1.0)]


def _known_order(space: ActionSpace, name: str) -> list[int]:
    order = getattr(space, "known", {}).get("ranking")
    if order is None:
        raise SpecError(
            "kind",
            f"{name} needs the arm ranking: use an environment that reveals it "
            "(reveal_order = true) or the pipeline 'ranker-low'",
        )
    return [int(i) for i in order]


def _check_delta(delta: float, name: str = "delta") -> None:
    if not 0 < delta < 1:
        raise SpecError(name, f"must be in (0, 1), got {delta}")


def stage_count(horizon: int, k: int) -> int:
    """S = min{j : Σ_{s≤j} (|A_s| + T_s) ≥ T} with |A_s| ≤ k (the bound; |A_s| is unknown in
    advance), T_s = T^{1−2^{−s}}."""
    total, s = 0.0, 0
    while total < horizon:
        s += 1
        total += k + horizon ** (1.0 - 2.0**-s)
        if s > 64:  # T_s → T: reached after O(ln ln T) stages
            break
    return s


class _LowSchedule:
    """π_low's bookkeeping over a given order, for ``rounds`` rounds (Algorithm 1)."""

    def __init__(self, order: list[int], rounds: int, delta: float, width_scale: float) -> None:
        self.order, self.T = order, max(int(rounds), 2)
        self.k = len(order)
        self.delta, self.width_scale = delta, width_scale
        self.S = stage_count(self.T, self.k)
        self.stage = 0
        self.active = list(range(1, self.k + 1))
        self.switches = 0
        self._start_stage()

    def _start_stage(self) -> None:
        self.stage += 1
        self.T_s = self.T ** (1.0 - 2.0**-self.stage)
        size = len(self.active)
        # ⌊T_s/(m|A_s|)⌋ + 1 plays; at least one besides the calibration play, so that every
        # active policy has an estimate even in early stages of short horizons
        self.plan = [(m, max(int(self.T_s // (m * size)), 1) + 1) for m in self.active]
        self.index, self.play, self.position = 0, 0, 0
        self.sums = dict.fromkeys(self.active, 0.0)
        self.counts = dict.fromkeys(self.active, 0)

    @property
    def current(self) -> int:
        return self.plan[self.index][0]

    def arm(self) -> int:
        return self.order[self.position]

    def record(self, reward: float) -> None:
        m, plays = self.plan[self.index]
        if self.play >= 1:  # the first play after a switch calibrates the delays
            self.sums[m] += reward
            self.counts[m] += 1
        self.position += 1
        if self.position < m:
            return
        self.position = 0
        self.play += 1
        if self.play < plays:
            return
        self.play = 0
        self.index += 1
        if self.index == len(self.plan):
            self._end_stage()

    def _end_stage(self) -> None:
        g = {m: self.sums[m] / self.counts[m] for m in self.active}
        best = max(self.active, key=lambda m: (g[m], -m))
        width = self.width_scale * math.sqrt(
            self.k / (2.0 * self.T_s) * math.log(2.0 * self.k * self.S / self.delta)
        )
        self.active = [m for m in self.active if g[m] >= g[best] - 2.0 * width]
        self.estimates = g
        self._start_stage()


class PiLow(SimplePolicy):
    """π_low (Cella & Cesa-Bianchi 2020, Algorithm 1) over the revealed ranking; δ = 0.1
    (§8), ``width_scale`` = 1 (C_s = √(k/(2T_s) ln(2kS/δ))). Horizon-aware."""

    deterministic = True

    requires_horizon = True

    def __init__(
        self, delta: OpenProbability = DEFAULT_DELTA, width_scale: PositiveFloat = 1.0
    ) -> None:
        _check_delta(delta)
        self.delta, self.width_scale = float(delta), float(width_scale)

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        if horizon is None:
            raise SpecError("horizon", "pi-low needs the horizon")
        order = _known_order(space, "pi-low")
        self.phases = tuple(f"pi_{m}" for m in range(1, len(order) + 1))
        self.low = _LowSchedule(order, horizon, self.delta, self.width_scale)

    def select(self) -> int:
        return self.low.arm()

    def current_phase(self) -> int:
        return self.low.current - 1

    def update(self, action: Any, feedback: Feedback) -> None:
        self.low.record(float(feedback.reward))


class PiUCB(SimplePolicy):
    """π_ucb (Cella & Cesa-Bianchi 2020, §8): UCB1 over the ranking policies with Auer et al.'s
    bonus √(2 ln n / n_m) (times ``width_scale``), each selection rolled out twice, only the
    second roll-out's per-round average used. Anytime."""

    deterministic = True

    def __init__(self, width_scale: PositiveFloat = 1.0) -> None:
        self.width_scale = float(width_scale)

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self.order = _known_order(space, "pi-ucb")
        self.k = len(self.order)
        self.phases = tuple(f"pi_{m}" for m in range(1, self.k + 1))
        self.selected = [0] * self.k
        self.estimate = [0.0] * self.k
        self.total = 0
        self.m = 0
        self._choose()

    def _choose(self) -> None:
        unplayed = [m for m in range(1, self.k + 1) if self.selected[m - 1] == 0]
        if unplayed:
            self.m = unplayed[0]
        else:
            bonus = self.width_scale * math.sqrt(2.0 * math.log(self.total))
            self.m = max(
                range(1, self.k + 1),
                key=lambda m: (self.estimate[m - 1] + bonus / math.sqrt(self.selected[m - 1]), -m),
            )
        self.rollout, self.position, self.rollout_sum = 0, 0, 0.0

    def select(self) -> int:
        return self.order[self.position]

    def current_phase(self) -> int:
        return self.m - 1

    def update(self, action: Any, feedback: Feedback) -> None:
        if self.rollout == 1:
            self.rollout_sum += float(feedback.reward)
        self.position += 1
        if self.position < self.m:
            return
        self.position = 0
        self.rollout += 1
        if self.rollout < 2:
            return
        i = self.m - 1
        value = self.rollout_sum / self.m
        self.estimate[i] = (self.estimate[i] * self.selected[i] + value) / (self.selected[i] + 1)
        self.selected[i] += 1
        self.total += 1
        self._choose()


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
        d0: PositiveInt = 7,
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
