"""Error types raised at the library's boundary, and the one way a misspelt name is answered.

Every error a user can provoke with bad input is a :class:`SpecError`: one line that names the
offending field and what is allowed. The CLI prints it and exits with status 2. An input with
several problems (a spec with a bad parameter in two components) is one :class:`SpecErrors`,
still one line per problem, each naming its field. A name that is not known (a figure, a
component, a parameter) is answered with the closest known ones (:func:`did_you_mean`).
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Sequence


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

    @property
    def errors(self) -> tuple[SpecError, ...]:
        """Every problem, one line each (this one alone; :class:`SpecErrors` has several)."""
        return (self,)

    def within(self, prefix: str) -> SpecError:
        """The same error (same type, same details) for a field inside ``prefix``:
        ``means[1]`` within ``environments[0]`` is ``environments[0].means[1]``."""
        if not prefix:
            return self
        moved = copy.copy(self)
        moved.field = f"{prefix}.{self.field}" if self.field else prefix
        moved.args = (f"{moved.field}: {moved.message}",)
        return moved


class SpecErrors(SpecError):
    """Several problems of one input: ``str()`` has one line per problem, each naming its
    field (:attr:`errors`); ``field`` and ``message`` are the first one's."""

    def __init__(self, errors: Sequence[SpecError]) -> None:
        flat = tuple(one for error in errors for one in error.errors)
        if not flat:
            raise ValueError("SpecErrors needs at least one error")
        super().__init__(flat[0].field, flat[0].message)
        self._errors = flat
        self.args = ("\n".join(str(error) for error in flat),)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self._errors,))

    @property
    def errors(self) -> tuple[SpecError, ...]:
        return self._errors

    @property
    def details(self) -> str:
        """The recorded tracebacks of the problems that have one (user code that raised)."""
        return "\n".join(d for d in (getattr(e, "details", "") for e in self._errors) if d)

    def within(self, prefix: str) -> SpecError:
        return SpecErrors([error.within(prefix) for error in self._errors])


def combined(errors: Iterable[SpecError]) -> SpecError | None:
    """``None`` for no error, the error itself for one, a :class:`SpecErrors` for several
    (each reported once, in order)."""
    unique: dict[str, SpecError] = {}
    for error in errors:
        for one in error.errors:
            unique.setdefault(str(one), one)
    found = list(unique.values())
    if not found:
        return None
    return found[0] if len(found) == 1 else SpecErrors(found)


class SpecTypeError(SpecError, TypeError):
    """An argument of the wrong type given to a public function (``tidy_table(123)``): a
    :class:`SpecError` (one line naming the argument and what is allowed) that is also a
    :class:`TypeError`, as Python code expects of a wrong type."""


class StoreError(ImpactBanditsError):
    """The results store cannot be used as asked (wrong path, foreign spec, corrupt file)."""


class SpecWarning(UserWarning):
    """A spec that runs but probably not as meant (e.g. a noise-free algorithm on a noisy
    environment); the CLI prints it as one ``warning: ...`` line."""


def close_names(name: object, known: Iterable[str], limit: int = 3) -> list[str]:
    """The names of ``known`` close to ``name``, the closest first (difflib's similarity ratio
    of at least 0.6, case ignored)."""
    if not isinstance(name, str) or not name:
        return []
    folded: dict[str, str] = {}
    for known_name in sorted(set(known)):
        folded.setdefault(known_name.lower(), known_name)
    close = difflib.get_close_matches(name.lower(), list(folded), n=limit, cutoff=0.6)
    return [folded[c] for c in close]


def did_you_mean(name: object, known: Iterable[str], limit: int = 3) -> str:
    """`` (did you mean 'ucb1'?)`` when ``name`` is close to some of ``known``
    (:func:`close_names`), else ``""``."""
    close = close_names(name, known, limit)
    if not close:
        return ""
    shown = [repr(c) for c in close]
    listed = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    return f" (did you mean {listed}?)"


def unknown_name(
    what: str, name: object, known: Iterable[str], *, extra: str = "", where: str = ""
) -> str:
    """The message for a name that is not among ``known``: with close names, ``unknown figure
    'lindner-fig11' (did you mean 'lindner-fig1'?)`` and ``where`` (how to see them all, e.g.
    ``"`impactbandits list figures` shows them all"``); without, every name (``extra`` ends
    that list, e.g. ``" or 'module:Class'"``)."""
    names = sorted(set(known))
    hint = did_you_mean(name, names)
    if hint:
        return f"unknown {what} {name!r}{hint}" + (f"; {where}" if where else "")
    return f"unknown {what} {name!r}; allowed: {', '.join(names) or 'none'}{extra}"
