"""The papers' claims that the cross-setting benchmark can check on its stored full-scale run
(:mod:`impactbandits.experiments.claims`): the rested ones of ``rested-benchmark`` (the same
cells), and one per further setting where the paper compares its algorithm with a baseline the
benchmark also runs. The leaderboard itself is a measurement, not a claim."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from impactbandits.experiments.claims import Claim, Verdict, below_every, final
from impactbandits.experiments.papers.rested_benchmark_claims import BENCHMARK_CLAIMS

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CROSS_CLAIMS"]


def _setting(table: pd.DataFrame, setting: str) -> pd.DataFrame:
    rows = final(table)
    return rows[rows["environment"].astype(str).str.startswith(f"{setting} / ")]


def _check(setting: str, policy: str, others: tuple[str, ...]) -> Callable[[pd.DataFrame], Verdict]:
    """``policy``'s final per-step regret is below each of ``others``' on every instance of
    ``setting`` (paired over seeds, 95 %)."""

    def check(table: pd.DataFrame) -> Verdict:
        rows = _setting(table, setting)
        ok, text = below_every(rows, "per_step_regret", policy, others)
        return Verdict(
            ok,
            f"per-step regret at T = {int(rows['horizon'].iloc[0]):,}, {policy} minus each, "
            f"paired over seeds (95 %): {text}",
        )

    return check


CROSS_CLAIMS = (
    *BENCHMARK_CLAIMS,
    Claim(
        "KL-UCB has lower regret than UCB1 on Bernoulli arms (Garivier & Cappé 2011, §6)",
        _check("stationary", "KL-UCB", ("UCB1",)),
    ),
    Claim(
        "UCB Greedy, which knows the delays, beats index policies blind to blocking (Basu et "
        "al. 2019, §V)",
        _check("blocking", "UCB Greedy", ("UCB1", "KL-UCB")),
    ),
)
