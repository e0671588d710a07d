"""Entering the benchmark with your own policy: run it on every setting it fits, beside the
stored built-in results (not recomputed), and rank it by paired comparisons.

The built-in results are a *scores table*: one row per (environment, horizon, policy, seed)
with the final per-step policy regret, plus a sidecar that records what produced them (each
environment's content, the horizons, the seeds and the root seed). The package ships the
tables of the full and ``--quick`` benchmark (``impactbandits/data/benchmark``); a run
directory of ``impactbandits benchmark`` gives its own (:func:`run_scores`). Reading either
imports nothing a stored spec names: they are data.

The user's policy runs with the benchmark's environments, horizons, seeds and root seed, so
seed ``s`` meets the same instances and noise as every built-in's seed ``s`` (common random
numbers): the comparisons are paired. Before anything runs, the stored environments must equal
the current benchmark's (content, not only labels); otherwise the stored results are stale and
the entry says how to recompute them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from impactbandits.errors import SpecError
from impactbandits.experiments.leaderboard import family_of
from impactbandits.experiments.spec import canonical_json

if TYPE_CHECKING:
    import pandas as pd

    from impactbandits.experiments.spec import ExperimentSpec, SpecRecord

__all__ = [
    "SCORE_COLUMNS",
    "Entry",
    "StoredScores",
    "enter",
    "fitting_settings",
    "packaged_scores",
    "run_scores",
    "write_scores",
]

#: Columns of a scores table (a public contract: keep them).
SCORE_COLUMNS = ("environment", "horizon", "policy", "seed", "per_step_regret")
_PACKAGE_DATA = "data/benchmark"


@dataclass(frozen=True)
class StoredScores:
    """Built-in results: the scores table and what produced it."""

    table: pd.DataFrame
    environments: dict[str, str]
    """Environment label → canonical JSON of its content (kind, parameters, oracle)."""
    horizons: tuple[int, ...]
    seeds: int
    seed: int
    source: str


def _sidecar(record: SpecRecord) -> dict[str, Any]:
    return {
        "environments": {e.label: canonical_json(e.content()) for e in record.environments},
        "horizons": list(record.horizons),
        "seeds": record.seeds,
        "seed": record.seed,
    }


def _final_scores(table: pd.DataFrame) -> pd.DataFrame:
    final = table[(table["time"] == table["horizon"]) & table["per_step_regret"].notna()]
    out = final.loc[:, list(SCORE_COLUMNS)].copy()
    for column in ("environment", "policy"):
        out[column] = out[column].astype(str)
    return out.sort_values(list(SCORE_COLUMNS[:4]), ignore_index=True)


def run_scores(run_dir: str | Path) -> StoredScores:
    """The scores of a benchmark run directory (read as data: nothing it names is imported)."""
    from impactbandits.experiments.arguments import run_dir_argument
    from impactbandits.experiments.store import Store
    from impactbandits.experiments.tidy import tidy_table

    run_dir = run_dir_argument(run_dir)
    with Store.open_existing(run_dir) as store:
        record = store.spec()
    side = _sidecar(record)
    return StoredScores(
        _final_scores(tidy_table(run_dir)),
        side["environments"],
        tuple(side["horizons"]),
        int(side["seeds"]),
        int(side["seed"]),
        str(run_dir),
    )


def write_scores(run_dir: str | Path, target: str | Path) -> Path:
    """Write the scores table of ``run_dir`` to ``target`` (``.csv.gz``) and its sidecar
    (``target`` with ``.json``); returns the table's path."""
    from impactbandits.experiments.arguments import run_dir_argument
    from impactbandits.experiments.store import Store
    from impactbandits.experiments.tidy import tidy_table

    run_dir = run_dir_argument(run_dir)
    target = run_dir_argument(target, "target")
    with Store.open_existing(run_dir) as store:
        record = store.spec()
    table = _final_scores(tidy_table(run_dir))
    # mtime 0 in the gzip header: the same results give the same bytes
    import gzip
    import io

    from impactbandits.experiments.run_files import write_bytes, write_text

    text = table.to_csv(index=False, float_format="%.17g").encode("utf-8")
    packed = io.BytesIO()  # the header names the file, as writing it directly did
    with gzip.GzipFile(filename=target.name, fileobj=packed, mode="wb", mtime=0) as gz:
        gz.write(text)
    write_bytes(target, packed.getvalue())  # never through a link at its name
    sidecar = target.with_name(target.name.removesuffix(".csv.gz") + ".json")
    write_text(sidecar, json.dumps(_sidecar(record), indent=1, sort_keys=True) + "\n")
    return target


def packaged_scores(quick: bool) -> StoredScores:
    """The built-in results shipped with the package (full scale, or ``--quick``)."""
    import pandas as pd

    name = "quick" if quick else "full"
    base = resources.files("impactbandits").joinpath(_PACKAGE_DATA)
    table_file, side_file = base.joinpath(f"{name}.csv.gz"), base.joinpath(f"{name}.json")
    if not table_file.is_file() or not side_file.is_file():
        raise SpecError(
            "results",
            f"this installation has no stored {name} benchmark results; run "
            f"`impactbandits benchmark{' --quick' if quick else ''}` and pass its directory "
            "with --results",
        )
    with resources.as_file(table_file) as path:
        table = pd.read_csv(path, dtype={"environment": str, "policy": str})
    side = json.loads(side_file.read_text(encoding="utf-8"))
    return StoredScores(
        table,
        dict(side["environments"]),
        tuple(int(h) for h in side["horizons"]),
        int(side["seeds"]),
        int(side["seed"]),
        f"the package's {name} benchmark results",
    )


def _check_current(stored: StoredScores, bench: ExperimentSpec, labels: list[str]) -> None:
    """The stored results were produced by the benchmark as it is defined now."""
    hint = (
        "recompute them with `impactbandits benchmark` (add --quick for the quick scale) and "
        "pass its directory with --results"
    )
    if tuple(stored.horizons) != tuple(bench.horizons) or stored.seed != bench.seed:
        raise SpecError(
            "results",
            f"{stored.source} have horizons {list(stored.horizons)} and root seed {stored.seed}, "
            f"the benchmark {list(bench.horizons)} and {bench.seed}; {hint}",
        )
    current = {e.label: canonical_json(e.content()) for e in bench.environments}
    for label in labels:
        if stored.environments.get(label) != current[label]:
            raise SpecError(
                "results",
                f"{stored.source} were computed for another environment {label!r} than the "
                f"benchmark defines now (stale results); {hint}",
            )


def fitting_settings(bench: ExperimentSpec, action_kinds: tuple[str, ...]) -> list[str]:
    """Labels of the benchmark environments whose setting a policy with ``action_kinds`` fits
    (a setting fits when every one of its environments has such actions)."""
    from impactbandits.registry import build_environment

    kinds: dict[str, set[str]] = {}
    for env in bench.environments:
        space = build_environment(env.kind, env.params).action_space
        kinds.setdefault(family_of(env.label), set()).add(space.kind)
    return [
        env.label for env in bench.environments if kinds[family_of(env.label)] <= set(action_kinds)
    ]


@dataclass(frozen=True)
class Entry:
    """A finished entry: where it ran, its leaderboard rows and its paired comparisons."""

    run_dir: Path
    label: str
    board: pd.DataFrame
    """The leaderboard of the fitting settings with the entry among the built-ins."""
    comparisons: pd.DataFrame
    """The entry against each built-in: ``family, horizon, policy, mean_difference, ci_low,
    ci_high, seeds, p_holm, verdict`` (difference = entry − built-in; verdict ``better``,
    ``worse`` or ``not separated``)."""


def _user_policy(kind: str, params: dict[str, Any]) -> tuple[str, ...]:
    from impactbandits.policies.names import build_policy
    from impactbandits.usercode import reporting

    with reporting({"policy": (kind, params)}, "building the policy", "policy"):
        policy = build_policy(kind, params)
    return tuple(policy.action_kinds)


def enter(
    kind: str,
    params: dict[str, Any],
    label: str,
    stored: StoredScores,
    bench: ExperimentSpec,
    run: Any,
) -> Entry:
    """Run the policy ``kind`` (with ``params``, shown as ``label``) on every benchmark setting
    it fits and rank it against ``stored``. ``run(spec) -> run_dir`` runs an experiment (the
    command line passes its backend options)."""
    import pandas as pd

    from impactbandits.experiments.leaderboard import ranked
    from impactbandits.experiments.spec import ExperimentSpec
    from impactbandits.experiments.tidy import tidy_table

    builtin = set(stored.table["policy"].unique())
    if label in builtin:
        raise SpecError("label", f"{label!r} is a built-in policy's name; choose another label")
    action_kinds = _user_policy(kind, params)
    labels = fitting_settings(bench, action_kinds)
    if not labels:
        raise SpecError(
            "policy",
            f"{kind} plays {', '.join(action_kinds)} actions; no benchmark setting has them "
            "(the settings have discrete or simplex actions)",
        )
    _check_current(stored, bench, labels)
    envs = [e for e in bench.environments if e.label in labels]
    spec = ExperimentSpec.create(
        name=bench.name + "-entry",
        description=f"{label} entered into the benchmark",
        environments=[
            {"kind": e.kind, "label": e.label, **e.params}
            | ({"oracle": e.oracle} if e.oracle else {})
            for e in envs
        ],
        policies=[{"kind": kind, "label": label, **params}],
        horizons=list(bench.horizons),
        seeds=bench.seeds,
        seed=bench.seed,
        checkpoints=bench.checkpoints,
    )
    run_dir = Path(run(spec))
    mine = _final_scores(tidy_table(run_dir))
    theirs = stored.table[stored.table["environment"].isin(labels)]
    theirs = theirs[theirs["seed"] < bench.seeds]
    table = pd.concat([theirs, mine], ignore_index=True).assign(time=lambda t: t["horizon"])
    board, every = ranked(table)
    rows = []
    for _, pair in every.iterrows():
        if label not in (pair.policy_a, pair.policy_b):
            continue
        sign = 1.0 if pair.policy_a == label else -1.0
        other = pair.policy_b if sign > 0 else pair.policy_a
        low, high = sorted((sign * pair.ci_low, sign * pair.ci_high))
        mean = sign * pair.mean_difference
        verdict = "not separated"
        if pair.significant:
            verdict = "better" if mean < 0 else "worse"
        rows.append(
            {
                "family": pair.family,
                "horizon": int(pair.horizon),
                "policy": other,
                "mean_difference": mean,
                "ci_low": low,
                "ci_high": high,
                "seeds": int(pair.seeds),
                "p_holm": float(pair.p_holm),
                "verdict": verdict,
            }
        )
    comparisons = pd.DataFrame(
        rows,
        columns=[
            "family",
            "horizon",
            "policy",
            "mean_difference",
            "ci_low",
            "ci_high",
            "seeds",
            "p_holm",
            "verdict",
        ],
    )
    return Entry(run_dir, label, board, comparisons)
