"""Recovering bandits (Pike-Burke & Grünewälder, NeurIPS 2019): environment, GP posterior,
planning oracles, dRGP-UCB and dRGP-TS (``impactbandits.envs.recovering``,
``.oracles.recovering``, ``.policies.gp``, ``.policies.recovering``).

The exact optimum is checked against brute force over every arm sequence, the d-step lookahead
with d = T against it, the GP posterior against the textbook formula over the raw observations
(and scikit-learn's when installed), the environment's dynamics and its d-step lookahead regret
against hand computations and a plain loop, and both learners against plainly written
single-replication copies (tests/reference_recovering.py), bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core import EnvironmentRandom
from impactbandits.core.policy import BatchedSimplePolicy
from impactbandits.envs import BernoulliBandit
from impactbandits.envs.recovering import RecoveringBandit
from impactbandits.errors import SpecError
from impactbandits.oracles import recovering as oracle
from impactbandits.oracles.mean_cycle import max_mean_cycle
from impactbandits.policies.classic import UCB1, RoundRobin
from impactbandits.policies.gp import grid_posterior, sample_root
from impactbandits.policies.recovering import RGPTS, RGPUCB, ucb_beta
from impactbandits.testing import check_environment, check_policy
from tests import reference_recovering as ref

from .simulation import PerReplication, actions_of, run_batch

TOL = 1e-9
TABLE = [[0.1, 0.4, 0.9, 1.0], [0.5, 0.6, 0.6, 0.7], [0.0, 0.2, 0.8, 0.8]]


def random_instances(count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        k = int(rng.integers(1, 4))
        z_max = int(rng.choice([1, 2, 3, 5]))
        yield np.round(rng.normal(size=(k, z_max + 1)), 3).tolist(), int(rng.integers(0, z_max + 1))


def run(policy, env, rounds, reps=(0, 1, 2), seed=7, horizon=None):
    return run_batch(
        policy, env, rounds, reps=reps, seed=seed, env_key=11, policy_key=12, horizon=horizon
    )


def gp_env(**extra):
    params = {"n_arms": 4, "z_max": 8, "lengthscale": 2.0, "sigma": 0.1} | extra
    return RecoveringBandit(**params)


# --- the environment --------------------------------------------------------------------------


def test_dynamics_on_a_hand_computed_sequence():
    # z starts at (0, 0, 0). Arm 0 at z=0 pays 0.1 → z = (0, 1, 1); arm 0 again at z=0: 0.1
    # → (0, 2, 2); arm 2 at z=2: 0.8 → (1, 3, 0); arm 1 at z=3 (the cap): 0.7 → (2, 0, 1);
    # arm 0 at z=2: 0.9 → (0, 1, 2).
    env = RecoveringBandit(TABLE, sigma=0.0)
    assert env.deterministic and env.z_max == 3
    env.reset(EnvironmentRandom(3, 4, [0]))
    for arm, want in zip([0, 0, 2, 1, 0], [0.1, 0.1, 0.8, 0.7, 0.9], strict=True):
        before = env.expected_rewards()[0, arm]
        out = env.step(np.array([arm]))
        assert out.expected[0] == out.feedback.reward[0] == before == want
    assert env.z.tolist() == [[0, 1, 2]]
    assert ref.rewards_along(TABLE, 0, [0, 0, 2, 1, 0]) == [0.1, 0.1, 0.8, 0.7, 0.9]
    env = RecoveringBandit(TABLE, sigma=0.0, initial_z=3)  # all arms rested
    env.reset(EnvironmentRandom(3, 4, [0]))
    np.testing.assert_array_equal(env.expected_rewards(), [[1.0, 0.7, 0.8]])


def test_noise_is_common_by_arm_and_pull():
    reps = [0, 5]
    normal = EnvironmentRandom(7, 11, reps).noise(3, "normal")
    for seq in ([0, 0, 1, 2, 0], [2, 1, 0, 0, 1]):
        env = RecoveringBandit(TABLE, sigma=0.3)
        env.reset(EnvironmentRandom(7, 11, reps))
        pulls = [0, 0, 0]
        for arm in seq:
            out = env.step(np.array([arm, arm]))
            want = normal.values(np.arange(2), np.full(2, arm), np.full(2, pulls[arm]))
            np.testing.assert_allclose((out.feedback.reward - out.expected) / 0.3, want,
                                       atol=1e-12)  # fmt: skip
            pulls[arm] += 1


def test_gp_instances_and_what_the_learner_is_told():
    env = RecoveringBandit(n_arms=10)  # the authors' rgp_gp_l5_setup: K = 10, z_max = 30, ℓ = 5
    assert env.values.shape == (10, 31) and env.sigma == 0.1 and env.lookahead == 1
    z = np.arange(31.0)
    kernel = np.exp(-0.5 * ((z[:, None] - z[None, :]) / 5.0) ** 2)
    legacy = np.random.RandomState(5389)  # the authors' draw
    np.testing.assert_allclose(env.values, legacy.multivariate_normal(np.zeros(31), kernel, 10))
    told = env.action_space.known
    assert told["z_max"] == 30 and told["sigma"] == 0.1 and told["lengthscale"] == 5.0
    assert told["kernel_variance"] == 1.0 and told["initial_z"].tolist() == [0] * 10
    # the generator sampler: many draws have the kernel's covariance
    many = RecoveringBandit(n_arms=20_000, z_max=5, lengthscale=2.0, kernel_variance=2.0,
                            sampler="generator", instance_seed=3).values  # fmt: skip
    want = 2.0 * np.exp(-0.5 * ((np.arange(6)[:, None] - np.arange(6)[None, :]) / 2.0) ** 2)
    np.testing.assert_allclose(np.cov(many.T), want, atol=0.06)
    assert np.abs(many.mean(axis=0)).max() < 0.05


def test_validation_names_the_field():
    cases = [
        ({}, "values"),
        ({"values": TABLE, "n_arms": 3}, "values"),
        ({"values": [[0.1, 0.2], [0.1]]}, "values"),
        ({"values": TABLE, "z_max": 5}, "z_max"),
        ({"values": TABLE, "initial_z": 4}, "initial_z"),
        ({"n_arms": 2, "z_max": 3, "initial_z": 4}, "initial_z"),
        ({"values": [[0.1, 0.2]] * 20, "lookahead": 5}, "lookahead"),
    ]
    for params, field in cases:
        with pytest.raises(SpecError) as caught:
            RecoveringBandit(**params)
        assert caught.value.field == field and "\n" not in str(caught.value)


def test_environment_contract():
    check_environment(lambda: RecoveringBandit(TABLE, sigma=0.2))
    check_environment(lambda: gp_env(lookahead=2))


def test_lookahead_regret_equals_the_authors_computation():
    # UCB1 (blind to z) on the 3-arm table: the metric after every round equals the plain
    # computation of the authors' regret at every block end, and is >= 0 there (the learner's
    # block is one of the sequences the oracle compares).
    for d in (1, 2, 3):
        env = RecoveringBandit(TABLE, sigma=0.2, lookahead=d)
        trajectory = run(UCB1(), env, 41, reps=(0, 1))
        metric = env.summary_metrics(trajectory)["lookahead_regret"]
        for row, arms in enumerate(actions_of(trajectory).tolist()):
            plain = ref.lookahead_regret(TABLE, 0, d, arms)
            ends = [t for t in range(41) if t < 3 or (t - 3 + 1) % d == 0]
            np.testing.assert_allclose(metric[row, ends], np.array(plain)[ends], atol=1e-12)
            assert np.all(metric[row, ends] >= -1e-12)


# --- the oracles ------------------------------------------------------------------------------


@pytest.mark.parametrize(("values", "z0"), list(random_instances(25, seed=1)))
def test_exact_optimum_equals_brute_force(values, z0):
    horizons = list(range(0, 8 if len(values) < 3 else 7))
    brute = [ref.brute_force_optimum(values, z0, t) for t in horizons]
    np.testing.assert_allclose(oracle.optimal_values(values, z0, horizons), brute, atol=TOL)
    for t in horizons[1:]:  # one block of d = T rounds is the optimum of T rounds
        assert oracle.lookahead_values(values, z0, t, [t])[0] == pytest.approx(brute[t], abs=TOL)


@pytest.mark.parametrize(("values", "z0"), list(random_instances(12, seed=2)))
def test_lookahead_equals_the_plain_policy_and_never_beats_the_optimum(values, z0):
    horizons = [0, 1, 4, 9, 17]
    opt = oracle.optimal_values(values, z0, horizons)
    for d in (1, 2, 3):
        arms = oracle.lookahead_actions(values, z0, d, 17)
        assert arms == ref.lookahead_arms(values, z0, d, 17)
        got = oracle.lookahead_values(values, z0, d, horizons)
        want = np.concatenate(([0.0], np.cumsum(ref.rewards_along(values, z0, arms))))
        np.testing.assert_allclose(got, want[horizons], atol=1e-12)
        assert np.all(got <= opt + TOL)


def test_long_horizons_extrapolate_exactly():
    # A plain forward DP over the distinct z-vectors, every round to T = 150, against the
    # periodic extrapolation (which stops after a few dozen rounds here).
    values, z0 = [[0.0, 0.3, 1.0, 0.2], [0.5, 0.1, 0.6, 0.65], [0.05, 0.9, 0.2, 0.4]], 1
    best = {tuple([z0] * 3): 0.0}
    plain = [0.0]
    for _ in range(150):
        nxt: dict[tuple[int, ...], float] = {}
        for state, value in best.items():
            for a in range(3):
                key = tuple(ref.step_z(list(state), a, 3))
                nxt[key] = max(nxt.get(key, -math.inf), value + values[a][state[a]])
        best = nxt
        plain.append(max(best.values()))
    times = [1, 7, 50, 149, 150]
    np.testing.assert_allclose(oracle.optimal_values(values, z0, times),
                               np.array(plain)[times], rtol=1e-9)  # fmt: skip
    gain, cycle = oracle.long_run_optimum(values, z0)
    _, graph = oracle.recovery_graph(values, z0)
    karp = max_mean_cycle(graph, method="karp")
    assert gain == pytest.approx(oracle._cycle_mean(graph, karp), abs=1e-12)
    assert plain[150] / 150 == pytest.approx(gain, abs=0.05)
    assert len(cycle) >= 1


def test_oracles_on_a_fresh_environment_and_limits():
    env = RecoveringBandit(TABLE, lookahead=2)
    env.reset(EnvironmentRandom(1, 2, [0, 1]))
    times = np.array([1, 4, 6])
    want = [ref.brute_force_optimum(TABLE, 0, t) for t in times]
    np.testing.assert_allclose(oracle.recovering_optimum(env, times), [want] * 2, atol=TOL)
    arms = ref.lookahead_arms(TABLE, 0, 2, 6)
    cum = np.cumsum(ref.rewards_along(TABLE, 0, arms))
    np.testing.assert_allclose(oracle.recovering_lookahead(env, times), [cum[times - 1]] * 2)
    big = RecoveringBandit(n_arms=10)
    with pytest.raises(SpecError, match="z-vectors"):
        oracle.optimal_values(big.values, 0, [20])
    with pytest.raises(SpecError, match="state-arm updates"):
        oracle.optimal_values(TABLE, 0, [10_000], max_work=10)
    with pytest.raises(SpecError, match="exceed"):
        oracle.plan_table(10, 7)
    with pytest.raises(SpecError, match="without repeated"):
        oracle.plan_table(2, 3, repetitions=False)


# --- the GP posterior -------------------------------------------------------------------------


@pytest.mark.parametrize("lengthscale", [0.5, 2.0, 5.0])
def test_grid_posterior_equals_the_textbook_formula(lengthscale):
    rng = np.random.default_rng(4)
    for n in (0, 1, 7, 60):
        zs, ys = rng.integers(0, 13, size=n).tolist(), rng.normal(size=n).tolist()
        counts = np.bincount(zs, minlength=13).astype(float)[None]
        sums = np.bincount(zs, weights=ys, minlength=13)[None] if n else np.zeros((1, 13))
        kernel = oracle.se_kernel(12, lengthscale, 1.5)
        mean, cov = grid_posterior(kernel, counts, sums, 0.2)
        want_mean, want_cov = ref.textbook_posterior(zs, ys, 12, lengthscale, 1.5, 0.2)
        np.testing.assert_allclose(mean[0], want_mean, atol=1e-10)
        np.testing.assert_allclose(cov[0], want_cov, atol=1e-10)
        root = sample_root(cov)
        np.testing.assert_allclose(root @ np.swapaxes(root, 1, 2), cov, atol=1e-10)


def test_grid_posterior_equals_scikit_learn():
    gaussian_process = pytest.importorskip("sklearn.gaussian_process")
    kernels = pytest.importorskip("sklearn.gaussian_process.kernels")
    rng = np.random.default_rng(5)
    zs, ys = rng.integers(0, 11, size=25), rng.normal(size=25)
    kernel = kernels.ConstantKernel(1.5, "fixed") * kernels.RBF(2.0, "fixed")
    model = gaussian_process.GaussianProcessRegressor(kernel, alpha=0.04, optimizer=None)
    model.fit(zs[:, None].astype(float), ys)
    want_mean, want_cov = model.predict(np.arange(11.0)[:, None], return_cov=True)
    counts = np.bincount(zs, minlength=11).astype(float)[None]
    mean, cov = grid_posterior(oracle.se_kernel(10, 2.0, 1.5), counts,
                               np.bincount(zs, weights=ys, minlength=11)[None], 0.2)  # fmt: skip
    np.testing.assert_allclose(mean[0], want_mean, atol=1e-8)
    np.testing.assert_allclose(cov[0], want_cov, atol=1e-8)


# --- the learners -----------------------------------------------------------------------------


def test_beta_is_the_authors():
    # drgpucb_functs.UCBSeqRep: 2 log((t + d − 1)² K^d Z); rgpucb_functs.CalcUCB: 2 log(t² Z K)
    assert ucb_beta(10, 10, 1, 30) == pytest.approx(2 * math.log(100 * 30 * 10), rel=1e-15)
    assert ucb_beta(57, 10, 3, 30) == pytest.approx(2 * math.log(59**2 * 1000 * 30), rel=1e-15)


UCB_CASES = [(1, True, None), (2, True, True), (3, True, False), (2, False, None)]


@pytest.mark.parametrize(("d", "repetitions", "include_noise"), UCB_CASES)
def test_rgp_ucb_equals_the_plain_reference(d, repetitions, include_noise):
    fast = run(RGPUCB(d, repetitions, include_noise=include_noise), gp_env(), 60)
    plain_policy = ref.PlainRGPUCB(d, repetitions, include_noise=include_noise)
    plain = run(BatchedSimplePolicy(plain_policy), gp_env(), 60)
    for name in ("reward", "expected", "pulls", "switches"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name))
    # with the textbook posterior over the raw observations: the same arms
    textbook = ref.PlainRGPUCB(d, repetitions, "textbook", include_noise)
    np.testing.assert_array_equal(
        fast.pulls, run(BatchedSimplePolicy(textbook), gp_env(), 60).pulls
    )


@pytest.mark.parametrize(("d", "repetitions"), [(1, True), (2, True), (3, False)])
def test_rgp_ucb_index_equals_the_textbook_computation(d, repetitions):
    # after 9 rounds, the index of every plan for round 10 (β with t = 9 rounds played)
    fast, plain = RGPUCB(d, repetitions), ref.PlainRGPUCB(d, repetitions, "textbook")
    wrapped = BatchedSimplePolicy(plain)
    run(fast, gp_env(), 9, reps=(4,))
    run(wrapped, gp_env(), 9, reps=(4,))
    fast.t += 1  # as select() does before choosing
    copy = wrapped.copies[0]
    copy.t += 1
    np.testing.assert_allclose(fast.index()[0], copy.indices(), rtol=0, atol=1e-9)


TS_CASES = [(1, None), (1, False), (2, None), (3, True)]


@pytest.mark.parametrize(("d", "include_noise"), TS_CASES)
def test_rgp_ts_equals_the_plain_reference(d, include_noise):
    def go(policy):
        return run_batch(policy, gp_env(), 45, reps=[0, 3, 8], seed=5, env_key=1, policy_key=2)

    fast = go(RGPTS(d, include_noise=include_noise))
    plain = go(PerReplication(lambda s: ref.PlainRGPTS(s, d, include_noise=include_noise)))
    for name in ("reward", "expected", "pulls", "switches"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(plain, name))
    if d == 1:  # the textbook posterior: the same arms
        textbook = go(
            PerReplication(
                lambda s: ref.PlainRGPTS(s, 1, posterior="textbook", include_noise=include_noise)
            )
        )
        np.testing.assert_array_equal(fast.pulls, textbook.pulls)


def test_initialisation_then_a_block_played_through():
    # rounds 1..K pull arms 0..K-1 in turn; the plan chosen in round K + 1 fills rounds
    # K + 1 .. K + d whatever they pay
    for policy in (RGPUCB(3), RGPTS(3)):
        arms = actions_of(run(policy, gp_env(), 7))
        assert np.all(arms[:, :4] == [0, 1, 2, 3])
        np.testing.assert_array_equal(arms[:, 4:7], policy.plan)


def test_regret_against_the_optimum_is_nonnegative_and_learning_helps():
    env_params = {"values": TABLE, "sigma": 0.1}
    opt = oracle.optimal_values(TABLE, 0, np.arange(1, 31))
    for policy in (RGPUCB(), RGPUCB(2), RGPTS(), RGPTS(2), RoundRobin()):
        expected = run(policy, RecoveringBandit(**env_params), 30, reps=range(6)).expected
        assert np.all(expected <= opt + TOL)
    # on GP draws (5 arms), both learners' 1-step lookahead regret after 300 rounds is well
    # below round robin's
    regret = {}
    for name, policy in (("ucb", RGPUCB()), ("ts", RGPTS()), ("rr", RoundRobin())):
        env = RecoveringBandit(n_arms=5, z_max=10, lengthscale=3.0)
        trajectory = run(policy, env, 300, reps=range(4))
        regret[name] = env.summary_metrics(trajectory)["lookahead_regret"][:, -1].mean()
    assert regret["ucb"] < 0.5 * regret["rr"] and regret["ts"] < 0.5 * regret["rr"], regret


def test_planning_a_few_replications_at_a_time_changes_nothing(monkeypatch):
    def go():
        env = gp_env(lookahead=2)
        runs = [run(policy, env, 30, reps=range(5)) for policy in (RGPUCB(2), RGPTS(2))]
        return runs, env.summary_metrics(runs[-1])["lookahead_regret"]

    (whole, metric) = go()
    monkeypatch.setattr(oracle, "CHUNK", 2 * 16 * 2)  # two replications per chunk (P = 16)
    (parts, chunked_metric) = go()
    for a, b in zip(whole, parts, strict=True):
        np.testing.assert_array_equal(a.pulls, b.pulls)
        np.testing.assert_array_equal(a.expected, b.expected)
    np.testing.assert_array_equal(metric, chunked_metric)
    assert len(oracle.row_chunks(5, oracle.plan_table(4, 2))) == 3


def test_policy_contracts_and_requirements():
    check_policy(lambda: RGPUCB(2), env_factory=gp_env)
    check_policy(lambda: RGPTS(2), env_factory=gp_env)
    with pytest.raises(SpecError, match="recovering bandit"):
        run(RGPUCB(), BernoulliBandit([0.5]), 3)
    with pytest.raises(SpecError, match="noise-free"):
        run(RGPTS(), RecoveringBandit(TABLE, sigma=0.0), 3)
    run(RGPTS(noise=0.05), RecoveringBandit(TABLE, sigma=0.0), 5)  # a GP noise of its own
    with pytest.raises(SpecError, match="lookahead"):
        RGPUCB(0)
    with pytest.raises(SpecError, match="without repeated"):
        run(RGPUCB(4, repetitions=False), RecoveringBandit(TABLE), 5)
