"""Contract checks every environment and policy must pass (cf. scikit-learn's ``check_estimator``,
Gymnasium's ``check_env``). The library's tests run them on every registered component; run them
on your own::

    from impactbandits.testing import check_policy
    check_policy(lambda: MyPolicy(alpha=0.5))

:func:`check_policy` prints a line per check it passed and a summary (``verbose=False``: no
output). Each check raises :class:`ContractError` (an ``AssertionError``) with a message saying
which property failed, also under ``python -O``.
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable, Sequence

import numpy as np

from impactbandits.core.environment import BatchedSimpleEnvironment, Environment, EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy, Policy, SimplePolicy
from impactbandits.core.random import BatchRNG
from impactbandits.core.simulate import Trajectory, simulate
from impactbandits.core.spaces import Discrete
from impactbandits.envs.stationary import BernoulliBandit

__all__ = [
    "ContractError",
    "check_compiled_step",
    "check_compiled_world",
    "check_environment",
    "check_policy",
]


class ContractError(AssertionError):
    """A component breaks the contract (raised explicitly: the checks also run under
    ``python -O``, which strips ``assert`` statements)."""


def _require(condition: object, message: str) -> None:
    if not condition:
        raise ContractError(message)


PolicyFactory = Callable[[], Policy | SimplePolicy]
EnvFactory = Callable[[], Environment]


def _policy(factory: PolicyFactory) -> Policy:
    obj = factory()
    return BatchedSimplePolicy(obj) if isinstance(obj, SimplePolicy) else obj


def _run(
    env: Environment,
    policy: Policy,
    reps: Sequence[int],
    rounds: int,
    horizon: int | None,
    seed: int = 5,
) -> Trajectory:
    return simulate(
        env,
        policy,
        rounds,
        horizon,
        np.arange(1, rounds + 1),
        EnvironmentRandom(seed, 101, reps),
        BatchRNG.from_key(seed, (202,), reps),
        check_actions=True,
    )


def _same(
    a: Trajectory,
    b: Trajectory,
    rows_a: slice | list[int] = slice(None),
    rows_b: slice | list[int] = slice(None),
) -> bool:
    return all(
        np.array_equal(getattr(a, f)[rows_a], getattr(b, f)[rows_b])
        for f in ("reward", "expected", "pulls", "switches")
    )


def _name(obj: object) -> str:
    """A component's class name (a single-replication component's own, not its wrapper's)."""
    inner = getattr(obj, "prototype", obj)
    return type(inner).__name__


def check_policy(
    factory: PolicyFactory,
    env_factory: EnvFactory | None = None,
    rounds: int = 120,
    verbose: bool = True,
) -> None:
    """Check a policy against the contract, on ``env_factory`` (default: a 3-arm Bernoulli
    bandit), over 4 replications of ``rounds`` rounds:

    * valid actions: every action the policy selects is one of the action space's;
    * reset semantics: a second run of the same object is identical;
    * determinism: a fresh object with the same seed plays the same trajectory;
    * batch independence: each replication run alone equals its row in the batch;
    * no global random state: seeding NumPy's and Python's global generators changes
      nothing, and the policy leaves both untouched;
    * horizon: an anytime policy plays the same when told the horizon; a horizon-aware one
      rejects ``horizon=None``;
    * pickling: an unpickled copy plays the same;
    * pull counts (discrete actions): the pulls per arm add up to the rounds played.

    With ``verbose`` (the default), prints one line per check as it passes, ``ok  <check>:
    <what was compared>``, then a summary line; ``verbose=False`` prints nothing. A failed
    check raises :class:`ContractError` naming the property (the lines before it say what
    passed)."""
    make_env = env_factory or (lambda: BernoulliBandit([0.3, 0.7, 0.5]))
    policy = _policy(factory)
    horizon = rounds if policy.requires_horizon else None
    reps = [0, 1, 2, 3]
    size = f"{len(reps)} replications × {rounds} rounds"
    passed: list[str] = []

    def ok(check: str, what: str) -> None:
        passed.append(check)
        if verbose:
            print(f"ok  {check}: {what}")

    # valid actions + determinism + reset semantics (the same object reused)
    first = _run(make_env(), policy, reps, rounds, horizon)
    env_name = _name(make_env())
    ok("valid actions", f"every selected action is in {env_name}'s action space ({size})")
    again = _run(make_env(), policy, reps, rounds, horizon)
    _require(_same(first, again), "reset() must restart the policy: a second run differs")
    ok("reset semantics", f"a second run of the same object is identical ({size})")
    fresh = _run(make_env(), _policy(factory), reps, rounds, horizon)
    _require(_same(first, fresh), "same seed must give the same trajectory")
    ok("determinism", "a fresh object with the same seed plays the same trajectory")

    # batch independence: each replication alone equals its row in the batch
    for i, rep in enumerate(reps):
        alone = _run(make_env(), _policy(factory), [rep], rounds, horizon)
        _require(
            _same(first, alone, [i], [0]),
            (
                f"replication {rep} differs when run alone: the number of random draws per round "
                "must not depend on other replications"
            ),
        )
    ok("batch independence", f"each of the {len(reps)} replications run alone equals its row")

    # no global random state: seeding the global generators changes nothing, and they are untouched
    # (numpy's stub types get_state() as its dict form; the default legacy=True gives the tuple)
    np.random.seed(12345)  # noqa: NPY002 - deliberately seeding the global state
    random.seed(12345)
    state_np, state_py = np.random.get_state()[1].copy(), random.getstate()  # type: ignore[index]  # noqa: NPY002
    other = _run(make_env(), _policy(factory), reps, rounds, horizon)
    _require(_same(first, other), "results depend on global random state")
    _require(
        np.array_equal(np.random.get_state()[1], state_np),  # type: ignore[index]  # noqa: NPY002
        "policy used numpy's global RNG",
    )
    _require(random.getstate() == state_py, "policy used Python's global random module")
    ok(
        "no global random state",
        "seeding NumPy's and Python's global generators changes nothing, and neither is used",
    )

    # anytime policies ignore the horizon; horizon-aware ones need it
    if policy.requires_horizon:
        try:
            _run(make_env(), _policy(factory), reps, rounds, None)
        except (ValueError, TypeError):
            pass
        else:
            raise ContractError("a horizon-aware policy must reject horizon=None")
        ok("horizon", "the horizon-aware policy rejects horizon=None")
    else:
        told = _run(make_env(), _policy(factory), reps, rounds, rounds)
        _require(_same(first, told), "an anytime policy must not depend on the horizon it is told")
        ok("horizon", f"the anytime policy plays the same when told the horizon T = {rounds}")

    # pickling (process and Dask backends ship specs, but users may ship objects)
    clone = pickle.loads(pickle.dumps(_policy(factory)))
    _require(_same(first, _run(make_env(), clone, reps, rounds, horizon)), "unpickled copy differs")
    ok("pickling", "an unpickled copy plays the same trajectory")

    # checkpoint bookkeeping: pulls add up to the rounds played (discrete actions)
    if isinstance(make_env().action_space, Discrete):
        _require(
            np.array_equal(first.pulls.sum(axis=2), np.tile(first.times, (len(reps), 1))),
            ("pulls per arm must sum to the number of rounds"),
        )
        ok("pull counts", "the pulls per arm add up to the rounds played at every checkpoint")
    if verbose:
        print(
            f"check_policy: {_name(policy)} on {env_name} passed all {len(passed)} checks ({size})"
        )


def check_compiled_step(
    factory: PolicyFactory,
    env_factory: EnvFactory | None = None,
    rounds: int = 300,
    replications: Sequence[int] = (0, 3, 7),
) -> bool:
    """The policy's compiled step (:mod:`impactbandits.core.compiled`) gives the readable
    class's numbers bit for bit on ``env_factory`` (default: a 3-arm Bernoulli bandit), every
    round a checkpoint: rewards, expected rewards, pulls and switches. Returns ``False`` if the
    pair runs no compiled loop here (no numba, no step declared for these parameters, or an
    environment without a compiled world); raises :class:`ContractError` if they differ."""
    from impactbandits import kernels
    from impactbandits.kernels.dispatch import simulate_compiled

    make_env = env_factory or (lambda: BernoulliBandit([0.3, 0.7, 0.5]))
    reps = list(replications)
    horizon = rounds if _policy(factory).requires_horizon else None
    times = np.arange(1, rounds + 1)
    if not kernels.available():
        return False
    env, policy, policy_rng = make_env(), _policy(factory), BatchRNG.from_key(5, (202,), reps)
    env_random = EnvironmentRandom(5, 101, reps)
    env.reset(env_random)
    policy.reset(env.action_space, horizon, policy_rng)
    done = simulate_compiled(env, policy, rounds, times, len(reps), policy_rng)
    if done is None:
        return False
    fast = Trajectory(times, *done)
    slow = _run(make_env(), _policy(factory), reps, rounds, horizon, seed=5)
    for name in ("reward", "expected", "pulls", "switches"):
        a, b = getattr(fast, name), getattr(slow, name)
        if not np.array_equal(a, b):
            r, t = (int(i) for i in np.argwhere(a != b)[0][:2])
            raise ContractError(
                f"the compiled step's {name} differs from the readable class's in replication "
                f"{reps[r]}, round {t + 1}: {a[r, t]} != {b[r, t]}"
            )
    return True


def check_compiled_world(
    env_factory: EnvFactory,
    policies: Sequence[PolicyFactory] | None = None,
    rounds: int = 300,
    replications: Sequence[int] = (0, 3, 7),
) -> bool:
    """The environment's compiled world (:mod:`impactbandits.core.world`) gives the readable
    class's numbers bit for bit under each of ``policies`` (default: UCB1, Thompson sampling and
    EXP3, whose compiled steps play deterministic, many-draw and one-draw rounds), every round a
    checkpoint (:func:`check_compiled_step`). Returns ``False`` if the environment declares no
    world (or numba is missing); raises :class:`ContractError` if they differ, or if a policy
    that has a compiled step does not run compiled in it."""
    from impactbandits import kernels
    from impactbandits.kernels.dispatch import compiled_world
    from impactbandits.policies.classic import EXP3, UCB1
    from impactbandits.policies.thompson import ThompsonSampling

    if not kernels.available():
        return False
    env = env_factory()
    env.reset(EnvironmentRandom(5, 101, list(replications)))
    if compiled_world(env, rounds) is None:
        return False
    for factory in policies or (UCB1, ThompsonSampling, EXP3):
        if not check_compiled_step(factory, env_factory, rounds, replications):
            raise ContractError(f"{_policy(factory)!r} did not run compiled in the world")
    return True


def check_environment(factory: EnvFactory, rounds: int = 200) -> None:
    """Reset semantics, determinism, batch independence, common random numbers and the
    consistency of ``expected`` with ``expected_rewards()`` (finite action spaces)."""
    env = factory()
    obj = env.prototype if isinstance(env, BatchedSimpleEnvironment) else env
    _require(isinstance(obj.action_space.n, int), "action_space.n must be an int")
    reps = [0, 1, 2]
    space = env.action_space

    def play(e: Environment, which: Sequence[int], actions_seed: int) -> tuple[np.ndarray, ...]:
        e.reset(EnvironmentRandom(9, 303, which))
        rng = np.random.default_rng(actions_seed)
        rewards, expected, before = [], [], []
        for _ in range(rounds):
            a: np.ndarray
            if isinstance(space, Discrete):
                a = rng.integers(space.n, size=len(which))
                if len(which) == 1:
                    a = a[:1]
                values = e.expected_rewards()
                _require(values.shape == (len(which), space.n), "expected_rewards() shape (R, n)")
                _require(np.all(np.isfinite(values)), "expected rewards must be finite")
                before.append(values[np.arange(len(which)), a])
            else:
                a = rng.dirichlet(np.ones(space.n), size=len(which))
                before.append(e.expected_reward(a))
            outcome = e.step(a)
            rewards.append(outcome.feedback.reward)
            expected.append(outcome.expected)
        return np.array(rewards), np.array(expected), np.array(before)

    r1, e1, b1 = play(env, reps, 0)
    r2, e2, _ = play(env, reps, 0)
    _require(np.array_equal(r1, r2) and np.array_equal(e1, e2), "reset() must restart the env")
    np.testing.assert_allclose(
        e1,
        b1,
        err_msg="Outcome.expected must equal the expected "
        "reward of the action in the state before the round",
    )
    # batch independence with identical action sequences per replication
    env.reset(EnvironmentRandom(9, 303, reps))
    env_alone = factory()
    rng = np.random.default_rng(1)
    actions = (
        rng.integers(space.n, size=(rounds, len(reps)))
        if isinstance(space, Discrete)
        else rng.dirichlet(np.ones(space.n), size=(rounds, len(reps)))
    )
    env_alone.reset(EnvironmentRandom(9, 303, [reps[1]]))
    for t in range(rounds):
        batch = env.step(actions[t]).feedback.reward[1]
        alone = env_alone.step(actions[t][1:2]).feedback.reward[0]
        _require(batch == alone, "an environment replication must not depend on its batch")
