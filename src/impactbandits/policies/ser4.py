"""SER4: successive elimination with randomized round-robin and random resets.

Allesiardo, Féraud & Maillard (2017), "The non-stationary stochastic multi-armed bandit
problem", International Journal of Data Science and Analytics 3(4), 267–283: SER3 (successive
elimination with randomized round-robin) and SER4 (SER3 with random resets, for a best arm that
switches). As implemented here:

* a **round-robin** τ = 1, 2, … plays every arm of the candidate set S once, in a uniformly
  random order (each round, the next arm is drawn uniformly among the arms of S not yet played
  in this round-robin: sampling without replacement, so the order is a uniform permutation);
* at the end of round-robin τ every arm of S has τ rewards since the last reset, with mean
  μ̂_k; with μ̂_max the largest of them, arm k ∈ S is **eliminated** if

      μ̂_max − μ̂_k + ε ≥ 2 sqrt(ln(4 K τ² / δ) / (2τ)),

  except the empirical best (the lowest index attaining μ̂_max), which is never eliminated (so
  S is never empty, whatever ε);
* then, with probability φ, SER4 **resets**: S = all K arms, τ = 1, the means forgotten. With
  one arm left a round-robin is one round, so the coin is then flipped every round.

Rewards are in [0, 1]. Ties go to the lowest arm index.

What could not be read and what was chosen: only the paper's first page is in our corpus, so
its pseudo-code and constants were not checked against this text. The elimination width is
successive elimination's Hoeffding width for rewards in [0, 1] with a union bound over K arms
and round-robins τ (Even-Dar, Mannor & Mansour 2006, "Action elimination and stopping
conditions for the multi-armed bandit and reinforcement learning problems", JMLR 7), with the
``+ ε`` of SER3 as we recall it; K is the number of arms, not |S|. The defaults are those of the
Ser4 baseline of Metelli et al. (2022, "Stochastic rising bandits", ICML;
albertometelli/stochastic-rising-bandits@2b49e82, ``src/algorithms/Ser4.py``), the only concrete
values we could read:

    δ = 1/T,    ε = 1/(K T),    φ = sqrt(T / (T K sqrt(K T))) = 1/sqrt(K sqrt(K T)),

each a parameter (giving all three makes the policy anytime; any one left out needs the
horizon). This φ is large (0.075 per round-robin for K = 2, T = 4000; 0.019 for T = 10⁶), so
on such horizons a reset usually comes before the confidence width allows any elimination
and the policy plays close to a uniform round-robin; give φ (and δ, ε) for resets rare enough
to let the elimination work. Their implementation also departs from the algorithm above: its
elimination statement compares instead of assigning (``==``), so no arm is ever eliminated
(and its width ``2 sqrt(ln(2 |S| τ / δ))``, not divided by τ, exceeds 1 anyway); it plays the
round-robin in index order, then the arm of the best running mean of Bernoulli draws of the
rewards once more before the next round-robin. None of that is reproduced here.

Random stream (:mod:`~impactbandits.core.streams`), round t: **channel 0, slot 0** — the
uniform that picks the arm among those of S not yet played in the current round-robin
(index ⌊u m⌋ among the m such arms, in increasing order); **channel 1, slot 0** — the reset
coin, read only in a round that completes a round-robin (reset if u < φ).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.streams import PolicyStream, stream_uniform
from impactbandits.errors import SpecError

__all__ = ["Ser4", "ser4_defaults"]


def ser4_defaults(k: int, horizon: int) -> tuple[float, float, float]:
    """(δ, ε, φ) of Metelli et al.'s Ser4 baseline (module docstring) for K arms, horizon T."""
    T = horizon
    return 1.0 / T, 1.0 / (T * k), math.sqrt(T / (T * k * math.sqrt(k * T)))


class Ser4(Policy):
    """SER4 (module docstring): confidence ``delta`` δ, slack ``epsilon`` ε and reset
    probability ``phi`` φ per round-robin, each derived from the horizon when not given."""

    def __init__(
        self,
        delta: Annotated[float | None, Field(gt=0.0, lt=1.0)] = None,
        epsilon: Annotated[float | None, Field(ge=0.0, allow_inf_nan=False)] = None,
        phi: Annotated[float | None, Field(ge=0.0, le=1.0)] = None,
    ) -> None:
        if delta is not None and not 0.0 < delta < 1.0:
            raise SpecError("delta", "must be in (0, 1)")
        if epsilon is not None and not 0.0 <= epsilon < math.inf:
            raise SpecError("epsilon", "must be a finite number ≥ 0")
        if phi is not None and not 0.0 <= phi <= 1.0:
            raise SpecError("phi", "must be in [0, 1]")
        self.delta = None if delta is None else float(delta)
        self.epsilon = None if epsilon is None else float(epsilon)
        self.phi = None if phi is None else float(phi)

    @property
    def requires_horizon(self) -> bool:
        return self.delta is None or self.epsilon is None or self.phi is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        k = space.n
        if self.requires_horizon:
            if horizon is None:
                missing = next(n for n in ("delta", "epsilon", "phi") if getattr(self, n) is None)
                raise SpecError(missing, "derived from the horizon; give it explicitly")
            defaults = ser4_defaults(k, horizon)
        else:
            defaults = (0.0, 0.0, 0.0)
        self._delta = defaults[0] if self.delta is None else self.delta
        self._epsilon = defaults[1] if self.epsilon is None else self.epsilon
        self._phi = defaults[2] if self.phi is None else self.phi
        self.n = k
        self.t = 0
        self.stream: PolicyStream = rng.stream
        self.rows = np.arange(rng.size)
        self.arms = np.arange(k)
        self.active = np.ones((rng.size, k), dtype=bool)  # S
        self.pending = np.ones((rng.size, k), dtype=bool)  # S's arms not yet played this τ
        self.sums = np.zeros((rng.size, k))
        self.tau = np.ones(rng.size)  # the current round-robin, from 1 after each reset

    def select(self) -> np.ndarray:
        self.t += 1
        m = self.pending.sum(axis=1)
        u = self.stream.uniform(0, self.t)
        j = np.minimum((u * m).astype(np.int64), m - 1)
        # the (j + 1)-th pending arm, in increasing index order
        return np.argmax(np.cumsum(self.pending, axis=1) > j[:, None], axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.sums[self.rows, actions] += np.asarray(feedback.reward, dtype=np.float64)
        self.pending[self.rows, actions] = False
        done = ~self.pending.any(axis=1)  # round-robin τ complete
        if not done.any():
            return
        tau = self.tau[done]
        active = self.active[done]
        means = self.sums[done] / tau[:, None]
        masked = np.where(active, means, -np.inf)
        best = np.argmax(masked, axis=1)
        top = masked[np.arange(best.size), best]
        width = np.sqrt(ops.log(4.0 * self.n * tau * tau / self._delta) / (2.0 * tau))
        out = (top[:, None] - means) + self._epsilon >= 2.0 * width[:, None]
        out &= self.arms[None, :] != best[:, None]
        self.active[done] = active & ~out
        self.tau[done] = tau + 1.0
        coin = self.stream.uniform(1, self.t)
        restart = done & (coin < self._phi)
        self.active[restart] = True
        self.sums[restart] = 0.0
        self.tau[restart] = 1.0
        self.pending[done] = self.active[done]

    def reset_rows(self, rows: np.ndarray) -> None:
        self.active[rows] = True
        self.pending[rows] = True
        self.sums[rows] = 0.0
        self.tau[rows] = 1.0

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self._delta, self._epsilon, self._phi])
        return CompiledStep(_ser4_init, _ser4_select, _ser4_update, params, stream=True)


@kernel
def _ser4_init(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """S (1: in), S's arms not yet played this round-robin, reward sums since the last reset,
    [τ], and the replication's stream."""
    return np.ones(k), np.ones(k), np.zeros(k), np.ones(1), stream.copy()


@kernel
def _ser4_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`Ser4.select` for one replication."""
    pending, stream = state[1], state[4]
    m = 0
    for i in range(pending.size):
        if pending[i] > 0.0:
            m += 1
    j = int(stream_uniform(stream, 0, t, 0) * m)
    if j > m - 1:
        j = m - 1
    for i in range(pending.size):
        if pending[i] > 0.0:
            if j == 0:
                return i
            j -= 1
    return 0


@kernel
def _ser4_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`Ser4.update` for one replication (``params``: δ, ε, φ)."""
    active, pending, sums, info, stream = state
    k = sums.size
    sums[arm] += reward
    pending[arm] = 0.0
    for i in range(k):
        if pending[i] > 0.0:
            return
    tau = info[0]
    best = 0
    top = -math.inf
    for i in range(k):
        if active[i] > 0.0 and sums[i] / tau > top:
            best, top = i, sums[i] / tau
    width = math.sqrt(math.log(4.0 * k * tau * tau / params[0]) / (2.0 * tau))
    for i in range(k):
        if active[i] > 0.0 and i != best and (top - sums[i] / tau) + params[1] >= 2.0 * width:
            active[i] = 0.0
    info[0] = tau + 1.0
    if stream_uniform(stream, 1, t, 0) < params[2]:
        for i in range(k):
            active[i] = 1.0
            sums[i] = 0.0
        info[0] = 1.0
    for i in range(k):
        pending[i] = active[i]
