"""B2DEP (Cella & Cesa-Bianchi 2020): environment, ghost oracle, π_low, π_ucb, BanditRanker."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core import EnvironmentRandom, SimplePolicy
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.delay import DelayedPayoffBandit, ranking_order
from impactbandits.experiments.figures import get_figure
from impactbandits.oracles.delay import ranking_values
from impactbandits.oracles.ranking import ghost_oracle, ranking_cumulative
from impactbandits.policies.delay import PiLow, stage_count
from impactbandits.policies.delay_ranker import BanditRanker

from .simulation import run_batch

FIG2_MEANS = [0.0, 1 / 3, 2 / 3, 4 / 5, 13 / 15, 14 / 15, 1.0]


def _simulate(env, policy, T, reps=(0,), horizon=None, checkpoints=None):
    return run_batch(
        policy,
        env,
        T,
        reps=reps,
        seed=3,
        env_key=4,
        policy_key=5,
        horizon=horizon,
        checkpoints=checkpoints,
    )


class Cycle(SimplePolicy):
    """π_m: cycle over the m best arms of the revealed ranking."""

    def __init__(self, m):
        self.m = m

    def reset(self, space, horizon, rng):
        self.order, self.t = list(space.known["ranking"]), 0

    def select(self):
        self.t += 1
        return self.order[(self.t - 1) % self.m]

    def update(self, action, feedback):
        pass


def test_payoff_follows_eq1():
    env = DelayedPayoffBandit([0.9, 0.6], delays=[2, 3], f=[0.5, 0.25, 0.1])
    env.reset(EnvironmentRandom(0, 1, [0]))
    expected = []
    for arm in (0, 0, 1, 0, 1, 1, 0):
        expected.append(float(env.step(np.array([arm])).expected[0]))
    # arm 0: fresh 0.9; τ=1 → (1−0.5)·0.9; arm 1 fresh 0.6; arm 0 τ=2 → (1−0.25)·0.9;
    # arm 1 τ=2 → 0.75·0.6; arm 1 τ=1 → 0.5·0.6; arm 0 τ=3 > d_0 = 2 → 0.9
    assert expected == pytest.approx([0.9, 0.45, 0.6, 0.675, 0.45, 0.3, 0.9])


def test_delays_are_drawn_per_replication_and_shared_by_policies():
    env = DelayedPayoffBandit(FIG2_MEANS)
    env.reset(EnvironmentRandom(0, 9, range(40)))
    delays = env.instance_delays.copy()
    assert delays.min() >= 1 and delays.max() <= 6 and len(np.unique(delays)) == 6
    again = DelayedPayoffBandit(FIG2_MEANS)
    again.reset(EnvironmentRandom(0, 9, [7]))
    np.testing.assert_array_equal(again.instance_delays[0], delays[7])


@pytest.mark.parametrize("m", [1, 2, 4, 7])
def test_ranking_cumulative_equals_simulation_of_the_cycle(m):
    env = DelayedPayoffBandit(FIG2_MEANS, decay=0.9)
    T = 200
    trajectory = _simulate(env, BatchedSimplePolicy(Cycle(m)), T, reps=range(3))
    order = ranking_order(np.array(FIG2_MEANS))
    for r in range(3):
        d = env.instance_delays[r][order]
        mu = np.array(FIG2_MEANS)[order]
        np.testing.assert_allclose(
            trajectory.expected[r], ranking_cumulative(mu, d, env.f, m, np.arange(1, T + 1))
        )


def test_ghost_oracle_is_the_best_ranking_policy():
    env = DelayedPayoffBandit(FIG2_MEANS, decay=0.99)
    env.reset(EnvironmentRandom(3, 4, [0, 1]))
    times = np.array([5000])
    ghost = ghost_oracle(env, times)
    order = ranking_order(np.array(FIG2_MEANS))
    for r in range(2):
        mu, d = np.array(FIG2_MEANS)[order], env.instance_delays[r][order]
        values = [ranking_cumulative(mu, d, env.f, m, times)[0] for m in range(1, 8)]
        assert ghost[r, 0] == pytest.approx(values[int(np.argmax(ranking_values(mu, d, env.f)))])
        assert ghost[r, 0] >= max(values) - 7  # g maximised in the long run (O(1) first cycle)


def test_pi_low_switches_stay_within_k_times_stages(capsys):
    """Switches of π_low ≤ k·(S + 1) with S = O(ln ln T) the number of stages (each stage
    plays every active policy once in a row)."""
    env = DelayedPayoffBandit(FIG2_MEANS, switching_cost=1.0)
    rows = []
    for T in (10**3, 10**4, 10**5):
        trajectory = _simulate(env, BatchedSimplePolicy(PiLow()), T, horizon=T, checkpoints=[T])
        switches = int(trajectory.phase_switches[0, -1])
        bound = 7 * (stage_count(T, 7) + 1)
        rows.append((T, switches, bound, 7 * math.log(math.log(T))))
        assert switches <= bound
    with capsys.disabled():
        for T, switches, bound, klnln in rows:
            print(
                f"\nπ_low T={T}: {switches} switches, bound k(S+1) = {bound}, k ln ln T = "
                f"{klnln:.1f}",
                end="",
            )


def _rank_once(means, delta, d0, seed):
    rng = np.random.default_rng(seed)
    ranker = BanditRanker(len(means), delta, d0)
    pulls = 0
    while not ranker.done:
        arm = ranker.arm()
        ranker.record(float(rng.random() < means[arm]))
        pulls += 1
    return ranker.order, pulls


@pytest.mark.slow
def test_bandit_ranker_returns_the_correct_order_with_probability_1_minus_delta():
    means = [0.35, 0.95, 0.05, 0.65, 0.8, 0.2, 0.5]  # known gaps: 0.15 between neighbours
    truth = list(np.argsort(-np.array(means), kind="stable"))
    delta = 0.1
    correct = sum(_rank_once(means, delta, d0=7, seed=s)[0] == truth for s in range(200))
    assert correct / 200 >= 1 - delta


def test_bandit_ranker_calibration_records_only_calibrated_pulls():
    """Recorded samples always find their arm ≥ d_0 rounds after its previous pull, so they
    are baseline payoffs when d_0 > max d_i (§7)."""
    ranker = BanditRanker(8, 0.1, d0=3)
    last = {}
    t = 0
    while not ranker.done and t < 20_000:
        t += 1
        arm, keep = ranker.schedule[-1]
        if keep:
            assert t - last[arm] >= 3
        last[arm] = t
        ranker.record(float(arm % 2))  # deterministic rewards end the ranking quickly


def test_ranker_then_low_recovers_the_order_inside_b2dep():
    from impactbandits.policies.delay_ranker import RankerThenLow

    means = [0.05, 0.35, 0.65, 0.95, 0.2, 0.5, 0.8]
    env = DelayedPayoffBandit(means, delay_range=[1, 6], decay=0.9, reveal_order=False)
    policy = RankerThenLow(d0=7)
    env.reset(EnvironmentRandom(0, 1, [0]))
    policy.reset(env.action_space, 400_000, np.random.default_rng(0))
    while policy.low is None:
        arm = policy.select()
        policy.update(arm, env.step(np.array([arm])).feedback.replication(0))
    assert policy.ranker.order == list(ranking_order(np.array(means)))


@pytest.mark.parametrize("name", ["cella-fig2", "cella-fig3"])
def test_cella_figures_at_quick_scale(tmp_path, name):
    from impactbandits import run_experiment, tidy_table

    figure = get_figure(name)
    run_experiment(figure.build(True), tmp_path, backend="process", workers=2)
    table = tidy_table(tmp_path)
    assert table["regret"].notna().all() and table["realised_regret"].notna().all()
    pngs = figure.render(tmp_path)
    assert pngs and all(p.stat().st_size > 5000 for p in pngs)
