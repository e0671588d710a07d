"""Bad input: a one-line error naming the field, exit status 2, no traceback, store unchanged."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from impactbandits.cli import cli

GOOD = """
name = "good"
seeds = 2
horizons = [10, 20]

[[environments]]
kind = "bernoulli"
means = [0.3, 0.7]

[[policies]]
kind = "ucb1"
"""


def _replace(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


#: (case id, spec text or None to keep GOOD, extra CLI args, field named in the message)
SPEC_CASES = [
    ("unknown-policy", _replace('kind = "ucb1"', 'kind = "ucb2"'), [], "policies[0].kind"),
    (
        "unknown-env",
        _replace('kind = "bernoulli"', 'kind = "bernouli"'),
        [],
        "environments[0].kind",
    ),
    ("negative-horizon", _replace("[10, 20]", "[10, -20]"), [], "horizons[1]"),
    ("zero-horizon", _replace("[10, 20]", "[0]"), [], "horizons[0]"),
    ("horizon-float", _replace("[10, 20]", "[10.5]"), [], "horizons[0]"),
    (
        "horizon-grid-key",
        _replace("[10, 20]", "{start = 1, stop = 9, num = 3, step = 2}"),
        [],
        "horizons.step",
    ),
    (
        "horizon-grid-spacing",
        _replace("[10, 20]", '{start = 1, stop = 9, num = 3, spacing = "x"}'),
        [],
        "horizons.spacing",
    ),
    ("seeds-type", _replace("seeds = 2", 'seeds = "many"'), [], "seeds"),
    ("seeds-zero", _replace("seeds = 2", "seeds = 0"), [], "seeds"),
    ("missing-horizons", _replace("horizons = [10, 20]", ""), [], "horizons"),
    (
        "missing-environments",
        GOOD.split("[[environments]]")[0] + '[[policies]]\nkind = "ucb1"\n',
        [],
        "environments",
    ),
    ("unknown-top-key", _replace("seeds = 2", "seeds = 2\nsneeds = 3"), [], "sneeds"),
    (
        "unknown-param",
        _replace("means = [0.3, 0.7]", "meanz = [0.3, 0.7]"),
        [],
        "environments[0].meanz",
    ),
    ("probability-above-1", _replace("[0.3, 0.7]", "[0.3, 1.7]"), [], "environments[0].means[1]"),
    ("probability-negative", _replace("[0.3, 0.7]", "[-0.3, 0.7]"), [], "environments[0].means[0]"),
    ("means-wrong-type", _replace("[0.3, 0.7]", '"high"'), [], "environments[0].means"),
    (
        "policy-param-type",
        _replace('kind = "ucb1"', 'kind = "exp3"\ngamma = "big"'),
        [],
        "policies[0].gamma",
    ),
    ("etc-m-zero", _replace('kind = "ucb1"', 'kind = "etc"\nm = 0'), [], "policies[0].m"),
    (
        "gaussian-sigma",
        _replace(
            'kind = "bernoulli"\nmeans = [0.3, 0.7]', 'kind = "gaussian"\nmeans = [0.3]\nsigma = -1'
        ),
        [],
        "environments[0].sigma",
    ),
    (
        "gaussian-both",
        _replace(
            'kind = "bernoulli"\nmeans = [0.3, 0.7]', 'kind = "gaussian"\nmeans = [0.3]\nn_arms = 2'
        ),
        [],
        "environments[0].means",
    ),
    ("duplicate-label", GOOD + '\n[[policies]]\nkind = "ucb1"\n', [], "policies"),
    (
        "oracle-unknown",
        _replace("means = [0.3, 0.7]", 'means = [0.3, 0.7]\noracle = "magic"'),
        [],
        "environments[0].oracle",
    ),
    ("bad-name", _replace('name = "good"', 'name = "has space"'), [], "name"),
    ("invalid-toml", "name = ", [], "spec"),
    ("backend", None, ["--backend", "gpu"], "backend"),
    ("workers-zero", None, ["--workers", "0"], "workers"),
    ("workers-text", None, ["--workers", "two"], "workers"),
    ("seeds-option", None, ["--seeds", "-3"], "seeds"),
    ("scheduler-without-dask", None, ["--scheduler", "tcp://x:1"], "scheduler"),
]


def _digest(run_dir: Path) -> str:
    """Content digest of a store (every table, every row)."""
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        dump = "\n".join(db.iterdump())
    return hashlib.sha256(dump.encode()).hexdigest()


@pytest.fixture(scope="module")
def existing_run(tmp_path_factory):
    """A finished run whose store must survive every bad command untouched."""
    base = tmp_path_factory.mktemp("store")
    spec = base / "good.toml"
    spec.write_text(GOOD)
    result = CliRunner().invoke(
        cli, ["run", str(spec), "--backend", "serial", "--no-report", "--out", str(base / "run")]
    )
    assert result.exit_code == 0, result.output
    return base / "run"


def _check_one_line_error(result, field: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    message = result.stderr.strip()
    assert "\n" not in message, message
    assert message.startswith("error: "), message
    assert field in message, f"{field!r} not named in {message!r}"
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("case", "text", "args", "field"), SPEC_CASES, ids=[c[0] for c in SPEC_CASES]
)
def test_bad_spec_or_option(tmp_path, existing_run, case, text, args, field):
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD if text is None else text)
    before = _digest(existing_run)
    result = CliRunner().invoke(
        cli, ["run", str(spec), "--backend", "serial", *args, "--out", str(existing_run)]
    )
    _check_one_line_error(result, field)
    assert _digest(existing_run) == before


def test_store_path_is_a_file(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD)
    target = tmp_path / "a-file"
    target.write_text("keep me")
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(target)])
    _check_one_line_error(result, "output")
    assert target.read_text() == "keep me"


def test_store_of_another_experiment_is_refused(tmp_path, existing_run):
    spec = tmp_path / "other.toml"
    spec.write_text(_replace("[10, 20]", "[10, 30]"))
    before = _digest(existing_run)
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(existing_run)])
    _check_one_line_error(result, "output")
    assert _digest(existing_run) == before


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["export", "{run}", "--format", "xml"], "format"),
        (["export", "{tmp}"], "run_dir"),
        (["report", "{tmp}"], "run_dir"),
        (["reproduce", "no-such-figure"], "name"),
        (["list", "widgets"], "what"),
        (["run", "{tmp}/missing.toml"], "spec"),
    ],
)
def test_other_commands(tmp_path, existing_run, args, field):
    args = [a.format(run=existing_run, tmp=tmp_path) for a in args]
    before = _digest(existing_run)
    result = CliRunner().invoke(cli, args)
    _check_one_line_error(result, field)
    assert _digest(existing_run) == before


def test_real_process_exit_status_and_no_traceback(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text(_replace("[0.3, 0.7]", "[0.3, 1.7]"))
    proc = subprocess.run(
        [sys.executable, "-m", "impactbandits", "run", str(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "environments[0].means[1]" in proc.stderr and "Traceback" not in proc.stderr


def test_unreachable_dask_scheduler(tmp_path, existing_run):
    spec = tmp_path / "spec.toml"
    spec.write_text(GOOD)
    before = _digest(existing_run)
    result = CliRunner().invoke(
        cli,
        [
            "run",
            str(spec),
            "--backend",
            "dask",
            "--scheduler",
            "tcp://127.0.0.1:9",
            "--out",
            str(existing_run),
        ],
    )
    _check_one_line_error(result, "scheduler")
    assert _digest(existing_run) == before
