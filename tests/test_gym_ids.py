"""Gymnasium ids: importing :mod:`impactbandits.gym` registers every
``impactbandits/<kind>-v0`` id (as Gymnasium's plug-in packages do), importing
:mod:`impactbandits` registers nothing; ``gymnasium.make`` then builds the library's
environment, also through the ``"module:id"`` form (the package itself, or the former
``impactbandits.gym.registered``); an environment from :func:`impactbandits.gym.make` carries
its ``spec`` and passes Gymnasium's checker without a warning.

Each check runs in a fresh interpreter, so that nothing this test process (or another test)
imported or registered can make it pass."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("gymnasium")

#: (kind, parameters) that build quickly: a rested bandit with noise, a stationary one, and
#: Tang et al.'s bandit with simplex actions and semi-bandit feedback.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("single-peaked", {"instance": 1, "length": 200, "noise": "gaussian", "sigma": 0.05}),
    ("bernoulli", {"means": [0.1, 0.9, 0.5], "horizon": 50}),
    ("impact", {"high": [0.9, 0.8, 0.7], "low": [0.3, 0.4, 0.5], "gamma": 0.3}),
]

#: Plays ``ROUNDS`` seeded random actions on an environment, twice (seed, then the next
#: replication), and returns every observation, reward and info value as flat floats.
PLAY = """
import math
import numpy as np

def play(env, seed, rounds=30):
    out = []
    def add(*values):
        for value in values:
            if isinstance(value, dict):
                for key in sorted(value):
                    add(value[key])
            elif isinstance(value, (bool, int, float, np.ndarray, np.generic)):
                out.extend(np.ravel(np.asarray(value, dtype=float)).tolist())
    for episode_seed in (seed, None):  # replication 0 of the seed, then replication 1
        observation, info = env.reset(seed=episode_seed)
        add(observation, info)
        env.action_space.seed(0)
        for _ in range(rounds):
            add(*env.step(env.action_space.sample()))
    return out

def same(a, b):
    return len(a) == len(b) > 0 and all(
        x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b)
    )

def ours():
    import gymnasium
    return sorted(i for i in gymnasium.registry if i.startswith("impactbandits"))
"""


def _run(code: str) -> str:
    """Run ``PLAY`` then ``code`` in a fresh interpreter; its stdout (fail with its output if
    it fails)."""
    result = subprocess.run(
        [sys.executable, "-c", PLAY + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_importing_impactbandits_registers_nothing():
    out = _run("""
        import gymnasium
        import impactbandits
        from impactbandits import ExperimentSpec, run_experiment  # the lazy top-level names
        import impactbandits.registry, impactbandits.experiments.runner
        print(ours())
    """)
    assert out.strip() == "[]"


def test_importing_impactbandits_gym_registers_every_environment_kind():
    out = _run("""
        import gymnasium
        assert ours() == []
        import impactbandits.gym
        from impactbandits.registry import ENVIRONMENTS
        expected = sorted(f"impactbandits/{kind}-v0" for kind in ENVIRONMENTS)
        assert ours() == expected, (ours(), expected)
        gymnasium.register_envs(impactbandits.gym)  # Gymnasium's idiom: a no-op
        assert impactbandits.gym.register_envs() == list(
            f"impactbandits/{kind}-v0" for kind in ENVIRONMENTS
        )  # idempotent: the same ids, nothing added
        assert ours() == expected
        print(len(expected))
    """)
    assert int(out) > 10


@pytest.mark.parametrize(("kind", "params"), CASES, ids=[kind for kind, _ in CASES])
def test_gymnasium_make_builds_the_library_environment_after_the_import(kind, params):
    out = _run(f"""
        import warnings
        import gymnasium
        import impactbandits.gym

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # Gymnasium's checker wrapper warns on a bad env
            env = gymnasium.make("impactbandits/{kind}-v0", **{params!r})
            theirs = play(env, seed=5)
        assert env.spec.id == "impactbandits/{kind}-v0", env.spec.id
        native = impactbandits.gym.make("{kind}", **{params!r})
        assert type(env.unwrapped) is type(native)
        assert env.unwrapped.horizon == native.horizon
        assert same(theirs, play(native, seed=5))
        assert not same(play(env, seed=6), theirs)  # the seed matters: the comparison can fail
        print("equal")
    """)
    assert out.strip() == "equal"


@pytest.mark.parametrize(
    "module", ["impactbandits.gym", "impactbandits.gym.registered"], ids=["package", "former"]
)
def test_the_module_id_form_imports_and_registers(module):
    out = _run(f"""
        import gymnasium
        env_id = "impactbandits/bernoulli-v0"
        assert env_id not in gymnasium.registry  # nothing registered before gymnasium.make
        env = gymnasium.make("{module}:" + env_id, means=[0.1, 0.9, 0.5], horizon=50)
        assert env.spec.id == env_id, env.spec.id
        from impactbandits.gym import make
        native = make("bernoulli", means=[0.1, 0.9, 0.5], horizon=50)
        assert same(play(env, seed=2), play(native, seed=2))
        print("equal")
    """)
    assert out.strip() == "equal"


@pytest.mark.parametrize(("kind", "params"), CASES, ids=[kind for kind, _ in CASES])
def test_make_sets_the_spec_and_passes_the_checker_without_warnings(kind, params):
    out = _run(f"""
        import warnings
        from gymnasium.utils.env_checker import check_env
        from impactbandits.gym import make

        env = make("{kind}", project_actions=False, **{params!r})
        spec = env.spec
        assert spec is not None
        assert spec.id == "impactbandits/{kind}-v0", spec.id
        assert spec.entry_point == "impactbandits.gym.env:make"
        assert spec.kwargs == {{"kind": "{kind}", **{params!r}}}, spec.kwargs
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env)  # every check: the render and close checks use the spec
        assert not caught, [str(w.message) for w in caught]
        again = spec.make()  # the spec builds the same environment
        assert type(again) is type(env) and again.spec == spec
        assert same(play(again, seed=3), play(env, seed=3))
        print("checked")
    """)
    assert out.strip() == "checked"
