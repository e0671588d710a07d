"""Policies (learning algorithms), batched over replications."""

from impactbandits.policies.classic import (
    EXP3,
    UCB1,
    EpsilonGreedy,
    ExploreThenCommit,
    Greedy,
    RoundRobin,
)

__all__ = ["EXP3", "UCB1", "EpsilonGreedy", "ExploreThenCommit", "Greedy", "RoundRobin"]
