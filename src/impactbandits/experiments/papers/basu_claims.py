"""Basu et al. (2019)'s claims about blocking bandits, as checks on the stored full-scale run of
``basu-blocking`` (:mod:`impactbandits.experiments.claims`). The claims are the abstract's: the
paper's body could not be read here (see the ledger)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, final, significant

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AGAINST_GREEDY", "CLAIMS", "GREEDY_RATIO", "REGIMES", "SMALL_GREEDY", "SMALL_OPTIMUM"]

#: The guarantee of Oracle Greedy: asymptotically (1 − 1/e) of the optimum.
GREEDY_RATIO = 1.0 - 1.0 / math.e
UCB_GREEDY = "UCB Greedy"
#: The figure's environment labels (:func:`impactbandits.experiments.papers.basu.environments`):
#: the three 20-arm delay regimes and the 3-arm instance against greedy and against the optimum.
REGIMES = {
    "small": "20 arms, delays U{1..10}",
    "large": "20 arms, delays U{11..20}",
    "fixed": "20 arms, delays 10",
}
SMALL_GREEDY = "3 arms, against Oracle Greedy"
SMALL_OPTIMUM = "3 arms, against the optimum"
#: Environments whose regret is against Oracle Greedy.
AGAINST_GREEDY = (*REGIMES.values(), SMALL_GREEDY)


def _mean_regret(rows: pd.DataFrame, environment: str) -> float:
    panel = rows[(rows["environment"] == environment) & (rows["policy"] == UCB_GREEDY)]
    return float(panel["regret"].mean())


def _logarithmic(table: pd.DataFrame) -> Verdict:
    """Over the last 9T/10 rounds UCB Greedy's mean regret against Oracle Greedy grows by at
    most what it reached in the first T/10 (c log T growth adds c ln 10 there, against
    c ln(T/10) before: 0.33 of it at T = 10⁴; linear growth would add 9 times as much)."""
    horizons = sorted(int(h) for h in table["horizon"].unique())
    early_t, late_t = horizons[0], horizons[-1]
    early_rows, late_rows = final(table, early_t), final(table, late_t)
    ok, parts = True, []
    for env in AGAINST_GREEDY:
        early, late = _mean_regret(early_rows, env), _mean_regret(late_rows, env)
        growth = late - early
        ok = ok and growth <= max(early, 0.0)
        ratio = f"{significant(growth / early)}×" if early > 0 else "n/a"
        parts.append(
            f"{env}: R({early_t}) = {significant(early)}, R({late_t}) − R({early_t}) = "
            f"{significant(growth)} ({ratio})"
        )
    return Verdict(ok, "mean regret over seeds; " + "; ".join(parts))


def _greedy_ratio(table: pd.DataFrame) -> Verdict:
    """Oracle Greedy's expected reward at T against the exact optimum's on the three-arm
    instance (the stored ``optimum`` columns of its two environments)."""
    rows = final(table)
    greedy = float(rows.loc[rows["environment"] == SMALL_GREEDY, "optimum"].iloc[0])
    best = float(rows.loc[rows["environment"] == SMALL_OPTIMUM, "optimum"].iloc[0])
    ratio = greedy / best
    return Verdict(
        ratio >= GREEDY_RATIO,
        f"T = {int(rows['horizon'].iloc[0])}: greedy {significant(greedy)}, optimum "
        f"{significant(best)}, ratio {ratio:.3f} (1 − 1/e = {GREEDY_RATIO:.3f})",
    )


CLAIMS = (
    Claim(
        "UCB Greedy has c log T + o(log T) regret against the greedy algorithm (Basu et al. "
        "2019, abstract)",
        _logarithmic,
    ),
    Claim(
        "The greedy algorithm that plays the available arm with the highest reward is "
        "asymptotically (1 − 1/e)-optimal (Basu et al. 2019, abstract)",
        _greedy_ratio,
    ),
)
