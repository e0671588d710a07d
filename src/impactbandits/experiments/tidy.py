"""The tidy results table: one row per (cell, seed, horizon), built from the store.

Columns: ``experiment, environment, policy, horizon, time, run_horizon, anytime, seed, reward,
expected_reward, optimum, regret, per_step_regret, switches, pulls_0 … pulls_{n−1}`` and, when a
policy reports phases, ``phase_<name>`` (share of rounds in that phase). ``reward`` is the
cumulative realised reward, ``expected_reward`` the cumulative expected reward of the actions
taken; ``optimum``/``regret`` are empty where the environment has no oracle. Arms are numbered
from 0.

Environments may add columns through ``summary_metrics`` (e.g. Ron et al.'s ``utility``,
``average_utility`` and ``required_<arm>``); where an environment names one of them as its
``regret_on`` target, ``regret`` is measured on it instead of ``expected_reward``.

With ``trajectories=True`` the table also holds the intra-run checkpoints (``time`` <
``horizon`` for horizon-aware runs) used for regret-vs-time plots.

Seeds: by default the table holds the seeds of the latest run's spec (``seeds < spec.seeds``),
``seeds=N`` the first ``N``, ``seeds="all"`` every stored seed. When stored seeds are left out,
or results the spec asks for are missing (an interrupted run), a :class:`StoreWarning` says so
(:func:`seed_coverage` gives the same facts as data).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from impactbandits.errors import SpecError
from impactbandits.experiments.spec import ExperimentSpec
from impactbandits.experiments.store import Store, StoreWarning
from impactbandits.metrics import competitive_ratio, per_step, regret

__all__ = [
    "BASE_COLUMNS",
    "SeedCoverage",
    "Seeds",
    "read_table",
    "seed_coverage",
    "store_coverage",
    "tidy_table",
    "warn_coverage",
]

Seeds = int | Literal["all"] | None
"""Which seeds a table shows: ``None`` those of the latest run's spec, ``N`` the first ``N``,
``"all"`` every stored seed."""

BASE_COLUMNS = (
    "experiment",
    "environment",
    "policy",
    "horizon",
    "time",
    "run_horizon",
    "anytime",
    "seed",
    "reward",
    "expected_reward",
    "optimum",
    "regret",
    "per_step_regret",
    "switches",
)


@dataclass(frozen=True)
class SeedCoverage:
    """Which stored results a table shows (see :func:`seed_coverage`)."""

    shown: int | None
    """Seeds shown per cell (seeds ``0 … shown−1``); ``None``: every stored seed."""
    requested: int
    """Seeds the latest run's spec asks for."""
    stored: int
    """Distinct seeds in the store."""
    per_cell: tuple[int, int]
    """Fewest and most seeds stored for one cell."""
    uneven: bool
    """Cells hold different seed sets."""
    missing: int
    expected: int
    """Results the table should show (cells × seeds) and how many of them are not stored."""
    latest: bool
    """The seeds shown are the latest run's (``seeds=None``)."""

    def warnings(self) -> list[str]:
        """One line per thing a reader should know: hidden seeds, missing results."""
        lines = []
        if self.shown is None:
            if self.uneven:
                low, high = self.per_cell
                lines.append(
                    f"cells hold different seed sets ({low} to {high} seeds each): every stored "
                    "seed is shown, so cells are compared on different seeds"
                )
        elif self.stored > self.shown:
            asked = "the latest run asked for" if self.latest else "asked for"
            if self.uneven:
                low, high = self.per_cell
                shown = f"{self.shown} seeds; cells hold {low} to {high} stored seeds each"
            else:
                shown = f"{self.shown} of {self.stored} stored seeds"
            lines.append(
                f"showing {shown} ({asked} {self.shown}); use --all-seeds to show them all"
            )
        if self.missing:
            lines.append(
                f"{self.missing} of {self.expected} results are missing; run the same command "
                "again to finish"
            )
        return lines

    def describe(self) -> str:
        """For reports: ``"2 seeds shown of 30 stored"``, ``"30 seeds"``, …"""
        if self.shown is None:
            low, high = self.per_cell
            text = f"{high} seeds" if low == high else f"{low} to {high} seeds per cell"
            text += " (every stored seed)"
        elif self.stored > self.shown:
            text = f"{self.shown} seeds shown of {self.stored} stored"
        else:
            text = f"{self.shown} seeds"
        if self.missing:
            text += f"; {self.missing} of {self.expected} results missing"
        return text


def _check_seeds(seeds: Seeds) -> None:
    if seeds is None or seeds == "all":
        return
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise SpecError("seeds", f"must be a positive integer, 'all' or None, got {seeds!r}")


def store_coverage(store: Store, spec: ExperimentSpec, seeds: Seeds) -> SeedCoverage:
    """:func:`seed_coverage` of an open store."""
    _check_seeds(seeds)
    cells = [c["cell"] for c in store.cells()]
    per_cell: dict[str, set[int]] = {cell: set() for cell in cells}
    for cell, seed in store.finished():
        if cell in per_cell:
            per_cell[cell].add(seed)
    counts = [len(s) for s in per_cell.values()] or [0]
    stored = len(set().union(*per_cell.values()))
    uneven = len({frozenset(s) for s in per_cell.values()}) > 1
    shown = spec.seeds if seeds is None else None if seeds == "all" else int(seeds)
    wanted = spec.seeds if shown is None else shown
    present = sum(sum(1 for s in held if s < wanted) for held in per_cell.values())
    return SeedCoverage(
        shown=shown,
        requested=spec.seeds,
        stored=stored,
        per_cell=(min(counts), max(counts)),
        uneven=uneven,
        missing=len(cells) * wanted - present,
        expected=len(cells) * wanted,
        latest=seeds is None,
    )


def seed_coverage(run_dir: str | Path, seeds: Seeds = None) -> SeedCoverage:
    """Which of the stored seeds :func:`tidy_table` shows with ``seeds``, and what is missing."""
    with Store.open_existing(run_dir) as store:
        return store_coverage(store, store.spec(), seeds)


def warn_coverage(coverage: SeedCoverage, stacklevel: int = 2) -> None:
    """Emit :meth:`SeedCoverage.warnings` as :class:`StoreWarning` warnings."""
    for line in coverage.warnings():
        warnings.warn(line, StoreWarning, stacklevel=stacklevel + 1)


def tidy_table(
    run_dir: str | Path, trajectories: bool = False, seeds: Seeds = None
) -> pd.DataFrame:
    """Read ``run_dir``'s store into the tidy table.

    ``seeds``: ``None`` (the latest run's seeds), ``N`` (the first ``N``) or ``"all"`` (every
    stored seed). Warns (:class:`StoreWarning`) when stored seeds are not shown or results are
    missing; raises :class:`~impactbandits.experiments.store.DamagedStoreError` on a damaged
    store."""
    with Store.open_existing(run_dir) as store:
        store.check()
        spec = store.spec()
        warn_coverage(store_coverage(store, spec, seeds))
        return read_table(store, spec, trajectories, seeds)


def read_table(
    store: Store, spec: ExperimentSpec, trajectories: bool = False, seeds: Seeds = None
) -> pd.DataFrame:
    """:func:`tidy_table` from an open store, without checks or warnings."""
    cells = {c["cell"]: c for c in store.cells()}
    n_max = max((c["n_arms"] for c in cells.values()), default=0)
    parts: dict[str, list[np.ndarray]] = {}
    phase_names: list[str] = []
    extra_names: list[str] = []
    # text columns are stored as categorical codes: one small int per row, not an object
    categories: dict[str, list[str]] = {
        "experiment": [spec.name],
        "environment": [],
        "policy": [],
    }

    def code(column: str, value: str) -> int:
        labels = categories[column]
        if value not in labels:
            labels.append(value)
        return labels.index(value)

    def push(name: str, values: np.ndarray) -> None:
        parts.setdefault(name, []).append(values)

    limit = spec.seeds if seeds is None else None if seeds == "all" else int(seeds)
    for key, seed, p in store.results(seeds=limit):
        cell = cells[key]
        times = np.asarray(p["times"], dtype=np.int64)
        grid = set(json.loads(cell["grid"]))
        keep = np.ones(times.size, bool) if trajectories else np.isin(times, list(grid))
        m = int(keep.sum())
        anytime = cell["horizon"] is None
        horizon = times if anytime else np.full(times.size, cell["horizon"])
        optimum = (
            np.full(times.size, np.nan)
            if p["optimum"] is None
            else np.asarray(p["optimum"], dtype=float)
        )
        push("experiment", np.zeros(m, dtype=np.int32))
        push("environment", np.full(m, code("environment", cell["environment"]), np.int32))
        push("policy", np.full(m, code("policy", cell["policy"]), np.int32))
        push("horizon", horizon[keep])
        push("time", times[keep])
        push("run_horizon", np.full(m, cell["rounds"]))
        push("anytime", np.full(m, anytime))
        push("seed", np.full(m, seed))
        push("reward", np.asarray(p["reward"])[keep])
        push("expected_reward", np.asarray(p["expected"])[keep])
        push("optimum", optimum[keep])
        push("switches", np.asarray(p["switches"])[keep])
        phase_switches = p.get("phase_switches")
        push(
            "phase_switches",
            np.full(m, np.nan)
            if phase_switches is None
            else np.asarray(phase_switches, dtype=float)[keep],
        )
        pulls = np.full((times.size, n_max), np.nan)
        pulls[:, : cell["n_arms"]] = np.asarray(p["pulls"], dtype=float)
        for arm in range(n_max):
            push(f"pulls_{arm}", pulls[keep, arm])
        extras = p.get("extras") or {}
        target = extras.get(p.get("regret_on") or "", None)
        base = p["expected"] if target is None else target
        push("_regret_base", np.asarray(base, dtype=float)[keep])
        realised = extras.get(p.get("realised_on") or "", None)
        base = p["reward"] if realised is None else realised
        push("_realised_base", np.asarray(base, dtype=float)[keep])
        for name in extras:
            if name not in extra_names:
                extra_names.append(name)
        for name in extra_names:
            values = extras.get(name)
            push(
                f"extra:{name}",
                np.full(m, np.nan) if values is None else np.asarray(values, dtype=float)[keep],
            )
        names = p.get("phase_names") or []
        for name in names:
            if name not in phase_names:
                phase_names.append(name)
        for name in phase_names:
            if name in names and p["phases"] is not None:
                counts = np.asarray(p["phases"], dtype=float)[:, names.index(name)]
                push(f"phase_{name}", (counts / times)[keep])
            else:
                push(f"phase_{name}", np.full(m, np.nan))
    if not parts:
        columns = [*BASE_COLUMNS, *(f"pulls_{a}" for a in range(n_max))]
        return pd.DataFrame(columns=columns)
    # phase columns that appeared late get NaN for the earlier rows
    lengths = sum(len(a) for a in parts["seed"])
    data = {}
    for name, arrays in parts.items():
        column = np.concatenate(arrays)
        if column.size < lengths:
            column = np.concatenate([np.full(lengths - column.size, np.nan), column])
        data[name] = column
    for column, labels in categories.items():
        data[column] = pd.Categorical.from_codes(data[column], categories=labels)
    regret_base = data.pop("_regret_base")
    realised_base = data.pop("_realised_base")
    data = {name.removeprefix("extra:"): values for name, values in data.items()}
    table = pd.DataFrame(data)
    table["regret"] = regret(table["optimum"], regret_base)
    table["realised_regret"] = regret(table["optimum"], realised_base)
    table["per_step_regret"] = per_step(table["regret"], table["time"])
    table["competitive_ratio"] = competitive_ratio(table["optimum"], regret_base)
    ordered = [*BASE_COLUMNS, *(c for c in table.columns if c not in BASE_COLUMNS)]
    return table[ordered]
