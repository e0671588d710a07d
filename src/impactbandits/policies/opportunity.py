"""Policies for reward-opportunity bandits (Ron, Ben-Porat & Shalit 2021).

They read the fairness function f and transfer costs λ from the action space's ``known`` (the
decision-maker's own policy), never the means. All are batched over replications.

* :class:`FairnessAwareETC` — Algorithm 1 with N from Theorem 1;
* :class:`SelfRegulatedUtilityMaximization` — Algorithm 2 (full version: Algorithm 4) with α, β
  of Theorem 2 and any library policy that can restart single replications as the black box;
* :class:`ConstantFairnessElimination` — Algorithm 3 (Appendix B) for constant f.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.construct import validate_params
from impactbandits.core.compiled import CompiledStep, declared_step
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace
from impactbandits.errors import SpecError
from impactbandits.oracles.opportunity import requirements
from impactbandits.oracles.opportunity_fairness import SoftmaxFairness
from impactbandits.params import ROUNDS
from impactbandits.policies.names import build_policy, resolve_policy

__all__ = [
    "ConstantFairnessElimination",
    "FairnessAwareETC",
    "SelfRegulatedUtilityMaximization",
]

#: Confidence radius √(CONFIDENCE_SCALE · ln T / N) (Algorithm 4, Line 16; the fidelity ledger,
#: https://impactbandits.readthedocs.io/en/latest/fidelity/).
CONFIDENCE_SCALE = 2.0
#: Theorem 1: N = ETC_CONSTANT · L^{2/3} T^{2/3} ln^{1/3} T.
ETC_CONSTANT = 8.0


def _fairness_policy(space: ActionSpace, name: str) -> tuple[Any, np.ndarray]:
    known = getattr(space, "known", {})
    if "fairness" not in known or "transfer_cost" not in known:
        raise SpecError(
            "kind",
            f"{name} needs a reward-opportunity environment "
            "(kind 'opportunity') that states the fairness policy",
        )
    return known["fairness"], np.asarray(known["transfer_cost"], dtype=float)


def _horizon(horizon: int | None, name: str) -> int:
    if horizon is None:
        raise SpecError("horizon", f"{name} needs the horizon")
    return horizon


class _Estimates:
    """Per-replication pull counts, sums and the confidence quantities of Algorithm 4."""

    def __init__(self, replications: int, arms: int, horizon: int) -> None:
        self.counts = np.zeros((replications, arms))
        self.sums = np.zeros((replications, arms))
        self.offsets = np.arange(replications) * arms
        self.log_t = math.log(max(horizon, 2))

    def add(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        flat = self.offsets + actions
        self.counts.reshape(-1)[flat] += 1.0
        self.sums.reshape(-1)[flat] += rewards

    def means(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.counts > 0, self.sums / self.counts, 0.0)

    def radius(self) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.sqrt(CONFIDENCE_SCALE * self.log_t / self.counts)

    def gap_bounds(self, authors: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """LCB(Δ_i), UCB(Δ_i) of Algorithm 4, Lines 17–18, clipped to [0, 1].

        ``authors``: the width c_i + c_{j*} (j* the empirical best arm, lowest index on ties)
        of the authors' ``get_deltas_lcb_ucb`` instead of 2c_i; equal while all counts are.
        """
        mu, c = self.means(), self.radius()
        best = np.argmax(mu, axis=1)
        gap = mu[np.arange(mu.shape[0]), best][:, None] - mu
        width = c + c[np.arange(mu.shape[0]), best][:, None] if authors else 2.0 * c
        return np.clip(gap - width, 0.0, 1.0), np.clip(gap + width, 0.0, 1.0)

    def box(self) -> tuple[np.ndarray, np.ndarray]:
        """The hyper-cube C_t of Line 19."""
        mu, c = self.means(), self.radius()
        return np.clip(mu - c, 0.0, 1.0), np.clip(mu + c, 0.0, 1.0)


class FairnessAwareETC(Policy):
    """Fairness-Aware-ETC (Ron et al. 2021, Algorithm 1).

    Pull each arm N times (arm by arm). With μ̂ the empirical means, pull every arm with
    Δ̂_i < λ_i for max(⌊T f(μ̂)_i⌋ − N, 0) further rounds (in arm order), then an arm of
    maximal μ̂ until the end. ``exploration = None`` uses Theorem 1's
    N = ⌈8 L^{2/3} T^{2/3} ln^{1/3} T⌉ with L floored at 1, capped at ⌊T/K⌋. The floor is ours:
    for constant f (L = 0) the formula gives N = 0, yet the proof's clean event needs every
    gap Δ̂_i estimated within 2√(2 ln T / N) — with a single sample per arm the comparison
    Δ̂_i < λ_i is a coin flip (utility ≈ 0.72T instead of 0.75T on the paper's worked example).
    Horizon-aware.
    """

    deterministic = True

    def __init__(self, exploration: Annotated[int | None, Field(gt=0), ROUNDS] = None) -> None:
        self.exploration = exploration

    @property
    def requires_horizon(self) -> bool:
        return True

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        T = _horizon(horizon, "fa-etc")
        self.fairness, self.lam = _fairness_policy(space, "fa-etc")
        self.k, self.T = space.n, T
        if self.exploration is None:
            L = max(self.fairness.lipschitz, 1.0)
            tuned = math.ceil(ETC_CONSTANT * L ** (2 / 3) * T ** (2 / 3) * math.log(T) ** (1 / 3))
        else:
            tuned = int(self.exploration)
        self.N = max(1, min(tuned, T // self.k))
        self.estimates = _Estimates(rng.size, space.n, T)
        self.t = 0
        self._schedule: np.ndarray | None = None

    def select(self) -> np.ndarray:
        self.t += 1
        size = self.estimates.counts.shape[0]
        if self.t <= self.N * self.k:
            return np.full(size, (self.t - 1) // self.N, dtype=np.int64)
        if self._schedule is None:
            mu = self.estimates.means()
            gap = mu.max(axis=1, keepdims=True) - mu
            extra = np.where(
                gap < self.lam, np.maximum(requirements(self.fairness(mu), self.T) - self.N, 0), 0
            )
            self._schedule = np.cumsum(extra, axis=1)
            self._best = np.argmax(mu, axis=1)
        step = self.t - self.N * self.k - 1
        arm = (self._schedule <= step).sum(axis=1)
        return np.where(arm < self.k, arm, self._best)

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.estimates.add(actions, feedback.reward)


class SelfRegulatedUtilityMaximization(Policy):
    """Self-regulated Utility Maximization, SRUM (Ron et al. 2021, Algorithm 2; full
    version Algorithm 4).

    Phase 1 — while some arm j has UCB(Δ_j) > λ_j + β and LCB(Δ_j) < λ_j − β: pull all arms once.
    Phase 2 — while some arm j has max_{μ'∈C_t} f(μ')_j − min_{μ'∈C_t} f(μ')_j > α and
    LCB(Δ_j) < λ_j: pull all arms once. Phase 3 — every arm with LCB(Δ_i) < λ_i is pulled until
    N_i ≥ ⌊T f(μ̂)_i⌋ (μ̂ frozen when phase 3 starts; arms in index order). Phase 4 — the
    black-box algorithm, started afresh, for the remaining rounds.

    Confidence radius c_i = √(2 ln T / N_i); LCB/UCB(Δ_i) = μ̂_{j*} − μ̂_i ∓ 2c_i clipped to
    [0, 1]; C_t = Π [μ̂_i − c_i, μ̂_i + c_i] ∩ [0, 1]. Defaults (Theorem 2):
    α = K^{2/3} L^{2/3} T^{−1/3} ln^{1/3} T, β = T^{−1/3} ln^{1/3} T, black box UCB1, started
    afresh in phase 4 ("invoke ALG for the remaining rounds", Line 39). L is the fairness
    function's ℓ1 Lipschitz constant (§2: 1/K for f_lin, c/2 for f_sft).
    ``alpha_rule = "authors-code"`` uses α = K·L^{2/3} T^{−1/3} ln^{1/3} T as the authors' code
    did (the fidelity ledger, https://impactbandits.readthedocs.io/en/latest/fidelity/). The
    range oracle is the fairness function's own (exact for softmax and monotone Cartesian f).
    Horizon-aware; reports phases 1–4.

    ``variant = "authors-code"`` reproduces every behaviour of the authors' code
    (tomron/CSRviaMAB@cb90260, ``BlackBoxAlgorithm.runSimulation``) that differs from the
    paper: α with K instead of K^{2/3} (implies ``alpha_rule = "authors-code"``) and
    L = c for f_sft (their ``TempSoftmax.get_l``); phase 1 skipped when λ = 0 and its test
    LCB(Δ_j) ≤ max(0, λ − β) and UCB(Δ_j) ≥ min(1, λ + β); phase 2's test range ≥ α; gap
    bounds of width c_i + c_{j*}; and the black box *not* restarted in phase 4 — it keeps every
    pull of phases 1–3 — with UCB1 as their ``ucb1`` (``variant = "authors-code"`` of
    :class:`~impactbandits.policies.classic.UCB1`: index capped at 1, ln T, lowest index on
    ties) unless ``black_box_params`` say otherwise. Their penalty with μ̂ is the
    environment's option (``opportunity``'s ``variant = "authors-code"``).

    Implementation notes: conditions are evaluated after every full cycle of pulls, per
    replication; the black box sees every round (so its random draws stay in lockstep across
    replications) and, in the paper variant, is restarted per replication (``reset_rows``) when
    phase 4 begins, so it only learns from phase-4 rounds. With UCB1 (either variant) as the
    black box and a fairness function with a compiled form, both variants run in the compiled
    loop (:meth:`compiled_step`, :mod:`impactbandits.policies.opportunity_srum`) with the same
    numbers; so does any black box whose compiled step draws nothing.
    """

    phases = ("1", "2", "3", "4")

    def __init__(
        self,
        black_box: str = "ucb1",
        black_box_params: dict[str, Any] | None = None,
        alpha: Annotated[float | None, Field(ge=0.0)] = None,
        beta: Annotated[float | None, Field(ge=0.0)] = None,
        alpha_rule: Literal["paper", "authors-code"] = "paper",
        variant: Literal["paper", "authors-code"] = "paper",
    ) -> None:
        from impactbandits.policies.classic import UCB1

        given = dict(black_box_params or {})
        if variant == "authors-code" and black_box == "ucb1":
            given.setdefault("variant", "authors-code")
        params = validate_params(resolve_policy(black_box, "black_box"), given, "black_box_params")
        self.black_box, self.black_box_params = black_box, params
        self._inner = build_policy(black_box, params)
        # UCB1's authors-code variant needs only ln T of SRUM's own horizon, which is known
        if self._inner.requires_horizon and not isinstance(self._inner, UCB1):
            raise SpecError(
                "black_box",
                f"{black_box!r} needs a horizon; SRUM invokes the black "
                "box for an unknown remainder: choose an anytime policy (e.g. ucb1)",
            )
        if type(self._inner).reset_rows is Policy.reset_rows:
            raise SpecError(
                "black_box",
                f"{black_box!r} cannot be restarted per replication; "
                "allowed: ucb1, greedy, epsilon-greedy, exp3 (fixed gamma), "
                "round-robin",
            )
        self.alpha, self.beta, self.alpha_rule, self.variant = alpha, beta, alpha_rule, variant
        self._authors = variant == "authors-code"

    @property
    def requires_horizon(self) -> bool:
        return True

    @property
    def deterministic(self) -> bool:
        """Deterministic when the black box it runs is (it draws nothing itself)."""
        return bool(self._inner.deterministic)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        T = _horizon(horizon, "srum")
        self.fairness, self.lam = _fairness_policy(space, "srum")
        k = self.k = space.n
        self.T = T
        log_term = math.log(T) ** (1 / 3) * T ** (-1 / 3)
        L = self.fairness.lipschitz
        if self._authors and isinstance(self.fairness, SoftmaxFairness):
            L = abs(self.fairness.c)  # their TempSoftmax.get_l() = 1/temp
        k_factor = k if self.alpha_rule == "authors-code" or self._authors else k ** (2 / 3)
        self._alpha = self.alpha if self.alpha is not None else k_factor * L ** (2 / 3) * log_term
        self._beta = self.beta if self.beta is not None else log_term
        size = rng.size
        self.estimates = _Estimates(size, k, T)
        self.phase = np.zeros(size, dtype=np.int64)  # 0..3 for phases 1..4
        self.cycle = np.zeros(size, dtype=np.int64)
        self.targets = np.zeros((size, k))
        inner_horizon = T if self._inner.requires_horizon else None
        self._inner.reset(space, inner_horizon, rng.spawn())
        self._rows = np.ones(size, dtype=bool)
        self._advance(self._rows, initial=True)

    def _advance(self, rows: np.ndarray, initial: bool = False) -> None:
        """Re-evaluate the phase conditions for ``rows`` at the end of a cycle."""
        if initial:
            lcb = np.zeros_like(self.targets)
            ucb = np.ones_like(self.targets)
            lower, upper = np.zeros_like(self.targets), np.ones_like(self.targets)
        else:
            lcb, ucb = self.estimates.gap_bounds(self._authors)
            lower, upper = self.estimates.box()
        lam = self.lam
        if self._authors:  # approx_delta: skipped for λ = 0, clipped bounds, non-strict
            near = (lcb <= np.maximum(0.0, lam - self._beta)) & (
                ucb >= np.minimum(1.0, lam + self._beta)
            )
            stay1 = (near & (lam > 0)).any(axis=1)
            variable = self.fairness.range(lower, upper) >= self._alpha
        else:
            stay1 = ((ucb > lam + self._beta) & (lcb < lam - self._beta)).any(axis=1)
            variable = self.fairness.range(lower, upper) > self._alpha
        stay2 = (variable & (lcb < lam)).any(axis=1)
        in1 = rows & (self.phase == 0)
        in2 = rows & (self.phase == 1)
        to2 = in1 & ~stay1 & stay2
        to3 = (in1 & ~stay1 & ~stay2) | (in2 & ~stay2)
        self.phase[to2] = 1
        if to3.any():
            mu = self.estimates.means()
            need = np.where(lcb < lam, requirements(self.fairness(mu), self.T), 0.0)
            self.targets[to3] = need[to3]
            self.phase[to3] = 2
            self._finish_phase3(to3)

    def _finish_phase3(self, rows: np.ndarray) -> None:
        done = rows & (self.phase == 2) & ~(self.estimates.counts < self.targets).any(axis=1)
        if done.any():
            self.phase[done] = 3
            if not self._authors:  # the authors' UCB1 keeps the pulls of phases 1-3
                self._inner.reset_rows(done)

    def select(self) -> np.ndarray:
        inner = self._inner.select()  # every round, for lockstep randomness
        deficit_arm = np.argmax(self.estimates.counts < self.targets, axis=1)
        return np.where(self.phase <= 1, self.cycle, np.where(self.phase == 2, deficit_arm, inner))

    def current_phase(self) -> np.ndarray:
        return self.phase.copy()

    def compiled_step(self) -> CompiledStep | None:
        """The rounds of one replication (:mod:`~impactbandits.policies.opportunity_srum`, both
        variants), with the black box's compiled step and the fairness function's compiled
        form bound into it, or ``None``: a black box without a compiled step, or one that draws
        (its draws would come from another stream), or a fairness function without a compiled
        form (:meth:`~impactbandits.oracles.opportunity_fairness.FairnessFunction.
        compiled_fairness`)."""
        from impactbandits.policies import opportunity_srum as srum

        declared = declared_step(self._inner)
        inner = None if declared is None or self._inner.phases else declared()
        if not isinstance(inner, CompiledStep) or inner.draws or inner.stream or inner.bound:
            return None
        declared = declared_step(self.fairness, "compiled_fairness", ("__call__", "range"))
        fairness = None if declared is None else declared()
        same = np.all(self.phase == self.phase[0]) and np.all(self.targets == self.targets[0])
        if fairness is None or not same:  # (reset starts every replication alike)
            return None
        params = srum.srum_params(
            float(self._alpha),
            float(self._beta),
            CONFIDENCE_SCALE * self.estimates.log_t,
            int(self.T),
            self._authors,
            int(self.phase[0]),
            np.ascontiguousarray(np.broadcast_to(self.lam, (self.k,)), dtype=np.float64),
            np.ascontiguousarray(self.targets[0], dtype=np.float64),
            np.ascontiguousarray(fairness.params, dtype=np.float64),
            inner.params,
        )
        bound = (
            ("inner_init", inner.init),
            ("inner_select", inner.select),
            ("inner_update", inner.update),
            ("fairness_value", fairness.value),
            ("fairness_range", fairness.range),
        )
        blame = [(name, "black_box") for name, _ in bound[:3]]
        blame += [(name, "fairness") for name, _ in bound[3:]]
        return CompiledStep(srum.srum_init, srum.srum_select, srum.srum_update, params,
                            phase=srum.srum_phase, bound=bound, blame=tuple(blame))  # fmt: skip

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.estimates.add(actions, feedback.reward)
        self._inner.update(actions, feedback)
        cycling = self.phase <= 1
        if cycling.any():
            self.cycle[cycling] += 1
            ended = cycling & (self.cycle == self.k)
            if ended.any():
                self.cycle[ended] = 0
                self._advance(ended)
        self._finish_phase3(self.phase == 2)


class ConstantFairnessElimination(Policy):
    """Algorithm 3 of Ron et al. (2021, Appendix B) for constant fairness functions
    f(μ)_i = γ_i, a variation of Successive Elimination. The paper describes it in words; as
    implemented::

        A ← all arms;  R_i ← ⌊T γ_i⌋
        while A ≠ ∅:                                   # phase 1
            pull every arm of A once (index order)
            c_i ← √(2 ln T / N_i);  LCB(Δ_i) ← max_j (μ̂_j − c_j) − (μ̂_i + c_i)
            remove from A every i with N_i ≥ R_i        (its opportunities are granted)
                          or LCB(Δ_i) > λ_i             (surely cheaper to pay λ_i)
        invoke the black box (UCB1) afresh for the remaining rounds   # phase 2

    Regret O(max{√(KT ln T), R(ALG)}) (Proposition 4). Horizon-aware; reports phases 1–2.
    """

    phases = ("1", "2")

    def __init__(self, black_box: str = "ucb1") -> None:
        self._inner = build_policy(black_box, {})
        if type(self._inner).reset_rows is Policy.reset_rows or self._inner.requires_horizon:
            raise SpecError("black_box", f"{black_box!r} cannot be restarted per replication")
        self.black_box = black_box

    @property
    def requires_horizon(self) -> bool:
        return True

    @property
    def deterministic(self) -> bool:
        """Deterministic when the black box it runs is (it draws nothing itself)."""
        return bool(self._inner.deterministic)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        T = _horizon(horizon, "const-elimination")
        fairness, self.lam = _fairness_policy(space, "const-elimination")
        if not getattr(fairness, "constant", False):
            raise SpecError(
                "kind", "const-elimination needs a constant fairness function (zero or uniform)"
            )
        self.k, self.T = space.n, T
        self.required = requirements(fairness(np.zeros(space.n)), T)
        size = rng.size
        self.estimates = _Estimates(size, space.n, T)
        self.active = np.broadcast_to(self.required > 0, (size, space.n)).copy()
        self.pointer = np.zeros(size, dtype=np.int64)
        self._inner.reset(space, None, rng.spawn())
        self.phase = np.where(self.active.any(axis=1), 0, 1)
        self._arange = np.arange(space.n)

    def _next_active(self) -> np.ndarray:
        """First active arm at or after the pointer (``k`` if none)."""
        candidates = self.active & (self._arange >= self.pointer[:, None])
        return np.where(candidates.any(axis=1), np.argmax(candidates, axis=1), self.k)

    def select(self) -> np.ndarray:
        inner = self._inner.select()
        arm = self._next_active()
        return np.where(self.phase == 0, np.minimum(arm, self.k - 1), inner)

    def current_phase(self) -> np.ndarray:
        return self.phase.copy()

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self.estimates.add(actions, feedback.reward)
        self._inner.update(actions, feedback)
        eliminating = self.phase == 0
        self.pointer[eliminating] = actions[eliminating] + 1
        ended = eliminating & (self._next_active() == self.k)
        if ended.any():
            mu, c = self.estimates.means(), self.estimates.radius()
            best_lower = np.where(self.estimates.counts > 0, mu - c, -np.inf).max(axis=1)
            lcb_gap = best_lower[:, None] - (mu + c)
            remove = (self.estimates.counts >= self.required) | (lcb_gap > self.lam)
            self.active[ended] &= ~remove[ended]
            self.pointer[ended] = 0
            finished = ended & ~self.active.any(axis=1)
            if finished.any():
                self.phase[finished] = 1
                self._inner.reset_rows(finished)
