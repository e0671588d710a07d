"""Patil et al. (2023) Algorithm 1: speed at T = 10⁶ (k = 10, target < 5 s) and the growth of
competitive ratios in k (k = 2 … 64) on the lower-bound family I_m and on the family where
round robin is worst (one arm rising linearly over the horizon, the others flat at 0).

The speed is measured twice on the same instance: the policy object driven by
``play_deterministic`` (plain Python floats) and the library's engine (``simulate``, which runs
Algorithm 1 in the compiled loop when numba is installed); both must end with the same pull
counts."""

from __future__ import annotations

import argparse
import time

import numpy as np

from impactbandits.core.deterministic import play_deterministic
from impactbandits.envs.improving import linear_vs_flat, lower_bound_instance, random_imab_curves
from impactbandits.policies.improving import PatilAnytime

KS = (2, 4, 8, 16, 32, 64)
PULLS_PER_ARM = 100


class _RoundRobin(PatilAnytime):
    def select(self) -> int:
        self.t += 1
        return (self.t - 1) % self.k


def _ratio(curves: np.ndarray, rounds: int, policy: PatilAnytime) -> float:
    counts = play_deterministic(policy, curves, rounds, checkpoints=[rounds])[0]
    cumulative = np.concatenate([np.zeros((curves.shape[0], 1)), np.cumsum(curves, axis=1)], 1)
    return float(cumulative[:, rounds].max() / cumulative[np.arange(len(counts)), counts].sum())


def _engine(curves: np.ndarray, rounds: int) -> tuple[float, np.ndarray]:
    """CPU seconds of ``simulate`` on the same curves (after a short warm-up run that loads
    the compiled loop) and the final pull counts."""
    from impactbandits.core import BatchRNG, EnvironmentRandom
    from impactbandits.envs.rested_families import ImprovingBandit
    from impactbandits.kernels import simulate
    from impactbandits.registry import build_policy

    def run(length: int) -> tuple[float, np.ndarray]:
        env = ImprovingBandit(family="random", k=curves.shape[0], length=length, seed=0)
        if length == rounds:
            assert np.array_equal(env.curves, curves)  # the same instance
        start = time.process_time()
        trajectory = simulate(
            env,
            build_policy("patil", {}),  # Algorithm 1, one copy per replication
            length,
            length,
            np.array([length]),
            EnvironmentRandom(0, 1, [0]),
            BatchRNG.from_key(0, (0,), [0]),
            check_actions=False,
        )
        return time.process_time() - start, trajectory.pulls[0, -1]

    run(100)
    return run(rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000_000)
    args = parser.parse_args()
    curves = random_imab_curves(10, args.rounds, seed=0)
    start = time.process_time()
    counts = play_deterministic(PatilAnytime(), curves, args.rounds, checkpoints=[args.rounds])
    plain = time.process_time() - start
    engine, pulls = _engine(curves, args.rounds)
    same = "same pull counts" if np.array_equal(pulls, counts[-1]) else "DIFFERENT pull counts"
    print(
        f"Algorithm 1, k = 10, T = {args.rounds:,}, CPU s: policy object {plain:.2f}, engine "
        f"{engine:.2f} ({plain / engine:.0f}x; {same}; target < 5 s: "
        f"{'met' if min(plain, engine) < 5 else 'NOT MET'})"
    )

    rows = []
    for k in KS:
        T = k * PULLS_PER_ARM
        lb = lower_bound_instance(k, k - 1, T)
        lin = linear_vs_flat(k, ramp=T, length=T)
        rows.append(
            (
                k,
                _ratio(lb, T, PatilAnytime()),
                _ratio(lb, T, _RoundRobin()),
                _ratio(lin, T, PatilAnytime()),
                _ratio(lin, T, _RoundRobin()),
            )
        )
    print(
        f"\n{'k':>4} {'I_m: Alg 1':>11} {'I_m: RR':>9} {'lin: Alg 1':>11} {'lin: RR':>9}"
        f"   (T = k·{PULLS_PER_ARM}; I_m bound k/2..k; RR on lin within [k²/2, 8k²])"
    )
    for k, a, b, c, d in rows:
        print(f"{k:>4} {a:11.2f} {b:9.2f} {c:11.3f} {d:9.1f}")
    table = np.array(rows)
    slopes = [np.polyfit(np.log(table[:, 0]), np.log(table[:, j]), 1)[0] for j in range(1, 5)]
    print(
        "fitted exponents in k: I_m Alg 1 {:.3f}, I_m RR {:.3f}, lin Alg 1 {:.3f}, "
        "lin RR {:.3f}".format(*slopes)
    )


if __name__ == "__main__":
    main()
