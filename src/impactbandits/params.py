"""Annotated parameter types shared by components (validated by pydantic from signatures)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["NonNegativeFloat", "PositiveFloat", "PositiveInt", "Probability", "UnitInterval"]

Probability = Annotated[float, Field(ge=0.0, le=1.0, description="a probability in [0, 1]")]
UnitInterval = Probability
PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]
