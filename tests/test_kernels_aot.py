"""The compiled loops built ahead of time (:mod:`impactbandits.kernels.aot`): one entry per
built-in step, named by the hash of its sources, used only for the Python, NumPy and CPU it was
built for, never handed arguments of another type, and a process that uses them does not import
numba. (That they give the JIT's and the readable loop's numbers is what ``test_kernels.py``,
``test_kernels_srum.py`` and ``test_compiled_steps.py`` check, on both.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from impactbandits import kernels
from impactbandits.errors import SpecError
from impactbandits.kernels import aot
from impactbandits.kernels.sources import files_tag

needs_aot = pytest.mark.skipif(not aot.current().usable, reason=f"kernels {aot.current().reason}")


@needs_aot
def test_the_build_holds_every_built_in_step_of_the_present_sources():
    from impactbandits.kernels.build import planned_entries

    assert sorted(aot.current().entries) == planned_entries()
    entries = planned_entries()
    assert len(entries) >= 22  # 13 policies' loops, 3 in B2DEP's world, Tang's, SRUM's
    assert all(name.startswith("loop_") for name in entries)  # one template


def test_an_edit_of_any_source_renames_the_loop(tmp_path):
    """The name (the cache key and the entry) covers the step's module and what it calls, not
    only the function: an edit anywhere in a source file gives another name, so neither numba's
    cache nor the built module can run old code."""
    source = tmp_path / "mod.py"
    source.write_text("X = 1\ndef f():\n    return X\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import mod  # type: ignore[import-not-found]

        before = files_tag(["f"], [mod.f])
        source.write_text("X = 2\ndef f():\n    return X\n")  # a constant, not the function
        after = files_tag(["f"], [mod.f])
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mod", None)
    assert before is not None and after is not None and before != after


@pytest.mark.parametrize("key", ["python", "numpy", "cpu"])
def test_a_build_for_another_python_numpy_or_cpu_is_not_used(tmp_path, key):
    stamp = tmp_path / "_aot.json"
    stamp.write_text(json.dumps({**aot.fingerprint(), key: "other", "entries": ["loop_x"]}))
    state = aot.status(stamp)
    assert not state.usable and key in state.reason
    stamp.write_text(json.dumps({**aot.fingerprint(), "entries": ["loop_x"]}))
    assert aot.status(stamp).usable and aot.status(stamp).entries == ("loop_x",)


def test_missing_or_unreadable_stamps_are_not_usable(tmp_path):
    assert not aot.status(tmp_path / "none.json").usable
    (tmp_path / "bad.json").write_text("{not json")
    assert not aot.status(tmp_path / "bad.json").usable
    (tmp_path / "old.json").write_text(json.dumps(aot.fingerprint()))  # no entries: old format
    assert not aot.status(tmp_path / "old.json").usable


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda a: [a[0].astype(np.float32), *a[1:]], "argument 0 must be a C-contiguous 1-d"),
        (lambda a: [*a[:2], a[2][:, :, ::2], *a[3:]], "argument 2 must be a C-contiguous 3-d"),
        (
            lambda a: [*a[:3], a[3].astype(np.int64), *a[4:]],
            "argument 3 must be a C-contiguous 2-d uint64",
        ),
        (lambda a: [*a[:7], 1.5, *a[8:]], "argument 7 must be a int64 scalar"),
        (lambda a: [*a[:7], True, *a[8:]], "argument 7 must be a int64 scalar"),
        (lambda a: [*a[:4], "x", *a[5:]], "argument 4 must be a float64 scalar"),
        (lambda a: a[:-1], "19 arguments expected, 18 given"),
    ],
)
def test_check_refuses_any_other_type_naming_the_argument(change, message):
    args = [
        np.zeros(1), np.zeros(3), np.zeros((1, 2, 4)), np.zeros((1, 3), np.uint64), 0.0,
        np.zeros((1, 1)), np.zeros((1, 3), np.uint64), 5, np.array([5]), np.zeros((1, 1)),
        np.zeros((1, 1)), np.zeros((1, 1, 2)), np.zeros((1, 1), np.int64), np.zeros((1, 1, 0)),
        np.zeros((1, 1, 0), np.int64), np.zeros((1, 1, 0)), np.zeros((1, 0), np.int64),
        np.zeros(3, np.int64), np.zeros(1, np.int64),
    ]  # fmt: skip
    assert len(aot.check(tuple(args), aot.LOOP_ARGS)) == len(aot.LOOP_ARGS)
    with pytest.raises(TypeError, match=message):
        aot.check(tuple(change(args)), aot.LOOP_ARGS)


def test_asking_for_an_unusable_built_module_is_a_spec_error(monkeypatch):
    monkeypatch.setattr(aot, "current", lambda: aot.Status(False, "not built"))
    monkeypatch.setenv(kernels.KERNELS_ENV, "aot")
    with pytest.raises(SpecError, match="IMPACTBANDITS_KERNELS: aot asked for"):
        kernels.planned()


@needs_aot
def test_a_run_on_the_built_module_never_imports_numba(tmp_path):
    """The generic loop with Gaussian (ndtri) and Beta (betaincinv) noise, FEWA's step and
    SRUM's loop, through the pipeline, serial."""
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
            policies=[{"kind": "ucb1"}, {"kind": "spo"}, {"kind": "fewa"}, {"kind": "moss"}],
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
    assert done.stdout.startswith("impactbandits kernels: ")


def test_the_package_ships_the_shim():
    assert (Path(aot.__file__).parent / "aot_shim.c").is_file()
