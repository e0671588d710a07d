"""Learners over ranking policies for B2DEP (Cella & Cesa-Bianchi 2020, §6–8).

A ranking policy π_m cycles over the m best arms 1, …, m (by baseline mean). A *play* of π_m is
one cycle (m rounds). Switching to a different π_m leaves the arms' delays uncalibrated, so the
first play after a switch is not used for estimates.

* :class:`PiLow` — π_low (Algorithm 1): stages s with T_s = T^{1−2^{−s}}, each active π_m
  played ⌊T_s/(m|A_s|)⌋ + 1 times (at least 2; the first play is discarded), elimination with
  C_s; O(k ln ln T) switches.
* :class:`PiUCB` — π_ucb (§8): UCB1 over the ranking policies; each selected policy is rolled
  out twice and only the second roll-out updates its estimate.

The order comes from the environment's ``known["ranking"]`` when it reveals it; when it does
not, the pipeline :class:`~impactbandits.policies.delay_ranker.RankerThenLow` learns it first
(BanditRanker, §7). The authors' code shrank confidence widths by ad-hoc factors;
``width_scale`` multiplies C_s (π_low) and the UCB bonus (π_ucb) — 1, the paper's constants, by
default. Phases are the ranking policies
("pi_1" … "pi_k"), so the runner's phase switches are the policy switches charged by the
environment's switching cost.

Compiled rounds: π_low and π_ucb declare their rounds for one replication, their phase included
(:meth:`PiLow.compiled_step`, :attr:`~impactbandits.core.compiled.CompiledStep.phase`), which
the compiled loop plays in B2DEP's world (:meth:`~impactbandits.envs.delay.DelayedPayoffBandit.
compiled_world`) with the same numbers.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import SimplePolicy
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import PositiveFloat

__all__ = ["PiLow", "PiUCB", "stage_count"]

#: δ used in the paper's experiments (§8).
DEFAULT_DELTA = 0.1
#: A confidence δ ∈ (0, 1) (Algorithms 1 and 2).
OpenProbability = Annotated[float, Field(gt=0.0, lt=1.0)]
#: Stages whose T_s and C_s π_low's compiled step reads from a table: from s = 54 on,
#: 1 − 2^{−s} rounds to 1.0, so T_s = T and C_s no longer change (the table's last entry).
STAGE_TABLE = 64


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

    def _length(self, stage: int) -> float:
        """T_s = T^{1−2^{−s}}."""
        return self.T ** (1.0 - 2.0**-stage)

    def _width(self, length: float) -> float:
        """C_s (times ``width_scale``) of a stage of length T_s = ``length``."""
        log = math.log(2.0 * self.k * self.S / self.delta)
        return self.width_scale * math.sqrt(self.k / (2.0 * length) * log)

    def compiled_params(self) -> np.ndarray:
        """π_low's compiled ``params`` (:func:`_low_init`): the order, then T_s and C_s of the
        stages 1 … :data:`STAGE_TABLE`, as :meth:`_start_stage` and :meth:`_end_stage`
        compute them."""
        lengths = [self._length(s) for s in range(1, STAGE_TABLE + 1)]
        return np.array([*self.order, *lengths, *(self._width(x) for x in lengths)])

    def _start_stage(self) -> None:
        self.stage += 1
        self.T_s = self._length(self.stage)
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
        width = self._width(self.T_s)
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

    def compiled_step(self) -> CompiledStep:
        """The rounds of one replication as just reset, its phase π_m (m − 1) included."""
        params = self.low.compiled_params()
        return CompiledStep(_low_init, _low_select, _low_update, params, phase=_low_phase)


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

    def compiled_step(self) -> CompiledStep:
        """The rounds of one replication as just reset, its phase π_m (m − 1) included."""
        params = np.array([self.width_scale, *self.order], dtype=np.float64)
        return CompiledStep(_ucb_init, _ucb_select, _ucb_update, params, phase=_ucb_phase)


# π_low's compiled step: params = order (k), T_s (STAGE_TABLE), C_s (STAGE_TABLE); state =
# (ints: stage, plan index, play, position, |A_s|; A_s then plays per policy of the plan, the
# plan being A_s in order; sums, counts and estimates g by m), as _LowSchedule keeps them.


@kernel
def _low_init(params: np.ndarray, k: int, rounds: int) -> Any:
    ints = np.array([0, 0, 0, 0, k])
    state = (ints, np.arange(1, k + 1), np.zeros(k, dtype=np.int64), np.zeros(k + 1),
             np.zeros(k + 1, dtype=np.int64), np.zeros(k + 1))  # fmt: skip
    _low_start_stage(state, params)
    return state


@kernel(inline=True)
def _low_start_stage(state: Any, params: np.ndarray) -> None:
    """:meth:`_LowSchedule._start_stage`."""
    ints, active, plays, sums, counts, _ = state
    ints[0] += 1
    length = params[active.size + min(ints[0], STAGE_TABLE) - 1]
    size = ints[4]
    for j in range(size):
        m = active[j]
        plays[j] = max(int(length // (m * size)), 1) + 1
        sums[m] = 0.0
        counts[m] = 0
    ints[1:4] = 0  # plan index, play, position


@kernel
def _low_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    return int(params[state[0][3]])


@kernel
def _low_phase(state: Any, params: np.ndarray) -> int:
    return state[1][state[0][1]] - 1


@kernel
def _low_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`_LowSchedule.record`."""
    ints, active, plays, sums, counts, g = state
    index = ints[1]
    m = active[index]
    if ints[2] >= 1:
        sums[m] += reward
        counts[m] += 1
    ints[3] += 1
    if ints[3] < m:
        return
    ints[3] = 0
    ints[2] += 1
    if ints[2] < plays[index]:
        return
    ints[2] = 0
    ints[1] = index + 1
    if ints[1] < ints[4]:
        return
    # _end_stage: the best g (ties to the lower m), then elimination with C_s
    size = ints[4]
    best = active[0]
    for j in range(size):
        m = active[j]
        g[m] = sums[m] / counts[m]
        if g[m] > g[best]:
            best = m
    width = params[active.size + STAGE_TABLE + min(ints[0], STAGE_TABLE) - 1]
    kept = 0
    for j in range(size):
        m = active[j]
        if g[m] >= g[best] - 2.0 * width:
            active[kept] = m
            kept += 1
    ints[4] = kept
    _low_start_stage(state, params)


# π_ucb's compiled step: params = width_scale, order (k); state = (ints: m, roll-out, position,
# total; selections and estimates per policy; the roll-out's sum), as PiUCB keeps them.


@kernel
def _ucb_init(params: np.ndarray, k: int, rounds: int) -> Any:
    state = (np.zeros(4, dtype=np.int64), np.zeros(k, dtype=np.int64), np.zeros(k), np.zeros(1))
    _ucb_choose(state, params)
    return state


@kernel(inline=True)
def _ucb_choose(state: Any, params: np.ndarray) -> None:
    """:meth:`PiUCB._choose`."""
    ints, selected, estimate, rollout_sum = state
    k = selected.size
    chosen = 0
    for j in range(k):
        if selected[j] == 0:
            chosen = j + 1
            break
    if chosen == 0:
        bonus = params[0] * math.sqrt(2.0 * math.log(float(ints[3])))
        chosen, best = 1, estimate[0] + bonus / math.sqrt(float(selected[0]))
        for j in range(1, k):
            value = estimate[j] + bonus / math.sqrt(float(selected[j]))
            if value > best:  # max over m of (value, −m): ties to the lower m
                chosen, best = j + 1, value
    ints[0] = chosen
    ints[1:3] = 0  # roll-out, position
    rollout_sum[0] = 0.0


@kernel
def _ucb_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    return int(params[1 + state[0][2]])


@kernel
def _ucb_phase(state: Any, params: np.ndarray) -> int:
    return state[0][0] - 1


@kernel
def _ucb_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`PiUCB.update`."""
    ints, selected, estimate, rollout_sum = state
    if ints[1] == 1:
        rollout_sum[0] += reward
    ints[2] += 1
    m = ints[0]
    if ints[2] < m:
        return
    ints[2] = 0
    ints[1] += 1
    if ints[1] < 2:
        return
    i = m - 1
    value = rollout_sum[0] / m
    estimate[i] = (estimate[i] * selected[i] + value) / (selected[i] + 1)
    selected[i] += 1
    ints[3] += 1
    _ucb_choose(state, params)
