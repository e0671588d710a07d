"""Ctrl-C and SIGTERM act at once inside a long compiled loop (:func:`impactbandits.kernels.call`).

The compiled loops poll a stop flag (:mod:`impactbandits.kernels.stop`); a long run is called in
a helper thread while the main thread waits where Python's signal handlers run. Checked here:
a set flag stops every long-running entry point (an unset one changes no number: the
comparisons of ``test_kernels.py`` and ``test_kernels_srum.py`` run with it), a direct
``simulate`` call and ``impactbandits run --backend serial`` stop within seconds of SIGINT or
SIGTERM with their usual outcome, and no helper thread is left computing. Every test runs on
the module built ahead of time and on numba's JIT (``conftest.kernel_backend``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.core import BatchRNG, EnvironmentRandom
from impactbandits.experiments.processes import TerminateRequest, sigterm_stops
from impactbandits.kernels import aot, simulate
from impactbandits.kernels.codes import DONE, STOPPED
from impactbandits.registry import build_environment, build_policy

from .test_processes import _stored

pytestmark = [
    pytest.mark.skipif(not kernels.available(), reason="no compiled loops (numba not installed)"),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
    pytest.mark.usefixtures("kernel_backend"),
]


@pytest.fixture(autouse=True)
def sigint_raises():
    """Python's own SIGINT handler during each test: a process started in the background by a
    non-interactive shell (``cmd &``) inherits SIGINT ignored, and a signal sent to it would
    then never arrive (the long call would run on)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


#: Generous bound on the seconds from a signal to the end of the interrupted call or process
#: (it takes milliseconds; without the stop flag it took the rest of the cell: minutes).
PROMPTLY = 10.0

TWO_ARMS = ("bernoulli", {"means": [0.3, 0.7]})
#: (environment, policy) of long-running compiled paths: the loop (kernels.loop) with UCB1, with
#: UCB1's buckets (from 64 arms), with D-UCB, and with SRUM (phases, per-arm rewards, its black
#: box's step and the fairness function's kernels bound into its own).
PAIRS = {
    "run": (TWO_ARMS, ("ucb1", {})),
    "run-ucb1-buckets": (("bernoulli", {"means": list(np.linspace(0.1, 0.9, 64))}), ("ucb1", {})),
    "run-d-ucb": (("bernoulli", {"means": [0.2, 0.4, 0.6]}), ("d-ucb", {"discount": 0.99})),
    "run-srum": (
        ("opportunity", {"means": [0.2, 0.5, 0.7], "fairness": "linear", "transfer_cost": 0.4}),
        ("srum", {}),
    ),
}


def _simulate(pair: str, rounds: int, replications: int = 1):
    env_spec, policy_spec = PAIRS[pair]
    reps = list(range(replications))
    return simulate(
        build_environment(*env_spec),
        build_policy(*policy_spec),
        rounds,
        rounds,
        np.array([1, rounds]),
        EnvironmentRandom(3, 4, reps),
        BatchRNG.from_key(3, (5,), reps),
        check_actions=False,
    )


def _arguments(
    pair: str, rounds: int, monkeypatch: pytest.MonkeyPatch, replications: int = 1
) -> tuple[object, tuple]:
    """The compiled function and the arguments (all but ``stop``) ``simulate`` passes it."""
    seen: list[tuple[object, tuple]] = []

    def record(function, *args, work):
        seen.append((function, args))
        return DONE

    with monkeypatch.context() as patch:
        patch.setattr(kernels, "call", record)
        with contextlib.suppress(Exception):  # the outputs are unfilled: whatever follows
            _simulate(pair, rounds, replications)
    assert len(seen) == 1
    return seen[0]


def _outputs(function: object, args: tuple) -> list[np.ndarray]:
    """The arrays ``function`` writes (its ``out_*`` arguments), filled with a sentinel: the loop
    (built ahead of time or not) takes 17 arguments before ``stop``, its outputs after the
    step's params, the world's params, data and noise, the tolerance, uniforms, streams, rounds
    and the checkpoints."""
    assert len(args) == len(aot.LOOP_ARGS) - 1
    outputs = list(args[9:13])
    assert len(outputs) >= 4
    for array in outputs:
        array.fill(-7)
    return outputs


def _helpers_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == kernels.THREAD_NAME]


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_set_flag_stops_each_long_running_entry_point(pair, monkeypatch):
    function, args = _arguments(pair, 100_000, monkeypatch)
    outputs = _outputs(function, args)
    assert function(*args, np.ones(1, dtype=np.int64)) == STOPPED
    assert all((array == -7).all() for array in outputs)  # stopped before the first round
    assert function(*args, np.zeros(1, dtype=np.int64)) == DONE
    assert all((array != -7).all() for array in outputs)


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_a_flag_set_by_another_thread_stops_a_running_loop(pair, monkeypatch):
    """The loop releases the GIL and looks at the flag while it runs (not only at its start):
    a run of minutes returns within milliseconds of the flag being set."""
    if pair == "run-ucb1-buckets":  # (its memory grows with the rounds: replications instead)
        function, args = _arguments(pair, 5_000_000, monkeypatch, replications=4)
    else:
        function, args = _arguments(pair, 2_000_000_000, monkeypatch)
    stop = np.zeros(1, dtype=np.int64)
    status: list[int] = []
    worker = threading.Thread(target=lambda: status.append(function(*args, stop)))
    worker.start()
    time.sleep(0.2)  # the main thread runs meanwhile: the GIL is released
    assert worker.is_alive()
    stop[0] = 1
    asked = time.monotonic()
    worker.join(PROMPTLY)
    assert not worker.is_alive()
    assert status == [STOPPED]
    assert time.monotonic() - asked < PROMPTLY


@pytest.mark.parametrize("pair", ["run", "run-srum"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_long_simulate_call_and_leaves_no_thread(pair, signum):
    """``simulate`` in the main thread (a notebook, the serial backend): SIGINT raises
    ``KeyboardInterrupt``, SIGTERM under the runner's handler ``TerminateRequest``, within
    seconds in a run of hours; afterwards no helper thread exists and nothing computes."""
    _simulate(pair, 1000)  # the JIT compiles (or loads) outside the timed call
    expected = KeyboardInterrupt if signum == signal.SIGINT else TerminateRequest
    sent: list[float] = []

    def send() -> None:
        sent.append(time.monotonic())
        os.kill(os.getpid(), signum)

    with contextlib.ExitStack() as stack:
        if signum == signal.SIGTERM:
            stack.enter_context(sigterm_stops())
        timer = threading.Timer(0.5, send)
        timer.start()
        try:
            with pytest.raises(expected):
                _simulate(pair, 10**12)
        finally:
            timer.cancel()  # (if the call failed before it fired)
            timer.join()
    assert sent and time.monotonic() - sent[0] < PROMPTLY
    assert not _helpers_alive()
    cpu = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - cpu < 0.25  # nothing left computing


def test_short_runs_stay_in_the_calling_thread(monkeypatch):
    """Below :data:`~impactbandits.kernels.THREAD_WORK` rounds × replications × arms (most cells
    of a sweep) no thread is started; from it on one is, and it is gone when the call returns."""
    started: list[threading.Thread] = []
    thread_class = threading.Thread

    class Recorded(thread_class):  # type: ignore[misc, valid-type]
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(threading, "Thread", Recorded)
    small = _simulate("run", 1000, replications=kernels.THREAD_WORK // 2000 - 1)  # two arms
    assert started == []
    large = _simulate("run", kernels.THREAD_WORK // 4, replications=2)
    assert [t.name for t in started] == [kernels.THREAD_NAME]
    assert not started[0].is_alive()
    assert small.reward.shape[0] > 1 and np.isfinite(large.reward).all()


def test_an_error_in_the_helper_thread_reaches_the_caller(monkeypatch):
    """What the compiled call raises in the helper thread (e.g. the built module's argument
    check) is raised in the calling thread, and the thread is gone."""

    def refuses(*args: object) -> int:
        raise TypeError("run(): argument 'values' must be ...")

    with pytest.raises(TypeError, match="argument 'values'"):
        kernels.call(refuses, 1, 2, work=kernels.THREAD_WORK)
    assert not _helpers_alive()


@pytest.mark.parametrize("when", ["before", "after"])
def test_an_interruption_while_the_thread_starts_leaves_nothing_computing(monkeypatch, when):
    """``Thread.start`` waits for the new thread, so Ctrl-C can land in it, before or after the
    thread exists: either way the exception goes on and the compiled loop never runs."""
    calls: list[tuple] = []

    def loop(*args: object) -> int:
        if args[-1][0]:  # the stop flag set: the first call, returning before any round
            return STOPPED
        calls.append(args)
        return DONE

    started: list[threading.Thread] = []

    class Interrupted(threading.Thread):
        def start(self) -> None:
            started.append(self)
            if when == "after":
                super().start()
            raise KeyboardInterrupt

    monkeypatch.setattr(threading, "Thread", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        kernels.call(loop, 1, 2, work=kernels.THREAD_WORK)
    for thread in started:
        if when == "after":
            thread.join(PROMPTLY)
        assert not thread.is_alive()
    assert calls == []


# -- the command line, serial backend ------------------------------------------------------------

#: Two cells run one after the other (equal estimated cost: the cells' order): UCB1 on two arms
#: (a fraction of a second) and D-UCB on 4,000 arms (a minute or more: every round visits every
#: arm, ~10 µs).
SPEC = f"""
name = "interrupt"
seeds = 1
horizons = [5000000]
checkpoints = 5

[[environments]]
kind = "bernoulli"
label = "two"
means = [0.3, 0.7]

[[environments]]
kind = "bernoulli"
label = "many"
means = {[round(0.1 + 0.8 * i / 3999, 6) for i in range(4000)]}

[[policies]]
kind = "ucb1"
environments = ["two"]

[[policies]]
kind = "d-ucb"
discount = 0.999
environments = ["many"]
"""


def _default_sigint() -> None:
    # a test run started in the background by a non-interactive shell inherits SIGINT ignored,
    # and a Python child started so never raises KeyboardInterrupt: as a terminal would give it
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _lock_pid(run_dir: Path) -> str:
    with contextlib.suppress(OSError):
        return (run_dir / ".lock").read_text().strip()
    return ""


def _run_until_signal(
    spec: Path, run_dir: Path, signum: int, stored: int
) -> tuple[int, str, float]:
    """``impactbandits run`` on the serial backend, sent ``signum`` once it holds the run
    directory, ``stored`` results are in the store and the long cell has run half a second:
    exit status, stderr, seconds to exit."""
    runner = subprocess.Popen(
        [sys.executable, "-m", "impactbandits", "run", str(spec), "--backend", "serial",
         "--no-report", "--no-progress", "--out", str(run_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while runner.poll() is None and (
            _lock_pid(run_dir) != str(runner.pid) or _stored(run_dir) < stored
        ):
            assert time.monotonic() < deadline, "the run did not start, or its short cell end"
            time.sleep(0.05)
        time.sleep(0.5)  # the long cell is in its compiled loop
        assert runner.poll() is None, runner.communicate()
        runner.send_signal(signum)
        sent = time.monotonic()
        _, err = runner.communicate(timeout=60)
        return runner.returncode, err, time.monotonic() - sent
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()


@pytest.mark.parametrize(
    ("signum", "status", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
    ids=["SIGINT", "SIGTERM"],
)
def test_the_serial_backend_stops_within_seconds_inside_a_long_cell(tmp_path, signum, status, word):
    """Exit status 130 or 143 and the one-line message within seconds of the signal (before the
    stop flag: the rest of the cell, minutes), the finished cell kept, and the store
    resumable: a second run finds it and computes only the long cell."""
    _simulate("run", 10)  # numba compiles the loops here (its disk cache serves the child)
    _simulate("run-d-ucb", 10)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    run_dir = tmp_path / "run"
    message = (
        f"error: {word}: 1 of 2 results are stored in {run_dir}; "
        "run the same command again to resume"
    )
    code, err, seconds = _run_until_signal(spec, run_dir, signum, stored=1)
    assert code == status, err
    assert seconds < PROMPTLY
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == message
    assert _stored(run_dir) == 1
    with contextlib.closing(sqlite3.connect(run_dir / "results.sqlite")) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    code, err, seconds = _run_until_signal(spec, run_dir, signum, stored=1)  # the resume
    assert code == status, err
    assert "2 cells x 1 seeds: 1 to run, 1 already stored" in err
    assert err.strip().splitlines()[-1] == message
    assert seconds < PROMPTLY


def test_a_ctrl_c_answered_inside_code_run_from_a_string_still_exits_130(tmp_path):
    """CPython flags a ``KeyboardInterrupt`` that leaves any ``exec`` of a string (SciPy's imports
    run one) and, at exit, turns the flag into a death by SIGINT (status -2) whatever
    ``sys.exit`` asked: the command line answers the interrupt, so it must still exit 130 with
    its one line. The interrupt here is raised by the import of a module the spec names (a
    real Ctrl-C lands there at a moment a test cannot choose)."""
    (tmp_path / "ctrl_c_on_import.py").write_text(
        'exec("raise KeyboardInterrupt")\n\nPolicy = None\n'
    )
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'name = "x"\nseeds = 1\nhorizons = [10]\n\n[[environments]]\nkind = "bernoulli"\n'
        'means = [0.3, 0.7]\n\n[[policies]]\nkind = "ctrl_c_on_import:Policy"\n'
    )
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "impactbandits", "run", str(spec), "--no-report",
         "--out", str(tmp_path / "run")],
        capture_output=True, text=True, preexec_fn=_default_sigint, timeout=120,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "error: interrupted"


@pytest.mark.parametrize("fresh", [True, False])
def test_an_interrupt_before_the_store_is_read_claims_no_count(tmp_path, monkeypatch, fresh):
    """Ctrl-C while the run directory is being opened: the message says nothing was computed
    and, for an existing run, that what it holds is kept — not "0 of N results are stored"
    (which would be false for a resumed run)."""
    from impactbandits.experiments import runner
    from tests.conftest import small_spec

    spec = small_spec(seeds=1, horizons=[20])
    run_dir = tmp_path / "run"
    if not fresh:
        runner.run_experiment(spec, run_dir, backend="serial", progress=False)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.Store, "create", interrupted)
    with pytest.raises(runner.Interrupted) as raised:
        runner.run_experiment(spec, run_dir, backend="serial", progress=False)
    kept = "" if fresh else f"; what {run_dir} holds is kept"
    assert str(raised.value) == f"interrupted before the run began: nothing was computed{kept}"
    if not fresh:
        assert _stored(run_dir) == len(runner.expand(spec)) * spec.seeds
