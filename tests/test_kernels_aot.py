"""The compiled loops built ahead of time (:mod:`impactbandits.kernels.aot`): used only when
built from the present sources, never handed arguments of another type, and a process that uses
them does not import numba. (That they give the JIT's and the readable loop's numbers is what
``test_kernels.py``, ``test_kernels_srum.py`` and ``test_rotting.py`` check, on both.)"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import textwrap
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.errors import SpecError
from impactbandits.kernels import aot
from impactbandits.kernels.signatures import ENTRIES, check

PACKAGE = Path(aot.__file__).resolve().parent.parent
needs_aot = pytest.mark.skipif(not aot.current().usable, reason=f"kernels {aot.current().reason}")


# -- the table of entry points ------------------------------------------------------------------


@pytest.mark.skipif(find_spec("numba") is None, reason="numba not installed")
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_each_entry_lists_the_parameters_of_its_numba_function(name):
    entry = ENTRIES[name]
    function = getattr(import_module(f"impactbandits.kernels.{entry.module}"), entry.function)
    parameters = tuple(inspect.signature(function.py_func).parameters)
    assert tuple(arg.name for arg in entry.args) == parameters


def test_every_source_of_the_compiled_code_is_in_the_stamp():
    """A source left out of :data:`aot.SOURCES` could change without the module going stale:
    every module with numba functions, and every module of the package they import, must be
    listed."""
    compiled = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if any(line.startswith("@njit") for line in path.read_text().splitlines())
    }
    imported = {
        line.split()[1].removeprefix("impactbandits.").replace(".", "/") + ".py"
        for name in compiled
        for line in (PACKAGE / name).read_text().splitlines()
        if line.startswith("from impactbandits.")
    }
    assert compiled >= {"kernels/loops.py", "kernels/srum.py", "kernels/fewa.py"}
    assert compiled | imported <= set(aot.SOURCES)
    assert all((PACKAGE / name).is_file() for name in aot.SOURCES)


def _run_args(**changes):
    replications, arms, rounds = 2, 3, 10
    args = dict(
        kind=1,
        params=np.array([2.0]),
        values=np.full((1, arms, 1), 0.5),
        noise=0,
        sigma=0.0,
        key=np.zeros(2, dtype=np.uint64),
        replications_ids=np.arange(replications, dtype=np.uint64),
        uniforms=np.zeros((replications, 1)),
        rounds=rounds,
        checkpoints=np.array([rounds]),
        out_reward=np.empty((replications, 1)),
        out_expected=np.empty((replications, 1)),
        out_pulls=np.empty((replications, 1, arms)),
        out_switches=np.empty((replications, 1), dtype=np.int64),
        stop=np.zeros(1, dtype=np.int64),
    )
    args.update(changes)
    return tuple(args.values())


def test_check_passes_arguments_of_the_compiled_types():
    args = _run_args(kind=np.int64(1), sigma=1)  # NumPy and int scalars become Python ones
    checked = check("run", args)
    assert type(checked[0]) is int and type(checked[4]) is float
    assert all(a is b for a, b in zip(checked[5:], args[5:], strict=True))  # arrays: no copies
    # read-only inputs (np.broadcast_to) and strided uniforms ("A" layout) are allowed
    check("run", _run_args(params=np.broadcast_to(2.0, (1,)), uniforms=np.zeros((1, 2)).T))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"values": np.full((1, 3, 1), 0.5, dtype=np.float32)}, "'values' must be .* not dtype"),
        ({"values": np.full((3, 1), 0.5)}, "'values' must be .*3-d .* not 2 dimensions"),
        ({"values": np.full((1, 3, 2), 0.5)[:, :, :1]}, "'values' .* non-contiguous"),
        ({"key": np.zeros(2, dtype=np.int64)}, "'key' must be .*uint64"),
        ({"out_pulls": np.broadcast_to(0.0, (2, 1, 3))}, "'out_pulls' must be a writeable"),
        ({"values": [[[0.5]]]}, "'values' must be a NumPy array, not list"),
        ({"rounds": 10.0}, "'rounds' must be a int64 scalar, not float"),
        ({"sigma": "0"}, "'sigma' must be a float64 scalar, not str"),
        ({"noise": True}, "'noise' must be a int64 scalar, not bool"),
    ],
)
def test_check_refuses_anything_else_naming_the_argument(change, message):
    with pytest.raises(TypeError, match=rf"^run\(\): argument {message}"):
        check("run", _run_args(**change))
    with pytest.raises(TypeError, match="takes 15 arguments, 14 given"):
        check("run", _run_args()[:-1])


@needs_aot
def test_the_built_module_refuses_a_wrong_dtype_instead_of_reading_garbage(monkeypatch):
    monkeypatch.setenv(kernels.KERNELS_ENV, "aot")
    run = kernels.entry("run")
    good = _run_args()
    assert run(*good) == 0  # DONE
    assert good[10][0, 0] == 5.0  # ten pulls of arms worth 0.5, noise off
    with pytest.raises(TypeError, match="'values'"):
        run(*_run_args(values=np.full((1, 3, 1), 0.5, dtype=np.float32)))


# -- when the built module is used ----------------------------------------------------------------


@pytest.fixture
def package_copy(tmp_path):
    """The stamped sources, copied, with a stamp of them."""
    for name in aot.SOURCES:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PACKAGE / name, target)
    stamp = tmp_path / "_aot.json"
    stamp.write_text(json.dumps(aot.fingerprint(tmp_path)))
    return tmp_path, stamp


def test_a_stamp_of_the_present_sources_is_usable(package_copy):
    package, stamp = package_copy
    assert aot.status(stamp, package).usable


@pytest.mark.parametrize("name", aot.SOURCES)
def test_any_edit_of_a_source_makes_the_module_stale(package_copy, name):
    package, stamp = package_copy
    with open(package / name, "a") as source:
        source.write("\n")  # even a blank line: the source is hashed, not parsed
    state = aot.status(stamp, package)
    assert not state.usable
    assert "stale" in state.reason and "sources" in state.reason


@pytest.mark.parametrize("key", ["python", "numpy", "machine", "cpu"])
def test_a_build_for_another_python_numpy_or_cpu_is_stale(package_copy, key):
    package, stamp = package_copy
    built = json.loads(stamp.read_text())
    built[key] = "something else"
    stamp.write_text(json.dumps(built))
    state = aot.status(stamp, package)
    assert not state.usable and key in state.reason


def test_missing_or_unreadable_stamps_are_not_usable(package_copy):
    package, stamp = package_copy
    stamp.write_text("{not json")
    assert aot.status(stamp, package).reason.startswith("unreadable stamp")
    stamp.write_text("[1, 2]")
    assert aot.status(stamp, package).reason.startswith("unreadable stamp")
    stamp.unlink()
    assert aot.status(stamp, package).reason.startswith("not built")


@pytest.mark.parametrize("failure", ["import", "symbol"])
def test_a_module_that_cannot_be_bound_is_not_used(monkeypatch, failure):
    """No module, or no shim symbol to bind SciPy's functions through (never calling it with
    them unbound): ``load`` gives ``None`` and the library falls back to the JIT."""
    import ctypes

    monkeypatch.setattr(aot, "current", lambda: aot.Status(True, "test"))
    if failure == "import":
        monkeypatch.setattr(aot, "MODULE", "impactbandits.kernels._no_such_module")
    else:

        def no_symbol(path):
            raise AttributeError(f"{path}: undefined symbol: impactbandits_bind")

        monkeypatch.setattr(ctypes, "CDLL", no_symbol)
        monkeypatch.setattr(aot.importlib, "import_module", lambda name: ctypes)
    assert aot.load.__wrapped__() is None


def test_a_bad_kernels_setting_is_a_one_line_spec_error(monkeypatch, tmp_path):
    from impactbandits import run_experiment
    from tests.conftest import small_spec

    monkeypatch.setenv(kernels.KERNELS_ENV, "fast")
    with pytest.raises(SpecError, match=r"^IMPACTBANDITS_KERNELS: 'fast' is not one of"):
        kernels.planned()
    with pytest.raises(SpecError, match="IMPACTBANDITS_KERNELS"):
        run_experiment(small_spec(), tmp_path / "run", backend="serial")
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_asking_for_an_unusable_built_module_is_a_spec_error(monkeypatch):
    monkeypatch.setattr(aot, "current", lambda: aot.Status(False, "not built (test)"))
    monkeypatch.setenv(kernels.KERNELS_ENV, "aot")
    with pytest.raises(SpecError, match=r"aot asked for, but the ahead-of-time module is not"):
        kernels.planned()
    monkeypatch.setenv(kernels.KERNELS_ENV, "auto")  # auto: the JIT, or the readable loops
    assert kernels.planned() == ("jit" if find_spec("numba") else None)


@needs_aot
def test_a_run_on_the_built_module_never_imports_numba(tmp_path):
    """Every entry point on the way: the round loop with Gaussian (ndtri) and Beta
    (betaincinv) noise, SRUM, and FEWA's filter, through the pipeline, serial."""
    script = textwrap.dedent(
        """
        import sys
        from impactbandits import ExperimentSpec, kernels, run_experiment

        spec = ExperimentSpec.create(
            name="aot",
            environments=[
                {"kind": "single-peaked", "instance": 3, "noise": "gaussian", "sigma": 0.05},
                {"kind": "rising", "instance": "15-arms", "length": 300},
                {"kind": "rotting", "length": 300, "breakpoint": 100},
            ],
            policies=[{"kind": "ucb1"}, {"kind": "spo"}, {"kind": "fewa"}],
            horizons=[300], seeds=2, checkpoints=3,
        )
        run_experiment(spec, sys.argv[1], backend="serial")
        srum = ExperimentSpec.create(
            name="srum",
            environments=[{"kind": "opportunity", "means": [0.2, 0.5, 0.7], "fairness": "linear",
                           "transfer_cost": 0.4, "distribution": "beta"}],
            policies=[{"kind": "srum"}], horizons=[300], seeds=2, checkpoints=3,
        )
        run_experiment(srum, sys.argv[1] + "-srum", backend="serial")
        print(kernels.backend(), "numba" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env={**os.environ, kernels.KERNELS_ENV: "aot"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["aot", "False"]


def test_the_build_command_says_whether_the_module_is_usable():
    done = subprocess.run(
        [sys.executable, "-m", "impactbandits.kernels.build", "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == (0 if aot.current().usable else 1)
    assert aot.current().reason in done.stdout


def test_a_failed_build_names_the_exception_and_keeps_the_module_it_had(tmp_path):
    """No working C compiler (``CC=/bin/false``): exit status 1, the exception line of the
    child's traceback (not the compiler hint that follows it), and the stamp untouched."""
    if find_spec("numba") is None:
        pytest.skip("numba not installed")
    before = aot.STAMP.read_bytes() if aot.STAMP.exists() else None
    done = subprocess.run(
        [sys.executable, "-m", "impactbandits.kernels.build", "--force"],
        capture_output=True,
        text=True,
        env={**os.environ, "CC": "/bin/false"},
    )
    assert done.returncode == 1
    assert "the ahead-of-time build failed (RuntimeError: " in done.stderr
    assert "numba's JIT will be used" in done.stderr
    assert (aot.STAMP.read_bytes() if aot.STAMP.exists() else None) == before


def test_the_cause_of_a_failed_build_is_its_exception_line():
    from impactbandits.kernels.build import _cause

    trace = 'Traceback:\n  File "x"\nnumba.core.errors.TypingError: bad\n\nhint: install gcc\n'
    assert _cause(trace) == "numba.core.errors.TypingError: bad"
    assert _cause("just a line\nlast line\n") == "last line"
    assert _cause("") == "no output"
