"""Seznec et al.'s claims about their rotting-bandit figure, as checks on the stored full-scale
run (:mod:`impactbandits.experiments.claims`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.claims import (
    Claim,
    Verdict,
    below_every,
    final,
    paired_difference,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ABRUPT_CLAIMS", "SMOOTH_CLAIMS"]

BASELINES = ("wSWA", "SW-UCB", "D-UCB", "UCB1")
#: "Far below": FEWA's mean regret at T at most this share of the best baseline's.
FAR = 0.25


def _fewa_far_below(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    means = rows.groupby("policy", observed=True)["regret"].mean()
    below, text = below_every(rows, "regret", "FEWA", BASELINES)
    share = float(means["FEWA"]) / min(float(means[b]) for b in BASELINES)
    return Verdict(
        below and share <= FAR,
        f"regret at T, FEWA minus baseline, paired over seeds (95 %): {text}; FEWA's mean is "
        f"{share:.2f} of the best baseline's (far below: ≤ {FAR:g})",
    )


def _raw_as_well(table: pd.DataFrame) -> Verdict:
    rows = final(table)
    gap = paired_difference(rows, "regret", "RAW-UCB", "FEWA")
    return Verdict(
        gap.mean - gap.half <= 0,
        f"regret at T, RAW-UCB minus FEWA, paired over seeds: {gap} (as well: not significantly "
        "higher)",
    )


ABRUPT_CLAIMS = (
    Claim(
        "On ten abruptly rotting arms FEWA's regret is far below the non-stationary baselines' "
        "(wSWA, SW-UCB, D-UCB) and UCB1's (Seznec et al. 2019, Figure 2)",
        _fewa_far_below,
    ),
    Claim("RAW-UCB does as well as FEWA (Seznec et al. 2020)", _raw_as_well),
)


def _fewa_below(table: pd.DataFrame) -> Verdict:
    ok, text = below_every(final(table), "regret", "FEWA", BASELINES)
    return Verdict(ok, f"regret at T, FEWA minus baseline, paired over seeds (95 %): {text}")


SMOOTH_CLAIMS = (
    Claim(
        "Not a paper figure: the rotting papers' guarantees hold for any non-increasing means, "
        "so on a smooth decay FEWA's regret stays below the baselines' (by less than on the "
        "abrupt decay)",
        _fewa_below,
    ),
    Claim("RAW-UCB does as well as FEWA", _raw_as_well),
)
