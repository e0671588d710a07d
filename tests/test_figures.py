"""Every registered figure runs (smoke scale), renders its PNGs, and reports regret everywhere."""

from __future__ import annotations

import pytest

from impactbandits import run_experiment, tidy_table
from impactbandits.experiments.figures import FIGURES, get_figure
from impactbandits.experiments.report import write_report


def smoke(spec):
    """The quick spec cut to its first environment, three horizons and two seeds."""
    first = spec.environments[0]
    policies = [
        p.model_copy(update={"environments": None}) for p in spec.policies if p.runs_on(first.label)
    ]
    return spec.replace(
        environments=[first], policies=policies, horizons=list(spec.horizons[:3]), seeds=2
    )


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_figure_runs_at_smoke_scale(tmp_path, name):
    figure = get_figure(name)
    quick = figure.build(True)
    full = figure.build(False)
    assert quick.store_key() != full.store_key()
    assert max(quick.horizons) <= max(full.horizons) and quick.seeds <= full.seeds
    spec = smoke(quick)
    run_experiment(spec, tmp_path, backend="serial")
    table = tidy_table(tmp_path)
    assert len(table) == len(spec.policies) * len(spec.horizons) * spec.seeds
    assert table["optimum"].notna().all() and table["regret"].notna().all()
    pngs = figure.render(tmp_path) if figure.render else []
    report = write_report(tmp_path, extra_figures=pngs)
    assert report.is_file()
    assert all(p.is_file() and p.stat().st_size > 5000 for p in pngs)


@pytest.mark.parametrize(
    "name", ["patil-heidari", "patil-random", "patil-potential", "patil-lower-bound"]
)
def test_patil_figures_at_quick_scale(tmp_path, name):
    figure = get_figure(name)
    spec = figure.build(True)
    run_experiment(spec, tmp_path, backend="process", workers=2)
    table = tidy_table(tmp_path)
    assert (
        table["competitive_ratio"].notna().all() and (table["competitive_ratio"] >= 1 - 1e-9).all()
    )
    pngs = figure.render(tmp_path)
    assert pngs and all(p.is_file() and p.stat().st_size > 5000 for p in pngs)
