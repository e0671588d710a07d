"""Cella & Cesa-Bianchi (2020)'s claim about their Figure 2 (§8), as checks on the stored
full-scale run (:mod:`impactbandits.experiments.claims`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, final, significant

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPETITIVE", "FIG2_CLAIMS"]

#: "Competitive": π_ucb's mean regret at T at most this multiple of π_low's (the paper gives no
#: number; this is the reading the check applies).
COMPETITIVE = 1.5
CLAIM = (
    "With a large gap between the best and second-best ranking policy, π_ucb is competitive "
    "with π_low even with switching costs (§8, Figure 2)"
)


def _competitive(label: str, table: pd.DataFrame) -> Verdict:
    rows = final(table)
    means = rows.groupby("policy", observed=True)["regret"].mean()
    ratio = float(means[label]) / float(means["π_low"])
    t = int(rows["horizon"].iloc[0])
    return Verdict(
        ratio <= COMPETITIVE,
        f"mean regret at T = {t:,} over {rows['seed'].nunique()} seeds: π_low "
        f"{significant(float(means['π_low']))}, {label} {significant(float(means[label]))}: "
        f"{ratio:.2f}x (competitive: ≤ {COMPETITIVE:g}x)",
    )


FIG2_CLAIMS = (
    Claim(CLAIM, lambda table: _competitive("π_ucb", table)),
    Claim(
        CLAIM,
        lambda table: _competitive("π_ucb (width 0.5)", table),
        option="π_ucb with width_scale = 0.5 (drawn in the figure)",
    ),
)
