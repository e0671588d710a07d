"""No silent failure (issue 12): invalid actions in any round, bad values lax parsing would
accept, and code named by a spec that fails (at import, construction or run time) give one
line naming the spec field, the ``module:attr`` and the exception; exit 2; nothing runs that
should not. Every case here failed differently before (exit 0 with corrupt results, a
traceback with exit 1, an empty field name, or a class executed during validation)."""

from __future__ import annotations

import pickle
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from impactbandits import ExperimentSpec, run_experiment
from impactbandits.cli import cli
from impactbandits.errors import SpecError
from impactbandits.experiments.cells import expand
from impactbandits.usercode import InternalError, UserCodeError

USER_MODULE = '''
import numpy as np
from impactbandits.core.environment import Outcome, SimpleEnvironment
from impactbandits.core.feedback import Feedback
from impactbandits.core.policy import Policy, SimplePolicy
from impactbandits.core.spaces import Discrete


class LateInvalid(Policy):
    """Valid arms, except replication 1 plays arm -1 in round 5."""

    def __init__(self) -> None:
        pass

    def reset(self, space, horizon, rng):
        self.t, self.reps = 0, rng.size

    def select(self):
        self.t += 1
        actions = np.zeros(self.reps, dtype=np.int64)
        if self.t == 5 and self.reps > 1:
            actions[1] = -1
        return actions

    def update(self, actions, feedback):
        pass


class RaisesInSelect(SimplePolicy):
    def __init__(self) -> None:
        pass

    def reset(self, space, horizon, rng):
        self.t = 0

    def select(self):
        self.t += 1
        if self.t == 7:
            return 1 // 0
        return 0

    def update(self, action, feedback):
        pass


class RaisesInStep(SimpleEnvironment):
    def __init__(self) -> None:
        pass

    @property
    def action_space(self):
        return Discrete(2)

    def reset(self, rng):
        self.t = 0

    def step(self, action):
        self.t += 1
        if self.t == 3:
            raise KeyError("no such state")
        return 0.5, 0.5

    def expected_rewards(self):
        return np.array([0.5, 0.5])


def bad_curve(n):
    raise ValueError("curve cannot be evaluated")


def bad_fairness(mu):
    return mu + undefined_name  # noqa: F821


class BadImpact:
    """Has an impact function's methods (so it is built), but its constructor raises."""

    def __init__(self, **params):
        raise RuntimeError("impact set-up failed")

    def initial(self, replications, groups):
        return None

    def advance(self, state, actions):
        return state, actions

    def limit(self, shares):
        return shares


def bad_oracle(env, times):
    raise ArithmeticError("oracle failed")
'''


@pytest.fixture
def user_code(tmp_path, monkeypatch):
    """``usermod`` (the components above), ``boom_at_import`` and ``broken_syntax`` importable
    here and in worker processes; returns the directory."""
    (tmp_path / "usermod.py").write_text(USER_MODULE)
    (tmp_path / "boom_at_import.py").write_text("raise RuntimeError('import boom')\n")
    (tmp_path / "broken_syntax.py").write_text("def f(:\n    pass\n")
    (tmp_path / "marker.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path


def _spec(policy: dict, env: dict | None = None, **fields) -> ExperimentSpec:
    return ExperimentSpec.create(
        name="user",
        seeds=fields.pop("seeds", 2),
        horizons=fields.pop("horizons", [20]),
        environments=[env or {"kind": "bernoulli", "means": [0.3, 0.7]}],
        policies=[policy],
        **fields,
    )


def _one_line(result, field: str, *needles: str, code: int = 2) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    message = lines[-1]  # earlier lines are progress ("N cells x S seeds: ...")
    assert [line for line in lines if line.startswith("error")] == [message], lines
    assert message.startswith(f"error: {field}"), message
    for needle in needles:
        assert needle in message, f"{needle!r} not in {message!r}"
    assert "Traceback" not in result.output
    return message


def _toml(path: Path, policy_kind: str, extra_env: str = "") -> Path:
    path.write_text(
        textwrap.dedent(
            f"""
            name = "user"
            seeds = 2
            horizons = [20]
            [[environments]]
            kind = "bernoulli"
            means = [0.3, 0.7]
            {extra_env}
            [[policies]]
            kind = "{policy_kind}"
            """
        )
    )
    return path


# -- actions -----------------------------------------------------------------------------------


def test_an_invalid_action_in_a_later_round_of_one_replication_is_refused(user_code, tmp_path):
    # before: validated in round 1 only, so this exited 0 with pulls counted on the wrong row
    spec = _spec({"kind": "usermod:LateInvalid"})
    with pytest.raises(SpecError) as info:
        run_experiment(spec, tmp_path / "run", backend="serial", batch_size=2)
    message = str(info.value)
    assert message.startswith("policies[0].kind: usermod:LateInvalid returned an invalid action")
    assert "replication 1, round 5" in message and "got -1" in message
    assert not (tmp_path / "run").exists()  # a fresh run that stored nothing leaves no trace


def test_results_stored_before_a_failing_cell_are_kept(user_code, tmp_path, monkeypatch):
    # readable loops only: the scheduler runs the costliest tasks first and rates a compiled
    # cell cheaper than a readable one, so with ucb1 compiled the failing cell would run first
    monkeypatch.setenv("IMPACTBANDITS_KERNELS", "0")
    good = {"kind": "ucb1"}
    spec = _spec(good)
    run_experiment(spec, tmp_path / "run", backend="serial")
    with sqlite3.connect(tmp_path / "run" / "results.sqlite") as db:
        before = db.execute("SELECT cell, seed, payload FROM results ORDER BY 1, 2").fetchall()
    # the same experiment cannot change its policy, so make the failing cell part of a new one
    both = ExperimentSpec.create(**{**spec.to_dict(), "policies": [good, {
        "kind": "usermod:LateInvalid"}], "output": None})  # fmt: skip
    with pytest.raises(SpecError, match=r"^policies\[1\]\.kind: usermod:LateInvalid"):
        run_experiment(both, tmp_path / "both", backend="serial", batch_size=2)
    with sqlite3.connect(tmp_path / "both" / "results.sqlite") as db:
        kept = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert kept == 2  # the good cell's two seeds (run first), nothing of the failing cell
    with sqlite3.connect(tmp_path / "run" / "results.sqlite") as db:
        after = db.execute("SELECT cell, seed, payload FROM results ORDER BY 1, 2").fetchall()
    assert after == before


def test_the_fast_action_check_agrees_with_the_full_validation():
    from impactbandits.core.spaces import Discrete

    space = Discrete(4)
    rng = np.random.default_rng(3)
    for _ in range(500):
        actions = rng.integers(-3, 7, size=5)
        for candidate in (actions, actions.astype(np.int32), actions.astype(float)):
            outcomes = []
            for check in (space.check, space.validate):
                try:
                    outcomes.append(("ok", check(candidate, 5).tolist()))
                except SpecError:
                    outcomes.append(("error", None))
            assert outcomes[0] == outcomes[1], (candidate, outcomes)
    with pytest.raises(SpecError):
        space.check(np.zeros(4, dtype=np.int64), 5)  # wrong batch size


# -- values that lax parsing accepted ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"seeds": True}, "seeds"),
        ({"checkpoints": True}, "checkpoints"),
        ({"environments": [{"kind": "bernoulli", "means": [True, 0.5]}]}, "environments[0].means"),
        ({"policies": [{"kind": "etc", "m": True}]}, "policies[0].m"),
    ],
)
def test_a_boolean_where_a_number_is_expected_is_refused(fields, field):
    # before: `seeds = true` ran one replication; `means = [true, 0.5]` ran with mean 1.0
    data = {
        "name": "b",
        "horizons": [10],
        "environments": [{"kind": "bernoulli", "means": [0.3, 0.7]}],
        "policies": [{"kind": "ucb1"}],
        **fields,
    }
    with pytest.raises(SpecError) as info:
        ExperimentSpec.create(**data)
    assert str(info.value).startswith(f"{field}: "), str(info.value)


def test_a_boolean_parameter_is_still_a_boolean():
    from impactbandits.registry import validate_params

    class Flagged:
        def __init__(self, flag: bool = False, weights: list[float] | None = None) -> None:
            self.flag = flag

    assert validate_params(Flagged, {"flag": True}, "x")["flag"] is True
    with pytest.raises(SpecError, match=r"x\.weights: a boolean is not allowed"):
        validate_params(Flagged, {"weights": [1.0, False]}, "x")


@pytest.mark.parametrize(
    ("env", "field"),
    [
        # before: IndexError traceback
        (
            {"kind": "impact", "family": "linear", "intercept": [float("nan"), 0.2],
             "slope": [0.1, 0.1], "resolution": 4},
            "environments[0].intercept[0]",
        ),
        # before: TypeError traceback (NaN hidden in an untyped table)
        (
            {"kind": "impact", "high": [0.5, 0.6], "low": [0.1, 0.2], "impact": "smoothed",
             "impact_params": {"power": float("nan")}, "resolution": 4},
            "environments[0].impact_params.power",
        ),
    ],
)  # fmt: skip
def test_nan_parameters_are_refused_with_their_field(env, field):
    with pytest.raises(SpecError) as info:
        _spec({"kind": "ucb1"}, env)
    assert str(info.value).startswith(f"{field}: must be a finite number")


# -- naming code: import, kind, construction ---------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "needles"),
    [
        ("boom_at_import:X", ["importing 'boom_at_import:X' raised RuntimeError: import boom"]),
        ("broken_syntax:X", ["importing 'broken_syntax:X' raised SyntaxError"]),
        ("math:pi", ["'math:pi' names Python's standard library", "nothing was imported"]),
        ("numpy:pi", ["'numpy:pi' is a float value, not a Policy or SimplePolicy class"]),
        (":X", ["':X' is not an import path"]),
        ("marker:Missing", ["cannot import 'marker:Missing' (no 'Missing' in module marker)"]),
    ],
)
def test_naming_bad_code_is_one_line(user_code, tmp_path, kind, needles):
    # before: tracebacks with exit 1 (import error, syntax error, math:pi), or "error: : ..."
    spec = _toml(tmp_path / "spec.toml", kind)
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    _one_line(result, "policies[0].kind", *needles)
    assert not (tmp_path / "run").exists()


def test_a_class_of_the_wrong_kind_is_never_called(user_code, tmp_path):
    # before: subprocess.Popen(args=[...]) ran during validation (and created the file)
    target = tmp_path / "created-by-popen"
    spec = _toml(tmp_path / "spec.toml", "subprocess:Popen")
    text = spec.read_text().replace(
        'kind = "subprocess:Popen"', f'kind = "subprocess:Popen"\nargs = ["touch", "{target}"]'
    )
    spec.write_text(text)
    result = CliRunner().invoke(cli, ["run", str(spec), "--out", str(tmp_path / "run")])
    _one_line(result, "policies[0].kind", "'subprocess:Popen' names Python's standard library")
    assert not target.exists()


@pytest.mark.parametrize(
    ("env", "field", "needle"),
    [
        (
            {"kind": "rested", "curves": ["usermod:bad_curve", [0.5] * 30]},
            "environments[0].curves[0]",
            "usermod:bad_curve raised ValueError: curve cannot be evaluated (in bad_curve, ",
        ),
        (
            {"kind": "opportunity", "means": [0.3, 0.7], "fairness": "usermod:bad_fairness"},
            "environments[0].fairness",
            "usermod:bad_fairness raised NameError: name 'undefined_name' is not defined",
        ),
        (
            {"kind": "impact", "high": [0.5, 0.6], "low": [0.1, 0.2],
             "impact": "usermod:BadImpact", "resolution": 4},
            "environments[0].impact",
            "usermod:BadImpact raised RuntimeError: impact set-up failed (in BadImpact.__init__",
        ),
        (
            {"kind": "opportunity", "means": [0.3, 0.7], "fairness": ":c"},
            "environments[0].fairness",  # before: "error: : Empty module name"
            "':c' is not an import path",
        ),
    ],
)  # fmt: skip
def test_user_functions_that_raise_name_their_field(user_code, env, field, needle):
    # before: tracebacks (curve, fairness, impact) or an empty field name
    with pytest.raises(SpecError) as info:
        _spec({"kind": "ucb1"}, env)
    message = str(info.value)
    assert message.startswith(f"{field}: ") and needle in message, message
    assert "\n" not in message


def test_a_directory_as_the_spec_path(tmp_path):
    # before: "spec: no such file: DIR"
    result = CliRunner().invoke(cli, ["run", str(tmp_path)])
    _one_line(result, "spec", "is a directory; give the path of a TOML file")


def test_setup_errors_come_before_the_store_is_created(tmp_path):
    # before: the 1/ε divisibility error came from a worker, after an empty store was created
    spec = _spec(
        {"kind": "hd-ucb", "resolution": 3},
        {"kind": "impact", "high": [0.5, 0.6], "low": [0.1, 0.2], "resolution": 4},
    )
    with pytest.raises(SpecError, match=r"^policies\[0\]\.resolution: 1/ε = 3 does not divide"):
        expand(spec)
    with pytest.raises(SpecError):
        run_experiment(spec, tmp_path / "run", backend="serial")
    assert not (tmp_path / "run").exists()


# -- code failing during the run ---------------------------------------------------------------


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_a_user_policy_raising_mid_run(user_code, tmp_path, backend):
    # before: a traceback (from the worker process for the default backend), exit 1
    spec = _toml(tmp_path / "spec.toml", "usermod:RaisesInSelect")
    args = ["run", str(spec), "--out", str(tmp_path / "run"), "--backend", backend]
    result = CliRunner().invoke(cli, [*args, "--workers", "1"] if backend == "process" else args)
    _one_line(
        result,
        "policies[0].kind",
        "usermod:RaisesInSelect raised ZeroDivisionError: integer division or modulo by zero",
        "(in RaisesInSelect.select, usermod.py:",
    )
    traced = CliRunner().invoke(cli, [*args, "--traceback"])
    assert traced.exit_code == 2
    assert "Traceback" in traced.stderr and "usermod.py" in traced.stderr
    assert traced.stderr.strip().splitlines()[-1].startswith("error: policies[0].kind: ")


USER_BASE = """
from impactbandits.core.policy import SimplePolicy


class Base(SimplePolicy):
    def __init__(self, fail_at: int = 4) -> None:
        self.fail_at = fail_at

    def reset(self, space, horizon, rng):
        self.t = 0

    def select(self):
        self.t += 1
        if self.t == self.fail_at:
            return [][self.t]  # IndexError, in this module, not the one the spec names
        return 0

    def update(self, action, feedback):
        pass
"""


@pytest.mark.parametrize("backend", ["serial", "process"])
def test_a_failing_method_inherited_from_another_user_module(tmp_path, monkeypatch, backend):
    # before: "internal error ... (a bug: please report it ...)", exit 1 — the spec names
    # userpolicy:Mine, the failing select lives in userbase (another of the user's modules)
    (tmp_path / "userbase.py").write_text(USER_BASE)
    (tmp_path / "userpolicy.py").write_text(
        "from userbase import Base\n\nclass Mine(Base):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    spec = _toml(tmp_path / "spec.toml", "userpolicy:Mine")
    args = ["run", str(spec), "--out", str(tmp_path / "run"), "--backend", backend]
    result = CliRunner().invoke(cli, [*args, "--workers", "1"] if backend == "process" else args)
    _one_line(
        result,
        "policies[0].kind",
        "userpolicy:Mine raised IndexError: list index out of range",
        "(in Base.select, userbase.py:",
    )


def test_a_user_environment_and_oracle_raising_mid_run(user_code, tmp_path):
    spec = _spec({"kind": "ucb1"}, {"kind": "usermod:RaisesInStep", "oracle": "none"})
    with pytest.raises(UserCodeError, match=r"^environments\[0\]\.kind: usermod:RaisesInStep "):
        run_experiment(spec, tmp_path / "a", backend="serial")
    spec = _spec({"kind": "ucb1"}, {"kind": "bernoulli", "means": [0.3, 0.7],
                                    "oracle": "usermod:bad_oracle"})  # fmt: skip
    with pytest.raises(UserCodeError) as info:
        run_experiment(spec, tmp_path / "b", backend="serial")
    assert str(info.value).startswith(
        "environments[0].oracle: usermod:bad_oracle raised ArithmeticError: oracle failed"
    )


def test_errors_cross_process_boundaries_intact():
    error = UserCodeError("policies[1].kind", "m:P raised KeyError: 'x'", "Traceback ...")
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.field, copy.message, copy.details, str(copy)) == (
        error.field,
        error.message,
        error.details,
        str(error),
    )
    spec_error = pickle.loads(pickle.dumps(SpecError("seeds", "must be positive")))
    assert str(spec_error) == "seeds: must be positive" and spec_error.field == "seeds"
    internal = pickle.loads(pickle.dumps(InternalError("internal error x", "trace")))
    assert (str(internal), internal.details) == ("internal error x", "trace")


def test_a_library_bug_is_one_line_with_exit_1(tmp_path, monkeypatch):
    import impactbandits.policies.classic as classic

    def broken(self):
        raise IndexError("simulated bug")

    monkeypatch.setattr(classic.UCB1, "select", broken)
    monkeypatch.setenv("IMPACTBANDITS_KERNELS", "0")  # the readable loop calls select()
    spec = _toml(tmp_path / "spec.toml", "ucb1")
    result = CliRunner().invoke(
        cli, ["run", str(spec), "--backend", "serial", "--out", str(tmp_path / "r")]
    )
    message = _one_line(
        result,
        "internal error in environments[0] (bernoulli) x policies[0] (ucb1)",
        "IndexError: simulated bug",
        code=1,
    )
    assert "--traceback" in message


# -- contract checks ---------------------------------------------------------------------------


def test_contract_checks_fail_under_python_optimisations(tmp_path):
    # before: `assert` statements, stripped by `python -O`: a broken policy passed
    script = tmp_path / "check.py"
    script.write_text(
        textwrap.dedent(
            """
            import numpy as np
            from impactbandits.core.policy import SimplePolicy
            from impactbandits.testing import ContractError, check_policy

            class UsesGlobalRandom(SimplePolicy):
                def reset(self, space, horizon, rng):
                    self.n = space.n
                def select(self):
                    return int(np.random.randint(self.n))
                def update(self, action, feedback):
                    pass

            try:
                check_policy(UsesGlobalRandom)
            except ContractError as exc:
                print("refused:", exc)
            else:
                print("accepted")
            """
        )
    )
    out = subprocess.run(
        [sys.executable, "-O", str(script)], capture_output=True, text=True, check=True
    )
    # (check_policy prints a line per check passed before the one that refuses)
    assert out.stdout.splitlines()[-1].startswith("refused:"), out.stdout + out.stderr
    assert "accepted" not in out.stdout


def test_a_store_killed_before_its_schema_was_written_is_started_afresh(tmp_path):
    # before: "run_dir: '.../results.sqlite' is not a results store (no such table: meta)"
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.sqlite").touch()
    summary = run_experiment(_spec({"kind": "ucb1"}), tmp_path / "run", backend="serial")
    assert summary.computed == 2
