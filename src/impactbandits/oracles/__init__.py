"""Exact benchmarks ("oracles"): ``oracle(fresh_env, times) -> (R, len(times))``."""

from impactbandits.oracles.stationary import best_fixed_arm

__all__ = ["best_fixed_arm"]
