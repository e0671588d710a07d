"""The baselines of Tang, Ho & Liu (2021) over the ε-grid of meta-arms (Figure 2a).

* :class:`CombinatorialUCB` — CUCB over the discretized arms (Chen et al. 2016), with three
  readings of its bonus;
* :class:`MetaEXP3` — EXP3 over every meta-arm of the grid (Auer et al. 2002b).

Both keep the grid learners' per-discretized-arm sums and counts
(:mod:`impactbandits.policies.impact`) and declare their compiled form beside their readable one
(``compiled_step``, over probability vectors), which the compiled loop plays in the
delayed-impact world with the same numbers, bit for bit.
"""

from __future__ import annotations

import itertools
import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.core import ops
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.oracles.simplex import composition_table, lex_first_maximiser, numpy_sum
from impactbandits.params import RESOLUTION
from impactbandits.policies.impact import (
    _ALLOCATION,
    _P_BONUS,
    _P_M,
    _P_MODE,
    _P_TABLE,
    _P_UNPLAYED,
    _grid_init,
    _GridLearner,
    _play,
    _record_weighted,
)

__all__ = ["CombinatorialUCB", "MetaEXP3"]


class CombinatorialUCB(_GridLearner):
    """CUCB over the discretized arms (Chen et al. 2016, Algorithm 1 with the bonus
    √(3 ln t / 2n) = √(1.5 ln t / n)), Tang et al.'s combinatorial baseline: the meta-arm
    maximising the sum over groups of each played discretized arm's upper bound is played
    (exact DP over groups; an unplayed arm first). ``bonus`` says how the bound is read, since
    the per-arm estimate r̄ of (k, j) is importance-weighted (range [0, 1/p_k], p_k = j/M):

    * ``"range-scaled"`` (default): Chen et al.'s bound on the arm's outcome as the learner
      observes it, the group's reward share p_k·r̄ ∈ [0, 1]: index p_k·r̄ + √(1.5 ln t / n), so
      the meta-arm maximises Σ_k p_k r̄_k + Σ_k √(1.5 ln t / n_k) (the width of an outcome of
      range 1/p_k is √(1.5 ln t / n)/p_k, weighted by p_k): CUCB as Chen et al. state it for
      outcomes in [0, 1];
    * ``"weighted"``: the bound of a [0, 1] outcome on r̄ itself, weighted by p_k: the meta-arm
      maximises Σ_k p_k (r̄_k + √(1.5 ln t / n_k)), a bonus p_k times smaller (this library's
      default before; it under-explores, and with it CUCB beats AD-UCB, unlike the paper's
      Figure 2(a));
    * ``"triggered"``: CUCB for probabilistically triggered arms (Chen, Wang, Yuan & Wang 2016,
      JMLR, §4, CMAB-T): the discretized arm (k, j) is triggered when group k is activated
      (probability p_k), its outcome is the group's reward r_k ∈ [0, 1] observed then, and its
      count n_T and mean r̄_T count triggered rounds only (no importance weights); the
      meta-arm maximises Σ_k p_k (r̄_T + √(1.5 ln t / n_T)), the expected reward under the
      arms' upper bounds. In allocation mode every group is observed: every arm triggers.
    """

    deterministic = True

    UNPLAYED = 1e6

    def __init__(
        self,
        resolution: Annotated[int | None, Field(gt=0), RESOLUTION] = None,
        bonus: Literal["range-scaled", "weighted", "triggered"] = "range-scaled",
    ) -> None:
        super().__init__(resolution)
        self.bonus = bonus

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self._setup(space, horizon)
        self.t = 0

    def select(self) -> np.ndarray:
        from impactbandits.oracles.simplex import best_fixed_policy

        self.t += 1
        with np.errstate(divide="ignore"):
            width = np.sqrt(1.5 * math.log(max(self.t, 2)) / self.counts)
        if self.bonus in ("weighted", "triggered"):
            value = self.levels * np.where(self.counts > 0, self._means() + width, self.UNPLAYED)
        else:  # unplayed arms first, in the same order as with the weighted bonus
            played = self.levels * self._means() + width
            value = np.where(self.counts > 0, played, self.levels * self.UNPLAYED)
        levels, _ = best_fixed_policy(value)
        self.chosen = np.asarray(levels, dtype=np.int64) - 1
        return (self.chosen + 1) / self.M

    def update(self, action: Any, feedback: Feedback) -> None:
        if self.bonus != "triggered":
            self._record(self.chosen, feedback)
            return
        observed = np.asarray(feedback.observed, dtype=float)
        if self.mode == "allocation":
            observed = np.nan_to_num(observed)
        hit = ~np.isnan(observed)
        self.sums[self.rows[hit], self.chosen[hit]] += observed[hit]
        self.counts[self.rows[hit], self.chosen[hit]] += 1.0

    def compiled_step(self) -> CompiledStep | None:
        params = self._params(bonus=_BONUSES[self.bonus])
        if params is None:
            return None
        params[_P_TABLE] = 0.0  # CUCB scans no table
        return CompiledStep(_grid_init, _cucb_select, _cucb_update, params, simplex=True)


#: EXP3 over meta-arms refuses grids with more meta-arms than this.
MAX_META_ARMS = 50_000


class MetaEXP3(_GridLearner):
    """EXP3 (Auer et al. 2002b) over all meta-arms of the ε-grid (compositions of 1/ε into K
    positive parts), reward = the round's total reward / K ∈ [0, 1]; γ tuned by Cor. 3.2 with
    g = T. Horizon-aware; refuses more than :data:`MAX_META_ARMS` meta-arms."""

    @property
    def requires_horizon(self) -> bool:
        return True

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        if horizon is None:
            raise SpecError("horizon", "exp3-meta needs the horizon")
        self._setup(space, horizon)
        count = math.comb(self.M - 1, self.k - 1)
        if count > MAX_META_ARMS:
            raise SpecError("resolution", f"{count} meta-arms; at most {MAX_META_ARMS}")
        cuts = np.array(list(itertools.combinations(range(1, self.M), self.k - 1)), dtype=int)
        bounds = np.concatenate(
            [np.zeros((len(cuts), 1), int), cuts, np.full((len(cuts), 1), self.M)], axis=1
        )
        self.arms = np.diff(bounds, axis=1) / self.M
        n = len(self.arms)
        self.g = min(1.0, math.sqrt(n * math.log(n) / ((math.e - 1) * horizon))) if n > 1 else 1.0
        self.log_w = np.zeros(n)
        self.rng = rng

    def select(self) -> np.ndarray:
        # the C library's exp (ops.exp), as the compiled step computes it; sums are NumPy's
        w = ops.exp(self.log_w - self.log_w.max())
        self.p = (1 - self.g) * w / w.sum() + self.g / len(w)
        self.index = int(
            min(np.searchsorted(np.cumsum(self.p), self.rng.random() * self.p.sum()), len(w) - 1)
        )
        return self.arms[self.index]

    def update(self, action: Any, feedback: Feedback) -> None:
        reward = float(feedback.reward) / self.k
        self.log_w[self.index] += self.g * reward / (self.p[self.index] * len(self.log_w))
        self.log_w -= self.log_w.max()

    def compiled_step(self) -> CompiledStep | None:
        """One uniform per round, the one ``select`` takes from the replication's generator."""
        params = np.array([self.M, self.g])
        return CompiledStep(_meta_init, _meta_select, _meta_update, params, 1, simplex=True)


# --------------------------------------------------------------------------------------------
# Compiled steps (over probability vectors): the readable rounds above for one replication,
# operation for operation (sums as NumPy adds them: numpy_sum)
# --------------------------------------------------------------------------------------------

_BONUSES = {"range-scaled": 0, "weighted": 1, "triggered": 2}
_RANGE_SCALED, _TRIGGERED = 0, 2


@kernel
def _cucb_select(state: Any, params: np.ndarray, t: int, u: float, action: np.ndarray) -> int:
    """:meth:`CombinatorialUCB.select`: the values of every discretized arm, then
    :func:`~impactbandits.oracles.simplex.best_fixed_policy`'s DP."""
    grid, dp, levels, ints = state[0], state[2], state[5], state[6]
    m = int(params[_P_M])
    ints[0] += 1
    scale = 1.5 * math.log(max(ints[0], 2))
    range_scaled = int(params[_P_BONUS]) == _RANGE_SCALED
    for k in range(grid.shape[1]):
        for j in range(m):
            count = grid[1, k, j]
            level = (j + 1) / m
            if count > 0.0:
                mean = grid[0, k, j] / count
                width = math.sqrt(scale / count)
                value = level * mean + width if range_scaled else level * (mean + width)
            else:
                value = level * params[_P_UNPLAYED]
            grid[2, k, j] = value
    lex_first_maximiser(grid[2], dp[0], levels[0])
    for i in range(levels.shape[1]):
        levels[0, i] -= 1
    return _play(levels[0], m, action)


@kernel
def _cucb_update(
    state: Any, params: np.ndarray, t: int, action: np.ndarray, observed: np.ndarray, reward: float
) -> None:
    grid, levels = state[0], state[5]
    mode = int(params[_P_MODE])
    if int(params[_P_BONUS]) != _TRIGGERED:
        _record_weighted(grid, levels[0], observed, int(params[_P_M]), mode)
        return
    for i in range(levels.shape[1]):  # triggered arms: the activated groups' rewards as seen
        x = observed[i]
        if mode == _ALLOCATION and np.isnan(x):
            x = 0.0
        if not np.isnan(x):
            grid[0, i, levels[0, i]] += x
            grid[1, i, levels[0, i]] += 1.0


@kernel
def _meta_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """The meta-arms (compositions), log-weights, probabilities, weights, the index played."""
    table = composition_table(k, int(params[0]))
    n = table.shape[0]
    return table, np.zeros(n), np.empty(n), np.empty(n), np.zeros(1, dtype=np.int64)


@kernel
def _meta_select(state: Any, params: np.ndarray, t: int, u: float, action: np.ndarray) -> int:
    """:meth:`MetaEXP3.select` with the replication's uniform ``u``: searchsorted's index is
    the number of prefix sums below ``u·Σp``."""
    table, log_w, p, w, index = state
    m, g = int(params[0]), params[1]
    n = log_w.size
    top = log_w.max()
    for i in range(n):
        w[i] = math.exp(log_w[i] - top)
    total = numpy_sum(w, 0, n)
    for i in range(n):
        p[i] = (1.0 - g) * w[i] / total + g / n
    threshold = u * numpy_sum(p, 0, n)
    below = 0
    cdf = 0.0
    for i in range(n):
        cdf += p[i]
        if cdf < threshold:
            below += 1
    index[0] = min(below, n - 1)
    for i in range(action.size):
        action[i] = table[index[0], i] / m
    return 0


@kernel
def _meta_update(
    state: Any, params: np.ndarray, t: int, action: np.ndarray, observed: np.ndarray, reward: float
) -> None:
    log_w, p, index = state[1], state[2], state[4]
    n = log_w.size
    j = index[0]
    log_w[j] += params[1] * (reward / action.size) / (p[j] * n)
    top = log_w.max()
    for i in range(n):
        log_w[i] -= top
