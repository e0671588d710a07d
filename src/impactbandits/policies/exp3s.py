"""Exp3.S: EXP3 with weight sharing, for a best arm that switches.

Auer, Cesa-Bianchi, Freund & Schapire (2002), "The nonstochastic multiarmed bandit problem",
SIAM J. Comput. 32(1), §8, Fig. 5 ("Exp3.S"). Weights ``w_i(1) = 1``; in round t

    p_i(t) = (1 − γ) w_i(t) / W(t) + γ/K,                     W(t) = Σ_j w_j(t),

draw the arm i_t from p(t), receive x ∈ [0, 1], set x̂_j = x / p_j(t) for j = i_t and 0
otherwise, and

    w_j(t + 1) = w_j(t) exp(γ x̂_j / K) + (e α / K) W(t).

The shared mass ``e α W / K`` keeps every weight at least a fixed fraction of the total, so an
arm that becomes the best is found again after a switch (the paper's regret bound holds
against any sequence of arms whose *hardness* — 1 + its number of switches — is at most S).

Defaults: Corollary 8.3's tuning for horizon T and hardness S,

    α = 1/T,    γ = min(1, sqrt(K (S ln(KT) + e) / ((e − 1) T))),

with ``hardness`` S = 1 unless given (the tuning against a comparison sequence without a
switch; SMPyBandits' ``Exp3S`` — SMPyBandits@012fc13, ``SMPyBandits/Policies/Exp3S.py`` — uses
this corollary's formula with its number of break points Υ_T for S when given one, and
γ = min(1, sqrt(K ln(KT)/T)) when not: we keep the paper's formula and its S). Either default
makes the policy horizon-aware; explicit ``gamma`` and ``alpha`` make it anytime. ``alpha = 0``
is EXP3 with the paper's γ/K scaling (Fig. 1). The paper's own text was not in our corpus: the
update and Corollary 8.3 are as SMPyBandits implements them, S's meaning (an upper bound on the
hardness) as we recall §8.

The update is homogeneous in w (scaling every weight scales the next ones alike and leaves p
unchanged), so the weights are renormalised to sum 1 after every update: nothing overflows at
any horizon and the probabilities are the paper's.

Random stream (:mod:`~impactbandits.core.streams`), round t: **channel 0, slot 0** — the arm
draw, by the inverse CDF of p(t) (as :meth:`~impactbandits.core.random.BatchRNG.categorical`).
Sums are left to right and ``exp`` is the C library's (:mod:`~impactbandits.core.ops`), so the
compiled step gives the readable form's numbers bit for bit.
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
from impactbandits.params import Rounds

__all__ = ["HARDNESS_DEFAULT", "Exp3S", "exp3s_alpha", "exp3s_gamma"]

#: S of Corollary 8.3 when not given: a comparison sequence without switches (hardness 1).
HARDNESS_DEFAULT = 1


def exp3s_gamma(k: int, horizon: int, hardness: int) -> float:
    """γ of Corollary 8.3: ``min(1, sqrt(K (S ln(KT) + e) / ((e − 1) T)))``."""
    return min(
        1.0, math.sqrt(k * (hardness * math.log(k * horizon) + math.e) / ((math.e - 1) * horizon))
    )


def exp3s_alpha(horizon: int) -> float:
    """α of Corollary 8.3: ``1/T``."""
    return 1.0 / horizon


class Exp3S(Policy):
    """Exp3.S (module docstring): exploration ``gamma`` γ ∈ (0, 1] and sharing ``alpha`` α ≥ 0,
    each tuned by Corollary 8.3 from the horizon and ``hardness`` S when not given."""

    def __init__(
        self,
        gamma: Annotated[float | None, Field(gt=0.0, le=1.0)] = None,
        alpha: Annotated[float | None, Field(ge=0.0, allow_inf_nan=False)] = None,
        hardness: Rounds = HARDNESS_DEFAULT,
    ) -> None:
        if gamma is not None and not 0.0 < gamma <= 1.0:
            raise SpecError("gamma", "must be in (0, 1]")
        if alpha is not None and not 0.0 <= alpha < math.inf:
            raise SpecError("alpha", "must be a finite number ≥ 0")
        if hardness < 1:
            raise SpecError("hardness", "must be ≥ 1 (1 + the number of switches)")
        self.gamma = None if gamma is None else float(gamma)
        self.alpha = None if alpha is None else float(alpha)
        self.hardness = int(hardness)

    @property
    def requires_horizon(self) -> bool:
        return self.gamma is None or self.alpha is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        k = space.n
        if self.gamma is None:
            if horizon is None:
                raise SpecError("gamma", "Exp3.S's tuned gamma needs the horizon; give gamma")
            self._gamma = exp3s_gamma(k, horizon, self.hardness)
        else:
            self._gamma = self.gamma
        if self.alpha is None:
            if horizon is None:
                raise SpecError("alpha", "Exp3.S's tuned alpha (1/T) needs the horizon; give it")
            self._alpha = exp3s_alpha(horizon)
        else:
            self._alpha = self.alpha
        self._share = math.e * self._alpha / k  # e α / K
        self.n = k
        self.t = 0
        self.stream: PolicyStream = rng.stream
        self.w = np.ones((rng.size, k))
        self.p = np.full((rng.size, k), 1.0 / k)
        self.rows = np.arange(rng.size)

    def select(self) -> np.ndarray:
        self.t += 1
        total = np.cumsum(self.w, axis=1)[:, -1:]  # W, added left to right
        self.p = (1.0 - self._gamma) * self.w / total + self._gamma / self.n
        u = self.stream.uniform(0, self.t)
        cdf = np.cumsum(self.p, axis=1)
        index = (cdf < (u * cdf[:, -1])[:, None]).sum(axis=1)
        return np.minimum(index, self.n - 1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        reward = np.asarray(feedback.reward, dtype=np.float64)
        x_hat = reward / self.p[self.rows, actions]
        grow = ops.exp(self._gamma * x_hat / self.n)
        share = self._share * ops.left_sum(self.w, axis=1)  # e α W(t) / K
        chosen = self.w[self.rows, actions] * grow + share
        w = self.w + share[:, None]
        w[self.rows, actions] = chosen
        self.w = w / ops.left_sum(w, axis=1, keepdims=True)

    def reset_rows(self, rows: np.ndarray) -> None:
        self.w[rows] = 1.0

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self._gamma, self._share])
        return CompiledStep(_exp3s_init, _exp3s_select, _exp3s_update, params, stream=True)


@kernel
def _exp3s_init(params: np.ndarray, k: int, rounds: int, stream: np.ndarray) -> Any:
    """Weights 1, the probabilities of the last draw, and the replication's stream."""
    return np.ones(k), np.empty(k), stream.copy()


@kernel
def _exp3s_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`Exp3S.select` for one replication (``params``: γ, e α / K)."""
    w, p, stream = state
    k = w.size
    gamma = params[0]
    total = 0.0
    for i in range(k):
        total += w[i]
    cdf_last = 0.0
    for i in range(k):
        p[i] = (1.0 - gamma) * w[i] / total + gamma / k
        cdf_last += p[i]
    threshold = stream_uniform(stream, 0, t, 0) * cdf_last
    index = 0
    cdf = 0.0
    for i in range(k):
        cdf += p[i]
        if cdf < threshold:
            index += 1
    return min(index, k - 1)


@kernel
def _exp3s_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """:meth:`Exp3S.update` for one replication."""
    w, p = state[0], state[1]
    k = w.size
    x_hat = reward / p[arm]
    grow = math.exp(params[0] * x_hat / k)
    total = 0.0
    for i in range(k):
        total += w[i]
    share = params[1] * total
    chosen = w[arm] * grow + share
    for i in range(k):
        w[i] = w[i] + share
    w[arm] = chosen
    total = 0.0
    for i in range(k):
        total += w[i]
    for i in range(k):
        w[i] = w[i] / total
