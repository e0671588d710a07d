"""Gymnasium ids for the library's environments: ``impactbandits/<kind>-v0``.

Importing :mod:`impactbandits.gym` registers them all (it calls :func:`register_envs`), as
Gymnasium's plug-in packages do::

    import gymnasium
    import impactbandits.gym

    gymnasium.register_envs(impactbandits.gym)  # a no-op: tells linters the import is used
    env = gymnasium.make("impactbandits/single-peaked-v0", instance=1)

Gymnasium's ``"module:id"`` form does the import itself:
``gymnasium.make("impactbandits.gym:impactbandits/single-peaked-v0", instance=1)``. Importing
:mod:`impactbandits` alone registers nothing (Gymnasium is an optional dependency, and the
library's own import has no side effects). Nothing is registered on install: Gymnasium 1.x has
no plug-in entry points (the ``gymnasium.envs`` entry-point group of Gymnasium 0.x was removed
in 1.0).
"""

from __future__ import annotations

from collections.abc import Iterable

import gymnasium

__all__ = ["ENTRY_POINT", "ENV_ID", "register_envs"]

#: The Gymnasium id of a registered environment kind.
ENV_ID = "impactbandits/{kind}-v0"
#: What Gymnasium calls to build one: :func:`impactbandits.gym.make`, with ``kind`` among the
#: keyword arguments.
ENTRY_POINT = "impactbandits.gym.env:make"


def register_envs(kinds: Iterable[str] | None = None) -> list[str]:
    """Register ``impactbandits/<kind>-v0`` with Gymnasium for every registered environment
    kind (or only ``kinds``) and return the ids. Idempotent; importing :mod:`impactbandits.gym`
    has already called it for every kind. The id's keyword arguments are
    :func:`~impactbandits.gym.env.make`'s: ``gymnasium.make("impactbandits/bernoulli-v0",
    means=[0.2, 0.8], horizon=100)``."""
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
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"kind": kind})
        ids.append(env_id)
    return ids
