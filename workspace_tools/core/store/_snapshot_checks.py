"""Structure of a snapshot's arrays and payload, checked when they are loaded.

A snapshot file whose size and CRC-32 match the database's record was written that way: what is
still wrong (a row id out of range, a 2-D array, offsets past the payload, a vocabulary of
numbers) is a writer bug or a tampered record. It is refused with :class:`IndexCorruptError`
naming ``rebuild=True``, never answered from, never a raw ``IndexError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import numpy as np

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.index.segments import BaseArrays

__all__ = ["PAYLOAD", "PAYLOAD_OFFSETS", "PAYLOAD_SOURCES", "check_base", "check_payload"]

PAYLOAD: Final = "results.npy"
PAYLOAD_OFFSETS: Final = "results_offsets.npy"
PAYLOAD_SOURCES: Final = "results_sources.json"
"""``source id -> metadata`` of the payload's rows: kept once per source, not on every row."""


def _refuse(folder: Path, problem: str) -> IndexCorruptError:
    return IndexCorruptError(
        f"The index snapshot {folder} is damaged ({problem}) although its files match their "
        "recorded sizes and checksums. Open the workspace with rebuild=True (CLI: --rebuild) "
        "to rebuild it."
    )


_DTYPES: Final = {
    "keys": np.int64,
    "terms": np.int32,
    "offsets": np.int64,
    "indptr": np.int64,
    "docs": np.int32,
    "tf": np.float32,
    "scores": np.float32,
}


def _pointers(values: Any, *, last: int) -> bool:
    """``values`` start at 0, never decrease and end at ``last`` (CSR-style offsets)."""
    return (
        len(values) > 0
        and int(values[0]) == 0
        and int(values[-1]) == last
        and bool(np.all(np.diff(values) >= 0))
    )


def check_base(base: BaseArrays, vocab: Any, *, folder: Path) -> None:
    """Every array of a BM25 base of the right dtype and shape, every index in range.

    Raises:
        IndexCorruptError: the first problem found, naming the array.
    """
    for name, dtype in _DTYPES.items():
        array = getattr(base, name)
        if array.ndim != 1 or array.dtype != dtype:
            problem = (
                f"{name}.npy is {array.dtype} of shape {array.shape}, not 1-D {np.dtype(dtype)}"
            )
            raise _refuse(folder, problem)
    if not isinstance(vocab, list) or not all(isinstance(t, str) for t in vocab):
        raise _refuse(folder, "vocab.json is not a list of terms")
    if len(set(vocab)) != len(vocab):
        raise _refuse(folder, "vocab.json repeats a term")
    rows, terms = len(base.keys), len(vocab)
    postings = len(base.docs)
    problems = [
        (len(np.unique(base.keys)) != rows or bool(np.any(base.keys < 0)), "keys.npy"),
        (
            len(base.offsets) != rows + 1 or not _pointers(base.offsets, last=len(base.terms)),
            "offsets.npy",
        ),
        (
            bool(len(base.terms))
            and not 0 <= int(base.terms.min()) <= int(base.terms.max()) < terms,
            "terms.npy",
        ),
        (len(base.indptr) != terms + 1 or not _pointers(base.indptr, last=postings), "indptr.npy"),
        (
            bool(postings) and not 0 <= int(base.docs.min()) <= int(base.docs.max()) < rows,
            "docs.npy",
        ),
        (len(base.tf) != postings or not bool(np.all(np.isfinite(base.tf))), "tf.npy"),
        (len(base.scores) != postings or not bool(np.all(np.isfinite(base.scores))), "scores.npy"),
    ]
    for wrong, name in problems:
        if wrong:
            raise _refuse(
                folder, f"{name} does not fit the other arrays (a count or an index out of range)"
            )


def check_payload(blob: Any, offsets: Any, sources: Any, *, rows: int, folder: Path) -> None:
    """The result payload: bytes, row offsets inside them, and a source-metadata mapping.

    Raises:
        IndexCorruptError: the first problem found, naming the file.
    """
    if blob.ndim != 1 or blob.dtype != np.uint8:
        raise _refuse(folder, f"{PAYLOAD} is {blob.dtype} of shape {blob.shape}, not bytes")
    if offsets.ndim != 1 or offsets.dtype != np.int64:
        raise _refuse(folder, f"{PAYLOAD_OFFSETS} is {offsets.dtype}, not 1-D int64")
    if len(offsets) != 2 * rows + 1 or not _pointers(offsets, last=len(blob)):
        raise _refuse(folder, f"{PAYLOAD_OFFSETS} points outside {PAYLOAD} or out of order")
    if not isinstance(sources, dict) or not all(isinstance(v, dict) for v in sources.values()):
        raise _refuse(folder, f"{PAYLOAD_SOURCES} is not a mapping of source metadata")
