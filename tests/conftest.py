"""Shared fixtures: small specs and helpers to run them."""

from __future__ import annotations

import pytest

from impactbandits import ExperimentSpec


def small_spec(**changes) -> ExperimentSpec:
    data = dict(
        name="small",
        environments=[
            {"kind": "bernoulli", "label": "b2", "means": [0.3, 0.7]},
            {"kind": "gaussian", "label": "g3", "n_arms": 3, "sigma": 0.5},
        ],
        policies=[
            {"kind": "ucb1"},
            {"kind": "exp3"},
            {"kind": "etc"},
            {"kind": "epsilon-greedy"},
        ],
        horizons=[20, 50, 120],
        seeds=6,
        checkpoints=8,
    )
    data.update(changes)
    return ExperimentSpec.create(**data)


@pytest.fixture
def spec() -> ExperimentSpec:
    return small_spec()


@pytest.fixture
def kernel_backend(monkeypatch) -> str:
    """The compiled loops on (``IMPACTBANDITS_KERNELS=jit``); skipped without numba."""
    from importlib.util import find_spec

    from impactbandits import kernels

    if find_spec("numba") is None:
        pytest.skip("numba not installed")
    monkeypatch.setenv(kernels.KERNELS_ENV, "jit")
    assert kernels.backend() == "jit"
    return "jit"
