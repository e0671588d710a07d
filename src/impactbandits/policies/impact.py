"""Policies for Tang, Ho & Liu (2021): learners over meta-arms (probability vectors).

* :class:`ActionDependentUCB` — Algorithm 1 (γ = 0 setting);
* :class:`HistoryDependentUCB` — the reduction template (Algorithm 2) with Algorithm 3;
* :class:`OneHot` — any library policy over the K base arms, acting on the simplex by playing
  the one-hot meta-arm of its chosen arm (the paper's UCB1 / EXP3 / D-UCB / SW-UCB baselines:
  "a pull = a one-hot meta-arm"). With one-hot vectors only the chosen group can be activated,
  so the round's reward is that group's reward.

The paper's baselines over the discretized arms and the meta-arms (CUCB, EXP3 over meta-arms)
are in :mod:`impactbandits.policies.impact_baselines`; they share the grid learners' sums,
counts and compiled kernels defined here.

Each declares its compiled form beside its readable one (``compiled_step``, a
:class:`~impactbandits.core.compiled.CompiledStep` over probability vectors,
:attr:`~impactbandits.core.compiled.CompiledStep.simplex`), which the compiled loop plays in the
delayed-impact world with the same numbers, bit for bit.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import CompiledStep, declared_step, kernel
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy, SimplePolicy
from impactbandits.core.random import BatchRNG
from impactbandits.core.spaces import ActionSpace, Discrete
from impactbandits.errors import SpecError
from impactbandits.oracles.simplex import composition_table
from impactbandits.params import RESOLUTION
from impactbandits.policies.impact_argmax import pinning_argmax, table_argmax

__all__ = [
    "ActionDependentUCB",
    "HistoryDependentUCB",
    "OneHot",
    "theory_resolution",
]


# the inner step's kernels, bound by the compiled loop (CompiledStep.bound); never called here
inner_select: Any = None
inner_update: Any = None


class OneHot(Policy):
    """Run the discrete policy ``base`` (with ``base_params``) over the groups as base arms."""

    action_kinds = ("simplex",)

    def __init__(self, base: str = "ucb1", base_params: dict[str, Any] | None = None) -> None:
        from impactbandits.construct import validate_params
        from impactbandits.policies.names import build_policy, resolve_policy

        params = validate_params(resolve_policy(base, "base"), base_params or {}, "base_params")
        self.base, self.base_params = base, params
        self._inner = build_policy(base, params)
        if "discrete" not in self._inner.action_kinds:
            raise SpecError("base", f"{base!r} does not play discrete arms")

    @property
    def requires_horizon(self) -> bool:
        return self._inner.requires_horizon

    @property
    def deterministic(self) -> bool:
        """Deterministic when the base policy it runs is (it draws nothing itself)."""
        return bool(self._inner.deterministic)

    def reset(self, space: ActionSpace, horizon: int | None, rng: BatchRNG) -> None:
        self.k = space.n
        self._inner.reset(Discrete(space.n), horizon, rng)
        self._eye = np.eye(space.n)

    def select(self) -> np.ndarray:
        self._arms = self._inner.select()
        return self._eye[self._arms]

    def update(self, actions: np.ndarray, feedback: Feedback) -> None:
        self._inner.update(self._arms, Feedback(feedback.reward))

    def compiled_step(self) -> CompiledStep | None:
        """The base policy's compiled step (if it declares one and has no phases), played on
        one-hot meta-arms: it draws what the base draws, from the same stream."""
        declared = declared_step(self._inner)
        inner = None if declared is None or self._inner.phases else declared()
        if not isinstance(inner, CompiledStep):
            return None
        outer = CompiledStep(
            inner.init,
            _one_hot_select,
            _one_hot_update,
            inner.params,
            inner.draws,
            inner.stream,
            inner.first_draw,
            simplex=True,
            bound=(("inner_select", inner.select), ("inner_update", inner.update)),
            blame=(("inner_select", "base"), ("inner_update", "base")),
        )
        return outer


@kernel(inline=True)
def _one_hot_select(state: Any, params: np.ndarray, t: int, u: float, action: np.ndarray) -> int:
    """The base's arm and its one-hot meta-arm (a row of the identity)."""
    arm = inner_select(state, params, t, u)
    for i in range(action.size):
        action[i] = 1.0 if i == arm else 0.0
    return arm


@kernel(inline=True)
def _one_hot_update(
    state: Any, params: np.ndarray, t: int, action: np.ndarray, observed: np.ndarray, reward: float
) -> None:
    """The base learns the round's reward for the arm of the one-hot meta-arm."""
    arm = 0
    for i in range(action.size):
        if action[i] == 1.0:
            arm = i
    inner_update(state, params, t, arm, reward)


def theory_resolution(horizon: int, eta: float = 1.0) -> int:
    """1/ε with ε = (ln(ηT)/(ηT))^{1/3} (Theorems 4.2 and 5.1; η = 1 for Algorithm 1),
    rounded up so that 1/ε is an integer."""
    n = max(eta * horizon, 3.0)
    return max(1, math.ceil((n / math.log(n)) ** (1 / 3)))


def _importance_weighted(feedback: Feedback, p: np.ndarray, mode: str) -> np.ndarray:
    """Eq. (5): r_t/p_k for activated groups, 0 otherwise (allocation mode: r_t as observed)."""
    observed = np.asarray(feedback.observed, dtype=float)
    if mode == "allocation":
        return np.nan_to_num(observed)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(observed), 0.0, observed / p)


#: The learners scan a precomputed table of the grid's meta-arms up to this multiple of
#: ``ENUMERATION_LIMIT`` meta-arms (measured: K = 5, 1/ε = 20, 3,876 meta-arms: table 0.9 ms,
#: pinning DP 1.8 ms per decision; 23,751 meta-arms: 6.5 ms vs 1.4 ms).
TABLE_LIMIT = 5


class _GridLearner(SimplePolicy):
    """Per discretized arm (group k, level j: p_k = j/M, j = 1..M) sums and counts."""

    action_kinds = ("simplex",)

    def __init__(self, resolution: Annotated[int | None, Field(gt=0), RESOLUTION] = None) -> None:
        self.resolution = resolution

    @property
    def requires_horizon(self) -> bool:
        return self.resolution is None

    def _setup(self, space: ActionSpace, horizon: int | None, eta: float = 1.0) -> None:
        self.k = space.n
        fixed = getattr(space, "resolution", None)
        if fixed is not None and self.resolution is not None and fixed % self.resolution:
            raise SpecError(
                "resolution",
                f"1/ε = {self.resolution} does not divide the environment's grid 1/ε = {fixed}",
            )
        if self.resolution is not None:
            self.M = int(self.resolution)
        elif fixed is not None:
            self.M = int(fixed)  # the environment fixes the ε-grid
        elif horizon is None:
            raise SpecError("resolution", "give 1/ε or a horizon to derive it from")
        else:
            self.M = theory_resolution(horizon, eta)
        self.M = max(self.M, self.k)  # positive parts need 1/ε ≥ K
        self.mode = space.known.get("feedback", "independent")
        self.sums = np.zeros((self.k, self.M))
        self.counts = np.zeros((self.k, self.M))
        self.levels = np.arange(1, self.M + 1) / self.M
        self.rows = np.arange(self.k)
        from impactbandits.oracles.simplex import compositions
        from impactbandits.policies.impact_index import ENUMERATION_LIMIT

        small = math.comb(self.M - 1, self.k - 1) <= TABLE_LIMIT * ENUMERATION_LIMIT
        self._table = compositions(self.k, self.M) if small else None

    def _maximise(self, bonus: Any) -> np.ndarray:
        """Exact argmax of Σ_k jε·r̄(k, j) + bonus(min count) over the ε-grid (0-based levels)."""
        from impactbandits.policies.impact_index import enumerate_index, maximise_index

        scores = self.levels * self._means()
        if self._table is not None:
            levels, _ = enumerate_index(self._table, scores, self.counts, bonus)
        else:
            levels, _ = maximise_index(scores, self.counts, bonus)
        return np.asarray(levels, dtype=np.int64) - 1

    def _means(self) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.counts > 0, self.sums / self.counts, 0.0)

    def _record(self, chosen: np.ndarray, feedback: Feedback) -> None:
        p = (chosen + 1) / self.M
        self.sums[self.rows, chosen] += _importance_weighted(feedback, p, self.mode)
        self.counts[self.rows, chosen] += 1.0

    def _params(
        self, s_a: int = 0, length: int = 1, err: float = 0.0, scale: float = 0.0, bonus: int = 0
    ) -> np.ndarray | None:
        """The compiled steps' parameters (the ``_P_*`` positions), or ``None`` for a feedback
        mode they do not know."""
        mode = _MODES.get(self.mode)
        if mode is None:
            return None
        table = float(self._table is not None)
        unplayed = float(getattr(self, "UNPLAYED", 0.0))  # CUCB's value of an unplayed arm
        params = [self.M, mode, s_a, length, err, scale, table, bonus, unplayed]
        return np.array(params, dtype=float)

    def _ucb_step(self, s_a: int, length: int, err: float, scale: float) -> CompiledStep | None:
        params = self._params(s_a, length, err, scale)
        return None if params is None else CompiledStep(*_UCB, params, simplex=True)


class ActionDependentUCB(_GridLearner):
    """Action-Dependent UCB (Tang et al. 2021, Algorithm 1).

    Discretise each group's share into levels ε, 2ε, …, 1 (ε = 1/``resolution``; default from
    Theorem 4.2, ε = (ln T/T)^{1/3}, horizon-aware). Every round, play
    ``argmax_p Σ_k p_k r̄(p_k) + √(K ln t / min_k n(p_k))`` (Eq. 6) over the ε-grid of the simplex
    — maximised exactly by :func:`~impactbandits.policies.impact_index.maximise_index` without
    enumerating the compositions (grids of at most ``TABLE_LIMIT·ENUMERATION_LIMIT`` = 5,000
    meta-arms, e.g. every K = 2 grid, are scanned from a table made once per run: faster there)
    — and update every discretized arm of p with the importance-weighted reward of Eq. (5).
    Discretized arms never played have an infinite bonus, which realises the paper's
    initialisation (each is played once first).
    """

    deterministic = True

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self._setup(space, horizon)
        self.t = 0

    def select(self) -> np.ndarray:
        self.t += 1
        log_t = math.log(max(self.t, 2))
        k = self.k

        def bonus(c: np.ndarray) -> np.ndarray:
            return np.sqrt(k * log_t / np.asarray(c, dtype=float))

        self.chosen = self._maximise(bonus)
        return (self.chosen + 1) / self.M

    def update(self, action: Any, feedback: Feedback) -> None:
        self._record(self.chosen, feedback)

    def compiled_step(self) -> CompiledStep | None:
        """HD-UCB's kernels with L = 1, s_a = 0, err = 0 and bonus √(K ln t / c)."""
        return self._ucb_step(0, 1, 0.0, float(self.k))


class HistoryDependentUCB(_GridLearner):
    """The reduction template (Tang et al. 2021, Algorithm 2) with History-Dependent UCB
    (Algorithm 3).

    Rounds are split into phases of L = ⌈s_a/(1 − η)⌉ rounds with the same meta-arm: an
    approaching stage of s_a = ⌈ln(η^{1/3}/K)/ln γ⌉ rounds (f moves towards p) and an estimation
    stage of L − s_a rounds whose importance-weighted rewards update the estimates. At the end of
    each phase the next meta-arm maximises U_est(p) + err + √(3K ln t / min_k n_est(p_k)) with
    err = K γ^{s_a}(L + 1) (a constant: it does not change the argmax). Defaults (Theorem 5.1):
    η = 0.5, ε = (ln(ηT)/(ηT))^{1/3}; γ as the environment states it (``known``) unless given.
    For γ = 0, s_a = 0 and L = 1 (Algorithm 1 with every round estimated).
    """

    deterministic = True

    def __init__(
        self,
        resolution: Annotated[int | None, Field(gt=0), RESOLUTION] = None,
        eta: Annotated[float, Field(gt=0.0, lt=1.0)] = 0.5,
        gamma: Annotated[float | None, Field(ge=0.0, lt=1.0)] = None,
    ) -> None:
        super().__init__(resolution)
        if not 0 < eta < 1:
            raise SpecError("eta", f"must be in (0, 1), got {eta}")
        self.eta, self.gamma = float(eta), gamma

    def reset(self, space: ActionSpace, horizon: int | None, rng: np.random.Generator) -> None:
        self._setup(space, horizon, self.eta)
        gamma = self.gamma if self.gamma is not None else float(space.known.get("gamma", 0.0))
        if gamma > 0:
            self.s_a = max(1, math.ceil(math.log(self.eta ** (1 / 3) / self.k) / math.log(gamma)))
        else:
            self.s_a = 0
        # L = ⌈s_a/(1 − η)⌉; rounded first so that float error (1/(1 − 0.8) = 5.000000000000001)
        # does not add a round
        self.L = max(self.s_a + 1, math.ceil(round(self.s_a / (1.0 - self.eta), 9)))
        self.err = self.k * gamma**self.s_a * (self.L + 1)
        self.t = 0
        self.position = self.L  # forces a choice in the first round

    def select(self) -> np.ndarray:
        self.t += 1
        if self.position == self.L:
            self.position = 0
            log_t = math.log(max(self.t, 2))
            k = self.k

            def bonus(c: np.ndarray) -> np.ndarray:
                return self.err + np.sqrt(3.0 * k * log_t / np.asarray(c, dtype=float))

            self.chosen = self._maximise(bonus)
        self.position += 1
        return (self.chosen + 1) / self.M

    def update(self, action: Any, feedback: Feedback) -> None:
        if self.position > self.s_a:  # estimation stage
            self._record(self.chosen, feedback)

    def compiled_step(self) -> CompiledStep | None:
        """Phases of L rounds, the first s_a not recorded; bonus err + √(3K ln t / c)."""
        return self._ucb_step(self.s_a, self.L, self.err, 3.0 * self.k)


# --------------------------------------------------------------------------------------------
# Compiled steps (over probability vectors): the readable rounds above for one replication,
# operation for operation (sums as NumPy adds them: numpy_sum)
# --------------------------------------------------------------------------------------------

_MODES = {"independent": 0, "single": 1, "allocation": 2}
_ALLOCATION = 2
#: positions in the grid learners' parameters (_GridLearner._params)
_P_M, _P_MODE, _P_SA, _P_L, _P_ERR, _P_SCALE, _P_TABLE, _P_BONUS, _P_UNPLAYED = range(9)


@kernel
def _grid_init(params: np.ndarray, k: int, rounds: int) -> Any:
    """Sums, counts and scores ``(3, K, M)``; the table of compositions (or none: the pinning
    DP); the DP's work; the chosen levels (0-based) and a trial vector; round t and position."""
    m = int(params[_P_M])
    none = np.zeros((0, k), dtype=np.int64)
    table = composition_table(k, m) if params[_P_TABLE] > 0.0 else none
    ints = np.zeros(2, dtype=np.int64)
    ints[1] = int(params[_P_L])  # position = L forces a choice in the first round
    grid = np.zeros((3, k, m))
    marks = np.zeros((k, m), dtype=np.bool_)
    levels = np.zeros((2, k), dtype=np.int64)
    return grid, table, np.empty((5, k + 1, m + 1)), np.empty((3, k, m)), marks, levels, ints


@kernel(inline=True)
def _scores(grid: np.ndarray, m: int) -> None:
    """``levels · means`` into ``grid[2]`` (means 0 where nothing was counted)."""
    for k in range(grid.shape[1]):
        for j in range(m):
            count = grid[1, k, j]
            mean = grid[0, k, j] / count if count > 0.0 else 0.0
            grid[2, k, j] = ((j + 1) / m) * mean


@kernel(inline=True)
def _play(levels: np.ndarray, m: int, action: np.ndarray) -> int:
    """``(chosen + 1) / M`` into ``action``."""
    for i in range(action.size):
        action[i] = (levels[i] + 1) / m
    return 0


@kernel
def _ucb_select(state: Any, params: np.ndarray, t: int, u: float, action: np.ndarray) -> int:
    """:meth:`HistoryDependentUCB.select` (AD-UCB: L = 1)."""
    grid, table, dp, pins, marks, levels, ints = state
    m = int(params[_P_M])
    ints[0] += 1
    if ints[1] == int(params[_P_L]):
        ints[1] = 0
        log_t = math.log(max(ints[0], 2))
        err, scale = params[_P_ERR], params[_P_SCALE]
        _scores(grid, m)
        if table.shape[0] > 0:
            table_argmax(table, grid[2], grid[1], err, scale, log_t, pins[0, 0], levels[0])
        else:
            pinning_argmax(grid[2], grid[1], err, scale, log_t, pins, marks, dp, levels[1],
                           levels[0])  # fmt: skip
        for i in range(levels.shape[1]):
            levels[0, i] -= 1
    ints[1] += 1
    return _play(levels[0], m, action)


@kernel(inline=True)
def _record_weighted(grid: np.ndarray, chosen: np.ndarray, observed: np.ndarray, m: int,
                     mode: int) -> None:  # fmt: skip
    """:meth:`_GridLearner._record`: Eq. (5)'s importance-weighted rewards."""
    for i in range(chosen.size):
        j = chosen[i]
        x = observed[i]
        if np.isnan(x):
            x = 0.0
        elif mode != _ALLOCATION:
            x = x / ((j + 1) / m)
        grid[0, i, j] += x
        grid[1, i, j] += 1.0


@kernel
def _ucb_update(
    state: Any, params: np.ndarray, t: int, action: np.ndarray, observed: np.ndarray, reward: float
) -> None:
    grid, levels, ints = state[0], state[5], state[6]
    if ints[1] > int(params[_P_SA]):  # estimation stage
        _record_weighted(grid, levels[0], observed, int(params[_P_M]), int(params[_P_MODE]))


_UCB = (_grid_init, _ucb_select, _ucb_update)
