"""Build the compiled loops ahead of time: ``python -m impactbandits.kernels.build``.

Compiles the generic loop (:mod:`impactbandits.kernels.loop`) of every built-in policy's
compiled step — found from the policy table: each registered policy is built with its defaults
and asked for its step — the same loop for Tang et al.'s learners in the delayed-impact world
and Cella & Cesa-Bianchi's in B2DEP's, and SRUM with every built-in fairness function in the
reward-opportunity bandit's, for exactly the argument types of
:func:`~impactbandits.kernels.aot.loop_args`,
with numba's ahead-of-time compiler (``numba.pycc``), into the extension module
``impactbandits/kernels/_aot`` plus its stamp (:mod:`impactbandits.kernels.aot` says how they
are used). Needs numba and a C compiler; about 161 CPU s to build the compiled loops. Does
nothing if every entry is there for the present sources (``--force`` rebuilds). It says what it
does as it goes: one line per entry compiled, and a line at least every
:data:`HEARTBEAT` seconds while numba optimises and links the module.

The compilation runs in a child process with an empty numba cache, so that no function cached
on disk from an older source ends up in the module. ``numba.pycc`` has been "pending
deprecation" since numba 0.57 without a replacement; if it goes, this build fails with a clear
message and the library keeps using numba's JIT, which compiles the same source.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from impactbandits.kernels import aot
from impactbandits.kernels.sources import loop_tag

__all__ = ["built_in_steps", "main", "planned_entries"]

_HERE = Path(__file__).resolve().parent
#: Longest silence of a build, in seconds: a line saying it is still working after this long.
HEARTBEAT = 20.0
#: The line the compiling child writes on stderr as it starts on an entry (the parent shows it).
_PROGRESS = "impactbandits-kernels-progress"
_SHIM = _HERE / "aot_shim.c"
#: Parameters for the registered policies that have a required one (their step is asked for).
_REQUIRED = {"spo-delta": {"sigma": 0.05}}
#: Further parameter sets whose steps differ from the defaults': the ``authors-code`` variants
#: the figures run (and SPO's LP path).
_VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    *(
        (name, {"variant": "authors-code"})
        for name in (
            "d-ucb", "sw-ucb", "exp3", "r-exp3", "ucb1", "last-reward-greedy",
            "one-step-optimistic", "spo", "hkr", "r-ed-ucb",
        )
    ),
    ("spo", {"variant": "authors-code", "noise_bound": 0.1}),
    ("spo", {"noise_bound": 0.1}),
)  # fmt: skip


def built_in_steps() -> dict[str, Any]:
    """``loop_<tag>`` → ``(compiled step, world, reevaluating, arm rewards)`` (the arguments of
    :func:`~impactbandits.kernels.loop.loop_for`), for every registered policy whose defaults
    declare a step, and the parameter sets of :data:`_VARIANTS` (on 3 and on 100 arms, horizon
    100: a policy may choose its step by the number of arms), in the pull-table world
    (:func:`~impactbandits.core.pull_model.table_world`), for the learners of
    :data:`DELAY_POLICIES` in B2DEP's world, Tang et al.'s in the delayed-impact world and SRUM
    in the reward-opportunity bandit's (the other worlds' loops compile on numba's JIT)."""
    from impactbandits.core.pull_model import PullModel, table_world
    from impactbandits.core.random import BatchRNG
    from impactbandits.core.spaces import Discrete
    from impactbandits.errors import SpecError
    from impactbandits.kernels.dispatch import compiled_step
    from impactbandits.policies.names import POLICIES, build_policy

    plain = PullModel(np.zeros((1, 1, 1)), "none")
    worlds = (table_world(plain, 1), table_world(plain, 1, reevaluating=True))
    steps: dict[str, Any] = {}
    settings = [(name, _REQUIRED.get(name, {})) for name in sorted(POLICIES)] + list(_VARIANTS)
    for (name, params), arms in itertools.product(settings, (3, 100)):
        try:
            policy = build_policy(name, params)
            policy.reset(Discrete(arms), 100, BatchRNG.from_key(1, (2,), [0]))
            step = compiled_step(policy)
        except (SpecError, TypeError, ValueError):
            continue  # a policy that needs another space, environment or parameters
        if step is None or step.simplex:  # (vectors play in a world of their own)
            continue
        tag = loop_tag(step, worlds[0])
        if tag is not None:
            steps[f"loop_{tag}"] = (step, worlds[0], False, False)
        again = None if step.reevaluate is None else loop_tag(step, worlds[1], True)
        if again is not None:
            steps[f"loop_{again}"] = (step, worlds[1], True, False)
    return steps | _delay_steps() | _impact_steps() | _srum_steps()


#: The learners Cella & Cesa-Bianchi's figures run on B2DEP, whose loops in its world are built
#: ahead of time: π_low, π_ucb and UCB1 over the arms.
DELAY_POLICIES = ("pi-low", "pi-ucb", "ucb1")


#: The one-hot bases whose loops in the delayed-impact world are built ahead of time: those of
#: Tang et al.'s figures (every other base runs there on numba's JIT).
SIMPLEX_BASES = ("ucb1", "exp3", "d-ucb", "sw-ucb")


def _impact_steps() -> dict[str, Any]:
    """``loop_<tag>`` → ``(step, world, False, False)`` in Tang et al.'s delayed-impact world (the
    police instance, K = 2, horizon 100) for the meta-arm learners with their defaults and the
    one-hot policy over :data:`SIMPLEX_BASES`."""
    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.random import BatchRNG
    from impactbandits.envs.impact import ImpactBandit
    from impactbandits.kernels.dispatch import compiled_step
    from impactbandits.policies.names import build_policy

    env = ImpactBandit(high=[0.9, 0.8], low=[0.3, 0.4])
    env.reset(EnvironmentRandom(1, 2, [0]))
    world = env.compiled_world(100)
    kinds: list[tuple[str, dict[str, Any]]] = [(k, {}) for k in ("ad-ucb", "cucb", "exp3-meta")]
    kinds += [("one-hot", {"base": name}) for name in SIMPLEX_BASES]
    steps: dict[str, Any] = {}
    for kind, params in kinds:
        policy = build_policy(kind, params)
        policy.reset(env.action_space, 100, BatchRNG.from_key(1, (2,), [0]))
        step = compiled_step(policy)
        tag = None if step is None or world is None else loop_tag(step, world)
        if tag is not None:
            steps[f"loop_{tag}"] = (step, world, False, False)
    return steps


def _srum_steps() -> dict[str, Any]:
    """``loop_<tag>`` → ``(step, world, False, True)``: SRUM (both variants, UCB1 of the same
    variant as its black box) with every built-in fairness function, in the reward-opportunity
    bandit's pull-table world, keeping each arm's rewards."""
    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.pull_model import table_world
    from impactbandits.core.random import BatchRNG
    from impactbandits.envs.opportunity import OpportunityBandit
    from impactbandits.kernels.dispatch import compiled_step, pull_model
    from impactbandits.oracles.opportunity_fairness import FAIRNESS_KINDS
    from impactbandits.policies.names import build_policy

    steps: dict[str, Any] = {}
    for fairness, variant in itertools.product(FAIRNESS_KINDS, ("paper", "authors-code")):
        env = OpportunityBandit([0.2, 0.5, 0.3], fairness=fairness)
        env.reset(EnvironmentRandom(1, 2, [0]))
        model = pull_model(env, 100)
        policy = build_policy("srum", {"variant": variant})
        policy.reset(env.action_space, 100, BatchRNG.from_key(1, (2,), [0]))
        step = compiled_step(policy)
        if step is None or model is None:
            continue
        world = table_world(model, 1)
        tag = loop_tag(step, world, False, True)
        if tag is not None:
            steps[f"loop_{tag}"] = (step, world, False, True)
    return steps


def _delay_steps() -> dict[str, Any]:
    """``loop_<tag>`` → ``(step, world, False, False)`` for :data:`DELAY_POLICIES` in B2DEP's
    world."""
    from impactbandits.core.environment import EnvironmentRandom
    from impactbandits.core.random import BatchRNG
    from impactbandits.envs.delay import DelayedPayoffBandit
    from impactbandits.kernels.dispatch import compiled_step
    from impactbandits.policies.names import build_policy

    env = DelayedPayoffBandit([0.5, 0.25, 0.75])
    env.reset(EnvironmentRandom(1, 2, [0]))
    world = env.compiled_world(100)
    steps: dict[str, Any] = {}
    for name in DELAY_POLICIES:
        policy = build_policy(name, {})
        policy.reset(env.action_space, 100, BatchRNG.from_key(1, (2,), [0]))
        step = compiled_step(policy)
        tag = None if step is None else loop_tag(step, world)
        if tag is not None:
            steps[f"loop_{tag}"] = (step, world, False, False)
    return steps


def planned_entries() -> list[str]:
    """The entries a build of the present sources holds."""
    return sorted(built_in_steps())


def _numba_signature(types_: tuple[tuple[str, int], ...]) -> Any:
    from numba import types

    args = [
        getattr(types, dtype) if ndim == 0 else types.Array(getattr(types, dtype), ndim, "C")
        for dtype, ndim in types_
    ]
    return types.int64(*args)


def _reporting(compile_extra: Any, names: dict[Any, str], total: int) -> Any:
    """pycc's per-entry compilation, writing ``_PROGRESS i/total name`` on stderr before each
    entry and ``_PROGRESS total/total`` (then: optimising and linking) after the last."""
    done = [0]

    def compile_reporting(*args: Any, **kwargs: Any) -> Any:
        done[0] += 1
        print(f"{_PROGRESS} {done[0]}/{total} {names.get(args[2], '?')}", file=sys.stderr)
        sys.stderr.flush()
        try:
            return compile_extra(*args, **kwargs)
        finally:
            if done[0] == total:
                print(f"{_PROGRESS} {total}/{total}", file=sys.stderr)
                sys.stderr.flush()

    return compile_reporting


def compile_into(directory: Path) -> tuple[Path, list[str]]:
    """Compile the module into ``directory`` (in this process): its path and its entries. Each
    entry's compilation is announced on stderr (:func:`_reporting`)."""
    from numba.core.errors import NumbaPendingDeprecationWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaPendingDeprecationWarning)
        # numba.pycc is untyped and exports its names implicitly
        pycc: Any = importlib.import_module("numba.pycc")
        pycc_compiler: Any = importlib.import_module("numba.pycc.compiler")

    from impactbandits.kernels.loop import loop_for

    class _ReleasingTheGil(pycc_compiler.Flags):  # type: ignore[misc]
        """pycc's compilation flags, with the GIL released around each call, as the JIT's
        ``nogil=True`` dispatchers do. This child process only."""

        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    pycc_compiler.Flags = _ReleasingTheGil

    class _WithShim(pycc.CC):  # type: ignore[misc]
        def _get_mixin_sources(self) -> list[str]:
            return [*super()._get_mixin_sources(), str(_SHIM)]

    cc = _WithShim(aot.MODULE.rsplit(".", 1)[1])
    cc.output_dir = str(directory)
    cc.target_cpu = "host"  # as numba's JIT compiles (the stamp records the CPU)
    entries: list[str] = []
    functions: dict[Any, str] = {}  # for the progress lines

    def export(name: str, types_: tuple[tuple[str, int], ...], function: Any) -> None:
        cc.export(name, _numba_signature(types_))(function)
        entries.append(name)
        functions[function] = name

    for name, (step, world, reevaluating, arm_rewards) in built_in_steps().items():
        loop = loop_for(step, world, reevaluating, arm_rewards)
        export(name, aot.loop_args(world.data.ndim), loop.py_func)
    pycc_compiler.compile_extra = _reporting(pycc_compiler.compile_extra, functions, len(entries))
    cc.compile()
    return directory / cc.output_file, sorted(entries)


def _cause(stderr: str) -> str:
    """The exception line of a failed build's traceback, else its last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception)\b", line)]
    return (raised or lines or ["no output"])[-1]


def _up_to_date() -> bool:
    state = aot.status()
    return state.usable and sorted(state.entries) == planned_entries()


def _run_reporting(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run the compiling child; show its progress lines as they come (``[i/n] entry``), and
    a line saying it is still working after :data:`HEARTBEAT` seconds of silence. Its exit
    status, stdout and the rest of its stderr."""
    start = time.perf_counter()
    child = subprocess.Popen(
        args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1
    )
    lines: queue.Queue[str | None] = queue.Queue()
    out: list[str] = []

    def pump(stream: Any, into: Callable[[str], None]) -> None:
        for line in stream:
            into(line)
        lines.put(None)

    threading.Thread(target=pump, args=(child.stdout, out.append), daemon=True).start()
    threading.Thread(target=pump, args=(child.stderr, lines.put), daemon=True).start()
    errors: list[str] = []
    phase = "importing the policies and numba"
    ended = 0
    while ended < 2:
        try:
            line = lines.get(timeout=HEARTBEAT)
        except queue.Empty:
            print(f"  ... still {phase} ({time.perf_counter() - start:.0f} s)", flush=True)
            continue
        if line is None:
            ended += 1
            continue
        if not line.startswith(_PROGRESS):
            errors.append(line)
            continue
        count, _, name = line[len(_PROGRESS) :].strip().partition(" ")
        if name:
            phase = f"compiling {name} ({count})"
            print(f"  [{count}] {name}", flush=True)
        else:
            phase = "optimising and linking the module"
            print(f"  {phase} ...", flush=True)
    return child.wait(), "".join(out), "".join(errors)


def _build(force: bool) -> int:
    if not force and _up_to_date():
        aot.STAMP.touch()  # for make: newer than the sources it was checked against
        print(f"impactbandits kernels: up to date ({aot.STAMP.with_suffix('').name})")
        return 0
    print(
        "impactbandits kernels: compiling the round loops of the built-in policies ahead of "
        "time (numba.pycc, about 160 CPU s; until then numba's JIT compiles each loop on its "
        "first use)",
        flush=True,
    )
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="impactbandits-aot-") as scratch:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(Path(scratch) / "numba-cache")}
        out = Path(scratch) / "out"
        out.mkdir()
        code = (
            "import json, sys; from pathlib import Path; "
            "from impactbandits.kernels.build import compile_into; "
            "path, entries = compile_into(Path(sys.argv[1])); "
            "print(json.dumps([str(path), entries]))"
        )
        status, stdout, stderr = _run_reporting([sys.executable, "-c", code, str(out)], env)
        if status != 0:
            print(
                f"impactbandits kernels: the ahead-of-time build failed ({_cause(stderr)});"
                " numba's JIT will be used (the same numbers, more memory and start-up time)",
                file=sys.stderr,
            )
            return 1
        path, entries = json.loads(stdout.strip().splitlines()[-1])
        built = Path(path)
        target = _HERE / built.name
        aot.STAMP.unlink(missing_ok=True)  # no stamp until the new module is in place
        shutil.copy2(built, target.with_suffix(".tmp"))
        os.replace(target.with_suffix(".tmp"), target)
        stamp = {**aot.fingerprint(), "entries": entries}
        aot.STAMP.write_text(json.dumps(stamp, indent=1) + "\n")
    print(
        f"impactbandits kernels: built {target.name} in {time.perf_counter() - start:.0f} s "
        f"({len(entries)} entry points)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m impactbandits.kernels.build", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--force", action="store_true", help="rebuild even if up to date")
    parser.add_argument(
        "--check", action="store_true", help="only say whether the module is usable (exit 1 if not)"
    )
    options = parser.parse_args(argv)
    if options.check:
        state = aot.status()
        print(f"impactbandits kernels: {state.reason}; {len(state.entries)} entry points")
        return 0 if state.usable else 1
    return _build(options.force)


if __name__ == "__main__":
    sys.exit(main())
