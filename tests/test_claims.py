"""Paper claims as checks (impactbandits.experiments.claims): the status rules, the paired
differences (against values computed by hand) and the rows a check reads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from impactbandits.experiments.claims import (
    Claim,
    Verdict,
    below_every,
    ends,
    final,
    not_above_any,
    paired_difference,
    significant,
    status,
)
from impactbandits.experiments.figures import FIGURES, get_figure

YES, NO = Verdict(True, "x"), Verdict(False, "x")


def test_status_rules():
    a, b = Claim("a", lambda t: YES), Claim("b", lambda t: YES)
    b_option = Claim("b", lambda t: YES, option="--variant authors-code")
    gone = Claim("c", unavailable="the paper's figure is not public")
    assert status([a, b], [YES, YES]) == "reproduced"
    assert status([a, b], [YES, NO]) == "not-reproduced"
    assert status([a, b, b_option], [YES, NO, YES]) == "reproduced-with-option"
    assert status([a, b, b_option], [YES, NO, NO]) == "not-reproduced"
    assert status([a, b, b_option], [NO, NO, YES]) == "not-reproduced"  # a has no option
    assert status([gone], [None]) == "not-checkable"
    assert status([a, gone], [YES, None]) == "reproduced"


def _table():
    # two environments, two policies, three seeds; horizons 10 and 20 (time = horizon rows
    # and one earlier checkpoint each)
    rows = []
    values = {("e1", "A"): [1.0, 2.0, 3.0], ("e1", "B"): [2.0, 2.5, 5.0],
              ("e2", "A"): [0.0, 0.0, 1.0], ("e2", "B"): [1.0, 3.0, 1.5]}  # fmt: skip
    for (env, policy), per_seed in values.items():
        for seed, v in enumerate(per_seed):
            for horizon in (10, 20):
                rows.append((env, policy, horizon, horizon // 2, seed, -1.0))
                rows.append((env, policy, horizon, horizon, seed, v * horizon / 20))
    return pd.DataFrame(
        rows, columns=["environment", "policy", "horizon", "time", "seed", "per_step_regret"]
    )


def test_final_reads_the_end_of_the_largest_horizon():
    rows = final(_table())
    assert len(rows) == 12 and set(rows["horizon"]) == {20} and set(rows["time"]) == {20}
    assert set(final(_table(), 10)["time"]) == {10}


def test_paired_difference_by_hand():
    gap = paired_difference(final(_table()), "per_step_regret", "A", "B")
    # differences A − B per (environment, seed): −1, −0.5, −2, −1, −3, −0.5
    diffs = np.array([-1.0, -0.5, -2.0, -1.0, -3.0, -0.5])
    assert gap.n == 6 and gap.mean == pytest.approx(diffs.mean())
    # t_{0.975, 5} = 2.570581836614739 (tables), sd by hand
    sd = np.sqrt(((diffs - diffs.mean()) ** 2).sum() / 5)
    assert gap.half == pytest.approx(2.570581836614739 * sd / np.sqrt(6))
    assert gap.below
    assert not paired_difference(final(_table()), "per_step_regret", "B", "A").below


def test_below_every_environment_by_hand():
    rows = final(_table())
    # A − B per seed: e1 −1, −0.5, −2; e2 −1, −3, −0.5. Pooled (n = 6) A is below B (see
    # above), but per environment n = 3: e1's mean −7/6 with half-width
    # t_{0.975, 2} = 4.302653 × sd 0.764 / √3 = 1.90 reaches above 0, so not below in every one
    ok, text = below_every(rows, "per_step_regret", "A", ["B"])
    assert not ok and text.startswith("e1: B -1.17 ± 1.9") and "; e2: B " in text
    shifted = rows.copy()
    shifted.loc[shifted["policy"] == "B", "per_step_regret"] = (
        shifted.loc[shifted["policy"] == "A", "per_step_regret"].to_numpy() + 1.0
    )  # B = A + 1 exactly: a zero-width interval below 0 in each environment
    assert below_every(shifted, "per_step_regret", "A", ["B"])[0]
    one = shifted[shifted["environment"] == "e1"]
    ok, text = below_every(one, "per_step_regret", "A", ["B"])
    assert ok and text.startswith("B -1 ")  # one environment: no label
    assert not below_every(shifted, "per_step_regret", "B", ["A"])[0]


def test_not_above_any_allows_ties_and_flags_a_significant_excess():
    rows = final(_table())
    # B − A per seed is +1, +0.5, +2 (e1) and +1, +3, +0.5 (e2): B above A in e2 only? e2's
    # mean 1.5, half-width 4.303 × sd 1.323 / √3 = 3.29: not significant; pooled per
    # environment neither is, so B is "not above" A anywhere at 95 %
    assert not_above_any(rows, "per_step_regret", "B", ["A"])[0]
    tied = rows.copy()
    a = tied["policy"] == "A"
    tied.loc[tied["policy"] == "B", "per_step_regret"] = (
        tied.loc[a, "per_step_regret"].to_numpy() + 1e-16
    )  # equal runs up to the last bits: a tie, not an excess
    assert not_above_any(tied, "per_step_regret", "B", ["A"])[0]
    tied.loc[tied["policy"] == "B", "per_step_regret"] = (
        tied.loc[a, "per_step_regret"].to_numpy() + 0.25
    )  # B = A + 0.25 exactly: above with a zero-width interval, in both environments
    ok, text = not_above_any(tied, "per_step_regret", "B", ["A"])
    assert not ok and text.startswith("e1: B minus A 0.25 ± 0") and "; e2: " in text


def test_ends_keeps_one_last_row_per_run():
    rows = ends(_table())
    assert len(rows) == 24 and (rows["time"] == rows["horizon"]).all()


def test_significant_figures():
    assert significant(0.000624123) == "0.000624"
    assert significant(1234.5) == "1,230" and significant(-98765.0) == "-98,800"
    assert significant(12.345) == "12.3" and significant(3e-6) == "3.00e-06"
    assert significant(0.0) == "0" and significant(float("inf")) == "inf"


def test_every_figures_claims_are_well_formed():
    for name in FIGURES:
        figure = get_figure(name)
        for claim in figure.claims:
            assert claim.text.strip(), name
            assert (claim.check is None) == bool(claim.unavailable), (name, claim.text)
            assert claim.variant in figure.variants, (name, claim.text)


NOTED = [(n, v) for n in FIGURES for v in get_figure(n).notes]


def test_the_figures_the_ledger_finds_contradicting_their_paper_carry_notes():
    assert {n for n, _ in NOTED} >= {"lindner-gaussian", "cella-fig2"}


@pytest.mark.parametrize(("name", "variant"), NOTED)
def test_a_figure_that_contradicts_its_paper_says_so_on_its_face(tmp_path, name, variant):
    """The figure's PNGs (and so its report's headings) carry the variant's note."""
    from PIL import Image

    from impactbandits import run_experiment

    figure = get_figure(name)
    spec = figure.spec(True, variant).replace(seeds=1, horizons=(500,))
    run_experiment(spec, tmp_path, backend="serial")
    pngs = figure.draw(tmp_path, variant)
    assert pngs
    for png in pngs:
        title = Image.open(png).info["Title"]
        assert figure.notes[variant] in title
