"""Files the watcher writes and reads, only where asked (docs/WATCH.md, "Faults"): `save`
resolved once at watch(), regular files only (never a device, a FIFO, a folder or through a
symlink), and opened so that nothing found in the file's place can block the script."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO, TextIO


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def not_regular(path: Path) -> str | None:
    """Why `path` cannot be written as a file (it is a link, folder, FIFO or device), or None
    when it is a regular file or does not exist."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    return None if stat.S_ISREG(mode) else f"is {_kind(mode)}"


def resolve_save(save: os.PathLike[str] | str, journal_name: str) -> Path:
    """`save` as an absolute path, fixed now (a later os.chdir moves nothing), checked as it
    will be written: its folder exists and can be written; neither it nor its journal
    (`journal_name` beside it) is a link, a folder, a FIFO or a device. Raises ValueError
    naming `save`."""
    try:
        text = os.fspath(save)
    except TypeError:
        raise ValueError(f"save: expected a path, got {type(save).__name__}") from None
    if isinstance(text, bytes) or not text.strip():
        raise ValueError(f"save: expected a file's path, got {save!r}")
    path = Path(os.path.abspath(text))
    if text.endswith(os.sep):
        raise ValueError(f"save: {text!r} names a folder; give a file's path")
    folder = path.parent
    if not folder.is_dir():
        raise ValueError(f"save: the folder {str(folder)!r} does not exist")
    try:  # a file made and removed: the real test (access() says yes to root everywhere)
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"save: the folder {str(folder)!r} cannot be written "
                         f"({exc.strerror})") from None
    for target in (path, path.with_name(path.name + journal_name)):
        why = not_regular(target)
        if why is not None:
            raise ValueError(f"save: {str(target)!r} {why}; lmprof writes only regular files")
    return path


def create_text(path: Path, what: str) -> TextIO:
    """`path` created or emptied for writing, line-buffered: refused (ValueError naming
    `what`) when it is a link, FIFO, device or folder, even one planted since watch()."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        raise ValueError(f"{what}: cannot write {str(path)!r} ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ValueError(f"{what}: {str(path)!r} is {_kind(mode)}; lmprof writes only "
                         "regular files")
    os.set_blocking(fd, True)
    os.ftruncate(fd, 0)
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def open_regular(path: os.PathLike[str] | str, what: str) -> BinaryIO:
    """`path` opened for reading, refused (ValueError naming `what`) unless it is a regular
    file: a FIFO would block forever and /dev/zero never ends."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ValueError(f"{what}: cannot read {os.fspath(path)!r} ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise ValueError(f"{what}: {os.fspath(path)!r} is {_kind(mode)}, not a journal file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")
