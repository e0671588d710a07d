"""Single-Peaked Optimism (Lindner, Heidari & Krause 2021, "Addressing the Long-term Impact
of ML Decisions via Policy Regret", Algorithm 1 and §4), for single-peaked rested bandits.

* :class:`SPO` — Single-Peaked Optimism (Algorithm 1), noise-free, and its noisy extension with
  bounded-noise intervals and the LP (⋆) bound (§4);
* :class:`SPODelta` — the δ-interval variant of Corollary 1 for unbounded (Gaussian) noise.

Both keep the last two observations of every arm as the §5 baselines of
:mod:`impactbandits.policies.single_peaked` do, are batched over replications, and break ties
to the lowest arm index. Their compiled steps sit below the classes; the LP (⋆) state they
update per arm is in :mod:`impactbandits.policies.spo_bound`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.core.variants import Variant, kept_argmax, refresh_stale, stale_arms
from impactbandits.errors import SpecError
from impactbandits.params import NOISE, NoiseScale, PositiveFloat
from impactbandits.policies.single_peaked import (
    _last_two_init,
    _last_two_stale_init,
    _last_two_stale_update,
    _last_two_update,
    _LastTwo,
)
from impactbandits.policies.spo_bound import bound_add, capped_linear_sum, optimistic_sum

if TYPE_CHECKING:
    from impactbandits.core.environment import Environment

__all__ = ["SPO", "SPODelta", "linear_optimistic_sum"]

#: Minimum number of initial pulls per arm: N_init = max(⌊ln T⌋, MIN_INITIAL_PULLS).
MIN_INITIAL_PULLS = 2


def linear_optimistic_sum(value: np.ndarray, slope: np.ndarray, remaining: int) -> np.ndarray:
    """``Σ_{k=1}^{R} min(1, value + k·slope)`` in closed form, elementwise, for any sign of slope.

    Slope ≥ 0: with K = #{k ≤ R : value + k·slope < 1} (the first K terms) the sum is
    ``K·value + slope·K(K+1)/2 + (R − K)``. Slope < 0: the first J = #{k : value + k·slope ≥ 1}
    terms are 1, the rest linear: ``J + (R − J)·value + slope·(R(R+1) − J(J+1))/2``.
    """
    value = np.asarray(value, dtype=float)
    slope = np.asarray(slope, dtype=float)
    R = float(remaining)
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.where(slope > 0, np.ceil((1.0 - value) / slope) - 1.0, np.where(value < 1, R, 0))
        above = np.where(slope < 0, np.floor((value - 1.0) / -slope), 0.0)
    k = np.clip(below, 0, R)
    j = np.clip(np.where(value >= 1, above, 0.0), 0, R)
    rising = k * value + slope * k * (k + 1) / 2.0 + (R - k)
    falling = j + (R - j) * value + slope * (R * (R + 1) - j * (j + 1)) / 2.0
    return np.where(slope >= 0, rising, falling)


def _noisy(environment: Environment) -> bool:
    """Whether observations carry noise: a rested bandit says so by its ``noise``; otherwise
    any environment that is not :attr:`~impactbandits.core.environment.Environment.
    deterministic` counts as noisy."""
    noise = getattr(environment, "noise", None)
    return noise != "none" if isinstance(noise, str) else not environment.deterministic


class SPO(_LastTwo):
    """Single-Peaked Optimism (Lindner et al. 2021, Algorithm 1 and §4).

    Initial phase: each arm in turn is pulled N_init = max(⌊ln T⌋, 2) times. Main phase: after
    t pulls, with n_i pulls of arm i and R = T − t remaining, pull ``argmax_i p_i`` where

    * noise-free (``noise_bound = 0``, Algorithm 1): ``p_i = Σ_{s=1}^{R} min(1, f_i(n_i) +
      s·Δ_i)`` with ``Δ_i = f_i(n_i) − f_i(n_i − 1)`` if Δ_i ≥ 0 (increasing phase), else
      ``p_i = f_i(n_i)·R`` (decreasing phase);
    * bounded noise |ε| ≤ ε̄ (``noise_bound = ε̄``, §4): the intervals ŷ_j ± ε̄ of all past
      observations feed the LP (⋆), whose optimum is ``p_i``; if (⋆) is infeasible the arm is
      in its decreasing phase and ``p_i = min(1, U_n)·R`` with ``U_n = ŷ(n) + ε̄`` (clipped at 1,
      a valid bound since rewards lie in [0, 1]). The LP is solved exactly by
      :class:`~impactbandits.oracles.concave_bound.ConcaveBound`, incrementally.

    ``variant = "paper"`` (default): every arm's index is refreshed every round and the LP
    objective sums over pulls n+1..n+R, as in the paper's UPDATEOPTIMISTICREWARD, which loops
    over all arms. ``variant = "authors-code"`` reproduces the authors' experiments (the fidelity
    ledger, https://impactbandits.readthedocs.io/en/latest/fidelity/) on both paths: only the
    pulled arm's index is refreshed (the others keep the value computed with the remaining time
    R at their last pull, so an arm not pulled for a while looks as if it had more future than it
    has), and in the LP path the objective sums over pulls n+2..T, i.e.
    ``Σ_{k=2}^{T−n} min(1, x* + k·d*)`` at (⋆)'s greatest feasible end point (x*, d*) — exact,
    because that point maximises every nondecreasing objective of the future at once.
    Horizon-aware. The authors' defaults (fidelity ledger): ε̄ = 2σ for Gaussian noise; FICO uses
    max(0.1, 2σ).
    """

    deterministic = True
    horizon: int  # reset refuses an anytime run

    def __init__(
        self,
        noise_bound: NoiseScale = 0.0,
        variant: Variant = "paper",
    ) -> None:
        self.noise_bound = float(noise_bound)
        self.variant = variant

    @property
    def requires_horizon(self) -> bool:
        return True

    def _half_width(self, horizon: int) -> float:
        return self.noise_bound

    def caution(self, environment: Environment) -> str | None:
        """Algorithm 1 (``noise_bound = 0``) assumes exact observations: on noisy ones it
        takes noise for slope and can settle on a wrong arm (26 of 30 seeds failed at
        T = 5000, σ = 0.05 in a reviewer's run)."""
        if self.noise_bound > 0 or not _noisy(environment):
            return None
        return (
            "'spo' with noise_bound = 0 is Lindner et al.'s noise-free Algorithm 1, but the "
            "observations are noisy: give noise_bound (a bound on the noise, §4) or use "
            "'spo-delta' with the noise's sigma (Corollary 1)"
        )

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        if horizon is None:
            raise SpecError("horizon", "SPO needs the horizon")
        super().reset(space, horizon, rng)
        self.initial = max(math.floor(math.log(horizon)), MIN_INITIAL_PULLS)
        self.width = self._half_width(horizon)
        self._bounds = None
        if self.width > 0:
            from impactbandits.oracles.concave_bound import ConcaveBound

            self._bounds = [[ConcaveBound() for _ in range(space.n)] for _ in range(rng.size)]
        self._index = np.zeros((rng.size, space.n))
        self._stale = np.ones((rng.size, space.n), dtype=bool)

    def select(self) -> np.ndarray:
        self.t += 1
        if self.t <= self.initial * self.n:
            return np.full(self.size, (self.t - 1) // self.initial, dtype=np.int64)
        remaining = self.horizon - (self.t - 1)
        if self._bounds is not None:
            return np.argmax(self._index_lp(remaining), axis=1)
        index = self._index_noise_free(remaining)
        if self.variant == "authors-code":
            first = self.t == self.initial * self.n + 1
            index = refresh_stale(self._index, index, None if first else self._pulled)
        return np.argmax(index, axis=1)

    def _index_noise_free(self, remaining: int) -> np.ndarray:
        slope = self.last - self.previous
        rising = linear_optimistic_sum(self.last, np.maximum(slope, 0.0), remaining)
        return np.where(slope >= 0, rising, self.last * remaining)

    def _index_lp(self, remaining: int) -> np.ndarray:
        """LP (⋆) indices; entries not marked stale keep their value (authors' variant only)."""
        cap = np.minimum(1.0, self.last + self.width) * remaining
        authors = self.variant == "authors-code"
        for r, i in zip(*np.nonzero(self._stale), strict=True):
            bound = self._bounds[r][i]  # type: ignore[index]
            if not bound.feasible:
                self._index[r, i] = cap[r, i]
            elif authors:
                self._index[r, i] = self._shifted_objective(bound)
            else:
                self._index[r, i] = bound.value(remaining)
        self._stale[:] = not authors
        return self._index

    def _shifted_objective(self, bound: object) -> float:
        """Σ_{j=n+2}^{T} v_j of (⋆) (the authors' code): the capped line from (x*, d*)."""
        from impactbandits.oracles.concave_bound import capped_linear_sum

        n = bound.n  # type: ignore[attr-defined]
        terms = self.horizon - n  # k = 1..T−n, of which k = 1 (pull n+1) is dropped
        x, d = bound.max_last_value, bound.max_last_increment  # type: ignore[attr-defined]
        if n <= 1 or math.isinf(d):
            return float(max(terms - 1, 0))
        return capped_linear_sum(x, d, terms) - min(1.0, x + d)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        super().update(actions, feedback)
        if self._bounds is not None:
            lower = feedback.reward - self.width
            upper = feedback.reward + self.width
            for r, arm in enumerate(actions):
                self._bounds[r][arm].add(float(lower[r]), float(upper[r]))
            self._stale[np.arange(self.size), actions] = True

    def compiled_step(self) -> CompiledStep | None:
        """The rounds (``params``: ε̄ or the δ-interval half-width, T, initial pulls per arm);
        the LP (⋆) state per arm in :mod:`impactbandits.policies.spo_bound`. The authors-code
        variant keeps its stale indices in the state."""
        params = np.array([self.width, self.horizon, self.initial])
        if self.variant == "authors-code":
            if self.width > 0:
                return CompiledStep(_spo_authors_init, _spo_authors_select, _spo_authors_update,
                                    params)  # fmt: skip
            return CompiledStep(_last_two_stale_init, _spo_authors_select_noise_free,
                                _last_two_stale_update, params)  # fmt: skip
        if self.width > 0:
            return CompiledStep(_spo_init, _spo_select, _spo_update, params)
        return CompiledStep(_last_two_init, _spo_select_noise_free, _last_two_update, params)


@kernel
def _spo_init(params: np.ndarray, k: int, rounds: int) -> Any:
    pulls, last, previous = _last_two_init(params, k, rounds)
    hull = rounds  # (⋆)'s upper hull of the observations, per arm
    return (
        pulls,
        last,
        previous,
        np.zeros(k, dtype=np.int64),  # pulls seen by the bound
        np.ones(k, dtype=np.bool_),  # (⋆) feasible
        np.full(k, np.nan),  # its greatest feasible end point (x*, d*)
        np.full(k, math.inf),
        np.full(k, -math.inf),  # running maximum and pending value of the bound
        np.full(k, np.nan),
        np.empty((k, hull), dtype=np.int64),
        np.empty((k, hull)),
        np.zeros(k, dtype=np.int64),
    )


@kernel
def _spo_select_noise_free(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SPO.select` with ``ε̄ = 0`` (Algorithm 1): the initial pulls, then ``argmax`` of
    the noise-free index; ties to the lowest index. (A step of its own: a noise-free run
    needs none of the LP's state.)"""
    last, previous = state[1], state[2]
    k = last.size
    initial = int(params[2])
    if t <= initial * k:
        return (t - 1) // initial
    remaining = int(params[1]) - (t - 1)
    best = 0
    best_value = -math.inf
    for i in range(k):
        value = _noise_free_value(last[i], previous[i], remaining)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel(inline=True)
def _noise_free_value(last: float, previous: float, remaining: int) -> float:
    """One arm's :meth:`SPO._index_noise_free`."""
    slope = last - previous
    if slope >= 0:
        return optimistic_sum(last, max(slope, 0.0), remaining)
    return last * remaining


@kernel
def _spo_authors_select_noise_free(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SPO.select` of the authors-code variant with ``ε̄ = 0``: after the initial pulls
    every index once, then only the pulled arm's (with the remaining time of that round)."""
    last, previous, kept, pulled = state[1], state[2], state[3], state[4]
    k = last.size
    initial = int(params[2])
    if t <= initial * k:
        return (t - 1) // initial
    remaining = int(params[1]) - (t - 1)
    first, stop = stale_arms(kept, pulled, t == initial * k + 1)
    for i in range(first, stop):
        kept[i] = _noise_free_value(last[i], previous[i], remaining)
    return kept_argmax(kept)


@kernel
def _spo_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SPO.select` with ``ε̄ > 0`` (§4): the initial pulls, then ``argmax`` of LP (⋆)'s
    optimum, ``cap`` for arms whose (⋆) is infeasible; ties to the lowest index."""
    last, n, feasible, x, d = state[1], state[3], state[4], state[5], state[6]
    k = last.size
    width = params[0]
    initial = int(params[2])
    if t <= initial * k:
        return (t - 1) // initial
    remaining = int(params[1]) - (t - 1)
    best = 0
    best_value = -math.inf
    for i in range(k):
        if not feasible[i]:
            value = min(1.0, last[i] + width) * remaining
        elif n[i] <= 1:
            value = float(remaining)
        else:
            value = capped_linear_sum(x[i], d[i], remaining)
        if value > best_value:
            best, best_value = i, value
    return best


@kernel
def _spo_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """The last two observations, and the observation's interval ± ε̄ into LP (⋆)'s state."""
    _last_two_update(state, params, t, arm, reward)
    width = params[0]
    n, feasible, x, d, running_max, pending = state[3:9]
    hull_x, hull_y, hull_len = state[9], state[10], state[11]
    bound_add(arm, reward - width, reward + width, n, feasible, x, d, running_max, pending,
              hull_x, hull_y, hull_len)  # fmt: skip


@kernel
def _spo_authors_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """:func:`_spo_init`, the kept indices and which of them are stale (all, at first)."""
    return (*_spo_init(params, k, rounds), np.zeros(k), np.ones(k, dtype=np.bool_))


@kernel(inline=True)
def _shifted_value(n: int, x: float, d: float, horizon: int) -> float:
    """:meth:`SPO._shifted_objective` of an arm whose (⋆) is feasible."""
    terms = horizon - n
    if n <= 1 or math.isinf(d):
        return float(max(terms - 1, 0))
    return capped_linear_sum(x, d, terms) - min(1.0, x + d)


@kernel
def _spo_authors_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`SPO.select` of the authors-code variant with ``ε̄ > 0``: after the initial pulls,
    the stale arms' indices (:meth:`SPO._index_lp`): ``cap`` if (⋆) is infeasible, else the
    objective over pulls n+2..T; ties to the lowest index."""
    last, n, feasible, x, d = state[1], state[3], state[4], state[5], state[6]
    kept, stale = state[12], state[13]
    k = last.size
    width = params[0]
    horizon = int(params[1])
    initial = int(params[2])
    if t <= initial * k:
        return (t - 1) // initial
    remaining = horizon - (t - 1)
    for i in range(k):
        if stale[i]:
            if not feasible[i]:
                kept[i] = min(1.0, last[i] + width) * remaining
            else:
                kept[i] = _shifted_value(n[i], x[i], d[i], horizon)
            stale[i] = False
    return kept_argmax(kept)


@kernel
def _spo_authors_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:func:`_spo_update`, and the pulled arm's index marked stale."""
    _spo_update(state, params, t, arm, reward)
    state[13][arm] = True


class SPODelta(SPO):
    """SPO with δ-intervals for unbounded noise (Lindner et al. 2021, Corollary 1).

    For Gaussian noise N(0, σ²) the interval ŷ ± σ·z_{1−δ/2} contains f with probability
    1 − δ; choosing ``δ = 1 − (1 − ε)^{1/T}`` makes all of the at most T intervals hold
    simultaneously with probability ≥ 1 − ε (the corollary's union argument). Defaults:
    ``failure_probability`` ε = 0.05; ``sigma`` must be given.
    """

    def __init__(
        self,
        sigma: Annotated[PositiveFloat, NOISE],
        failure_probability: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.05,
    ) -> None:
        if not 0 < failure_probability < 1:
            raise SpecError("failure_probability", "must be in (0, 1)")
        super().__init__(noise_bound=0.0)
        self.sigma, self.failure_probability = float(sigma), float(failure_probability)

    def caution(self, environment: Environment) -> str | None:
        return None  # its intervals come from sigma, not from noise_bound

    def _half_width(self, horizon: int) -> float:
        from scipy.special import ndtri  # what scipy.stats.norm.ppf calls, without its import

        delta = -math.expm1(math.log1p(-self.failure_probability) / horizon)
        return float(self.sigma * ndtri(1.0 - delta / 2.0))
