"""File steps of a snapshot write: fsyncs, checksums, narrowed arrays, linked files."""

from __future__ import annotations

import contextlib
import os
import shutil
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["digest", "fsync_dir", "fsync_file", "link_files", "narrowed"]

T = TypeVar("T")


def fsync_file(path: Path) -> None:
    """Persist a file's data."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(folder: Path) -> None:
    """Persist a folder's entries where the platform allows it (not on Windows)."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


def narrowed(name: str, array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Keys and lengths in the narrowest integer dtype that holds them exactly."""
    if name not in {"keys", "lengths"}:
        return array
    top = int(array.max()) if len(array) else 0
    low = int(array.min()) if len(array) else 0
    kinds = (np.uint16, np.int32) if name == "lengths" else (np.int32,)
    for dtype in kinds:
        if np.iinfo(dtype).min <= low and top <= np.iinfo(dtype).max:
            return array.astype(dtype)
    return array.astype(np.int64)


def digest(path: Path) -> str:
    """CRC-32 of a file (it detects damage, at several times the speed of a cryptographic hash)."""
    crc = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


def link_files(
    folder: Path, files: Mapping[str, list[Any]], names: Iterable[str], staging: Path
) -> dict[str, list[Any]]:
    """Hard-link (or copy, where links fail) these files of ``folder`` into ``staging``.

    Returns:
        The records (``files[name]``: ``[size, CRC-32]``, as verified when they were written)
        of those ``files`` holds.
    """
    kept: dict[str, list[Any]] = {}
    for name in names:
        if name not in files:
            continue
        source, target = folder / name, staging / name
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        kept[name] = files[name]
    return kept
