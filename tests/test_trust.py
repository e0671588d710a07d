"""A run directory is data, never code (issue 25).

Reading a run directory — ``export``, ``report``, ``tidy_table`` and the other Python readers —
imports and calls nothing its stored spec names, even a crafted one. A spec (code you run) may
name code, but every ``module:attr`` field is checked to be of the expected kind before anything
is called: ``subprocess:Popen``, ``os:system``, ``builtins:eval`` and ``this:Zen`` are refused
in every field without running. ``python -m impactbandits`` does not import from the current
directory.

Every crafted name below did something on the code before this issue: ``subprocess:Popen`` as
the impact function created the marker file on ``export``/``report`` (it was built with
``impact_params`` before its methods were checked), ``this:Zen`` printed the Zen of Python, a
local ``evilmod.py`` ran under ``python -m``, and ``export`` of a run that used a user's policy
failed with "cannot import" when the module was not importable.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path

import pytest

from impactbandits import ExperimentSpec, run_experiment
from impactbandits.errors import SpecError, StoreError
from impactbandits.experiments.figures import load_run
from impactbandits.experiments.spec import SpecRecord
from impactbandits.experiments.store import STORE_FILE, Store
from impactbandits.experiments.store_facts import meta_checksum
from impactbandits.experiments.tidy import seed_coverage, tidy_table

PYTHON = sys.executable
ROOT = Path(__file__).resolve().parent.parent

#: A module a crafted store names: importing it leaves a marker file (and prints a line).
EVIL_MODULE = """
import pathlib, sys
pathlib.Path({marker!r}).touch()
sys.stdout.write("EVIL MODULE RAN\\n")
"""

#: A user's policy: importable while the run happens, gone when the results are read.
USER_POLICY = """
from impactbandits import SimplePolicy


class Cycle(SimplePolicy):
    def __init__(self, step: int = 1) -> None:
        self.step = step

    def reset(self, space, horizon, rng):
        self.k, self.t = space.n, 0

    def select(self):
        self.t += 1
        return (self.t * self.step) % self.k

    def update(self, action, feedback):
        pass
"""


def _cli(*args: str, cwd: Path, module: bool = False, env: dict | None = None):
    """The command line as a user runs it: the console script, or ``python -m`` (which puts
    ``cwd`` on ``sys.path``)."""
    command = (
        [PYTHON, "-m", "impactbandits", *args]
        if module
        else [str(Path(PYTHON).parent / "impactbandits"), *args]
    )
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    environment.update(env or {})
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=environment)


@pytest.fixture(scope="module")
def user_run(tmp_path_factory) -> Path:
    """A finished run of a user's policy (``ucmod:Cycle``) beside ``ucb1``; the module lives in
    a directory that is on ``PYTHONPATH`` only while running."""
    base = tmp_path_factory.mktemp("user-run")
    code = base / "code"
    code.mkdir()
    (code / "ucmod.py").write_text(USER_POLICY)
    spec = base / "spec.toml"
    spec.write_text(
        textwrap.dedent(
            """
            name = "user-run"
            seeds = 3
            horizons = [30, 60]
            [[environments]]
            kind = "bernoulli"
            label = "two arms"
            means = [0.3, 0.7]
            [[policies]]
            kind = "ucmod:Cycle"
            label = "cycle"
            [[policies]]
            kind = "ucb1"
            """
        )
    )
    run = _cli(
        "run", str(spec), "--out", str(base / "run"), "--backend", "serial", "--no-report",
        cwd=base, env={"PYTHONPATH": str(code)},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    return base / "run"


def _crafted(source: Path, target: Path, marker: Path) -> Path:
    """A copy of ``source`` whose stored spec names code in every field that can: the impact
    function ``subprocess:Popen`` with ``impact_params`` that would create ``marker``, policy
    kinds ``subprocess:Popen``, ``this:Zen`` and the local ``evilmod:P``, a curve and a
    fairness function ``os:system`` and ``builtins:eval``, an oracle ``subprocess:getoutput``.
    The results and cells are untouched (they are what a reader shows)."""
    target.mkdir()
    (target / STORE_FILE).write_bytes((source / STORE_FILE).read_bytes())
    (target / "evilmod.py").write_text(EVIL_MODULE.format(marker=str(marker)))
    with closing(sqlite3.connect(target / STORE_FILE)) as db:
        spec = json.loads(db.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()[0])
        popen = {"args": f"touch {marker}", "shell": True}
        spec["environments"][0].update(
            kind="impact",
            oracle="subprocess:getoutput",
            params={"impact": "subprocess:Popen", "impact_params": popen, "high": [0.5]},
        )
        spec["environments"].append(
            {
                "kind": "rested", "label": "curves", "oracle": None, "environments": None,
                "params": {"curves": ["os:system", "builtins:eval"], "fairness": "os:system"},
            }
        )  # fmt: skip
        spec["policies"][0].update(kind="evilmod:P", params=popen)
        spec["policies"][1].update(kind="subprocess:Popen", params=popen)
        spec["policies"].append(
            {"kind": "this:Zen", "label": "zen", "params": {}, "oracle": None,
             "environments": None}
        )  # fmt: skip
        crafted = json.dumps(spec)  # with its checksum, as a crafted store would have it
        db.execute(
            "UPDATE meta SET value = ?, crc = ? WHERE key = 'spec'",
            (crafted, meta_checksum("spec", crafted)),
        )
        db.commit()
    return target


@pytest.fixture
def crafted(user_run, tmp_path) -> tuple[Path, Path]:
    marker = tmp_path / "PWNED"
    return _crafted(user_run, tmp_path / "downloaded", marker), marker


def _nothing_ran(result, marker: Path) -> None:
    assert not marker.exists(), "code named by the stored spec ran"
    assert "EVIL MODULE RAN" not in result.stdout
    assert "Beautiful is better than ugly" not in result.stdout + result.stderr


@pytest.mark.parametrize("module", [False, True], ids=["console-script", "python-m"])
def test_export_of_a_crafted_store_runs_nothing(crafted, user_run, module):
    run_dir, marker = crafted
    result = _cli("export", ".", "--out", "table.csv", cwd=run_dir, module=module)
    _nothing_ran(result, marker)
    assert result.returncode == 0, result.stderr
    exported = (run_dir / "table.csv").read_text()
    reference = _cli("export", str(user_run), "--out", str(run_dir / "ref.csv"), cwd=run_dir)
    assert reference.returncode == 0, reference.stderr
    assert exported == (run_dir / "ref.csv").read_text()  # the full table, as stored


@pytest.mark.parametrize("module", [False, True], ids=["console-script", "python-m"])
def test_report_of_a_crafted_store_runs_nothing(crafted, module):
    run_dir, marker = crafted
    result = _cli("report", ".", cwd=run_dir, module=module)
    _nothing_ran(result, marker)
    assert result.returncode == 0, result.stderr
    page = (run_dir / "report.html").read_text()
    assert "subprocess:Popen" in page  # the stored spec is shown, as text
    assert "cycle" in page and "ucb1" in page


def test_python_readers_of_a_crafted_store_import_nothing(crafted, monkeypatch):
    run_dir, marker = crafted
    monkeypatch.chdir(run_dir)  # evilmod.py sits in the current directory...
    monkeypatch.syspath_prepend(str(run_dir))  # ...and on the path, as in a notebook there
    before = set(sys.modules)
    with Store.open_existing(run_dir) as store:
        record = store.spec()
    table = tidy_table(run_dir)
    coverage = seed_coverage(run_dir)
    spec, trajectories = load_run(run_dir, trajectories=True)
    assert not marker.exists()
    assert not {"this", "evilmod"} & (set(sys.modules) - before)
    assert isinstance(record, SpecRecord) and not isinstance(record, ExperimentSpec)
    assert record.environments[0].params["impact"] == "subprocess:Popen"  # data, as stored
    assert len(table) == 3 * 2 * 2  # seeds × policies × horizons (both anytime)
    assert coverage.stored == 3 and len(trajectories) > len(table)
    assert spec == record


def test_export_of_a_user_policy_run_needs_no_import(user_run, tmp_path):
    # before: "error: policies[0].kind: cannot import 'ucmod:Cycle' (ModuleNotFoundError ...)"
    result = _cli("export", str(user_run), "--out", str(tmp_path / "t.csv"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "t.csv").read_text()
    assert "cycle" in text and "ucb1" in text
    result = _cli("report", str(user_run), cwd=tmp_path)
    assert result.returncode == 0, result.stderr


def test_a_malformed_stored_spec_is_one_line(user_run, tmp_path):
    run_dir = tmp_path / "bad"
    run_dir.mkdir()
    (run_dir / STORE_FILE).write_bytes((user_run / STORE_FILE).read_bytes())
    with closing(sqlite3.connect(run_dir / STORE_FILE)) as db:
        malformed = '{"name": 3}'  # with its checksum: not damaged, malformed as written
        db.execute(
            "UPDATE meta SET value = ?, crc = ? WHERE key = 'spec'",
            (malformed, meta_checksum("spec", malformed)),
        )
        db.commit()
    with pytest.raises(StoreError) as info:
        tidy_table(run_dir)
    assert "experiment spec stored in" in str(info.value) and "\n" not in str(info.value)
    result = _cli("export", str(run_dir), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("error: run_dir: the experiment spec stored in ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_spec_record_is_not_run(user_run, tmp_path):
    with Store.open_existing(user_run) as store:
        record = store.spec()
    with pytest.raises(SpecError, match=r"^spec: a spec read from a run directory is data"):
        run_experiment(record, tmp_path / "again", backend="serial")
    assert not (tmp_path / "again").exists()


# -- specs: every field that names code is checked before anything is called --------------------

_DANGEROUS = ["subprocess:Popen", "os:system", "builtins:eval", "this:Zen", "shutil:rmtree"]

#: (field named in the error, how to put a name into a spec) for every field naming code.
_FIELDS = {
    "policies[0].kind": lambda n: ({"kind": "bernoulli", "means": [0.3, 0.7]}, {"kind": n}),
    "environments[0].kind": lambda n: ({"kind": n}, {"kind": "ucb1"}),
    "environments[0].oracle": lambda n: (
        {"kind": "bernoulli", "means": [0.3, 0.7], "oracle": n}, {"kind": "ucb1"}
    ),
    "environments[0].curves[1]": lambda n: (
        {"kind": "rested", "curves": [[0.5] * 30, n], "length": 30}, {"kind": "ucb1"}
    ),
    "environments[0].fairness": lambda n: (
        {"kind": "opportunity", "means": [0.3, 0.7], "fairness": n}, {"kind": "ucb1"}
    ),
    "environments[0].impact": lambda n: (
        {"kind": "impact", "high": [0.5, 0.6], "low": [0.1, 0.2], "resolution": 4,
         "impact": n, "impact_params": {"args": "touch {marker}", "shell": True}},
        {"kind": "ad-ucb"},
    ),
    "policies[0].base": lambda n: (
        {"kind": "impact", "high": [0.5, 0.6], "low": [0.1, 0.2], "resolution": 4},
        {"kind": "one-hot", "base": n},
    ),
    "policies[0].black_box": lambda n: (
        {"kind": "opportunity", "means": [0.3, 0.7]}, {"kind": "srum", "black_box": n}
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", _DANGEROUS)
@pytest.mark.parametrize("field", sorted(_FIELDS))
def test_a_dangerous_name_is_refused_in_every_field(field, name, tmp_path, capfd):
    marker = tmp_path / "PWNED"
    env, policy = _FIELDS[field](name)
    env = json.loads(json.dumps(env).replace("{marker}", str(marker)))
    policy = {**policy, **({"args": f"touch {marker}", "shell": True} if ":" in policy["kind"]
                          else {})}  # fmt: skip
    with pytest.raises(SpecError) as info:
        ExperimentSpec.create(
            name="danger", horizons=[10], seeds=1, environments=[env], policies=[policy]
        )
    message = str(info.value)
    assert message.startswith(f"{field}: '{name}' "), message
    assert "standard library" in message and "nothing was imported" in message
    assert not marker.exists()
    assert "Beautiful is better" not in capfd.readouterr().out


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        ("numpy:pi", "is a float value, not a Policy or SimplePolicy class"),
        ("numpy:save", "is the callable save, not a Policy or SimplePolicy class"),
        ("numpy.random:default_rng", "not a Policy or SimplePolicy class"),
    ],
)
def test_a_third_party_object_of_the_wrong_kind_is_never_called(name, wanted):
    with pytest.raises(SpecError) as info:
        ExperimentSpec.create(
            name="danger", horizons=[10], seeds=1,
            environments=[{"kind": "bernoulli", "means": [0.3, 0.7]}], policies=[{"kind": name}],
        )  # fmt: skip
    assert str(info.value).startswith(f"policies[0].kind: '{name}' ") and wanted in str(info.value)


def test_an_impact_class_without_the_methods_is_not_built(tmp_path, monkeypatch):
    # before: the class was built with impact_params first, its methods checked after
    marker = tmp_path / "built"
    (tmp_path / "impmod.py").write_text(
        f"import pathlib\nclass NotImpact:\n    def __init__(self, **kw):\n"
        f"        pathlib.Path({str(marker)!r}).touch()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    env = {"kind": "impact", "high": [0.5, 0.6], "low": [0.1, 0.2], "resolution": 4,
           "impact": "impmod:NotImpact"}  # fmt: skip
    with pytest.raises(SpecError) as info:
        ExperimentSpec.create(
            name="x", horizons=[10], seeds=1, environments=[env], policies=[{"kind": "ad-ucb"}]
        )
    assert str(info.value) == (
        "environments[0].impact: 'impmod:NotImpact' is the class NotImpact, not an "
        "ImpactFunction class"
    )
    assert not marker.exists()


def test_a_builtin_callable_is_not_a_curve_but_a_numpy_ufunc_is():
    def spec(curve):
        return ExperimentSpec.create(
            name="c", horizons=[10], seeds=1, policies=[{"kind": "ucb1"}],
            environments=[{"kind": "rested", "curves": [[0.5] * 20, curve], "length": 20}],
        )  # fmt: skip

    spec("numpy:sign")  # a ufunc: a vectorised function of the pull count
    with pytest.raises(SpecError, match=r"'numpy:array' is the built-in function array, not a"):
        spec("numpy:array")


# -- python -m ----------------------------------------------------------------------------------


def test_python_m_does_not_import_from_the_current_directory(tmp_path):
    # before: `python -m impactbandits` found modules in the current directory (the console
    # script does not), so a folder one is in could supply the code a spec names
    marker = tmp_path / "RAN"
    (tmp_path / "localmod.py").write_text(
        EVIL_MODULE.format(marker=str(marker))
        + "from impactbandits import SimplePolicy\n"
        + "class P(SimplePolicy):\n"
        + "    def reset(self, space, horizon, rng): pass\n"
        + "    def select(self): return 0\n"
        + "    def update(self, action, feedback): pass\n"
    )
    (tmp_path / "spec.toml").write_text(
        'name = "m"\nseeds = 1\nhorizons = [5]\n[[environments]]\nkind = "bernoulli"\n'
        'means = [0.3, 0.7]\n[[policies]]\nkind = "localmod:P"\n'
    )
    args = ("run", "spec.toml", "--backend", "serial", "--no-report")
    result = _cli(*args, "--out", "a", cwd=tmp_path, module=True)
    assert result.returncode == 2 and not marker.exists()
    assert result.stderr.strip() == (
        "error: policies[0].kind: cannot import 'localmod:P' (ModuleNotFoundError: No module "
        "named 'localmod')"
    )
    # asked for: on PYTHONPATH it is found, with both entry points
    for module in (True, False):
        result = _cli(*args, "--out", f"b{module}", cwd=tmp_path, module=module,
                      env={"PYTHONPATH": str(tmp_path)})  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert marker.exists()
        marker.unlink()
