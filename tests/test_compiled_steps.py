"""Every policy that declares a compiled step gives its readable class's numbers, bit for bit.

Found automatically: every registered policy is built with its defaults (and, for those with a
required parameter, the value below) and checked on environments with a pull model; a policy
that starts declaring a step is checked without a line here. The protocol's rules (subclasses,
a user's step that fails or returns no arm) and the user-written example are checked too.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import CompiledStep, declared_step, kernel
from impactbandits.core.spaces import InvalidAction
from impactbandits.errors import SpecError
from impactbandits.kernels.dispatch import compiled_step
from impactbandits.registry import POLICIES, build_environment, build_policy
from impactbandits.testing import check_compiled_step

# the built-ins on both the loops built ahead of time and numba's JIT; a user's step (which no
# build holds) on the JIT
pytestmark = pytest.mark.skipif(
    not kernels.available(), reason="no compiled loops (numba not installed)"
)

#: Parameters for registered policies that have a required one.
REQUIRED = {"spo-delta": {"sigma": 0.05}}
ENVIRONMENTS = [
    ("bernoulli", {"means": [0.3, 0.5, 0.7]}),
    ("single-peaked", {"instance": 3, "noise": "gaussian", "sigma": 0.05}),
    ("rotting", {"length": 400, "breakpoint": 100}),
    ("gaussian", {"means": list(np.linspace(0.0, 1.0, 70)), "sigma": 0.2}),  # UCB1's buckets
    ("blocking", {"means": [0.9, 0.5, 0.3, 0.2], "delays": [3, 1, 2, 5]}),  # a world's idle rounds
    ("rebounding", {"base": [1.0, 0.9, 0.8], "retention": [0.5, 0.7, 0.2],
                    "influence": [0.3, 0.2, 0.5], "sigma": 0.1, "sigma_z": 0.05,
                    "reveal_parameters": True}),
]  # fmt: skip
#: The built-ins known to declare a step (a floor: the test fails if one stops declaring it).
DECLARED = {
    "greedy", "ucb1", "exp3", "r-exp3", "ucb", "d-ucb", "sw-ucb", "last-reward-greedy",
    "one-step-optimistic", "spo", "spo-delta", "patil", "hkr", "fewa", "moss",
    "thompson", "thompson-gaussian", "kl-ucb", "ucb-v", "exp3s", "ser4", "d-ts",
    "sw-ts", "sw-kl-ucb", "cusum-ucb", "m-ucb", "glr-klucb", "r-ed-ucb", "r-less-ucb",
    "raw-ucb", "rebounding-lookahead", "ucb-greedy",
}  # fmt: skip
#: The environment a policy of DECLARED that needs one of its own is checked on.
HOME = {"ucb-greedy": ENVIRONMENTS[4], "rebounding-lookahead": ENVIRONMENTS[5]}
#: Other parameters whose compiled step takes another branch.
VARIANTS = [
    ("kl-ucb", {"level": "kl-ucb+", "c": 1.0}),
    ("kl-ucb", {"divergence": "gaussian", "sigma": 0.3}),
    ("thompson", {"update": "fractional", "prior_alpha": 0.5}),
    ("thompson-gaussian", {"sigma": 0.2}),
]


def _buildable() -> list[str]:
    names = []
    for name in sorted(POLICIES):
        try:
            build_policy(name, REQUIRED.get(name, {}))
        except (SpecError, TypeError):
            continue
        names.append(name)
    return names


@pytest.mark.usefixtures("kernel_backend")
@pytest.mark.parametrize("env_spec", ENVIRONMENTS, ids=lambda e: e[0])
@pytest.mark.parametrize("name", _buildable())
def test_every_declared_step_equals_its_readable_class(name, env_spec):
    params = REQUIRED.get(name, {})
    with contextlib.suppress(SpecError):  # the policy does not play this environment (reset)
        check_compiled_step(
            lambda: build_policy(name, params), lambda: build_environment(*env_spec), rounds=400
        )


@pytest.mark.usefixtures("kernel_backend")
@pytest.mark.parametrize("name", sorted(DECLARED))
def test_every_built_in_that_had_a_kernel_declares_a_step(name):
    """So the comparison above runs for it (it passes silently for a policy without a step)."""
    home = HOME.get(name, ENVIRONMENTS[0])
    if name in HOME and kernels.backend() == "aot":
        pytest.skip("the built module holds the pull-table world's loops only")
    env = build_environment(*home)
    env.reset(EnvironmentRandom(1, 2, [0]))
    policy = build_policy(name, REQUIRED.get(name, {}))
    policy.reset(env.action_space, 100, BatchRNG.from_key(1, (3,), [0]))
    assert compiled_step(policy) is not None
    assert check_compiled_step(
        lambda: build_policy(name, REQUIRED.get(name, {})), lambda: build_environment(*home), 50
    )


def _ucb1_subclass(method: str) -> type:
    from impactbandits.policies.classic import UCB1

    def select(self):  # always arm 0
        self._next_round()
        return np.zeros(self.rng.size, dtype=np.int64)

    return type("Mine", (UCB1,), {method: select} if method == "select" else {})


@pytest.mark.usefixtures("kernel_backend")
@pytest.mark.parametrize(("name", "params"), VARIANTS, ids=lambda v: str(v))
def test_the_steps_other_branches_equal_their_readable_class(name, params):
    for kind, env_params in ENVIRONMENTS[:2]:
        assert check_compiled_step(
            lambda: build_policy(name, params),
            lambda kind=kind, env_params=env_params: build_environment(kind, env_params),
            rounds=300,
        )


@pytest.mark.usefixtures("jit_backend")
def test_a_subclass_that_changes_select_does_not_inherit_the_compiled_step():
    env = build_environment("bernoulli", {"means": [0.3, 0.7]})
    env.reset(EnvironmentRandom(1, 2, [0]))
    changed = _ucb1_subclass("select")()
    changed.reset(env.action_space, None, BatchRNG.from_key(1, (3,), [0]))
    assert declared_step(changed) is None
    same = _ucb1_subclass("none")()
    same.reset(env.action_space, None, BatchRNG.from_key(1, (3,), [0]))
    assert declared_step(same) is not None
    run = kernels.simulate(env, changed, 50, None, np.array([50]), EnvironmentRandom(1, 2, [0]),
                           BatchRNG.from_key(1, (3,), [0]))  # fmt: skip
    assert run.pulls[0, -1, 0] == 50  # its own select ran


@kernel
def _init(params, k, rounds):
    return np.zeros(k)


@kernel
def _out_of_range(state, params, t, u):
    return state.size + 2 if t == 7 else 0


@kernel
def _untyped(state, params, t, u):
    return "arm"


@kernel
def _update(state, params, t, arm, reward):
    state[arm] += reward


@kernel
def _reads_past_the_end(state, params, t, u):
    return 0 if state[state.size + 3 * t] >= 0 else 1  # memory past the state's end


@kernel
def _early_return_before_a_loop(state, params, t, u):
    """The shape that once cost numba's reference counting every round: a return before a
    loop over the state (the loop lends the step its state: see kernels.lending.lend)."""
    if t <= state.size:
        return t - 1
    best = 0
    for i in range(state.size):
        if state[i] > state[best]:
            best = i
    return best


def _policy_with(select):
    from impactbandits.policies.classic import Greedy

    class Broken(Greedy):
        def compiled_step(self):
            return CompiledStep(_init, select, _update, np.zeros(0))

    return Broken()


def _simulate(policy):
    return kernels.simulate(
        build_environment("bernoulli", {"means": [0.3, 0.7]}), policy, 20, None, np.array([20]),
        EnvironmentRandom(1, 2, [0, 1]), BatchRNG.from_key(1, (3,), [0, 1]),
    )  # fmt: skip


@pytest.mark.usefixtures("jit_backend")
def test_a_compiled_select_returning_no_arm_names_the_round():
    with pytest.raises(InvalidAction, match=r"round 7: the compiled select\(\) returned 4"):
        _simulate(_policy_with(_out_of_range))


@pytest.mark.usefixtures("jit_backend")
def test_a_users_step_that_indexes_out_of_bounds_is_a_one_line_spec_error():
    """A user's kernels run bounds-checked, inlined into the loop as they are."""
    with pytest.raises(SpecError, match="IndexError") as error:
        _simulate(_policy_with(_reads_past_the_end))
    assert error.value.field == "policy" and "\n" not in str(error.value)


@pytest.mark.usefixtures("jit_backend")
def test_a_step_with_lent_state_keeps_its_arrays_alive_across_replications():
    """The state lent to the step stays valid for the whole replication: the compiled run
    equals a plain Python run of the same kernels (allocations between replications would
    reuse freed memory if the owner were released early)."""
    policy = _policy_with(_early_return_before_a_loop)
    run = _simulate(policy)
    env = build_environment("bernoulli", {"means": [0.3, 0.7]})
    for r, seed in enumerate([0, 1]):
        env.reset(EnvironmentRandom(1, 2, [seed]))
        state = _init.py_func(np.zeros(0), 2, 20)
        total = 0.0
        for t in range(1, 21):
            arm = _early_return_before_a_loop.py_func(state, np.zeros(0), t, 0.0)
            reward = float(env.step(np.array([arm])).feedback.reward[0])
            _update.py_func(state, np.zeros(0), t, arm, reward)
            total += reward
        assert run.reward[r, -1] == total


@pytest.mark.usefixtures("jit_backend")
def test_a_step_numba_cannot_compile_is_a_one_line_spec_error():
    with pytest.raises(SpecError, match="does not compile") as error:
        _simulate(_policy_with(_untyped))
    assert "\n" not in str(error.value)


@pytest.mark.usefixtures("jit_backend")
def test_a_declaration_returning_something_else_is_a_spec_error():
    from impactbandits.policies.classic import Greedy

    class Wrong(Greedy):
        def compiled_step(self):
            return (1, 2, 3)

    with pytest.raises(SpecError, match="not a CompiledStep"):
        _simulate(Wrong())


@pytest.mark.usefixtures("jit_backend")
def test_the_user_written_example_runs_compiled_and_equals_its_readable_form():
    examples = Path(__file__).resolve().parent.parent / "examples"
    sys.path.insert(0, str(examples))
    try:
        import fast_policy
    finally:
        sys.path.remove(str(examples))
    env = lambda: build_environment("bernoulli", {"means": [0.3, 0.5, 0.55, 0.6]})  # noqa: E731
    assert check_compiled_step(fast_policy.KLUCB, env, rounds=300)
