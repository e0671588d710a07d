"""The cross-setting leaderboard (issue 15, item 5; paired ranks, issue 30) on hand-made tables
whose means, intervals and ranks are worked out by hand below."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from impactbandits.experiments.leaderboard import (
    LEADERBOARD_COLUMNS,
    PAIR_COLUMNS,
    family_of,
    leaderboard,
    pairs,
    rank_table,
    to_markdown,
    write_leaderboard,
)


def _rows(env: str, policy: str, horizon: int, values: list[float]) -> list[dict]:
    return [
        {
            "environment": env,
            "policy": policy,
            "horizon": horizon,
            "time": horizon,
            "seed": seed,
            "per_step_regret": value,
        }
        for seed, value in enumerate(values)
    ]


def _table() -> pd.DataFrame:
    rows = []
    # family "a": two environments; family "b": one
    # family "a": P's seed scores (0.2, 0.4, 0.3), Q's (0.1, 0.3, 0.2): Q better by exactly
    # 0.1 on every seed (a certain difference); family "b": the same numbers (a tie)
    rows += _rows("a / 1", "P", 100, [0.1, 0.3, 0.2])
    rows += _rows("a / 2", "P", 100, [0.3, 0.5, 0.4])
    rows += _rows("a / 1", "Q", 100, [0.0, 0.2, 0.1])
    rows += _rows("a / 2", "Q", 100, [0.2, 0.4, 0.3])
    rows += _rows("b / x", "P", 100, [0.5, 0.5, 0.4])
    rows += _rows("b / x", "Q", 100, [0.5, 0.5, 0.4])
    # an intermediate checkpoint (time < horizon) that must be ignored
    rows += [{**r, "time": 50, "per_step_regret": 9.0} for r in _rows("a / 1", "P", 100, [0, 0])]
    # Q ran on only one environment of family "a" at horizon 200: no entry there
    rows += _rows("a / 1", "Q", 200, [0.1, 0.1])
    rows += _rows("a / 1", "P", 200, [0.2, 0.2])
    rows += _rows("a / 2", "P", 200, [0.2, 0.2])
    return pd.DataFrame(rows)


def test_family_of():
    assert family_of("single-peaked / instance 1") == "single-peaked"
    assert family_of("plain") == "plain"


def test_means_intervals_and_ranks_by_hand():
    board = leaderboard(_table())
    assert tuple(board.columns) == LEADERBOARD_COLUMNS
    p = board[(board.family == "a") & (board.policy == "P") & (board.horizon == 100)].iloc[0]
    # seed scores 0.2, 0.4, 0.3 -> mean 0.3, sd = 0.1, n = 3
    # half-width = t_{0.975, 2} * sd / sqrt(3) = 4.302653 * 0.0577350 = 0.248414
    assert p.per_step_regret == pytest.approx(0.3)
    assert p.ci_high - p.per_step_regret == pytest.approx(0.248414, rel=1e-5)
    assert p.seeds == 3 and p.environments == 2
    q = board[(board.family == "a") & (board.policy == "Q") & (board.horizon == 100)].iloc[0]
    assert q.per_step_regret == pytest.approx(0.2) and q["rank"] == 1 and p["rank"] == 2
    # one seed separates nothing; two already show the certain difference
    assert p.seeds_needed == 2
    tie = board[(board.family == "b")]
    assert list(tie["rank"]) == [1, 1]  # no difference at all: a shared rank
    assert board[(board.horizon == 200) & (board.policy == "Q")].empty  # incomplete family


def test_rank_table_means_over_families():
    ranks = rank_table(leaderboard(_table()))
    # T = 100: P ranks 2 (a) and 1 (b) -> 1.5; Q ranks 1 and 1 -> 1
    assert ranks.loc["P", (100, "mean rank")] == pytest.approx(1.5)
    assert ranks.loc["Q", (100, "mean rank")] == pytest.approx(1.0)
    assert ranks.loc["Q", (100, "families")] == 2
    # T = 200: only P is ranked (in family "a")
    assert ranks.loc["P", (200, "families")] == 1 and list(ranks.index) == ["P", "Q"]


def test_markdown_and_files(tmp_path):
    board = leaderboard(_table())
    text = to_markdown(board)
    assert "## Overall ranks" in text and "## a" in text and "## b" in text
    assert "| Q | 1 | 1 | 2 | 1.00 |" in text and "paired t-tests" in text
    pngs = write_leaderboard(_table(), tmp_path)
    assert len(pngs) == 2 and all(p.stat().st_size > 0 for p in pngs)
    again = pd.read_csv(tmp_path / "leaderboard.csv")
    assert list(again.columns) == list(LEADERBOARD_COLUMNS)
    assert math.isclose(again["per_step_regret"].sum(), board["per_step_regret"].sum())
    assert (tmp_path / "ranks.csv").is_file() and (tmp_path / "leaderboard.md").is_file()
    pair = pd.read_csv(tmp_path / "pairs.csv")
    assert list(pair.columns) == list(PAIR_COLUMNS)
    a = pair[(pair.family == "a") & (pair.horizon == 100)].iloc[0]
    assert (a.policy_a, a.policy_b) == ("P", "Q") and a.mean_difference == pytest.approx(0.1)
    assert bool(a.significant) and a.p_value == 0.0
    b = pair[pair.family == "b"].iloc[0]
    assert not bool(b.significant) and b.p_value == 1.0


def test_not_significant_differences_share_a_rank():
    # P − Q per seed: 0.1, 0.3 -> mean 0.2, sd 0.1414, t = 2.0 on 1 degree of freedom:
    # p = 2 (1/2 − atan(2)/π) = 0.2952 > 0.05: P and Q share rank 1 although their means differ
    rows = _rows("a / 1", "P", 100, [0.2, 0.4]) + _rows("a / 1", "Q", 100, [0.1, 0.1])
    board = leaderboard(pd.DataFrame(rows))
    assert list(board["rank"]) == [1, 1]
    pair = pairs(pd.DataFrame(rows)).iloc[0]
    assert pair.p_value == pytest.approx(2 * (0.5 - math.atan(2.0) / math.pi), rel=1e-9)
