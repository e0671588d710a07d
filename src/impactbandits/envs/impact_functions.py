"""Impact functions for Tang et al.'s history-dependent bandits: how past shares move f(t).

An impact function turns the sequence of actions p(1), p(2), … into the impacts f(t) that the
reward functions r_k are evaluated at. Section 5.2 of Tang, Ho & Liu (2021) asks only that
holding a share converges geometrically:

    |f_k(t + s) − g(p_k)| ≤ γ^s    whenever p_k is played for s consecutive rounds,

for some γ ∈ (0, 1) and a continuous monotone ``g``; then a fixed p earns Σ_k p_k r_k(g(p_k))
per round in the long run, and that is what regret is measured against. Built in:

* :class:`DiscountedAverage` — Eq. (2), f_k(t) = Σ_{s≤t} γ^{t−s} p_k(s) / Σ_{s≤t} γ^{t−s}
  (g = identity; γ = 0 is the action-dependent case f(t) = p(t));
* :class:`Smoothed` — exponential smoothing towards g(p) = p^power:
  f(t) = γ f(t − 1) + (1 − γ) g(p(t)), f(1) = g(p(1)).

Your own: any class with these methods, named ``"module:Class"`` in the environment's
``impact`` field and built with ``impact_params``. It is a pure description (the environment
keeps the state), so it must not hold per-run state itself. The environment probes the §5.2
condition on random histories when it is built (:func:`check_convergence`).

The built-ins declare a compiled form (:meth:`ImpactFunction.compiled`: the parameters of
:func:`advance_impact`, the same operations for one replication), which the environment's
compiled rounds use (:mod:`impactbandits.envs.impact`); a user's impact function declares none
and runs on the readable loop.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from impactbandits.core.compiled import kernel
from impactbandits.errors import SpecError

__all__ = [
    "DiscountedAverage",
    "ImpactFunction",
    "Smoothed",
    "advance_impact",
    "check_convergence",
    "initial_impact",
]

#: Slack allowed by :func:`check_convergence` (float rounding).
CONVERGENCE_TOL = 1e-9


class ImpactFunction(ABC):
    """The interface; arrays have a leading replication axis and the group as last axis."""

    #: γ of the §5.2 convergence condition (what the learner is told as ``known["gamma"]``).
    rate: float

    @abstractmethod
    def initial(self, replications: int, groups: int) -> Any:
        """The state before the first round."""

    @abstractmethod
    def advance(self, state: Any, actions: np.ndarray) -> tuple[Any, np.ndarray]:
        """``(new_state, f)``: the impacts of the round in which ``actions`` are played
        (including them). Must not modify ``state``: the environment also asks "what if"."""

    @abstractmethod
    def limit(self, shares: np.ndarray) -> np.ndarray:
        """``g(p)`` elementwise: the impact that holding share ``p`` converges to."""

    def compiled(self) -> np.ndarray | None:
        """The parameters of the compiled form (:func:`advance_impact`: its code, γ and one
        more number), or ``None`` (the default: no compiled form)."""
        return None


class DiscountedAverage(ImpactFunction):
    """Tang et al. (2021), Eq. (2): the γ-discounted average of the shares so far (running sums,
    O(K) per round). ``g`` is the identity and the §5.2 condition holds with rate γ."""

    def __init__(self, gamma: float) -> None:
        self.rate = float(gamma)

    def initial(self, replications: int, groups: int) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros((replications, groups)), np.zeros((replications, 1))

    def advance(
        self, state: tuple[np.ndarray, np.ndarray], actions: np.ndarray
    ) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        num = self.rate * state[0] + actions
        den = self.rate * state[1] + 1.0
        return (num, den), num / den

    def limit(self, shares: np.ndarray) -> np.ndarray:
        return np.asarray(shares, dtype=float)

    def compiled(self) -> np.ndarray | None:
        return np.array([_DISCOUNTED, self.rate, 0.0])


class Smoothed(ImpactFunction):
    """Exponential smoothing towards ``g(p) = p^power`` (a §5.2 example with a non-identity g):
    f(t) = γ f(t − 1) + (1 − γ) g(p(t)), starting at f(1) = g(p(1)). Holding p for s rounds gives
    |f − g(p)| = γ^s |f_before − g(p)| ≤ γ^s."""

    def __init__(self, gamma: float, power: float = 1.0) -> None:
        if not power > 0:
            raise SpecError("impact_params.power", f"must be > 0, got {power}")
        self.rate, self.power = float(gamma), float(power)

    def initial(self, replications: int, groups: int) -> np.ndarray:
        return np.full((replications, groups), np.nan)

    def advance(self, state: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        target = self.limit(actions)
        f = np.where(np.isnan(state), target, self.rate * state + (1.0 - self.rate) * target)
        return f, f

    def limit(self, shares: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(shares, dtype=float), 0.0, 1.0) ** self.power

    def compiled(self) -> np.ndarray | None:
        """For the powers whose ``x ** p`` NumPy computes exactly (1: x, 2: x·x, ½: √x); any
        other goes through NumPy's ``pow``, which the C library's need not match."""
        power = _EXACT_POWERS.get(self.power)
        return None if power is None else np.array([_SMOOTHED, self.rate, power])


#: The compiled forms' codes, and Smoothed's exact powers (the code is the compiled power's).
_DISCOUNTED, _SMOOTHED = 0, 1
_EXACT_POWERS = {1.0: 1.0, 2.0: 2.0, 0.5: 0.5}


@kernel(inline=True)
def initial_impact(form: np.ndarray, state: np.ndarray) -> None:
    """``initial`` for one replication: ``state`` holds K + 1 numbers (the discounted sums and
    their weight, or Smoothed's f, NaN before the first round); ``form`` is
    :meth:`ImpactFunction.compiled`'s."""
    for i in range(state.size):
        state[i] = np.nan if form[0] == _SMOOTHED else 0.0


@kernel(inline=True)
def advance_impact(form: np.ndarray, state: np.ndarray, action: np.ndarray, f: np.ndarray) -> None:
    """``advance`` for one replication, in place: the round's impacts into ``f``."""
    rate = form[1]
    k = action.size
    if form[0] == _DISCOUNTED:
        weight = rate * state[k] + 1.0
        for i in range(k):
            state[i] = rate * state[i] + action[i]
            f[i] = state[i] / weight
        state[k] = weight
        return
    keep = 1.0 - rate
    for i in range(k):
        x = action[i] if action[i] > 0.0 else 0.0  # np.clip(x, 0, 1): min(max(x, 0), 1)
        x = x if x < 1.0 else 1.0
        target = x if form[2] == 1.0 else (x * x if form[2] == 2.0 else math.sqrt(x))
        state[i] = target if np.isnan(state[i]) else rate * state[i] + keep * target
        f[i] = state[i]


def check_convergence(impact: ImpactFunction, groups: int, seed: int = 0) -> None:
    """Probe §5.2's condition: after random warm-ups (lengths 0–20, Dirichlet shares), holding a
    random p for s = 1..30 rounds must give |f_k − g(p_k)| ≤ γ^s (+ ``CONVERGENCE_TOL``), and
    f must stay finite in [0, 1]. Raises a one-line :class:`SpecError` naming ``impact``."""
    rate = getattr(impact, "rate", None)
    if not isinstance(rate, (int, float)) or not 0 <= rate < 1:
        raise SpecError("impact", f"needs a 'rate' γ in [0, 1), got {rate!r}")
    rng = np.random.default_rng(seed)
    replications = 16
    state = impact.initial(replications, groups)
    warm_up = rng.integers(0, 21, replications)
    for t in range(int(warm_up.max())):
        shares = rng.dirichlet(np.ones(groups), replications)
        new_state, _ = impact.advance(state, shares)
        keep = (t < warm_up)[:, None]
        state = _select_rows(new_state, state, keep)
    held = rng.dirichlet(np.ones(groups), replications)
    target = np.asarray(impact.limit(held), dtype=float)
    for s in range(1, 31):
        state, f = impact.advance(state, held)
        f = np.asarray(f, dtype=float)
        if f.shape != held.shape or not np.all(np.isfinite(f)) or np.any((f < 0) | (f > 1)):
            raise SpecError("impact", "f(t) must be finite, within [0, 1], one value per group")
        error = float(np.abs(f - target).max())
        if error > rate**s + CONVERGENCE_TOL:
            raise SpecError(
                "impact",
                f"does not meet §5.2's condition |f(t+s) − g(p)| ≤ γ^s: after holding p for "
                f"s = {s} rounds the gap is {error:.3g} > γ^s = {rate**s:.3g} (γ = {rate})",
            )


def _select_rows(new: Any, old: Any, keep: np.ndarray) -> Any:
    """Per replication, ``new`` where ``keep`` else ``old`` (states may be tuples of arrays)."""
    if isinstance(new, tuple):
        return tuple(_select_rows(a, b, keep) for a, b in zip(new, old, strict=True))
    return np.where(keep, new, old)
