"""Environments: the dynamics of each setting."""

from impactbandits.envs.stationary import BernoulliBandit, GaussianBandit

__all__ = ["BernoulliBandit", "GaussianBandit"]
