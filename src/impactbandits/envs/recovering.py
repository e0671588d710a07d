"""Recovering bandits (Pike-Burke & Grünewälder, "Recovering Bandits", NeurIPS 2019; arXiv
1910.14354): "the expected reward of each arm varies according to some unknown function of the
time since the arm was last played" (abstract).

Arm ``i`` has a recovery function ``f_i`` on ``z ∈ {0, 1, …, z_max}``; pulling it when its
``z`` is ``z_i`` pays

    Y_t = f_i(z_i) + σ ε_t,        ε_t ~ N(0, 1),

and then every arm's ``z`` becomes ``min(z + 1, z_max)`` except the pulled arm's, which becomes
0. Only the paper's abstract and introduction could be read here; the conventions are the
authors' code's (github.com/ciarapb/recovering_bandits):

- ``z`` counts as in ``functs/gen_functs.py`` (``UpdateZs``): an arm pulled twice in a row meets
  ``z = 0`` the second time, and ``z`` is capped at ``z_max`` ("maximum waiting time (when
  expected reward should be back to max)", ``maxwait = 30.0`` in every setup).
- Every arm starts at ``initial_z = 0`` (every setup builds its arms with ``zinit = 0.``, and the
  notebooks in ``make_plots/`` "initialize z's at 0"; ``setups/rgp_logistic_l5_setup.py`` alone
  starts its first replication at ``maxwait``, a slip its ``reset`` undoes).
- ``σ = 0.1``: ``noisevar = 0.01`` in every setup.

Instances: give ``values`` (``f_i(0), …, f_i(z_max)`` per arm, e.g. a parametric curve), or draw
``n_arms`` functions from the GP prior with mean 0 and the squared-exponential kernel
``v·exp(−(z − z')²/(2ℓ²))`` on the grid, as the authors' GP setups do (``setups/
rgp_gp_l5_setup.py``: ``K = 10``, ``ℓ = 5``, ``v = 1``, ``np.random.seed(5389)`` then
``np.random.multivariate_normal(0, C, K)``; ``ℓ = 2`` and ``0.5`` in ``rgp_gp_l2_setup.py`` and
``rgp_gp_l05_setup.py``; ``K = 30``, ``ℓ = 4`` in ``rgp_gp_K30_l4_setup.py``). ``sampler =
"authors"`` (default) draws exactly that way, NumPy's legacy ``RandomState(instance_seed)``, so
``instance_seed = 5389`` gives their functions if this LAPACK's SVD agrees with theirs (not
checked: their saved instances are not published); ``"generator"`` draws from
``numpy.random.default_rng(instance_seed)`` (an eigen-decomposition of the kernel matrix). Drawn
once: the same instance in every replication, as in the authors' runs (their 500 replications
share one setup).

What the learner is told (``action_space.known``): ``z_max``, ``initial_z`` (so it can track
every arm's ``z`` from its own actions), the noise ``sigma`` and the GP prior (``lengthscale``,
``kernel_variance``), as the authors' learners use the true ``noisevar`` and the setup's kernel.
With ``values`` given, ``lengthscale`` and ``kernel_variance`` are only that prior (the
authors' parametric setups: ``ℓ = 2.5, 5, 7.5``).

Common random numbers: the noise of the ``m``-th pull of arm ``i`` is indexed by (arm, ``m``),
as in the stationary bandits: policies pulling an arm for the ``m``-th time see the same ``ε``.

Regret. Default oracle ``recovering_lookahead``: the oracle d-step lookahead policy with the true
``f`` (``d = lookahead``, 1: greedy) played from the start; ``recovering_optimum`` is the exact
optimum over arm sequences (small instances). The paper's "d-step lookahead regret" is measured
from the *learner's* state instead, which no fixed benchmark gives; it is reported as the metric
``lookahead_regret`` (:meth:`RecoveringBandit.summary_metrics`), computed as the authors'
``RGPUCBds`` / ``RGPTSds`` do: in each of the first ``K`` rounds (their initialisation, one pull
per arm) ``max_j f_j(z_j) − f_{J_t}(z_{J_t})``; then, in blocks of ``d`` rounds from round
``K + 1``, the best total of ``d`` rounds from the learner's ``z`` at the block's start
(``GetBestSeqRep``, arms may repeat) minus what the learner's pulls are expected to pay. The
authors spread each block's regret evenly over its rounds; the two agree at every block end.
For ``d = 1`` it is the instantaneous regret ``Σ_t max_j f_j(z_{j,t}) − f_{J_t}(z_{J_t,t})``
(``functs/rgpucb_functs.py``). Memory: one float per replication and round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

import numpy as np
from pydantic import Field

from impactbandits.core.compiled import kernel
from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.spaces import Discrete
from impactbandits.core.streams import counter_normal
from impactbandits.core.world import CompiledWorld, noise_words
from impactbandits.errors import SpecError
from impactbandits.oracles.recovering import (
    RecoveryClock,
    block_optimum,
    plan_gaps,
    plan_table,
    se_kernel,
)
from impactbandits.params import (
    ARMS,
    LEVELS,
    Lookahead,
    NoiseScale,
    PositiveFloat,
    RequiredWhen,
)

if TYPE_CHECKING:
    from impactbandits.core.simulate import Trajectory

__all__ = [
    "AUTHORS_SEED",
    "RecoveringBandit",
    "gp_functions",
    "recovering_init",
    "recovering_record",
    "recovering_step",
]

#: The seed of the authors' GP setups (``setups/rgp_gp_l5_setup.py``: ``np.random.seed(5389)``).
AUTHORS_SEED = 5389

_Value = Annotated[float, Field(allow_inf_nan=False)]
Sampler = Literal["authors", "generator"]


def gp_functions(
    n_arms: int, z_max: int, lengthscale: float, variance: float, seed: int, sampler: Sampler
) -> np.ndarray:
    """``(n_arms, z_max + 1)`` draws of ``f`` from the GP prior on the grid (module docstring)."""
    cov = se_kernel(z_max, lengthscale, variance)
    if sampler == "authors":  # the authors' setups: legacy RandomState, SVD-based draws
        legacy = np.random.RandomState(seed)  # their generator: NumPy's legacy stream
        return np.asarray(legacy.multivariate_normal(np.zeros(z_max + 1), cov, n_arms))
    eigenvalues, vectors = np.linalg.eigh(cov)
    root = vectors * np.sqrt(np.maximum(eigenvalues, 0.0))
    return np.random.default_rng(seed).standard_normal((n_arms, z_max + 1)) @ root.T


class RecoveringBandit(Environment):
    """Recovering bandit (Pike-Burke & Grünewälder 2019): arm ``i`` pays ``f_i(z_i)`` + N(0, σ²),
    ``z_i`` the rounds since its last pull (0 right after it, capped at ``z_max``).

    ``values`` (``f_i(0…z_max)`` per arm) or ``n_arms`` functions drawn from the GP prior
    (``lengthscale``, ``kernel_variance``; ``instance_seed``, ``sampler``). ``z_max`` (default
    30, or from ``values``), ``sigma`` (0.1), ``initial_z`` (0): the authors' code's.
    ``lookahead``: the ``d`` of the regret benchmark (the oracle d-step lookahead policy).
    """

    default_oracle = "recovering_lookahead"

    def __init__(
        self,
        values: Annotated[
            Annotated[list[Annotated[list[_Value], Field(min_length=2)]], Field(min_length=1)]
            | None,
            RequiredWhen("n_arms", None),
        ] = None,
        n_arms: Annotated[int | None, Field(gt=0), ARMS, RequiredWhen("values", None)] = None,
        z_max: Annotated[int | None, Field(gt=0), LEVELS] = None,
        sigma: NoiseScale = 0.1,
        initial_z: Annotated[int, Field(ge=0)] = 0,
        lengthscale: PositiveFloat = 5.0,
        kernel_variance: PositiveFloat = 1.0,
        instance_seed: Annotated[int, Field(ge=0, lt=2**32)] = AUTHORS_SEED,
        sampler: Sampler = "authors",
        lookahead: Lookahead = 1,
    ) -> None:
        if (values is None) == (n_arms is None):
            raise SpecError("values", "give either 'values' (f_i on 0..z_max) or 'n_arms'")
        if values is not None:
            widths = {len(row) for row in values}
            if len(widths) != 1:
                raise SpecError("values", "every arm needs the same number z_max + 1 of values")
            width = widths.pop()
            if z_max is not None and z_max != width - 1:
                raise SpecError("z_max", f"values give f on 0..{width - 1}: z_max must be that")
            table = np.asarray(values, dtype=float)
        else:
            arms = 0 if n_arms is None else int(n_arms)
            top = 30 if z_max is None else int(z_max)
            table = gp_functions(arms, top, lengthscale, kernel_variance, instance_seed, sampler)
        if not np.all(np.isfinite(table)):
            raise SpecError("values", "every f_i(z) must be finite")
        self.values = table
        self.z_max = table.shape[1] - 1
        k = table.shape[0]
        if not 0 <= int(initial_z) <= self.z_max:
            raise SpecError("initial_z", f"need 0 <= initial_z <= z_max = {self.z_max}")
        self.initial_z = np.full(k, int(initial_z), dtype=np.int64)
        self.sigma = float(sigma)
        self.lookahead = int(lookahead)
        self._plans = plan_table(k, self.lookahead)  # a SpecError if K^d is too many
        known = {
            "z_max": self.z_max,
            "initial_z": self.initial_z.copy(),
            "sigma": self.sigma,
            "lengthscale": float(lengthscale),
            "kernel_variance": float(kernel_variance),
        }
        self._space = Discrete(k, known=known)

    @property
    def action_space(self) -> Discrete:
        return self._space

    @property
    def deterministic(self) -> bool:
        """No reward noise: the instance is the same in every replication."""
        return self.sigma == 0

    def reset(self, random: EnvironmentRandom) -> None:
        size, k = random.size, self._space.n
        self._clock = RecoveryClock(self.initial_z, self.z_max, size)
        self._pulls = np.zeros((size, k), dtype=np.int64)
        self._rows = np.arange(size)
        self._noise = random.noise(k, "normal")
        self._t = 0
        self._block = np.zeros(size)
        self._benchmark: list[np.ndarray] = []
        self._total = np.zeros(size)
        self._recorded: np.ndarray | None = None  # the compiled world's benchmark

    @property
    def z(self) -> np.ndarray:
        """``(R, K)``: every arm's ``z`` before the coming round."""
        return self._clock.z.copy()

    def expected_rewards(self) -> np.ndarray:
        """``(R, K)``: ``f_i(z_i)`` in the current state."""
        return self.values[np.arange(self._space.n)[None, :], self._clock.z]

    def step(self, actions: np.ndarray) -> Outcome:
        rows = self._rows
        self._t += 1
        k, d = self._space.n, self.lookahead
        if self._t <= k:  # the authors' initialisation rounds: instantaneous regret
            self._block = self.expected_rewards().max(axis=1)
        elif (self._t - k - 1) % d == 0:  # a block of d rounds starts: its best plan's share
            self._block = block_optimum(self.values, self._clock.z, self._plans) / d
        self._total = self._total + self._block
        self._benchmark.append(self._total)
        pulled_at = self._clock.record(actions)
        mean = self.values[actions, pulled_at]
        if self.sigma > 0:
            reward = mean + self.sigma * self._noise.at(actions, self._pulls[rows, actions])
        else:
            reward = mean.copy()
        self._pulls[rows, actions] += 1
        return Outcome(Feedback(reward), mean)

    def summary_metrics(self, trajectory: Trajectory) -> dict[str, np.ndarray]:
        """``lookahead_regret``: the paper's d-step lookahead regret, cumulative (module
        docstring), ``(R, C)``."""
        if self._recorded is not None:  # the compiled world's, at the same checkpoints
            benchmark = self._recorded[:, :, 0]
        else:
            times = np.asarray(trajectory.times, dtype=np.int64)
            benchmark = np.stack(self._benchmark, axis=1)[:, times - 1]
        return {"lookahead_regret": benchmark - np.asarray(trajectory.expected)}

    def compiled_world(self, rounds: int) -> CompiledWorld:
        """The compiled world of the replications reset: :func:`recovering_step` plays a round
        as :meth:`step` does and keeps the lookahead benchmark's running total, which
        :func:`recovering_record` records at every checkpoint for :meth:`summary_metrics`.
        ``params``: σ, d, the number of plans, then the plans and their gaps
        (:func:`~impactbandits.oracles.recovering.plan_gaps`); ``data``: the ``f_i(z)`` table;
        the initial ``z`` in ``params`` after them."""
        plans = self._plans
        head = [self.sigma, float(self.lookahead), float(plans.shape[0])]
        params = np.concatenate(
            (head, plans.reshape(-1), plan_gaps(plans).reshape(-1), self.initial_z)
        ).astype(np.float64)
        words = noise_words(self._rows.size, self._noise)
        return CompiledWorld(
            recovering_init,
            recovering_step,
            params,
            self.values[None],
            words,
            record=recovering_record,
            recorded=1,
            receive=self._receive,
        )

    def _receive(self, recorded: np.ndarray) -> None:
        self._recorded = recorded


@kernel
def recovering_init(params: np.ndarray, values: np.ndarray, k: int, rounds: int,
                    noise: np.ndarray) -> tuple[Any, ...]:  # fmt: skip
    """One replication's state: the ``f`` table, every arm's ``z``, its pulls, the plans and
    their gaps, the noise words, and (in ``totals``) the round, the block's share and the
    benchmark's running total."""
    d = int(params[1])
    count = int(params[2])
    plans = np.empty((count, d), dtype=np.int64)
    gaps = np.empty((count, d), dtype=np.int64)
    for p in range(count):
        for s in range(d):
            plans[p, s] = int(params[3 + p * d + s])
            gaps[p, s] = int(params[3 + count * d + p * d + s])
    z = np.empty(k, dtype=np.int64)
    for i in range(k):
        z[i] = int(params[3 + 2 * count * d + i])
    totals = np.zeros(2)  # the block's share, the running total
    return values, z, np.zeros(k, dtype=np.int64), plans, gaps, noise, totals


@kernel
def recovering_step(state: Any, params: np.ndarray, t: int, arm: int) -> tuple[float, float]:
    """Round ``t``: the benchmark's share of the round (:meth:`RecoveringBandit.step`), then
    the pull of ``arm`` at its ``z``, every ``z`` ageing by one (capped) and the arm's to 0."""
    values, z, pulls, plans, gaps, noise, totals = state
    k, z_max, d = z.size, values.shape[1] - 1, plans.shape[1]
    if t <= k:  # the authors' initialisation rounds: the best arm now
        best = -np.inf
        for i in range(k):
            best = max(best, values[i, z[i]])
        totals[0] = best
    elif (t - k - 1) % d == 0:  # a block starts: the best plan's total, shared over d rounds
        best = -np.inf
        for p in range(plans.shape[0]):
            total = 0.0
            for s in range(d):
                planned = plans[p, s]
                gap = gaps[p, s]  # pulled earlier in the plan, or ageing from the block start
                position = min(gap, z_max) if gap >= 0 else min(z[planned] + s, z_max)
                total = total + values[planned, position]
            if total > best:
                best = total
        totals[0] = best / d
    totals[1] = totals[1] + totals[0]
    mean = values[arm, z[arm]]
    reward = mean
    if params[0] > 0:
        reward = mean + params[0] * counter_normal(noise, 0, arm, pulls[arm])
    pulls[arm] += 1
    for i in range(k):
        z[i] = min(z[i] + 1, z_max)
    z[arm] = 0
    return reward, mean


@kernel
def recovering_record(state: Any, params: np.ndarray, out: np.ndarray) -> None:
    """The benchmark's running total (:meth:`RecoveringBandit.summary_metrics`)."""
    out[0] = state[6][1]
