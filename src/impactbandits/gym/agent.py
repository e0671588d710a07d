"""A library policy as a Gymnasium agent: it reads observations and returns actions, with the
random stream the runner would give it, so that it makes the runner's choices.

The runner keys a policy's stream by the root seed, the (environment, policy) contents of the
spec and the replication (:func:`~impactbandits.experiments.cells.expand`):
``BatchRNG.from_key(seed, (policy_key, POLICY), [replication])`` with ``policy_key =
stable_key(canonical_json([environment.content(), policy.content()]))``. :class:`LibraryAgent`
computes the same key from its :class:`~impactbandits.gym.env.BanditEnv`'s spec entry and takes
the seed and replication of the environment's current episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from impactbandits.core.policy import Policy
from impactbandits.core.random import POLICY, BatchRNG, stable_key
from impactbandits.errors import SpecError
from impactbandits.experiments.spec import ComponentSpec, canonical_json
from impactbandits.gym.env import BanditEnv

__all__ = ["LibraryAgent", "policy_component"]


def policy_component(table: Mapping[str, Any] | str) -> ComponentSpec:
    """A policy as a spec's ``[[policies]]`` entry (a name, or a table with ``kind`` and its
    parameters), validated exactly as the spec validates it."""
    from impactbandits.experiments.spec import component_spec

    data = {"kind": table} if isinstance(table, str) else dict(table)
    return component_spec("policy", data, "policy")


class LibraryAgent:
    """Plays a library policy through a :class:`~impactbandits.gym.env.BanditEnv`.

    ``policy``: a registered name (``"ucb1"``) or a spec table (``{"kind": "spo",
    "noise_bound": 0.1}``). ``key``: the policy's stream key when the environment was not
    built from a spec (default: the runner's key, from both spec entries).

    Per episode: ``env.reset(...)``, then :meth:`reset`, then rounds of ``action =
    agent.act()``, ``observation, … = env.step(action)``, ``agent.observe(observation)``.
    """

    def __init__(
        self, env: BanditEnv, policy: Mapping[str, Any] | str, *, key: int | None = None
    ) -> None:
        from impactbandits.registry import build_policy

        self.env = env
        self.component = policy_component(policy)
        self.policy: Policy = build_policy(self.component.kind, self.component.params)
        kind = env.bandit.action_space.kind
        if kind not in self.policy.action_kinds:
            raise SpecError(
                "policy.kind",
                f"{self.component.kind!r} plays {', '.join(self.policy.action_kinds)} actions "
                f"but the environment has {kind} actions",
            )
        if key is None:
            if env.component is None:
                raise SpecError(
                    "key",
                    "the environment was not built from a spec (use make() or "
                    "BanditEnv.from_spec()), so give the policy's stream key",
                )
            key = stable_key(canonical_json([env.component.content(), self.component.content()]))
        self.key = int(key)
        self._last: np.ndarray | None = None

    def reset(self, horizon: int | None = None) -> None:
        """Start the policy on the environment's current episode (call after ``env.reset``).
        A horizon-aware policy is told ``horizon`` (default: the environment's horizon), an
        anytime policy nothing, as in the runner."""
        random = self.env.random
        if random is None:
            raise SpecError("reset", "reset the environment first")
        told = None
        if self.policy.requires_horizon:
            told = horizon if horizon is not None else self.env.horizon
            if told is None:
                raise SpecError(
                    "horizon", f"{self.component.kind!r} needs the horizon: give it to reset()"
                )
        rng = BatchRNG.from_key(random.entropy, (self.key, POLICY), random.replications)
        self.policy.reset(self.env.bandit.action_space, told, rng)
        self._last = None

    def act(self) -> Any:
        """The policy's next action, in the Gymnasium form (an ``int`` arm, or a float vector
        for simplex actions)."""
        space = self.env.bandit.action_space
        self._last = space.check(self.policy.select(), 1)
        action = self._last[0]
        return int(action) if space.kind == "discrete" else np.array(action, dtype=float)

    def observe(self, observation: Mapping[str, np.ndarray]) -> None:
        """Let the policy learn from the observation of the round just played."""
        if self._last is None:
            raise SpecError("observe", "call act() before observe()")
        self.policy.update(self._last, self.env.feedback(observation))
        self._last = None
