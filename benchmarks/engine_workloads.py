"""The workloads of ``engine_table.py``: each runs in its own subprocess
(``tree_measure.run_workload``) and returns its measurements as JSON (``Section.record``); and
row 3's reference, the authors' SRUM code in their own venv (:func:`authors_srum`)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from tree_measure import Section, workload

HERE = Path(__file__).resolve().parent
SINGLE_PEAKED_INSTANCE = 3
EXP3_GAMMA = 0.01
SRUM_LAMBDA, SRUM_FAIRNESS = 0.4, "linear"
SPO_SIGMA = 0.05  # lindner-fig1's noise level (FIG1_SIGMA)


def _bernoulli_spec(means: list[float], policy: dict[str, Any], horizon: int, seeds: int) -> Any:
    from impactbandits import ExperimentSpec

    return ExperimentSpec.create(
        name="bench-engine-table",
        environments=[{"kind": "bernoulli", "label": f"{len(means)} arms", "means": means}],
        policies=[policy],
        horizons=[horizon],
        seeds=seeds,
        checkpoints=10,
    )


def _pipeline(spec: Any, **options: Any) -> Section:
    """Time ``run_experiment(spec)`` into a scratch folder, after an untimed warm-up run of one
    seed in this process (lazy imports and first-call costs excluded, as the authors' per-run
    timing excludes their imports)."""
    from impactbandits import run_experiment

    with tempfile.TemporaryDirectory() as warm:
        run_experiment(spec.replace(seeds=1), warm, **options)
    children = options.get("backend") != "serial"
    with tempfile.TemporaryDirectory() as out, Section(children) as section:
        run_experiment(spec, out, **options)
    return section


def _simulate(
    env: tuple[str, dict[str, Any]],
    policy: tuple[str, dict[str, Any]],
    rounds: int,
    reps: list[int],
) -> Any:
    """One ``simulate`` of replications ``reps`` (horizon = ``rounds``, one checkpoint at the
    end), environment and policy built fresh as a worker builds them per task (built-in
    policy: actions checked in round 1 only)."""
    import numpy as np

    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.random import POLICY, BatchRNG
    from impactbandits.kernels import simulate
    from impactbandits.registry import build_environment, build_policy

    return simulate(
        build_environment(*env),
        build_policy(*policy),
        rounds,
        rounds,
        np.array([rounds]),
        EnvironmentRandom(0, 1, reps),
        BatchRNG.from_key(0, (2, POLICY), reps),
        check_actions=False,
    )


def _engine(
    env: tuple[str, dict[str, Any]],
    policy: tuple[str, dict[str, Any]],
    horizon: int,
    batches: list[list[int]],
) -> tuple[Section, list[Any]]:
    """Time :func:`_simulate` on each batch of replications, after an untimed warm-up run of
    one other replication."""
    _simulate(env, policy, horizon, [1 + max(r for reps in batches for r in reps)])
    with Section() as section:
        trajectories = [_simulate(env, policy, horizon, reps) for reps in batches]
    return section, trajectories


@workload
def warm_kernels() -> dict[str, Any]:
    """Load (or, in a fresh checkout, compile) numba's cached kernels the rows use — the round
    loop and the SRUM loop, and every signature the figures of rows 4 and 6 reach (one seed of
    each at --quick scale, serial) — so that no measured process that runs numba's JIT (1b'',
    or every row if the kernels are not built ahead of time) pays the compilation, whose time
    and LLVM memory would otherwise show in its row."""
    import os
    import time

    from impactbandits import run_experiment
    from impactbandits.experiments.figures import get_figure

    os.environ["IMPACTBANDITS_KERNELS"] = "jit"  # the built-ahead module needs no warming
    start = time.perf_counter()
    bernoulli_pipeline(arms=2, horizon=20, seeds=1)
    spo_batch(horizon=20, replications=1, batched=True)
    srum_engine(means=[0.2, 0.5], horizon=20, seeds=1)
    for figure in ("lindner-fig1", "rested-benchmark"):
        spec = get_figure(figure).spec(True).replace(seeds=1)
        with tempfile.TemporaryDirectory() as out:
            run_experiment(spec, out, backend="serial")
    return {"wall": time.perf_counter() - start}


@workload
def bernoulli_pipeline(
    arms: int | None = None,
    means: list[float] | None = None,
    policy: dict[str, Any] | None = None,
    horizon: int = 10_000,
    seeds: int = 100,
    backend: str = "serial",
    workers: int | None = None,
    kernels: bool | str = True,
) -> dict[str, Any]:
    """Whole pipeline on a Bernoulli bandit: ``means`` or ``arms`` means in [0.1, 0.9];
    ``kernels=False`` runs the readable NumPy loop (``IMPACTBANDITS_KERNELS=0``, so numba is
    never imported), a string sets ``IMPACTBANDITS_KERNELS`` (``"jit"``: numba's JIT even if the
    kernels are built ahead of time)."""
    import os

    import numpy as np

    if kernels is not True:
        os.environ["IMPACTBANDITS_KERNELS"] = "0" if kernels is False else str(kernels)

    if means is None:
        means = np.linspace(0.1, 0.9, arms or 2).tolist()
    spec = _bernoulli_spec(means, policy or {"kind": "ucb1"}, horizon, seeds)
    section = _pipeline(spec, backend=backend, workers=workers)
    return section.record(pulls=horizon * seeds)


def _single_peaked_params() -> list[tuple[float, ...]]:
    from impactbandits.envs.curves import SINGLE_PEAKED_INSTANCES

    return [tuple(map(float, p)) for p in SINGLE_PEAKED_INSTANCES[SINGLE_PEAKED_INSTANCE]]


def _policy_entry(policy: str) -> dict[str, Any]:
    if policy == "greedy":
        return {"kind": "last-reward-greedy", "label": "greedy"}
    return {"kind": "exp3", "label": "EXP3", "gamma": EXP3_GAMMA}


@workload
def rested_engine(policy: str, horizon: int, replications: int) -> dict[str, Any]:
    """One replication per ``simulate`` call (an R = 1 batch)."""
    entry = _policy_entry(policy)
    params = {k: v for k, v in entry.items() if k not in ("kind", "label")}
    env_params = {"instance": SINGLE_PEAKED_INSTANCE, "length": horizon}
    section, runs = _engine(
        ("single-peaked", env_params),
        (entry["kind"], params),
        horizon,
        [[r] for r in range(replications)],
    )
    return section.record(
        pulls=[[int(x) for x in t.pulls[0, -1]] for t in runs],
        rewards=[float(t.reward[0, -1]) for t in runs],
    )


@workload
def rested_pipeline(policy: str, horizon: int, replications: int) -> dict[str, Any]:
    """Whole pipeline, one replication per task (``batch_size = 1``), ``dedup`` off (greedy is
    deterministic noise-free: dedup would simulate one seed for all)."""
    from impactbandits import ExperimentSpec

    spec = ExperimentSpec.create(
        name="bench-r1",
        environments=[
            {
                "kind": "single-peaked",
                "label": "instance 3, noise-free",
                "instance": SINGLE_PEAKED_INSTANCE,
                "length": horizon,
            }
        ],
        policies=[_policy_entry(policy)],
        horizons=[horizon],
        seeds=replications,
    )
    return _pipeline(spec, backend="serial", batch_size=1, dedup=False).record()


def plain_loop(
    policy: str, horizon: int, seed: int, params: list[tuple[float, ...]]
) -> tuple[list[int], float]:
    """The plain-Python loop: Lindner et al.'s greedy (pull every arm once, then the arm whose
    last pull gave most; ties to the lowest index) or EXP3 (γ = 0.01, weights as logarithms
    shifted by their maximum) on rested single-peaked arms, f_i(m) evaluated with ``math``
    at each pull. Returns the pull counts and the total reward."""
    exp = math.exp
    arms = len(params)

    def value(arm: int, m: int) -> float:
        k1, k2, c1, c2, shift, a = params[arm]
        first = a * exp(min(700.0, max(-700.0, -k1 * (m - shift))))
        second = (c2 - c1) / (exp(min(700.0, max(-700.0, -(k1 + k2) * (m - shift)))) + 1.0)
        return min(1.0, max(0.0, first + second + c1))

    pulls = [0] * arms
    total = 0.0
    if policy == "greedy":
        last = [0.0] * arms
        for t in range(horizon):
            arm = t if t < arms else max(range(arms), key=last.__getitem__)
            m = pulls[arm] = pulls[arm] + 1
            reward = value(arm, m)
            last[arm] = reward
            total += reward
        return pulls, total
    rng = random.Random(seed)
    gamma = EXP3_GAMMA
    log_w = [0.0] * arms
    for _ in range(horizon):
        top = max(log_w)
        w = [exp(x - top) for x in log_w]
        s = sum(w)
        p = [(1.0 - gamma) * x / s + gamma / arms for x in w]
        u, arm, cum = rng.random(), 0, p[0]
        while u >= cum and arm < arms - 1:
            arm += 1
            cum += p[arm]
        m = pulls[arm] = pulls[arm] + 1
        reward = value(arm, m)
        total += reward
        log_w[arm] += gamma * reward / (p[arm] * arms)
    return pulls, total


@workload
def rested_plain(policy: str, horizon: int, replications: int) -> dict[str, Any]:
    params = _single_peaked_params()
    pulls, rewards = [], []
    with Section() as section:
        for rep in range(replications):
            n, total = plain_loop(policy, horizon, rep, params)
            pulls.append(n)
            rewards.append(total)
    return section.record(pulls=pulls, rewards=rewards)


@workload
def greedy_check(horizon: int) -> dict[str, Any]:
    """Greedy's pull counts at T, ours (``simulate``) and the plain loop's, on instances 1-3
    noise-free: deterministic, so equal counts show the loop is the same algorithm."""
    import numpy as np

    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.random import POLICY, BatchRNG
    from impactbandits.envs.curves import SINGLE_PEAKED_INSTANCES
    from impactbandits.kernels import simulate
    from impactbandits.registry import build_environment, build_policy

    out = {}
    for instance, rows in SINGLE_PEAKED_INSTANCES.items():
        traj = simulate(
            build_environment("single-peaked", {"instance": instance, "length": horizon}),
            build_policy("last-reward-greedy", {}),
            horizon,
            horizon,
            np.array([horizon]),
            EnvironmentRandom(0, 1, [0]),
            BatchRNG.from_key(0, (2, POLICY), [0]),
        )
        params = [tuple(map(float, p)) for p in rows]
        loop = plain_loop("greedy", horizon, 0, params)[0]
        out[str(instance)] = [[int(x) for x in traj.pulls[0, -1]], loop]
    return out


def _srum_env(means: list[float]) -> dict[str, Any]:
    return {
        "kind": "opportunity",
        "label": f"{SRUM_LAMBDA:g}|{SRUM_FAIRNESS}",
        "means": means,
        "fairness": SRUM_FAIRNESS,
        "transfer_cost": SRUM_LAMBDA,
    }


@workload
def srum_pipeline(means: list[float], horizon: int, seeds: int) -> dict[str, Any]:
    from impactbandits import ExperimentSpec

    spec = ExperimentSpec.create(
        name="bench-srum",
        environments=[_srum_env(means)],
        policies=[{"kind": "srum"}],
        horizons=[horizon],
        seeds=seeds,
    )
    return _pipeline(spec, backend="serial").record()


@workload
def srum_engine(means: list[float], horizon: int, seeds: int) -> dict[str, Any]:
    """The R seeds as one batch through ``simulate`` (as a worker runs a task)."""
    env_params = {k: v for k, v in _srum_env(means).items() if k not in ("kind", "label")}
    section, _ = _engine(("opportunity", env_params), ("srum", {}), horizon, [list(range(seeds))])
    return section.record()


@workload
def spo_batch(horizon: int, replications: int, batched: bool) -> dict[str, Any]:
    """lindner-fig1's noisy SPO (δ-intervals, σ = 0.05) on instance 3 with Gaussian noise:
    replications 0..n-1 in one batch through ``simulate`` or one ``simulate`` call each."""
    env_params = {
        "instance": SINGLE_PEAKED_INSTANCE,
        "length": horizon,
        "noise": "gaussian",
        "sigma": SPO_SIGMA,
    }
    reps = list(range(replications))
    batches = [reps] if batched else [[r] for r in reps]
    section, _ = _engine(
        ("single-peaked", env_params), ("spo-delta", {"sigma": SPO_SIGMA}), horizon, batches
    )
    return section.record()


@workload
def spo_python_calls(horizon: int, replications: int) -> dict[str, Any]:
    """Python function calls (``cProfile``'s count) of one :func:`_simulate` of row 4's noisy
    SPO over ``replications`` seeds at ``horizon`` and at twice it (the same environment),
    after a warm-up: calls that grow with T × R are Python work per round and replication."""
    import cProfile
    import pstats

    env = (
        "single-peaked",
        {"instance": SINGLE_PEAKED_INSTANCE, "length": 2 * horizon, "noise": "gaussian",
         "sigma": SPO_SIGMA},
    )  # fmt: skip
    policy = ("spo-delta", {"sigma": SPO_SIGMA})
    reps = list(range(replications))

    def calls(rounds: int) -> int:
        profile = cProfile.Profile()
        profile.enable()
        _simulate(env, policy, rounds, reps)
        profile.disable()
        return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]

    calls(horizon)  # warm-up: lazy imports, kernels loaded, both horizons' first calls
    calls(2 * horizon)
    return {"calls_t": calls(horizon), "calls_2t": calls(2 * horizon)}


@workload
def figure_run(figure: str, quick: bool, seeds: int | None, workers: int) -> dict[str, Any]:
    """The run phase of a figure alone (no report): process backend, ``workers`` workers."""
    from impactbandits import run_experiment
    from impactbandits.experiments.figures import get_figure

    spec = get_figure(figure).spec(quick)
    if seeds:
        spec = spec.replace(seeds=seeds)
    with tempfile.TemporaryDirectory() as out, Section(children=True) as section:
        run_experiment(spec, out, backend="process", workers=workers)
    return section.record()


# == row 3's reference: the authors' code, in their venv (not a workload) ==========================

AUTHORS_DRIVER = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
import ron
class Clock:  # ron.worker times each run with process_time(): also note the wall clock
    walls = []
    def process_time(self):
        self.walls.append(time.perf_counter())
        return time.process_time()
clock = Clock()
ron.time = clock
ron.worker(sys.argv[2])
print(ron.json.dumps({"walls": clock.walls}))
"""


def authors_srum(horizon: int, seeds: int) -> list[dict[str, Any]]:
    """Their runSimulation, one run per seed, in their venv: per-run CPU and wall seconds."""
    sys.path.insert(0, str(HERE / "fidelity"))
    import ron

    env = subprocess.run(
        ["bash", str(HERE / "fidelity" / "authors_env.sh"), "ron"],
        check=True,
        capture_output=True,
        text=True,
    )
    python, src = env.stdout.strip().splitlines()[-2:]
    jobs = [
        {"fairness": ron.FAIRNESS[SRUM_FAIRNESS], "lam": SRUM_LAMBDA, "T": horizon, "seed": s}
        for s in range(seeds)
    ]
    done = subprocess.run(
        [python, "-c", AUTHORS_DRIVER, str(HERE / "fidelity"), src],
        input="".join(json.dumps(j) + "\n" for j in jobs),
        check=True,
        capture_output=True,
        text=True,
        cwd=src,
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    walls = lines.pop()["walls"]
    for i, run in enumerate(lines):
        run["wall_s"] = walls[2 * i + 1] - walls[2 * i]
    return lines


# == row 6's machine reference: how much two workers can gain on this machine ===================


def _spin(iterations: int) -> int:
    """Pure-Python CPU work with no memory traffic to speak of (one task of :func:`ceiling`)."""
    total = 0
    for i in range(iterations):
        total += i * i % 7
    return total


@workload
def ceiling(workers: int, tasks: int, iterations: int) -> dict[str, Any]:
    """The machine's own 1 → 2 worker ceiling: ``tasks`` equal, independent pure-Python tasks
    through the runner's kind of pool (``ProcessPoolExecutor``, forkserver), wall seconds from
    the pool's start to its last result. Nothing is shared, nothing is stored: what two workers
    gain here is what the cores (and their neighbours on a shared host) allow."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("forkserver")
    with (
        Section(children=True) as section,
        ProcessPoolExecutor(workers, mp_context=context) as pool,
    ):
        list(pool.map(_spin, [iterations] * tasks))
    return section.record()


# == row 1b's JIT floor: what any process that runs a kernel through numba's JIT holds ============


@workload
def numba_floor() -> dict[str, Any]:
    """Peak RSS of a process that imports NumPy and calls the smallest of our numba kernels
    once through the JIT (``kernels.checkpoints.record``, loaded from numba's cache): the memory
    any run on numba's JIT starts from, whatever it simulates (numba's typing and target
    contexts, LLVM). The kernels built ahead of time do not import numba."""
    import numpy as np

    with Section() as section:
        from impactbandits.kernels.checkpoints import record

        pulls = np.zeros(2, dtype=np.int64)
        out = np.zeros(1), np.zeros(1), np.zeros((1, 2), dtype=np.int64), np.zeros(1, np.int64)
        record(*out, 0, 0.0, 0.0, pulls, 0)
    return section.record()
