"""Gymnasium ids without an explicit call: ``gymnasium.make`` with the "module:id" form
``"impactbandits.gym.registered:impactbandits/<kind>-v0"`` imports
:mod:`impactbandits.gym.registered`, whose import registers the ids; importing
:mod:`impactbandits` or :mod:`impactbandits.gym` registers nothing (no import-time side effects).

Each check runs in a fresh interpreter, so that nothing this test process (or another test)
registered can make it pass."""

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
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter; fail with its output if it fails."""
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.parametrize(("kind", "params"), CASES, ids=[kind for kind, _ in CASES])
def test_module_id_form_builds_the_library_environment_without_a_call(kind, params):
    code = f"""
        import math
        import gymnasium
        {textwrap.indent(PLAY, " " * 8).strip()}

        env_id = "impactbandits/{kind}-v0"
        assert env_id not in gymnasium.registry  # nothing registered before gymnasium.make
        env = gymnasium.make("impactbandits.gym.registered:" + env_id, **{params!r})
        assert env.spec.id == env_id, env.spec.id

        from impactbandits.gym import make
        from impactbandits.registry import ENVIRONMENTS
        assert all(f"impactbandits/{{k}}-v0" in gymnasium.registry for k in ENVIRONMENTS)
        native = make("{kind}", **{params!r})
        assert type(env.unwrapped) is type(native)
        assert env.unwrapped.horizon == native.horizon
        theirs, ours = play(env, seed=5), play(native, seed=5)
        assert len(theirs) == len(ours) > 0
        assert all(a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(theirs, ours))
        assert play(env, seed=6) != ours  # the seed matters: the comparison can fail
        print("equal", len(ours))
    """
    assert _run(code).stdout.startswith("equal")


def test_an_environment_made_by_module_id_passes_the_gymnasium_checker():
    code = """
        import warnings
        import gymnasium
        from gymnasium.utils.env_checker import check_env

        env = gymnasium.make(
            "impactbandits.gym.registered:impactbandits/single-peaked-v0",
            instance=1, length=200, noise="gaussian", sigma=0.05,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped, skip_render_check=True)
        assert not [str(w.message) for w in caught if "gymnasium" in w.filename], caught
        print("checked")
    """
    assert _run(code).stdout.strip() == "checked"


def test_importing_the_library_registers_nothing_and_registered_is_idempotent():
    code = """
        import importlib
        import warnings
        import gymnasium
        import impactbandits
        import impactbandits.gym
        import impactbandits.gym.agent, impactbandits.gym.env, impactbandits.gym.registration
        import impactbandits.gym.simplex

        def ours():
            return sorted(i for i in gymnasium.registry if i.startswith("impactbandits/"))

        assert ours() == [], ours()
        from impactbandits.registry import ENVIRONMENTS
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import impactbandits.gym.registered
            first = ours()
            importlib.reload(impactbandits.gym.registered)  # imported again: the same ids
            impactbandits.gym.register_envs()  # and an explicit call as well
        assert first == sorted(f"impactbandits/{kind}-v0" for kind in ENVIRONMENTS), first
        assert ours() == first
        assert not [str(w.message) for w in caught], [str(w.message) for w in caught]
        print(len(first))
    """
    assert int(_run(code).stdout) > 10
