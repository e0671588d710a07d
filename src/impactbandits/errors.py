"""Error types raised at the library's boundary.

Every error a user can provoke with bad input is a :class:`SpecError`: one line that names the
offending field and what is allowed. The CLI prints it and exits with status 2.
"""

from __future__ import annotations


class ImpactBanditsError(Exception):
    """Base class of the library's own errors."""


class SpecError(ImpactBanditsError, ValueError):
    """Invalid user input: ``field`` names where, ``message`` says what is allowed."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}" if field else message)

    def __reduce__(self) -> tuple[object, ...]:  # picklable across worker processes
        return (type(self), (self.field, self.message))


class StoreError(ImpactBanditsError):
    """The results store cannot be used as asked (wrong path, foreign spec, corrupt file)."""


class SpecWarning(UserWarning):
    """A spec that runs but probably not as meant (e.g. a noise-free algorithm on a noisy
    environment); the CLI prints it as one ``warning: ...`` line."""
