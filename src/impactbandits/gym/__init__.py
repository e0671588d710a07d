"""Gymnasium adapters (``pip install 'impactbandits[gym]'``): every environment of the library as
a :class:`gymnasium.Env`, one replication per Gymnasium environment.

    >>> from impactbandits.gym import make
    >>> env = make("single-peaked", instance=1, noise="gaussian", sigma=0.05, horizon=1000)
    >>> observation, info = env.reset(seed=7)
    >>> observation, reward, terminated, truncated, info = env.step(0)
    >>> float(observation["reward"][0]) == reward, info["round"]
    (True, 1)

The mapping (:class:`~impactbandits.gym.env.BanditEnv`; :func:`make` builds one from a
registered name and a spec's parameters):

* **actions** — ``Discrete(K)`` for arms. Tang et al.'s meta-arms (``impact``: a probability
  vector over K groups, :class:`~impactbandits.core.spaces.Simplex`) are a
  :class:`~impactbandits.gym.simplex.SimplexBox`: a ``Box(0, 1, (K,), float64)`` whose members
  (and samples) are the points of the simplex — of its ε-grid when the environment has
  ``resolution``. A vector off the simplex is refused with a
  :class:`~impactbandits.errors.SpecError` saying why (field ``action``), as is an arm out of
  range or a non-integer arm; ``project_actions=True`` projects any vector onto the simplex
  instead (for agents whose outputs are unconstrained).
* **observations** — what the learner may see after a round (the library's
  :class:`~impactbandits.core.feedback.Feedback`), a ``Dict``: ``reward`` (shape ``(1,)``);
  for semi-bandit feedback (``impact``) ``observed`` (one value per group) with
  ``observed_mask`` (1 where the group was observed); for rested bandits with
  ``noise_draws = "per-evaluation"`` ``reevaluated`` ``(K, 5)`` with ``reevaluated_mask``.
  The other families (stationary, rested, restless, rising, rotting, ``opportunity``,
  ``delayed``) give their learner the reward alone. Masked entries are 0; the observation of
  ``reset`` is all zeros. :meth:`BanditEnv.feedback <impactbandits.gym.env.BanditEnv.feedback>`
  turns an observation back into the exact Feedback, and
  :class:`~impactbandits.gym.agent.LibraryAgent` plays a library policy through it. What the
  learner is told once (Ron et al.'s fairness function, the delayed bandit's ranking, Tang et
  al.'s γ) is ``env.known``.
* **reward** — the observed (realised) reward of the round.
* **info** — the truth, which a learner should not read: ``expected_reward`` (the expected
  reward of the action played, in the state before the round: the runner's pseudo-reward),
  ``expected_rewards`` (of every arm in that state, for discrete actions; ``reset`` gives those
  of round 1) or ``action`` (the vector played, simplex actions), and ``round``.
  :meth:`BanditEnv.optimum <impactbandits.gym.env.BanditEnv.optimum>` is the oracle's value for
  the episode's instance (regret = optimum − Σ ``expected_reward``).
* **episodes** — ``terminated`` is always false (a bandit never ends); ``truncated`` becomes
  true after ``horizon`` rounds (checked with the environment's ``check_horizon``; default the
  most rounds the environment allows, e.g. a rested bandit's curve length, or no limit).

**Seeding.** The runner (:mod:`impactbandits.experiments`) plays replication ``r`` (the
``seed`` column of its results, ``0 .. seeds − 1``) of an environment entry ``E`` of a spec with
root ``seed = s`` with the random sources ``EnvironmentRandom(s, E.content_key(), [r])``
(:func:`~impactbandits.experiments.worker.run_task`): instance draws and reward noise depend
only on ``s``, the entry's content (kind, validated parameters, oracle) and ``r``. The adapter
uses exactly these:

* ``env.reset(seed=s)`` is replication 0 of root seed ``s``; ``options={"replication": r}``
  picks replication ``r``;
* ``env.reset()`` without a seed continues with the next replication of the same root seed, so
  ``N`` episodes after ``reset(seed=s)`` replay the runner's seeds ``0 .. N − 1`` (with no
  seed ever given, the root is drawn once from Gymnasium's ``np_random``);
* ``info`` of ``reset`` says which: ``seed`` (the root) and ``replication``.

For an environment built from the registry (:func:`make`, :meth:`BanditEnv.from_spec
<impactbandits.gym.env.BanditEnv.from_spec>`) the key is the spec entry's content key, so the
noise, and with :class:`~impactbandits.gym.agent.LibraryAgent` the policy's choices, are the
runner's bit for bit. A bare environment (``BanditEnv(env, key=k)``) draws
``EnvironmentRandom(s, k, [r])``, which is what :func:`~impactbandits.core.simulate.simulate`
draws when given those sources.

**Gymnasium ids.** Importing this package registers every environment kind with Gymnasium as
``impactbandits/<kind>-v0`` (:func:`register_envs`), as Gymnasium's plug-in packages do
(``import ale_py; gymnasium.register_envs(ale_py)``); the id's keyword arguments are
:func:`make`'s::

    import gymnasium
    import impactbandits.gym

    gymnasium.register_envs(impactbandits.gym)  # a no-op: tells linters the import is used
    env = gymnasium.make(
        "impactbandits/single-peaked-v0", instance=1, noise="gaussian", sigma=0.05, horizon=1000
    )

Gymnasium's ``"module:id"`` form imports the package itself:
``gymnasium.make("impactbandits.gym:impactbandits/single-peaked-v0", ...)``. Importing
:mod:`impactbandits` alone registers nothing. An environment from :func:`make` carries its
``spec`` (id ``impactbandits/<kind>-v0`` and the keyword arguments it was made with), as one
from :func:`gymnasium.make` does: ``env.spec.make()`` builds it again, and Gymnasium's
``check_env`` can test it fully.
"""

# examples/gym_policy.py (run by tests/test_gym.py) checks that a library policy played through
# the adapter gets the runner's numbers bit for bit (the module docstring's "Seeding").

from __future__ import annotations

try:
    import gymnasium  # noqa: F401  # the optional dependency, checked once here
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        "impactbandits.gym needs gymnasium: pip install 'impactbandits[gym]'"
    ) from exc

from impactbandits.gym.agent import LibraryAgent, policy_component
from impactbandits.gym.env import BanditEnv, environment_component, make
from impactbandits.gym.registration import ENV_ID, register_envs
from impactbandits.gym.simplex import SimplexBox, project_to_simplex

__all__ = [
    "ENV_ID",
    "BanditEnv",
    "LibraryAgent",
    "SimplexBox",
    "environment_component",
    "make",
    "policy_component",
    "project_to_simplex",
    "register_envs",
]

register_envs()  # the ids, as the module docstring says
