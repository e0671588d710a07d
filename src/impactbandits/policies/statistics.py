"""Incremental per-arm statistics shared by index policies (O(R) work per round)."""

from __future__ import annotations

import numpy as np

__all__ = ["ArmStatistics"]


class ArmStatistics:
    """Pull counts and reward sums per (replication, arm)."""

    def __init__(self, replications: int, arms: int) -> None:
        self.counts = np.zeros((replications, arms))
        self.sums = np.zeros((replications, arms))
        self._flat_counts = self.counts.reshape(-1)
        self._flat_sums = self.sums.reshape(-1)
        self._offsets = np.arange(replications) * arms

    def add(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        flat = self._offsets + actions
        self._flat_counts[flat] += 1.0
        self._flat_sums[flat] += rewards

    def means(self) -> np.ndarray:
        """Empirical means; ``+inf`` for arms never pulled (so they are tried first)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.counts > 0, self.sums / self.counts, np.inf)
