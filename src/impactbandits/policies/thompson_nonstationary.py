"""Thompson sampling that forgets: discounted and sliding-window Beta–Bernoulli posteriors.

* :class:`DiscountedThompsonSampling` — D-TS (Raj & Kalyani 2017, "Taming non-stationary
  bandits: a Bayesian approach", arXiv:1707.09727, Algorithm 2, "dTS"): discounted success and
  failure counts S_i, F_i per arm; each round θ_i ~ Beta(S_i + α₀, F_i + β₀) and the arm of the
  largest θ_i is played; then *every* arm's counts are multiplied by γ, and the played arm adds
  its outcome r̃ ∈ {0, 1}: S_i ← γ S_i + 1{i = I_t} r̃, F_i ← γ F_i + 1{i = I_t} (1 − r̃). Only
  the counts are discounted, never the prior (α₀, β₀). Default γ = 0.95: SMPyBandits'
  ``DiscountedThompson`` default (``GAMMA`` in ``Policies/DiscountedBayesianIndexPolicy.py``,
  SMPyBandits/SMPyBandits@01496bf, "empirically a reasonable value for short-term
  non-stationary experiments"); the value of the paper's own experiments could not be read
  here (only summaries of the paper are in our corpus), so it is not verified against them.
* :class:`SlidingWindowThompsonSampling` — SW-TS (Trovò, Paladino, Restelli & Gatti 2020,
  "Sliding-window Thompson sampling for non-stationary settings", JAIR 68): the same Beta
  posterior, built from the outcomes of the last τ plays only (a ring buffer, as SW-UCB's in
  :mod:`~impactbandits.policies.nonstationary`): θ_i ~ Beta(S_{t,τ}(i) + α₀, F_{t,τ}(i) + β₀).
  Default ``window = None``: τ = ⌈T^{1−β}⌉ with β = 1/2, i.e. ⌈√T⌉ (horizon-aware), the
  setting of Metelli, Trovò, Pirola & Restelli (2022, "Stochastic rising bandits", ICML) in
  their baseline ``SW_TS_eff`` (``src/algorithms/SW_TS_eff.py``,
  albertometelli/stochastic-rising-bandits@2b49e82: ``beta = 0.5``, ``tau = ceil(T ** (1 -
  beta))``, uniform priors Beta(1, 1), rewards clipped to [0, 1] and binarized by a Bernoulli
  draw). That code builds Beta(N + 1, F + 1) with N the window's pull count where the
  algorithm has S (successes) + 1: we follow the paper (S + α₀), not that slip.

Both take prior Beta(``prior_alpha``, ``prior_beta``) (default Beta(1, 1), the uniform prior of
Metelli et al.'s and SMPyBandits' code; the papers' α₀, β₀ were not checked here) and count a
reward r ∈ [0, 1] as in :class:`~impactbandits.policies.thompson.ThompsonSampling`: a success
with probability r (``update = "binarize"``, Agrawal & Goyal 2012's Algorithm 2, which is what
Metelli et al.'s code does; Bernoulli rewards count as they are), or r success and 1 − r
failure (``update = "fractional"``).

Draws come from the policy's counter-based stream (:mod:`~impactbandits.core.streams`) at the
positions Thompson sampling uses: θ_i of round t on channels 2i, 2i + 1, the binarizing
uniform of round t on channel 2K. So D-TS with γ = 1 and SW-TS with τ ≥ T play exactly as
:class:`~impactbandits.policies.thompson.ThompsonSampling` (binarized outcomes: the counts are
whole numbers, added exactly in any order), and the compiled steps give the readable forms'
numbers bit for bit. Ties (probability 0) go to the lowest arm. D-TS is
anytime; SW-TS too when ``window`` is given.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.params import WINDOW, PositiveFloat
from impactbandits.policies.thompson import (
    Rule,
    beta_posterior_draws,
    counted,
    counted_outcome,
    counts_with_stream,
    posterior_select,
)

__all__ = [
    "DTS_DISCOUNT",
    "SWTS_BETA",
    "DiscountedThompsonSampling",
    "SlidingWindowThompsonSampling",
    "swts_window",
]

#: D-TS discount γ: SMPyBandits' ``DiscountedThompson`` default (module docstring).
DTS_DISCOUNT = 0.95
#: β of SW-TS's default window τ = ⌈T^{1−β}⌉ (Metelli et al.'s code; module docstring).
SWTS_BETA = 0.5


def swts_window(horizon: int) -> int:
    """SW-TS's default window ⌈T^{1−β}⌉ for β = 1/2: ⌈√T⌉, computed exactly."""
    root = math.isqrt(horizon)
    return root if root * root == horizon else root + 1


class DiscountedThompsonSampling(Policy):
    """D-TS (Raj & Kalyani 2017, Algorithm 2; module docstring): discount γ = ``discount``
    (default 0.95) of every arm's success and failure counts each round, prior
    Beta(``prior_alpha``, ``prior_beta``), rewards counted by ``update``."""

    def __init__(
        self,
        discount: Annotated[float, Field(gt=0.0, le=1.0)] = DTS_DISCOUNT,
        prior_alpha: PositiveFloat = 1.0,
        prior_beta: PositiveFloat = 1.0,
        update: Rule = "binarize",
    ) -> None:
        if not 0.0 < discount <= 1.0:
            raise SpecError("discount", f"must be in (0, 1], got {discount}")
        self.discount = float(discount)
        self.prior_alpha = float(prior_alpha)
        self.prior_beta = float(prior_beta)
        self.rule = update

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.t = 0
        self.stream = rng.stream
        self.successes = np.zeros((rng.size, space.n))
        self.failures = np.zeros((rng.size, space.n))
        self.rows = np.arange(rng.size)

    def select(self) -> np.ndarray:
        self.t += 1
        prior = (self.prior_alpha, self.prior_beta)
        theta = beta_posterior_draws(self.stream, self.successes, self.failures, prior, self.t)
        return np.argmax(theta, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        x = counted(self.stream, self.n, self.t, reward, self.rule == "binarize")
        self.successes *= self.discount
        self.failures *= self.discount
        self.successes[self.rows, actions] += x
        self.failures[self.rows, actions] += 1.0 - x

    def compiled_step(self) -> CompiledStep | None:
        params = np.array(
            [self.prior_alpha, self.prior_beta, float(self.rule == "binarize"), self.discount]
        )
        return CompiledStep(counts_with_stream, posterior_select, _dts_update, params, stream=True)


@kernel
def _dts_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`DiscountedThompsonSampling.update` (``params``: α₀, β₀, binarize, γ)."""
    successes, failures, stream = state
    x = counted_outcome(stream, successes.size, t, reward, params[2])
    for i in range(successes.size):
        successes[i] *= params[3]
        failures[i] *= params[3]
    successes[arm] += x
    failures[arm] += 1.0 - x


class SlidingWindowThompsonSampling(Policy):
    """SW-TS (Trovò et al. 2020; module docstring): Beta posterior from the last τ =
    ``window`` plays (default ``None``: ⌈√T⌉, horizon-aware), prior Beta(``prior_alpha``,
    ``prior_beta``), rewards counted by ``update``. O(K) per round (the draws), the window kept
    by a ring buffer."""

    def __init__(
        self,
        window: Annotated[int | None, Field(gt=0), WINDOW] = None,
        prior_alpha: PositiveFloat = 1.0,
        prior_beta: PositiveFloat = 1.0,
        update: Rule = "binarize",
    ) -> None:
        if window is not None and window < 1:
            raise SpecError("window", f"must be a positive integer, got {window}")
        self.window = window
        self.prior_alpha = float(prior_alpha)
        self.prior_beta = float(prior_beta)
        self.rule = update

    @property
    def requires_horizon(self) -> bool:
        return self.window is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        if self.window is None:
            if horizon is None:
                raise SpecError("window", "this setting is derived from the horizon; give it")
            self._tau = swts_window(horizon)
        else:
            self._tau = int(self.window)
        self.n = space.n
        self.t = 0
        self.stream = rng.stream
        self.successes = np.zeros((rng.size, space.n))
        self.failures = np.zeros((rng.size, space.n))
        self._offsets = np.arange(rng.size) * space.n
        self._ring_actions = np.zeros((rng.size, self._tau), dtype=np.int64)
        self._ring_outcomes = np.zeros((rng.size, self._tau))

    def select(self) -> np.ndarray:
        self.t += 1
        prior = (self.prior_alpha, self.prior_beta)
        theta = beta_posterior_draws(self.stream, self.successes, self.failures, prior, self.t)
        return np.argmax(theta, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        x = counted(self.stream, self.n, self.t, reward, self.rule == "binarize")
        slot = (self.t - 1) % self._tau
        flat_s, flat_f = self.successes.reshape(-1), self.failures.reshape(-1)
        if self.t > self._tau:  # the play of round t − τ leaves the window
            old = self._offsets + self._ring_actions[:, slot]
            leaving = self._ring_outcomes[:, slot]
            flat_s[old] -= leaving
            flat_f[old] -= 1.0 - leaving
        flat = self._offsets + actions
        flat_s[flat] += x
        flat_f[flat] += 1.0 - x
        self._ring_actions[:, slot] = actions
        self._ring_outcomes[:, slot] = x

    def compiled_step(self) -> CompiledStep | None:
        params = np.array(
            [self.prior_alpha, self.prior_beta, float(self.rule == "binarize"), self._tau]
        )
        return CompiledStep(_swts_init, posterior_select, _swts_update, params, stream=True)


@kernel
def _swts_init(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """Window success and failure counts, the ring of the last τ plays, and the stream."""
    window = int(params[3])
    return (
        np.zeros(k),
        np.zeros(k),
        np.zeros(window, dtype=np.int64),
        np.zeros(window),
        stream.copy(),
    )


@kernel
def _swts_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`SlidingWindowThompsonSampling.update` (``params``: α₀, β₀, binarize, τ)."""
    successes, failures, ring_actions, ring_outcomes, stream = state
    x = counted_outcome(stream, successes.size, t, reward, params[2])
    window = ring_actions.size
    slot = (t - 1) % window
    if t > window:  # the play of round t − τ leaves the window
        old = ring_actions[slot]
        leaving = ring_outcomes[slot]
        successes[old] -= leaving
        failures[old] -= 1.0 - leaving
    successes[arm] += x
    failures[arm] += 1.0 - x
    ring_actions[slot] = arm
    ring_outcomes[slot] = x
