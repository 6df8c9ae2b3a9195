"""From sources to indexable rows: reading files for sync, chunking, embedding misses."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.convert import MARKDOWN_EXTENSIONS, ConversionCache, Converted
from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.errors import ConversionError, InvalidInputError
from workspace_tools.core.store.database import SourceRecord
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.text.indexed import bm25_text
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.scan import ScanConfig
from workspace_tools.core.text.validate import check_unicode
from workspace_tools.core.types import Chunk, SkippedFile, SyncReport
from workspace_tools.core.workspace.chunks import chunk_converted
from workspace_tools.core.workspace.reporting import listening, progress_bar

__all__ = [
    "MAX_METADATA_BYTES",
    "DocumentLike",
    "check_metadata",
    "chunk_converted",  # from chunks.py, the module distributed/ uses too
    "embed_texts",
    "gc_paused",
    "indexed_text",
    "make_record",
    "progress_bar",  # from reporting.py
    "stage_file",
    "stage_texts",
    "unpack_document",
]

DocumentLike = Any
"""``(id, content)``, ``(id, content, metadata)``, a mapping with ``id``/``content`` or an object
with ``id`` and ``page_content``/``content`` (LangChain ``Document`` works)."""

RACY_WINDOW_NS: Final = 3_000_000_000
"""Files modified less than this long before a sync are hashed again by the next sync."""


MAX_METADATA_BYTES: Final = 16_384
"""Largest metadata of one indexed source, as JSON (shown with every result)."""


def unpack_document(doc: DocumentLike) -> tuple[str, str, dict[str, Any]]:
    """``(id, content, metadata)`` of anything :data:`DocumentLike`, checked before any change.

    Raises:
        InvalidInputError: An unknown shape, a lone surrogate in the id, content or metadata,
            metadata that is not JSON (a ``date``, a set...) or larger than
            :data:`MAX_METADATA_BYTES` as JSON.
    """
    doc_id, content, metadata = _unpack(doc)
    if not (doc_id.isascii() and content.isascii()):  # else no surrogate: no message to make
        check_unicode(doc_id, what=f"The id {doc_id[:80]!r}")
        check_unicode(content, what=f"The content of {doc_id[:80]!r}")
    check_metadata(doc_id, metadata)
    return doc_id, content, metadata


def check_metadata(doc_id: str, metadata: dict[str, Any]) -> None:
    """Refuse metadata that cannot be saved as JSON, or is larger than the cap.

    Raises:
        InvalidInputError: Names the key and the type, or the size and the limit.
    """
    if not metadata:  # most documents: "{}" is always valid (and small)
        return
    import json

    try:
        encoded = json.dumps(metadata, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        char = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else "?"
        msg = (
            f"The metadata of {doc_id[:80]!r} contains a lone surrogate "
            f"\\u{ord(char[:1] or '?'):04x} (half of a UTF-16 pair, e.g. a cut emoji), which "
            "cannot be stored as UTF-8. Send whole characters: fix or drop the broken one."
        )
        raise InvalidInputError(msg) from exc
    except (TypeError, ValueError) as exc:
        bad = next((k for k, v in metadata.items() if not _is_json(v)), None)
        where = f" under key {bad!r} ({type(metadata[bad]).__name__})" if bad is not None else ""
        msg = (
            f"The metadata of {doc_id[:80]!r} holds a value that is not JSON{where}: {exc}. "
            "Use strings, numbers, booleans, null, lists and objects (a date as an ISO string)."
        )
        raise InvalidInputError(msg) from exc
    if len(encoded) > MAX_METADATA_BYTES:
        msg = (
            f"The metadata of {doc_id[:80]!r} is {len(encoded)} bytes as JSON; the limit is "
            f"{MAX_METADATA_BYTES} (it is shown with every result). Keep metadata short: put long "
            "text in the content."
        )
        raise InvalidInputError(msg)


def _is_json(value: Any) -> bool:
    import json

    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _unpack(doc: DocumentLike) -> tuple[str, str, dict[str, Any]]:
    if isinstance(doc, tuple):
        if len(doc) == 2:
            return str(doc[0]), str(doc[1]), {}
        if len(doc) == 3:
            return str(doc[0]), str(doc[1]), dict(doc[2] or {})
    elif isinstance(doc, Mapping):
        content = doc.get("content", doc.get("page_content"))
        if "id" in doc and isinstance(content, str):
            return str(doc["id"]), content, dict(doc.get("metadata") or {})
    else:
        content = getattr(doc, "page_content", getattr(doc, "content", None))
        doc_id = getattr(doc, "id", None)
        if doc_id is not None and isinstance(content, str):
            return str(doc_id), content, dict(getattr(doc, "metadata", None) or {})
    msg = (
        f"Cannot index {type(doc).__name__}: pass (id, content), (id, content, metadata), "
        "a mapping with 'id' and 'content', or an object with 'id' and 'page_content'."
    )
    raise InvalidInputError(msg)


def make_record(
    source_id: str, kind: str, digest: str, converted: Converted, metadata: dict[str, Any]
) -> SourceRecord:
    """The manifest row of a source (its chunk ids are filled in when rows are staged)."""
    return SourceRecord(
        id=source_id,
        kind=kind,
        content_hash=digest,
        chunk_ids=[],
        metadata=dict(metadata),
        format=converted.format,
    )


def indexed_text(chunk: Chunk) -> str:
    """Text whose terms are indexed: Markdown link targets (URLs, paths, anchors) left out."""
    return bm25_text(chunk.text, chunk.metadata)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector during bulk object creation (no cycles are made)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


PROGRESS_STEP: Final = 128
"""Texts per embedder call while a progress bar shows: about 4.5 s at the slowest rate measured
(fp32 MiniLM on 2 busy cores, 28 long passages a second), well under 1 s with bf16 or a GPU."""


def embed_texts(
    embedder: Embedder, texts: Mapping[str, str], *, show_progress: bool
) -> dict[str, npt.NDArray[np.float32]]:
    """Vectors of ``texts`` (content hash -> text), in batches.

    Raises:
        InvalidInputError: the embedder returned a wrong number of vectors.
    """
    out: dict[str, npt.NDArray[np.float32]] = {}
    if not texts:
        return out
    # Longest first, so each call holds texts of similar length (less padding) and the ETA
    # errs on the slow side; with a bar, small calls let it move every few seconds.
    hashes = sorted(texts, key=lambda h: -len(texts[h]))
    values = [texts[h] for h in hashes]
    size = max(1, embedder.max_batch_size)
    if show_progress or listening():
        size = min(size, PROGRESS_STEP)
    bar = progress_bar(len(values), "Embedding", show=show_progress)
    starts = range(0, len(values), size)

    def run(start: int) -> tuple[int, npt.NDArray[np.float32]]:
        batch = values[start : start + size]
        matrix = embedder.embed(batch)
        if matrix.shape[0] != len(batch):
            msg = f"The embedder returned {matrix.shape[0]} vectors for {len(batch)} texts."
            raise InvalidInputError(msg)
        return start, matrix

    workers = min(embedding_concurrency(embedder), len(starts))
    try:
        if workers <= 1:
            done: Iterable[tuple[int, npt.NDArray[np.float32]]] = map(run, starts)
            _collect(done, hashes, out, bar)
        else:
            # Groups run concurrently for an embedder that says it may (a remote API waits on
            # the network, not the CPU; docs/benchmarks.md, "Concurrent embedding groups").
            with ThreadPoolExecutor(workers, thread_name_prefix="embed") as pool:
                futures = [pool.submit(run, start) for start in starts]
                try:
                    _collect((f.result() for f in as_completed(futures)), hashes, out, bar)
                finally:
                    for future in futures:
                        future.cancel()
    finally:
        if bar is not None:
            bar.close()
    return out


def embedding_concurrency(embedder: Embedder) -> int:
    """How many ``embed`` calls may run at once: the embedder's ``max_concurrency``, else 1.

    The local models keep 1 (one call already uses every core); the adapters of remote
    embedders (LangChain ``Embeddings``, embedding functions) allow a few.
    """
    value = getattr(embedder, "max_concurrency", None)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return 1
    return value


def _collect(
    done: Iterable[tuple[int, npt.NDArray[np.float32]]],
    hashes: list[str],
    out: dict[str, npt.NDArray[np.float32]],
    bar: Any,
) -> None:
    for start, matrix in done:
        for offset, vector in enumerate(matrix):
            out[hashes[start + offset]] = np.asarray(vector, dtype=np.float32)
        if bar is not None:
            bar.update(len(matrix))


def stage_file(
    rel: str,
    path: Path,
    previous: SourceRecord | None,
    report: SyncReport,
    *,
    conversions: ConversionCache,
    chunking: ChunkingConfig,
    read_only: bool,
    mounts: Mounts,
    scan_config: ScanConfig,
) -> tuple[SourceRecord, list[Chunk]] | bool | None:
    """Read one file for sync, comparing it with its ``previous`` manifest row.

    The bytes are read through :func:`read_inside` (no link followed out of its folder, regular
    files only), not through ``path``, which a scan saw but which may have changed since.

    Returns:
        ``None`` when skipped (the reason goes into ``report``), ``False`` when unchanged,
        ``True`` when unchanged but its mtime moved (``previous`` is updated), else the new
        record and its chunks.
    """
    try:
        stat = path.stat()
        if (
            previous
            and previous.kind == "file"
            and previous.mtime_ns == stat.st_mtime_ns
            and previous.size == stat.st_size
        ):
            report.unchanged += 1
            return False
        data, stat = scan_config.read(*mounts.route(rel))
    except OSError as exc:
        report.skipped.append(SkippedFile(path=rel, reason=f"unreadable: {exc.strerror or exc}"))
        return None
    except InvalidInputError as exc:  # a link out of the root, a FIFO, grown too large...
        report.skipped.append(SkippedFile(path=rel, reason=str(exc)))
        return None
    digest = text_hash(data)
    mtime_ns = _trusted_mtime(stat.st_mtime_ns)
    if previous and previous.kind == "file" and previous.content_hash == digest:
        if (previous.mtime_ns, previous.size) == (mtime_ns, stat.st_size):
            report.unchanged += 1
            return False
        previous.mtime_ns, previous.size = mtime_ns, stat.st_size
        report.unchanged += 1
        return True
    try:
        converted = conversions.convert(path, data, digest, store=not read_only)
    except ConversionError as exc:
        report.skipped.append(SkippedFile(path=rel, reason=str(exc)))
        return None
    report.formats[converted.format] = report.formats.get(converted.format, 0) + 1
    (report.updated if previous else report.added).append(rel)
    record = make_record(rel, "file", digest, converted, {})
    record.mtime_ns, record.size = mtime_ns, stat.st_size
    return record, chunk_converted(rel, converted, {}, config=chunking)


def _trusted_mtime(mtime_ns: int) -> int:
    """``mtime_ns``, or 0 when it is too recent to prove the next change (git's "racy" entries).

    A file written again within the file system's timestamp granularity (up to 2 s on FAT, 1 s
    on some network and older file systems) keeps its mtime; with the same size, the next sync
    could not tell it changed. Recording 0 for recent files makes that sync read and hash them
    once more; by then their mtime is old enough to be trusted.
    """
    return 0 if time.time_ns() - mtime_ns < RACY_WINDOW_NS else mtime_ns


def stage_texts(
    latest: Mapping[str, tuple[str, dict[str, Any]]],
    previous: Mapping[str, SourceRecord | None],
    *,
    chunking: ChunkingConfig,
    report: SyncReport,
    chunk_ids: dict[str, list[str]],
    previous_of: dict[str, SourceRecord | None],
    digests: dict[str, str] | None = None,
) -> list[tuple[SourceRecord, list[Chunk]]]:
    """Records and chunks of the texts of an ``index_many`` that changed.

    Args:
        latest: Source id -> (text, metadata), the last one given for each id.
        previous: Source id -> its stored row (``None``: new).
        chunking: How texts are chunked.
        report: Counts unchanged, added and updated sources.
        chunk_ids: Filled with the chunk ids of the unchanged texts.
        previous_of: Filled with the row each changed text replaces (``None``: a new one).
        digests: Filled with ``text -> text_hash(text)`` of each changed text (its chunk's
            hash when the text is one chunk).
    """
    changed: list[tuple[str, Converted, dict[str, Any], str, bool]] = []
    for source_id, (content, metadata) in latest.items():
        digest = text_hash(content)
        old = previous.get(source_id)
        if old and old.content_hash == digest and old.metadata == metadata:
            report.unchanged += 1
            chunk_ids[source_id] = list(old.chunk_ids)
            continue
        previous_of[source_id] = old
        if digests is not None:
            digests[content] = digest
        markdown = _suffix(source_id).lower() in MARKDOWN_EXTENSIONS
        converted = Converted(
            text=content, format="markdown" if markdown else "text", markdown=markdown
        )
        changed.append((source_id, converted, metadata, digest, old is not None))
    staged: list[tuple[SourceRecord, list[Chunk]]] = []
    for source_id, converted, metadata, digest, replaces in changed:
        staged.append(
            (
                make_record(source_id, "text", digest, converted, metadata),
                chunk_converted(source_id, converted, metadata, config=chunking),
            )
        )
        (report.updated if replaces else report.added).append(source_id)
    return staged


def _suffix(source_id: str) -> str:
    """``Path(source_id).suffix`` without making a path object (one per indexed text)."""
    name = source_id.rsplit("/", 1)[-1]
    if not name or name == ".":  # "a/", "a/.", "": the path object finds the name
        return Path(source_id).suffix
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""
