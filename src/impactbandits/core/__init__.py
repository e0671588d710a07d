"""Core contracts: action spaces, feedback, randomness, environments, policies, simulation."""

from impactbandits.core.environment import (
    BatchedSimpleEnvironment,
    Environment,
    EnvironmentRandom,
    SimpleEnvironment,
)
from impactbandits.core.feedback import Feedback, Outcome
from impactbandits.core.policy import BatchedSimplePolicy, Policy, SimplePolicy
from impactbandits.core.random import BatchRNG, CommonNoise, stable_key
from impactbandits.core.simulate import Trajectory, simulate
from impactbandits.core.spaces import ActionSpace, Discrete, Simplex

__all__ = [
    "ActionSpace",
    "BatchRNG",
    "BatchedSimpleEnvironment",
    "BatchedSimplePolicy",
    "CommonNoise",
    "Discrete",
    "Environment",
    "EnvironmentRandom",
    "Feedback",
    "Outcome",
    "Policy",
    "SimpleEnvironment",
    "SimplePolicy",
    "Simplex",
    "Trajectory",
    "simulate",
    "stable_key",
]
