"""Open and read a regular file under a root without ever leaving it (``O_NOFOLLOW``)."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Final

from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.text.validate import check_unicode

__all__ = [
    "MAX_PATH_CHARS",
    "check_path_length",
    "is_inside",
    "kind_problem",
    "open_inside",
    "read_inside",
]

MAX_PATH_CHARS: Final = 4096
"""Longest path accepted (Linux PATH_MAX)."""
_MAX_NAME_BYTES: Final = 255


def check_path_length(raw: str) -> None:
    """Refuse a path the file system cannot hold with a clear message, not an ``OSError``."""
    check_unicode(raw, what=f"Path {raw[:80]!r}")
    names = raw.replace("\\", "/").split("/")
    too_long = len(raw) > MAX_PATH_CHARS or any(
        len(n.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES for n in names
    )
    if too_long:
        msg = (
            f"Path {raw[:60]!r}... is too long ({len(raw)} characters; the limit is "
            f"{MAX_PATH_CHARS} characters and {_MAX_NAME_BYTES} bytes per file or folder name). "
            "Use a shorter path relative to the workspace root."
        )
        raise InvalidInputError(msg)


def is_inside(root: Path, resolved: Path) -> bool:
    """Whether the resolved path ``resolved`` is ``root`` or lies under it."""
    return resolved == root or root in resolved.parents


_READ_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO never blocks (it is refused)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_AT_SUPPORTED: Final = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_KINDS: Final = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def kind_problem(st: os.stat_result, *, refuse_hard_links: bool) -> str | None:
    """A skip reason for what is not a plain regular file, else ``None``."""
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a plain file")
        return f"not a regular file: it is {kind}; only regular files are read"
    if refuse_hard_links and st.st_nlink > 1:
        return (
            f"hard link: the file has {st.st_nlink} links and may also live outside the root "
            "(ScanConfig(refuse_hard_links=True))"
        )
    return None


def open_inside(root: Path, rel: str, *, refuse_hard_links: bool = False) -> int:
    """Open the regular file ``rel`` under ``root`` for reading; return the file descriptor.

    Components open without following links; a link inside ``root`` is resolved and opened the
    same way. A FIFO, socket or device is refused without blocking.

    Raises:
        PathOutsideWorkspaceError: ``outside workspace: ...`` (a link out of ``root``).
        InvalidInputError: ``not a regular file: ...``, ``hard link: ...``.
        OSError: The file cannot be opened (missing, permission denied...).
    """
    check_path_length(rel)
    if ".." in rel.split("/"):
        msg = f"outside workspace: {rel} contains '..'"
        raise PathOutsideWorkspaceError(msg)
    try:
        fd = _open_no_follow(root, rel)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise
        real = Path(os.path.realpath(root / rel))
        if not is_inside(root, real):
            msg = f"outside workspace: {rel} is a symbolic link that leads outside the root"
            raise PathOutsideWorkspaceError(msg) from None
        fd = _open_no_follow(root, real.relative_to(root).as_posix())
    try:
        problem = kind_problem(os.fstat(fd), refuse_hard_links=refuse_hard_links)
    except BaseException:
        os.close(fd)
        raise
    if problem is not None:
        os.close(fd)
        raise InvalidInputError(problem)
    return fd


def _open_no_follow(root: Path, rel: str) -> int:
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not _AT_SUPPORTED or not parts:
        return os.open(root / rel, _READ_FLAGS)
    directory = os.open(root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    try:
        for part in parts[:-1]:
            child = os.open(part, _DIR_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = child
        return os.open(parts[-1], _READ_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)


def read_inside(
    root: Path, rel: str, *, max_bytes: int, refuse_hard_links: bool = False
) -> tuple[bytes, os.stat_result]:
    """The bytes and ``fstat`` of the regular file ``rel`` under ``root`` (see :func:`open_inside`).

    Raises:
        PathOutsideWorkspaceError: ``outside workspace: ...``.
        InvalidInputError: ``not a regular file: ...``, ``hard link: ...``, ``too large: ...``.
        OSError: The file cannot be opened or read.
    """
    fd = open_inside(root, rel, refuse_hard_links=refuse_hard_links)
    with contextlib.closing(os.fdopen(fd, "rb")) as stream:
        st = os.fstat(fd)
        if st.st_size > max_bytes:
            msg = f"too large: {st.st_size} bytes > limit {max_bytes}"
            raise InvalidInputError(msg)
        data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:  # it grew while being read
        msg = f"too large: more than {max_bytes} bytes > limit {max_bytes}"
        raise InvalidInputError(msg)
    return data, st
