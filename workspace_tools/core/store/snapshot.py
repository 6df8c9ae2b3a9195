"""Derived snapshots: the BM25 base segment and the FAISS index, saved so a process opens fast.

A snapshot is a folder ``snapshot-<version>/`` holding what the database looked like at that
version, in the form search needs: the base segment's arrays (``.npy``, memory-mapped on load),
its vocabulary, and the FAISS index. The database's ``meta`` row ``snapshot`` names the folder,
its version and the size and hash of every file; nothing is trusted blindly: a file that is
missing or fails its hash is ignored and the data is rebuilt from the database (the source of
truth). Snapshots are written to a temporary folder, fsynced and renamed into place, one writer at
a time (a ``filelock`` lock, which works on every platform), then older folders are deleted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.index.segments import BaseArrays
from workspace_tools.core.store._rows import join_metadata, split_metadata
from workspace_tools.core.store._snapshot_checks import PAYLOAD as _PAYLOAD
from workspace_tools.core.store._snapshot_checks import PAYLOAD_OFFSETS as _PAYLOAD_OFFSETS
from workspace_tools.core.store._snapshot_checks import PAYLOAD_SOURCES as _PAYLOAD_SOURCES
from workspace_tools.core.store._snapshot_checks import check_base, check_payload
from workspace_tools.core.types import Chunk

if TYPE_CHECKING:
    from workspace_tools.core.index.dense import DenseIndex, FrozenDense
    from workspace_tools.core.store.database import IndexDatabase

__all__ = [
    "ChunkFields",
    "Payload",
    "SnapshotInfo",
    "load_base",
    "load_dense",
    "load_payload",
    "read_pointer",
    "write_snapshot",
]

logger = logging.getLogger(__name__)

_PREFIX: Final = "snapshot-"
_ARRAYS: Final = ("keys", "terms", "offsets", "indptr", "docs", "tf", "scores")
_DENSE: Final = "dense.faiss"


class ChunkFields(NamedTuple):
    """A chunk as a payload row decodes it: :class:`~workspace_tools.core.types.Chunk`'s fields.

    A separate type because it is a tuple (made ~10x cheaper than the frozen :class:`Chunk`):
    results read its fields directly and make the :class:`Chunk` only when a snippet is read.
    """

    id: str
    source_id: str
    start_line: int
    end_line: int
    headings: tuple[str, ...]
    heading_levels: tuple[int, ...]
    metadata: dict[str, Any]
    text: str

    def chunk(self) -> Chunk:
        """The :class:`Chunk` of these fields."""
        return Chunk(
            id=self.id,
            source_id=self.source_id,
            text=self.text,
            start_line=self.start_line,
            end_line=self.end_line,
            headings=self.headings,
            heading_levels=self.heading_levels,
            metadata=self.metadata,
        )


_new_tuple: Final = tuple.__new__
_TAILS_KEPT: Final = 4096
"""Parsed ``[headings, levels, metadata]`` values a payload keeps (most chunks share a few)."""


class Payload:
    """What a search result shows of each base row (memory-mapped at open).

    Row ``i`` is two byte ranges of :attr:`blob`: a header at ``offsets[2i]:offsets[2i + 1]``,
    then the chunk text as raw UTF-8 at ``offsets[2i + 1]:offsets[2i + 2]``. The header is
    ``id NUL source NUL start NUL end NUL [headings, levels, own, dropped]`` (the last part
    JSON; ids never hold NUL), where the chunk's metadata is its source's (:attr:`sources`,
    kept once per source) without ``dropped``, plus ``own``. Reading a row decodes two short
    byte ranges, and the JSON part is parsed once per distinct value, where a JSON row per chunk
    cost ~11 us for 1 KB of text.
    """

    __slots__ = ("_blob_view", "_offsets_view", "_sources", "_tails", "blob", "offsets", "raw")

    def __init__(self, *, blob: Any, offsets: Any, sources: bytes | dict[str, Any]) -> None:
        self.blob = blob
        """``uint8`` bytes of every row, one after the other."""
        self.offsets = offsets
        """``int64``, ``2 * rows + 1`` entries (see the class docstring)."""
        # memoryviews: slicing and indexing them costs a fraction of numpy's scalar paths
        self._blob_view = np.ascontiguousarray(blob, dtype=np.uint8).data
        self._offsets_view = np.ascontiguousarray(offsets, dtype=np.int64).data.cast("B").cast("q")
        self._tails: dict[str, tuple[tuple[str, ...], tuple[int, ...], Any, Any]] = {}
        self.raw = sources if isinstance(sources, bytes) else b""
        """The JSON of :attr:`sources` as saved (parsed on first use)."""
        self._sources = None if isinstance(sources, bytes) else sources

    @property
    def sources(self) -> dict[str, Any]:
        """``source id -> metadata`` of the rows' sources."""
        if self._sources is None:
            parsed = json.loads(self.raw) if self.raw else {}
            if not isinstance(parsed, dict) or not all(
                isinstance(v, dict) for v in parsed.values()
            ):
                msg = "the payload's source metadata is not a mapping of objects"
                raise ValueError(msg)
            self._sources = parsed
        return self._sources

    def row(self, number: int) -> ChunkFields | None:
        """``(id, source, start, end, headings, levels, metadata, text)`` of a base row.

        ``None`` for a row that was deleted before the payload was written.
        """
        offsets, blob = self._offsets_view, self._blob_view
        start, middle, stop = offsets[2 * number], offsets[2 * number + 1], offsets[2 * number + 2]
        if middle == start:
            return None
        cid, source, first, last, tail = str(blob[start:middle], "utf-8", "surrogatepass").split(
            "\0", 4
        )
        parsed = self._tails.get(tail)
        if parsed is None:
            headings, levels, own, dropped = json.loads(tail)
            parsed = (tuple(headings), tuple(levels), own, dropped)
            if len(self._tails) >= _TAILS_KEPT:
                self._tails.clear()
            self._tails[tail] = parsed
        metadata = join_metadata(self.sources.get(source, {}), parsed[2], parsed[3])
        text = str(blob[middle:stop], "utf-8", "surrogatepass")
        fields = (cid, source, int(first), int(last), parsed[0], parsed[1], metadata, text)
        return _new_tuple(ChunkFields, fields)  # as ChunkFields(*fields), without its __new__

    @staticmethod
    def encode(
        *,
        chunk_id: str,
        source: str,
        start: int,
        end: int,
        headings: list[str],
        levels: list[int],
        metadata: dict[str, Any],
        base: dict[str, Any],
        text: str,
    ) -> tuple[bytes, bytes]:
        """The two byte ranges of a row (``base``: its source's metadata, kept apart)."""
        own, dropped = split_metadata(metadata, base)
        tail = json.dumps(
            [headings, levels, own, dropped],
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=True,
        )
        head = "\0".join([chunk_id, source, str(start), str(end), tail])
        return head.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass")


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """The database's record of the latest snapshot."""

    folder: Path
    version: int
    files: dict[str, list[Any]]
    """Relative path -> ``[size, CRC-32 hex]``."""
    config: dict[str, Any]
    """What the snapshot was built with (BM25 parameters, embedder)."""
    dense_version: int
    """Database version the FAISS file reflects (older than :attr:`version` when a background
    merge kept the previous snapshot's file instead of serializing the index again)."""

    @property
    def has_dense(self) -> bool:
        """A FAISS index was saved."""
        return _DENSE in self.files


def read_pointer(db: IndexDatabase) -> SnapshotInfo | None:
    """The latest snapshot the database names (``None`` when there is none or it is garbled)."""
    raw = db.meta("snapshot")
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        name = str(data["folder"])
        if not name.startswith(_PREFIX) or "/" in name or "\\" in name or ".." in name:
            return None
        return SnapshotInfo(
            folder=db.directory / name,
            version=int(data["version"]),
            files={str(k): list(v) for k, v in dict(data["files"]).items()},
            config=dict(data.get("config") or {}),
            dense_version=int(data.get("dense_version", data["version"])),
        )
    except (ValueError, KeyError, TypeError):
        logger.warning(
            "The snapshot record of %s is garbled; rebuilding from the database", db.path
        )
        return None


def _verified(info: SnapshotInfo, name: str) -> Path | None:
    path = info.folder / name
    entry = info.files.get(name)
    try:
        if entry is None or path.stat().st_size != int(entry[0]) or _digest(path) != entry[1]:
            msg = "size or hash differs"
            raise ValueError(msg)
    except (OSError, ValueError, TypeError) as exc:
        _report(path, exc)
        return None
    return path


def load_base(info: SnapshotInfo) -> tuple[BaseArrays, list[str]] | None:
    """The BM25 base segment and its vocabulary, memory-mapped; ``None`` if anything is off."""
    arrays: dict[str, Any] = {}
    for name in _ARRAYS:
        path = _verified(info, f"{name}.npy")
        if path is None:
            return None
        try:
            # A plain ndarray view of the map (slicing a memmap costs ~100 us in __array_finalize__)
            arrays[name] = np.asarray(np.load(path, mmap_mode="r", allow_pickle=False))
        except (OSError, ValueError) as exc:
            _report(path, exc)
            return None
    path = _verified(info, "vocab.json")
    if path is None:
        return None
    try:
        vocab = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        _report(path, exc)
        return None
    base = BaseArrays(**arrays)
    # Sizes and hashes matched: what is wrong now was written wrong (a bug, or someone who also
    # rewrote the record), so it is refused, not rebuilt quietly.
    check_base(base, vocab, folder=info.folder)
    return base, vocab


def load_payload(info: SnapshotInfo, rows: int) -> Payload | None:
    """The result payload of the base rows (``None`` when absent or damaged: read the database)."""
    if _PAYLOAD not in info.files or _PAYLOAD_SOURCES not in info.files:
        return None  # a snapshot from before this payload format: results come from the database
    blob_path = _verified(info, _PAYLOAD)
    offsets_path = _verified(info, _PAYLOAD_OFFSETS)
    sources_path = _verified(info, _PAYLOAD_SOURCES)
    if blob_path is None or offsets_path is None or sources_path is None:
        return None
    try:
        # Mapped, not read into memory: the text of every chunk (54 MB at 50,000 chunks) would
        # count in the process's memory, where a mapped row costs a minor page fault (the check
        # above has just read the file into the page cache) the first time a result shows it.
        blob = np.asarray(np.load(blob_path, mmap_mode="r", allow_pickle=False))
        offsets = np.load(offsets_path, allow_pickle=False)
        sources = json.loads(sources_path.read_bytes())
    except (OSError, ValueError) as exc:
        _report(blob_path, exc)
        return None
    check_payload(blob, offsets, sources, rows=rows, folder=info.folder)
    return Payload(blob=blob, offsets=offsets, sources=sources)


def load_dense(info: SnapshotInfo, *, dimension: int, hnsw_threshold: int) -> DenseIndex | None:
    """The saved FAISS index; ``None`` when absent or damaged (it is then rebuilt)."""
    from workspace_tools.core.index.dense import DenseIndex

    path = _verified(info, _DENSE)
    if path is None:
        return None
    dead = info.folder / "dense.dead.npy"
    if dead.exists() and _verified(info, dead.name) is None:
        return None
    try:
        return DenseIndex.load(path, dimension=dimension, hnsw_threshold=hnsw_threshold)
    except IndexCorruptError as exc:
        logger.warning("%s; rebuilding it", exc)
        return None


def write_snapshot(
    db: IndexDatabase,
    *,
    version: int,
    base: BaseArrays | None,
    vocab: list[str],
    dense: DenseIndex | FrozenDense | None,
    config: dict[str, Any],
    payload: Payload | None = None,
    reuse_dense: bool = False,
) -> None:
    """Save a snapshot of database version ``version`` and point the database at it.

    With ``reuse_dense`` and no ``dense``, the previous snapshot's FAISS file is hard-linked
    into the new one (no copy, no serialization) when it was built for the same embedder; its
    older version is recorded, and the deletion log is kept from there, so a process that loads
    it catches up from the database.
    """
    from workspace_tools.core.store.database import storage_error

    try:
        _write_snapshot(
            db,
            version=version,
            base=base,
            vocab=vocab,
            dense=dense,
            config=config,
            payload=payload,
            reuse_dense=reuse_dense,
        )
    except OSError as exc:
        raise storage_error(exc, db.directory, "save a snapshot") from exc


def _write_snapshot(
    db: IndexDatabase,
    *,
    version: int,
    base: BaseArrays | None,
    vocab: list[str],
    dense: DenseIndex | FrozenDense | None,
    config: dict[str, Any],
    payload: Payload | None,
    reuse_dense: bool,
) -> None:
    from filelock import FileLock

    directory = db.directory
    with FileLock(str(directory / "snapshot.lock"), timeout=120):
        current = read_pointer(db)
        if current is not None and current.version >= version:
            if dense is None or current.dense_version >= version:
                return  # another process saved one at least as recent
            if current.version > version:
                return
        for stale in directory.glob(f".tmp-{_PREFIX}*"):  # left by a crash (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        final = directory / f"{_PREFIX}{version:010d}"
        if current is not None and current.folder.name.startswith(final.name):
            # The same version again, with its own FAISS file: a new folder, so that readers
            # of the current one never see its files change under its record.
            final = directory / f"{final.name}-{time.time_ns():x}"
        staging = directory / f".tmp-{final.name}-{os.getpid()}"
        staging.mkdir(parents=True)
        try:
            if base is not None:
                for name in _ARRAYS:
                    np.save(
                        staging / f"{name}.npy", np.asarray(getattr(base, name)), allow_pickle=False
                    )
                text = json.dumps(vocab, ensure_ascii=False, separators=(",", ":"))
                (staging / "vocab.json").write_text(text, encoding="utf-8")
            if payload is not None:
                np.save(staging / _PAYLOAD, np.asarray(payload.blob), allow_pickle=False)
                np.save(
                    staging / _PAYLOAD_OFFSETS,
                    np.asarray(payload.offsets, dtype=np.int64),
                    allow_pickle=False,
                )
                raw = payload.raw or json.dumps(
                    payload.sources, ensure_ascii=False, separators=(",", ":")
                ).encode("utf-8", "surrogatepass")
                (staging / _PAYLOAD_SOURCES).write_bytes(raw)
            dense_version = version
            kept: dict[str, list[Any]] = {}
            if dense is not None and len(dense):
                dense.save(staging / _DENSE)
            elif reuse_dense and current is not None and _same_dense(current, config):
                kept = _link_dense(current, staging)
                dense_version = current.dense_version
            files = {
                p.name: kept.get(p.name) or [p.stat().st_size, _digest(p)]
                for p in sorted(staging.iterdir())
            }
            _fsync_folder(staging)
            if final.exists():
                shutil.rmtree(final)
            os.replace(staging, final)
            _fsync_dir(directory)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        if not kept:
            config = {**config, "embedder": config.get("embedder") if _DENSE in files else None}
        record = {
            "folder": final.name,
            "version": version,
            "dense_version": dense_version,
            "files": files,
            "config": config,
        }
        with db.write("save a snapshot") as writer:
            writer.set_meta("snapshot", json.dumps(record))
            writer.prune_log(min(version, dense_version))
        for old in directory.glob(f"{_PREFIX}*"):
            if old.name != final.name:
                shutil.rmtree(old, ignore_errors=True)


def _same_dense(current: SnapshotInfo, config: dict[str, Any]) -> bool:
    """The current snapshot holds a FAISS file built for the embedder of ``config``."""
    embedder = config.get("embedder")
    return current.has_dense and embedder is not None and current.config.get("embedder") == embedder


def _link_dense(current: SnapshotInfo, staging: Path) -> dict[str, list[Any]]:
    """Hard-link (or copy, where links fail) the FAISS files of ``current`` into ``staging``.

    Returns:
        Their ``[size, CRC-32]`` records, as verified when they were written.
    """
    kept: dict[str, list[Any]] = {}
    for name in (_DENSE, "dense.dead.npy"):
        if name not in current.files:
            continue
        source, target = current.folder / name, staging / name
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        kept[name] = current.files[name]
    return kept


def _report(path: Path, exc: Exception) -> None:
    """Log why a snapshot file is not used (quietly when a newer snapshot replaced it)."""
    if isinstance(exc, FileNotFoundError):
        logger.debug("Snapshot file %s was replaced (%s); reading the database", path, exc)
    else:
        logger.warning("Snapshot file %s is unusable (%s); rebuilding it", path, exc)


def _digest(path: Path) -> str:
    """CRC-32 of a file (it detects damage, at several times the speed of a cryptographic hash)."""
    crc = 0
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


def _fsync_folder(folder: Path) -> None:
    for path in folder.iterdir():
        with open(path, "rb") as handle:
            os.fsync(handle.fileno())
    _fsync_dir(folder)


def _fsync_dir(folder: Path) -> None:
    """Persist a folder's entries where the platform allows it (not on Windows)."""
    if os.name == "nt":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
