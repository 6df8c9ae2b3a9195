"""From sources to indexable rows: reading files for sync, chunking, embedding misses."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.convert import UNIT_FORMATS, ConversionCache, Converted
from workspace_tools.core.errors import ConversionError, InvalidInputError
from workspace_tools.core.index.embedder import Embedder
from workspace_tools.core.store.corpus import ChunkRow, SourceRecord
from workspace_tools.core.text.chunking import ChunkingConfig, chunk_text
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.types import Chunk, SkippedFile, SyncReport

__all__ = [
    "DocumentLike",
    "chunk_converted",
    "embed_missing",
    "gc_paused",
    "indexed_text",
    "make_record",
    "progress_bar",
    "stage_file",
    "unpack_document",
]

DocumentLike = Any
"""``(id, content)``, ``(id, content, metadata)``, a mapping with ``id``/``content`` or an object
with ``id`` and ``page_content``/``content`` (LangChain ``Document`` works)."""

_LINK_TARGET: Final = re.compile(r"\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")


def unpack_document(doc: DocumentLike) -> tuple[str, str, dict[str, Any]]:
    """``(id, content, metadata)`` of anything :data:`DocumentLike`."""
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


def chunk_converted(
    source_id: str, converted: Converted, metadata: dict[str, Any], *, config: ChunkingConfig
) -> list[Chunk]:
    """Chunks of a converted source; PDF pages, slides and sheets go into chunk metadata."""
    meta = {**converted.metadata, **metadata, "format": converted.format}
    meta.pop("headings", None)
    chunks = chunk_text(
        converted.text,
        source_id=source_id,
        config=config,
        markdown=converted.markdown,
        metadata=meta,
    )
    if converted.format in UNIT_FORMATS:
        from workspace_tools.core.convert import locate_unit

        chunks = [
            dataclasses.replace(
                c, metadata={**c.metadata, **locate_unit(converted.text, c.start_line)}
            )
            for c in chunks
        ]
    return chunks


def indexed_text(chunk: Chunk) -> str:
    """Text whose terms are indexed: Markdown link targets (URLs, paths, anchors) left out."""
    if chunk.metadata.get("format") == "markdown" and "](" in chunk.text:
        return _LINK_TARGET.sub("]", chunk.text)
    return chunk.text


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


def progress_bar(total: int, label: str, *, show: bool) -> Any:
    """A tqdm bar, or ``None`` when hidden or there is nothing to do."""
    if not show or total == 0:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=label, unit="item", leave=False)


def embed_missing(
    embedder: Embedder,
    rows: list[ChunkRow],
    cache: Mapping[str, npt.NDArray[np.float32]],
    *,
    show_progress: bool,
) -> dict[str, npt.NDArray[np.float32]]:
    """Vectors of the row texts not in ``cache`` (each distinct text once), in batches.

    Raises:
        InvalidInputError: the embedder returned a wrong number of vectors.
    """
    todo: dict[str, str] = {}
    for row in rows:
        if row.hash not in cache and row.hash not in todo:
            todo[row.hash] = row.chunk.text
    out: dict[str, npt.NDArray[np.float32]] = {}
    if not todo:
        return out
    hashes, texts = list(todo), list(todo.values())
    size = max(1, embedder.max_batch_size)
    bar = progress_bar(len(texts), "Embedding", show=show_progress)
    try:
        for start in range(0, len(texts), size):
            batch = texts[start : start + size]
            matrix = embedder.embed(batch)
            if matrix.shape[0] != len(batch):
                msg = f"The embedder returned {matrix.shape[0]} vectors for {len(batch)} texts."
                raise InvalidInputError(msg)
            for offset, vector in enumerate(matrix):
                out[hashes[start + offset]] = np.asarray(vector, dtype=np.float32)
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    return out


def stage_file(
    rel: str,
    path: Path,
    previous: SourceRecord | None,
    report: SyncReport,
    *,
    conversions: ConversionCache,
    chunking: ChunkingConfig,
    read_only: bool,
) -> tuple[SourceRecord, list[Chunk]] | bool | None:
    """Read one file for sync, comparing it with its ``previous`` manifest row.

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
        data = path.read_bytes()
    except OSError as exc:
        report.skipped.append(SkippedFile(path=rel, reason=f"unreadable: {exc.strerror or exc}"))
        return None
    digest = text_hash(data)
    if previous and previous.kind == "file" and previous.content_hash == digest:
        previous.mtime_ns, previous.size = stat.st_mtime_ns, stat.st_size
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
    record.mtime_ns, record.size = stat.st_mtime_ns, stat.st_size
    return record, chunk_converted(rel, converted, {}, config=chunking)
