"""R-ed-UCB / R-less-UCB ``variant = "authors-code"`` run compiled with the readable class's
numbers, bit for bit (:func:`impactbandits.testing.check_compiled_step`: rewards, expected
rewards, pulls and switches at every round), and the protocol's
:attr:`~impactbandits.core.compiled.CompiledStep.first_draw` that their step relies on (draws
only after the 2K round-robin rounds) against a readable toy policy.

The expected values are always the readable class's run; the new step has no loop built ahead
of time until the module is rebuilt, so these run on numba's JIT (the one test on both
backends skips the ``aot`` run when no entry is built).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.policy import Policy
from impactbandits.kernels.dispatch import compiled_step, policy_draws, simulate_compiled
from impactbandits.registry import build_environment, build_policy
from impactbandits.testing import ContractError, check_compiled_step

pytestmark = pytest.mark.skipif(
    not kernels.available(), reason="no compiled loops (numba not installed)"
)

Env = tuple[str, dict[str, Any]]
AUTHORS = {"variant": "authors-code"}
KINDS = ("r-ed-ucb", "r-less-ucb")
#: The authors' random rising instance of seed 38: 5 arms.
RANDOM_5 = {"instance": "random", "seed": 38, "scale": 400, "length": 1500}
#: Rested and restless rising bandits (both variants of the restless one), K = 2, 5 and 15,
#: the figure's Beta observations, Gaussian noise and none.
ENVIRONMENTS: dict[str, Env] = {
    "rested-15": ("rising", {"instance": "15-arms", "length": 1500}),
    "rested-2": ("rising", {"instance": "2-arms", "length": 1500}),
    "rested-5-gauss": ("rising", {**RANDOM_5, "noise": "gaussian", "sigma": 0.1}),
    "rested-5-none": ("rising", {**RANDOM_5, "noise": "none"}),
    "restless-15": ("rising-restless", {"instance": "15-arms", "length": 1500}),
    "restless-15-authors": (
        "rising-restless",
        {"instance": "15-arms", "length": 1500, "variant": "authors-code"},
    ),
    "restless-2-authors": (
        "rising-restless",
        {"instance": "2-arms", "length": 1500, "variant": "authors-code"},
    ),
}
#: The defaults and others: a window of half the samples (h > 0 from N = 2) or a tenth, a
#: wider or narrower width (α is the paper's: the authors' code takes δ = (t − 1)^{−4}).
PARAMS = [
    {},
    {"epsilon": 0.5, "alpha": 2.0, "sigma": 0.05},
    {"epsilon": 0.1, "sigma": 1.0},
    {"epsilon": 0.3, "alpha": 1.0, "sigma": 0.2},
]


def same_as_readable(kind: str, params: dict[str, Any], env: Env, rounds: int,
                     replications: tuple[int, ...] = (0, 3, 7)) -> None:  # fmt: skip
    """The compiled loop equals the readable one bit for bit (``check_compiled_step`` raises if
    not), and it did run compiled."""
    assert check_compiled_step(
        lambda: build_policy(kind, {**AUTHORS, **params}),
        lambda: build_environment(*env),
        rounds=rounds,
        replications=replications,
    ), f"{kind} {params} on {env} did not run compiled"


def _arms(env: Env) -> int:
    built = build_environment(*env)
    built.reset(EnvironmentRandom(1, 2, [0]))
    return int(built.action_space.n)


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("env", list(ENVIRONMENTS), ids=str)
def test_the_authors_step_equals_the_readable_class(kind, env):
    """Horizons inside the round robin (no draw taken), at its end, one round past it and well
    past it (the readable tables grow past their initial 256 rounds)."""
    spec = ENVIRONMENTS[env]
    k = _arms(spec)
    for rounds in (1, k, 2 * k - 1, 2 * k, 2 * k + 1, 2 * k + 3, 300, 1500):
        same_as_readable(kind, {}, spec, rounds, replications=(0, 3, 7) if rounds < 1500 else (2,))


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params", PARAMS[1:], ids=str)
@pytest.mark.parametrize("env", ["rested-15", "rested-5-gauss", "restless-2-authors"])
def test_other_parameters(kind, params, env):
    for rounds, replications in ((40, (0, 1)), (700, (2, 5, 9))):
        same_as_readable(kind, params, ENVIRONMENTS[env], rounds, replications)


#: Noise-free arms with equal constant rewards: equal indices whenever their counts are equal,
#: so the uniform tie-break decides most rounds (and every round after the round robin while
#: h = 0: every index is 1).
TIES: Env = ("rested", {"curves": [[0.5] * 600, [0.5] * 600, [0.2] * 600, [0.5] * 600]})


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("params", [{}, {"epsilon": 0.5, "sigma": 0.3}], ids=str)
def test_random_tie_breaks(kind, params):
    """The readable class's draws decide: replications play different arms (so the draws
    matter), and the compiled step follows every one of them."""
    reps = (0, 1, 2, 3, 4, 5)
    policy, env = build_policy(kind, {**AUTHORS, **params}), build_environment(*TIES)
    env.reset(EnvironmentRandom(5, 101, reps))
    policy.reset(env.action_space, None, BatchRNG.from_key(5, (202,), reps))
    played = []
    for _ in range(600):
        actions = policy.select()
        played.append(actions)
        policy.update(actions, env.step(actions).feedback)
    sequences = np.array(played).T
    assert len({tuple(row) for row in sequences}) == len(reps), "the ties decided nothing"
    for rounds in (8, 9, 10, 600):
        same_as_readable(kind, params, TIES, rounds, reps)


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("kind", KINDS)
def test_the_figures_pairs_at_their_quick_horizon(kind):
    """The quick authors-code figure's own environments (5000 rounds, one replication)."""
    from impactbandits.experiments.figures import get_figure

    spec = get_figure("metelli-synthetic").spec(True, "authors-code")
    (policy,) = [p for p in spec.policies if p.kind == kind]
    assert policy.params.get("variant") == "authors-code"
    envs = [e for e in spec.environments if e.label in (policy.environments or ())]
    assert envs
    for env in envs:
        same_as_readable(kind, {}, (env.kind, dict(env.params)), max(spec.horizons), (1,))


@pytest.mark.parametrize("kind", ["r-ed-ucb", "r-less-ucb"])
def test_on_both_backends(kernel_backend, kind):
    """On the loops built ahead of time too (``make kernels`` builds the authors-code step)."""
    assert check_compiled_step(
        lambda: build_policy(kind, AUTHORS),
        lambda: build_environment(*ENVIRONMENTS["rested-15"]),
        rounds=400,
    ), f"the authors-code step did not run on the {kernel_backend} backend"


@pytest.mark.parametrize("k", [2, 5, 15])
def test_the_step_draws_from_round_2k_plus_1(k):
    """The declaration: one draw a round, the first at round 2K + 1; the paper variant draws
    none."""
    env = build_environment("bernoulli", {"means": list(np.linspace(0.1, 0.9, k))})
    env.reset(EnvironmentRandom(1, 2, [0]))
    for kind in KINDS:
        authors, paper = build_policy(kind, AUTHORS), build_policy(kind, {})
        for policy in (authors, paper):
            policy.reset(env.action_space, None, BatchRNG.from_key(1, (3,), [0]))
        step, plain = compiled_step(authors), compiled_step(paper)
        assert step is not None and plain is not None
        assert (step.draws, step.first_draw) == (1, 2 * k + 1)
        assert plain.draws == 0 and plain.select is not step.select
        assert step.init is plain.init and step.update is plain.update


# -- first_draw against a readable toy ----------------------------------------------------


class LateDraws(Policy):
    """A toy: arms in turn for ``first − 1`` rounds without drawing, then ``rng.integers(K)``
    (one uniform a round) offset by the sum of rewards seen so far (so the rewards matter)."""

    def __init__(self, first: int = 7, declared: int | None = None) -> None:
        self.first = first
        self.declared = first if declared is None else declared

    @property
    def deterministic(self) -> bool:
        return False

    def reset(self, space, horizon, rng) -> None:  # type: ignore[no-untyped-def]
        self.n, self.rng, self.t = space.n, rng, 0
        self.total = np.zeros(rng.size)

    def select(self) -> np.ndarray:
        self.t += 1
        if self.t < self.first:
            return np.full(self.rng.size, (self.t - 1) % self.n, dtype=np.int64)
        drawn = self.rng.integers(self.n)
        return (drawn + (self.total > 3.0)) % self.n

    def update(self, actions, feedback) -> None:  # type: ignore[no-untyped-def]
        self.total += np.asarray(feedback.reward, dtype=float)

    def compiled_step(self) -> CompiledStep | None:
        params = np.array([float(self.first)])
        return CompiledStep(_toy_init, _toy_select, _toy_update, params, draws=1,
                            first_draw=self.declared)  # fmt: skip


@kernel
def _toy_init(params, k, rounds):  # type: ignore[no-untyped-def]
    return np.array([0.0, float(k)])  # the rewards' sum, K


@kernel
def _toy_select(state, params, t, u):  # type: ignore[no-untyped-def]
    k = int(state[1])
    if t < params[0]:
        # the loop hands 0.0 before first_draw: anything else is an arm out of range
        return (t - 1) % k if u == 0.0 else k + 1
    drawn = min(int(u * k), k - 1)
    return (drawn + (1 if state[0] > 3.0 else 0)) % k


@kernel
def _toy_update(state, params, t, arm, reward):  # type: ignore[no-untyped-def]
    state[0] += reward


TOY_ENV = ("bernoulli", {"means": [0.3, 0.6, 0.8]})


@pytest.mark.usefixtures("jit_backend")
@pytest.mark.parametrize("first", [1, 2, 7, 40])
def test_first_draw_equals_a_readable_policy_that_draws_late(first):
    """Draws start at round ``first`` in both forms, for horizons before, at and past it."""
    for rounds in sorted({1, max(first - 1, 1), first, first + 1, 300}):
        assert check_compiled_step(
            lambda: LateDraws(first), lambda: build_environment(*TOY_ENV), rounds=rounds
        )


@pytest.mark.usefixtures("jit_backend")
def test_a_wrong_first_draw_is_caught():
    """The comparison is sensitive to it: declaring the draws one round late shifts them."""
    with pytest.raises(ContractError):
        check_compiled_step(
            lambda: LateDraws(7, declared=8), lambda: build_environment(*TOY_ENV), rounds=300
        )


def test_policy_draws_start_at_first_draw():
    """The loop's uniforms: zeros before ``first_draw``, then the stream's values in order
    (those of ``rng.random()`` called once a round from that round on)."""
    step = CompiledStep(_toy_init, _toy_select, _toy_update, np.zeros(1), draws=1, first_draw=5)
    for rounds in (1, 4, 5, 6, 20):
        uniforms, _ = policy_draws(step, BatchRNG.from_key(1, (3,), [0, 4]), rounds, 2)
        rng = BatchRNG.from_key(1, (3,), [0, 4])
        expected = np.zeros((2, rounds))
        for t in range(5, rounds + 1):
            expected[:, t - 1] = rng.random()
        assert np.array_equal(uniforms, expected)


@pytest.mark.usefixtures("jit_backend")
def test_the_authors_step_without_first_draw_would_differ():
    """The tie-break draws matter: the same kernels with draws from round 1 give other numbers
    (so the equality above tests the draws' alignment)."""
    env_spec = TIES
    runs = []
    for shift in (False, True):
        env, policy = build_environment(*env_spec), build_policy("r-ed-ucb", AUTHORS)
        env.reset(EnvironmentRandom(1, 2, [0, 1, 2]))
        rng = BatchRNG.from_key(1, (3,), [0, 1, 2])
        policy.reset(env.action_space, None, rng)
        if shift:
            step = policy.compiled_step()
            assert step is not None
            early = CompiledStep(step.init, step.select, step.update, step.params, draws=1)
            policy.compiled_step = lambda early=early: early  # type: ignore[method-assign]
        done = simulate_compiled(env, policy, 600, np.array([600]), 3, rng)
        assert done is not None
        runs.append(done[2].ravel())  # pulls
    assert not np.array_equal(*runs)
