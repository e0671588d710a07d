"""How the ``impactbandits`` command meets bad input and failures: one line and an exit status;
and how much it says on stderr.

Every command is wrapped in :func:`_guard` (an error becomes ``error: <message>`` on stderr and
exit status 2 for bad input, 1 for a bug of the library, 130 for Ctrl-C; ``--traceback`` prints
the full trace first), and the commands that read or write a store in :func:`_store_messages`
(the store's warnings as ``warning: ...`` lines, a full disk as one line). The command group
:class:`_Group` turns click's usage errors into the same one-line form (:func:`_usage_line`),
and :class:`_PositiveInt` is the option type of counts. :class:`Verbosity` is the group's
``-q``/``-v`` choice, which the group puts in click's context object for its commands
(:func:`verbosity` reads it): ``error:`` lines are always printed; ``-q`` leaves out the
informational lines, the ``warning:`` lines and the progress bar; ``-v`` adds detail (the
requested backend, the session's timings). The package's ``__init__`` defines the commands.
"""

from __future__ import annotations

import os
import sys
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import TYPE_CHECKING, Any, TextIO

import click

from impactbandits.errors import ImpactBanditsError, SpecWarning, did_you_mean

if TYPE_CHECKING:
    from impactbandits.experiments.runner import Interrupted

    _IntParamType = click.ParamType[int]  # generic from click 8.4 on
else:
    _IntParamType = click.ParamType  # click >= 8.1 at run time


class _PositiveInt(_IntParamType):
    """An integer ≥ 1 (shown as ``INTEGER>=1`` in ``--help``)."""

    name = "integer>=1"

    def get_metavar(self, *args: Any, **kwargs: Any) -> str:
        return "INTEGER>=1"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = int(str(value).strip())
            except ValueError:
                self.fail(f"must be a positive integer, got {value!r}", param, ctx)
        if number < 1:
            self.fail(f"must be a positive integer, got {value!r}", param, ctx)
        return number


_POSITIVE = _PositiveInt()


class _Choice(click.Choice):  # type: ignore[type-arg]
    """``click.Choice`` whose refusal names the close choices: ``what: 'figure' is not one of
    'environments', … (did you mean 'figures'?)``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            hint = did_you_mean(value, [str(c) for c in self.choices])
            if not hint:
                raise
            allowed = ", ".join(repr(str(c)) for c in self.choices)
            self.fail(f"{value!r} is not one of {allowed}{hint}", param, ctx)


def _nonempty_path(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Option callback: refuse an empty path (``--out ""``), which would silently mean the
    current directory."""
    if value is not None and not str(value).strip():
        wanted = {"DIR": "directory", "FILE": "file name"}.get(param.metavar or "", "path")
        raise click.BadParameter(
            f"must not be empty (an empty path means the current directory); give a {wanted}",
            ctx=ctx,
            param=param,
        )
    return value


@dataclass(frozen=True)
class Verbosity:
    """How much a command prints on stderr (the group's ``-q``/``-v``; the results on stdout
    and the ``error:`` lines are never left out)."""

    level: int = 0
    """-1: ``--quiet``, 0: the default, 1: ``--verbose``."""

    @property
    def quiet(self) -> bool:
        return self.level < 0

    @property
    def verbose(self) -> bool:
        return self.level > 0

    def info(self, line: str) -> None:
        """An informational line (what was computed, where it went): not with ``-q``."""
        if not self.quiet:
            click.echo(line, err=True)

    def detail(self, line: str) -> None:
        """A line of detail (timings, the backend): only with ``-v``."""
        if self.verbose:
            click.echo(line, err=True)

    def warning(self, message: str) -> None:
        """``warning: <message>``: not with ``-q``."""
        if not self.quiet:
            click.echo(f"warning: {message}", err=True)


def verbosity() -> Verbosity:
    """The running command's :class:`Verbosity`, from click's context object (the default
    outside a command, or when a command is invoked without the group)."""
    ctx = click.get_current_context(silent=True)
    found = ctx.find_object(Verbosity) if ctx is not None else None
    return found if found is not None else Verbosity()


def _fail(message: str, code: int = 2) -> None:
    """``error: <line>`` for each line of ``message`` (a spec with several problems has one
    line per problem, :class:`~impactbandits.errors.SpecErrors`), then exit with ``code``."""
    for line in message.splitlines() or [""]:
        click.echo(f"error: {line}", err=True)
    sys.exit(code)


def _answered_interrupt() -> None:
    """Forget that a Ctrl-C left an ``exec`` of a string unanswered, now that it is answered.

    CPython keeps one process-wide flag for a ``KeyboardInterrupt`` that ends any code run from
    a string (``exec(str)``: SciPy's imports run one), and a process whose flag is set at exit
    re-raises SIGINT and dies by it (status -2) whatever ``sys.exit`` asked. A Ctrl-C that lands
    in such an import during a run would so turn the documented 130 into a signal death.
    Evaluating any code from a string resets the flag; only this handler, which answered the
    interrupt, does so."""
    exec("")  # a constant empty string: resets the flag, runs nothing


#: Exit status when the reader of standard output went away (``| head``): 128 + SIGPIPE, what a
#: shell reports for a command a broken pipe stopped.
BROKEN_PIPE = 141


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (Linux and macOS ``poll``)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), or no real stdout
        return False


def _stop_quietly() -> None:
    """Stop after the reader of standard output went away: no message (nobody reads it), and
    standard output pointed at ``/dev/null`` so the interpreter's final flush cannot fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(BROKEN_PIPE)


def _details(exc: BaseException) -> str:
    """The full traceback: the one recorded where the error happened (e.g. in a worker
    process, for user code), else this process's."""
    recorded = getattr(exc, "details", "")
    return recorded or "".join(traceback.format_exception(exc))


def _interrupted() -> tuple[type[Interrupted], ...]:
    """The runner's :class:`~impactbandits.experiments.runner.Interrupted` (with
    ``Terminated``), or nothing when the runner was never imported — then nothing could have
    raised it, and a command that runs nothing (``list``, ``describe``) does not import the
    runner to find out."""
    runner = sys.modules.get("impactbandits.experiments.runner")
    return () if runner is None else (runner.Interrupted,)


def _guard(function: Callable[..., Any]) -> Callable[..., Any]:
    """Turn every error into a one-line message and exit status (2: bad input, including
    user code named by the spec that raised, or a bad ``IMPACTBANDITS_*`` environment variable,
    checked first by :func:`impactbandits.settings.check`; 1: a bug of the library; 130:
    Ctrl-C), and add ``--traceback`` to print the full trace first."""

    @wraps(function)
    def wrapper(*args: Any, traceback: bool = False, **kwargs: Any) -> Any:
        from impactbandits import settings
        from impactbandits.usercode import InternalError, internal

        try:
            settings.check()  # a bad environment variable, before anything runs
            return function(*args, **kwargs)
        except _interrupted() as exc:  # (evaluated only when something was raised)
            _answered_interrupt()
            _fail(str(exc), exc.exit_status)  # 130 for Ctrl-C, 143 for SIGTERM
        except KeyboardInterrupt:
            _answered_interrupt()
            _fail("interrupted", 130)
        except Exception as exc:
            if isinstance(exc, BrokenPipeError) and _stdout_closed():  # not a worker's pipe
                _stop_quietly()
            if traceback:
                click.echo(_details(exc), err=True)
            if isinstance(exc, InternalError):
                _fail(str(exc), 1)
            elif isinstance(exc, ImpactBanditsError):
                _fail(str(exc))
            else:  # a bug outside any guarded block: still one line, the trace on request
                _fail(str(internal(exc, f"in {function.__name__}")), 1)

    return click.option(
        "--traceback",
        is_flag=True,
        help="On an error, print the full traceback (also of user code in worker processes).",
    )(wrapper)


def _store_messages(function: Callable[..., Any]) -> Callable[..., Any]:
    """Print each :class:`~impactbandits.experiments.store.StoreWarning` and
    :class:`~impactbandits.errors.SpecWarning` once, as it happens, as ``warning: ...`` on
    stderr (none with ``-q``), and turn a full disk (``ENOSPC``) into a one-line error."""

    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from impactbandits.experiments.store import DiskFullError, StoreWarning
        from impactbandits.experiments.store_files import is_disk_full

        ours = (StoreWarning, SpecWarning)
        seen: set[str] = set()
        original = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if not issubclass(category, ours):
                original(message, category, filename, lineno, file, line)
            elif str(message) not in seen:
                seen.add(str(message))
                verbosity().warning(str(message))

        with warnings.catch_warnings():
            for category in ours:
                warnings.simplefilter("always", category)
            warnings.showwarning = show
            try:
                return function(*args, **kwargs)
            except OSError as exc:
                if not is_disk_full(exc):
                    raise
                where = f" writing {exc.filename}" if exc.filename else ""
                raise DiskFullError(
                    f"output: disk full{where} ({exc.strerror}); free space and run the same "
                    "command again"
                ) from None

    return wrapper


def _usage_line(exc: click.UsageError) -> str:
    """A click usage error (bad option value, unknown option, missing argument) as one line
    naming the field and what is allowed, like every other bad input."""
    param = getattr(exc, "param", None)
    where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
    if isinstance(exc, click.BadParameter) and param is not None:
        option = param.param_type_name == "option"
        field = param.opts[0].lstrip("-") if option else str(param.name)
        if isinstance(exc, click.MissingParameter):
            return f"{field}: missing{where}"
        return f"{field}: {exc.message.rstrip('.')}" + (f" ({'/'.join(param.opts)})" * option)
    return f"{exc.format_message().rstrip('.')}{where}"


class _Group(click.Group):
    """The command group; usage errors become ``error: <field>: ...`` lines (exit status 2)
    instead of click's three-line usage message."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            code = super().main(*args, **kwargs)
        except click.UsageError as exc:
            _fail(_usage_line(exc))
        except click.Abort:
            _fail("interrupted", 130)
        if isinstance(code, int) and code:  # --help / --version return 0
            sys.exit(code)
        return code
