"""The cross-setting leaderboard (issue 15, item 5) on hand-made tables whose means, intervals
and ranks are worked out by hand below."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from impactbandits.experiments.leaderboard import (
    LEADERBOARD_COLUMNS,
    family_of,
    leaderboard,
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
    rows += _rows("a / 1", "P", 100, [0.1, 0.3])
    rows += _rows("a / 2", "P", 100, [0.3, 0.5])
    rows += _rows("a / 1", "Q", 100, [0.0, 0.0])
    rows += _rows("a / 2", "Q", 100, [0.2, 0.2])
    rows += _rows("b / x", "P", 100, [0.5, 0.5])
    rows += _rows("b / x", "Q", 100, [0.5, 0.5])
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
    # seed scores: (0.1+0.3)/2 = 0.2 and (0.3+0.5)/2 = 0.4 -> mean 0.3; sd = 0.1414..., n = 2
    # half-width = t_{0.975, 1} * sd / sqrt(2) = 12.7062 * 0.1 = 1.27062
    assert p.per_step_regret == pytest.approx(0.3)
    assert p.ci_high - p.per_step_regret == pytest.approx(1.270620, rel=1e-5)
    assert p.seeds == 2 and p.environments == 2
    q = board[(board.family == "a") & (board.policy == "Q") & (board.horizon == 100)].iloc[0]
    assert q.per_step_regret == pytest.approx(0.1) and q["rank"] == 1 and p["rank"] == 2
    tie = board[(board.family == "b")]
    assert list(tie["rank"]) == [1.5, 1.5]  # equal means share the average rank
    assert board[(board.horizon == 200) & (board.policy == "Q")].empty  # incomplete family


def test_rank_table_means_over_families():
    ranks = rank_table(leaderboard(_table()))
    # T = 100: P ranks 2 (a) and 1.5 (b) -> 1.75; Q ranks 1 and 1.5 -> 1.25
    assert ranks.loc["P", (100, "mean rank")] == pytest.approx(1.75)
    assert ranks.loc["Q", (100, "mean rank")] == pytest.approx(1.25)


def test_markdown_and_files(tmp_path):
    board = leaderboard(_table())
    text = to_markdown(board)
    assert "## Overall ranks" in text and "## a" in text and "## b" in text
    assert "| Q | 1 | 1.5 | 1.25 |" in text
    pngs = write_leaderboard(_table(), tmp_path)
    assert len(pngs) == 2 and all(p.stat().st_size > 0 for p in pngs)
    again = pd.read_csv(tmp_path / "leaderboard.csv")
    assert list(again.columns) == list(LEADERBOARD_COLUMNS)
    assert math.isclose(again["per_step_regret"].sum(), board["per_step_regret"].sum())
    assert (tmp_path / "ranks.csv").is_file() and (tmp_path / "leaderboard.md").is_file()
