"""Annotated parameter types shared by components (validated by pydantic from signatures), and
:class:`RequiredWhen`, the declaration of a parameter that another parameter's value makes
required."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

__all__ = [
    "NonNegativeFloat",
    "PositiveFloat",
    "PositiveInt",
    "Probability",
    "RequiredWhen",
    "UnitInterval",
]

Probability = Annotated[float, Field(ge=0.0, le=1.0, description="a probability in [0, 1]")]
UnitInterval = Probability
PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


@dataclass(frozen=True, init=False, repr=False)
class RequiredWhen:
    """Annotation metadata: the parameter is required when parameter ``param`` has one of
    ``values`` (``None``: when ``param`` is not given); its default serves the other cases::

        high: Annotated[list[Probability] | None, RequiredWhen("family", "police")] = None
        means: Annotated[list[float] | None, RequiredWhen("n_arms", None)] = None

    A declaration for readers: ``impactbandits describe`` shows it (``required when family =
    'police'``), in its text and its JSON. Validation ignores it (pydantic skips metadata it
    does not know); the component's constructor checks the requirement, as before, and the
    tests hold the two together."""

    param: str
    values: tuple[Any, ...]

    def __init__(self, param: str, *values: Any) -> None:
        if not values:
            raise TypeError("RequiredWhen needs at least one value of the other parameter")
        object.__setattr__(self, "param", param)
        object.__setattr__(self, "values", values)

    def __repr__(self) -> str:
        return f"RequiredWhen({', '.join(repr(v) for v in (self.param, *self.values))})"

    def __str__(self) -> str:
        """``required when family = 'police'``, ``required when family = 'linear' or
        'concave'``, ``required when n_arms is not given``."""
        given = [v for v in self.values if v is not None]
        parts = [f"{self.param} = {' or '.join(repr(v) for v in given)}"] if given else []
        if len(given) < len(self.values):
            parts.append(f"{self.param} is not given")
        return "required when " + " or ".join(parts)

    def applies(self, params: dict[str, Any]) -> bool:
        """Whether the requirement holds for these (complete, validated) parameter values."""
        return params.get(self.param) in self.values
