"""Structure and checksums of a snapshot's arrays, checked when they are loaded or first read.

What is wrong in a file whose size and CRC-32 match the record (a writer bug or a tampered
record) is refused with :class:`IndexCorruptError` naming ``rebuild=True``. The large
:data:`BLOCKED` arrays are checked block by block when first read (:class:`BlockChecks`).
"""

from __future__ import annotations

import threading
import zlib
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded.segments import BaseArrays
from workspace_tools.core.errors import IndexCorruptError

__all__ = [
    "BLOCKED",
    "BLOCK_BYTES",
    "BlockChecks",
    "block_crcs",
    "check_base",
    "refuse",
]

BLOCK_BYTES: Final = 1 << 14
"""Bytes of array data per checksum block of a new snapshot (a multiple of every item size)."""
RUN_BLOCKS: Final = 16
"""Most blocks checked together (their CRC-32s, then one pass over their values)."""
BLOCKED: Final = ("terms", "docs", "tf", "scores")
"""Arrays checked by blocks, when first read (the others are small and checked whole at open)."""


def refuse(folder: Path, problem: str) -> IndexCorruptError:
    """The error for a snapshot whose files match their record but not each other."""
    return IndexCorruptError(
        f"The index snapshot {folder} is damaged ({problem}) although its files match their "
        "recorded sizes and checksums. Open the workspace with rebuild=True (CLI: --rebuild) "
        "to rebuild it."
    )


_DTYPES: Final[dict[str, tuple[type, ...]]] = {
    "keys": (np.int32, np.int64),
    "terms": (np.int32,),
    "offsets": (np.int32, np.int64),
    "indptr": (np.int64,),
    "docs": (np.int32,),
    "tf": (np.uint8, np.uint16, np.float32),
    "scores": (np.float32,),
    "lengths": (np.uint16, np.int32, np.int64),
}
"""Dtypes each array may have (``terms`` and ``offsets``: previous layout only)."""


def _pointers(values: Any, *, last: int) -> bool:
    """``values`` start at 0, never decrease and end at ``last`` (CSR-style offsets)."""
    return (
        len(values) > 0
        and int(values[0]) == 0
        and int(values[-1]) == last
        and bool(np.all(np.diff(values) >= 0))
    )


def _bad_values(name: str, values: Any, *, rows: int, terms: int) -> bool:
    """Values of array ``name`` out of their range (a row, a term id; a finite number)."""
    if not len(values):
        return False
    if name == "docs":
        return not 0 <= int(values.min()) <= int(values.max()) < rows
    if name == "terms":
        return not 0 <= int(values.min()) <= int(values.max()) < terms
    if values.dtype.kind == "f":
        return not bool(np.all(np.isfinite(values)))
    return False


def check_base(base: BaseArrays, *, terms: int, folder: Path) -> None:
    """Every array of a BM25 base of the right dtype and shape, every index in range.

    ``terms``: the lines of vocab.txt. :data:`BLOCKED` values are left to :class:`BlockChecks`.

    Raises:
        IndexCorruptError: the first problem found, naming the array.
    """
    for name, dtypes in _DTYPES.items():
        array = getattr(base, name)
        if array is None and name in {"terms", "offsets"}:
            continue
        if array is None or array.ndim != 1 or array.dtype not in dtypes:
            allowed = " or ".join(str(np.dtype(d)) for d in dtypes)
            found = "missing" if array is None else f"{array.dtype} of shape {array.shape}"
            problem = f"{name}.npy is {found}, not 1-D {allowed}"
            raise refuse(folder, problem)
    rows = len(base.keys)
    postings = len(base.docs)
    keys = base.keys
    increasing = bool(np.all(keys[1:] > keys[:-1])) if rows > 1 else True
    problems = [
        (
            (not increasing and len(np.unique(keys)) != rows) or bool(rows and keys.min() < 0),
            "keys.npy",
        ),
        (
            base.offsets is not None
            and base.terms is not None
            and (
                len(base.offsets) != rows + 1 or not _pointers(base.offsets, last=len(base.terms))
            ),
            "offsets.npy",
        ),
        (len(base.lengths) != rows or bool(rows and int(base.lengths.min()) < 0), "lengths.npy"),
        (len(base.indptr) != terms + 1 or not _pointers(base.indptr, last=postings), "indptr.npy"),
        (len(base.tf) != postings, "tf.npy"),
        (len(base.scores) != postings, "scores.npy"),
    ]
    for wrong, name in problems:
        if wrong:
            raise refuse(
                folder, f"{name} does not fit the other arrays (a count or an index out of range)"
            )


def block_crcs(array: npt.NDArray[Any], block_bytes: int = BLOCK_BYTES) -> list[int]:
    """CRC-32 of each ``block_bytes`` block of an array's data (what the record keeps)."""
    data = np.ascontiguousarray(array).reshape(-1).view(np.uint8).data
    return [
        zlib.crc32(data[start : start + block_bytes]) for start in range(0, len(data), block_bytes)
    ]


class _Blocks:
    __slots__ = ("array", "crcs", "data", "done", "item", "left", "name")

    def __init__(self, name: str, array: Any, crcs: list[int]) -> None:
        self.name = name
        self.array = array
        self.data = np.asarray(array).reshape(-1).view(np.uint8).data
        self.item = int(array.dtype.itemsize)
        self.crcs = crcs
        self.done = bytearray(len(crcs))
        self.left = len(crcs)


class BlockChecks:
    """The first-read checks of a base's :data:`BLOCKED` arrays (``BaseArrays.verify``).

    Called with an array's name and element range: checks its unchecked blocks' CRC-32 and values.

    Raises:
        IndexCorruptError: the record does not fit the arrays, or a block fails its checks.
    """

    def __init__(
        self,
        base: BaseArrays,
        crcs: dict[str, list[int] | None],
        *,
        folder: Path,
        vocabulary: int,
        block_bytes: int = BLOCK_BYTES,
    ) -> None:
        self.folder = folder
        self.block_bytes = block_bytes
        self._rows = len(base.keys)
        self._terms = vocabulary
        self._lock = threading.Lock()
        self._blocks: dict[str, _Blocks] = {}
        for file, expected in crcs.items():
            name = file.removesuffix(".npy")
            array = getattr(base, name)
            count = -(-int(array.nbytes) // block_bytes)
            if expected is None or len(expected) != count:
                raise refuse(folder, f"the block checksums of {file} do not fit its size")
            self._blocks[name] = _Blocks(name, array, expected)
        self.left = sum(b.left for b in self._blocks.values())
        """Blocks not checked yet (0: every read is trusted)."""

    def __call__(self, name: str, start: int, stop: int) -> None:
        """Check the blocks holding elements ``start:stop`` of array ``name`` (once each)."""
        blocks = self._blocks.get(name)
        if blocks is None or not blocks.left or stop <= start:
            return
        done, size = blocks.done, self.block_bytes
        first = start * blocks.item // size
        last = (stop * blocks.item - 1) // size
        number = first
        while number <= last:  # each run of unchecked blocks at once
            if done[number]:
                number += 1
                continue
            end = number + 1
            while end <= last and not done[end] and end - number < RUN_BLOCKS:
                end += 1
            self._check(blocks, number, end)
            number = end

    def all(self, name: str) -> None:
        """Check every block of array ``name`` (a merge reads all of it)."""
        blocks = self._blocks.get(name)
        if blocks is not None and blocks.left:
            self(name, 0, len(blocks.array))

    def _check(self, blocks: _Blocks, first: int, end: int) -> None:
        """Check blocks ``first .. end - 1``: each one's CRC-32, then their values at once."""
        size = self.block_bytes
        data = blocks.data
        file = f"{blocks.name}.npy"
        unfit = f"{file} does not fit the other arrays (a count or an index out of range)"
        for number in range(first, end):
            if zlib.crc32(data[number * size : (number + 1) * size]) != blocks.crcs[number]:
                msg = (
                    f"The index snapshot {self.folder} is damaged (block {number} of {file} "
                    "fails its CRC-32). Open the workspace with rebuild=True (CLI: --rebuild) "
                    "to rebuild it."
                )
                raise IndexCorruptError(msg)
        values = np.frombuffer(data[first * size : end * size], dtype=blocks.array.dtype)
        if _bad_values(blocks.name, values, rows=self._rows, terms=self._terms):
            raise refuse(self.folder, unfit)
        with self._lock:
            for number in range(first, end):
                if not blocks.done[number]:
                    blocks.done[number] = 1
                    blocks.left -= 1
                    self.left -= 1
