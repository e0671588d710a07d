"""Rows 8 and 9 of the engine table (``engine_table.py``): the open compiled path.

8. A user's policy through the compiled-step protocol: ``examples/fast_policy.py``'s KL-UCB on
   four Bernoulli arms, R = 100, T = 10⁴ (``--quick``: T = 2000), numba's JIT (a user's step is
   in no build; numba's cache warm: one run first), against the same class on the readable NumPy
   loop (``IMPACTBANDITS_KERNELS=0``). Target ≥ 10×. The engine alone (``kernels.simulate``),
   CPU of the process.
10. A user's environment through the compiled-world protocol: ``examples/fast_environment.py``'s
   ``TiringArms`` (three arms) under UCB1 and under Thompson sampling, R = 100, T = 10⁴
   (``--quick``: T = 2000), numba's JIT (cache warm: one run first), against the same class
   without its world (a subclass that redefines ``step``: the readable loop). Target ≥ 20×,
   the same numbers. 10b: Thompson sampling on ``basu-blocking``'s first instance (20 arms,
   delays U{1..10}) per pull, compiled against the readable loop.
9. What a plain ``pip install impactbandits[fast]`` gets against the ``make demo`` install:
   ``reproduce lindner-fig1 --quick`` with ``IMPACTBANDITS_KERNELS=jit`` (no module built ahead
   of time, as in a wheel: numba's JIT with its disk cache, warm after one run) against the
   default (the built module). CPU of the whole process tree, median of 3 interleaved pairs.
   Target ≤ 1.3×.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

from tree_measure import Section, run_tree, run_workload, workload

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@workload
def user_policy(rounds: int = 10_000, seeds: int = 100, compiled: bool = True) -> dict[str, Any]:
    """KL-UCB of examples/fast_policy.py through ``kernels.simulate``, timed without imports."""
    import numpy as np

    sys.path.insert(0, str(EXAMPLES))
    import fast_policy  # type: ignore[import-not-found]

    from impactbandits import BatchRNG, EnvironmentRandom
    from impactbandits.envs.stationary import BernoulliBandit
    from impactbandits.kernels import simulate

    def run() -> Any:
        return simulate(
            BernoulliBandit([0.3, 0.5, 0.55, 0.6]),
            fast_policy.KLUCB(),
            rounds,
            None,
            np.array([rounds]),
            EnvironmentRandom(1, 2, list(range(seeds))),
            BatchRNG.from_key(1, (3,), list(range(seeds))),
            compiled=compiled,
        )

    if compiled:
        run()  # the loop loaded from numba's cache (or compiled) before the timed run
    with Section() as section:
        trajectory = run()
    return section.record(regret=float((rounds * 0.6 - trajectory.expected[:, -1]).mean()))


@workload
def user_world(
    rounds: int = 10_000, seeds: int = 100, policy: str = "ucb1", compiled: bool = True
) -> dict[str, Any]:
    """``TiringArms`` of examples/fast_environment.py (``compiled=False``: a subclass without
    its world) through ``kernels.simulate``, timed without imports."""
    import numpy as np

    sys.path.insert(0, str(EXAMPLES))
    import fast_environment  # type: ignore[import-not-found]

    from impactbandits import BatchRNG, EnvironmentRandom
    from impactbandits.kernels import simulate
    from impactbandits.registry import build_policy

    class Readable(fast_environment.TiringArms):  # type: ignore[misc]
        def step(self, actions: Any) -> Any:  # a new step: the world no longer stands for it
            return super().step(actions)

    kind = fast_environment.TiringArms if compiled else Readable

    def run() -> Any:
        return simulate(kind([0.9, 0.7, 0.5]), build_policy(policy, {}), rounds, None,
                        np.array([rounds]), EnvironmentRandom(1, 2, list(range(seeds))),
                        BatchRNG.from_key(1, (3,), list(range(seeds))))  # fmt: skip

    if compiled:
        run()  # the loop loaded from numba's cache (or compiled) before the timed run
    with Section() as section:
        trajectory = run()
    return section.record(reward=float(trajectory.reward[:, -1].sum()))


@workload
def blocking_thompson(
    rounds: int = 10_000, seeds: int = 100, compiled: bool = True
) -> dict[str, Any]:
    """Thompson sampling on basu-blocking's first instance through ``kernels.simulate``."""
    import numpy as np

    from impactbandits import BatchRNG, EnvironmentRandom
    from impactbandits.envs.blocking import BlockingBandit
    from impactbandits.kernels import simulate
    from impactbandits.policies.thompson import ThompsonSampling

    def run() -> Any:
        env = BlockingBandit(n_arms=20, delay_range=[1, 10], instance_seed=0)
        return simulate(env, ThompsonSampling(), rounds, None, np.array([rounds]),
                        EnvironmentRandom(1, 2, list(range(seeds))),
                        BatchRNG.from_key(1, (3,), list(range(seeds))),
                        compiled=compiled)  # fmt: skip

    if compiled:
        run()
    with Section() as section:
        trajectory = run()
    return section.record(reward=float(trajectory.reward[:, -1].sum()))


def row_user_world(table: Any, row: Any, quick: bool) -> None:
    rounds = 2_000 if quick else 10_000
    for policy in ("ucb1", "thompson"):
        fast = run_workload("user_world", rounds=rounds, policy=policy, compiled=True)
        slow = run_workload("user_world", rounds=rounds, policy=policy, compiled=False)
        if fast.result["reward"] != slow.result["reward"]:
            raise RuntimeError(f"{policy}: the world and the readable class differ")
        ratio = slow.result["cpu"] / fast.result["cpu"]
        table.add(
            row(
                "10",
                f"user environment with a world, {policy}, R=100 T={rounds:g}",
                (fast.result["cpu"], fast.result["wall"], fast.result["rss_mb"]),
                "the same class without it",
                (slow.result["cpu"], slow.result["wall"], slow.result["rss_mb"]),
                f"{ratio:.0f}x faster",
                ">= 20x, same numbers",
                ("met" if ratio >= 20 else "NOT MET") + " (equal rewards)",
            )
        )
    rounds = 1_000 if quick else 10_000
    fast = run_workload("blocking_thompson", rounds=rounds, compiled=True)
    slow = run_workload("blocking_thompson", rounds=rounds, compiled=False)
    if fast.result["reward"] != slow.result["reward"]:
        raise RuntimeError("Thompson on blocking: compiled and readable differ")
    pulls = rounds * 100
    table.add(
        row(
            "10b",
            f"Thompson on blocking (K=20), R=100 T={rounds:g}, µs per pull",
            (fast.result["cpu"], fast.result["wall"], fast.result["rss_mb"]),
            "the readable loop",
            (slow.result["cpu"], slow.result["wall"], slow.result["rss_mb"]),
            f"{fast.result['cpu'] / pulls * 1e6:.2f} vs {slow.result['cpu'] / pulls * 1e6:.1f} µs",
            "(info)",
            "same numbers",
        )
    )


def row_user_policy(table: Any, row: Any, quick: bool) -> None:
    rounds = 2_000 if quick else 10_000
    fast = run_workload("user_policy", rounds=rounds, compiled=True)
    slow = run_workload("user_policy", rounds=rounds, compiled=False)
    if fast.result["regret"] != slow.result["regret"]:
        raise RuntimeError("compiled and readable KL-UCB differ")
    ratio = slow.result["cpu"] / fast.result["cpu"]
    table.add(
        row(
            "8",
            f"user KL-UCB compiled, R=100 T={rounds:g}",
            (fast.result["cpu"], fast.result["wall"], fast.result["rss_mb"]),
            "its NumPy form",
            (slow.result["cpu"], slow.result["wall"], slow.result["rss_mb"]),
            f"{ratio:.0f}x faster",
            ">= 10x, same numbers",
            ("met" if ratio >= 10 else "NOT MET") + " (equal regret)",
        )
    )


def row_pip(table: Any, row: Any, cli: str, scratch: Path, quick: bool) -> None:
    del quick  # lindner-fig1 --quick is the measure at any scale

    def reproduce(kernels: str, index: int) -> Any:
        out = scratch / f"pip-{kernels}-{index}"
        m = run_tree(["env", f"IMPACTBANDITS_KERNELS={kernels}", cli, "reproduce",
                      "lindner-fig1", "--quick", "--no-progress", "--out", str(out)])  # fmt: skip
        if m.code != 0:
            raise RuntimeError(f"reproduce failed: {m.stderr.strip()[-300:]}")
        return m

    reproduce("jit", 0)  # numba's cache warm, as after a pip user's first run
    pairs = [(reproduce("jit", i), reproduce("auto", i)) for i in range(1, 4)]
    pip = statistics.median(p.cpu for p, _ in pairs)
    make = statistics.median(m.cpu for _, m in pairs)
    ratio = pip / make

    def median(values: list[float]) -> float:
        return statistics.median(values)

    table.add(
        row(
            "9",
            "lindner-fig1 --quick, pip install (JIT)",
            (pip, median([p.wall for p, _ in pairs]), median([p.rss_tree_mb for p, _ in pairs])),
            "make install",
            (make, median([m.wall for _, m in pairs]), median([m.rss_tree_mb for _, m in pairs])),
            f"{ratio:.2f}x CPU",
            "<= 1.3x",
            "met" if ratio <= 1.3 else "NOT MET",
        )
    )
