"""The last hardening gaps of issue 25: each case failed on the code before it (how is said
per test) and now gives a correct result or one line naming the field, exit status 2, with
nothing stored that should not be."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from impactbandits import ExperimentSpec, run_experiment
from impactbandits.cli import cli
from impactbandits.errors import SpecError
from impactbandits.experiments.provenance import git_commit
from impactbandits.experiments.store import Store

PYTHON = sys.executable
CLI = str(Path(PYTHON).parent / "impactbandits")

SPEC = """
name = "h"
seeds = 2
horizons = [20]
[[environments]]
kind = "bernoulli"
means = [0.3, 0.7]
[[policies]]
kind = "{policy}"
{extra}
"""

USER_CODE = """
import numpy as np
from impactbandits import SimplePolicy


class Returns(SimplePolicy):
    value = 0

    def reset(self, space, horizon, rng):
        pass

    def select(self):
        return self.value

    def update(self, action, feedback):
        pass


class Half(Returns):
    value = 0.5


class Text(Returns):
    value = "1"


class NaN(Returns):
    value = float("nan")


class Nothing(Returns):
    value = None


class Flag(Returns):
    value = True


class NumpyInt(Returns):
    value = np.int64(1)


class MixedFlag(Returns):
    # of the two replications one returns the int 0, the other True (NumPy would read the pair
    # as the integers [0, 1])

    made = 0

    def reset(self, space, horizon, rng):
        self.value = 0 if MixedFlag.made % 2 == 0 else True
        MixedFlag.made += 1


def one_value(mu):
    return np.asarray(mu)[..., :1]


def words(mu):
    return "fair"


def good_curve(n):
    return np.minimum(1.0, n / 100)


def bad_curve(n):
    raise ValueError("second curve fails")
"""


@pytest.fixture
def code(tmp_path, monkeypatch) -> Path:
    (tmp_path / "hmod.py").write_text(USER_CODE)
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path


def _spec(path: Path, policy: str = "ucb1", extra: str = "", env: str | None = None) -> Path:
    text = SPEC.format(policy=policy, extra=extra)
    if env is not None:
        text = text.replace('kind = "bernoulli"\nmeans = [0.3, 0.7]', env)
    path.write_text(text)
    return path


def _one_line(result, field: str, *needles: str, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1, result.stderr
    message = errors[0]
    assert message.startswith(f"error: {field}"), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    assert "Traceback" not in result.output
    return message


# -- a user's policy returning nonsense ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "shown"),
    [("Half", "0.5 (float)"), ("Text", "'1' (str)"), ("NaN", "nan (float)"),
     ("Nothing", "None (NoneType)"), ("Flag", "True (bool)")],
)  # fmt: skip
def test_a_user_action_that_is_not_an_arm_index_is_refused(code, tmp_path, kind, shown):
    # before: 0.5 was truncated to arm 0 and "1" read as arm 1, both stored with exit 0; nan
    # and None were "internal error ... (a bug: please report it)", exit 1
    spec = _spec(tmp_path / "s.toml", f"hmod:{kind}")
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    _one_line(
        result, "policies[0].kind", f"round 1: select() returned {shown}",
        "an integer in 0..1",
    )  # fmt: skip
    assert not (tmp_path / "run").exists()


def test_one_boolean_among_integer_actions_is_refused(code, tmp_path):
    spec = _spec(tmp_path / "s.toml", "hmod:MixedFlag")
    result = CliRunner().invoke(
        cli, ["run", str(spec), "--out", str(tmp_path / "run"), "--backend", "serial"]
    )
    _one_line(result, "policies[0].kind", "round 1: select() returned True (bool)")


def test_a_numpy_integer_action_is_an_arm(code, tmp_path):
    spec = _spec(tmp_path / "s.toml", "hmod:NumpyInt")
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output


# -- user functions returning nonsense, and blame ----------------------------------------------


@pytest.mark.parametrize(
    ("function", "needle"),
    [
        ("hmod:one_value", "hmod:one_value returned shape (1,) for means of shape (2,)"),
        ("hmod:words", "hmod:words returned str; it must return numbers"),
    ],
)
def test_a_fairness_function_returning_the_wrong_values(code, function, needle):
    # before: "internal error ... IndexError" (exit 1)
    env = {"kind": "opportunity", "means": [0.3, 0.7], "fairness": function}
    with pytest.raises(SpecError) as info:
        ExperimentSpec.create(
            name="f", horizons=[20], seeds=1, environments=[env], policies=[{"kind": "ucb1"}]
        )
    assert str(info.value).startswith("environments[0].fairness: ") and needle in str(info.value)


def test_the_curve_that_raises_is_the_one_named(code):
    # before: the error named curves[0] and good_curve (the module's first import path)
    env = {"kind": "rested", "curves": ["hmod:good_curve", "hmod:bad_curve"], "length": 50}
    with pytest.raises(SpecError) as info:
        ExperimentSpec.create(
            name="c", horizons=[20], seeds=1, environments=[env], policies=[{"kind": "ucb1"}]
        )
    assert str(info.value).startswith(
        "environments[0].curves[1]: hmod:bad_curve raised ValueError: second curve fails "
        "(in bad_curve, hmod.py:"
    ), str(info.value)


@pytest.mark.parametrize("traceback", [False, True])
def test_a_module_calling_sys_exit_at_import(code, tmp_path, traceback):
    # before: exit status 3 and no output at all, even with --traceback
    spec = _spec(tmp_path / "s.toml", "exits:P")
    args = ["run", str(spec), "--out", str(tmp_path / "run")]
    result = CliRunner().invoke(cli, args + (["--traceback"] if traceback else []))
    if not traceback:
        _one_line(result, "policies[0].kind", "importing 'exits:P' called sys.exit(3)")
        return
    assert result.exit_code == 2
    assert "SystemExit: 3" in result.stderr  # the trace, then the one line
    assert result.stderr.strip().splitlines()[-1] == (
        "error: policies[0].kind: importing 'exits:P' called sys.exit(3)"
    )


# -- parameters ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ['"yes"', "1", '"true"'])
def test_a_boolean_parameter_takes_only_true_or_false(tmp_path, value):
    # before: doubling = "yes" (and 1) were accepted as true
    spec = _spec(tmp_path / "s.toml", "swa", f"doubling = {value}")
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    _one_line(result, "policies[0].doubling", "must be true or false")
    assert not (tmp_path / "run").exists()


# -- environment variables and options ---------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("IMPACTBANDITS_DEDUP", "maybe"),
        ("IMPACTBANDITS_KERNELS", "bogus"),
        ("IMPACTBANDITS_REPORT_WORKERS", "two"),
        ("IMPACTBANDITS_REPORT_WORKERS", "0"),
        # before: internal errors (exit 1): "²".isdigit() is True but int("²") fails, and a
        # count of processes no machine has was taken
        ("IMPACTBANDITS_REPORT_WORKERS", "²"),
        ("IMPACTBANDITS_REPORT_WORKERS", "٣"),
        ("IMPACTBANDITS_REPORT_WORKERS", "99999999999999999999"),
    ],
)
def test_every_environment_variable_is_parsed_strictly(tmp_path, monkeypatch, variable, value):
    # before: IMPACTBANDITS_DEDUP=maybe silently meant "on", IMPACTBANDITS_REPORT_WORKERS=two
    # silently meant 1 (after the whole run)
    monkeypatch.setenv(variable, value)
    spec = _spec(tmp_path / "s.toml")
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    _one_line(result, variable, repr(value))
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value", ["off", "0", "no", "false"])
def test_dedup_switches_off_by_any_spelling(monkeypatch, value):
    from impactbandits.experiments.runner import DEDUP_ENV, _dedup_default

    monkeypatch.setenv(DEDUP_ENV, value)
    assert _dedup_default() is False
    monkeypatch.setenv(DEDUP_ENV, "")
    assert _dedup_default() is True


@pytest.mark.parametrize(
    ("address", "needle"),
    [("not an address", "is not a scheduler address"), ("foo://bar", "unknown address scheme")],
)
def test_a_malformed_scheduler_address(tmp_path, address, needle):
    # before: "internal error ... (a bug: please report it)", exit 1
    spec = _spec(tmp_path / "s.toml")
    args = ["run", str(spec), "--out", str(tmp_path / "run"), "--backend", "dask"]
    result = CliRunner().invoke(cli, [*args, "--scheduler", address])
    _one_line(result, "scheduler", needle)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("notaspec",), "spec: no such file: notaspec"),
        ((123,), "spec: must be an ExperimentSpec, a mapping of its fields or the path"),
        (({"name": "x"},), "environments: required field is missing"),
        (("SPEC", 123), "run_dir: must be a path (str or pathlib.Path), got int"),
        (("SPEC", None, "serial", None, None, None, "yes"), "progress: must be True or False"),
        (("SPEC", None, "serial", True), "workers: must be a positive integer"),
    ],
)
def test_run_experiment_names_the_bad_argument(tmp_path, monkeypatch, args, field):
    # before: raw AttributeError / TypeError from inside the runner
    monkeypatch.chdir(tmp_path)
    spec = ExperimentSpec.create(
        name="a", horizons=[5], seeds=1, environments=[{"kind": "bernoulli", "means": [0.5]}],
        policies=[{"kind": "ucb1"}],
    )  # fmt: skip
    args = tuple(spec if a == "SPEC" else a for a in args)
    with pytest.raises(SpecError) as info:
        run_experiment(*args)
    assert str(info.value).startswith(field), str(info.value)
    assert not list(tmp_path.iterdir())


def test_run_experiment_takes_a_mapping_or_a_toml_path(tmp_path):
    spec = _spec(tmp_path / "s.toml")
    summary = run_experiment(spec, tmp_path / "a", backend="serial")
    assert summary.computed == 2
    data = {"name": "m", "horizons": [5], "seeds": 1, "policies": [{"kind": "ucb1"}],
            "environments": [{"kind": "bernoulli", "means": [0.5, 0.6]}]}  # fmt: skip
    assert run_experiment(data, tmp_path / "b", backend="serial").computed == 1


# -- SPO on noise --------------------------------------------------------------------------------

_NOISY = 'kind = "single-peaked"\ninstance = 1\nnoise = "gaussian"\nsigma = 0.05'


@pytest.mark.parametrize(
    ("policy", "extra", "env", "warned"),
    [
        ("spo", "", _NOISY, True),
        ("spo", 'variant = "authors-code"', _NOISY, True),
        ("spo", "noise_bound = 0.1", _NOISY, False),
        ("spo-delta", "sigma = 0.05", _NOISY, False),
        ("spo", "", 'kind = "single-peaked"\ninstance = 1', False),
    ],
)
def test_noise_free_spo_on_noisy_observations_is_warned(tmp_path, policy, extra, env, warned):
    # before: silence, and 26 of 30 seeds failed at T = 5000, sigma = 0.05
    spec = _spec(tmp_path / "s.toml", policy, extra, env)
    result = CliRunner().invoke(
        cli, ["run", str(spec), "--out", str(tmp_path / "run"), "--no-report"]
    )
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning")]
    if warned:
        assert warnings == [
            "warning: policies[0] (spo) on environments[0] (single-peaked): 'spo' with "
            "noise_bound = 0 is Lindner et al.'s noise-free Algorithm 1, but the observations "
            "are noisy: give noise_bound (a bound on the noise, §4) or use 'spo-delta' with the "
            "noise's sigma (Corollary 1)"
        ]
    else:
        assert warnings == []


# -- provenance --------------------------------------------------------------------------------


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=t@t", "-c", "user.name=t", *args],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip


def test_an_installed_copy_inside_another_work_tree_reports_no_commit(tmp_path):
    # before: the user's project commit (and +dirty) was recorded as the library's
    project = tmp_path / "myproj"
    package = project / ".venv" / "lib" / "python3.11" / "site-packages" / "impactbandits"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (project / "analysis.py").write_text("x = 1\n")
    _git(project, "init", "-q")
    _git(project, "add", "analysis.py")
    _git(project, "commit", "-qm", "mine")
    assert git_commit(package) is None


def test_the_library_checkout_reports_its_commit(tmp_path):
    checkout = tmp_path / "impactbandits-src"
    package = checkout / "src" / "impactbandits"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (checkout / "pyproject.toml").write_text('[project]\nname = "impactbandits"\n')
    _git(checkout, "init", "-q")
    _git(checkout, "add", ".")
    _git(checkout, "commit", "-qm", "lib")
    head = _git(checkout, "rev-parse", "HEAD")
    assert git_commit(package) == head
    (package / "__init__.py").write_text("changed = True\n")
    assert git_commit(package) == f"{head}+dirty"
    (checkout / "pyproject.toml").write_text('[project]\nname = "someone-else"\n')
    assert git_commit(package) is None


# -- signals and dead workers ------------------------------------------------------------------

#: Runs the CLI with the report phase slowed down so that a signal lands in it.
_SLOW_REPORT = """
import sys, time
import impactbandits.experiments.report as report
original = report.write_report
def slow(*args, **kwargs):
    print("REPORT PHASE", file=sys.stderr, flush=True)
    time.sleep(30)
    return original(*args, **kwargs)
report.write_report = slow
from impactbandits.cli import main
sys.argv = ["impactbandits", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_the_report_phase_says_how_to_redraw(tmp_path, signum, status):
    # before: SIGTERM exited 143 with no message
    spec = _spec(tmp_path / "s.toml")
    (tmp_path / "slow.py").write_text(_SLOW_REPORT)
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        [PYTHON, str(tmp_path / "slow.py"), "run", str(spec), "--out", str(run_dir),
         "--backend", "serial"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines = []
    for line in process.stderr:  # wait until the report phase has started
        lines.append(line)
        if "REPORT PHASE" in line:
            break
    process.send_signal(signum)
    rest = process.stderr.read()
    assert process.wait(timeout=60) == status
    word = "terminated" if signum == signal.SIGTERM else "interrupted"
    assert rest.strip() == (
        f"error: {word} while drawing the report: every result is stored in {run_dir}; draw it "
        f"again with `impactbandits report {run_dir}` (nothing is recomputed)"
    )
    with Store.open_existing(run_dir) as store:
        assert store.count() == 2


_LONG = """
name = "long"
seeds = 4
horizons = [200000000]
[[environments]]
kind = "bernoulli"
means = [0.3, 0.7]
[[policies]]
kind = "exp3"
"""


def _children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


@pytest.mark.skipif(sys.platform != "linux", reason="the fork server's workers (Linux)")
def test_a_worker_killed_from_outside_names_its_task(tmp_path):
    # before: "internal error ... BrokenProcessPool ... (a bug: please report it)", exit 1
    spec = tmp_path / "s.toml"
    spec.write_text(_LONG)
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        [CLI, "run", str(spec), "--out", str(run_dir), "--workers", "2", "--no-report",
         "--batch-size", "2"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        time.sleep(0.2)
        servers = _children(process.pid)
        workers = [w for s in servers for w in _children(s)]
    assert len(workers) >= 2, "no workers started"
    time.sleep(1.0)  # the workers have taken their first tasks
    os.kill(workers[0], signal.SIGKILL)
    error = process.communicate(timeout=60)[1]
    assert process.returncode == 2, error
    last = error.strip().splitlines()[-1]
    assert last.startswith(f"error: backend: worker process {workers[0]} was killed by SIGKILL")
    assert "while running environments[0] (bernoulli) x policies[" in last
    assert "horizon 200,000,000, seeds " in last
    assert last.endswith(
        "run the same command again to resume (fewer --workers or a smaller --batch-size need "
        "less memory)"
    )
    assert not any(Path(f"/proc/{w}").exists() for w in workers[1:]), "a worker lives on"


# -- export on a full disk ---------------------------------------------------------------------


def test_export_on_a_full_disk_names_the_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    # before: a half-written (here: empty) results.csv replaced the good one, and the error
    # named no file
    import errno

    import pandas as pd

    spec = _spec(tmp_path / "s.toml")
    run_dir = tmp_path / "run"
    assert CliRunner().invoke(cli, ["run", str(spec), "--out", str(run_dir)]).exit_code == 0
    assert CliRunner().invoke(cli, ["export", str(run_dir)]).exit_code == 0
    good = (run_dir / "results.csv").read_bytes()

    def full(self, path, **kwargs):
        Path(path).write_text("half a ta")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)
    result = CliRunner().invoke(cli, ["export", str(run_dir)])
    _one_line(result, "output: disk full writing ", str(run_dir / "results.csv"))
    assert (run_dir / "results.csv").read_bytes() == good
    assert sorted(p.name for p in run_dir.iterdir() if "partial" in p.name) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_export_to_a_full_device_is_one_line(tmp_path):
    spec = _spec(tmp_path / "s.toml")
    run_dir = tmp_path / "run"
    assert CliRunner().invoke(cli, ["run", str(spec), "--out", str(run_dir)]).exit_code == 0
    result = CliRunner().invoke(cli, ["export", str(run_dir), "--out", "/dev/full"])
    _one_line(result, "output: disk full writing /dev/full (No space left on device)")
