"""One replication of a library environment as a :class:`gymnasium.Env` (see the package
docstring, :mod:`impactbandits.gym`, for the mapping and the seeding correspondence)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from impactbandits.core.environment import Environment, EnvironmentRandom
from impactbandits.core.feedback import Feedback
from impactbandits.core.spaces import ActionSpace, Discrete, Simplex
from impactbandits.errors import SpecError
from impactbandits.experiments.spec import ComponentSpec
from impactbandits.gym.registration import ENTRY_POINT, ENV_ID
from impactbandits.gym.simplex import SimplexBox, project_to_simplex

__all__ = ["MAX_HORIZON", "OBSERVATION_BOUND", "BanditEnv", "environment_component", "make"]

#: Largest horizon probed when the environment limits the rounds (the specs' own limit).
MAX_HORIZON = 10**9
#: Bound of the observation boxes: every reward of the library's environments, noise included,
#: is far inside; finite, so that Gymnasium's checker accepts the spaces without warnings.
OBSERVATION_BOUND = 1e12
#: ``oracle`` argument of :class:`BanditEnv`: the environment class's ``default_oracle``.
DEFAULT_ORACLE = "default"
_ROOT_SEEDS = 2**63  # ExperimentSpec.seed: 0 .. 2**63 − 1


def environment_component(table: Mapping[str, Any]) -> ComponentSpec:
    """An environment table as a spec holds it (``kind``, parameters inline or under
    ``params``, optional ``oracle``), validated exactly as ``[[environments]]`` entries are:
    its :meth:`~impactbandits.experiments.spec.ComponentSpec.content_key` is the key of the
    environment's random streams in the runner. Errors are one-line
    :class:`~impactbandits.errors.SpecError` naming ``environment.<field>``."""
    # the spec's own constructor of components, so that the content (and hence the keys of the
    # random streams) is the runner's by construction
    from impactbandits.experiments.spec import component_spec

    return component_spec("environment", dict(table), "environment")


def _largest_horizon(env: Environment) -> int | None:
    """The most rounds :meth:`Environment.check_horizon` accepts (``None``: no limit below
    :data:`MAX_HORIZON`), by bisection."""
    try:
        env.check_horizon(MAX_HORIZON)
        return None
    except SpecError:
        pass
    low, high = 0, MAX_HORIZON  # check_horizon(low) passes (0 rounds), check_horizon(high) fails
    while high - low > 1:
        middle = (low + high) // 2
        try:
            env.check_horizon(middle)
            low = middle
        except SpecError:
            high = middle
    return low


class BanditEnv(gymnasium.Env[dict[str, np.ndarray], Any]):
    """One replication of a library :class:`~impactbandits.core.environment.Environment`.

    ``env``: the library environment (batched; the adapter plays one replication of it).
    ``horizon``: rounds per episode, after which ``step`` returns ``truncated = True``; checked
    with the environment's ``check_horizon`` (a too long horizon is a
    :class:`~impactbandits.errors.SpecError`); default: the most rounds the environment allows
    (a rested bandit's curve length), or no limit. ``key``: the environment key of the random
    streams, what the runner derives from the environment's spec (:meth:`from_spec` and
    :func:`make` set it; for a bare environment ``reset(seed=s)`` is then
    ``EnvironmentRandom(s, key, [replication])``). ``oracle``: name of the exact benchmark used
    by :meth:`optimum` (default: the environment's ``default_oracle``; ``None``: none).
    ``project_actions``: for simplex actions, map any vector of the box onto the simplex
    (:func:`~impactbandits.gym.simplex.project_to_simplex`) instead of refusing vectors off it.

    Attributes: :attr:`bandit` (the library environment), :attr:`component` (its spec entry,
    when built from one), :attr:`key`, :attr:`horizon`, :attr:`oracle`.
    """

    metadata = {"render_modes": []}  # noqa: RUF012 - gymnasium.Env declares it per instance

    def __init__(
        self,
        env: Environment,
        *,
        horizon: int | None = None,
        key: int = 0,
        oracle: str | None = DEFAULT_ORACLE,
        project_actions: bool = False,
    ) -> None:
        if not isinstance(env, Environment):
            raise SpecError(
                "environment",
                f"expected a library Environment, got {type(env).__name__} "
                "(build one with impactbandits.registry.build_environment or use make())",
            )
        self.bandit = env
        self.component: ComponentSpec | None = None
        self.key = int(key)
        self.oracle = getattr(env, "default_oracle", None) if oracle == DEFAULT_ORACLE else oracle
        self.project_actions = bool(project_actions)
        self._pristine = copy.deepcopy(env)  # never reset: the oracle's and the probe's copies
        if horizon is None:
            self.horizon = _largest_horizon(env)
        else:
            if not isinstance(horizon, int | np.integer) or isinstance(horizon, bool):
                raise SpecError("horizon", f"must be a positive integer, got {horizon!r}")
            if not 1 <= horizon <= MAX_HORIZON:
                raise SpecError("horizon", f"must be between 1 and {MAX_HORIZON}, got {horizon}")
            env.check_horizon(int(horizon))
            self.horizon = int(horizon)
        self._space: ActionSpace = env.action_space
        self.action_space = self._gym_action_space(self._space)
        self._fields, self._finite = self._probe()
        # gymnasium types a Dict space's elements as dict[str, Space]: they are dicts of arrays
        self.observation_space = self._observation_space()  # type: ignore[assignment]
        self._root: int | None = None
        self._random: EnvironmentRandom | None = None
        self._round = 0

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def from_spec(
        cls,
        table: Mapping[str, Any] | ComponentSpec,
        *,
        horizon: int | None = None,
        project_actions: bool = False,
    ) -> BanditEnv:
        """The environment of a spec's ``[[environments]]`` entry (a mapping, or a validated
        :class:`~impactbandits.experiments.spec.ComponentSpec`), keyed like the runner keys it:
        ``reset(seed=s)`` then replays the runner's noise for ``seed = s``."""
        component = table if isinstance(table, ComponentSpec) else environment_component(table)
        from impactbandits.registry import build_environment

        env = build_environment(component.kind, component.params)
        adapter = cls(
            env,
            horizon=horizon,
            key=component.content_key(),
            oracle=component.oracle,
            project_actions=project_actions,
        )
        adapter.component = component
        return adapter

    @staticmethod
    def _gym_action_space(space: ActionSpace) -> spaces.Space[Any]:
        if isinstance(space, Discrete):
            return spaces.Discrete(space.n)
        if isinstance(space, Simplex):
            return SimplexBox(space.n, space.resolution)
        raise SpecError(  # every built-in environment has one of the two
            "environment",
            f"no Gymnasium space for the action space {type(space).__name__} "
            "(supported: Discrete, Simplex)",
        )

    def _first_action(self) -> np.ndarray:
        if isinstance(self._space, Discrete):
            return np.zeros(1, dtype=np.int64)
        return np.eye(self._space.n)[:1]  # a vertex: on every ε-grid

    def _probe(self) -> tuple[dict[str, tuple[int, ...]], bool]:
        """Shapes of the feedback's optional fields (``observed``, ``reevaluated``) and whether
        ``expected_rewards()`` is defined, from one round of a throwaway copy."""
        trial = copy.deepcopy(self._pristine)
        trial.reset(EnvironmentRandom(0, self.key, [0]))
        finite = isinstance(self._space, Discrete)
        if finite:
            try:
                trial.expected_rewards()
            except NotImplementedError:
                finite = False
        outcome = trial.step(self._first_action())
        fields = {}
        for name in ("observed", "reevaluated"):
            value = getattr(outcome.feedback, name)
            if value is not None:
                fields[name] = tuple(np.asarray(value).shape[1:])
        return fields, finite

    def _observation_space(self) -> spaces.Dict:
        bound = OBSERVATION_BOUND
        layout: dict[str, spaces.Space[Any]] = {
            "reward": spaces.Box(-bound, bound, (1,), dtype=np.float64)
        }
        for name, shape in self._fields.items():
            layout[name] = spaces.Box(-bound, bound, shape, dtype=np.float64)
            layout[f"{name}_mask"] = spaces.MultiBinary(list(shape))
        return spaces.Dict(layout)

    # ---- what the learner may know --------------------------------------------------------

    @property
    def known(self) -> Mapping[str, Any]:
        """What the paper's learner is told besides the actions (the action space's ``known``:
        Ron et al.'s fairness function and transfer costs, the delayed bandit's ranking, Tang et
        al.'s γ and feedback mode; empty for most families), read-only."""
        return MappingProxyType(dict(self._space.known))

    @property
    def random(self) -> EnvironmentRandom | None:
        """The random sources of the current episode (``None`` before the first reset):
        ``entropy`` is the root seed, ``replications[0]`` the replication."""
        return self._random

    def feedback(self, observation: Mapping[str, np.ndarray]) -> Feedback:
        """The library :class:`~impactbandits.core.feedback.Feedback` (a batch of one) that an
        observation encodes, exactly (masked entries become ``NaN`` again): how a library
        policy learns through this adapter."""
        reward = np.asarray(observation["reward"], dtype=float).reshape(1)
        parts: dict[str, np.ndarray | None] = {"observed": None, "reevaluated": None}
        for name in self._fields:
            mask = np.asarray(observation[f"{name}_mask"], dtype=bool)
            parts[name] = np.where(mask, np.asarray(observation[name], dtype=float), np.nan)[None]
        return Feedback(reward, parts["observed"], parts["reevaluated"])

    def _observation(self, feedback: Feedback | None) -> dict[str, np.ndarray]:
        out = {"reward": np.zeros(1)}
        if feedback is not None:
            out["reward"] = np.array(feedback.reward, dtype=np.float64).reshape(1)
        for name, shape in self._fields.items():
            if feedback is None:
                value = np.full(shape, np.nan)
            else:
                value = np.asarray(getattr(feedback, name), dtype=np.float64)[0]
            seen = ~np.isnan(value)
            out[name] = np.where(seen, value, 0.0)
            out[f"{name}_mask"] = seen.astype(np.int8)
        return out

    # ---- actions --------------------------------------------------------------------------

    def _action(self, action: Any) -> np.ndarray:
        """A batch of one action in the library's canonical form, or a clear SpecError."""
        space = self._space
        if isinstance(space, Discrete):
            value = np.asarray(action)
            if value.size != 1 or value.ndim > 1 or not np.issubdtype(value.dtype, np.integer):
                raise SpecError(
                    "action",
                    f"must be one integer arm index in 0..{space.n - 1}, got {action!r}",
                )
            arm = int(value.reshape(()))
            if not 0 <= arm < space.n:
                raise SpecError("action", f"arm {arm} does not exist; arms are 0..{space.n - 1}")
            return np.array([arm], dtype=np.int64)
        assert isinstance(space, Simplex)
        if self.project_actions:
            return project_to_simplex(action, space.n, space.resolution)[None]
        try:
            vector = np.asarray(action, dtype=float)
        except (TypeError, ValueError):
            raise SpecError(
                "action", f"must be a probability vector of length {space.n}, got {action!r}"
            ) from None
        if vector.shape != (space.n,):
            raise SpecError(
                "action",
                f"must be a probability vector of length {space.n}, got shape {vector.shape}",
            )
        try:  # the library's rule, as the runner applies it
            return space.validate(vector[None], 1)
        except SpecError as exc:
            grid = "" if space.resolution is None else f" on the grid of 1/{space.resolution}"
            raise SpecError(
                "action",
                f"{np.array2string(vector, precision=4)} is not a point of the simplex{grid} "
                f"({exc.message}); pass project_actions=True to project actions onto it",
            ) from None

    # ---- the Gymnasium API ----------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start an episode: replication ``options["replication"]`` (default 0) of root seed
        ``seed``; without a seed, the next replication of the last root seed (the first root
        seed, if none was ever given, is drawn from Gymnasium's ``np_random``)."""
        if seed is not None and (
            not isinstance(seed, int | np.integer)
            or isinstance(seed, bool)
            or not 0 <= seed < _ROOT_SEEDS
        ):
            raise SpecError("seed", f"must be an integer in 0..2**63 - 1, got {seed!r}")
        options = dict(options or {})
        unknown = sorted(set(options) - {"replication"})
        if unknown:
            raise SpecError("options", f"unknown option {unknown[0]!r}; allowed: replication")
        super().reset(seed=None if seed is None else int(seed))
        if seed is not None:
            self._root, replication = int(seed), 0
        elif self._root is None or self._random is None:
            self._root, replication = int(self.np_random.integers(_ROOT_SEEDS)), 0
        else:
            replication = self._random.replications[0] + 1
        if "replication" in options:
            given = options["replication"]
            if not isinstance(given, int | np.integer) or isinstance(given, bool) or given < 0:
                raise SpecError(
                    "options.replication", f"must be a non-negative integer, got {given!r}"
                )
            replication = int(given)
        self._random = EnvironmentRandom(self._root, self.key, [replication])
        self.bandit.reset(self._random)
        self._round = 0
        info: dict[str, Any] = {"round": 0, "seed": self._root, "replication": replication}
        if self._finite:
            info["expected_rewards"] = np.array(self.bandit.expected_rewards()[0], dtype=float)
        return self._observation(None), info

    def step(
        self, action: Any
    ) -> tuple[dict[str, np.ndarray], SupportsFloat, bool, bool, dict[str, Any]]:
        """Play one round. ``info``: ``round`` (rounds played), ``expected_reward`` (of the
        action, in the state before the round), ``expected_rewards`` (of every arm in that
        state; discrete actions) or ``action`` (the probability vector played; simplex)."""
        if self._random is None:
            raise SpecError("reset", "call reset() before step()")
        if self.horizon is not None and self._round >= self.horizon:
            raise SpecError(
                "step", f"the episode was truncated after {self.horizon} rounds; call reset()"
            )
        actions = self._action(action)
        info: dict[str, Any] = {"round": self._round + 1}
        if self._finite:
            info["expected_rewards"] = np.array(self.bandit.expected_rewards()[0], dtype=float)
        elif isinstance(self._space, Simplex):
            info["action"] = np.array(actions[0], dtype=float)
        outcome = self.bandit.step(actions)
        self._round += 1
        info["expected_reward"] = float(np.asarray(outcome.expected)[0])
        reward = float(np.asarray(outcome.feedback.reward)[0])
        truncated = self.horizon is not None and self._round >= self.horizon
        return self._observation(outcome.feedback), reward, False, truncated, info

    # ---- the benchmark --------------------------------------------------------------------

    def optimum(self, rounds: int | Sequence[int] | None = None) -> np.ndarray:
        """The oracle's value (:attr:`oracle`) for the current episode's instance at ``rounds``
        (default: the horizon), computed as the runner computes a result's ``optimum``: on a
        fresh copy of the environment reset with the episode's random sources. Regret is this
        minus the cumulative ``expected_reward`` (for families whose regret is on another
        quantity, e.g. utility, see the environment's ``regret_on``)."""
        if self._random is None:
            raise SpecError("reset", "call reset() before optimum()")
        if self.oracle is None:
            raise SpecError("oracle", f"{type(self.bandit).__name__} has no oracle here")
        if rounds is None:
            if self.horizon is None:
                raise SpecError("rounds", "give the rounds: the episode has no horizon")
            rounds = self.horizon
        times = np.atleast_1d(np.asarray(rounds, dtype=np.int64))
        from impactbandits.registry import resolve_oracle

        oracle = resolve_oracle(self.oracle, "oracle")
        fresh = copy.deepcopy(self._pristine)
        fresh.reset(self._random)
        return np.asarray(oracle(fresh, times), dtype=float)[0]


def make(
    kind: str,
    *,
    horizon: int | None = None,
    project_actions: bool = False,
    **table: Any,
) -> BanditEnv:
    """The registered environment ``kind`` (``impactbandits list environments``) with the
    parameters of a spec table: ``make("bernoulli", means=[0.2, 0.8])`` is the environment of
    ``[[environments]] kind = "bernoulli", means = [0.2, 0.8]``, validated the same way
    (:class:`~impactbandits.errors.SpecError` naming the field) and seeded the same way
    (:meth:`BanditEnv.from_spec`). ``oracle`` and a nested ``params`` table are accepted as in
    a spec; an environment parameter named like an argument of this function (the IMAB
    ``horizon``) goes under ``params={...}``.

    The environment's ``spec`` is set as :func:`gymnasium.make` sets it: the id
    ``impactbandits/<kind>-v0`` (:data:`~impactbandits.gym.registration.ENV_ID`), this function
    as the entry point and the keyword arguments given here, so ``env.spec.make()`` builds the
    same environment again."""
    if not isinstance(kind, str) or not kind:
        raise SpecError("environment.kind", f"must be an environment name, got {kind!r}")
    env = BanditEnv.from_spec(
        {"kind": kind, **table}, horizon=horizon, project_actions=project_actions
    )
    given = {
        "kind": kind,
        **({} if horizon is None else {"horizon": horizon}),
        **({"project_actions": True} if project_actions else {}),
        **table,
    }
    env.spec = EnvSpec(
        id=ENV_ID.format(kind=kind),
        entry_point=ENTRY_POINT,
        kwargs=copy.deepcopy(given),
        # what this function returns: the environment itself, no wrapper
        order_enforce=False,
        disable_env_checker=True,
    )
    return env
