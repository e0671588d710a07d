"""Lindner et al. (2021)'s recommender instances A, B, C are the authors' (paper's) instances.

The paper's recommender figures (Fig. 3b, Figs 14–16) come from the authors' code
(github.com/david-lindner/single-peaked-bandits, ``experiments.py``): experiments
``recommender_4_{1,2,3}`` are ``RecommenderSystemBandit.get_random(name, 3000, 4, seed=s)`` for
s = 1, 2, 3, which seed the legacy global ``np.random`` state with s and draw, arm by arm,
``np.random.choice([0, 0.5], p=[0.2, 0.8]) * np.random.random()``, ``0.5 * np.random.random()``,
``0.9 + 0.1 * np.random.random()``, ``0.2 * np.random.random()``.

The pinned values below were measured by running the authors' code in their environment
(``bash benchmarks/fidelity/authors_env.sh lindner``; numpy 1.23.5): ``get_random(f"r{s}", 3000,
4, seed=s)`` after an unrelated ``np.random.seed(12345)``, then ``arm(m)`` of each
``noise_free_arms`` entry for m = 1..3000. Our curves matched their full 4 × 3000 arrays
bit for bit (and the 2-arm ``recommender_2_{1,2,3}`` arrays too); the slow test below repeats
that comparison when the authors' environment is present.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from impactbandits.envs.recommender import (
    RECOMMENDER_INSTANCES,
    RECOMMENDER_SELECTED_INSTANCES,
    recommender_curves,
    recommender_instance,
    recommender_parameters,
)
from impactbandits.envs.rested_families import RecommenderBandit
from impactbandits.errors import SpecError

# instance → {pull m: f_1(m)..f_4(m)}, from the authors' code (see the module docstring).
AUTHORS_VALUES: dict[str, dict[int, list[float]]] = {
    "A": {  # seed 1
        2: [0.01062438390069277, 0.1623576900124807, 0.022878045217804645, 0.1569547588547969],
        10: [0.0850231484425398, 0.728496552911104, 0.19199092438420232, 0.8570051295835018],
        100: [0.34136549658315696, 0.007188134704232673, 0.9810524259161431, 0.18147425635149103],
        3000: [
            0.3601622467210781,
            3.1389873976982645e-81,
            0.07620559456521935,
            0.12423793682278556,
        ],
    },
    "B": {  # seed 2
        2: [0.182713138053377, 0.15971602499468293, 0.07377633085739344, 0.04137511112956261],
        10: [0.9210544586243221, 0.869874098692148, 0.4822226932910892, 0.3288438692577808],
        100: [0.028876196220739943, 0.08959249190286737, 0.35092582939279626, 0.9067776938627614],
        3000: [0.00909567392777468, 0.055699477082293794, 0.26457104713852025, 0.07063042674005868],
    },
    "C": {  # seed 3
        2: [0.2015710852102785, 0.09932852983631144, 0.2637132103470936, 0.20438019892096737],
        10: [0.7914839695641334, 0.4272040653117892, 1.0, 0.957671210035919],
        100: [0.36151616998481306, 0.06356676898073782, 0.002517316275884855, 0.016333925858781607],
        3000: [0.3540739113090525, 0.0627926552319182, 1.216628085983306e-97, 0.009435826191539029],
    },
}
# The pull at which each arm peaks (first maximum), from the same run of the authors' code.
AUTHORS_PEAK_PULL = {"A": [1125, 13, 123, 18], "B": [15, 17, 28, 66], "C": [12, 12, 10, 13]}

REPO = Path(__file__).resolve().parents[1]
AUTHORS_PYTHON = REPO / "benchmarks/fidelity/.authors/lindner/venv/bin/python"
AUTHORS_SRC = REPO / "benchmarks/fidelity/.authors/lindner/src/src"


def test_paper_instances_are_the_authors_seeds_1_2_3() -> None:
    assert RECOMMENDER_INSTANCES == {"A": 1, "B": 2, "C": 3}


@pytest.mark.parametrize("name", ["A", "B", "C"])
def test_paper_instances_match_the_authors_code(name: str) -> None:
    curves = recommender_instance(name)  # the default instance set is the paper's
    assert curves.shape == (4, 3000)
    for pull, values in AUTHORS_VALUES[name].items():
        np.testing.assert_allclose(curves[:, pull - 1], values, rtol=1e-12, atol=1e-300)
    assert (np.argmax(curves, axis=1) + 1).tolist() == AUTHORS_PEAK_PULL[name]
    # The environment the figures use is built from the same curves.
    env = RecommenderBandit(name)
    np.testing.assert_array_equal(env.curves, curves)


def _authors_recipe(n_arms: int, seed: int) -> np.ndarray:
    """The authors' draw order, written out with RandomState.choice as in their code."""
    state = np.random.RandomState(seed)
    rows = []
    for _ in range(n_arms):
        value = state.choice([0, 0.5], p=[0.2, 0.8]) * state.random_sample()
        rows.append(
            [
                value,
                0.5 * state.random_sample(),
                0.9 + 0.1 * state.random_sample(),
                0.2 * state.random_sample(),
            ]
        )
    return np.array(rows)


@pytest.mark.parametrize(("n_arms", "seed"), [(4, 1), (4, 2), (4, 3), (2, 1), (7, 11), (25, 0)])
def test_legacy_sampler_follows_the_authors_draw_order(n_arms: int, seed: int) -> None:
    np.testing.assert_array_equal(
        recommender_parameters(n_arms, seed), _authors_recipe(n_arms, seed)
    )
    # Arm by arm: the first arms do not depend on how many arms are drawn (the authors' 2-arm
    # instances recommender_2_s are the first two arms of recommender_4_s).
    np.testing.assert_array_equal(
        recommender_parameters(2, seed), recommender_parameters(n_arms, seed)[:2]
    )


def test_legacy_sampler_draws_value_zero_with_probability_0_2() -> None:
    values = recommender_parameters(5000, 4)[:, 0]
    assert np.mean(values == 0.0) == pytest.approx(0.2, abs=0.02)  # binomial sd ≈ 0.006


def test_selected_instances_are_kept_as_an_option() -> None:
    assert RECOMMENDER_SELECTED_INSTANCES == {"A": 2, "B": 4, "C": 5}
    for name, seed in RECOMMENDER_SELECTED_INSTANCES.items():
        selected = recommender_instance(name, instance_set="selected")
        np.testing.assert_array_equal(selected, recommender_curves(4, 3000, seed, "generator"))
        env = RecommenderBandit(name, instance_set="selected", length=500)
        np.testing.assert_array_equal(env.curves, selected[:, :500])
        assert not np.allclose(selected, recommender_instance(name))


def test_explicit_seed_uses_the_chosen_sampler() -> None:
    np.testing.assert_array_equal(RecommenderBandit(None, seed=2).curves, recommender_instance("B"))
    np.testing.assert_array_equal(
        RecommenderBandit(None, seed=4, sampler="generator").curves,
        recommender_instance("B", instance_set="selected"),
    )


def test_invalid_instance_inputs() -> None:
    with pytest.raises(SpecError, match="instance_set"):
        recommender_instance("A", instance_set="ours")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="instance"):
        recommender_instance("D")
    with pytest.raises(SpecError, match="sampler"):
        recommender_parameters(4, 1, "mt19937")  # type: ignore[arg-type]
    with pytest.raises(SpecError, match="seed"):
        recommender_parameters(4, -1)
    with pytest.raises(SpecError, match="seed"):
        recommender_parameters(4, 2**32)
    with pytest.raises(SpecError, match="instance_set"):
        RecommenderBandit(None, seed=3, instance_set="selected")


_AUTHORS_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from single_peaked_bandits.bandits import RecommenderSystemBandit
np.random.seed(12345)
rows = []
for seed in (1, 2, 3):
    bandit = RecommenderSystemBandit.get_random(f"r{seed}", 3000, 4, seed=seed)
    rows += [[arm(m) for m in range(1, 3001)] for arm in bandit.noise_free_arms]
np.save(sys.argv[2], np.array(rows))
"""


@pytest.mark.slow
@pytest.mark.skipif(not AUTHORS_PYTHON.exists(), reason="authors' environment not set up")
def test_paper_instances_equal_the_authors_arrays_bit_for_bit(tmp_path: Path) -> None:
    """Run the authors' code (their venv, as a subprocess) and compare the full arrays."""
    out = tmp_path / "authors.npy"
    subprocess.run(
        [str(AUTHORS_PYTHON), "-c", _AUTHORS_SCRIPT, str(AUTHORS_SRC), str(out)],
        check=True,
        timeout=300,
        stdout=sys.stderr,
    )
    authors = np.load(out).reshape(3, 4, 3000)
    for i, name in enumerate("ABC"):
        np.testing.assert_array_equal(recommender_instance(name), authors[i])
