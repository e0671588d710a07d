"""The compiled loop in B2DEP's world (:meth:`~impactbandits.envs.delay.DelayedPayoffBandit.
compiled_world`, phases as :attr:`~impactbandits.core.compiled.CompiledStep.phase`) gives the
readable loop's numbers bit for bit on Cella & Cesa-Bianchi's bandit with delay-dependent
payoffs: every Trajectory array
(rewards, expected rewards, pulls, switches, rounds per phase, phase switches) for π_low (δ,
width scales), π_ucb (width scales), UCB1 over the arms and other discrete compiled steps (one
that draws a uniform a round, one that draws from its stream), on fixed and per-replication
delays, with f as a decay and as explicit values, for several seeds, horizons and checkpoints;
π_low's tables equal the readable schedule's numbers; pairs without a compiled form fall back
to the readable loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import CompiledStep, kernel
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.core.simulate import Trajectory
from impactbandits.core.simulate import simulate as simulate_readable
from impactbandits.core.spaces import InvalidAction
from impactbandits.core.world import noise_words
from impactbandits.envs.delay import DelayedPayoffBandit
from impactbandits.experiments.cells import runs_compiled
from impactbandits.kernels import simulate, simulate_compiled
from impactbandits.kernels.build import DELAY_POLICIES, built_in_steps
from impactbandits.kernels.dispatch import compiled_step, compiled_world
from impactbandits.policies.classic import Greedy
from impactbandits.policies.delay import STAGE_TABLE, PiLow, PiUCB, _LowSchedule, stage_count
from impactbandits.registry import build_environment, build_policy

# numba's JIT: the loop is compiled here (the ahead-of-time module may hold no entry for it)
pytestmark = [
    pytest.mark.skipif(not kernels.available(), reason="no compiled loops (numba not installed)"),
    pytest.mark.usefixtures("jit_backend"),
]

FIELDS = ("reward", "expected", "pulls", "switches", "phases", "arm_rewards", "phase_switches")
FIG2_MEANS = [0.0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1.0]
ENVIRONMENTS = {
    # Figure 2: decay, delays drawn per replication
    "fig2": {"means": FIG2_MEANS, "decay": 0.999, "delay_range": [1, 6], "switching_cost": 1.0},
    # Figure 3: explicit f, fixed delays
    "fig3": {"means": [1.0, 13 / 15], "delays": [2, 2], "f": [0.3, 0.25]},
    # explicit f (longer than the delays) with drawn delays, unordered means with ties
    "f-drawn": {
        "means": [0.4, 0.9, 0.4, 0.7, 0.2],
        "f": [0.9, 0.6, 0.5, 0.2, 0.1, 0.05],
        "delay_range": [0, 4],
    },
    # a fast decay with fixed delays, some of them 0
    "decay-fixed": {"means": [0.3, 0.8, 0.6, 0.55], "decay": 0.7, "delays": [0, 3, 5, 1]},
}
POLICIES = [
    ("pi-low", {}),
    ("pi-low", {"delta": 0.01, "width_scale": 0.3}),
    ("pi-low", {"delta": 0.5, "width_scale": 2.0}),
    ("pi-ucb", {}),
    ("pi-ucb", {"width_scale": 0.5}),
    ("pi-ucb", {"width_scale": 0.05}),
    ("ucb1", {}),
    ("exp3", {}),  # one uniform a round (CompiledStep.draws)
    ("thompson", {}),  # its counter-based stream (CompiledStep.stream)
    ("kl-ucb", {}),
]


def both(env_params, kind, params, rounds, reps, checkpoints=None, horizon=None, seed=5):
    """The compiled and the readable Trajectory of one pair (same seeds and streams); the
    compiled one from the compiled loop (asserted)."""
    times = np.arange(1, rounds + 1) if checkpoints is None else np.asarray(checkpoints)
    reps = list(reps)
    runs = []
    for compiled in (True, False):
        env = build_environment("delayed", env_params)
        policy = build_policy(kind, params)
        if horizon is None and policy.requires_horizon:
            horizon = rounds
        env_random = EnvironmentRandom(seed, 17, reps)
        policy_rng = BatchRNG.from_key(seed, (23,), reps)
        if compiled:
            env.reset(env_random)
            policy.reset(env.action_space, horizon, policy_rng)
            done = simulate_compiled(env, policy, rounds, times, len(reps), policy_rng)
            assert done is not None
            runs.append(Trajectory(times, *done))
        else:
            readable = simulate_readable(env, policy, rounds, horizon, times, env_random,
                                         policy_rng)  # fmt: skip
            runs.append(readable)
    return runs


def assert_same(fast: Trajectory, slow: Trajectory) -> None:
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(slow, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape, name
            assert np.array_equal(a, b), name


@pytest.mark.parametrize("env_name", sorted(ENVIRONMENTS))
@pytest.mark.parametrize(("kind", "params"), POLICIES, ids=lambda p: str(p))
def test_every_round_equals_the_readable_loop(env_name, kind, params):
    fast, slow = both(ENVIRONMENTS[env_name], kind, params, rounds=1500, reps=(0, 3, 8))
    assert_same(fast, slow)
    if kind.startswith("pi-"):
        assert fast.phases is not None and fast.phase_switches is not None
    else:
        assert fast.phases is None and fast.phase_switches is None


@pytest.mark.parametrize("seed", [1, 42])
@pytest.mark.parametrize(("kind", "params"), POLICIES[:5] + POLICIES[6:7], ids=lambda p: str(p))
def test_long_runs_with_sparse_checkpoints(seed, kind, params):
    """Many π_low stages (eliminations), many π_ucb selections; uneven checkpoints."""
    checkpoints = [1, 2, 7, 100, 999, 4321, 9_999, 10_000]
    for env_name in ("fig2", "fig3"):
        fast, slow = both(ENVIRONMENTS[env_name], kind, params, rounds=10_000, reps=(2, 11),
                          checkpoints=checkpoints, seed=seed)  # fmt: skip
        assert_same(fast, slow)


@pytest.mark.parametrize(("rounds", "horizon"), [(1, 1), (2, 2), (3, 7), (5000, 60), (900, 3000)])
def test_pi_low_with_any_horizon(rounds, horizon):
    """Horizons shorter and longer than the rounds played: stages beyond the bound S, up to
    and past the end of the stage table."""
    for params in ({}, {"width_scale": 0.2}):
        fast, slow = both(ENVIRONMENTS["fig2"], "pi-low", params, rounds=rounds, reps=(0, 1),
                          horizon=horizon)  # fmt: skip
        assert_same(fast, slow)


def test_one_replication_and_many():
    fast, slow = both(ENVIRONMENTS["fig2"], "pi-ucb", {}, rounds=400, reps=(9,))
    assert_same(fast, slow)
    fast, slow = both(ENVIRONMENTS["f-drawn"], "pi-low", {}, rounds=300, reps=range(40))
    assert_same(fast, slow)


def test_the_stage_table_holds_the_readable_schedule():
    """T_s and C_s as the readable schedule computes them (the formulas before the compiled
    form: unchanged), constant from s = 54 on (1 − 2^{−s} rounds to 1.0), so that reading the
    table's last entry beyond it is exact."""
    cases = ((500_000, 7, 0.1, 1.0), (2, 1, 0.5, 0.3), (12345, 4, 0.01, 2.0))
    for horizon, k, delta, scale in cases:
        low = _LowSchedule(list(range(k)), horizon, delta, scale)
        params = low.compiled_params()
        assert params.size == k + 2 * STAGE_TABLE
        lengths, widths = params[k : k + STAGE_TABLE], params[k + STAGE_TABLE :]
        S = stage_count(horizon, k)
        for s in range(1, STAGE_TABLE + 1):
            length = horizon ** (1.0 - 2.0**-s)  # the readable form's expressions, as they were
            width = scale * math.sqrt(k / (2.0 * length) * math.log(2.0 * k * S / delta))
            assert lengths[s - 1] == length and widths[s - 1] == width
        assert np.all(lengths[53:] == float(horizon)) and np.all(widths[53:] == widths[-1])
        assert low.T_s == lengths[0]


def test_the_figures_learners_have_built_in_entries():
    """The ahead-of-time build holds π_low's, π_ucb's and UCB1's loops in B2DEP's world,
    distinct, the two with phases phasing."""
    entries = built_in_steps()
    delay = {name: parts for name, parts in entries.items()
             if parts[1].init.py_func.__module__ == "impactbandits.envs.delay"}  # fmt: skip
    assert len(delay) == len(DELAY_POLICIES) == 3
    assert sorted(parts[0].phase is not None for parts in delay.values()) == [False, True, True]


class MyPiLow(PiLow):
    """A user's π_low that always plays the best arm: its own select, never the compiled one."""

    def select(self):
        return self.low.order[0]


class MyDelayed(DelayedPayoffBandit):
    """A user's B2DEP whose step is its own: never compiled."""

    def step(self, actions):
        return super().step(actions)


def _reset(env, policy, reps=(0, 1), horizon=100):
    env.reset(EnvironmentRandom(1, 2, list(reps)))
    policy.reset(env.action_space, horizon, BatchRNG.from_key(1, (3,), list(reps)))
    return env, policy


def _compiled(env, policy, reps=(0, 1), horizon=100):
    """Whether the pair, reset, runs on the compiled loop."""
    _reset(env, policy, reps, horizon)
    rng = BatchRNG.from_key(1, (3,), list(reps))
    return simulate_compiled(env, policy, 10, np.array([10]), len(reps), rng) is not None


def test_subclasses_that_change_the_rounds_run_readable():
    env = DelayedPayoffBandit(FIG2_MEANS)
    assert _compiled(env, BatchedSimplePolicy(PiLow()))
    assert not _compiled(env, BatchedSimplePolicy(MyPiLow()))
    run = simulate(env, BatchedSimplePolicy(MyPiLow()), 50, 50, np.array([50]),
                   EnvironmentRandom(1, 2, [0]), BatchRNG.from_key(1, (3,), [0]))  # fmt: skip
    assert run.pulls[0, -1, 6] == 50  # its own select ran
    mine = MyDelayed(FIG2_MEANS)
    assert not _compiled(mine, BatchedSimplePolicy(PiUCB()))
    assert not _compiled(mine, build_policy("ucb1", {}))


class PhaseOfMyOwn(PiUCB):
    """A user's π_ucb that reports other phases: its compiled step is not its parent's."""

    def current_phase(self):
        return 0


def test_a_subclass_that_changes_the_phases_runs_readable():
    env = DelayedPayoffBandit(FIG2_MEANS)
    assert not _compiled(env, BatchedSimplePolicy(PhaseOfMyOwn()))


@kernel
def _phase(state, params):
    return 0


class PhasesWithoutAStep(Greedy):
    """A policy with phases whose step does not report them: it runs readable."""

    phases = ("only",)

    def current_phase(self):
        return np.zeros(self.rng.size, dtype=np.int64)

    def compiled_step(self):
        return CompiledStep(_init, _first, _update, np.zeros(0))


class APhaseWithoutPhases(Greedy):
    """A step that reports a phase for a policy without phases: the loop ignores it."""

    def compiled_step(self):
        return CompiledStep(_init, _first, _update, np.zeros(0), phase=_phase)


def test_phases_run_compiled_only_when_the_step_reports_them():
    env = DelayedPayoffBandit([0.3, 0.7])
    assert not _compiled(env, PhasesWithoutAStep())
    assert _compiled(env, APhaseWithoutPhases())
    run = simulate(env, APhaseWithoutPhases(), 20, None, np.array([20]),
                   EnvironmentRandom(1, 2, [0]), BatchRNG.from_key(1, (3,), [0]))  # fmt: skip
    assert run.phases is None and run.phase_switches is None


def test_ranker_then_low_runs_readable():
    env = DelayedPayoffBandit(FIG2_MEANS, reveal_order=False)
    assert not _compiled(env, build_policy("ranker-low", {}))


@kernel
def _init(params, k, rounds):
    return np.zeros(k)


@kernel
def _out_of_range(state, params, t, u):
    return state.size + 2 if t == 7 else 0


@kernel
def _first(state, params, t, u):
    return 0


@kernel
def _update(state, params, t, arm, reward):
    state[arm] += reward


class Broken(Greedy):
    def compiled_step(self):
        return CompiledStep(_init, _out_of_range, _update, np.zeros(0))


def test_a_compiled_select_returning_no_arm_names_the_round():
    env = DelayedPayoffBandit([0.3, 0.7])
    with pytest.raises(InvalidAction, match=r"round 7: the compiled select\(\) returned 4"):
        simulate(env, Broken(), 20, None, np.array([20]), EnvironmentRandom(1, 2, [0, 1]),
                 BatchRNG.from_key(1, (3,), [0, 1]))  # fmt: skip


def test_the_environment_declares_the_delays_reset_drew():
    env = DelayedPayoffBandit(FIG2_MEANS)
    env.reset(EnvironmentRandom(3, 4, [0, 5, 9]))
    world = compiled_world(env, 100)
    assert world is not None and world.replications == 3
    assert np.array_equal(world.data, env.instance_delays)
    assert np.array_equal(world.noise, noise_words(3, env._noise))
    assert np.array_equal(world.params, np.concatenate([env.means, env.f_values]))


def test_the_scheduler_can_tell_the_pairs_declared():
    """runs_compiled: from the classes alone (the environment not reset)."""
    env = DelayedPayoffBandit(FIG2_MEANS)
    for kind in ("pi-low", "pi-ucb", "ucb1"):
        policy = build_policy(kind, {})
        _reset(env, policy)
        assert compiled_step(policy) is not None
        assert runs_compiled(DelayedPayoffBandit(FIG2_MEANS), policy)
    ranker = build_policy("ranker-low", {})
    _reset(DelayedPayoffBandit(FIG2_MEANS, reveal_order=False), ranker)
    assert not runs_compiled(env, ranker)
    assert not runs_compiled(MyDelayed(FIG2_MEANS), build_policy("ucb1", {}))
