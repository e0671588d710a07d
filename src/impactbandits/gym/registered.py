"""The name Gymnasium's ``"module:id"`` form used before :mod:`impactbandits.gym` registered
its ids on import: ``gymnasium.make("impactbandits.gym.registered:impactbandits/<kind>-v0",
...)`` keeps working (importing this module imports :mod:`impactbandits.gym`, which registers
every ``impactbandits/<kind>-v0`` id). New code names the package itself,
``"impactbandits.gym:impactbandits/<kind>-v0"``, or imports it
(:mod:`impactbandits.gym.registration`).
"""

from __future__ import annotations

import impactbandits.gym  # noqa: F401  # registers the ids

__all__: list[str] = []
