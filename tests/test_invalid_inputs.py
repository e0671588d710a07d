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


# -- issue 41: bad input that was reported as a library bug, or silently ignored -------------


def test_an_oracle_for_another_kind_of_environment_is_refused(tmp_path):
    # before: exit 1, "internal error in environments[0] (bernoulli) x policies[0] (ucb1):
    # AttributeError: 'BernoulliBandit' object has no attribute 'delays' (a bug: ...)", after
    # the store was made
    spec = tmp_path / "spec.toml"
    spec.write_text(
        _replace("means = [0.3, 0.7]", 'means = [0.3, 0.7]\noracle = "blocking_optimum"')
    )
    result = CliRunner().invoke(
        cli, ["run", str(spec), "--backend", "serial", "--out", str(tmp_path / "run")]
    )
    _check_one_line_error(result, "environments[0].oracle")
    assert "applies to blocking environments" in result.stderr  # what it supports
    assert "best_fixed_arm" in result.stderr  # and what fits this one
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["run", "{spec}", "--no-report"],
        ["reproduce", "demo-stationary", "--quick", "--no-report"],
        ["benchmark", "--quick", "--setting", "stationary"],
        ["export", "{run}"],
    ],
    ids=["run", "reproduce", "benchmark", "export"],
)
def test_an_empty_out_is_refused(tmp_path, existing_run, monkeypatch, command):
    # before: `--out ""` wrote the run into the current directory (export: "'.' is a
    # directory", about a path the user did not give)
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    (tmp_path / "spec.toml").write_text(GOOD)
    args = [a.format(spec=tmp_path / "spec.toml", run=existing_run) for a in command]
    result = CliRunner().invoke(cli, [*args, "--out", ""])
    _check_one_line_error(result, "out: must not be empty")
    assert list(here.iterdir()) == []


#: ``(kind, a valid instance, a parameter of another family, its value, that family)``: the
#: parameters declared ``RequiredWhen`` a family (or an instance) other than the one given, and
#: those the families' docstrings give to one family only. Before: silently ignored.
FOREIGN = [
    ("imab", {"family": "random"}, "asymptotes", [0.5, 0.9], "saturating"),
    ("imab", {"family": "random"}, "saturation", [10, 20], "saturating"),
    (
        "imab",
        {"family": "saturating", "asymptotes": [0.5, 0.9], "saturation": [10, 20]},
        "curves",
        [[0.1, 0.2]],
        "curves",
    ),
    ("imab", {"family": "random"}, "m", 2, "lower-bound"),
    ("imab", {"family": "random"}, "horizon", 50, "lower-bound"),
    ("imab", {"family": "random"}, "ramp", 20, "linear-vs-flat"),
    ("imab", {"family": "lower-bound", "k": 3, "m": 1}, "random_family", "late-bloomer", "random"),
    (
        "impact",
        {"family": "linear", "intercept": [0.5, 0.6], "slope": [0.2, -0.3]},
        "high",
        [0.9, 0.8],
        "police",
    ),
    (
        "impact",
        {"family": "linear", "intercept": [0.5, 0.6], "slope": [0.2, -0.3]},
        "low",
        [0.3, 0.4],
        "police",
    ),
    ("impact", {"high": [0.9, 0.8], "low": [0.3, 0.4]}, "intercept", [0.5, 0.6], "linear"),
    ("impact", {"high": [0.9, 0.8], "low": [0.3, 0.4]}, "slope", [0.2, -0.3], "linear"),
    ("impact", {"high": [0.9, 0.8], "low": [0.3, 0.4]}, "groups", 3, "fico"),
    ("rotting", {"instance": "ten-arms"}, "means", [0.5, 0.1], "custom"),
    ("rotting", {"instance": "ten-arms"}, "mu", 0.5, "two-arms"),
    ("rising", {"instance": "15-arms", "length": 100}, "scale", 100, "random"),
    ("rising", {"instance": "15-arms", "length": 100}, "seed", 3, "random"),
    ("blocking", {"means": [0.9, 0.5], "delays": [1, 3]}, "sigma", 0.5, "gaussian"),
    ("opportunity", {"means": [0.2, 0.5]}, "softmax_c", 2.0, "softmax"),
    ("opportunity", {"means": [0.2, 0.5]}, "concentration", 8.0, "beta"),
]


@pytest.mark.parametrize(
    ("kind", "valid", "param", "value", "family"),
    FOREIGN,
    ids=[f"{kind}.{param}" for kind, _, param, _, _ in FOREIGN],
)
def test_a_parameter_of_another_family_is_refused(kind, valid, param, value, family):
    from impactbandits.errors import SpecError
    from impactbandits.experiments.spec import component_spec

    entry = {"kind": kind, **valid}
    stored = component_spec("environment", entry, "environments[0]")
    # a stored spec writes every default out: read back, it is the same component
    assert component_spec("environment", {"kind": kind, **stored.params}, "x") == stored.model_copy(
        update={"label": stored.label}
    )
    with pytest.raises(SpecError) as caught:
        component_spec("environment", {**entry, param: value}, "environments[0]")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"environments[0].{param}: belongs to "), message
    assert repr(family) in message, message  # the family it belongs to


def test_a_spec_with_three_errors_reports_all_three(tmp_path):
    # before: only the first ("error: environments[0].means[1]: ..."), so the user fixed one
    # problem per run
    spec = tmp_path / "spec.toml"
    text = _replace("[0.3, 0.7]", "[0.3, 1.7]").replace('kind = "ucb1"', 'kind = "ucb2"')
    spec.write_text(text.replace("seeds = 2", "seeds = 0"))
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("error: ") for line in lines), lines
    fields = sorted(line.removeprefix("error: ").partition(":")[0] for line in lines)
    assert fields == ["environments[0].means[1]", "policies[0].kind", "seeds"]
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("args", "spec", "field", "meant", "not_listed"),
    [
        (["reproduce", "lindner-fig11"], None, "name", "'lindner-fig1'", "tang-fig3"),
        (["describe", "spp"], None, "kind", "'spo'", None),
        (["list", "figure"], None, "what", "'figures'", None),
        (
            ["run", "{spec}"],
            ('kind = "ucb1"', 'kind = "ucb2"'),
            "policies[0].kind",
            "'ucb1'",
            "thompson",
        ),
        (
            ["run", "{spec}"],
            ('kind = "bernoulli"', 'kind = "bernouli"'),
            "environments[0].kind",
            "'bernoulli'",
            "rotting",
        ),
        (["run", "{spec}"], ("means =", "meanz ="), "environments[0].meanz", "'means'", None),
        (
            ["run", "{spec}"],
            ('kind = "ucb1"', 'kind = "ucb1"\nvarient = "paper"'),
            "policies[0].varient",
            "'variant'",
            None,
        ),
        (["run", "{spec}"], ("seeds = 2", "sneeds = 2"), "sneeds", "'seeds'", None),
        (["benchmark", "--quick", "--setting", "rotten"], None, "--setting", "'rotting'", None),
    ],
    ids=[
        "figure",
        "describe",
        "list",
        "policy",
        "environment",
        "parameter",
        "policy-param",
        "spec-key",
        "setting",
    ],
)
def test_a_typo_gets_the_close_names(tmp_path, args, spec, field, meant, not_listed):
    # before: every name listed (26 figures, 50 policies), or none (describe, list)
    path = tmp_path / "spec.toml"
    path.write_text(GOOD if spec is None else _replace(*spec))
    args = [a.format(spec=path) for a in args]
    out = ["--out", str(tmp_path / "run")] if args[0] in ("run", "benchmark") else []
    result = CliRunner().invoke(cli, [*args, *out])
    _check_one_line_error(result, field)
    suggested = result.stderr.partition("(did you mean ")[2].partition("?)")[0]
    assert meant in suggested, result.stderr
    if not_listed is not None:  # the close names, not every name
        assert not_listed not in result.stderr


USER_POLICY = "from impactbandits.policies.classic import UCB1\n\n\nclass Mine(UCB1):\n    pass\n"


@pytest.mark.parametrize(
    ("params", "lines"),
    [
        (["zz=1"], ["--param zz: unknown key; allowed: c, variant"]),
        (["cc=1"], ["--param cc: unknown key (did you mean 'c'?)"]),
        (["zz=1", "c=-2"], ["--param zz: unknown key", "--param c: Input should be greater"]),
    ],
    ids=["unknown", "typo", "two"],
)
def test_benchmark_param_is_checked_against_the_policy(tmp_path, monkeypatch, params, lines):
    # before: exit 1, "internal error building the policy: TypeError: UCB1.__init__() got an
    # unexpected keyword argument 'zz' (a bug: please report it ...)"
    (tmp_path / "benchmine.py").write_text(USER_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["benchmark", "--quick", "--setting", "stationary", "--policy", "benchmine:Mine"]
    for pair in params:
        args += ["--param", pair]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    shown = result.stderr.strip().splitlines()
    assert len(shown) == len(lines), shown
    for line, start in zip(shown, lines, strict=True):
        assert line.startswith(f"error: {start}"), shown
    assert not (tmp_path / "run").exists()


def test_public_readers_name_a_wrong_argument(tmp_path):
    # before: tidy_table(123) raised "TypeError: expected str, bytes or os.PathLike object,
    # not int" from pathlib, naming nothing
    from impactbandits.errors import SpecError
    from impactbandits.experiments.aggregates import run_aggregates
    from impactbandits.experiments.entry import run_scores
    from impactbandits.experiments.figures import load_run
    from impactbandits.experiments.report import write_report
    from impactbandits.experiments.tidy import seed_coverage, tidy_table

    for reader in (tidy_table, seed_coverage, run_aggregates, load_run, write_report, run_scores):
        with pytest.raises(TypeError) as caught:
            reader(123)
        assert isinstance(caught.value, SpecError), reader
        assert str(caught.value) == (
            "run_dir: must be the path of a run directory (a str or os.PathLike), got 123 (int)"
        )
    with pytest.raises(TypeError, match=r"^trajectories: must be True or False, got 'yes'"):
        tidy_table(tmp_path, trajectories="yes")
    with pytest.raises(TypeError, match=r"^seeds: must be a positive integer, 'all' or None"):
        tidy_table(tmp_path, seeds=2.5)
