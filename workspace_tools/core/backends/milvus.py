"""The Milvus backend: chunks, BM25 and dense vectors in a Milvus collection (``milvus`` extra).

The collection follows the database's change log and is rebuilt when it does not match.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends._milvus_filters import milvus_expression
from workspace_tools.core.backends._milvus_schema import SCHEMA_VERSION, connect, create_collection
from workspace_tools.core.backends.base import BackendHits, BackendQuery, Hit
from workspace_tools.core.backends.follow import ChangeFollower, TokenizerCheck
from workspace_tools.core.errors import StorageError
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.store.database import Changes, ChunkRecord
from workspace_tools.core.text.indexed import bm25_text
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = ["MilvusBackend", "term_token"]

logger = logging.getLogger(__name__)

MAX_TOP_K: Final = 16_384
"""Most hits Milvus returns for one search."""
_BATCH: Final = 500
"""Rows per insert or upsert call."""
_PREFIX: Final = "workspace_tools."


def term_token(term: str) -> str:
    """The token a tokenizer term is written as (12 hex digits: one token for any analyzer)."""
    return hashlib.blake2b(term.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()


class MilvusBackend:
    """A Milvus collection kept in step with the index database.

    Args:
        follower: The workspace's change-log follower (over the index database).
        uri: A Milvus Lite file path or a server URI.
        token: The server token, if any.
        collection: Collection name (default: derived from the index folder).
        index_dir: The index folder (names the default collection).
        analyzer: ``workspace`` or a Milvus analyzer name.
        bm25_config: BM25 parameters (``None``: no BM25 side).
        embedder: ``(model_id, dimension)`` (``None``: no vector side).
        read_only: The workspace refuses changes (the collection still follows the database).
    """

    name = "milvus"

    def __init__(
        self,
        *,
        follower: ChangeFollower,
        uri: str,
        token: str | None,
        collection: str | None,
        index_dir: Any,
        analyzer: str,
        bm25_config: BM25Config | None,
        embedder: tuple[str, int] | None,
        read_only: bool,
        tokenizer: Tokenizer | None = None,
    ) -> None:
        self.follower = follower
        self.db = follower.db
        self.tokenizer = tokenizer or Tokenizer()
        """Makes the terms of the ``workspace`` analyzer from each stored text."""
        self._tokenizer_check = TokenizerCheck(self.tokenizer, self.db.directory)
        self.uri = uri
        self.analyzer = analyzer
        self.bm25_config = bm25_config
        self.embedder = embedder
        self.read_only = read_only
        digest = hashlib.blake2b(str(index_dir).encode(), digest_size=6).hexdigest()
        self.collection = collection or f"workspace_tools_{digest}"
        self._token = token
        self._client: Any = None
        self.version = -1
        """Database version the collection reflects (``-1``: not checked yet)."""
        self._count = 0
        self._pending: dict[int, str] = {}
        """Chunks whose vectors the embedding cache lacks (not in the collection yet)."""
        self._saved = -1
        follower.follow(self)

    @property
    def client(self) -> Any:
        """The ``MilvusClient`` (connected on first use)."""
        if self._client is None:
            with self._guard("connect"):
                self._client = connect(self.uri, self._token)
        return self._client

    def _settings(self) -> str:
        bm25 = None
        if self.bm25_config is not None:
            bm25 = {"k1": self.bm25_config.k1, "b": self.bm25_config.b}
        return json.dumps(
            {
                "schema": SCHEMA_VERSION,
                "analyzer": self.analyzer,
                "bm25": bm25,
                "embedder": list(self.embedder) if self.embedder else None,
            },
            sort_keys=True,
        )

    def _database_id(self) -> str:
        return self.db.meta("database_id") or ""

    def _properties(self) -> dict[str, str]:
        with self._guard("describe the collection"):
            info = self.client.describe_collection(self.collection)
        return {str(k): str(v) for k, v in (info.get("properties") or {}).items()}

    def _record(self, version: int) -> None:
        with self._guard("record the applied version"):
            self.client.alter_collection_properties(
                self.collection,
                properties={
                    _PREFIX + "version": str(version),
                    _PREFIX + "database": self._database_id(),
                    _PREFIX + "settings": self._settings(),
                },
            )
        self.version = version

    def _open_collection(self) -> None:
        """Trust the collection's recorded version when it follows this database, else rebuild."""
        if self.version >= 0:
            return
        with self._guard("open the collection"):
            exists = self.client.has_collection(self.collection)
        if exists:
            props = self._properties()
            recorded = int(props.get(_PREFIX + "version", "-1"))
            trusted = (
                props.get(_PREFIX + "database") == self._database_id()
                and props.get(_PREFIX + "settings") == self._settings()
                and int(self.db.meta("horizon") or 0) <= recorded <= self.db.version()
            )
            if trusted:
                self.version = recorded
                return
            logger.info("Milvus collection %s is stale: rebuilding it", self.collection)
        self._rebuild()

    def _rebuild(self) -> None:
        with self._guard("create the collection"):
            if self.client.has_collection(self.collection):
                self.client.drop_collection(self.collection)
            create_collection(
                self.client,
                self.collection,
                analyzer=self.analyzer,
                bm25_config=self.bm25_config,
                dimension=self.embedder[1] if self.embedder else None,
            )
        self._pending = {}
        rows = self.db.snapshot_of_rows()
        for batch in _chunks([chunk.key for chunk in rows.chunks], 2000):
            self._upsert(batch)
        self._record(rows.version)
        self._count = len(rows.chunks)

    def cursor(self) -> int:
        """The database version the collection reflects (``-1``: not checked yet)."""
        return self.version

    def rebuild(self) -> None:
        """Trust the collection's recorded version when it follows this database, else rebuild."""
        self._open_collection()
        self._count = self.db.count("chunks")

    def reset(self) -> None:
        """Forget what this process loaded (the collection is checked again on next use)."""
        self.version = -1

    def apply(self, changes: Changes) -> None:
        """Delete and upsert the chunks written after the collection's version."""
        if self.version < 0 or self.version >= changes.version:  # < 0: no collection opened
            return
        fresh = changes.after(self.version)
        dead = [removed.key for removed in fresh.removed_chunks]
        for key in dead:
            self._pending.pop(key, None)
        if dead:
            with self._guard("delete chunks"):
                self.client.delete(self.collection, ids=dead)
        for batch in _chunks([chunk.key for chunk in fresh.chunks], 2000):
            self._upsert(batch)
        self._record(changes.version)
        if dead or fresh.chunks:
            self._count = self.db.count("chunks")

    def _upsert(self, keys: list[int]) -> None:
        records = self.db.chunks(keys)
        if self.bm25_config is not None and self.analyzer == "workspace":
            self._tokenizer_check(self.db.meta("settings"))
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        if self.embedder is not None:
            vectors = self.db.vectors({r.hash for r in records.values()})
        rows = []
        for key, record in records.items():
            vector = vectors.get(record.hash)
            if self.embedder is not None and vector is None:
                self._pending[key] = record.hash
                continue
            rows.append(self._row(record, vector))
        for start in range(0, len(rows), _BATCH):
            with self._guard("write chunks"):
                self.client.upsert(self.collection, rows[start : start + _BATCH])

    def _row(self, record: ChunkRecord, vector: npt.NDArray[np.float32] | None) -> dict[str, Any]:
        row: dict[str, Any] = {
            "key": record.key,
            "source_id": record.source,
            "metadata": record.metadata,
        }
        if self.bm25_config is not None:
            if self.analyzer == "workspace":
                # The database stores no terms: the workspace tokenizer makes them from the text
                indexed = bm25_text(record.text, record.metadata)
                terms = self.tokenizer.tokenize(indexed)
                text = " ".join(term_token(t) for t in terms)
            else:
                text = record.text
            row["text"] = _clip(text)
        if vector is not None:
            row["dense"] = np.asarray(vector, dtype=np.float32).tolist()
        return row

    def __len__(self) -> int:
        return self._count if self.version >= 0 else 0

    def search(self, query: BackendQuery) -> BackendHits:
        """BM25 and vector hits from the collection (see :meth:`SearchBackend.search`)."""
        conditions = query.filter.conditions if query.filter is not None else None
        expression = milvus_expression(conditions) if conditions else ""  # "": no per-row check
        hits = BackendHits()
        if self.empty or self.version < 0:
            return hits
        if query.terms and self.bm25_config is not None:
            text = query.text
            if self.analyzer == "workspace":
                text = " ".join(term_token(t) for t in query.terms)
            found = self._search(text, "sparse", "BM25", query.bm25_k, expression)
            # Milvus Lite returns BM25 scores negated; a server returns them positive.
            hits.bm25 = [Hit(key, abs(score)) for key, score in found if score != 0]
        if query.vector is not None and self.embedder is not None:
            query_vector = np.asarray(query.vector, dtype=np.float32).tolist()
            hits.vector = self._search(query_vector, "dense", "COSINE", query.vector_k, expression)
        return hits

    @property
    def empty(self) -> bool:
        """The database counts as empty (``rebuild=True`` until its first commit)."""
        return self.follower.empty

    def _search(self, data: Any, field: str, metric: str, k: int, expression: str) -> list[Hit]:
        with self._guard("search"):
            found = self.client.search(
                self.collection,
                data=[data],
                anns_field=field,
                limit=max(1, min(k, MAX_TOP_K)),
                filter=expression,
                search_params={"metric_type": metric},
                output_fields=["key"],
            )
        return [Hit(int(hit["key"]), float(hit["distance"])) for hit in found[0]]

    def vector_count(self) -> int | None:
        """Chunks with a vector in the collection."""
        if self.embedder is None:
            return 0
        return max(0, len(self) - len(self._pending))

    def ensure_vectors(self, dimension: int, model_id: str) -> dict[int, str]:
        """Chunks the collection lacks for want of a cached vector."""
        del dimension, model_id  # the Workspace has caught up before asking
        return dict(self._pending)

    def add_vectors(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Insert the pending chunks whose vectors arrived."""
        ready = [k for k, h in self._pending.items() if h in vectors]
        if not ready:
            return
        records = self.db.chunks(ready)
        rows = [self._row(r, vectors[r.hash]) for r in records.values()]
        for key in ready:
            self._pending.pop(key, None)
        for start in range(0, len(rows), _BATCH):
            with self._guard("write chunks"):
                self.client.upsert(self.collection, rows[start : start + _BATCH])

    def has_unsaved(self) -> bool:
        """Whether writes happened since the last :meth:`merge` (``save()``)."""
        return self._saved != self.version

    def merge(self, *, save: bool) -> None:
        """Flush the collection's writes (Milvus merges its segments itself)."""
        if save and self.version >= 0:
            with self._guard("flush"):
                self.client.flush(self.collection)
        self._saved = self.version

    def close(self) -> None:
        """Close the client connection (reopened on next use)."""
        client, self._client = self._client, None
        if client is not None:
            with self._guard("close"):
                client.close()

    def _guard(self, action: str) -> _Guard:
        return _Guard(self, action)


class _Guard:
    """Turn a Milvus failure into a :class:`StorageError` naming the collection and action."""

    def __init__(self, backend: MilvusBackend, action: str) -> None:
        self.backend, self.action = backend, action

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        from pymilvus.exceptions import MilvusException

        if isinstance(exc, MilvusException):
            b = self.backend
            msg = (
                f"Milvus could not {self.action} on collection {b.collection!r} at {b.uri!r}: "
                f"{getattr(exc, 'message', exc)}. Check that the server is reachable and the "
                "token is right; rebuild with rebuild=True (CLI: --rebuild) if it persists."
            )
            raise StorageError(msg) from exc


def _clip(text: str, limit: int = 65_000) -> str:
    """Text within Milvus' VARCHAR limit (65,535 bytes)."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", "ignore")


def _chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
