"""Crash-safe index folder.

An index folder holds numbered generations (``gen-000001/`` ...) and a ``CURRENT`` file naming the
live one. A save writes a new generation in full, fsyncs it, then replaces ``CURRENT`` atomically
(``os.replace``), then deletes older generations. A crash at any point leaves ``CURRENT`` naming a
complete generation, so the index on disk is always the state before or after the save. Writers
in several processes are serialised by an ``fcntl`` lock on ``.lock``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.errors import IndexCorruptError

__all__ = ["FORMAT_VERSION", "IndexStore", "read_json", "write_json"]

FORMAT_VERSION: Final = 1
"""Version of the on-disk layout; bumped when it changes incompatibly."""

_CURRENT: Final = "CURRENT"
_PREFIX: Final = "gen-"
_CHECKSUMS: Final = "checksums.json"
"""Size and hash of every other file of a generation, written last and checked on load."""


class IndexStore:
    """Generations of an index folder."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def current(self) -> Path | None:
        """Folder of the live generation, or ``None`` when nothing was saved yet."""
        pointer = self.directory / _CURRENT
        try:
            name = pointer.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            msg = (
                f"Cannot read {pointer}: {exc}. Delete {self.directory} (or open the workspace "
                "with rebuild=True) to rebuild the index."
            )
            raise IndexCorruptError(msg) from exc
        folder = self.directory / name
        if not name.startswith(_PREFIX) or "/" in name or not folder.is_dir():
            msg = (
                f"The index pointer {pointer} names {name!r}, which is not a saved generation. "
                f"Delete {self.directory} (or open the workspace with rebuild=True) to rebuild "
                "the index."
            )
            raise IndexCorruptError(msg)
        _verify(folder)
        return folder

    def save(self, write: Callable[[Path], None]) -> Path:
        """Write a new generation with ``write(folder)`` and make it the live one."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._locked():
            number = self._next_number()
            final = self.directory / f"{_PREFIX}{number:06d}"
            staging = self.directory / f".tmp-{_PREFIX}{number:06d}-{os.getpid()}"
            if staging.exists():
                shutil.rmtree(staging)
            staging.mkdir()
            try:
                write(staging)
                write_json(staging / _CHECKSUMS, _checksums(staging))
                _fsync_tree(staging)
                os.replace(staging, final)
                _fsync_dir(self.directory)
                pointer_tmp = self.directory / f".{_CURRENT}.{os.getpid()}.tmp"
                with open(pointer_tmp, "w", encoding="utf-8") as handle:
                    handle.write(final.name)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(pointer_tmp, self.directory / _CURRENT)
                _fsync_dir(self.directory)
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
            self._collect(keep=final.name)
            return final

    def clear(self) -> None:
        """Delete every generation (the folder itself stays)."""
        if not self.directory.exists():
            return
        with self._locked():
            pointer = self.directory / _CURRENT
            pointer.unlink(missing_ok=True)
            self._collect(keep=None)

    def _next_number(self) -> int:
        numbers = [
            int(p.name[len(_PREFIX) :])
            for p in self.directory.iterdir()
            if p.name.startswith(_PREFIX) and p.name[len(_PREFIX) :].isdigit()
        ]
        return max(numbers, default=0) + 1

    def _collect(self, *, keep: str | None) -> None:
        for path in self.directory.iterdir():
            stale_gen = path.name.startswith(_PREFIX) and path.name != keep
            stale_tmp = path.name.startswith(".tmp-")
            if (stale_gen or stale_tmp) and path.is_dir():
                shutil.rmtree(path, ignore_errors=True)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        import fcntl

        with open(self.directory / ".lock", "a+") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as compact JSON."""
    # json.dumps runs the C encoder; json.dump streams through the slower pure-Python one.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def read_json(path: Path) -> Any:
    """Read JSON, turning a damaged file into :class:`IndexCorruptError`."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError) as exc:
        msg = (
            f"The index file {path} is missing or damaged ({exc}). Delete {path.parent.parent} "
            "or open the workspace with rebuild=True to rebuild it."
        )
        raise IndexCorruptError(msg) from exc


def _digest(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checksums(folder: Path) -> dict[str, list[Any]]:
    return {
        path.relative_to(folder).as_posix(): [path.stat().st_size, _digest(path)]
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.name != _CHECKSUMS
    }


def _verify(folder: Path) -> None:
    """Check every file of a generation against its checksums (generations without them pass)."""
    path = folder / _CHECKSUMS
    if not path.exists():
        return
    expected = read_json(path)
    problem = None if isinstance(expected, dict) else f"{path} is not a mapping"
    for rel, entry in expected.items() if problem is None else ():
        file = folder / str(rel)
        if ".." in Path(str(rel)).parts or Path(str(rel)).is_absolute():
            problem = f"{path} names {rel!r}, outside the generation"
            break
        try:
            size, digest = entry
            same = file.stat().st_size == size and _digest(file) == digest
        except (OSError, TypeError, ValueError):
            same = False
        if not same:
            problem = f"the index file {file} is missing or damaged (size or checksum differs)"
            break
    if problem is not None:
        msg = (
            f"The index in {folder.parent} is damaged: {problem}. Open the workspace with "
            "rebuild=True (CLI: --rebuild) to rebuild it."
        )
        raise IndexCorruptError(msg)


def _fsync_tree(folder: Path) -> None:
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(dirpath))


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
