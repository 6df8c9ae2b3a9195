"""Format 1 (generation folders) converted into the database, once, on a writable open.

Format 1 kept each save as a folder ``gen-NNNNNN/`` (manifest, chunks, terms, arrays) named by a
``CURRENT`` file. Opened writable, such an index is converted once into the database, in one
transaction, and its folders are deleted; opened read-only it cannot be converted, and the error
says so.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Final

from workspace_tools.core.errors import IndexCorruptError, IndexMismatchError
from workspace_tools.core.store.database import ChunkRecord, IndexDatabase

__all__ = ["migrate_legacy", "remove_legacy"]

logger = logging.getLogger("workspace_tools.core.store.migrate")

_LEGACY_POINTER: Final = "CURRENT"


def migrate_legacy(db: IndexDatabase, *, read_only: bool) -> None:
    """Convert a format-1 index in ``db.directory`` into the database (no-op without one)."""
    from workspace_tools.core.store._format1.generations import IndexStore
    from workspace_tools.core.store.corpus import Corpus

    directory = db.directory
    if not (directory / _LEGACY_POINTER).exists():
        return
    if read_only:
        msg = (
            f"The index in {directory} is in the older format 1. Open the workspace once "
            "without read_only=True to convert it (or rebuild it with rebuild=True)."
        )
        raise IndexMismatchError(msg)
    folder = IndexStore(directory).current()
    if folder is None:
        return
    try:
        corpus, settings, vocabulary = Corpus.load(folder)
        converted = []
        for record in corpus.sources.values():
            chunks = []
            for chunk_id in record.chunk_ids:
                row = corpus.chunks[chunk_id]
                terms = [vocabulary[t] for t in row.terms]
                chunks.append(ChunkRecord.of(row.chunk, hash=row.hash, terms=terms))
            converted.append((record, chunks))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        msg = (
            f"The index in {directory} (format 1) is damaged ({type(exc).__name__}: {exc}). "
            "Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
        )
        raise IndexCorruptError(msg) from exc
    import json

    with db.write("convert the index to format 2") as writer:
        writer.set_meta("settings", json.dumps(settings, sort_keys=True))
        for source, chunks in converted:
            writer.put_source(source, chunks)
        if settings.get("embedder"):
            writer.put_vectors(corpus.vectors)
    logger.warning("Converted the index in %s from format 1 to format 2", directory)
    remove_legacy(directory)


def remove_legacy(directory: Path) -> None:
    """Delete format-1 generation folders and their pointer."""
    (directory / _LEGACY_POINTER).unlink(missing_ok=True)
    for path in directory.glob("gen-*"):
        shutil.rmtree(path, ignore_errors=True)
    for path in directory.glob(".tmp-gen-*"):
        shutil.rmtree(path, ignore_errors=True)
