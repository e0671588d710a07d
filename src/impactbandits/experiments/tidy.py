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
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from impactbandits.experiments.arguments import flag_argument, run_dir_argument, seeds_argument
from impactbandits.experiments.columns import Columns, groups, stack
from impactbandits.experiments.spec import SpecRecord
from impactbandits.experiments.store import Store, StoreWarning
from impactbandits.metrics import competitive_ratio, per_step, regret

__all__ = [
    "BASE_COLUMNS",
    "ORACLE_COLUMNS",
    "SeedCoverage",
    "Seeds",
    "grid_checkpoints",
    "measurements",
    "read_table",
    "seed_coverage",
    "seed_limit",
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


def seed_limit(spec: SpecRecord, seeds: Seeds) -> int | None:
    """The seeds a table shows: those below the returned number (``None``: every seed)."""
    return spec.seeds if seeds is None else None if seeds == "all" else int(seeds)


def _check_seeds(seeds: Seeds) -> None:
    seeds_argument(seeds)


def store_coverage(store: Store, spec: SpecRecord, seeds: Seeds) -> SeedCoverage:
    """:func:`seed_coverage` of an open store."""
    _check_seeds(seeds)
    cells = [c["cell"] for c in store.cells()]
    # per cell, its sorted distinct seeds as one array: 8 bytes a result (a set of Python
    # ints would take about 30 times that, 0.2 GB for a store of 10⁶ results)
    held = store.seed_sets()
    per_cell = [held.get(cell, np.empty(0, dtype=np.int64)) for cell in cells]
    counts = [s.size for s in per_cell] or [0]
    stored = np.unique(np.concatenate(per_cell)).size if per_cell else 0
    uneven = any(not np.array_equal(s, per_cell[0]) for s in per_cell[1:])
    shown = spec.seeds if seeds is None else None if seeds == "all" else int(seeds)
    wanted = spec.seeds if shown is None else shown
    present = sum(int(np.searchsorted(s, wanted)) for s in per_cell)  # seeds below wanted
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
    run_dir = run_dir_argument(run_dir)
    _check_seeds(seeds)
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
    store, and a one-line :class:`~impactbandits.errors.SpecTypeError` (a :class:`TypeError`)
    on an argument of the wrong type."""
    run_dir = run_dir_argument(run_dir)
    flag_argument(trajectories, "trajectories")
    _check_seeds(seeds)
    with Store.open_existing(run_dir) as store:
        store.check()
        spec = store.spec()
        warn_coverage(store_coverage(store, spec, seeds))
        return read_table(store, spec, trajectories, seeds)


#: Columns measured against the oracle's optimum (empty without one), computed last.
ORACLE_COLUMNS = ("regret", "realised_regret", "per_step_regret", "competitive_ratio")


def grid_checkpoints(times: np.ndarray, grid: Collection[int]) -> np.ndarray:
    """Indices of the checkpoints ``times`` of a result that the table shows without
    trajectories: those at its cell's grid horizons."""
    return np.flatnonzero(np.isin(times, list(grid)))


def measurements(group: list[dict[str, Any]], keep: np.ndarray | None) -> dict[str, np.ndarray]:
    """The table's measured columns of one group of results of a cell
    (:func:`~impactbandits.experiments.columns.groups`): name → ``(results, checkpoints)``
    array at the checkpoints ``keep`` (``None``: all). Names as in the table, extras prefixed
    ``extra:``; a column the group does not have (``optimum``, ``phase_switches``, arms beyond
    its own, phases, :data:`ORACLE_COLUMNS` without an optimum) is left out.

    The one place the derived columns are computed: :func:`read_table` and
    :func:`~impactbandits.experiments.aggregates.read_aggregates` both take them from here."""
    first = group[0]
    shown = first["times"] if keep is None else first["times"][keep]
    out = {
        "reward": stack([p["reward"] for p in group], keep),
        "expected_reward": stack([p["expected"] for p in group], keep),
        "switches": stack([p["switches"] for p in group], keep),
    }
    if first["optimum"] is not None:
        out["optimum"] = stack([p["optimum"] for p in group], keep)
    if first["phase_switches"] is not None:
        out["phase_switches"] = stack([p["phase_switches"] for p in group], keep)
    pulls = stack([p["pulls"] for p in group], keep)
    for arm in range(pulls.shape[2]):
        out[f"pulls_{arm}"] = pulls[:, :, arm]
    extras = {name: stack([p["extras"][name] for p in group], keep) for name in first["extras"]}
    out.update({f"extra:{name}": values for name, values in extras.items()})
    if first["phases"] is not None:
        names = first["phase_names"]
        phases = stack([p["phases"] for p in group], keep)
        for name in dict.fromkeys(names):
            out[f"phase_{name}"] = np.asarray(phases[:, :, names.index(name)], dtype=float) / shown
    if first["optimum"] is not None:
        optimum = out["optimum"]
        base = np.asarray(extras.get(first["regret_on"] or "", out["expected_reward"]), dtype=float)
        realised = np.asarray(extras.get(first["realised_on"] or "", out["reward"]), dtype=float)
        out["regret"] = regret(optimum, base)
        out["realised_regret"] = regret(optimum, realised)
        out["per_step_regret"] = per_step(out["regret"], shown)
        out["competitive_ratio"] = competitive_ratio(optimum, base)
    return out


def _ravel(values: np.ndarray | None) -> np.ndarray | None:
    return None if values is None else values.ravel()


def read_table(
    store: Store,
    spec: SpecRecord,
    trajectories: bool = False,
    seeds: Seeds = None,
    cells: Collection[str] | None = None,
) -> pd.DataFrame:
    """:func:`tidy_table` from an open store, without checks or warnings; ``cells``: only the
    results of these cell keys.

    Streams the store: the columns are allocated once (their length counted first) and every
    result is decoded straight into them; text columns are categorical codes."""
    info = {c["cell"]: c for c in store.cells()}
    n_max = max((c["n_arms"] for c in info.values()), default=0)
    limit = seed_limit(spec, seeds)
    keeps: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}

    def keep_of(key: str, times: np.ndarray) -> np.ndarray | None:
        """Indices of the checkpoints shown (``None``: all of them)."""
        if trajectories:
            return None
        cached = keeps.get(key)
        if cached is None or not np.array_equal(cached[0], times):
            grid = json.loads(info[key]["grid"])
            cached = keeps[key] = (times, grid_checkpoints(times, grid))
        return cached[1]

    size = 0  # rows of the table: results × checkpoints shown of each
    for key, (count, sample) in store.samples(seeds=limit).items():
        if key not in info or (cells is not None and key not in cells):
            continue
        if sample is None:  # a guess: the columns grow if it is short
            size += count * len(json.loads(info[key]["grid"]))
        else:
            keep = keep_of(key, sample["times"])
            size += count * (sample["times"].size if keep is None else keep.size)
    out = Columns(size)
    # text columns are categorical codes: one small int per row, not an object
    categories: dict[str, list[str]] = {"experiment": [spec.name], "environment": [], "policy": []}
    extra_names: list[str] = []
    phase_names: list[str] = []
    rows = 0
    for key, seeds_read, group in groups(store.results(seeds=limit, cells=cells)):
        rows += len(group)
        cell, first = info[key], group[0]
        keep = keep_of(key, first["times"])
        shown = first["times"] if keep is None else first["times"][keep]
        n = len(group)
        times = np.tile(shown, n)
        out.start(times.size)
        anytime = cell["horizon"] is None
        out.put("experiment", 0, np.int32)
        for name in ("environment", "policy"):
            labels = categories[name]
            if cell[name] not in labels:
                labels.append(cell[name])
            out.put(name, labels.index(cell[name]), np.int32)
        out.put("horizon", times if anytime else cell["horizon"], np.int64)
        out.put("time", times, np.int64)
        out.put("run_horizon", cell["rounds"], np.int64)
        out.put("anytime", anytime, np.bool_)
        out.put("seed", np.repeat(np.asarray(seeds_read, dtype=np.int64), shown.size), np.int64)
        values = measurements(group, keep)
        out.put("reward", values["reward"].ravel())
        out.put("expected_reward", values["expected_reward"].ravel())
        out.put("optimum", _ravel(values.get("optimum")))
        out.put("switches", values["switches"].ravel(), np.int64)
        out.put("phase_switches", _ravel(values.get("phase_switches")))
        for arm in range(n_max):
            out.put(f"pulls_{arm}", _ravel(values.get(f"pulls_{arm}")))
        extra_names += [name for name in first["extras"] if name not in extra_names]
        for name in extra_names:
            out.put(f"extra:{name}", _ravel(values.get(f"extra:{name}")))
        phase_names += [name for name in first["phase_names"] if name not in phase_names]
        for name in phase_names:
            out.put(f"phase_{name}", _ravel(values.get(f"phase_{name}")))
        if "regret" in values:
            for name in ORACLE_COLUMNS:
                out.put(name, values[name].ravel(), computed=True)
        out.finish()
    if not rows:
        columns = [*BASE_COLUMNS, *(f"pulls_{a}" for a in range(n_max))]
        return pd.DataFrame(columns=columns)
    data = out.columns()
    for name, labels in categories.items():
        # pandas-stubs take categories only as an Index; pandas takes any list-like
        data[name] = pd.Categorical.from_codes(data[name], categories=labels)  # type: ignore[call-overload]
    data = {name.removeprefix("extra:"): values for name, values in data.items()}
    ordered = [*BASE_COLUMNS, *(c for c in data if c not in BASE_COLUMNS)]
    return pd.DataFrame({name: data[name] for name in ordered}, copy=False)
