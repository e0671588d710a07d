"""MOSS-anytime: the minimax-optimal index policy without the horizon.

MOSS (Audibert & Bubeck 2009, "Minimax policies for adversarial and stochastic bandits", COLT;
JMLR 2010, §2) plays ``argmax_i x̄_i + sqrt(max(0, ln(T / (K n_i))) / n_i)`` with T the horizon;
Degenne & Perchet (2016, "Anytime optimal algorithms in stochastic multi-armed bandits", ICML,
§3) replace T by the current round t and scale the exploration term by (1 + α)/2:

    index_i(t) = x̄_i + sqrt((1 + α)/2 · max(0, ln(t / (K n_i))) / n_i),

arms never pulled first, ties to the lowest index. Default α = 1.0, SMPyBandits' default for its
``MOSSAnytime`` (the paper's own recommendation could not be read here: only its first page is
in our corpus). Anytime, deterministic, rewards in [0, 1].

The exploration term is computed as 0 when ``t ≤ K n_i`` (exactly where ``ln(t / (K n_i)) ≤ 0``)
and otherwise as ``(ln t − ln n_i) − ln K``, every ``ln`` taken by the C library (Python's
``math.log``, which numba calls too): NumPy's vectorised ``np.log`` may differ from it in the
last bit on CPUs with AVX-512, so the readable form reads a table of ``math.log`` values and the
compiled step computes the same ones, and both give the same bits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.params import NonNegativeFloat
from impactbandits.policies.classic import counts_init, counts_update
from impactbandits.policies.statistics import ArmStatistics

__all__ = ["MOSS", "MOSS_ALPHA"]

#: α of MOSS-anytime's exploration scale (1 + α)/2.
MOSS_ALPHA = 1.0


class MOSS(Policy):
    """MOSS-anytime (Degenne & Perchet 2016; module docstring), ``alpha`` α ≥ 0 (default 1.0)."""

    deterministic = True

    def __init__(self, alpha: NonNegativeFloat = MOSS_ALPHA) -> None:
        self.alpha = float(alpha)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.n = space.n
        self.t = 0
        self.stats = ArmStatistics(rng.size, space.n)
        self._scale = (1.0 + self.alpha) / 2.0
        self._log_k = math.log(self.n)
        self._logs = np.zeros(1)  # math.log(i) at index i (0 at 0: never read)

    def select(self) -> np.ndarray:
        self.t += 1
        if self._logs.size <= self.t:  # grown by doubling: O(1) amortised per round
            size = 2 * self.t
            self._logs = np.array([0.0] + [math.log(i) for i in range(1, size)])
        counts, logs = self.stats.counts, self._logs
        pulls = counts.astype(np.int64)
        with np.errstate(divide="ignore", invalid="ignore"):
            excess = np.where(
                self.t > self.n * pulls, (logs[self.t] - logs[pulls]) - self._log_k, 0.0
            )
            bonus = np.sqrt(self._scale * excess / counts)
            index = np.where(counts > 0, self.stats.sums / counts + bonus, np.inf)
        return np.argmax(index, axis=1)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.stats.add(actions, feedback.reward)

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([self._scale, self._log_k])
        return CompiledStep(counts_init, _moss_select, counts_update, params)


@kernel
def _moss_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """:meth:`MOSS.select` for one replication (``params``: (1 + α)/2, ln K)."""
    counts, sums = state
    k = counts.size
    log_t = math.log(t)
    best = 0
    best_value = -math.inf
    for i in range(counts.size):
        if counts[i] > 0:
            excess = 0.0
            if t > k * counts[i]:
                excess = (log_t - math.log(counts[i])) - params[1]
            value = sums[i] / counts[i] + math.sqrt(params[0] * excess / counts[i])
        else:
            value = math.inf
        if value > best_value:
            best, best_value = i, value
    return best
