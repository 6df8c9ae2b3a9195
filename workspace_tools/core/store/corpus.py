"""The indexed corpus: sources, their chunks, chunk terms and cached vectors, saved without pickle.

One generation folder of the index holds:

* ``manifest.json``: format version, settings, embedder, one row per source (id, kind, content
  hash, mtime, size, chunk ids, metadata).
* ``chunks.jsonl``: one row per chunk (id, source, stable int key, line range, headings, text hash,
  metadata, text), in BM25 row order.
* ``vocab.json`` + ``token_ids.npy`` + ``token_offsets.npy``: the terms of every chunk, so BM25 can
  be rebuilt without tokenizing again.
* ``sparse/``: the bm25s index; ``dense.faiss``: the FAISS index.
* ``embedding_keys.json`` + ``embeddings.npy``: the embedding cache, keyed by chunk text hash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from workspace_tools.core.errors import IndexCorruptError
from workspace_tools.core.store._format1.generations import FORMAT_VERSION, read_json, write_json
from workspace_tools.core.store._rows import SourceRecord
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.types import Chunk

__all__ = ["ChunkRow", "Corpus", "SourceRecord", "text_hash"]


@dataclass(slots=True)
class ChunkRow:
    """A chunk with its terms, stable integer key and text hash."""

    chunk: Chunk
    terms: list[int]
    """Term ids (of the workspace tokenizer's vocabulary)."""
    key: int
    hash: str


@dataclass(slots=True)
class Corpus:
    """Sources and chunks in memory."""

    sources: dict[str, SourceRecord] = field(default_factory=dict)
    chunks: dict[str, ChunkRow] = field(default_factory=dict)
    next_key: int = 0
    vectors: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)
    """Embedding cache: chunk text hash -> unit vector."""

    def put(self, record: SourceRecord, rows: list[ChunkRow]) -> list[int]:
        """Insert or replace a source; returns the keys of the chunks it replaced."""
        removed = self.drop(record.id)
        self.sources[record.id] = record
        for row in rows:
            self.chunks[row.chunk.id] = row
        return removed

    def drop(self, source_id: str) -> list[int]:
        """Remove a source and its chunks; returns the removed chunk keys."""
        record = self.sources.pop(source_id, None)
        if record is None:
            return []
        keys = []
        for chunk_id in record.chunk_ids:
            row = self.chunks.pop(chunk_id, None)
            if row is not None:
                keys.append(row.key)
        return keys

    def new_key(self) -> int:
        """A fresh stable integer key for a chunk."""
        key = self.next_key
        self.next_key += 1
        return key

    def prune_vectors(self) -> None:
        """Forget cached vectors of texts no longer in the index."""
        live = {row.hash for row in self.chunks.values()}
        for digest in [d for d in self.vectors if d not in live]:
            del self.vectors[digest]

    # -- persistence -------------------------------------------------------------------------

    def save(self, folder: Path, *, settings: dict[str, Any], vocabulary: dict[str, int]) -> None:
        """Write manifest, chunks, terms and the embedding cache into ``folder``."""
        write_json(
            folder / "manifest.json",
            {
                "format_version": FORMAT_VERSION,
                "settings": settings,
                "next_key": self.next_key,
                "sources": [record.to_json() for record in self.sources.values()],
            },
        )
        ids: list[int] = []
        offsets = [0]
        with open(folder / "chunks.jsonl", "w", encoding="utf-8") as handle:
            for row in self.chunks.values():
                chunk = row.chunk
                handle.write(
                    json.dumps(
                        {
                            "id": chunk.id,
                            "source": chunk.source_id,
                            "key": row.key,
                            "start": chunk.start_line,
                            "end": chunk.end_line,
                            "headings": list(chunk.headings),
                            "levels": list(chunk.heading_levels),
                            "hash": row.hash,
                            "metadata": dict(chunk.metadata),
                            "text": chunk.text,
                        },
                        ensure_ascii=False,
                    )
                )
                handle.write("\n")
                ids.extend(row.terms)
                offsets.append(len(ids))
        write_json(folder / "vocab.json", list(vocabulary))
        np.save(folder / "token_ids.npy", np.asarray(ids, dtype=np.int32), allow_pickle=False)
        np.save(
            folder / "token_offsets.npy", np.asarray(offsets, dtype=np.int64), allow_pickle=False
        )
        self.prune_vectors()
        keys = list(self.vectors)
        write_json(folder / "embedding_keys.json", keys)
        if keys:
            matrix = np.vstack([self.vectors[k] for k in keys]).astype(np.float32)
            np.save(folder / "embeddings.npy", matrix, allow_pickle=False)

    @classmethod
    def load(cls, folder: Path) -> tuple[Corpus, dict[str, Any], list[str]]:
        """Read a corpus written by :meth:`save`; returns it, the saved settings and vocabulary."""
        manifest = read_json(folder / "manifest.json")
        if manifest.get("format_version") != FORMAT_VERSION:
            msg = (
                f"The index in {folder.parent} has format version "
                f"{manifest.get('format_version')}, "
                f"this version of workspace-tools reads {FORMAT_VERSION}. Rebuild it with "
                "Workspace(root, rebuild=True) or `workspace-tools index --rebuild`."
            )
            raise IndexCorruptError(msg)
        corpus = cls(next_key=int(manifest["next_key"]))
        for row in manifest["sources"]:
            record = SourceRecord.from_json(row)
            corpus.sources[record.id] = record
        try:
            vocab = read_json(folder / "vocab.json")
            token_ids = np.load(folder / "token_ids.npy", allow_pickle=False)
            offsets = np.load(folder / "token_offsets.npy", allow_pickle=False)
            with open(folder / "chunks.jsonl", encoding="utf-8") as handle:
                rows = [json.loads(line) for line in handle]
        except (OSError, ValueError, EOFError) as exc:
            msg = f"The index in {folder.parent} is damaged ({exc}). Rebuild it with rebuild=True."
            raise IndexCorruptError(msg) from exc
        if len(offsets) != len(rows) + 1 or (len(rows) and int(offsets[-1]) != len(token_ids)):
            msg = (
                f"The index in {folder.parent} is inconsistent (terms do not match chunks). "
                "Rebuild it with rebuild=True."
            )
            raise IndexCorruptError(msg)
        if len(token_ids) and (int(token_ids.max()) >= len(vocab) or int(token_ids.min()) < 0):
            msg = f"The index in {folder.parent} is inconsistent (unknown term ids). Rebuild it."
            raise IndexCorruptError(msg)
        terms_all = token_ids.tolist()
        for number, data in enumerate(rows):
            chunk = Chunk(
                id=data["id"],
                source_id=data["source"],
                text=data["text"],
                start_line=int(data["start"]),
                end_line=int(data["end"]),
                headings=tuple(data["headings"]),
                heading_levels=tuple(data.get("levels", ())),
                metadata=data["metadata"],
            )
            start, stop = int(offsets[number]), int(offsets[number + 1])
            corpus.chunks[chunk.id] = ChunkRow(
                chunk=chunk, terms=terms_all[start:stop], key=int(data["key"]), hash=data["hash"]
            )
        keys = read_json(folder / "embedding_keys.json")
        if keys:
            try:
                matrix = np.load(folder / "embeddings.npy", allow_pickle=False)
            except (OSError, ValueError, EOFError) as exc:
                msg = (
                    f"The embedding cache in {folder} is damaged ({exc}). "
                    "Rebuild it with rebuild=True."
                )
                raise IndexCorruptError(msg) from exc
            if matrix.shape[0] != len(keys):
                msg = (
                    f"The embedding cache in {folder} is inconsistent. "
                    "Rebuild it with rebuild=True."
                )
                raise IndexCorruptError(msg)
            corpus.vectors = {k: matrix[i] for i, k in enumerate(keys)}
        return corpus, dict(manifest["settings"]), [str(t) for t in vocab]
