"""Rebounding bandits / satiation (Leqi, Kılınç-Karzan, Lipton & Montgomery, NeurIPS 2021):
environment, planning oracles, greedy / w-lookahead and EEP (``impactbandits.envs.rebounding``,
``.oracles.rebounding``, ``.policies.rebounding``).

The exact optimum is checked against brute force over every arm sequence, greedy against brute
force on identical arms (the paper's theorem) and on a hand-made counterexample, the
environment's dynamics on hand-computed sequences, common random numbers by (arm, round) and
(arm, pull), and both policies against plainly written single-replication copies, bit for bit
(tests/reference_rebounding.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits.core import EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs.rebounding import ReboundingBandit
from impactbandits.errors import SpecError
from impactbandits.oracles import rebounding as oracle
from impactbandits.policies.classic import UCB1
from impactbandits.policies.rebounding import (
    ExploreEstimatePlan,
    ReboundingLookahead,
    eep_estimates,
)
from impactbandits.testing import check_environment, check_policy
from tests import reference_rebounding as ref
from tests.simulation import actions_of, run_batch

TOL = 1e-9


def random_instances(count: int, seed: int, max_arms: int = 3, identical: bool = False):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        k = int(rng.integers(1, max_arms + 1))
        if identical:
            b, g, lam = rng.random(), rng.random() * 0.99, rng.random() * 2
            yield [b] * k, [g] * k, [lam] * k
        else:
            yield (np.round(rng.random(k), 3), np.round(rng.random(k) * 0.99, 3),
                   np.round(rng.random(k) * 2, 3))  # fmt: skip


def run(policy, env, rounds, reps=(0, 1, 2), seed=7, horizon=None):
    return run_batch(
        policy, env, rounds, reps=reps, seed=seed, env_key=11, policy_key=12, horizon=horizon
    )


# --- the environment --------------------------------------------------------------------------


def test_dynamics_on_a_hand_computed_sequence():
    # b = (1, 0.5), γ = (0.5, 0), λ = (0.4, 1); arms 0, 0, 1, 0.
    # t1: s0 = 0 → 1;                then s0 = 0.5·(0 + 1) = 0.5
    # t2: 1 − 0.4·0.5 = 0.8;         then s0 = 0.5·(0.5 + 1) = 0.75
    # t3: arm 1, s1 = 0 → 0.5;       then s1 = 0·1 = 0, s0 = 0.5·0.75 = 0.375
    # t4: 1 − 0.4·0.375 = 0.85;      then s0 = 0.5·1.375 = 0.6875
    # Counting the current pull (c = 1) subtracts λ_a: 0.6, 0.4, −0.5, 0.45.
    arms, want = [0, 0, 1, 0], [1.0, 0.8, 0.5, 0.85]
    for count, shift in ((False, [0, 0, 0, 0]), (True, [0.4, 0.4, 1.0, 0.4])):
        env = ReboundingBandit([1.0, 0.5], [0.5, 0.0], [0.4, 1.0], count_current=count)
        assert env.deterministic
        env.reset(EnvironmentRandom(3, 4, [0]))
        for arm, value, d in zip(arms, want, shift, strict=True):
            before = env.expected_rewards()[0, arm]
            outcome = env.step(np.array([arm]))
            assert outcome.expected[0] == pytest.approx(value - d, abs=1e-15)
            assert outcome.feedback.reward[0] == outcome.expected[0] == before
        np.testing.assert_allclose(env.satiation, [[0.6875, 0.0]], atol=1e-15)
    assert ref.rewards_along([1.0, 0.5], [0.5, 0.0], [0.4, 1.0], arms) == pytest.approx(want)


def test_rebound_towards_the_base_while_resting():
    # Five pulls of arm 0 then rest: its expected reward climbs back geometrically to b_0.
    env = ReboundingBandit([1.0, 0.0], [0.8, 0.8], [0.5, 0.5])
    env.reset(EnvironmentRandom(3, 4, [0]))
    seen = [env.step(np.array([0])).expected[0] for _ in range(5)]
    assert all(np.diff(seen) < 0)
    resting = []
    for _ in range(30):
        env.step(np.array([1]))
        resting.append(env.expected_rewards()[0, 0])
    assert all(np.diff(resting) > 0) and resting[-1] == pytest.approx(1.0, abs=1e-2)


def test_common_random_numbers_by_arm_round_and_pull():
    # Satiation shocks are indexed by (arm, round): an arm neither policy pulls has the same
    # satiation path under both. Reward noise by (arm, pull): the m-th pull of an arm pays
    # b − λ s + σ·(the common normal at (replication, arm, m)) whatever the policy.
    def make():
        return ReboundingBandit([1.0, 0.8, 0.6], [0.5, 0.7, 0.3], [0.4, 0.2, 0.5], 0.1, 0.3)

    reps = [0, 5]
    normal = EnvironmentRandom(7, 11, reps).noise(3, "normal", stream=0)
    paths, noises = [], []
    for seq in ([0, 0, 1, 0, 0, 1], [1, 0, 1, 1, 0, 0]):
        env = make()
        env.reset(EnvironmentRandom(7, 11, reps))
        path, noise, pulls = [], {}, [0, 0, 0]
        for arm in seq:
            out = env.step(np.array([arm, arm]))
            path.append(env.satiation[:, 2])
            noise[(arm, pulls[arm])] = (out.feedback.reward - out.expected) / 0.3
            pulls[arm] += 1
        paths.append(np.array(path))
        noises.append(noise)
        for (arm, m), value in noise.items():
            want = normal.values(np.arange(2), np.full(2, arm), np.full(2, m))
            np.testing.assert_allclose(value, want, atol=1e-12)
    np.testing.assert_array_equal(paths[0], paths[1])
    assert not np.allclose(paths[0], 0.0)


def test_environment_contract_and_known_parameters():
    check_environment(lambda: ReboundingBandit([1.0, 0.8, 0.6], [0.5, 0.7, 0.3], [0.4, 0.2, 0.5]))
    check_environment(
        lambda: ReboundingBandit([1, 0.8], [0.5, 0.9], [0.4, 0.2], sigma_z=0.2, sigma=0.5)
    )
    env = ReboundingBandit([1.0, 0.8], [0.5, 0.7], [0.4, 0.2], sigma=0.1)
    assert not env.deterministic and env.action_space.known == {}
    told = ReboundingBandit([1.0, 0.8], [0.5, 0.7], [0.4, 0.2], count_current=True,
                            reveal_parameters=True).action_space.known  # fmt: skip
    np.testing.assert_allclose(told["base"], [0.6, 0.6])  # the effective base b − λ
    with pytest.raises(SpecError, match="one retention"):
        ReboundingBandit([1.0, 0.8], [0.5], [0.4, 0.2])
    with pytest.raises(SpecError):
        ReboundingBandit([1.0], [1.0], [0.4])


# --- the oracles ------------------------------------------------------------------------------


@pytest.mark.parametrize(("b", "g", "lam"), list(random_instances(25, seed=1)))
def test_exact_optimum_equals_brute_force(b, g, lam):
    horizons = list(range(0, 8 if len(b) < 3 else 7))
    brute = [ref.brute_force_optimum(b, g, lam, t) for t in horizons]
    np.testing.assert_allclose(oracle.optimal_values(b, g, lam, horizons), brute, atol=TOL)
    # one block of w = T rounds is the optimum of T rounds
    for t in horizons[1:]:
        assert oracle.lookahead_values(b, g, lam, t, [t])[0] == pytest.approx(brute[t], abs=TOL)


@pytest.mark.parametrize(("b", "g", "lam"), list(random_instances(40, seed=2, identical=True)))
def test_greedy_is_optimal_for_identical_deterministic_arms(b, g, lam):
    horizons = list(range(0, 8 if len(b) < 3 else 7))
    brute = [ref.brute_force_optimum(b, g, lam, t) for t in horizons]
    np.testing.assert_allclose(oracle.greedy_values(b, g, lam, horizons), brute, atol=TOL)
    assert oracle.greedy_actions(b, g, lam, 9) == ref.greedy_arms(b, g, lam, 9)
    # ... and cycles through the arms (the appendix's proof): 0, 1, …, K−1, 0, 1, …
    assert ref.greedy_arms(b, g, lam, 9) == [t % len(b) for t in range(9)]


def test_greedy_can_be_suboptimal_for_non_identical_arms():
    # b = (1, 0.79), γ = (0.5, 0.5), λ = (0.4, 0.4) (only the bases differ). Greedy: arm 0 pays
    # 1 (s0 → 0.5), arm 0 again 1 − 0.2 = 0.8 > 0.79 (s0 → 0.75), then 0.79 > 1 − 0.3 = 0.7:
    # 2.59. Plan 0, 1, 0: 1 + 0.79 + (1 − 0.4·0.25) = 2.69, the optimum of 3 rounds.
    b, g, lam = [1.0, 0.79], [0.5, 0.5], [0.4, 0.4]
    assert ref.greedy_arms(b, g, lam, 3) == [0, 0, 1]
    assert oracle.greedy_values(b, g, lam, [3])[0] == pytest.approx(2.59)
    assert oracle.optimal_values(b, g, lam, [3])[0] == pytest.approx(2.69)
    assert ref.brute_force_optimum(b, g, lam, 3) == pytest.approx(2.69)
    assert oracle.lookahead_values(b, g, lam, 3, [3])[0] == pytest.approx(2.69)


@pytest.mark.parametrize(("b", "g", "lam"), list(random_instances(15, seed=3, max_arms=4)))
def test_values_are_ordered_and_equal_plain_simulations(b, g, lam):
    horizons = [0, 1, 2, 5, 9]
    opt = oracle.optimal_values(b, g, lam, horizons)
    for w in (1, 2, 3):
        arms = oracle.lookahead_actions(b, g, lam, w, 9)
        plain, s = [], [0.0] * len(b)
        while len(plain) < 9:
            plain.extend(ref.best_block(b, g, lam, s, w))
            s = [0.0] * len(b)
            for a in plain:  # the satiation after the planned rounds, recomputed plainly
                s[a] += 1.0
                s = [float(gk) * x for gk, x in zip(g, s, strict=True)]
        assert arms == plain[:9]
        values = oracle.lookahead_values(b, g, lam, w, horizons)
        assert np.all(values <= opt + TOL)
    greedy = oracle.greedy_values(b, g, lam, horizons)
    np.testing.assert_allclose(greedy, oracle.lookahead_values(b, g, lam, 1, horizons), atol=0)


def test_oracles_on_a_fresh_environment_and_limits():
    env = ReboundingBandit([1.0, 0.79], [0.5, 0.5], [0.4, 0.4], lookahead=3)
    env.reset(EnvironmentRandom(1, 2, [0, 1]))
    times = np.array([1, 3])
    np.testing.assert_allclose(oracle.rebounding_lookahead(env, times), [[1.0, 2.69]] * 2)
    np.testing.assert_allclose(oracle.rebounding_optimum(env, times), [[1.0, 2.69]] * 2)
    with pytest.raises(SpecError, match="satiation states"):
        oracle.optimal_values([1, 0.9, 0.8, 0.7], [0.5, 0.6, 0.7, 0.8], [1, 1, 1, 1], [30])
    with pytest.raises(SpecError, match="plans exceed"):
        oracle.lookahead_values([1, 0.9, 0.8, 0.7], [0.5] * 4, [1] * 4, 11, [3])


# --- the policies -----------------------------------------------------------------------------


@pytest.mark.parametrize("w", [1, 2, 3])
def test_lookahead_policy_equals_the_plain_reference_and_its_oracle(w):
    def make(noise=0.0):
        return ReboundingBandit([1.0, 0.9, 0.7], [0.6, 0.8, 0.3], [0.5, 0.3, 0.6], noise, noise,
                                reveal_parameters=True, lookahead=w)  # fmt: skip

    for noise in (0.0, 0.2):
        fast = run(ReboundingLookahead(w), make(noise), 40)
        plain = run(BatchedSimplePolicy(ref.PlainLookahead(w)), make(noise), 40)
        for name in ("reward", "expected", "pulls", "switches"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name))
    env = make()
    env.reset(EnvironmentRandom(7, 11, [0, 1, 2]))
    values = oracle.rebounding_lookahead(env, np.arange(1, 41))
    np.testing.assert_allclose(run(ReboundingLookahead(w), make(), 40).expected, values, atol=TOL)


@pytest.mark.parametrize(("explore", "w"), [(5, 1), (8, 2)])
def test_eep_equals_the_plain_reference_bit_for_bit(explore, w):
    def make():
        return ReboundingBandit([1.0, 0.9, 0.7], [0.6, 0.8, 0.3], [0.5, 0.3, 0.6], 0.05, 0.1)

    fast = run(ExploreEstimatePlan(explore, w), make(), 120, reps=(0, 1, 2, 3))
    plain = run(BatchedSimplePolicy(ref.PlainEEP(explore, w)), make(), 120, reps=(0, 1, 2, 3))
    for name in ("reward", "expected", "pulls", "switches"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name))
    assert fast.phases is not None and np.all(
        fast.phases[:, -1] == [3 * explore, 120 - 3 * explore]
    )


def test_eep_recovers_noise_free_parameters_and_then_plays_like_the_planner():
    b, g, lam = [1.0, 0.9, 0.7], [0.6, 0.8, 0.3], [0.5, 0.3, 0.6]
    env = ReboundingBandit(b, g, lam)
    env.reset(EnvironmentRandom(1, 2, [0]))
    ys = np.zeros((1, 3, 6))
    for arm in range(3):
        for j in range(6):
            ys[0, arm, j] = env.step(np.array([arm])).feedback.reward[0]
    est = eep_estimates(ys)
    for got, want in zip(est, (b, g, lam), strict=True):
        np.testing.assert_allclose(got[0], want, atol=1e-9)
    plain = [ref.plain_estimates(ys[0, arm]) for arm in range(3)]
    np.testing.assert_allclose(np.array(plain).T, np.array(est)[:, 0, :], atol=1e-12)
    # exact estimates: after exploring, EEP plays the true-parameter 2-lookahead from there
    eep = actions_of(run(ExploreEstimatePlan(6, 2), ReboundingBandit(b, g, lam), 60, reps=(0,)))
    planner = ref.PlainLookahead(2)
    planner.b, planner.g, planner.lam, planner.s, planner.queue = b, g, lam, [0.0] * 3, []
    for arm in eep[0, :18].tolist():
        planner.update(arm, None)
    planned = []
    for _ in range(42):
        planned.append(planner.select())
        planner.update(planned[-1], None)
    assert eep[0, 18:].tolist() == planned


def test_policy_contracts_and_requirements():
    check_policy(
        ReboundingLookahead,
        env_factory=lambda: ReboundingBandit(
            [1.0, 0.8, 0.6], [0.5, 0.7, 0.3], [0.4, 0.2, 0.5], sigma=0.1, reveal_parameters=True
        ),
    )
    noisy = lambda: ReboundingBandit([1.0, 0.8], [0.5, 0.7], [0.4, 0.2], 0.1, 0.1)  # noqa: E731
    check_policy(ExploreEstimatePlan, env_factory=noisy)
    check_policy(lambda: ExploreEstimatePlan(4, 2), env_factory=noisy)
    with pytest.raises(SpecError, match="reveal_parameters"):
        run(ReboundingLookahead(), ReboundingBandit([1.0], [0.5], [0.4]), 3)
    with pytest.raises(SpecError, match="horizon"):
        run(ExploreEstimatePlan(), ReboundingBandit([1.0], [0.5], [0.4]), 3)
    with pytest.raises(SpecError, match="at least 3"):
        ExploreEstimatePlan(2)
    for bad in (lambda: ReboundingLookahead(0), lambda: ExploreEstimatePlan(3, 0)):
        with pytest.raises(SpecError, match="lookahead"):
            bad()
    with pytest.raises(SpecError, match="lookahead"):
        ReboundingBandit([1.0], [0.5], [0.4], lookahead=0)


def test_ucb1_runs_through_simulate():
    env = ReboundingBandit([1.0, 0.8, 0.6], [0.5, 0.7, 0.3], [0.4, 0.2, 0.5], 0.05, 0.1)
    trajectory = run(UCB1(), env, 300)
    assert trajectory.pulls[:, -1].sum(axis=1).tolist() == [300, 300, 300]
    # its expected rewards are those of the noise-free recursion along its own arms ± shocks
    det = ReboundingBandit([1.0, 0.8, 0.6], [0.5, 0.7, 0.3], [0.4, 0.2, 0.5])
    arms = actions_of(run(UCB1(), det, 300))[0].tolist()
    plain = np.cumsum(ref.rewards_along([1.0, 0.8, 0.6], [0.5, 0.7, 0.3], [0.4, 0.2, 0.5], arms))
    np.testing.assert_allclose(run(UCB1(), det, 300).expected[0], plain, atol=1e-9)
