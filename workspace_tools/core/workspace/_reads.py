"""The read path of :class:`Workspace`: rank, build results, read files."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.adapters import adapter
from workspace_tools.core.backends.base import BackendQuery, caches_results
from workspace_tools.core.convert import Converted
from workspace_tools.core.embedding.embedder import embed_query
from workspace_tools.core.errors import ConversionError, InvalidInputError, WorkspaceError
from workspace_tools.core.ranking.filters import Filter
from workspace_tools.core.ranking.fusion import FusedHit
from workspace_tools.core.ranking.multi import check_queries, fuse_rankings
from workspace_tools.core.ranking.prior import KIND_KEY, prior_of, reweigh
from workspace_tools.core.ranking.ranking import fuse, resolve_mode
from workspace_tools.core.text.scan import normalise_id, read_inside, resolve_inside
from workspace_tools.core.types import Chunk, SearchResult
from workspace_tools.core.workspace._base import WorkspaceBase
from workspace_tools.core.workspace._lines import (
    DEFAULT_READ_CHARS,
    TextPage,
    page_of_lines,
    text_of_chunks,
)
from workspace_tools.core.workspace._results import ChunkFields, build_result

__all__ = ["MAX_QUERY_CHARS", "ReadPath"]

MAX_QUERY_CHARS: Final = 10_000
"""Longest query accepted, in characters."""
_SEARCH_ATTEMPTS: Final = 3
_CHUNK_CACHE: Final = 4096
"""Chunks kept in memory for results (the rest stay in the database until a result needs them)."""
_KIND_CACHE: Final = 500_000
"""Chunk kinds kept in memory for the ranking prior (a key's kind never changes)."""


class ReadPath(WorkspaceBase):
    """Search and read: rankings from the state in memory, chunks from the cache or database."""

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
        """Rank chunks for ``query``.

        Args:
            query: Words, a question, or code identifiers; or a list of up to
                :data:`~workspace_tools.core.ranking.multi.MAX_QUERIES` formulations of the same
                need (paraphrases). Each formulation is ranked in ``mode`` and the rankings are
                fused by reciprocal rank fusion; each result's ``found_by`` names the
                formulations that found it and ``score`` is the fused score.
            top_k: Most results (larger than the corpus returns the whole ranked corpus).
            mode: ``bm25``, ``vector`` or ``hybrid``; default hybrid when both indexes exist.
            min_score: Drop results scoring below this (scores depend on the mode; see docs).
                With several formulations it applies to each one's own scores, before fusion.
            filter: Conditions on chunk metadata (``source_id``, ``format`` and your own keys):
                plain values for equality (on a list-valued key: one of its elements), or
                operators ``$eq $ne $in $nin $gt $gte $lt $lte $exists``, combined with
                ``$and``/``$or`` (see ``core/ranking/filters.py``); applied before ranking, so
                ``top_k`` matching hits come back.
            vector_weight: Weight of the vector side in hybrid fusion for this call, in [0, 1]
                (default: the workspace's).

        Returns:
            Results best first. An empty query or index gives an empty list; BM25 never returns
            chunks that share no term with the query.

        Raises:
            InvalidInputError: a query that is not a string or a list of 1 to 5 strings, too
                long a query, a bad ``top_k``, ``vector_weight``, mode or filter.
        """
        queries = check_queries(query, max_chars=MAX_QUERY_CHARS)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            msg = f"top_k must be a whole number of at least 1, got {top_k!r}."
            raise InvalidInputError(msg)
        weight = self.vector_weight if vector_weight is None else vector_weight
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
            msg = f"vector_weight must be a number between 0 and 1, got {vector_weight!r}."
            raise InvalidInputError(msg)
        chosen = resolve_mode(mode, self.modes)
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
        marked = list(dict.fromkeys(t for q in queries for t in self.tokenizer.query_terms(q)))
        self._refresh()  # one catch-up for every formulation: they rank the same state
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
        counts = self.tokenizer.query_term_counts(query)
        terms = list(counts) if marked is None else marked
        if not refreshed:
            self._refresh()  # the one catch-up of a search (a retry below catches up again)
        query_vector = None
        if chosen in {"vector", "hybrid"}:
            self._ensure_vectors(refreshed=True)
            assert self.embedder is not None
            query_vector = embed_query(self.embedder, query)
        results: list[SearchResult] = []
        for attempt in range(_SEARCH_ATTEMPTS):
            # Chunk rows never change under a key, so results are consistent with the state the
            # ranking used unless a row was deleted since; then catch up and rank again. The last
            # attempt holds one read transaction, so nothing can move under it.
            consistent = self._db.reading() if attempt else contextlib.nullcontext()
            with self._lock, consistent:
                if attempt:
                    self._refresh()
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
                            found[hit.key], hit.score, hit.details(), terms, self.tokenizer
                        )
                        for hit in ranked
                        if hit.key in found
                    ]
                    break
        if min_score is not None:
            results = [r for r in results if r.score >= min_score]
        return results

    def warm_up(self, *, embed: bool = True) -> None:
        """Load now what the first vector or hybrid search would otherwise wait for.

        Opening reads the BM25 index only. The dense index is made by the first vector or
        hybrid search: FAISS filled from the vectors the database keeps (their one copy; ~0.35 s
        at 50,000 chunks), and any chunk indexed before vectors were enabled embedded. A server
        calls this from its background thread once its model is loaded, so its first hybrid
        search answers at once (``mcp/_background.py``). Without an embedder it does nothing.

        Args:
            embed: Also embed the chunks without a vector (stored, unless read-only). ``False``
                loads only what is stored and leaves those to the first vector search (a
                read-only server: it could not keep them, and would embed them at every start).
        """
        self._ensure_vectors(embed=embed)

    def as_retriever(
        self, *, search_type: str = "similarity", search_kwargs: Mapping[str, Any] | None = None
    ) -> Any:
        """This workspace as a LangChain retriever (``WorkspaceRetriever``), LangChain-style.

        Args:
            search_type: ``similarity`` (the default mode, or ``search_kwargs["mode"]``),
                ``similarity_score_threshold`` (needs ``score_threshold``), or a mode by name:
                ``bm25``, ``vector``, ``hybrid``.
            search_kwargs: ``k``, ``filter``, ``mode``, ``vector_weight``, ``score_threshold``
                (or ``min_score``).

        Raises:
            ValueError: an unknown ``search_type`` or ``search_kwargs`` key.
            MissingDependencyError: ``langchain-core`` is not installed.
        """
        factory = adapter("retriever")
        return factory(self, search_type=search_type, search_kwargs=dict(search_kwargs or {}))

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
                return self._normalise_source_id(value)
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
        state = self._state
        found: dict[int, Chunk | ChunkFields] = {}
        if caches_results(state):
            found.update(state.cached_chunks(keys))
        if len(found) == len(keys):
            return found
        cache = self._chunk_cache
        missing = []
        for key in keys:
            if key not in found:
                if key in cache:
                    found[key] = cache[key]
                else:
                    missing.append(key)
        if missing:
            for key, record in self._db.chunks(missing).items():
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
        state = self._state
        total = len(state)
        if total == 0:
            return []
        k = min(top_k, total)
        pool = min(total, max(2 * k, 100))
        prior = self.ranking_prior
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
                # Each side's scores weighed by the kind of file (core/ranking/prior.py).
                bm25_hits = reweigh(bm25_hits, kinds.get)
                vector_hits = reweigh(vector_hits, kinds.get)
                break
        return fuse(
            chosen,
            bm25_hits,
            vector_hits,
            k=k,
            fusion=self.fusion,
            vector_weight=vector_weight,
        )

    def _kinds(self, keys: list[int], fetched: dict[int, Chunk | ChunkFields]) -> dict[int, object]:
        """The content kind of each chunk key (kept in memory: a key's chunk never changes).

        Chunks read for it are added to ``fetched``.
        """
        kinds = self._kind_cache
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
        """Lines of a file's converted text (or of an indexed string), a page at a time.

        Give ``path`` and optionally a line range, or ``chunk_id`` (a search result's ``id``)
        for that chunk's lines. Rich documents (PDF, DOCX...) are read as the Markdown ``sync``
        indexes (from the conversion cache, which a read never writes), so line numbers match
        search and grep results.
        The page holds whole lines up to ``max_chars`` characters; ``more_lines`` says how many
        follow (read on with ``start_line=page.end_line + 1``).

        Raises:
            InvalidInputError: no path nor chunk id, both a chunk id and a line range, an
                unknown chunk, a missing or unreadable file, bad line numbers or ``max_chars``.
            PathOutsideWorkspaceError: the path leaves the workspace root.
        """
        if chunk_id is not None:
            if start_line is not None or end_line is not None:
                msg = "Give either chunk_id or start_line/end_line, not both."
                raise InvalidInputError(msg)
            chunk = self._chunk_by_id(chunk_id, path)
            path, start_line, end_line = chunk.source_id, chunk.start_line, chunk.end_line
        if not isinstance(path, str) or not path.strip():
            msg = "Give the path of a file (relative to the workspace root) or a chunk_id."
            raise InvalidInputError(msg)
        source_id = self._normalise_source_id(path)
        with self._lock:
            self._refresh()
            record = self._sources.get(source_id)
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
        with self._lock:
            if self._follower.empty or not self._db.exists():
                return []
            return [r.chunk() for r in self._db.chunks_of(self._normalise_source_id(source_id))]

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
        """Text of a file inside the root (converted like ``sync`` does), for tools.

        Raises:
            InvalidInputError: No such file, not a regular file, too large, unreadable (the OS
                reason), or not convertible.
            PathOutsideWorkspaceError: The path leaves the root.
        """
        return self._converted(path, store=not self.read_only).text

    def _converted(self, path: str, *, store: bool) -> Converted:
        """The conversion of a file inside the root (rich documents via the conversion cache).

        ``store``: keep a fresh conversion of a rich document in the cache.
        """
        inside = self._root_relative(path)
        absolute = resolve_inside(self.root, inside)
        if not absolute.is_file() and not absolute.exists():
            msg = f"No file {path!r} in the workspace. Give a path relative to the workspace root."
            raise InvalidInputError(msg)
        rel = normalise_id(self.root, inside)
        limit = self.scan_config.max_file_bytes
        try:
            data, _ = read_inside(self.root, rel, max_bytes=limit)
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
            return self._conversions.convert(absolute, data, store=store)
        except ConversionError as exc:
            msg = f"Cannot read {path!r} as text ({exc})."
            raise InvalidInputError(msg) from exc
