"""The compiled round loops give the same numbers as the readable NumPy loop, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.core.compiled import kernel
from impactbandits.core.streams import beta_inverse
from impactbandits.kernels import available, simulate, simulate_compiled
from impactbandits.registry import build_environment, build_policy

# every test runs with the compiled loops on (conftest.kernel_backend)
pytestmark = [
    pytest.mark.skipif(not available(), reason="no compiled loops (numba not installed)"),
    pytest.mark.usefixtures("kernel_backend"),
]

ENVIRONMENTS = [
    ("single-peaked", {"instance": 3}),
    ("single-peaked", {"instance": 3, "noise": "gaussian", "sigma": 0.05}),
    ("single-peaked", {"instance": 1, "noise": "beta", "sigma": 0.1}),
    ("increasing", {"family": "inc_2", "alpha": 0.1}),
    ("bernoulli", {"means": [0.3, 0.5, 0.7]}),
    ("gaussian", {"n_arms": 12, "sigma": 0.1}),
    ("gaussian", {"means": [0.1, 0.4, 0.2, 0.35, 0.3, 0.0, 0.25, 0.15, 0.05], "sigma": 1.0}),
    # Metelli et al.'s rising arms observed through mean-parametrised Beta draws
    ("rising", {"instance": "15-arms", "length": 1000}),
    # Seznec et al.'s rotting arms (values outside [0, 1], Gaussian noise with sigma = 1)
    ("rotting", {"length": 1000, "breakpoint": 200}),
]
POLICIES = [
    ("greedy", {}),
    ("ucb1", {}),
    ("ucb1", {"c": 0.5}),
    ("exp3", {"gamma": 0.01}),
    ("exp3", {"gamma": 0.3}),
    ("exp3", {}),
    ("r-exp3", {}),
    ("r-exp3", {"variation_budget": 50.0}),
    ("ucb", {}),
    ("d-ucb", {}),
    ("d-ucb", {"discount": 0.9}),
    ("sw-ucb", {}),
    ("sw-ucb", {"window": 17}),
    ("last-reward-greedy", {}),
    ("one-step-optimistic", {}),
    ("one-step-optimistic", {"noise_bound": 0.05}),
    ("spo", {}),
    ("spo", {"noise_bound": 0.1}),
    ("spo-delta", {"sigma": 0.05}),
    ("patil", {}),
    ("hkr", {}),
]


def _run(env_spec, policy_spec, compiled, reps=(0, 3, 7), rounds=700, checkpoints=None):
    env = build_environment(*env_spec)
    policy = build_policy(*policy_spec)
    times = np.unique(np.r_[1, 2, 50, 333, rounds] if checkpoints is None else checkpoints)
    return simulate(
        env,
        policy,
        rounds,
        rounds,
        times,
        EnvironmentRandom(11, 5, list(reps)),
        BatchRNG.from_key(11, (6,), list(reps)),
        check_actions=False,
        compiled=compiled,
    )


@pytest.mark.parametrize("env_spec", ENVIRONMENTS, ids=lambda e: f"{e[0]}{e[1]}")
@pytest.mark.parametrize("policy_spec", POLICIES, ids=lambda p: f"{p[0]}{p[1]}")
def test_compiled_loop_equals_the_readable_loop(env_spec, policy_spec):
    if env_spec[0] == "increasing":
        pytest.importorskip("impactbandits.envs.rested")
    fast = _run(env_spec, policy_spec, compiled=True)
    slow = _run(env_spec, policy_spec, compiled=False)
    for name in ("reward", "expected", "pulls", "switches"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    # the pair really ran compiled (simulate_compiled accepts it)
    env, policy = build_environment(*env_spec), build_policy(*policy_spec)
    random = EnvironmentRandom(11, 5, [0])
    env.reset(random)
    rng = BatchRNG.from_key(11, (6,), [0])
    policy.reset(env.action_space, 50, rng)
    assert simulate_compiled(env, policy, 50, np.array([50]), 1, rng) is not None


@pytest.mark.parametrize(
    "env_spec",
    [
        ("bernoulli", {"means": list(np.linspace(0.1, 0.9, 300))}),
        # exact ties everywhere: the lowest index must win
        ("bernoulli", {"means": [0.5] * 40 + [0.6] * 40}),
        ("bernoulli", {"means": list(np.random.default_rng(1).random(64))}),
        # continuous rewards: (nearly) every arm in a bucket of its own
        ("gaussian", {"means": list(np.random.default_rng(2).random(150)), "sigma": 0.3}),
        ("bernoulli", {"means": list(np.linspace(0.1, 0.9, 1000))}),
    ],
    ids=["spread", "ties", "random", "gaussian", "thousand"],
)
def test_ucb1_with_buckets_equals_the_readable_loop_with_many_arms(env_spec):
    """UCB1 with K >= 16 selects through buckets of equal (count, mean)
    (kernels/ucb_groups.py): the same arm as the full argmax, round by round (every round is a
    checkpoint)."""
    fast = _run(env_spec, ("ucb1", {}), True, reps=(0, 1), rounds=3000,
                checkpoints=np.arange(1, 3001))  # fmt: skip
    slow = _run(env_spec, ("ucb1", {}), False, reps=(0, 1), rounds=3000,
                checkpoints=np.arange(1, 3001))  # fmt: skip
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    np.testing.assert_array_equal(fast.reward, slow.reward)


def test_ucb1_buckets_fall_back_when_means_tie_after_rounding():
    """64 arms (the buckets' minimum): arms 0 and 2 are worth 0.75 − 1 ulp, arm 1 0.75, the
    others 0.1 (noise-free). With equal counts their means differ but their indices round to
    the same float, so the lowest index (arm 0, the lower mean) must win where the top bucket
    by mean holds arm 1. The replay below shows such
    rounds happen; the buckets see them and fall back to the full scan (without that fallback
    this test fails: checked by disabling it)."""
    v = 0.75
    means = [float(np.nextafter(v, 0)), v, float(np.nextafter(v, 0))] + [0.1] * 61
    env_spec = ("constant", {"means": means})
    rounds = 3000
    fast = _run(env_spec, ("ucb1", {}), True, reps=(0,), rounds=rounds,
                checkpoints=np.arange(1, rounds + 1))  # fmt: skip
    slow = _run(env_spec, ("ucb1", {}), False, reps=(0,), rounds=rounds,
                checkpoints=np.arange(1, rounds + 1))  # fmt: skip
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    # replay the readable loop's pulls: rounds whose maximal index is reached by two different
    # means of one count, the lower mean at the lower arm index
    steps = np.diff(np.vstack([np.zeros(len(means)), slow.pulls[0]]), axis=0)
    counts, sums, events = np.zeros(len(means)), np.zeros(len(means)), 0
    for t, arm in enumerate(np.argmax(steps, axis=1), start=1):
        if counts.min() > 0:
            mean = sums / counts
            index = mean + np.sqrt(2.0 * np.log(t) / counts)
            top = np.flatnonzero(index == index.max())
            lowest = top[0]
            events += any(counts[j] == counts[lowest] and mean[j] > mean[lowest] for j in top)
        counts[arm] += 1
        sums[arm] += means[arm]
    assert events >= 10


@pytest.mark.parametrize(
    "env_spec",
    [
        # linear stretches: estimates tied in exact arithmetic, unequal in floating point
        ("imab", {"family": "lower-bound", "k": 5, "m": 2, "horizon": 3000, "length": 3000}),
        ("imab", {"family": "linear-vs-flat", "k": 4, "ramp": 2500, "length": 3000}),
        ("imab", {"family": "random", "k": 10, "seed": 3, "length": 3000}),
        ("imab", {"family": "random", "k": 7, "random_family": "late-bloomer", "length": 3000}),
        ("imab", {"family": "random", "k": 6, "length": 3000, "noise": "gaussian", "sigma": 0.05}),
    ],
    ids=["lower-bound", "linear-vs-flat", "random", "late-bloomer", "noisy"],
)
def test_patil_compiled_equals_the_policy_object(env_spec):
    """Patil et al.'s Algorithm 1 (a SimplePolicy, one copy per replication) against its
    compiled transcription, round by round, on the IMAB families where its tie rule decides
    (I_m and linear-vs-flat are linear stretches)."""
    rounds = 3000
    fast = _run(env_spec, ("patil", {}), True, reps=(0, 1), rounds=rounds,
                checkpoints=np.arange(1, rounds + 1))  # fmt: skip
    slow = _run(env_spec, ("patil", {}), False, reps=(0, 1), rounds=rounds,
                checkpoints=np.arange(1, rounds + 1))  # fmt: skip
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    np.testing.assert_array_equal(fast.reward, slow.reward)
    env, policy = build_environment(*env_spec), build_policy("patil", {})
    random = EnvironmentRandom(11, 5, [0])
    env.reset(random)
    rng = BatchRNG.from_key(11, (6,), [0])
    policy.reset(env.action_space, rounds, rng)
    assert simulate_compiled(env, policy, rounds, np.array([rounds]), 1, rng) is not None


@pytest.mark.parametrize(
    "env_spec",
    [
        ("increasing", {"family": "inc_1", "alpha": 0.1}),
        ("increasing", {"family": "inc_2", "alpha": 0.5}),
        ("increasing", {"family": "inc_3", "alpha": 1.0}),
        ("increasing", {"family": "inc_2", "alpha": 0.1, "noise": "gaussian", "sigma": 0.05}),
        ("imab", {"family": "random", "k": 8, "seed": 5, "length": 2000}),
        ("single-peaked", {"instance": 2, "noise": "gaussian", "sigma": 0.1}),
    ],
    ids=["inc_1", "inc_2", "inc_3", "inc_2-noisy", "imab", "single-peaked-noisy"],
)
@pytest.mark.parametrize("rounds", [50, 2000])
def test_hkr_compiled_equals_the_policy_object(env_spec, rounds):
    """Heidari et al.'s HKR (a SimplePolicy, one copy per replication) against its compiled
    transcription, round by round: phases, eliminations with the linear optimistic sum (both
    slope signs: noise makes slopes negative) and the all-dominated fallback."""
    fast = _run(env_spec, ("hkr", {}), True, reps=(0, 1, 2), rounds=rounds,
                checkpoints=np.arange(1, rounds + 1))  # fmt: skip
    slow = _run(env_spec, ("hkr", {}), False, reps=(0, 1, 2), rounds=rounds,
                checkpoints=np.arange(1, rounds + 1))  # fmt: skip
    np.testing.assert_array_equal(fast.pulls, slow.pulls)
    np.testing.assert_array_equal(fast.reward, slow.reward)


def test_linear_sum_equals_the_numpy_closed_form():
    """The compiled two-sided Σ min(1, v + k·s) against the NumPy one, value for value, on
    slopes of both signs, values above and below 1 and short and long horizons."""
    from impactbandits.kernels.loop import compile_kernel
    from impactbandits.policies.spo import linear_optimistic_sum
    from impactbandits.policies.spo_bound import linear_sum as declared

    linear_sum = compile_kernel(declared)

    rng = np.random.default_rng(8)
    values = np.r_[rng.uniform(-0.5, 1.5, 400), 1.0, 0.0, 0.999999]
    slopes = np.r_[rng.normal(0, 0.01, 200), rng.normal(0, 1e-5, 200), 0.0, -0.3, 0.3]
    for remaining in (0, 1, 7, 10_000):
        expected = linear_optimistic_sum(values, slopes, remaining)
        got = [linear_sum(v, s, remaining) for v, s in zip(values, slopes, strict=True)]
        np.testing.assert_array_equal(got, expected)


@kernel
def _beta(a, b, u):
    return beta_inverse(a, b, u)


def test_compiled_noise_equals_the_numpy_noise_value_for_value():
    """The counter-based noise the worlds read (Philox by position, ndtri, betaincinv), compiled,
    against the NumPy path, on 100,000 (replication, arm, pull) triples with large and odd/even
    indices."""
    from scipy.special import betaincinv

    from impactbandits.core.philox import normals, stream_key, uniforms
    from impactbandits.core.streams import counter_normal, counter_uniform
    from impactbandits.kernels.loop import compile_kernel

    uniform, normal, beta = (compile_kernel(k) for k in (counter_uniform, counter_normal, _beta))
    rng = np.random.default_rng(3)
    reps = rng.integers(0, 2**32, 100_000, dtype=np.uint64)
    arms = rng.integers(0, 1000, 100_000)
    pulls = rng.integers(0, 2**40, 100_000)
    key = stream_key(9, (1, 2))
    u = uniforms(key, reps, arms, pulls)
    z = normals(key, reps, arms, pulls)
    words = [np.array([key[0], key[1], r], dtype=np.uint64) for r in reps]
    got_u = np.array([uniform(w, 0, a, m) for w, a, m in zip(words, arms, pulls, strict=True)])
    got_z = np.array([normal(w, 0, a, m) for w, a, m in zip(words, arms, pulls, strict=True)])
    np.testing.assert_array_equal(got_u, u)
    np.testing.assert_array_equal(got_z, z)
    got_b = np.array([beta(2.0, 2.0, x) for x in u[:20_000]])
    np.testing.assert_array_equal(got_b, betaincinv(2.0, 2.0, u[:20_000]))


def test_compiled_beta_mean_observation_equals_the_numpy_one():
    """The "beta-mean" observation of the pull-table world, compiled, against
    ``rested.beta_mean_observation`` (which the NumPy path calls), value for value: means over
    [0, 1] including 0, 1 and the clip's edges, where the clip decides."""
    from impactbandits.core import pull_model
    from impactbandits.core.philox import stream_key, uniforms
    from impactbandits.envs import rested
    from impactbandits.kernels import codes as kinds
    from impactbandits.kernels.loop import compile_kernel

    assert (pull_model._BETA_MEAN_SHAPE, pull_model._BETA_MEAN_CLIP) == (
        rested.BETA_MEAN_SHAPE,
        rested.BETA_MEAN_CLIP,
    )
    outcome = compile_kernel(pull_model.outcome)
    rng = np.random.default_rng(4)
    clip = rested.BETA_MEAN_CLIP
    edges = [0.0, 1.0, clip, 1 - clip, clip / 2, 1 - clip / 2, 0.5, 1e-300]
    means = np.r_[edges, rng.random(5_000), rng.random(500) * 1e-5, 1 - rng.random(500) * 1e-5]
    reps = rng.integers(0, 2**32, means.size, dtype=np.uint64)
    arms = rng.integers(0, 50, means.size)
    pulls = rng.integers(0, 10**6, means.size)
    words = stream_key(5, (3,))
    expected = rested.beta_mean_observation(means, uniforms(words, reps, arms, pulls))
    got = [
        outcome(kinds.BETA_MEAN, 0.0, np.array([*words, r], dtype=np.uint64), 0, int(a), int(m),
                float(v))
        for v, r, a, m in zip(means, reps, arms, pulls, strict=True)
    ]  # fmt: skip
    np.testing.assert_array_equal(got, expected)


def test_memory_and_cost_do_not_grow_with_arms_times_pulls():
    """Nothing per (arm, pull) is stored: a 1000-arm Bernoulli bandit runs compiled."""
    env = build_environment("bernoulli", {"means": list(np.linspace(0.1, 0.9, 1000))})
    env.reset(EnvironmentRandom(1, 2, [0, 1]))
    model = env.pull_model(10**6)
    assert model is not None and model.values.size == 2 * 1000


def test_pairs_without_a_kernel_fall_back():
    """Policies that declare no compiled step (on an environment with one: its per-evaluation
    noise is on the compiled loop too, tests/test_reevaluation_compiled.py)."""
    env = build_environment("single-peaked", {"instance": 3, "noise": "gaussian", "sigma": 0.05,
                                              "noise_draws": "per-evaluation"})  # fmt: skip
    random = EnvironmentRandom(1, 2, [0])
    env.reset(random)
    rng = BatchRNG.from_key(1, (2,), [0])
    for kind, params in [("epsilon-greedy", {}), ("etc", {}), ("round-robin", {})]:
        assert build_policy(kind, params).compiled_step() is None
        policy = build_policy(kind, params)
        policy.reset(env.action_space, 100, rng)
        assert simulate_compiled(env, policy, 100, np.array([100]), 1, rng) is None


def test_disabled_by_the_environment_variable(monkeypatch):
    monkeypatch.setenv("IMPACTBANDITS_KERNELS", "0")
    assert not available()


def test_spo_delta_on_lindner_figure_1_equals_the_readable_loop_at_a_long_horizon():
    """Figure 1's noisy setting (instance 3, σ = 0.05, SPO-δ): thousands of LP (⋆) updates,
    infeasible arms included, bit for bit."""
    env_spec = ("single-peaked", {"instance": 3, "noise": "gaussian", "sigma": 0.05})
    fast = _run(env_spec, ("spo-delta", {"sigma": 0.05}), True, reps=(0, 1, 2), rounds=5000)
    slow = _run(env_spec, ("spo-delta", {"sigma": 0.05}), False, reps=(0, 1, 2), rounds=5000)
    for name in ("reward", "expected", "pulls", "switches"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
