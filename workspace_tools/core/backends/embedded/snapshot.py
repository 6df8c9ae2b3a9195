"""Derived snapshots: the BM25 base segment and the FAISS index, saved so a process opens fast.

A folder ``snapshot-<version>/`` holds the base arrays (memory-mapped), the vocabulary and the
FAISS index; the database's ``meta`` row ``snapshot`` records each file's size and CRC-32. A
missing or resized file is rebuilt from the database; a failed checksum raises
:class:`IndexCorruptError`. Written to a staging folder under a file lock, then renamed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.embedded.segments import BaseArrays
from workspace_tools.core.backends.embedded.snapshot_checks import (
    BLOCK_BYTES,
    BLOCKED,
    BlockChecks,
    block_crcs,
    check_base,
)
from workspace_tools.core.backends.embedded.snapshot_io import digest as _digest
from workspace_tools.core.backends.embedded.snapshot_io import (
    fsync_dir,
    fsync_file,
    link_files,
    narrowed,
)
from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store.database import ChunkFields

if TYPE_CHECKING:
    from workspace_tools.core.backends.embedded.dense import DenseIndex, FrozenDense, SavedGraph
    from workspace_tools.core.store.database import IndexDatabase

__all__ = [
    "ChunkFields",
    "SnapshotDraft",
    "SnapshotInfo",
    "load_base",
    "load_flat",
    "load_graph",
    "read_pointer",
    "snapshot_draft",
    "verify_flat",
    "write_snapshot",
]

logger = logging.getLogger(__name__)

_PREFIX: Final = "snapshot-"
_ARRAYS: Final = ("keys", "indptr", "docs", "tf", "scores", "lengths")
_UNREADABLE_ARRAY: Final = (OSError, ValueError, SyntaxError, tokenize.TokenError, EOFError)
"""What ``np.load`` raises on a damaged ``.npy`` file (its header is parsed as a literal)."""
_GRAPH: Final = "dense.graph"
_GRAPH_FILES: Final = (_GRAPH, "dense.ids.npy", "dense.dead.npy", "dense.deadcodes.npy")
"""``dense_files.GRAPH_FILES`` (not imported: that would load the dense module)."""
_FLAT: Final = "dense.flat.faiss"
_DENSE_FILES: Final = (*_GRAPH_FILES, _FLAT)
_VOCAB: Final = "vocab.txt"
_BLOCKED_FILE: Final = "blocks"
"""The whole-file CRC-32 recorded for a file checked by blocks (never compared)."""


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """The database's record of the latest snapshot."""

    folder: Path
    version: int
    files: dict[str, list[Any]]
    """Relative path -> ``[size, CRC-32 hex]`` (``"blocks"`` for a file in :attr:`blocks`)."""
    config: dict[str, Any]
    """What the snapshot was built with (BM25 parameters, embedder)."""
    dense_version: int
    """Database version the FAISS file reflects (older when a merge kept the previous file)."""
    blocks: dict[str, list[int]]
    """Relative path -> the CRC-32 of each :data:`BLOCK_BYTES` block of its array data."""

    @property
    def has_dense(self) -> bool:
        """A vector part was saved: a graph, or a flat index's codes."""
        return _GRAPH in self.files or _FLAT in self.files

    @property
    def has_graph(self) -> bool:
        """An HNSW graph was saved without its vectors (they are in the database)."""
        return _GRAPH in self.files


_READ: list[tuple[Path, str, SnapshotInfo]] = []
"""The last record :func:`read_pointer` parsed (its CRC lists are parsed once)."""


def read_pointer(db: IndexDatabase) -> SnapshotInfo | None:
    """The latest snapshot the database names (``None`` when there is none or it is garbled).

    Its values are shared with earlier calls that read the same record: never change them.
    """
    raw = db.meta("snapshot")
    if raw is None:
        return None
    last = _READ[-1] if _READ else None
    if last is not None and last[0] == db.directory and last[1] == raw:
        return last[2]
    info = _parse_pointer(db, raw)
    if info is not None:
        _READ[:] = [(db.directory, raw, info)]
    return info


def _parse_pointer(db: IndexDatabase, raw: str) -> SnapshotInfo | None:
    try:
        data = json.loads(raw)
        name = str(data["folder"])
        if not name.startswith(_PREFIX) or "/" in name or "\\" in name or ".." in name:
            return None
        if int(data.get("block_bytes", 0)) != BLOCK_BYTES:  # another layout: rebuilt
            return None
        return SnapshotInfo(
            folder=db.directory / name,
            version=int(data["version"]),
            files={str(k): list(v) for k, v in dict(data["files"]).items()},
            config=dict(data.get("config") or {}),
            dense_version=int(data.get("dense_version", data["version"])),
            blocks={str(k): [int(c) for c in v] for k, v in dict(data["blocks"]).items()},
        )
    except (ValueError, KeyError, TypeError):
        logger.warning(
            "The snapshot record of %s is garbled; rebuilding from the database", db.path
        )
        return None


def _verified(info: SnapshotInfo, name: str) -> Path | None:
    """The file's path when its size (and, unless checked by blocks, CRC-32) match the record."""
    path = info.folder / name
    entry = info.files.get(name)
    try:
        if entry is None or path.stat().st_size != int(entry[0]):
            msg = "size differs"
            raise ValueError(msg)
        if name not in info.blocks and _digest(path) != entry[1]:
            msg = "hash differs"
            raise ValueError(msg)
    except (OSError, ValueError, TypeError) as exc:
        _report(path, exc)
        return None
    return path


def load_base(info: SnapshotInfo) -> tuple[BaseArrays, str] | None:
    """The BM25 base segment, memory-mapped, and its vocabulary text (``None``: anything off)."""
    arrays: dict[str, Any] = {}
    for name in _ARRAYS:
        path = _verified(info, f"{name}.npy")
        if path is None:
            return None
        try:
            # A plain ndarray view of the map (slicing a memmap is slow: __array_finalize__)
            arrays[name] = np.asarray(np.load(path, mmap_mode="r", allow_pickle=False))
        except _UNREADABLE_ARRAY as exc:  # a damaged header too: numpy parses it as a literal
            _report(path, exc)
            return None
    path = _verified(info, _VOCAB)
    if path is None:
        return None
    try:
        raw = path.read_bytes()
        vocab = raw.decode("utf-8", "surrogatepass")
        terms = raw.count(b"\n") + 1 if raw else 0
    except (OSError, ValueError) as exc:
        _report(path, exc)
        return None
    base = BaseArrays(**arrays)
    # Sizes and hashes matched: what is wrong now was written wrong, so it is refused
    check_base(base, terms=terms, folder=info.folder)
    base.verify = BlockChecks(
        base,
        {f"{n}.npy": info.blocks.get(f"{n}.npy") for n in BLOCKED if n in arrays},
        folder=info.folder,
        vocabulary=terms,
    )
    return base, vocab


def load_graph(info: SnapshotInfo, *, dimension: int) -> SavedGraph | None:
    """The saved HNSW graph (no storage yet); ``None`` when absent or damaged (then rebuilt)."""
    from workspace_tools.core.backends.embedded.dense import read_graph

    if not info.has_graph:
        return None
    for name in _GRAPH_FILES:
        if name in info.files and _verified(info, name) is None:
            return None
    try:
        return read_graph(info.folder, dimension=dimension)
    except IndexCorruptError as exc:
        logger.warning("%s", exc)
        return None


def load_flat(info: SnapshotInfo, *, dimension: int) -> DenseIndex | None:
    """The saved flat index, mapped and size-checked only; ``None`` when absent or unusable."""
    from workspace_tools.core.backends.embedded.dense import DenseIndex

    path, entry = info.folder / _FLAT, info.files.get(_FLAT)
    if entry is None:
        return None
    try:
        if path.stat().st_size != int(entry[0]):
            msg = "size differs"
            raise ValueError(msg)
        return DenseIndex.mapped(path, dimension=dimension)
    except (OSError, ValueError, TypeError, IndexCorruptError) as exc:
        _report(path, exc)
        return None


def verify_flat(info: SnapshotInfo) -> bool:
    """Whether the flat index file :func:`load_flat` mapped matches its CRC-32 (reads it whole)."""
    return _verified(info, _FLAT) is not None


def write_snapshot(
    db: IndexDatabase,
    *,
    version: int,
    base: BaseArrays | None,
    vocab: list[str],
    dense: DenseIndex | FrozenDense | None,
    config: dict[str, Any],
    reuse_dense: bool = False,
) -> None:
    """Save a snapshot of database version ``version`` and point the database at it.

    With ``reuse_dense`` and no ``dense``, the previous snapshot's dense files are hard-linked in.
    """
    with snapshot_draft(db, version=version, with_dense=dense is not None) as draft:
        if draft is not None:
            draft.finish(
                base=base, vocab=vocab, dense=dense, config=config, reuse_dense=reuse_dense
            )


@contextlib.contextmanager
def snapshot_draft(
    db: IndexDatabase, *, version: int, with_dense: bool
) -> Iterator[SnapshotDraft | None]:
    """A snapshot of ``version`` being written under the lock (``None``: one as recent exists)."""
    from filelock import FileLock

    from workspace_tools.core.store.database import storage_error

    directory = db.directory
    lock = FileLock(str(directory / "snapshot.lock"), timeout=120)
    try:
        lock.acquire()
        try:
            current = read_pointer(db)
            if current is not None and _as_recent(current, version, with_dense=with_dense):
                lock.release()
                yield None
                return
            staging, final = _staging(directory, current, version)
            try:
                yield SnapshotDraft(db, current, version, staging, final)
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
        finally:
            if lock.is_locked:
                lock.release()
    except OSError as exc:
        raise storage_error(exc, directory, "save a snapshot") from exc


def _as_recent(current: SnapshotInfo, version: int, *, with_dense: bool) -> bool:
    """Another process saved a snapshot at least as recent as ``version`` would be."""
    with_vectors = current.config.get("embedder") is not None  # a graph, or flat (none saved)
    newer = current.version > version or (with_vectors and current.dense_version >= version)
    return current.version >= version and (not with_dense or newer)


def _staging(directory: Path, current: SnapshotInfo | None, version: int) -> tuple[Path, Path]:
    """A new staging folder and the final folder it becomes (stale staging folders removed)."""
    for stale in directory.glob(f".tmp-{_PREFIX}*"):  # left by a crash (the lock is held)
        shutil.rmtree(stale, ignore_errors=True)
    final = directory / f"{_PREFIX}{version:010d}"
    if current is not None and current.folder.name.startswith(final.name):
        # The same version again: a new folder, so readers of the current one see no change
        final = directory / f"{final.name}-{time.time_ns():x}"
    staging = directory / f".tmp-{final.name}-{os.getpid()}"
    staging.mkdir(parents=True)
    return staging, final


class SnapshotDraft:
    """The files of a snapshot being written into its staging folder (:func:`snapshot_draft`)."""

    def __init__(
        self,
        db: IndexDatabase,
        current: SnapshotInfo | None,
        version: int,
        staging: Path,
        final: Path,
    ) -> None:
        self._db, self._current = db, current
        self._version, self._staging, self._final = version, staging, final
        self._written: set[str] = set()
        self._blocks: dict[str, list[int]] = {}

    def add(self, name: str, array: npt.NDArray[Any]) -> None:
        """Write base array ``name`` (one of the snapshot's arrays) now."""
        assert name in _ARRAYS
        array = narrowed(name, np.ascontiguousarray(array))
        path = self._staging / f"{name}.npy"
        np.save(path, array, allow_pickle=False)
        self._written.add(path.name)
        if name in BLOCKED:
            self._blocks[path.name] = block_crcs(array)

    def finish(
        self,
        *,
        base: BaseArrays | None,
        vocab: list[str],
        dense: DenseIndex | FrozenDense | None,
        config: dict[str, Any],
        reuse_dense: bool,
    ) -> None:
        """Write the rest (see :func:`write_snapshot`), rename the folder and record it."""
        staging, final, current, version = self._staging, self._final, self._current, self._version
        if base is not None:
            for name in _ARRAYS:
                if f"{name}.npy" not in self._written:
                    self.add(name, getattr(base, name))
            text = "\n".join(vocab)
            if text.count("\n") != max(len(vocab) - 1, 0):  # the tokenizer yields none
                msg = "a vocabulary term holds a line break"
                raise ValueError(msg)
            (staging / _VOCAB).write_bytes(text.encode("utf-8", "surrogatepass"))
        dense_version = version
        kept: dict[str, list[Any]] = {}
        vectors = dense is not None
        if dense is not None:
            dense.save(staging)
        elif reuse_dense and current is not None and _same_embedder(current, config):
            vectors = True
            kept = link_files(current.folder, current.files, _DENSE_FILES, staging)
            if kept:
                dense_version = current.dense_version
        paths = sorted(staging.iterdir())
        blocks = self._blocks
        files = {
            p.name: kept.get(p.name)
            or [p.stat().st_size, _BLOCKED_FILE if p.name in blocks else _digest(p)]
            for p in paths
        }
        for path in paths:
            fsync_file(path)
        directory = self._db.directory
        fsync_dir(staging)
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
        fsync_dir(directory)
        if not vectors:
            config = {**config, "embedder": None}
        record = {
            "folder": final.name,
            "version": version,
            "dense_version": dense_version,
            "files": files,
            "block_bytes": BLOCK_BYTES,
            "blocks": blocks,
            "config": config,
        }
        with self._db.write("save a snapshot") as writer:
            writer.set_meta("snapshot", json.dumps(record))
            writer.prune_log(min(version, dense_version))
        for old in directory.glob(f"{_PREFIX}*"):
            if old.name != final.name:
                shutil.rmtree(old, ignore_errors=True)


def _same_embedder(current: SnapshotInfo, config: dict[str, Any]) -> bool:
    """The current snapshot's vector part (graph files, or none: flat) is for this embedder."""
    embedder = config.get("embedder")
    return embedder is not None and current.config.get("embedder") == embedder


def _report(path: Path, exc: Exception) -> None:
    """Log why a snapshot file is not used (quietly when a newer snapshot replaced it)."""
    if isinstance(exc, FileNotFoundError):
        logger.debug("Snapshot file %s was replaced (%s); reading the database", path, exc)
    else:
        logger.warning("Snapshot file %s is unusable (%s); rebuilding it", path, exc)
