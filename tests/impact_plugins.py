"""User impact functions for the plug-in tests (named ``tests.impact_plugins:Class`` in specs)."""

from __future__ import annotations

import numpy as np


class LastTwoRounds:
    """f(t) = mean of p(t) and p(t − 1): holding p reaches g(p) = p after one round (rate 0.5)."""

    rate = 0.5

    def initial(self, replications, groups):
        return np.full((replications, groups), np.nan)

    def advance(self, state, actions):
        f = np.where(np.isnan(state), actions, (state + actions) / 2)
        return actions.copy(), f

    def limit(self, shares):
        return np.asarray(shares, dtype=float)


class TooSlow:
    """Claims rate 0.1 but smooths with 0.9: violates §5.2's condition."""

    rate = 0.1

    def __init__(self, weight: float = 0.9):
        self.weight = weight

    def initial(self, replications, groups):
        return np.zeros((replications, groups))

    def advance(self, state, actions):
        f = self.weight * state + (1 - self.weight) * actions
        return f, f

    def limit(self, shares):
        return np.asarray(shares, dtype=float)
