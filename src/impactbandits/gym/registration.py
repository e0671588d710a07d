"""Gymnasium ids for the library's environments, registered on request (never at import).

Two ways to use them, both without touching Gymnasium's registry at import of
:mod:`impactbandits` or :mod:`impactbandits.gym` (the library has no import-time side effects):

* name the module :mod:`impactbandits.gym.registered` in Gymnasium's ``"module:id"`` form,
  ``gymnasium.make("impactbandits.gym.registered:impactbandits/single-peaked-v0", instance=1)``:
  :func:`gymnasium.make` imports that module, whose import calls :func:`register_envs`;
* or call :func:`register_envs` yourself, then ``gymnasium.make("impactbandits/<kind>-v0", ...)``.

Nothing is registered on install: Gymnasium 1.x has no plugin entry points (the
``gymnasium.envs`` entry-point group that Gymnasium 0.x loaded was removed in 1.0); the
``"module:id"`` form, as in ``gymnasium.make("ale_py:ALE/Pong-v5")``, is its replacement.
"""

from __future__ import annotations

from collections.abc import Iterable

import gymnasium

__all__ = ["ENV_ID", "register_envs"]

#: The Gymnasium id of a registered environment kind.
ENV_ID = "impactbandits/{kind}-v0"


def register_envs(kinds: Iterable[str] | None = None) -> list[str]:
    """Register ``impactbandits/<kind>-v0`` with Gymnasium for every registered environment
    kind (or only ``kinds``) and return the ids. Idempotent. The id's keyword arguments are
    :func:`~impactbandits.gym.env.make`'s: ``gymnasium.make("impactbandits/bernoulli-v0",
    means=[0.2, 0.8], horizon=100)``. Importing :mod:`impactbandits.gym.registered` calls it,
    which is what ``gymnasium.make("impactbandits.gym.registered:impactbandits/<kind>-v0",
    ...)`` relies on."""
    from impactbandits.errors import SpecError
    from impactbandits.registry import ENVIRONMENTS

    chosen = list(ENVIRONMENTS) if kinds is None else list(kinds)
    unknown = [kind for kind in chosen if kind not in ENVIRONMENTS]
    if unknown:
        allowed = ", ".join(sorted(ENVIRONMENTS))
        raise SpecError("kinds", f"unknown environment {unknown[0]!r}; allowed: {allowed}")
    ids = []
    for kind in chosen:
        env_id = ENV_ID.format(kind=kind)
        if env_id not in gymnasium.registry:
            gymnasium.register(
                id=env_id, entry_point="impactbandits.gym.env:make", kwargs={"kind": kind}
            )
        ids.append(env_id)
    return ids
