"""Entering the benchmark with one's own policy (issue 30, item 5): the user's policy runs on
the settings its actions fit, beside the stored built-in results, which are not recomputed.

The central check is a property, not a stored number: a user's copy of UCB1 meets the same
instances and noise as the stored UCB1 (common random numbers), so its paired difference to
UCB1 must be exactly 0 on every seed and the two must share a rank. It fails if the stored
results are stale, if the pairing of seeds is wrong or if the entry recomputes with other
streams."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from impactbandits.cli import cli
from impactbandits.errors import SpecError
from impactbandits.experiments.entry import (
    SCORE_COLUMNS,
    enter,
    fitting_settings,
    packaged_scores,
)
from impactbandits.experiments.leaderboard import family_of
from impactbandits.experiments.papers import benchmark

SETTINGS = ["--setting", "stationary", "--setting", "blocking"]

USER_MODULE = '''
from impactbandits.policies.classic import UCB1


class MyUCB(UCB1):
    """UCB1 under another name."""


class Broken(UCB1):
    def __init__(self) -> None:
        raise RuntimeError("no")
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    (tmp_path / "entrymod.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "entrymod"


def test_a_copy_of_ucb1_ties_exactly_with_the_stored_ucb1(tmp_path, user_module):
    out = tmp_path / "entry"
    args = ["benchmark", "--quick", *SETTINGS, "--policy", f"{user_module}:MyUCB"]
    result = CliRunner().invoke(cli, [*args, "--out", str(out), "--backend", "serial"])
    assert result.exit_code == 0, result.output
    # only the entry ran: 5 environments (3 stationary + 2 blocking) x 3 seeds, UCB1 anytime
    assert "15 results computed, 0 reused" in result.output
    versus = pd.read_csv(out / "entry.csv")
    ucb = versus[versus["policy"] == "UCB1"]
    assert len(ucb) == 4  # 2 settings x 2 horizons
    assert (ucb["mean_difference"] == 0.0).all() and (ucb["verdict"] == "not separated").all()
    board = pd.read_csv(out / "leaderboard.csv")
    for (_, _), part in board.groupby(["family", "horizon"]):
        ranks = part.set_index("policy")["rank"]
        assert ranks["MyUCB"] == ranks["UCB1"]
    assert set(board["family"]) == {"stationary", "blocking"}
    assert "MyUCB" in (out / "entry.md").read_text()


def test_a_built_in_name_is_refused(tmp_path, user_module):
    args = ["benchmark", "--quick", *SETTINGS, "--policy", f"{user_module}:MyUCB"]
    result = CliRunner().invoke(cli, [*args, "--label", "UCB1", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "label: 'UCB1' is a built-in policy's name" in result.output
    assert not (tmp_path / "x").exists()


def test_bad_policies_are_one_line_errors(tmp_path, user_module):
    for policy, expected in [
        ("entrymod", "--policy: 'entrymod' is not MODULE:CLASS"),
        (f"{user_module}:Broken", "RuntimeError: no"),
    ]:
        args = ["benchmark", "--quick", *SETTINGS, "--policy", policy]
        result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "y")])
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1 and expected in lines[0], result.output


def test_stale_results_are_refused_before_anything_runs():
    stored = packaged_scores(quick=True)
    bench = benchmark.spec(True, ["stationary"])
    label = bench.environments[0].label
    changed = dict(stored.environments)
    changed[label] = changed[label].replace("0.9", "0.95", 1)
    stale = dataclasses.replace(stored, environments=changed)
    ran = []
    with pytest.raises(SpecError, match="stale results"):
        enter("ucb1", {}, "copy", stale, bench, ran.append)
    assert ran == []


def test_settings_fit_the_policys_actions():
    bench = benchmark.spec(True)
    simplex = {family_of(label) for label in fitting_settings(bench, ("simplex",))}
    discrete = {family_of(label) for label in fitting_settings(bench, ("discrete",))}
    assert simplex == {"delayed impact"}
    assert "delayed impact" not in discrete and {"stationary", "blocking"} <= discrete


@pytest.mark.parametrize("quick", [True, False])
def test_the_shipped_results_match_the_current_benchmark(quick):
    stored = packaged_scores(quick)
    bench = benchmark.spec(quick)
    assert stored.horizons == bench.horizons and stored.seeds == bench.seeds
    current = {e.label: e for e in bench.environments}
    assert set(stored.environments) == set(current)
    for label, env in current.items():
        assert json.loads(stored.environments[label]) == json.loads(
            json.dumps(env.content(), default=str)
        ), label
    assert tuple(stored.table.columns) == SCORE_COLUMNS
    expected = {(p.label, e) for p in bench.policies for e in current if p.runs_on(e)}
    seen = set(zip(stored.table["policy"], stored.table["environment"], strict=True))
    assert seen == expected
