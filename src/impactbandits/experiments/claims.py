"""A paper's claims as checks on stored results: what the fidelity ledger says of a figure.

Each registered figure (:class:`~impactbandits.experiments.figures.Figure`) lists its paper's
claims as :class:`Claim` objects next to its definition. A claim's ``check`` reads the tidy
table of the figure's full-scale run (:func:`~impactbandits.experiments.figures.load_run`: data
only, nothing a stored spec names is imported) and returns a :class:`Verdict`: whether the claim
holds, and the numbers it computed, as a sentence. The ledger's status of a figure is
:func:`status` of its verdicts, and its measured numbers are the verdicts' sentences: nothing
there is typed by hand.

A claim may be checked under a named option (``option``: the run of another variant or setting
of the figure) to show that the paper's behaviour appears there; or be ``unavailable`` (the
paper's text or figure could not be read), with what was compared instead.

The helpers below compute the usual quantities: the rows at the end of each run
(:func:`final`), and paired differences over seeds with a 95 % t-interval
(:func:`paired_difference`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "STATUSES",
    "TIE",
    "Claim",
    "Gap",
    "Verdict",
    "below_every",
    "ends",
    "final",
    "not_above_any",
    "paired_difference",
    "significant",
    "status",
]

#: The ledger's statuses: the claims hold under the paper's defaults; they hold only under a
#: named option (the figure's default says so on its face); they do not hold (with the evidence
#: and the readings tried); the paper's claim or figure could not be read.
STATUSES = ("reproduced", "reproduced-with-option", "not-reproduced", "not-checkable")


@dataclass(frozen=True)
class Verdict:
    """A claim's outcome on stored results: ``passed``, and the numbers behind it."""

    passed: bool
    measured: str


@dataclass(frozen=True)
class Claim:
    """One claim of a paper about a figure, and its check on the figure's full-scale run."""

    text: str
    """The paper's claim, one line (with its section or figure)."""
    check: Callable[[pd.DataFrame], Verdict] | None = None
    """The check on the run's tidy table; ``None`` when the claim is :attr:`unavailable`."""
    variant: str = "paper"
    """The figure variant whose run the check reads (``"paper"`` or ``"authors-code"``)."""
    option: str = ""
    """Empty for the paper's defaults; else the named option under which the claim is checked
    (a variant of the figure), as a reader would set it."""
    unavailable: str = ""
    """Why the claim cannot be checked, and what was compared instead."""
    trajectories: bool = False
    """Whether the check reads every checkpoint of the anytime runs (``load_run(...,
    trajectories=True)``), not only their ends."""


def status(claims: Sequence[Claim], verdicts: Sequence[Verdict | None]) -> str:
    """A figure's status from its claims and their verdicts (``None`` for an unavailable claim):

    * ``not-checkable`` when no claim can be checked;
    * ``reproduced`` when every checkable claim under the paper's defaults passes;
    * ``reproduced-with-option`` when each default claim that fails passes under an option
      (a claim with the same text and an ``option``);
    * ``not-reproduced`` otherwise.
    """
    pairs = [(c, v) for c, v in zip(claims, verdicts, strict=True) if v is not None]
    if not pairs:
        return "not-checkable"
    defaults = [(c, v) for c, v in pairs if not c.option]
    failing = [c.text for c, v in defaults if not v.passed]
    if not failing:
        return "reproduced"
    rescued = {c.text for c, v in pairs if c.option and v.passed}
    return "reproduced-with-option" if all(t in rescued for t in failing) else "not-reproduced"


def ends(table: pd.DataFrame) -> pd.DataFrame:
    """Every run's last row: one per (environment, policy, horizon, seed)."""
    rows = table[table["time"] == table["horizon"]]
    return rows.drop_duplicates(["environment", "policy", "horizon", "seed"])


def final(table: pd.DataFrame, horizon: int | None = None) -> pd.DataFrame:
    """The rows at the end of the runs of horizon ``horizon`` (default: the largest), one per
    (environment, policy, seed)."""
    wanted = int(table["horizon"].max()) if horizon is None else horizon
    rows = ends(table)
    return rows[rows["horizon"] == wanted]


#: Differences this small are ties: two policies that make the same choices can differ in the
#: last bits of their sums (~1e-16 per step here).
TIE = 1e-12


@dataclass(frozen=True)
class Gap:
    """Mean of the paired differences a − b over seeds, its 95 % t half-width and the number
    of seeds."""

    mean: float
    half: float
    n: int

    @property
    def below(self) -> bool:
        """a < b with 95 % confidence (the interval lies below 0)."""
        return self.mean + self.half < 0

    @property
    def above(self) -> bool:
        """a > b with 95 % confidence (the interval lies above 0, by more than the rounding
        of equal runs: :data:`TIE`)."""
        return self.mean - self.half > TIE

    def __str__(self) -> str:
        return f"{significant(self.mean)} ± {significant(self.half)} (n = {self.n})"


def paired_difference(
    rows: pd.DataFrame, metric: str, a: str, b: str, column: str = "policy"
) -> Gap:
    """``metric`` where ``column`` is ``a`` minus where it is ``b``, paired by seed and the
    other of (environment, policy), with ``horizon`` if the rows hold several: policies
    compared within each environment, or environments (the same seeds: common random
    numbers) within each policy."""
    from scipy import stats

    other = "environment" if column == "policy" else "policy"
    index = [other, "seed"] + (["horizon"] if rows["horizon"].nunique() > 1 else [])
    wide = rows.pivot_table(index=index, columns=column, values=metric, observed=True)
    diff = (wide[a] - wide[b]).dropna().to_numpy(dtype=float)
    n = diff.size
    if n == 0:
        raise ValueError(f"no seeds with both {a!r} and {b!r}")
    half = float(stats.t.ppf(0.975, n - 1) * diff.std(ddof=1) / np.sqrt(n)) if n > 1 else np.inf
    return Gap(float(diff.mean()), half, n)


def below_every(
    rows: pd.DataFrame, metric: str, policy: str, others: Sequence[str], closest: bool = False
) -> tuple[bool, str]:
    """Whether ``policy``'s ``metric`` is below each of ``others``' in every environment of
    ``rows`` (paired over seeds, 95 %), and the gaps as text, per environment when there are
    several; with ``closest``, only the gap whose interval reaches highest in each."""
    ok, parts = True, []
    environments = sorted(rows["environment"].astype(str).unique())
    for env in environments:
        panel = rows[rows["environment"].astype(str) == env]
        gaps = {b: paired_difference(panel, metric, policy, b) for b in others}
        ok = ok and all(g.below for g in gaps.values())
        if closest:
            b = max(gaps, key=lambda k: gaps[k].mean + gaps[k].half)
            text = f"closest {b} {gaps[b]}"
        else:
            text = ", ".join(f"{b} {g}" for b, g in gaps.items())
        parts.append(f"{env}: {text}" if len(environments) > 1 else text)
    return ok, "; ".join(parts)


def not_above_any(
    rows: pd.DataFrame, metric: str, policy: str, others: Sequence[str]
) -> tuple[bool, str]:
    """Whether ``policy``'s ``metric`` is nowhere above any of ``others``' with 95 % confidence
    (it matches or beats each, in every environment of ``rows``), and the environments and
    policies where it is above, as text."""
    worse = []
    for env in sorted(rows["environment"].astype(str).unique()):
        panel = rows[rows["environment"].astype(str) == env]
        for b in others:
            gap = paired_difference(panel, metric, policy, b)
            if gap.above:
                worse.append(f"{env}: {policy} minus {b} {gap}")
    return not worse, "; ".join(worse)


def significant(x: float) -> str:
    """Three significant figures: ``0.000624``, ``12.3``, ``1,230``; an exponent below 10⁻⁴
    and from 10⁹."""
    if not np.isfinite(x):
        return str(x)
    if x == 0:
        return "0"
    if not 1e-4 <= abs(x) < 1e9:
        return f"{x:.2e}"
    if abs(x) < 1000:
        return f"{x:.3g}"
    digits = int(np.floor(np.log10(abs(x))))
    return f"{round(x, 2 - digits):,.0f}"
