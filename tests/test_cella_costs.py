"""Cella & Cesa-Bianchi (2020): who pays switching costs, and the Figure 2 panels."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pytest

from impactbandits import ExperimentSpec, run_experiment
from impactbandits.core import SimplePolicy
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.delay import DelayedPayoffBandit
from impactbandits.experiments.papers import cella
from impactbandits.policies.delay import PiUCB

from .simulation import run_batch


class Alternate(SimplePolicy):
    """Arm-level learner without phases: arms 0, 1, 0, 1, … (a change of arm every round)."""

    def reset(self, space, horizon, rng):
        self.t = 0

    def select(self):
        self.t += 1
        return (self.t - 1) % 2

    def update(self, action, feedback):
        pass


class Stay(Alternate):
    def select(self):
        return 1


def _costs(env, policy, T):
    traj = run_batch(
        BatchedSimplePolicy(policy), env, T, reps=(0, 1), seed=1, env_key=2, policy_key=3
    )
    return traj, env.summary_metrics(traj)


@pytest.mark.parametrize("cost", [1.0, 0.5])
def test_arm_level_learner_pays_per_change_of_arm(cost):
    T = 40
    env = DelayedPayoffBandit([0.9, 0.5], delays=[1, 1], switching_cost=cost)
    traj, m = _costs(env, Alternate(), T)
    # hand count: arms 0,1,0,1,… change on every round but the first
    np.testing.assert_allclose(m["switching_cost"][:, -1], cost * (T - 1))
    np.testing.assert_allclose(m["expected_net"], traj.expected - m["switching_cost"])
    _, stay = _costs(env, Stay(), T)
    np.testing.assert_allclose(stay["switching_cost"], 0.0)


def test_arm_switching_cost_can_differ_or_be_switched_off():
    T = 30
    free = DelayedPayoffBandit([0.9, 0.5], delays=[1, 1], switching_cost=1.0, arm_switching_cost=0)
    _, m = _costs(free, Alternate(), T)
    np.testing.assert_allclose(m["switching_cost"], 0.0)
    half = DelayedPayoffBandit(
        [0.9, 0.5], delays=[1, 1], switching_cost=1.0, arm_switching_cost=0.5
    )
    _, m = _costs(half, Alternate(), T)
    np.testing.assert_allclose(m["switching_cost"][:, -1], 0.5 * (T - 1))


def test_ranking_learner_still_pays_per_policy_switch_only():
    # π_ucb cycles π_m over m arms: it changes arm on most rounds, but is charged only for
    # switches between ranking policies (its phase switches), never for changes of arm
    env = DelayedPayoffBandit([0.9, 0.5, 0.3], delays=[1, 1, 1], switching_cost=1.0)
    traj, m = _costs(env, PiUCB(), 300)
    np.testing.assert_allclose(m["switching_cost"], traj.phase_switches.astype(float))
    assert (traj.switches[:, -1] > traj.phase_switches[:, -1]).all()


def test_figure2_charges_ucb1_and_draws_log_rounds(tmp_path):
    spec = cella.fig2(quick=True).to_dict()
    spec.update(name="cella-fig2-tiny", horizons=[400], seeds=2, checkpoints=20)
    run_experiment(ExperimentSpec.create(**spec), tmp_path, backend="serial")
    from impactbandits import tidy_table

    table = tidy_table(tmp_path)
    ucb = table[table["policy"] == "UCB1 (arms)"]
    np.testing.assert_allclose(ucb["switching_cost"], ucb["switches"])  # unit cost per change
    assert (ucb["switching_cost"] > 0).all()
    paths = cella.render(tmp_path)
    assert len(paths) == 1 and paths[0].stat().st_size > 10_000
    # render again on a captured figure to inspect its axes
    captured = []
    original = cella.save_png

    def capture(fig, run_dir, name, output=None):
        captured.append(fig)
        return original(fig, run_dir, name)

    cella.save_png = capture
    try:
        cella.render(tmp_path)
    finally:
        cella.save_png = original
    axes = captured[0].axes
    assert len(axes) == 3  # ranking learners | all learners (log y) | charged switches
    assert all(ax.get_xscale() == "log" for ax in axes)
    assert axes[1].get_yscale() == "symlog"
    labels = [ax.get_legend_handles_labels()[1] for ax in axes]  # lines drawn per panel
    assert "UCB1 (arms)" not in labels[0] and "UCB1 (arms)" in labels[1]
