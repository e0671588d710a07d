"""Small commands start without the heavy libraries (issue 29, "start-up").

``impactbandits list``, ``describe NAME`` and ``--help`` need names, docstrings, figure titles
and specs, never plots, tables or compiled loops: they must not import matplotlib, pandas,
pyarrow, numba or scipy, nor the runner, the store or the plotting modules. ``export`` needs
pandas (and pyarrow for parquet) but not matplotlib. Each command runs in a fresh interpreter
(as ``python -m impactbandits`` does) and the test reads what ``sys.modules`` holds afterwards:
the imports are the contract, so nothing here measures time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from impactbandits import run_experiment
from impactbandits.experiments.figures import FIGURES
from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES

from .conftest import small_spec

HEAVY = frozenset({"matplotlib", "pandas", "pyarrow", "numba", "scipy"})
#: Our modules that only running, storing, exporting or drawing need.
WORK_MODULES = frozenset(
    {
        "impactbandits.experiments.runner",
        "impactbandits.experiments.backends",
        "impactbandits.experiments.store",
        "impactbandits.experiments.tidy",
        "impactbandits.experiments.plots",
        "impactbandits.experiments.rested_figures",
        "impactbandits.experiments.report",
    }
)
#: Figures whose ``describe`` still imports a heavy library, through modules outside the
#: command line and the figure registry: validating a ``fico`` environment builds its curves
#: from the FICO tables, read with pandas (``envs/fico.py``; numpy's parser could round their
#: last digits differently).
#: :func:`test_known_figures_import_only_what_is_known` fails once one of them is gone: then
#: take it out of here.
KNOWN: dict[str, frozenset[str]] = {
    "lindner-fico": frozenset({"pandas", "pyarrow"}),
    "rested-benchmark": frozenset({"pandas", "pyarrow"}),
    "benchmark": frozenset({"pandas", "pyarrow"}),
}

#: Runs each argument list as ``python -m impactbandits ARGS`` would, in one interpreter, then
#: prints the names in ``sys.modules`` after a marker line.
PROBE = r"""
import json, runpy, sys

for args in json.loads(sys.argv[1]):
    sys.argv = ["impactbandits", *args]
    try:
        runpy.run_module("impactbandits", run_name="__main__")
    except SystemExit as exc:
        if exc.code:
            raise SystemExit(f"{args}: exit status {exc.code}") from None
print("\n--- modules ---\n" + json.dumps(sorted(sys.modules)))
"""


def imported_by(*commands: list[str], cwd: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``commands`` (argument lists of
    ``impactbandits``), in ``cwd``."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([list(c) for c in commands])],
        capture_output=True, text=True, cwd=cwd, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.rsplit("--- modules ---\n", 1)[1]))


def heavy(modules: set[str]) -> set[str]:
    return {name.partition(".")[0] for name in modules} & HEAVY


@pytest.mark.parametrize(
    "args",
    [
        ["list"],
        ["list", "figures"],
        ["describe", "ucb1"],
        ["describe", "lindner-fig1"],
        ["describe", "impact"],
        ["--help"],
    ],
    ids=" ".join,
)
def test_small_commands_import_no_heavy_library(args, tmp_path):
    modules = imported_by(args, cwd=tmp_path)
    known = KNOWN.get(args[-1], frozenset()) if args[0] == "describe" else frozenset()
    assert heavy(modules) - known == set()
    assert modules & WORK_MODULES == set()


def test_every_name_is_described_without_heavy_libraries(tmp_path):
    names = sorted({*ENVIRONMENTS, *POLICIES, *ORACLES, *FIGURES} - set(KNOWN))
    commands = [["list"], *(["describe", name] for name in names)]
    modules = imported_by(*commands, cwd=tmp_path)
    assert heavy(modules) == set()
    assert modules & WORK_MODULES == set()


def test_known_figures_import_only_what_is_known(tmp_path):
    modules = imported_by(*(["describe", name] for name in KNOWN), cwd=tmp_path)
    assert modules & WORK_MODULES == set()
    # equal, not a subset: once a library is no longer imported, take it out of KNOWN
    assert heavy(modules) == set().union(*KNOWN.values())


def test_export_imports_no_plotting(tmp_path):
    spec = small_spec(
        environments=[{"kind": "bernoulli", "label": "b2", "means": [0.3, 0.7]}],
        policies=[{"kind": "ucb1"}],
        horizons=[20],
        seeds=2,
    )
    run_dir = tmp_path / "run"
    run_experiment(spec, run_dir, backend="serial")
    commands = [
        ["export", str(run_dir), "--format", fmt, "-o", str(tmp_path / f"results.{fmt}")]
        for fmt in ("csv", "parquet")
    ]
    modules = imported_by(*commands, cwd=tmp_path)
    assert (tmp_path / "results.csv").stat().st_size > 0
    assert (tmp_path / "results.parquet").stat().st_size > 0
    assert "matplotlib" not in heavy(modules)
    plotting = {"impactbandits.experiments.plots", "impactbandits.experiments.report"}
    assert modules & (plotting | {"impactbandits.experiments.runner"}) == set()


def test_the_command_line_caps_the_blas_thread_pools_unless_the_user_set_them(monkeypatch):
    """``main`` sets each of :data:`~impactbandits.cli.BLAS_THREADS` to one thread before
    anything imports NumPy (an idle BLAS pool costs every process CPU as it starts), and keeps
    a value the user chose."""
    from impactbandits import cli

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "3")
    monkeypatch.setattr(sys, "argv", ["impactbandits", "--help"])
    cli.main()  # --help: returns (exit status 0)
    assert set(cli.BLAS_THREADS) == {"OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"}
    import os

    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    assert os.environ["MKL_NUM_THREADS"] == "3"


def test_a_reader_that_goes_away_stops_the_command_quietly():
    """``impactbandits list | head -1``: once the reader has closed the pipe, the command
    stops with 141 (128 + SIGPIPE, what a shell reports) and writes nothing to stderr, instead
    of an "internal error" line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "impactbandits", "list"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the command writes anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert err == ""
