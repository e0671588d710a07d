"""Files written into a run directory, never through a link placed there.

A run directory may come from someone else — copied, synced, unpacked from an archive — and any
name in it may be a symbolic link to a file or folder elsewhere (``report.html ->
../notes.txt``, ``figures -> ~/papers``). Every file a command writes into a run directory goes
through :func:`write_file`: the content is written to a new file beside the target, created
exclusively (``O_CREAT | O_EXCL``, and ``O_NOFOLLOW`` where the system has it: it cannot be a
link, nor an existing file), and then renamed over the target. A rename replaces a link that
stands at the target's name; it never writes through it. A write that fails (a full disk) leaves
the earlier file, if any, as it was and no partial file.

The folders written into are made (or found) by :func:`make_dirs`, which refuses a folder inside
the run directory that is a link or not a folder, with one line naming it
(:class:`~impactbandits.errors.StoreError`); :func:`check_folders` checks the folders between
the run directory and a file. Files that are opened in place rather than replaced — the results
store, its ``-wal``/``-shm`` companions, the lock — are refused when they are links
(:func:`refuse_link`, :func:`open_in_place`).

The run directory itself may be a link (an ``--out`` pointed at a scratch disk): only what lies
inside it is checked. These checks guard against links that are already in place, as in a
received directory; they do not guard against another process that swaps names while a command
writes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from impactbandits.errors import StoreError
from impactbandits.experiments.store_files import is_disk_full

__all__ = [
    "check_folders",
    "make_dirs",
    "open_in_place",
    "refuse_link",
    "write_bytes",
    "write_file",
    "write_text",
]

#: Flags of a file created exclusively, without following a link (where the system can).
_EXCLUSIVE = (
    os.O_WRONLY
    | os.O_CREAT
    | os.O_EXCL
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


def _is_link(path: Path) -> bool:
    """A symbolic link (or, on Windows, a junction: a link to a folder)."""
    isjunction = getattr(os.path, "isjunction", None)  # Python 3.12+
    return path.is_symlink() or bool(isjunction is not None and isjunction(path))


def _link_error(path: Path, field: str) -> StoreError:
    return StoreError(
        f"{field}: {str(path)!r} is a symbolic link; the files of a run directory are written "
        "in place, never through a link: remove the link (or copy the run directory without "
        "its links) and run the same command again"
    )


def refuse_link(path: Path, field: str = "output") -> None:
    """Raise a one-line :class:`~impactbandits.errors.StoreError` naming ``field`` if ``path``
    is a link (a dangling one too)."""
    if _is_link(path):
        raise _link_error(path, field)


def _check_folder(path: Path, field: str) -> None:
    """``path`` is a folder, not a link to one."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        raise StoreError(
            f"{field}: the folder {str(path)!r} disappeared while it was written to; run the "
            "same command again"
        ) from None
    except OSError as exc:
        raise StoreError(f"{field}: cannot use {str(path)!r} ({exc.strerror})") from None
    if stat.S_ISLNK(mode) or _is_link(path):
        raise _link_error(path, field)
    if not stat.S_ISDIR(mode):
        raise StoreError(
            f"{field}: {str(path)!r} is a file, not a folder; move it away and run the same "
            "command again"
        )


def check_folders(root: Path, folder: Path, field: str = "output") -> None:
    """Every folder from ``root`` (not included: it may be a link) down to ``folder``
    (included) is a folder and no link; ``folder`` must lie inside ``root``."""
    root, folder = Path(root), Path(folder)
    path = root
    for part in folder.relative_to(root).parts:
        path = path / part
        _check_folder(path, field)


def make_dirs(root: Path, *parts: str, field: str = "output") -> Path:
    """``root/parts[0]/parts[1]/…``, each folder below ``root`` made if missing; a folder that
    is a link or a file is refused (:func:`check_folders`). ``root`` must exist."""
    path = Path(root)
    for part in parts:
        path = path / part
        try:
            path.mkdir()
        except FileExistsError:
            pass  # a folder, or something refused next (a link: mkdir never follows one)
        except OSError as exc:
            if is_disk_full(exc):
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            raise StoreError(f"{field}: cannot create {str(path)!r} ({exc.strerror})") from None
        _check_folder(path, field)
    return path


def _temporary(path: Path, field: str) -> tuple[int, Path]:
    """A new, empty file beside ``path`` (``.NAME.XXXXXXXX.partial``), created exclusively;
    its descriptor and path."""
    for _ in range(100):
        temp = path.with_name(f".{path.name[:120]}.{secrets.token_hex(4)}.partial")
        try:
            return os.open(temp, _EXCLUSIVE, 0o666), temp
        except FileExistsError:
            continue  # a name taken (or a link placed there): draw another
        except OSError as exc:
            raise _write_error(exc, path, temp, field) from None
    raise StoreError(f"{field}: cannot make a temporary file beside {str(path)!r}")


def _write_error(exc: OSError, path: Path, temp: Path, field: str) -> Exception:
    """A full disk stays an ``OSError`` naming ``path`` (the CLI's one line says "disk full");
    anything else is a one-line :class:`~impactbandits.errors.StoreError`."""
    named = exc.filename is not None and str(exc.filename) != str(temp)
    if is_disk_full(exc):
        return OSError(exc.errno, exc.strerror, exc.filename if named else str(path))
    if isinstance(exc, IsADirectoryError) or (exc.errno == errno.EISDIR):
        return StoreError(f"{field}: {str(path)!r} is a folder; move it away or give a file name")
    where = str(exc.filename) if named else str(path)
    return StoreError(f"{field}: cannot write {where!r} ({exc.strerror or exc})")


def write_file(
    path: Path, write: Callable[[Path], object], *, root: Path | None = None, field: str = "output"
) -> Path:
    """Write ``path`` without following a link: ``write(temp)`` fills a new file beside it
    (created exclusively; ``write`` opens it by its name, e.g. ``table.to_csv(temp)``), which is
    then renamed over ``path`` (a link there is replaced, its target untouched). ``root``: the
    run directory ``path`` lies in; the folders between are checked first
    (:func:`check_folders`). Returns ``path``.

    A full disk raises ``OSError`` naming ``path``; any other failure to write a one-line
    :class:`~impactbandits.errors.StoreError` naming ``field``. Either way the earlier ``path``
    is kept and no temporary file is left."""
    return _replace(Path(path), b"", write, root, field)


def write_bytes(
    path: Path, data: bytes, *, root: Path | None = None, field: str = "output"
) -> Path:
    """:func:`write_file` of ``data`` (written through the new file's descriptor)."""
    return _replace(Path(path), data, None, root, field)


def write_text(path: Path, text: str, *, root: Path | None = None, field: str = "output") -> Path:
    """:func:`write_file` of ``text`` as UTF-8."""
    return write_bytes(path, text.encode("utf-8"), root=root, field=field)


def _replace(
    path: Path,
    data: bytes,
    write: Callable[[Path], object] | None,
    root: Path | None,
    field: str,
) -> Path:
    """A new file beside ``path`` holding ``data``, then ``write(its path)`` if given, then
    renamed over ``path``; see :func:`write_file`."""
    if root is not None:
        check_folders(Path(root), path.parent, field)
    fd, temp = _temporary(path, field)
    try:
        with os.fdopen(fd, "wb") as file:  # owns (and closes) the descriptor
            file.write(data)
        if write is not None:
            write(temp)
        os.replace(temp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        if isinstance(exc, OSError):
            raise _write_error(exc, path, temp, field) from None
        raise
    return path


def open_in_place(path: Path, flags: int, mode: int = 0o644, field: str = "output") -> int:
    """``os.open(path, flags, mode)`` for a file used in place (the lock), refusing a link:
    ``O_NOFOLLOW`` where the system has it, a check before opening elsewhere."""
    refuse_link(path, field)
    try:
        return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link put there since the check
            raise _link_error(path, field) from None
        raise
