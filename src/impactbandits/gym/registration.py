"""Gymnasium ids for the library's environments, registered on request (never at import)."""

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
            gymnasium.register(
                id=env_id, entry_point="impactbandits.gym.env:make", kwargs={"kind": kind}
            )
        ids.append(env_id)
    return ids
