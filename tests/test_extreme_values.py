"""Every numeric parameter of every registered component, at values far outside any sensible
range, and every oracle on every kind of environment: each is accepted and runs, or is refused
with a one-line :class:`~impactbandits.errors.SpecError` that names the parameter (the oracle) —
never an internal error ("a bug: please report it"), a ``MemoryError``, a run that does not
finish, or a message that does not say which parameter is wrong (issue 41, item 3).

The cases run in a child process (:func:`harness`) with its address space capped at 3 GB, so a
size that would exhaust memory fails there as a ``MemoryError`` instead of stopping the machine,
and each case under an alarm, so one that does not finish is reported as such.

Base instances are those of the registered figures' quick specs (one environment per kind and a
policy that runs on it, and one environment per policy), with a few written here for the kinds
no figure uses.
"""

from __future__ import annotations

import json
import math
import resource
import signal
import subprocess
import sys
import tempfile
import typing
import warnings
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: The values every numeric parameter is fed: far too large (10¹⁸, 1e300), negative, zero,
#: NaN, and of the wrong type.
TOO_LARGE: tuple[Any, ...] = (10**18, 1e300)
EXTREMES: tuple[Any, ...] = (*TOO_LARGE, -1, 0, math.nan, "x", [1, 2], {"a": 1})
#: Seconds one case may take (a case that takes longer "does not finish"): validating a spec
#: entry, and a short run (which may compile a loop first).
CASE_SECONDS, RUN_SECONDS = 30, 240
#: Rounds and replications of the short run of every accepted case.
HORIZON, SEEDS = 20, 2

#: Instances for the kinds no registered figure uses, and a policy for each.
EXTRA_ENVIRONMENTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "rested": ({"curves": [[0.1, 0.5, 0.9] * 10, [0.3] * 30]}, {"kind": "ucb1"}),
    "constant": ({"means": [0.2, 0.8], "length": 100}, {"kind": "ucb1"}),
    "decreasing": (
        {"start": [0.9, 0.6], "end": [0.2, 0.1], "rate": [0.01, 0.02], "length": 100},
        {"kind": "ucb1"},
    ),
    "restless": ({"curves": [[0.1, 0.5] * 20, [0.3, 0.3] * 20]}, {"kind": "ucb1"}),
}
EXTRA_POLICIES: dict[str, dict[str, Any]] = {
    "thompson-gaussian": {"kind": "gaussian", "means": [0.2, 0.8], "sigma": 0.1},
    "fa-etc": {"kind": "opportunity", "means": [0.2, 0.5, 0.8], "transfer_cost": 0.4},
    "const-elimination": {"kind": "opportunity", "means": [0.2, 0.5, 0.8], "fairness": "zero"},
    "ranker-low": {"kind": "delayed", "means": [0.9, 0.7, 0.5, 0.3, 0.2, 0.1, 0.05, 0.01]},
}


# -- the child process ---------------------------------------------------------------------------


class _Alarm(BaseException):
    """A case took longer than its time (not an ``Exception``: the library's guards, which
    turn every ``Exception`` into a one-line error, let it through)."""


def _ring(signum: int, frame: Any) -> None:
    raise _Alarm


def _pairs() -> tuple[dict[str, tuple[dict, dict]], dict[str, tuple[dict, dict]]]:
    """``(env kind → (env entry, policy entry), policy kind → (env entry, policy entry))``
    from the figures' quick specs and the extra instances."""
    from impactbandits.experiments.figures import FIGURES, get_figure
    from impactbandits.registry import params_model, resolve

    def entry(role: str, component: Any) -> dict[str, Any]:
        fields = params_model(resolve(role, component.kind, "kind")).model_fields
        # the parameters that differ from their defaults (what a user would write)
        params = {
            k: v for k, v in component.params.items() if k in fields and v != fields[k].default
        }
        out = {"kind": component.kind, **params}
        if role == "environment":
            out["oracle"] = component.oracle or "none"
        return out

    by_env: dict[str, tuple[dict, dict]] = {}
    by_policy: dict[str, tuple[dict, dict]] = {}
    for name in sorted(FIGURES):
        spec = get_figure(name).spec(True, "paper")
        for policy in spec.policies:
            for env in spec.environments:
                if policy.runs_on(env.label):
                    pair = (entry("environment", env), entry("policy", policy))
                    by_env.setdefault(env.kind, pair)
                    by_policy.setdefault(policy.kind, pair)
    for kind, (params, policy) in EXTRA_ENVIRONMENTS.items():
        by_env.setdefault(kind, ({"kind": kind, **params}, policy))
    for kind, env in EXTRA_POLICIES.items():
        by_policy.setdefault(kind, (env, {"kind": kind}))
    return by_env, by_policy


def _admits_number(annotation: Any) -> bool:
    if annotation is bool:
        return False
    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) is typing.Literal:
        return False
    return any(
        _admits_number(a)
        for a in typing.get_args(annotation)
        if isinstance(a, type) or typing.get_origin(a) is not None
    )


def _with(entry: dict[str, Any], param: str, value: Any) -> dict[str, Any]:
    """``entry`` with ``param`` set to ``value``: in place of a list's first number (of its
    first row, for a table), or of the parameter itself."""
    out = dict(entry)
    current = out.get(param)
    if isinstance(value, list | dict):
        out[param] = value
    elif isinstance(current, list) and current and isinstance(current[0], list):
        out[param] = [[value, *current[0][1:]], *current[1:]]
    elif isinstance(current, list) and current:
        out[param] = [value, *current[1:]]
    else:
        out[param] = value
    return out


def _check_error(error: Exception, names: tuple[str, ...]) -> str | None:
    """Why ``error`` is not an acceptable refusal (``None``: it is one): a :class:`SpecError`
    whose every line names one of ``names`` (a field and its sub-fields)."""
    from impactbandits.errors import SpecError
    from impactbandits.usercode import InternalError

    if isinstance(error, InternalError) or not isinstance(error, SpecError):
        return f"{type(error).__name__}: {error}"
    for one in error.errors:
        text = str(one)
        if "\n" in text or not any(
            text.startswith(n) and (n.endswith(".") or text[len(n) : len(n) + 1] in ":.[ ")
            for n in names
        ):
            return f"unnamed: {text}"
    return None


def _attempt(run: Any, names: tuple[str, ...], seconds: int = CASE_SECONDS) -> tuple[str, str]:
    """``("ok" | "refused" | a failure, message)`` of ``run()`` within ``seconds``."""
    signal.alarm(seconds)
    try:
        run()
    except _Alarm:
        return "hang", f"took more than {seconds} s"
    except Exception as error:  # judged below, whatever it is
        why = _check_error(error, names)
        return ("refused", str(error)) if why is None else ("failed", why)
    finally:
        signal.alarm(0)
    return "ok", ""


def _run(env: dict[str, Any], policy: dict[str, Any], directory: str) -> None:
    from impactbandits.experiments.runner import run_experiment
    from impactbandits.experiments.spec import ExperimentSpec

    spec = ExperimentSpec.create(
        name="extreme", environments=[env], policies=[policy], horizons=[HORIZON], seeds=SEEDS
    )
    run_experiment(spec, run_dir=tempfile.mkdtemp(dir=directory), backend="serial", log=None)


def harness(part: str) -> None:
    """Print a JSON list of ``[case, outcome, message]`` for ``part``: ``"parameters"`` (every
    numeric parameter at :data:`EXTREMES`, then a short run when accepted) or ``"oracles"``
    (every oracle on every environment kind, a short run when accepted)."""
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    signal.signal(signal.SIGALRM, _ring)
    warnings.simplefilter("ignore")
    from impactbandits.experiments.spec import component_spec
    from impactbandits.registry import ENVIRONMENTS, ORACLES, POLICIES, params_model, resolve

    by_env, by_policy = _pairs()
    out: list[list[str]] = []
    with tempfile.TemporaryDirectory() as directory:
        if part == "oracles":
            for kind in sorted(ENVIRONMENTS):
                env, policy = by_env[kind]
                for oracle in sorted(ORACLES):
                    case = f"{kind} with oracle {oracle}"
                    entry = {**env, "oracle": oracle}
                    names = ("environments[0].oracle",)
                    outcome = _attempt(
                        lambda e=entry: component_spec("environment", e, "environments[0]"),
                        names,
                    )
                    if outcome[0] == "refused" and "applies to" not in outcome[1]:
                        outcome = ("failed", f"does not say what it supports: {outcome[1]}")
                    if outcome[0] == "ok":
                        outcome = _attempt(
                            lambda e=entry, p=policy: _run(e, p, directory), names, RUN_SECONDS
                        )
                    out.append([case, *outcome])
        else:
            for role, table, pairs in (
                ("environment", ENVIRONMENTS, by_env),
                ("policy", POLICIES, by_policy),
            ):
                field = "environments[0]" if role == "environment" else "policies[0]"
                for kind in sorted(table):
                    env, policy = pairs[kind]
                    mine = env if role == "environment" else policy
                    fields = params_model(resolve(role, kind, "kind")).model_fields
                    for param, info in fields.items():
                        if not _admits_number(info.annotation):
                            continue
                        for value in EXTREMES:
                            case = f"{kind}.{param} = {value!r}"
                            entry = _with(mine, param, value)
                            # a value far too large names the parameter itself; another one
                            # may break a relation, named by its other side (end <= start)
                            names: tuple[str, ...] = (f"{field}.{param}",)
                            if value not in TOO_LARGE:
                                names = (*names, "environments[0].", "policies[0].")
                            outcome = _attempt(
                                lambda e=entry, r=role, f=field: component_spec(r, e, f), names
                            )
                            if outcome[0] == "ok":
                                both = (entry, policy) if role == "environment" else (env, entry)
                                outcome = _attempt(
                                    lambda b=both: _run(b[0], b[1], directory),
                                    (*names, field, "environments[0] × policies[0]"),
                                    RUN_SECONDS,
                                )
                            out.append([case, *outcome])
    print(json.dumps(out))


def _outcomes(part: str) -> list[list[str]]:
    code = f"from tests.test_extreme_values import harness; harness({part!r})"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=3000
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the tests -----------------------------------------------------------------------------------


def _failures(outcomes: list[list[str]]) -> list[str]:
    return [f"{case}: {outcome}: {message}" for case, outcome, message in outcomes
            if outcome not in ("ok", "refused")]  # fmt: skip


@pytest.mark.slow
def test_every_numeric_parameter_at_extreme_values():
    # before: 27 internal errors, 30 unnamed one-line errors ("constructing …Bandit failed
    # (MemoryError: Unable to allocate 6.94 EiB …)"), and runs that never finished
    outcomes = _outcomes("parameters")
    assert len(outcomes) > 1000  # every numeric parameter of ~70 components, 8 values each
    refused = [case for case, outcome, _ in outcomes if outcome == "refused"]
    for too_large in ("sw-ucb.window = 10**18", "imab.length = 10**18", "rgp-ucb.noise = 1e+300"):
        assert too_large.replace("10**18", str(10**18)) in refused
    assert _failures(outcomes) == []


@pytest.mark.slow
def test_every_oracle_on_every_kind_of_environment():
    # before: `oracle = "blocking_optimum"` on a Bernoulli environment was an internal error
    # (AttributeError: 'BernoulliBandit' object has no attribute 'delays') after the store was
    # made; now a one-line error at the spec, naming the environments the oracle supports
    outcomes = _outcomes("oracles")
    assert len(outcomes) == 21 * 12
    by_case = {case: (outcome, message) for case, outcome, message in outcomes}
    outcome, message = by_case["bernoulli with oracle blocking_optimum"]
    assert outcome == "refused" and "blocking" in message, message
    assert by_case["blocking with oracle blocking_optimum"][0] == "ok"
    assert _failures(outcomes) == []
