"""Patil et al. (2023): Algorithm 1's guarantees checked on many instances, exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

from impactbandits.core.deterministic import play_deterministic
from impactbandits.envs.improving import (
    linear_vs_flat,
    lower_bound_instance,
    random_imab_curves,
    saturating_curves,
    validate_imab,
)
from impactbandits.errors import SpecError
from impactbandits.metrics import competitive_ratio, potential_gap
from impactbandits.policies.classic import RoundRobin
from impactbandits.policies.improving import PatilAnytime


class _RR(PatilAnytime):
    """Round robin as a SimplePolicy (arm (t−1) mod k) for the deterministic loop."""

    def select(self):
        self.t += 1
        return (self.t - 1) % self.k


def _random_concave(rng, k, length):
    """An independent generator: random nonincreasing nonnegative increments (ties and flat
    stretches included), cumulated and scaled into [0, 1]."""
    increments = np.sort(rng.exponential(1.0, (k, length)), axis=1)[:, ::-1]
    increments[rng.random((k, length)) < 0.05] = 0.0  # some zero increments ...
    increments = -np.sort(-increments, axis=1)  # ... kept nonincreasing
    if rng.random() < 0.3:
        increments[:, : rng.integers(1, 5)] = increments[:, :1]  # equal first increments (ties)
    start = rng.uniform(0, 0.3, (k, 1))
    curves = start + np.cumsum(increments, axis=1)
    return curves / max(curves.max(), 1.0) * rng.uniform(0.5, 1.0)


def _run_counts(curves, rounds, policy=None):
    return play_deterministic(policy or PatilAnytime(), curves, rounds)


def _rewards(curves, counts):
    """ALG(t) for every round from the pull counts after each round."""
    cumulative = np.concatenate([np.zeros((curves.shape[0], 1)), np.cumsum(curves, axis=1)], 1)
    return cumulative[np.arange(curves.shape[0]), counts].sum(axis=1)


def _check_lemma6_and_cr(curves, rounds):
    k = curves.shape[0]
    counts = _run_counts(curves, rounds)
    cumulative = np.concatenate([np.zeros((k, 1)), np.cumsum(curves, axis=1)], axis=1)
    opt = cumulative.max(axis=0)  # Proposition 1: OPT(N) = max_i Rew_i(N)
    # Lemma 6: the first arm to be pulled an (N+1)-th time has Rew_i(N) = OPT(N), every N ≥ 2
    most = counts.max(axis=1)
    checked = 0
    for t in np.flatnonzero(np.diff(most) > 0) + 1:  # round t+1 raised the maximum count
        n = int(most[t - 1])
        if n < 2:
            continue
        arm = int(np.argmax(counts[t] > counts[t - 1]))
        assert cumulative[arm, n] == pytest.approx(opt[n], rel=1e-9, abs=1e-12), (n, arm)
        checked += 1
    # competitive ratio at every T: CR ≤ 200k (Theorem 4's constant)
    alg = _rewards(curves, counts)
    horizons = np.arange(1, rounds + 1)
    ratio = competitive_ratio(opt[horizons], alg)
    assert np.all(ratio <= 200 * k), ratio.max()
    return checked


def test_lemma6_and_cr_bound_on_thousands_of_random_instances():
    rng = np.random.default_rng(2023)
    checked = 0
    for instance in range(1500):
        k = int(rng.integers(2, 9))
        rounds = int(rng.integers(100, 600))
        if instance % 2:
            curves = random_imab_curves(k, rounds, seed=instance)
        else:
            curves = _random_concave(rng, k, rounds)
        validate_imab(curves)
        checked += _check_lemma6_and_cr(curves, rounds)
    assert checked > 100_000


def test_lemma6_on_long_runs():
    for seed in range(6):
        curves = random_imab_curves(6, 20_000, seed)
        assert _check_lemma6_and_cr(curves, 20_000) > 1000


def _theorem5_rounds(asymptotes, saturation):
    """A run length after which every arm has reached its asymptote (derived, not measured).

    For f_i(n) = a_i(1 − (1 − n/L_i)²) the increment at n ≤ L_i is a_i(2L_i − 2n + 1)/L_i² ≥
    δ_i = a_i/L_i². While N_i < L_i, arm i's optimistic estimate is p_i ≥ δ_i M(M+1)/2 ≥ δ_i M²/2
    with M = N* − N_i. The most-pulled arm has p = Rew(N*) ≤ N* and loses ties to arms with
    fewer pulls, so whenever it is pulled, δ_i M²/2 < N*, i.e. N_i > N* − √(2N*/δ_i). Let X_i be
    the least X with X − √(2X/δ_i) ≥ L_i. Because Σ_j N_j ≤ k·N*, after k·X + 1 rounds the
    maximum count has gone from X to X+1 through a pull of the most-pulled arm, at which moment
    N_i ≥ L_i for every arm with X ≥ X_i. So k·max_i X_i + 1 rounds suffice.
    """
    k = len(asymptotes)
    worst = 0
    for a, sat in zip(asymptotes, saturation, strict=True):
        delta = a / sat**2
        x = sat
        while x - math.sqrt(2 * x / delta) < sat:
            x += 1
        worst = max(worst, x)
    return k * worst + 1


def test_theorem5_every_arm_reaches_its_potential_within_the_derived_run_length():
    rng = np.random.default_rng(5)
    for _ in range(12):
        k = int(rng.integers(2, 5))
        asymptotes = rng.uniform(0.5, 1.0, k).tolist()
        saturation = rng.integers(3, 25, k).tolist()
        rounds = _theorem5_rounds(asymptotes, saturation)
        curves = saturating_curves(asymptotes, saturation, rounds)
        counts = play_deterministic(PatilAnytime(), curves, rounds, checkpoints=[rounds])[0]
        assert np.all(counts >= saturation), (counts, saturation, rounds)
        np.testing.assert_allclose(
            potential_gap(curves, counts[None, :], np.asarray(asymptotes))[0], 0.0, atol=1e-15
        )


def _cr(curves, rounds, policy):
    counts = play_deterministic(policy, curves, rounds, checkpoints=[rounds])[0]
    cumulative = np.cumsum(curves, axis=1)
    opt = cumulative[:, rounds - 1].max()
    alg = sum(cumulative[i, n - 1] for i, n in enumerate(counts) if n > 0)
    return opt / alg


KS = (2, 4, 8, 16, 32, 64)


def test_competitive_ratio_growth_in_k(capsys):
    """I_m family (T = kN, N = 50, m the last arm): both algorithms near the lower bound
    k/2 … k. Linear-vs-flat (arm 0 rising over the whole horizon, others at 0): round robin
    within [k²/2, 8k²] (Theorem 3), Algorithm 1 O(k). Fitted exponents are printed."""
    per_arm = 50
    ours_lb, rr_lb, ours_lin, rr_lin = [], [], [], []
    for k in KS:
        T = k * per_arm
        lb = lower_bound_instance(k, k - 1, T)
        ours_lb.append(_cr(lb, T, PatilAnytime()))
        rr_lb.append(_cr(lb, T, _RR()))
        lin = linear_vs_flat(k, ramp=T, length=T)
        ours_lin.append(_cr(lin, T, PatilAnytime()))
        rr_lin.append(_cr(lin, T, _RR()))
    for k, a, b in zip(KS, ours_lb, rr_lb, strict=True):
        assert k / 2 <= a <= k and k / 2 <= b <= k, (k, a, b)
    for k, a, b in zip(KS, ours_lin, rr_lin, strict=True):
        assert k**2 / 2 <= b <= 8 * k**2, (k, b)
        assert a <= 2 * k, (k, a)

    def slope(values):
        return float(np.polyfit(np.log(KS), np.log(values), 1)[0])

    with capsys.disabled():
        print(
            f"\nCR exponents in k (k = {KS[0]}..{KS[-1]}): I_m: Algorithm 1 {slope(ours_lb):.3f}, "
            f"RR {slope(rr_lb):.3f}; linear-vs-flat: Algorithm 1 {slope(ours_lin):.3f}, "
            f"RR {slope(rr_lin):.3f}"
        )
    assert 0.8 <= slope(ours_lb) <= 1.1 and 0.8 <= slope(rr_lb) <= 1.1
    assert 1.8 <= slope(rr_lin) <= 2.2 and slope(ours_lin) <= 1.1


def test_round_robin_helper_matches_library_round_robin():
    from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
    from impactbandits.envs.rested import RestedBandit

    curves = lower_bound_instance(3, 2, 30)
    mine = play_deterministic(_RR(), curves, 30, checkpoints=[30])[0]
    env = RestedBandit(curves.tolist())
    theirs = simulate(
        env,
        RoundRobin(),
        30,
        None,
        np.array([30]),
        EnvironmentRandom(0, 1, [0]),
        BatchRNG.from_key(0, (1,), [0]),
    ).pulls[0, -1]
    np.testing.assert_array_equal(mine, theirs)


def test_patil_policy_through_the_batched_runner_matches_the_deterministic_loop():
    from impactbandits.core import BatchRNG, EnvironmentRandom, simulate
    from impactbandits.core.policy import BatchedSimplePolicy
    from impactbandits.envs.rested_families import ImprovingBandit

    env = ImprovingBandit("random", k=4, length=500, seed=3)
    fast = play_deterministic(PatilAnytime(), env.curves, 500)
    batched = simulate(
        env,
        BatchedSimplePolicy(PatilAnytime()),
        500,
        None,
        np.arange(1, 501),
        EnvironmentRandom(0, 1, [0, 1]),
        BatchRNG.from_key(0, (1,), [0, 1]),
    ).pulls
    np.testing.assert_array_equal(batched[0], fast)
    np.testing.assert_array_equal(batched[1], fast)


@pytest.mark.parametrize(
    ("curves", "message"),
    [
        ([[0.1, 0.3, 0.2]], "arm 0 decreases at index 2"),
        ([[0.1, 0.2, 0.4, 0.5]], "arm 0 has increasing returns at index 2"),
        ([[0.1, 0.2], [0.5, 1.5]], r"arm 1 has value 1.5 at pull 2 \(index 1\)"),
    ],
)
def test_imab_validation_names_arm_and_index(curves, message):
    with pytest.raises(SpecError, match=message):
        validate_imab(np.array(curves))


def test_imab_environment_rejects_invalid_curves_in_specs():
    from impactbandits import ExperimentSpec

    with pytest.raises(SpecError, match=r"environments\[0\]\.curves: arm 0 decreases"):
        ExperimentSpec.create(
            name="x",
            horizons=[2],
            policies=[{"kind": "patil"}],
            environments=[
                {"kind": "imab", "family": "curves", "curves": [[0.2, 0.1, 0.05], [0.1, 0.2, 0.3]]}
            ],
        )
