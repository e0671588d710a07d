"""The graph of delay vectors: the finite state space of delay-dependent payoffs.

Paper: Cella & Cesa-Bianchi, "Stochastic Bandits with Delay-Dependent Payoffs", AISTATS 2020,
Section 3 (the paragraph after the objective). Only the delays ``d_i`` matter here, never the
means or ``f``: the same states serve any payoff that depends on the rounds since each arm's
last pull, capped at ``d_i``.

The state is the delay vector ``τ = (τ_1, …, τ_k)`` with ``0 ≤ τ_i ≤ d_i``: ``τ_i`` is the number
of rounds since arm ``i`` was last pulled, set to 0 if it was never pulled or was last pulled
more than ``d_i`` rounds ago. The initial state is all zeros. Pulling arm ``a`` in state ``τ``
moves to ``τ'`` with

    τ'_a = 1 if d_a ≥ 1 else 0;      for j ≠ a:  τ'_j = τ_j + 1 if 0 < τ_j < d_j else 0.

:func:`delay_states` lists the reachable delay vectors (breadth-first, vectorised, states coded
as int64 sums: :func:`_code_table`); :func:`delay_state_graph` adds the successor of every
(state, arm) pair, ready for a :class:`~impactbandits.oracles.mean_cycle.CycleGraph` once the
caller attaches rewards (as :func:`impactbandits.oracles.delay.optimal_value` does). Moved
unchanged from ``impactbandits.oracles.delay``, which re-exports the public names.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from impactbandits.errors import SpecError

__all__ = ["MAX_DELAY_EDGES", "MAX_DELAY_STATES", "delay_state_graph", "delay_states"]

MAX_DELAY_STATES = 1_000_000
"""Most reachable delay vectors :func:`delay_states`, :func:`delay_state_graph` (hence
:func:`impactbandits.oracles.delay.optimal_value`) agree to build."""

MAX_DELAY_EDGES = 10_000_000
"""Most (state, arm) pairs they agree to build (peak memory of
:func:`impactbandits.oracles.delay.optimal_value` ~65 bytes each)."""

_MAX_CODE = 1 << 62
"""State codes are int64 sums; encodings whose largest code exceeds this are not used."""


def _as_delays(delays: Any, n_arms: int | None = None) -> np.ndarray:
    raw = np.asarray(delays)
    if raw.ndim != 1 or raw.size < 1:
        raise SpecError("delays", f"need a 1-D array with ≥ 1 arm, got shape {raw.shape}")
    if raw.dtype.kind not in "iuf" or (raw.dtype.kind == "f" and not np.all(np.isfinite(raw))):
        raise SpecError("delays", f"must be nonnegative integers; got {raw.tolist()}")
    array = raw.astype(np.int64)
    if np.any(array != raw) or np.any(array < 0):
        raise SpecError("delays", f"must be nonnegative integers; got {raw.tolist()}")
    if n_arms is not None and array.size != n_arms:
        raise SpecError("delays", f"need one delay per arm ({n_arms}); got {array.size}")
    return array


def _code_table(delays: np.ndarray) -> np.ndarray:
    """``C (k, D+1)`` with ``code(τ) = Σ_i C[i, τ_i]``, injective on reachable delay vectors.

    Mixed radix (``C[i, τ] = τ·Π_{j<i}(d_j+1)``) when ``Π(d_i+1)`` fits, else "slots"
    (``C[i, τ] = (i+1)(k+1)^(τ−1)``: arms with ``τ_i > 0`` have distinct ``τ_i`` in any reachable
    state, since one arm is pulled per round).
    """
    k, depth = delays.size, int(delays.max())
    taus = np.arange(depth + 1, dtype=np.int64)
    if math.prod(int(d) + 1 for d in delays) <= _MAX_CODE:
        strides = np.cumprod(np.concatenate(([1], delays[:-1] + 1)))
        return strides[:, None] * taus[None, :]
    if (k + 1) ** depth <= _MAX_CODE:
        powers = np.concatenate(([0], (k + 1) ** np.arange(depth, dtype=np.int64)))
        return np.arange(1, k + 1, dtype=np.int64)[:, None] * powers[None, :]
    raise SpecError("delays", "too many arms and too long delays to enumerate delay states")


def _advance(states: np.ndarray, delays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(aged, fresh)``: every non-pulled arm's next delay, and the pulled arm's (1 or 0)."""
    aged = np.where((states > 0) & (states < delays), states + 1, 0).astype(states.dtype)
    fresh = (delays >= 1).astype(states.dtype)
    return aged, fresh


def _successor_codes(
    states: np.ndarray, delays: np.ndarray, table: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes of the successors ``(n, k)`` of ``states`` (pulled arm on axis 1), by updating
    the pulled arm's term of the code; also returns :func:`_advance`'s ``(aged, fresh)``."""
    aged, fresh = _advance(states, delays)
    arms = np.arange(delays.size)
    aged_codes = table[arms, aged].sum(axis=1)
    succ = aged_codes[:, None] - table[arms, aged] + table[arms, fresh][None, :]
    return succ, aged, fresh


def delay_states(delays: Any) -> np.ndarray:
    """All delay vectors reachable from the all-zero state, shape ``(n, k)``.

    Breadth-first search; after ``max_i d_i`` rounds a state is a function of the last
    ``max_i d_i`` pulls, so there are at most ``max_i d_i + 1`` levels. Much smaller than
    ``Π(d_i + 1)``: nonzero entries of a reachable state are distinct, so there are at most
    ``Σ_j C(D, j)·k!/(k−j)!`` of them (``D = max d_i``); e.g. 7 arms with ``d_i = 6``: 28,358
    states (bound 37,633) instead of 823,543.
    Refused beyond :data:`MAX_DELAY_STATES` states.
    """
    return _delay_graph_states(_as_delays(delays))[0]


def _delay_graph_states(delays: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k = delays.size
    table = _code_table(delays)
    dtype = np.int16 if delays.max() < np.iinfo(np.int16).max else np.int32
    frontier = np.zeros((1, k), dtype=dtype)
    frontier_codes = np.zeros(1, dtype=np.int64)
    blocks, code_blocks = [frontier], [frontier_codes]
    seen = frontier_codes.copy()
    total = 1
    while frontier.shape[0]:
        succ, aged, fresh = _successor_codes(frontier, delays, table)
        flat = succ.ravel()
        new_codes, first = np.unique(flat, return_index=True)
        keep = ~np.isin(new_codes, seen, assume_unique=True)
        new_codes, first = new_codes[keep], first[keep]
        rows, arms = np.divmod(first, k)
        frontier = aged[rows]
        frontier[np.arange(rows.size), arms] = fresh[arms]
        frontier_codes = new_codes
        total += rows.size
        if total > MAX_DELAY_STATES or total * k > MAX_DELAY_EDGES:
            raise SpecError(
                "delays",
                f"more than {min(MAX_DELAY_STATES, MAX_DELAY_EDGES // k)} reachable delay "
                f"states with {k} arms (limits: {MAX_DELAY_STATES} states, {MAX_DELAY_EDGES} "
                "state-arm pairs); the exact optimum is NP-hard (Theorem 1)",
            )
        blocks.append(frontier)
        code_blocks.append(frontier_codes)
        seen = np.union1d(seen, new_codes)
    codes = np.concatenate(code_blocks)
    order = np.argsort(codes)
    return np.concatenate(blocks)[order], codes[order], table


def delay_state_graph(delays: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """``(states, succ, start)``: the reachable delay vectors and their transitions.

    ``states (n, k)`` are the rows of :func:`delay_states` (sorted by code), ``succ (n, k)``
    (int32) the index of the state reached by pulling each arm, ``start`` the index of the
    all-zero state. Same limits as :func:`delay_states`.
    """
    lags = _as_delays(delays)
    states, codes, table = _delay_graph_states(lags)
    succ_codes, _, _ = _successor_codes(states, lags, table)
    succ = np.searchsorted(codes, succ_codes).astype(np.int32)  # n ≤ MAX_DELAY_STATES < 2^31
    start = int(np.searchsorted(codes, 0))
    return states, succ, start
