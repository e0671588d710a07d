"""The papers' claims that the rested benchmark can check across families, on its stored
full-scale run (:mod:`impactbandits.experiments.claims`): each algorithm at its paper's
defaults against the baselines its paper compares with, on the families its paper is about.
The leaderboard itself (ranks over every family) is a measurement, not a claim."""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, below_every, final

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BENCHMARK_CLAIMS"]

STATIONARY = ("UCB1", "SW-UCB", "D-UCB", "EXP3")


def _family(rows: pd.DataFrame, *families: str) -> pd.DataFrame:
    env = rows["environment"].astype(str)
    return rows[env.str.startswith(tuple(f"{f} / " for f in families))]


def _spo_single_peaked(table: pd.DataFrame) -> Verdict:
    rows = _family(final(table), "single-peaked", "recommender")
    ok, text = below_every(rows, "per_step_regret", "SPO", (*STATIONARY, "R-EXP3"), closest=True)
    return Verdict(
        ok,
        f"per-step regret at T = {int(rows['horizon'].iloc[0]):,}, SPO minus the external-regret "
        f"baselines, paired over seeds (95 %): {text}",
    )


def _rotting(table: pd.DataFrame) -> Verdict:
    rows = _family(final(table), "rotting")
    parts, ok = [], True
    for policy in ("FEWA", "RAW-UCB"):
        below, text = below_every(rows, "per_step_regret", policy, STATIONARY, closest=True)
        ok = ok and below
        parts.append(f"{policy}: {text}")
    return Verdict(
        ok,
        f"per-step regret at T = {int(rows['horizon'].iloc[0]):,} minus the stationary "
        f"baselines', paired over seeds (95 %): " + " | ".join(parts),
    )


BENCHMARK_CLAIMS = (
    Claim(
        "SPO beats the external-regret baselines on single-peaked bandits (Lindner et al. 2021, "
        "§5: instances 1–3 and the recommender)",
        _spo_single_peaked,
    ),
    Claim(
        "FEWA and RAW-UCB beat stationary and sliding-window baselines on rotting bandits "
        "(Seznec et al. 2019, §5; Seznec et al. 2020, §5)",
        _rotting,
    ),
)
