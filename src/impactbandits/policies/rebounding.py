"""Policies for rebounding bandits (Leqi, Kılınç-Karzan, Lipton & Montgomery, NeurIPS 2021).

Model and sources: :mod:`impactbandits.envs.rebounding`; planning:
:mod:`impactbandits.oracles.rebounding`.

- :class:`ReboundingLookahead` — the paper's planning policies with *known* dynamics: greedy
  (``lookahead = 1``: the arm of highest current expected reward, ties to the lowest index) and
  the w-lookahead policy (every ``w`` rounds, the ``w``-arm sequence of highest total expected
  reward, :func:`~impactbandits.oracles.rebounding.plan_block`). It reads ``b, γ, λ`` from
  ``action_space.known`` (a :class:`~impactbandits.envs.rebounding.ReboundingBandit` with
  ``reveal_parameters = True``) and tracks the expected satiation of its own arm sequence
  (``s ← γ (s + 1{pulled})``, noise-free: zero-mean satiation noise does not change the expected
  reward of a plan fixed in advance). Rewards are not looked at.
- :class:`ExploreEstimatePlan` — EEP, for unknown parameters ("pulls arms methodically,
  estimates the system dynamics, and then plans accordingly", abstract). Explore: arm 0 for
  ``m`` consecutive rounds, then arm 1 for ``m``, …, arm K−1. Estimate, per arm, from its ``m``
  consecutive rewards ``y_1 … y_m``: consecutive pulls give the affine recursion
  ``y_{j+1} = γ y_j + (1 − γ) b − γ λ − λ z_j`` (derived from the model: ``s_{j+1} = γ (s_j +
  1) + z_j``), so ordinary least squares of ``y_{j+1}`` on ``(y_j, 1)`` gives ``γ̂`` (clipped to
  [0, 1)) and the intercept ``d̂``; ``b̂ = y_1`` (the first pull meets zero expected satiation);
  ``λ̂ = ((1 − γ̂) b̂ − d̂) / γ̂`` (clipped ≥ 0; 0 when ``γ̂ = 0``, where λ plays no role). Plan:
  the w-lookahead policy with the estimates, from the satiation its exploration left
  (recomputed with ``γ̂``). The paper's exact estimator, exploration length and ``w`` could not
  be read; ``m`` defaults to ``max(3, ⌈T^{2/3} / K⌉)`` (our choice, the usual explore-then-commit
  order, which needs the horizon), ``w`` to 1. With ``count_current`` the first reward is
  ``b − λ``, the effective base that planning needs, so EEP is unchanged.

Both are deterministic (no random draws) and batched: each replication plans with its own
state and estimates. :class:`ReboundingLookahead` has a compiled step
(:func:`lookahead_init`, :func:`lookahead_select`, :func:`lookahead_update`: the same plans,
totals and ties for one replication).
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
from impactbandits.oracles.rebounding import MAX_PLANS, plan_block
from impactbandits.params import WINDOW, Lookahead

__all__ = [
    "ExploreEstimatePlan",
    "ReboundingLookahead",
    "eep_estimates",
    "lookahead_init",
    "lookahead_select",
    "lookahead_update",
]


class _BlockPlanner:
    """Blockwise w-lookahead on per-row parameters ``(R, K)`` and satiation ``(R, K)``."""

    def __init__(self, base: np.ndarray, retention: np.ndarray, influence: np.ndarray, w: int):
        self.base, self.retention, self.influence, self.w = base, retention, influence, w
        self.state = np.zeros_like(base)
        self.plan = np.zeros((base.shape[0], w), dtype=np.int64)
        self.step = w  # position in the current block (w: plan anew)

    def select(self) -> np.ndarray:
        if self.step == self.w:
            self.plan = plan_block(self.base, self.retention, self.influence, self.state, self.w)
            self.step = 0
        actions = self.plan[:, self.step].copy()
        self.step += 1
        return actions

    def record(self, actions: np.ndarray) -> None:
        self.state[np.arange(actions.size), actions] += 1.0
        self.state *= self.retention


class ReboundingLookahead(Policy):
    """Greedy (``lookahead = 1``) or w-lookahead planning with the known dynamics (Leqi et al.
    2021); needs a rebounding bandit with ``reveal_parameters = True``."""

    deterministic = True

    def __init__(self, lookahead: Lookahead = 1) -> None:
        if int(lookahead) < 1:
            raise SpecError("lookahead", "need lookahead >= 1")
        self.lookahead = int(lookahead)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        known = getattr(space, "known", {})
        if not all(name in known for name in ("base", "retention", "influence")):
            raise SpecError(
                "kind",
                "rebounding-lookahead needs b, γ, λ: run it on a rebounding bandit with "
                "reveal_parameters = true",
            )
        rows = rng.size

        def tile(name: str) -> np.ndarray:
            values = np.asarray(known[name], dtype=float).reshape(-1)
            if values.size != space.n:
                raise SpecError(name, f"need one value per arm ({space.n})")
            return np.tile(values, (rows, 1))

        self._planner = _BlockPlanner(
            tile("base"), tile("retention"), tile("influence"), self.lookahead
        )

    def select(self) -> np.ndarray:
        return self._planner.select()

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self._planner.record(actions)

    def compiled_step(self) -> CompiledStep | None:
        """The rounds, one replication at a time (``params``: w, then b, γ, λ per arm);
        ``None`` beyond the planner's limit of plans (the readable form then says so)."""
        planner = self._planner
        if planner.base.shape[1] ** self.lookahead > MAX_PLANS:
            return None
        known = (planner.base[0], planner.retention[0], planner.influence[0])
        params = np.concatenate(([float(self.lookahead)], *known))
        return CompiledStep(lookahead_init, lookahead_select, lookahead_update, params)


@kernel
def lookahead_init(params: np.ndarray, k: int, rounds: int) -> tuple[Any, ...]:
    """The parameters ``(3, K)``, the satiation, the block's plan and its position (``w``:
    plan anew), every ``w``-arm sequence in lexicographic order (``itertools.product``) and a
    scratch satiation for evaluating them."""
    w = int(params[0])
    count = k**w
    known = np.empty((3, k))
    for row in range(3):
        for i in range(k):
            known[row, i] = params[1 + row * k + i]
    plans = np.empty((count, w), dtype=np.int64)
    for p in range(count):
        rest = p
        for j in range(w - 1, -1, -1):  # the last arm varies fastest
            plans[p, j] = rest % k
            rest //= k
    position = np.full(1, w, dtype=np.int64)
    return known, np.zeros(k), np.zeros(w, dtype=np.int64), position, plans, np.empty(k)


@kernel
def lookahead_select(state: Any, params: np.ndarray, t: int, u: float) -> int:
    """The next arm of the block's plan; at a block's start, the plan of highest total
    expected reward from the present satiation (:func:`~impactbandits.oracles.rebounding.
    plan_block`: totals round by round, the first plan on ties)."""
    known, satiation, plan, position, plans, scratch = state
    w = plan.size
    if position[0] == w:
        best, chosen = -np.inf, 0
        for p in range(plans.shape[0]):
            for i in range(satiation.size):
                scratch[i] = satiation[i]
            total = 0.0
            for j in range(w):
                arm = plans[p, j]
                total = total + (known[0, arm] - known[2, arm] * scratch[arm])
                scratch[arm] += 1.0
                for i in range(scratch.size):
                    scratch[i] = scratch[i] * known[1, i]
            if total > best:
                best, chosen = total, p
        for j in range(w):
            plan[j] = plans[chosen, j]
        position[0] = 0
    arm = plan[position[0]]
    position[0] += 1
    return arm


@kernel
def lookahead_update(state: Any, params: np.ndarray, t: int, arm: int, reward: float) -> None:
    """The expected satiation of the arms played: ``s ← γ (s + 1{pulled})``."""
    known, satiation = state[0], state[1]
    satiation[arm] += 1.0
    for i in range(satiation.size):
        satiation[i] *= known[1, i]


def eep_estimates(rewards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(b̂, γ̂, λ̂)`` from consecutive rewards ``(..., m)`` of one arm (``m ≥ 3``), by the
    affine least squares of :class:`ExploreEstimatePlan`; each of shape ``(...)``."""
    y = np.asarray(rewards, dtype=float)
    x, z = y[..., :-1], y[..., 1:]
    xc = x - x.mean(axis=-1, keepdims=True)
    zc = z - z.mean(axis=-1, keepdims=True)
    sxx = (xc * xc).sum(axis=-1)
    sxz = (xc * zc).sum(axis=-1)
    safe = np.where(sxx > 0, sxx, 1.0)
    gamma = np.where(sxx > 0, sxz / safe, 0.0)
    gamma = np.clip(gamma, 0.0, np.nextafter(1.0, 0.0))
    intercept = z.mean(axis=-1) - gamma * x.mean(axis=-1)
    base = y[..., 0]
    positive = np.where(gamma > 0, gamma, 1.0)
    influence = np.where(gamma > 0, ((1.0 - gamma) * base - intercept) / positive, 0.0)
    return base, gamma, np.maximum(influence, 0.0)


class ExploreEstimatePlan(Policy):
    """EEP (Leqi et al. 2021): ``explore`` consecutive pulls of each arm in turn, least-squares
    estimates of ``b, γ, λ``, then w-lookahead planning (``lookahead``, default 1: greedy) with
    the estimates. ``explore = None``: ``max(3, ⌈T^{2/3}/K⌉)`` (needs the horizon)."""

    deterministic = True
    phases = ("explore", "plan")

    def __init__(
        self,
        explore: Annotated[int | None, Field(ge=3), WINDOW] = None,
        lookahead: Lookahead = 1,
    ) -> None:
        if explore is not None and explore < 3:
            raise SpecError("explore", "need at least 3 consecutive pulls per arm")
        if int(lookahead) < 1:
            raise SpecError("lookahead", "need lookahead >= 1")
        self.explore = None if explore is None else int(explore)
        self.lookahead = int(lookahead)

    @property
    def requires_horizon(self) -> bool:
        return self.explore is None

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        k = space.n
        if self.explore is None:
            if horizon is None:
                raise SpecError("explore", "EEP's default exploration length needs the horizon")
            self.m = max(3, math.ceil(horizon ** (2.0 / 3.0) / k))
        else:
            self.m = self.explore
        self.k, self.rows = k, rng.size
        self.t = 0  # rounds selected so far
        self.rewards = np.zeros((self.rows, k, self.m))
        self.planner: _BlockPlanner | None = None

    def current_phase(self) -> np.ndarray:
        planning = self.t > self.k * self.m
        return np.full(self.rows, int(planning), dtype=np.int64)

    def select(self) -> np.ndarray:
        self.t += 1
        if self.planner is None:
            return np.full(self.rows, (self.t - 1) // self.m, dtype=np.int64)
        return self.planner.select()

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        if self.planner is not None:
            self.planner.record(actions)
            return
        arm, j = divmod(self.t - 1, self.m)
        self.rewards[:, arm, j] = feedback.reward
        if self.t == self.k * self.m:
            self._estimate()

    def _estimate(self) -> None:
        base, gamma, influence = eep_estimates(self.rewards)
        planner = _BlockPlanner(base, gamma, influence, self.lookahead)
        for arm in range(self.k):  # the satiation the exploration left, under γ̂
            for _ in range(self.m):
                planner.record(np.full(self.rows, arm, dtype=np.int64))
        self.planner = planner
