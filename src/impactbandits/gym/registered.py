"""Importing this module registers every ``impactbandits/<kind>-v0`` id with Gymnasium.

That is its sole purpose: to be named in Gymnasium's ``"module:id"`` form, for which
:func:`gymnasium.make` imports the module before looking the id up. After
``pip install 'impactbandits[gym]'``, no call is needed::

    import gymnasium

    env = gymnasium.make(
        "impactbandits.gym.registered:impactbandits/single-peaked-v0",
        instance=1, noise="gaussian", sigma=0.05, horizon=1000,
    )

The keyword arguments are :func:`impactbandits.gym.make`'s, and the environment is the one it
builds (same observations and rewards under the same seed). Once imported, the plain ids work
too: ``gymnasium.make("impactbandits/bernoulli-v0", means=[0.2, 0.8])``.

Why a module: Gymnasium 1.x has no plugin entry points (the ``gymnasium.envs`` entry-point group
that Gymnasium 0.x loaded was removed in 1.0), and the ``"module:id"`` form — as in
``gymnasium.make("ale_py:ALE/Pong-v5")`` — is its replacement; and the library has no import-time
side effects, so importing :mod:`impactbandits` or :mod:`impactbandits.gym` registers nothing.
This module is the one exception, on purpose: importing it calls
:func:`~impactbandits.gym.registration.register_envs`, which is idempotent, so importing it
again or calling ``register_envs()`` as well is harmless.
"""

from __future__ import annotations

from impactbandits.gym.registration import register_envs

__all__: list[str] = []

register_envs()
