"""Blocking bandits (Basu, Sen, Sanghavi & Shakkottai, NeurIPS 2019): environment, oracles and
UCB Greedy (``impactbandits.envs.blocking``, ``.oracles.blocking``, ``.policies.blocking``).

The exact optimum is checked against brute force over every arm sequence and a plain dynamic
programme (tests/reference_blocking.py), the long-run optimum against the finite-horizon
optimum within a derived bound, Oracle Greedy against a plain simulation and the paper's
(1 − 1/e) guarantee, the environment's blocking rule on hand-made sequences, and UCB Greedy
against a plainly written single-replication copy, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.blocking import BlockingBandit
from impactbandits.errors import SpecError, SpecWarning
from impactbandits.oracles import blocking as oracle
from impactbandits.oracles.mean_cycle import max_mean_cycle
from impactbandits.policies.blocking import UCBGreedy
from impactbandits.policies.classic import UCB1
from impactbandits.testing import check_environment, check_policy
from tests import reference_blocking as ref
from tests.simulation import actions_of, run_batch

TOL = 1e-9
RATIO = 1 - 1 / math.e


def random_instances(count: int, seed: int, max_arms: int = 3, max_delay: int = 4):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        k = int(rng.integers(1, max_arms + 1))
        yield np.round(rng.random(k), 3), rng.integers(1, max_delay + 1, size=k)


def run(policy, env, rounds, reps=(0, 1, 2), seed=7, horizon=None):
    return run_batch(
        policy, env, rounds, reps=reps, seed=seed, env_key=11, policy_key=12, horizon=horizon
    )


def play_rounds(policy, env, rounds, reps, seed=7):
    """:func:`run`'s rounds, recorded one by one: ``(R, T)`` arms, rewards, expected rewards."""
    env.reset(EnvironmentRandom(seed, 11, list(reps)))
    horizon = rounds if policy.requires_horizon else None
    policy.reset(env.action_space, horizon, BatchRNG.from_key(seed, (12,), list(reps)))
    arms, rewards, expected = [], [], []
    for _ in range(rounds):
        actions = policy.select()
        outcome = env.step(actions)
        policy.update(actions, outcome.feedback)
        arms.append(actions)
        rewards.append(outcome.feedback.reward)
        expected.append(outcome.expected)
    return np.array(arms).T, np.array(rewards).T, np.array(expected).T


# --- the exact optimum, the long-run optimum ----------------------------------------------------


@pytest.mark.parametrize(("means", "delays"), list(random_instances(25, seed=1)))
def test_dp_equals_brute_force_over_all_arm_sequences(means, delays):
    horizons = list(range(0, 8 if len(means) < 3 else 7))
    brute = [ref.brute_force_optimum(means, delays, t) for t in horizons]
    np.testing.assert_allclose(oracle.optimal_values(means, delays, horizons), brute, atol=TOL)


def test_dp_worked_example():
    # μ = (0.9, 0.5, 0.3), D = (3, 2, 1): 1, 0, 1 earns 0.5 + 0.9 + 0.5 = 1.9 in 3 rounds while
    # greedy's 0, 1, 2 earns 1.7; in the long run both cycle 0, 1, 2 (0.5666…) below the LP's
    # 0.9/3 + 0.5/2 + 0.3/6 = 0.6.
    means, delays = (0.9, 0.5, 0.3), (3, 2, 1)
    assert oracle.optimal_values(means, delays, [3])[0] == pytest.approx(1.9)
    assert oracle.greedy_values(means, delays, [3])[0] == pytest.approx(1.7)
    assert oracle.long_run_optimum(means, delays)[0] == pytest.approx(1.7 / 3)
    assert oracle.lp_long_run(means, delays) == pytest.approx(0.6)


@pytest.mark.parametrize(
    ("means", "delays"), list(random_instances(12, seed=2, max_arms=4, max_delay=6))
)
def test_periodic_extrapolation_equals_a_plain_dp(means, delays):
    horizons = [1, 2, 5, 17, 64, 333, 1000, 1999]
    np.testing.assert_allclose(
        oracle.optimal_values(means, delays, horizons),
        ref.plain_dp(means, delays, horizons),
        rtol=1e-12,
        atol=1e-9,
    )


@pytest.mark.parametrize(
    ("means", "delays"), list(random_instances(20, seed=3, max_arms=4, max_delay=5))
)
def test_long_run_optimum_is_the_limit_of_the_dp(means, delays):
    # Bound: a walk of T edges from the start is cycles (mean ≤ λ each) plus a simple path of
    # < S edges (each ≤ max μ), so OPT(T) ≤ λT + (S − 1)(max μ − λ); reaching a state of the
    # optimal cycle (p ≤ S − 1 edges) and going round it (L edges) gives OPT(T) ≥ λ(T − p − L
    # + 1). Hence |OPT(T)/T − λ| ≤ max((p + L − 1)λ, (S − 1)(max μ − λ)) / T ≤ 2S·max μ / T.
    lam, cycle = oracle.long_run_optimum(means, delays)
    states, graph = oracle.blocking_graph(means, delays)
    size, top = len(states), float(np.max(means))
    assert lam <= oracle.lp_long_run(means, delays) + TOL
    karp = max_mean_cycle(graph, method="karp")
    assert oracle._cycle_mean(graph, karp) == pytest.approx(lam, abs=TOL)
    for horizon in (10_000, 123_457):
        opt = oracle.optimal_values(means, delays, [horizon])[0]
        assert abs(opt / horizon - lam) <= 2 * size * top / horizon + TOL
    # the cycle, repeated from the start (plainly simulated), attains λ
    assert ref.periodic_average(means, delays, cycle) == pytest.approx(lam, abs=TOL)


@pytest.mark.parametrize(("means", "delays"), list(random_instances(20, seed=4, max_delay=4)))
def test_no_short_periodic_schedule_beats_the_long_run_optimum(means, delays):
    lam, _ = oracle.long_run_optimum(means, delays)
    k = len(means)
    best = max(
        ref.periodic_average(means, delays, schedule)
        for period in range(1, 6)
        for schedule in np.ndindex(*([k] * period))
    )
    assert best <= lam + TOL


# --- Oracle Greedy and the bounds -------------------------------------------------------------


@pytest.mark.parametrize(
    ("means", "delays"), list(random_instances(25, seed=5, max_arms=6, max_delay=9))
)
def test_greedy_equals_a_plain_simulation(means, delays):
    horizons = np.arange(0, 400)
    plain = np.concatenate(([0.0], np.cumsum(ref.greedy_rewards(means, delays, 399))))
    np.testing.assert_allclose(oracle.greedy_values(means, delays, horizons), plain, atol=1e-9)
    value, cycle = oracle.greedy_long_run(means, delays)
    far = ref.greedy_rewards(means, delays, 3000)
    assert value == pytest.approx(math.fsum(far[-len(cycle) :]) / len(cycle), abs=1e-12)


@pytest.mark.parametrize(
    ("means", "delays"), list(random_instances(40, seed=6, max_arms=5, max_delay=8))
)
def test_greedy_is_asymptotically_one_minus_one_over_e_optimal(means, delays):
    # The abstract: Oracle Greedy is asymptotically (1 − 1/e)-optimal; here even against the
    # LP bound, which is at least the optimum. Finite horizons: greedy ≤ OPT ≤ LP bound.
    greedy, _ = oracle.greedy_long_run(means, delays)
    lam, _ = oracle.long_run_optimum(means, delays)
    assert greedy >= RATIO * oracle.lp_long_run(means, delays) - TOL
    assert greedy >= RATIO * lam - TOL and greedy <= lam + TOL
    horizons = [1, 2, 3, 7, 50, 401]
    g = oracle.greedy_values(means, delays, horizons)
    opt = oracle.optimal_values(means, delays, horizons)
    assert np.all(g <= opt + TOL)
    assert np.all(opt <= oracle.lp_upper_bound(means, delays, horizons) + TOL)


#: Oracle values of ``delays = [10**18, 2]`` at T = 0 … 20, computed in a child process (the
#: oracles hung on it before: their work followed the largest delay, not the horizon).
_HUGE_DELAY = """
import json, sys
from impactbandits.oracles.blocking import greedy_values, optimal_values
times = list(range(21))
print(json.dumps({
    "optimum": optimal_values([0.9, 0.5], [10**18, 2], times).tolist(),
    "greedy": greedy_values([0.9, 0.5], [10**18, 2], times).tolist(),
    "reversed": optimal_values([0.5, 0.9], [2, 10**18], [20]).tolist(),
}))
"""


def test_a_delay_beyond_the_horizon_acts_as_the_horizon_exactly_and_fast():
    # before: `delays = [10**18, 2]` hung even at T = 20 ([10**6, 2] took 2 CPU s, 239 MB)
    import json
    import subprocess
    import sys
    import time

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _HUGE_DELAY], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60
    values = json.loads(done.stdout)
    # the same as the delay capped at the horizon (module docstring): brute force over every
    # arm sequence at T = 20, and the plain references at every T
    assert values["optimum"][20] == pytest.approx(ref.brute_force_optimum([0.9, 0.5], [20, 2], 20))
    np.testing.assert_allclose(
        values["optimum"], ref.plain_dp([0.9, 0.5], [20, 2], range(21)), atol=TOL
    )
    np.testing.assert_allclose(
        values["greedy"],
        np.concatenate(([0.0], np.cumsum(ref.greedy_rewards([0.9, 0.5], [20, 2], 20)))),
        atol=TOL,
    )
    assert values["reversed"][0] == pytest.approx(values["optimum"][20])


def test_a_huge_delay_runs_in_a_spec(tmp_path):
    # before: `impactbandits run` hung in the oracle (Oracle Greedy's and the exact optimum's
    # work followed the delay); now the arm blocked for good costs nothing
    import subprocess
    import sys

    from impactbandits.experiments.tidy import tidy_table

    spec = tmp_path / "huge.toml"
    spec.write_text(
        'name = "huge-delay"\nseeds = 2\nhorizons = [20]\n'
        '[[environments]]\nkind = "blocking"\nmeans = [0.9, 0.5]\n'
        "delays = [1000000000000000000, 2]\n"
        '[[environments]]\nkind = "blocking"\nlabel = "exact"\nmeans = [0.9, 0.5]\n'
        'delays = [1000000000000000000, 2]\noracle = "blocking_optimum"\n'
        '[[policies]]\nkind = "ucb-greedy"\n'
    )
    command = [sys.executable, "-m", "impactbandits", "-q", "run", str(spec)]
    options = ["--out", str(tmp_path / "run"), "--backend", "serial", "--no-report"]
    done = subprocess.run([*command, *options], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    optimum = tidy_table(tmp_path / "run").groupby("environment", observed=True)["optimum"]
    first = optimum.first()
    assert first["exact"] == pytest.approx(ref.plain_dp([0.9, 0.5], [20, 2], [20])[0])
    assert first["blocking"] == pytest.approx(
        math.fsum(ref.greedy_rewards([0.9, 0.5], [20, 2], 20))
    )


def test_size_limits_fail_in_one_line():
    with pytest.raises(SpecError, match="blocking states"):
        oracle.blocking_graph(np.linspace(1, 0.1, 12), [12] * 12)
    with pytest.raises(SpecError, match="state-arm updates"):
        oracle.optimal_values([0.5, 0.4, 0.3], [5, 7, 3], [10**6], max_work=10_000)
    with pytest.raises(SpecError, match="positive integer"):
        oracle.optimal_values([0.5, 0.4], [0, 2], [3])


def test_oracles_on_a_fresh_environment():
    env = BlockingBandit([0.9, 0.5, 0.3], [3, 2, 1])
    env.reset(EnvironmentRandom(1, 2, [0, 1]))
    times = np.array([1, 3, 10])
    np.testing.assert_allclose(oracle.oracle_greedy(env, times), [[0.9, 1.7, 6.0]] * 2)
    exact = oracle.optimal_values([0.9, 0.5, 0.3], [3, 2, 1], times)
    np.testing.assert_allclose(oracle.blocking_optimum(env, times), [exact] * 2)
    big = BlockingBandit(n_arms=20, delay_range=[11, 20])
    big.reset(EnvironmentRandom(1, 2, [0]))
    with pytest.warns(SpecWarning, match="LP upper bound"):
        bound = oracle.blocking_optimum(big, np.array([100, 10_000]))
    assert np.all(bound >= oracle.oracle_greedy(big, np.array([100, 10_000])))


# --- the environment --------------------------------------------------------------------------


def test_blocking_rule_on_a_hand_made_sequence():
    # μ = (0.9, 0.5, 0.2), D = (3, 1, 2). Round 1 pulls arm 0 (free again at 4); round 2 picks
    # it blocked: idle, and not renewed, so round 4 pulls it (free at 7); arm 2 at rounds 3 and
    # 5 (free at 5, then 7); arm 1 (D = 1) at 6; arm 0 at 7 (free at 10); arm 2 at 8 (free at
    # 10), blocked at 9.
    env = BlockingBandit([0.9, 0.5, 0.2], [3, 1, 2], distribution="gaussian", sigma=0.0)
    assert env.deterministic
    env.reset(EnvironmentRandom(3, 4, [0]))
    arms = [0, 0, 2, 0, 2, 1, 0, 2, 2]
    masks = [[1, 1, 1], [0, 1, 1], [0, 1, 1], [1, 1, 0], [0, 1, 1], [0, 1, 0], [1, 1, 1],
             [0, 1, 1], [0, 1, 0]]  # fmt: skip
    expected = [0.9, 0.0, 0.2, 0.9, 0.2, 0.5, 0.9, 0.2, 0.0]
    for arm, mask, value in zip(arms, masks, expected, strict=True):
        np.testing.assert_array_equal(env.expected_rewards()[0] > 0, np.array(mask, bool))
        outcome = env.step(np.array([arm]))
        assert outcome.expected[0] == value and outcome.feedback.reward[0] == value
    assert ref.expected_rewards([0.9, 0.5, 0.2], [3, 1, 2], arms) == expected
    np.testing.assert_array_equal(env.instance_pulls, [[3, 1, 3]])


def test_blocked_picks_pay_nothing_with_bernoulli_rewards():
    env = BlockingBandit([1.0, 1.0], [2, 3])
    env.reset(EnvironmentRandom(3, 4, [0, 1]))
    rewards = [env.step(np.array([0, 1])).feedback.reward.tolist() for _ in range(4)]
    assert rewards == [[1.0, 1.0], [0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]


def test_common_random_numbers_by_arm_and_pull_index():
    # The m-th real pull of arm i in replication r pays μ_i + σ·(the common normal at (r, i, m)),
    # whatever the policy: UCB1 (which also picks blocked arms) and UCB Greedy see the same
    # values at the same pull indices.
    def make():
        return BlockingBandit([0.8, 0.6, 0.5, 0.2], [2, 3, 1, 4], distribution="gaussian",
                              sigma=0.5)  # fmt: skip

    reps = (0, 5)
    normal = EnvironmentRandom(7, 11, list(reps)).noise(4, "normal")
    means = np.array([0.8, 0.6, 0.5, 0.2])
    for policy in (UCB1(), UCBGreedy()):
        arms, reward, expected = play_rounds(policy, make(), 300, reps)
        for r in range(len(reps)):
            real = expected[r] > 0
            for i in range(4):
                hits = np.flatnonzero(real & (arms[r] == i))
                m = np.arange(hits.size)
                want = means[i] + 0.5 * normal.values(np.full(m.size, r), np.full(m.size, i), m)
                np.testing.assert_array_equal(reward[r, hits], want)
            assert np.all(reward[r, ~real] == 0.0)


def test_environment_contract_and_instances():
    check_environment(lambda: BlockingBandit([0.3, 0.7, 0.5], [2, 1, 3]))
    check_environment(lambda: BlockingBandit(n_arms=5, delay_range=[1, 4], instance_seed=3))
    env = BlockingBandit(n_arms=20, delay_range=[1, 10], instance_seed=42)
    gaps = -np.diff(env.means)
    assert env.means[-1] == 0.0 and np.all(gaps >= 0.01) and np.all(gaps <= 0.05)
    assert np.all(np.diff(gaps) <= 0)  # sorted increments, accumulated from the worst arm
    assert env.delays.min() >= 1 and env.delays.max() <= 10
    np.testing.assert_array_equal(env.action_space.known["delays"], env.delays)
    assert not env.deterministic and env.default_oracle == "oracle_greedy"
    with pytest.raises(SpecError, match="either"):
        BlockingBandit([0.5], n_arms=1, delays=[1])
    with pytest.raises(SpecError, match="one delay per arm"):
        BlockingBandit([0.5, 0.4], [1])
    with pytest.raises(SpecError, match="gap_range"):
        BlockingBandit(n_arms=30, delays=[1] * 30)


# --- UCB Greedy, and a standard policy ---------------------------------------------------------


@pytest.mark.parametrize("c", [8.0, 0.5])
def test_ucb_greedy_equals_the_plain_reference_bit_for_bit(c):
    def make():
        return BlockingBandit(n_arms=8, delay_range=[1, 6], instance_seed=1)

    fast = run(UCBGreedy(c=c), make(), 600, reps=(0, 1, 2, 3))
    plain = run(BatchedSimplePolicy(ref.UCBGreedyReference(c=c)), make(), 600, (0, 1, 2, 3))
    for name in ("reward", "expected", "pulls", "switches"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name))


def test_ucb_greedy_never_picks_a_blocked_arm():
    env = BlockingBandit([0.9, 0.85, 0.5, 0.3, 0.1], [4, 6, 2, 3, 8])
    trajectory = run(UCBGreedy(), env, 500)
    for row in actions_of(trajectory):
        last: dict[int, int] = {}
        for t, arm in enumerate(row.tolist(), start=1):
            if any(ref.available(last, env.delays, i, t) for i in range(5)):
                assert ref.available(last, env.delays, arm, t)
                last[arm] = t


def test_ucb_greedy_contract_and_requirements():
    check_policy(UCBGreedy, env_factory=lambda: BlockingBandit([0.2, 0.9, 0.5], [1, 3, 2]))
    env = BlockingBandit([0.5, 0.4], [1, 1])  # D = 1: an ordinary bandit; UCB with c = 8
    assert run(UCBGreedy(), env, 50).pulls[:, -1].sum() == 150
    from impactbandits.envs.stationary import BernoulliBandit

    with pytest.raises(SpecError, match="delays"):
        run(UCBGreedy(), BernoulliBandit([0.5, 0.4]), 5)


def test_ucb1_runs_and_its_blocked_picks_are_idle_rounds():
    env = BlockingBandit([0.9, 0.6, 0.3], [3, 2, 2], distribution="gaussian", sigma=0.2)
    trajectory = run(UCB1(), env, 400)
    reward = np.diff(trajectory.reward, axis=1, prepend=0.0)
    expected = np.diff(trajectory.expected, axis=1, prepend=0.0)
    blocked = 0
    for r, row in enumerate(actions_of(trajectory)):
        last: dict[int, int] = {}
        for t, arm in enumerate(row.tolist(), start=1):
            if ref.available(last, env.delays, arm, t):
                last[arm] = t
                assert expected[r, t - 1] == pytest.approx(env.means[arm], abs=1e-12)
            else:
                blocked += 1
                assert reward[r, t - 1] == pytest.approx(0.0, abs=1e-12)
                assert expected[r, t - 1] == pytest.approx(0.0, abs=1e-12)
    assert blocked > 100  # UCB1 keeps choosing the best arm, blocked two rounds in three


STANDARD = "moss kl-ucb thompson exp3 greedy epsilon-greedy etc round-robin sw-ucb exp3s ucb-v swa"


@pytest.mark.parametrize("name", STANDARD.split())
def test_standard_policies_run_and_blocked_picks_are_idle(name):
    from impactbandits.policies.names import build_policy

    env = BlockingBandit([0.9, 0.6, 0.3], [3, 2, 2])
    policy = build_policy(name, {})
    arms, reward, expected = play_rounds(policy, env, 150, (0, 1))
    for r in range(2):
        plain = ref.expected_rewards(env.means, env.delays, arms[r].tolist())
        assert expected[r].tolist() == plain
        assert np.all(reward[r][expected[r] == 0.0] == 0.0)
