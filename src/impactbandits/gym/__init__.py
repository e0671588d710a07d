"""Gymnasium adapters (``pip install impactbandits[gym]``): every environment of the library as a
:class:`gymnasium.Env`, one replication per Gymnasium environment.

>>> from impactbandits.gym import make
>>> env = make("single-peaked", instance=1, noise="gaussian", sigma=0.05)
>>> observation, info = env.reset(seed=7)
>>> observation, reward, terminated, truncated, info = env.step(0)

The mapping:

* **actions** — ``Discrete(K)`` for arms; for Tang et al.'s meta-arms (a probability vector over
  K groups, :class:`~impactbandits.core.spaces.Simplex`) ``Box(0, 1, (K,))``: a vector is
  normalised to sum to 1 (all zeros: uniform) and, on an ε-grid, rounded to it (largest
  remainders), so any sample of the box is a valid action; ``strict=True`` refuses vectors off
  the simplex instead;
* **observations** — what the learner may see after a round, a ``Dict``: ``reward`` (shape
  ``(1,)``); for semi-bandit feedback ``observed`` (one value per group, 0 where nothing was
  observed) and ``observed_mask``; for rested bandits with per-evaluation noise ``reevaluated``.
  :meth:`BanditEnv.feedback` turns an observation back into the library's
  :class:`~impactbandits.core.feedback.Feedback`, so library policies run through Gymnasium;
* **info** — the truth, which no policy should read: ``expected_reward`` of the action played
  (before the round), ``expected_rewards`` of every arm before the round (where the environment
  has a finite list of actions), and ``round``;
* **episodes** — ``terminated`` is always false (bandits do not end); ``truncated`` is true
  after ``horizon`` rounds (default: the environment's curve length where it has one);
* **seeding** — ``reset(seed=s)`` draws the noise of replication 0 of the library's runs with
  entropy ``s`` and environment key 0, i.e. exactly what
  ``simulate(env, policy, T, …, EnvironmentRandom(s, 0, [0]), …)`` sees
  (:func:`~impactbandits.core.simulate.simulate`); ``options={"key": k, "replication": r}``
  selects another stream. ``reset()`` without a seed continues from Gymnasium's ``np_random``.

:func:`register_envs` registers ``impactbandits/<kind>-v0`` for every registered environment
kind (call it yourself: importing this module registers nothing).
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, ClassVar, SupportsFloat

import numpy as np

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback
from impactbandits.core.spaces import Discrete, Simplex
from impactbandits.errors import SpecError

try:
    import gymnasium
    from gymnasium import spaces
except ImportError as exc:  # pragma: no cover - depends on the optional extra
    raise ImportError(
        "impactbandits.gym needs gymnasium: pip install 'impactbandits[gym]'"
    ) from exc

__all__ = ["BanditEnv", "make", "register_envs"]

_BIG = 1e12


def _project(vector: np.ndarray, n: int, resolution: int | None) -> np.ndarray:
    """A point of the simplex (on the ε-grid if ``resolution``) from any vector of length n."""
    x = np.clip(np.nan_to_num(np.asarray(vector, dtype=float).reshape(n)), 0.0, None)
    total = x.sum()
    p = x / total if total > 0 else np.full(n, 1.0 / n)
    if resolution is None:
        return p
    scaled = p * resolution
    units = np.floor(scaled).astype(np.int64)
    missing = int(resolution - units.sum())
    order = np.argsort(-(scaled - units), kind="stable")
    units[order[:missing]] += 1
    return units / resolution


class BanditEnv(gymnasium.Env):  # type: ignore[misc]
    """One replication of a library :class:`~impactbandits.core.environment.Environment` as a
    Gymnasium environment (module docstring). ``horizon``: rounds before ``truncated`` (default:
    the environment's ``length`` if it has one, else never)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, env: Environment, horizon: int | None = None, strict: bool = False):
        self.env = env
        self.strict = strict
        self.horizon = horizon if horizon is not None else getattr(env, "length", None)
        space = env.action_space
        self._space = space
        if isinstance(space, Discrete):
            self.action_space = spaces.Discrete(space.n)
        elif isinstance(space, Simplex):
            self.action_space = spaces.Box(0.0, 1.0, (space.n,), dtype=np.float64)
        else:  # pragma: no cover - every built-in space is one of the two
            raise SpecError("environment", f"no Gymnasium space for {type(space).__name__}")
        self._fields = self._probe()
        layout: dict[str, spaces.Space[Any]] = {
            "reward": spaces.Box(-_BIG, _BIG, (1,), dtype=np.float64)
        }
        if "observed" in self._fields:
            shape = self._fields["observed"]
            layout["observed"] = spaces.Box(-_BIG, _BIG, shape, dtype=np.float64)
            layout["observed_mask"] = spaces.MultiBinary(shape)
        if "reevaluated" in self._fields:
            shape = self._fields["reevaluated"]
            layout["reevaluated"] = spaces.Box(-_BIG, _BIG, shape, dtype=np.float64)
        self.observation_space = spaces.Dict(layout)
        self._round = 0
        self._ready = False

    def _probe(self) -> dict[str, tuple[int, ...]]:
        """Shapes of the optional feedback fields, from one round of a throwaway copy."""
        trial = copy.deepcopy(self.env)
        trial.reset(EnvironmentRandom(0, 0, [0]))
        outcome = trial.step(self._valid(self._first_action())[None])
        fields = {}
        for name in ("observed", "reevaluated"):
            value = getattr(outcome.feedback, name)
            if value is not None:
                fields[name] = tuple(np.asarray(value).shape[1:])
        return fields

    def _first_action(self) -> Any:
        if isinstance(self._space, Discrete):
            return 0
        return np.eye(self._space.n)[0]  # a vertex: on every ε-grid

    def _valid(self, action: Any) -> np.ndarray:
        space = self._space
        if isinstance(space, Discrete):
            value = np.asarray(action)
            if value.size != 1 or not np.issubdtype(value.dtype, np.integer):
                raise SpecError(
                    "action", f"must be an integer arm in 0..{space.n - 1}, got {action!r}"
                )
            arm = int(value.reshape(()))
            if not 0 <= arm < space.n:
                raise SpecError("action", f"must be an arm in 0..{space.n - 1}, got {arm}")
            return np.asarray(arm, dtype=np.int64)
        assert isinstance(space, Simplex)
        vector = np.asarray(action, dtype=float)
        if vector.shape != (space.n,):
            raise SpecError("action", f"must be a vector of length {space.n}, got {vector.shape}")
        if self.strict:
            return space.validate(vector[None], 1)[0]
        return _project(vector, space.n, space.resolution)

    def _observation(self, feedback: Feedback | None) -> dict[str, np.ndarray]:
        out = {"reward": np.zeros(1)}
        if feedback is not None:
            out["reward"] = np.asarray(feedback.reward, dtype=float).reshape(1)
        if "observed" in self._fields:
            shape = self._fields["observed"]
            seen = np.zeros(shape) if feedback is None else np.asarray(feedback.observed)[0]
            mask = ~np.isnan(seen)
            out["observed"] = np.where(mask, seen, 0.0).astype(float)
            out["observed_mask"] = (
                mask.astype(np.int8) if feedback is not None else np.zeros(shape, dtype=np.int8)
            )
        if "reevaluated" in self._fields:
            shape = self._fields["reevaluated"]
            again = np.zeros(shape) if feedback is None else np.asarray(feedback.reevaluated)[0]
            out["reevaluated"] = np.nan_to_num(again, nan=0.0).astype(float)
        return out

    def feedback(self, observation: dict[str, np.ndarray]) -> Feedback:
        """The library :class:`~impactbandits.core.feedback.Feedback` (batch of one) of an
        observation: how a library policy learns through this adapter."""
        observed = None
        if "observed" in observation:
            mask = np.asarray(observation["observed_mask"], dtype=bool)
            observed = np.where(mask, observation["observed"], np.nan)[None]
        again = observation.get("reevaluated")
        if again is not None:
            again = np.asarray(again)[None]
        return Feedback(np.asarray(observation["reward"], dtype=float), observed, again)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        entropy = seed if seed is not None else int(self.np_random.integers(2**63))
        key = int(options.get("key", 0))
        replication = int(options.get("replication", 0))
        self.env.reset(EnvironmentRandom(entropy, key, [replication]))
        self._round = 0
        self._ready = True
        return self._observation(None), {"round": 0}

    def step(
        self, action: Any
    ) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        if not self._ready:
            raise SpecError("reset", "call reset() before step()")
        chosen = self._valid(action)
        info: dict[str, Any] = {"round": self._round + 1}
        if isinstance(self._space, Discrete):
            with contextlib.suppress(NotImplementedError):
                info["expected_rewards"] = np.asarray(self.env.expected_rewards())[0].copy()
        else:
            info["action"] = chosen
        outcome = self.env.step(chosen[None])
        self._round += 1
        info["expected_reward"] = float(np.asarray(outcome.expected)[0])
        truncated = self.horizon is not None and self._round >= self.horizon
        reward = float(np.asarray(outcome.feedback.reward)[0])
        return self._observation(outcome.feedback), reward, False, bool(truncated), info


def make(kind: str, horizon: int | None = None, strict: bool = False, **params: Any) -> BanditEnv:
    """The registered environment ``kind`` (``impactbandits list environments``) built from
    ``params`` (validated like a spec: one-line :class:`~impactbandits.errors.SpecError`)."""
    from impactbandits.registry import build_environment

    return BanditEnv(build_environment(kind, params), horizon=horizon, strict=strict)


def register_envs() -> list[str]:
    """Register ``impactbandits/<kind>-v0`` with Gymnasium for every registered environment kind
    (``gymnasium.make("impactbandits/single-peaked-v0", instance=1)``); returns the ids."""
    from impactbandits.registry import ENVIRONMENTS

    ids = []
    for kind in ENVIRONMENTS:
        env_id = f"impactbandits/{kind}-v0"
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point="impactbandits.gym:make", kwargs={"kind": kind}
            )
        ids.append(env_id)
    return ids
