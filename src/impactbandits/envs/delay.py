"""Bandits with delay-dependent payoffs, B2DEP (Cella & Cesa-Bianchi 2020, §3, Eq. 1).

Arm i has baseline mean μ_i and delay d_i; when τ rounds have passed since its last pull its
expected payoff is μ_i(τ) = (1 − f(τ)·1{0 < τ ≤ d_i})·μ_i, with τ = 0 for an arm never pulled
and f non-increasing in [0, 1]. Payoffs are Bernoulli with that mean (common random numbers: the
m-th pull of arm i in replication r uses the same uniform for every policy).

* ``f``: ``decay`` γ gives f(τ) = γ^τ (γ = 0.999 by default, see the fidelity ledger,
  https://impactbandits.readthedocs.io/en/latest/fidelity/), or explicit values
  ``f = [f(1), f(2), …]`` (at least max d_i of them).
* ``delays``: fixed, or drawn per replication uniformly from ``delay_range`` (Figure 2:
  {1, …, 6}) using the replication's instance stream — the same delays for every policy.
* ``switching_cost``: charged for every switch between the learner's ranking policies (the
  learner's phase switches, see :class:`~impactbandits.core.simulate.Trajectory`), after the
  run; regret is measured on expected reward minus that cost (§8: "a unit cost is charged for
  switching between ranking policies").
* ``arm_switching_cost``: what a learner that does *not* play ranking policies (no phases,
  e.g. UCB1 over the arms) pays per change of arm — default: ``switching_cost``. The paper
  charges a switch when the learner changes the playlist it streams; a ranking policy's
  playlist is its cycle 1, …, m, an arm-level learner's is the single arm it picks, so its
  analogue of a policy switch is a round whose arm differs from the previous round's. (Charging
  such a learner nothing — ``arm_switching_cost = 0`` — is what the figure did before.)
* ``reveal_order``: tell the learner the ranking of the arms by μ (the paper's experiments
  "implicitly assume that BanditRanker successfully ranked the arms"); without it a learner
  must rank them itself (``ranker-low``).

Compiled rounds: :meth:`DelayedPayoffBandit.compiled_world` declares the same rounds for one
replication (:mod:`~impactbandits.core.world`: μ_i(τ) and the Bernoulli draw from the same
common random numbers, with the delays the readable ``reset`` drew), in which the compiled loop
plays any policy's compiled step, phases included, with the same numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import kernel
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.spaces import Discrete
from impactbandits.core.streams import stream_uniform
from impactbandits.core.world import CompiledWorld, noise_words
from impactbandits.errors import SpecError
from impactbandits.params import RECOVERY, NonNegativeFloat, Probability

if TYPE_CHECKING:
    from impactbandits.core.simulate import Trajectory

__all__ = ["DelayedPayoffBandit", "ranking_order"]

#: f(τ) = DEFAULT_DECAY^τ (the fidelity ledger,
#: https://impactbandits.readthedocs.io/en/latest/fidelity/).
DEFAULT_DECAY = 0.999


def ranking_order(means: np.ndarray) -> np.ndarray:
    """Arms by decreasing baseline mean, ties to the lower index (the paper's 1, …, k)."""
    return np.argsort(-np.asarray(means, dtype=float), kind="stable")


class DelayedPayoffBandit(Environment):
    """B2DEP instance (Cella & Cesa-Bianchi 2020, Eq. 1); regret against the ghost policy."""

    default_oracle = "ghost"
    regret_on = "expected_net"
    realised_on = "net"

    def __init__(
        self,
        means: Annotated[list[Probability], Field(min_length=1)],
        delays: list[Annotated[int, Field(ge=0), RECOVERY]] | None = None,
        delay_range: Annotated[
            list[Annotated[int, Field(ge=0), RECOVERY]], Field(min_length=2, max_length=2)
        ] = [1, 6],  # noqa: B006
        decay: Probability = DEFAULT_DECAY,
        f: list[Probability] | None = None,
        switching_cost: NonNegativeFloat = 0.0,
        arm_switching_cost: Annotated[float | None, Field(ge=0.0)] = None,
        reveal_order: bool = True,
    ) -> None:
        self.means = np.asarray(means, dtype=float)
        k = self.means.size
        if delays is not None and len(delays) != k:
            raise SpecError("delays", f"give one delay per arm ({k})")
        if delay_range[0] > delay_range[1]:
            raise SpecError("delay_range", "must be [low, high] with low <= high")
        self.delays = None if delays is None else np.asarray(delays, dtype=np.int64)
        self.delay_range = (int(delay_range[0]), int(delay_range[1]))
        max_delay = int(self.delays.max()) if self.delays is not None else self.delay_range[1]
        if f is not None:
            values = np.asarray(f, dtype=float)
            if values.size < max_delay:
                raise SpecError("f", f"give f(1), …, f({max_delay}) at least (the largest delay)")
            if np.any(np.diff(values) > 0):
                raise SpecError("f", "must be non-increasing")
        else:
            values = float(decay) ** np.arange(1, max(max_delay, 1) + 1)
        self.f_values = values
        self.switching_cost = float(switching_cost)
        self.arm_switching_cost = (
            self.switching_cost if arm_switching_cost is None else float(arm_switching_cost)
        )
        known = {"ranking": ranking_order(self.means)} if reveal_order else {}
        self._space = Discrete(k, known=known)

    @property
    def action_space(self) -> Discrete:
        return self._space

    def f(self, tau: np.ndarray) -> np.ndarray:
        """f(τ) for τ ≥ 1 (τ beyond the table: its last value; only τ ≤ d_i matters)."""
        index = np.clip(np.asarray(tau) - 1, 0, self.f_values.size - 1)
        return self.f_values[index]

    def reset(self, random: EnvironmentRandom) -> None:
        size, k = random.size, self.means.size
        if self.delays is not None:
            self._delays = np.tile(self.delays, (size, 1))
        else:
            low, high = self.delay_range
            self._delays = np.stack(
                [g.integers(low, high + 1, size=k) for g in random.instance_generators()]
            )
        self._last = np.full((size, k), -1, dtype=np.int64)
        self._pulls = np.zeros((size, k), dtype=np.int64)
        self._rows = np.arange(size)
        self._noise = random.noise(k)
        self._t = 0

    @property
    def instance_delays(self) -> np.ndarray:
        """``(R, k)`` delays of the current replications."""
        return self._delays

    def _expected(self, rows: np.ndarray, arms: np.ndarray) -> np.ndarray:
        last = self._last[rows, arms]
        tau = np.where(last >= 0, self._t + 1 - last, 0)
        penalised = (tau > 0) & (tau <= self._delays[rows, arms])
        return self.means[arms] * (1.0 - np.where(penalised, self.f(np.maximum(tau, 1)), 0.0))

    def expected_rewards(self) -> np.ndarray:
        k = self.means.size
        rows = np.repeat(self._rows, k)
        arms = np.tile(np.arange(k), self._rows.size)
        return self._expected(rows, arms).reshape(self._rows.size, k)

    def step(self, actions: np.ndarray) -> Outcome:
        mean = self._expected(self._rows, actions)
        u = self._noise.at(actions, self._pulls[self._rows, actions])
        self._pulls[self._rows, actions] += 1
        self._t += 1
        self._last[self._rows, actions] = self._t
        return Outcome(Feedback((u < mean).astype(float)), mean)

    def compiled_world(self, rounds: int) -> CompiledWorld:
        """The compiled form of the rounds of the replications just reset
        (:mod:`~impactbandits.core.world`): the baseline means and f's table as ``params``
        (μ_1 … μ_k, then f(1), f(2), …), the delays ``reset`` drew as ``data`` (``(R, k)``),
        the noise table's words as ``noise``."""
        params = np.concatenate([self.means, self.f_values])
        return CompiledWorld(_delay_init, _delay_step, params, self._delays,
                             noise_words(self._rows.size, self._noise))  # fmt: skip

    def summary_metrics(self, trajectory: Trajectory) -> dict[str, np.ndarray]:
        """Switching cost paid and reward net of it, realised and expected: ``switching_cost`` ×
        switches between the learner's ranking policies (its phase switches), or, for a learner
        without phases, ``arm_switching_cost`` × changes of arm."""
        switches = getattr(trajectory, "phase_switches", None)
        reward = np.asarray(trajectory.reward)
        if switches is not None:
            cost = self.switching_cost * np.asarray(switches, dtype=float)
        else:
            arm_changes = np.asarray(trajectory.switches, dtype=float)
            cost = self.arm_switching_cost * arm_changes
        expected = np.asarray(trajectory.expected)
        return {"switching_cost": cost, "net": reward - cost, "expected_net": expected - cost}


@kernel
def _delay_init(
    params: np.ndarray, delays: np.ndarray, k: int, rounds: int, noise: np.ndarray
) -> Any:
    """The round of each arm's last pull (−1: never), its pulls, the delays (whole numbers
    held as floats), the stream."""
    last = np.empty(k, dtype=np.int64)
    last[:] = -1
    return last, np.zeros(k, dtype=np.int64), delays, noise


@kernel
def _delay_step(world: Any, params: np.ndarray, t: int, arm: int) -> tuple[float, float]:
    """:meth:`DelayedPayoffBandit.step` for one replication: ``(reward, expected)``."""
    last, pulls, delays, noise = world
    k = last.size
    previous = last[arm]
    tau = t - previous if previous >= 0 else 0
    penalty = 0.0
    if tau > 0 and tau <= delays[arm]:  # f(τ), its last value beyond the table
        penalty = params[k + min(tau, params.size - k) - 1]
    mean = params[arm] * (1.0 - penalty)
    u = stream_uniform(noise, arm, 0, pulls[arm])  # the table's value at (arm, pull)
    pulls[arm] += 1
    last[arm] = t
    return (1.0 if u < mean else 0.0), mean
