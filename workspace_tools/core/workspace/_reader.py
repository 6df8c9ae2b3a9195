"""Reads of a :class:`Workspace`: rank, build results, read files."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.base import BackendQuery, caches_results
from workspace_tools.core.convert import Converted
from workspace_tools.core.embedding.embedder import embed_query
from workspace_tools.core.errors import ConversionError, InvalidInputError, WorkspaceError
from workspace_tools.core.ranking.content_kinds import KIND_KEY, prior_of, reweigh
from workspace_tools.core.ranking.filters import Filter
from workspace_tools.core.ranking.fusion import FusedHit
from workspace_tools.core.ranking.multi import check_queries, fuse_rankings
from workspace_tools.core.ranking.ranking import fuse, resolve_mode
from workspace_tools.core.text.scan import normalise_id, read_inside
from workspace_tools.core.types import Chunk, SearchResult
from workspace_tools.core.workspace._host import WorkspaceHost
from workspace_tools.core.workspace._lines import (
    DEFAULT_READ_CHARS,
    TextPage,
    page_of_lines,
    text_of_chunks,
)
from workspace_tools.core.workspace._results import ChunkFields, build_result

__all__ = ["MAX_QUERY_CHARS", "IndexReader"]

MAX_QUERY_CHARS: Final = 10_000
"""Longest query accepted, in characters."""
_SEARCH_ATTEMPTS: Final = 3
_CHUNK_CACHE: Final = 4096
"""Chunks kept in memory for results (the rest stay in the database until a result needs them)."""
_KIND_CACHE: Final = 500_000
"""Chunk kinds kept in memory for the ranking prior (a key's kind never changes)."""


class IndexReader:
    """Searches and reads the index of a workspace (its collaborator for reads)."""

    def __init__(self, ws: WorkspaceHost) -> None:
        self.ws = ws

    def search(
        self,
        query: str | Sequence[str],
        *,
        top_k: int = 10,
        mode: str | None = None,
        min_score: float | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the public API name
        vector_weight: float | None = None,
    ) -> list[SearchResult]:
        """Rank chunks for ``query``."""
        queries = check_queries(query, max_chars=MAX_QUERY_CHARS)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            msg = f"top_k must be a whole number of at least 1, got {top_k!r}."
            raise InvalidInputError(msg)
        weight = self.ws.vector_weight if vector_weight is None else vector_weight
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
            msg = f"vector_weight must be a number between 0 and 1, got {vector_weight!r}."
            raise InvalidInputError(msg)
        chosen = resolve_mode(mode, self.ws.modes)
        conditions = self._normalise_filter(filter) if filter is not None else None
        compiled = Filter.of(conditions) if conditions is not None else None  # checked once
        if not queries:
            return []
        options: dict[str, Any] = {
            "chosen": chosen,
            "min_score": min_score,
            "filter": compiled if conditions else None,
            "weight": float(weight),
        }
        if len(queries) == 1:
            return self._search_one(queries[0], top_k=top_k, **options)
        pool = max(2 * top_k, 20)
        # Snippets mark the words of every formulation (the window with most of them wins).
        marked = list(dict.fromkeys(t for q in queries for t in self.ws.tokenizer.query_terms(q)))
        self.ws._refresh()  # one catch-up for every formulation: they rank the same state
        rankings = [
            self._search_one(q, top_k=pool, marked=marked, refreshed=True, **options)
            for q in queries
        ]
        by_id: dict[str, SearchResult] = {}
        for ranking in rankings:
            for result in ranking:
                by_id.setdefault(result.id, result)
        fused = fuse_rankings([[r.id for r in ranking] for ranking in rankings])
        results = []
        for hit in fused[:top_k]:
            result = by_id[hit.key]
            details: dict[str, float] = {}
            for which, rank in zip(hit.found_by, hit.ranks, strict=True):
                details[f"q{which + 1}_rank"] = float(rank)
                details[f"q{which + 1}_score"] = rankings[which][rank - 1].score
            result.score, result.score_details = hit.score, details
            result.found_by = tuple(queries[which] for which in hit.found_by)
            results.append(result)
        return results

    def _search_one(
        self,
        query: str,
        *,
        top_k: int,
        chosen: str,
        min_score: float | None,
        filter: Filter | None,  # noqa: A002 - as in search()
        weight: float,
        marked: list[str] | None = None,
        refreshed: bool = False,
    ) -> list[SearchResult]:
        """Results of one checked formulation (see :meth:`search`).

        ``marked``: the snippet terms; ``refreshed``: the caller caught up already.
        """
        counts = self.ws.tokenizer.query_term_counts(query)
        terms = list(counts) if marked is None else marked
        if not refreshed:
            self.ws._refresh()  # the one catch-up of a search (a retry below catches up again)
        query_vector = None
        if chosen in {"vector", "hybrid"}:
            self.ws._ensure_vectors(refreshed=True)
            assert self.ws.embedder is not None
            query_vector = embed_query(self.ws.embedder, query)
        results: list[SearchResult] = []
        for attempt in range(_SEARCH_ATTEMPTS):
            # Chunk rows never change under a key, so results are consistent with the state the
            # ranking used unless a row was deleted since; then catch up and rank again. The last
            # attempt holds one read transaction, so nothing can move under it.
            consistent = self.ws._db.reading() if attempt else contextlib.nullcontext()
            with self.ws._lock, consistent:
                if attempt:
                    self.ws._refresh()
                fetched: dict[int, Chunk | ChunkFields] = {}  # rows the ranking already read
                ranked = self._rank(
                    query,
                    counts,
                    query_vector,
                    chosen,
                    top_k=top_k,
                    filter=filter,
                    vector_weight=weight,
                    fetched=fetched,
                )
                found = {hit.key: fetched[hit.key] for hit in ranked if hit.key in fetched}
                if len(found) < len(ranked):
                    found.update(self._chunks([hit.key for hit in ranked if hit.key not in found]))
                if len(found) == len(ranked) or attempt + 1 == _SEARCH_ATTEMPTS:
                    results = [
                        build_result(
                            found[hit.key], hit.score, hit.details(), terms, self.ws.tokenizer
                        )
                        for hit in ranked
                        if hit.key in found
                    ]
                    break
        if min_score is not None:
            results = [r for r in results if r.score >= min_score]
        return results

    def _normalise_filter(self, conditions: Any) -> Any:
        """``conditions`` with every ``source_id`` value written as the stored id.

        ``'/docs/api.md'`` (Mastra's id style) and ``'./docs/api.md'`` name the source stored as
        ``'docs/api.md'``, as they do for :meth:`index` and :meth:`remove`. Anything else
        (malformed parts included) is left for the filter check to judge.
        """
        if not isinstance(conditions, Mapping):
            return conditions
        out: dict[Any, Any] = {}
        for key, value in conditions.items():
            if key in {"$and", "$or"} and isinstance(value, list | tuple):
                out[key] = [self._normalise_filter(item) for item in value]
            elif key == "source_id":
                out[key] = self._normalise_id_condition(value)
            else:
                out[key] = value
        return out

    def _normalise_id_condition(self, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return self.ws._normalise_source_id(value)
            except WorkspaceError:
                return value
        if isinstance(value, Mapping):
            return {op: self._normalise_id_condition(v) for op, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._normalise_id_condition(v) for v in value]
        return value

    def _chunks(self, keys: list[int]) -> dict[int, Chunk | ChunkFields]:
        """Chunks by key: from the backend (its fast read and cache), else from the database.

        Rows read from the database are kept in memory (a key's chunk never changes).
        """
        state = self.ws._state
        found: dict[int, Chunk | ChunkFields] = {}
        if caches_results(state):
            found.update(state.cached_chunks(keys))
        if len(found) == len(keys):
            return found
        cache = self.ws._chunk_cache
        missing = []
        for key in keys:
            if key not in found:
                if key in cache:
                    found[key] = cache[key]
                else:
                    missing.append(key)
        if missing:
            for key, record in self.ws._db.chunks(missing).items():
                found[key] = cache[key] = record.chunk()
            while len(cache) > _CHUNK_CACHE:
                del cache[next(iter(cache))]
        return found

    def _rank(
        self,
        query: str,
        counts: Mapping[str, int],
        query_vector: npt.NDArray[np.float32] | None,
        chosen: str,
        *,
        top_k: int,
        filter: Filter | None,  # noqa: A002 - as in search()
        vector_weight: float,
        fetched: dict[int, Chunk | ChunkFields],
    ) -> list[FusedHit]:
        """The ranked hits, best first, from the search backend (lock held).

        Chunks read to learn their kind are left in ``fetched`` for the results.
        """
        state = self.ws._state
        total = len(state)
        if total == 0:
            return []
        k = min(top_k, total)
        pool = min(total, max(2 * k, 100))
        prior = self.ws.ranking_prior
        single = chosen in {"bm25", "vector"}
        # A prior never raises a score, so when none of a single mode's top k is weighed down,
        # those k are the answer as they are; otherwise the wider pool is fetched and weighed.
        for want in (k, pool) if prior and single else (k if single else pool,):
            hits = state.search(
                BackendQuery(
                    text=query,
                    terms=counts if chosen in {"bm25", "hybrid"} else None,
                    vector=query_vector,
                    bm25_k=want,
                    vector_k=want,
                    filter=filter,
                )
            )
            bm25_hits: Sequence[tuple[int, float]] = hits.bm25
            vector_hits: Sequence[tuple[int, float]] = hits.vector
            if not prior:
                break
            kinds = self._kinds([key for key, _ in [*bm25_hits, *vector_hits]], fetched)
            plain = all(prior_of(kind) == 1.0 for kind in kinds.values())
            if plain:
                break  # every weight is 1.0: the scores stand as they are
            if want == pool:
                # Each side's scores weighed by the kind of file (core/ranking/content_kinds.py).
                bm25_hits = reweigh(bm25_hits, kinds.get)
                vector_hits = reweigh(vector_hits, kinds.get)
                break
        return fuse(
            chosen,
            bm25_hits,
            vector_hits,
            k=k,
            fusion=self.ws.fusion,
            vector_weight=vector_weight,
        )

    def _kinds(self, keys: list[int], fetched: dict[int, Chunk | ChunkFields]) -> dict[int, object]:
        """The content kind of each chunk key (kept in memory: a key's chunk never changes).

        Chunks read for it are added to ``fetched``.
        """
        kinds = self.ws._kind_cache
        missing = list({key for key in keys if key not in kinds})
        if missing:
            if len(kinds) > _KIND_CACHE:
                kinds.clear()
            for key, chunk in self._chunks(missing).items():
                kinds[key] = chunk.metadata.get(KIND_KEY)
                fetched[key] = chunk
        return {key: kinds.get(key) for key in keys}

    def read(
        self,
        path: str | None = None,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        chunk_id: str | None = None,
        max_chars: int = DEFAULT_READ_CHARS,
    ) -> TextPage:
        """Lines of a file's converted text (or of an indexed string), a page at a time."""
        if chunk_id is not None:
            if start_line is not None or end_line is not None:
                msg = "Give either chunk_id or start_line/end_line, not both."
                raise InvalidInputError(msg)
            chunk = self._chunk_by_id(chunk_id, path)
            path, start_line, end_line = chunk.source_id, chunk.start_line, chunk.end_line
        if not isinstance(path, str) or not path.strip():
            msg = "Give the path of a file (relative to the workspace root) or a chunk_id."
            raise InvalidInputError(msg)
        source_id = self.ws._normalise_source_id(path)
        with self.ws._lock:
            self.ws._refresh()
            record = self.ws._sources.get(source_id)
        if record is not None and record.kind == "text":
            text, fmt = text_of_chunks(self._stored_chunks(source_id)), record.format
        else:
            converted = self._converted(path, store=False)  # a read never writes
            text, fmt = converted.text, converted.format
        return page_of_lines(
            source_id,
            text,
            fmt=fmt,
            start_line=start_line,
            end_line=end_line,
            max_chars=max_chars,
            chunk_id=chunk_id,
        )

    def _stored_chunks(self, source_id: str) -> list[Chunk]:
        """The chunks of a source, in order (none for an unknown id)."""
        with self.ws._lock:
            if self.ws._follower.empty or not self.ws._db.exists():
                return []
            return [
                r.chunk() for r in self.ws._db.chunks_of(self.ws._normalise_source_id(source_id))
            ]

    def _chunk_by_id(self, chunk_id: str, path: str | None) -> Chunk:
        if not isinstance(chunk_id, str) or not chunk_id.strip():
            msg = f"chunk_id must be a chunk id from a search result, got {chunk_id!r}."
            raise InvalidInputError(msg)
        source = chunk_id.split("#chunk-", 1)[0] if path is None else path
        found = next((c for c in self._stored_chunks(source) if c.id == chunk_id), None)
        if found is None:  # an id holding '#chunk-' itself
            found = next((c for c in self._stored_chunks(chunk_id) if c.id == chunk_id), None)
        if found is None:
            msg = (
                f"No indexed chunk {chunk_id!r}. Chunk ids come from search results (their "
                "'id'); the file may have been re-indexed since: search again, or read by path "
                "and line range."
            )
            raise InvalidInputError(msg)
        return found

    def read_text(self, path: str) -> str:
        """Text of a file inside the root (converted like ``sync`` does), for tools."""
        return self._converted(path, store=not self.ws.read_only).text

    def _converted(self, path: str, *, store: bool) -> Converted:
        """The conversion of a file inside the root (rich documents via the conversion cache).

        ``store``: keep a fresh conversion of a rich document in the cache.
        """
        rel = normalise_id(self.ws.root, self.ws._root_relative(path))
        folder, inner = self.ws.mounts.route(rel)
        absolute = self.ws.mounts.resolve(rel)
        if not absolute.is_file() and not absolute.exists():
            msg = f"No file {path!r} in the workspace. Give a path relative to the workspace root."
            raise InvalidInputError(msg)
        limit = self.ws.scan_config.max_file_bytes
        try:
            data, _ = read_inside(folder, inner, max_bytes=limit)
        except OSError as exc:
            msg = (
                f"Cannot read {path!r}: {exc.strerror or exc}. Check the file's permissions, or "
                "pass content to index text under that id."
            )
            raise InvalidInputError(msg) from exc
        except InvalidInputError as exc:
            msg = f"Cannot read {path!r}: {exc}."
            raise type(exc)(msg) from exc
        try:
            return self.ws._conversions.convert(absolute, data, store=store)
        except ConversionError as exc:
            msg = f"Cannot read {path!r} as text ({exc})."
            raise InvalidInputError(msg) from exc
