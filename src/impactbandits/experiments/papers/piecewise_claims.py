"""Besson et al. (2022)'s claims about their piecewise-stationary experiments, as checks on the
stored full-scale run of ``piecewise-stationary`` (:mod:`impactbandits.experiments.claims`).

Only the paper's abstract and first pages could be read here; the claims are the abstract's:
"numerical experiments showing that GLR-klUCB outperforms passively and actively adaptive
algorithms from the literature" (arXiv:1902.01575v1) and "GLR-klUCB is also very efficient in
practice" (JMLR version).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, below_every, final

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLAIMS"]

PASSIVE = ("D-UCB", "SW-UCB", "Exp3S")
ACTIVE = ("CUSUM-UCB", "M-UCB")
STATIONARY = ("TS", "UCB1")


def _below(others: tuple[str, ...]) -> Callable[[pd.DataFrame], Verdict]:
    """The check "GLR-klUCB below each of ``others`` in every problem"."""

    def check(table: pd.DataFrame) -> Verdict:
        rows = final(table)
        ok, text = below_every(rows, "regret", "GLR-klUCB", others)
        t = int(rows["horizon"].iloc[0])
        return Verdict(
            ok,
            f"regret at T = {t:,}, GLR-klUCB minus each, paired over seeds (95 %): {text}",
        )

    return check


CLAIMS = (
    Claim(
        "GLR-klUCB outperforms the passively adaptive algorithms (D-UCB, SW-UCB, Exp3S) on "
        "Problems 1 and 2 (abstract and §6)",
        _below(PASSIVE),
    ),
    Claim(
        "GLR-klUCB outperforms the actively adaptive algorithms (CUSUM-UCB, M-UCB) on Problems 1 "
        "and 2 (abstract and §6)",
        _below(ACTIVE),
    ),
    Claim(
        "GLR-klUCB outperforms the stationary algorithms (Thompson sampling, UCB1), which cannot "
        "follow the changes",
        _below(STATIONARY),
    ),
)
