"""Annotated parameter types shared by components (validated by pydantic from signatures): the
value domains, the upper bounds of size-like parameters (:class:`Size`), and the declarations
of parameters that depend on another one's value (:class:`RequiredWhen`, :class:`OnlyWhen`).

Size-like parameters — integers that size an array or a loop (arms, lengths, windows, plan
lengths, grid resolutions, delays, rounds) and the floats that become sizes or get squared
(noise scales) — have an upper bound derived from memory and time, each with its reason
(:data:`ARMS`, :data:`LENGTH`, :data:`WINDOW`, :data:`ROUNDS`, :data:`LOOKAHEAD`,
:data:`RESOLUTION`, :data:`DELAY`, :data:`RECOVERY`, :data:`LEVELS`, :data:`NOISE`): a value
above it is refused with a one-line error naming the parameter before anything is built,
instead of running out of memory or never finishing. Every bound is far above the values of
the registered figures (their largest: 50,000 tabulated pulls, 64 arms, windows of a few
hundred plays, lookahead 3, 1/ε = 20, horizons of 5·10⁵). ``impactbandits describe KIND``
shows the bounds with the other constraints.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any

import annotated_types
from pydantic import Field

__all__ = [
    "ARMS",
    "DELAY",
    "LENGTH",
    "LEVELS",
    "LOOKAHEAD",
    "MAX_ARMS",
    "MAX_DELAY",
    "MAX_LENGTH",
    "MAX_LEVELS",
    "MAX_LOOKAHEAD",
    "MAX_NOISE",
    "MAX_RECOVERY",
    "MAX_RESOLUTION",
    "MAX_ROUNDS",
    "MAX_WINDOW",
    "NOISE",
    "RECOVERY",
    "RESOLUTION",
    "ROUNDS",
    "WINDOW",
    "Arms",
    "Delay",
    "Length",
    "Lookahead",
    "NoiseScale",
    "NonNegativeFloat",
    "OnlyWhen",
    "PositiveFloat",
    "PositiveInt",
    "Probability",
    "RequiredWhen",
    "Resolution",
    "Rounds",
    "Size",
    "UnitInterval",
    "Window",
    "declares_size",
]

Probability = Annotated[float, Field(ge=0.0, le=1.0, description="a probability in [0, 1]")]
UnitInterval = Probability
PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


@dataclass(frozen=True)
class Size(annotated_types.Le, annotated_types.GroupedMetadata):
    """Annotation metadata of a size-like parameter: at most ``le``, because of ``reason``.

    pydantic validates it as ``Le(le)`` (a one-line error naming the parameter); ``describe``
    shows it as the parameter's upper bound, and a component that still runs out of memory
    (sizes that multiply: arms × length, a window derived from the horizon) is reported naming
    its size-like parameters (:func:`declares_size`)."""

    what: str = ""
    """What the parameter counts (``"arms"``, ``"tabulated pulls"``, …)."""
    reason: str = ""
    """Why the bound is where it is (memory, time, an equivalence)."""

    def __iter__(self) -> Iterator[object]:
        yield annotated_types.Le(self.le)


#: Most rounds of one run, and of a spec's horizons: at the compiled loops' 10⁶–10⁷ pulls per
#: CPU second, 10⁹ rounds take 100–1,000 CPU s per replication.
MAX_ROUNDS = 10**9
#: The bounds of :data:`ARMS`, :data:`LENGTH`, :data:`WINDOW`, :data:`LOOKAHEAD`,
#: :data:`RESOLUTION`, :data:`DELAY`, :data:`RECOVERY`, :data:`LEVELS` and :data:`NOISE` (their
#: reasons are there).
MAX_ARMS = 10_000
MAX_LENGTH = 10**8
MAX_WINDOW = 10**6
MAX_LOOKAHEAD = 20
MAX_RESOLUTION = 10_000
MAX_DELAY = 10**18
MAX_RECOVERY = 100_000
MAX_LEVELS = 1000
MAX_NOISE = 1e6

ARMS = Size(
    MAX_ARMS,
    "arms",
    "every result stores each arm's pulls at each checkpoint and the tidy table has a column "
    "per arm (pulls_0 … pulls_{K−1}): 10⁴ arms are 4 MB per replication at 50 checkpoints, and "
    "the per-round work of most policies is O(K)",
)
LENGTH = Size(
    MAX_LENGTH,
    "tabulated pulls",
    "a curve is tabulated in memory for every pull: 8 bytes per value and arm, 800 MB per arm "
    "at 10⁸ (a run's curves must cover its horizon)",
)
WINDOW = Size(
    MAX_WINDOW,
    "plays kept per replication",
    "the plays are kept per replication (16 bytes each: 16 MB at 10⁶, times the replications "
    "simulated together); a window longer than the run is the whole run",
)
ROUNDS = Size(
    MAX_ROUNDS,
    "rounds",
    "a run has at most 10⁹ rounds (the most a spec's horizons may be), so a larger number of "
    "rounds or pulls means the same as 10⁹",
)
LOOKAHEAD = Size(
    MAX_LOOKAHEAD,
    "rounds planned ahead",
    "a plan of d rounds is chosen among K^d arm sequences, at most 10⁶ of them (2²⁰ ≈ 10⁶: "
    "d ≤ 20 for any K ≥ 2)",
)
RESOLUTION = Size(
    MAX_RESOLUTION,
    "grid levels 1/ε",
    "the learners keep K·(1/ε) statistics per replication and search the ε-grid every round; "
    "the theory's 1/ε = (ηT/ln ηT)^(1/3) stays below 400 for T ≤ 10⁹",
)
DELAY = Size(
    MAX_DELAY,
    "rounds an arm is blocked",
    "the round an arm is free again (t + D) is a 64-bit integer; a delay of at least the "
    "horizon blocks the arm for the rest of the run, so every larger delay acts the same",
)
RECOVERY = Size(
    MAX_RECOVERY,
    "rounds of recovery",
    "the payoff f(τ) is tabulated for τ = 1 … the largest recovery delay, and the ghost "
    "oracle evaluates it there value by value (about 3 CPU s at 10⁵)",
)
LEVELS = Size(
    MAX_LEVELS,
    "levels z = 0 … z_max",
    "f(0 … z_max) is drawn from a Gaussian process: a (z_max + 1)² covariance matrix "
    "factorised in O(z_max³) time (about 4 CPU s at 1,000), and the GP learners work on the same "
    "grid",
)
NOISE = Size(
    MAX_NOISE,
    "a noise scale",
    "10⁶ times the unit range of the rewards; squared (variances) and summed over up to 10⁹ "
    "rounds, larger scales overflow floating point",
)

Arms = Annotated[int, Field(gt=0), ARMS]
Length = Annotated[int, Field(gt=0), LENGTH]
Window = Annotated[int, Field(gt=0), WINDOW]
Rounds = Annotated[int, Field(gt=0), ROUNDS]
Lookahead = Annotated[int, Field(gt=0), LOOKAHEAD]
Resolution = Annotated[int, Field(gt=0), RESOLUTION]
Delay = Annotated[int, Field(gt=0), DELAY]
NoiseScale = Annotated[float, Field(ge=0.0, allow_inf_nan=False), NOISE]
"""A noise standard deviation (σ ≥ 0); positive ones add ``Field(gt=0)``."""


def declares_size(metadata: Any) -> bool:
    """Whether a field's ``metadata`` (``FieldInfo.metadata``, or an annotation's arguments)
    declares a size-like parameter (a :class:`Size`)."""
    return any(isinstance(item, Size) for item in metadata)


@dataclass(frozen=True, init=False, repr=False)
class _Condition:
    """A parameter's dependence on the value of another parameter ``param`` (one of
    ``values``; ``None``: not given)."""

    param: str
    values: tuple[Any, ...]

    def __init__(self, param: str, *values: Any) -> None:
        if not values:
            raise TypeError(
                f"{type(self).__name__} needs at least one value of the other parameter"
            )
        object.__setattr__(self, "param", param)
        object.__setattr__(self, "values", values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(v) for v in (self.param, *self.values))})"

    def _values_text(self) -> str:
        """``family = 'police'``, ``family = 'linear' or 'concave'``, ``n_arms is not given``."""
        given = [v for v in self.values if v is not None]
        parts = [f"{self.param} = {' or '.join(repr(v) for v in given)}"] if given else []
        if len(given) < len(self.values):
            parts.append(f"{self.param} is not given")
        return " or ".join(parts)

    def applies(self, params: dict[str, Any]) -> bool:
        """Whether the condition holds for these (complete, validated) parameter values."""
        return params.get(self.param) in self.values


class RequiredWhen(_Condition):
    """Annotation metadata: the parameter is required when parameter ``param`` has one of
    ``values`` (``None``: when ``param`` is not given); its default serves the other cases::

        high: Annotated[list[Probability] | None, RequiredWhen("family", "police")] = None
        means: Annotated[list[float] | None, RequiredWhen("n_arms", None)] = None

    A declaration for readers: ``impactbandits describe`` shows it (``required when family =
    'police'``), in its text and its JSON. Validation ignores it (pydantic skips metadata it
    does not know); the component's constructor checks the requirement, as before, and the
    tests hold the two together."""

    def __str__(self) -> str:
        """``required when family = 'police'``, ``required when family = 'linear' or
        'concave'``, ``required when n_arms is not given``."""
        return "required when " + self._values_text()


class OnlyWhen(_Condition):
    """Annotation metadata: the parameter is used only when parameter ``param`` (a family, an
    instance) has one of ``values``; given with another value — and different from its default
    — it would be ignored, so validation refuses it, naming the family it belongs to::

        asymptotes: Annotated[list[Probability] | None, OnlyWhen("family", "saturating")] = None
    """

    def __str__(self) -> str:
        """``used only when family = 'saturating'``."""
        return "used only when " + self._values_text()
