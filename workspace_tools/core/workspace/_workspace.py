"""Workspace: index files and strings, keep the index in sync with the disk, and search it."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.convert import (
    DEFAULT_LIMITS,
    DOCUMENT_FORMAT_NAMES,
    MARKDOWN_EXTENSIONS,
    ConversionCache,
    ConversionLimits,
    Converted,
    convert_bytes,
)
from workspace_tools.core.errors import (
    ConversionError,
    IndexCorruptError,
    InvalidInputError,
    ReadOnlyWorkspaceError,
)
from workspace_tools.core.extras import VECTOR_INSTALL, missing_vector_packages, require_vector
from workspace_tools.core.index.dense import HNSW_THRESHOLD
from workspace_tools.core.index.embedder import (
    Embedder,
    SentenceTransformerEmbedder,
    as_embedder,
    embed_query,
)
from workspace_tools.core.index.fusion import DEFAULT_FUSION, FUSION_RULES
from workspace_tools.core.index.ranking import MODES, SearchMode, filter_mask, fuse, resolve_mode
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.store.corpus import SourceRecord
from workspace_tools.core.store.database import (
    TERM_SEPARATOR,
    ChunkRecord,
    IndexDatabase,
    SourceRow,
    storage_error,
)
from workspace_tools.core.store.migrate import clear_index, migrate_legacy, remove_legacy
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.text.scan import (
    ScanConfig,
    is_glob,
    normalise_id,
    read_inside,
    resolve_inside,
    scan,
)
from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig
from workspace_tools.core.types import Chunk, SearchResult, SyncReport
from workspace_tools.core.workspace._compat import check_settings
from workspace_tools.core.workspace._ingest import (
    DocumentLike,
    chunk_converted,
    embed_texts,
    gc_paused,
    indexed_text,
    make_record,
    progress_bar,
    stage_file,
    unpack_document,
)
from workspace_tools.core.workspace._results import build_result
from workspace_tools.core.workspace._settings import workspace_options
from workspace_tools.core.workspace._state import IndexState

__all__ = ["DEFAULT_EMBEDDER", "MAX_QUERY_CHARS", "MODES", "SearchMode", "Workspace"]

MAX_QUERY_CHARS: Final = 10_000
"""Longest query accepted, in characters."""
DEFAULT_EMBEDDER: Final = "default"
"""Sentinel: use the packaged all-MiniLM-L6-v2 model."""


logger = logging.getLogger(__name__)
_warned_no_vectors = False


def _make_embedder(embedder: Any) -> Embedder | None:
    """The embedder for ``embedder``; the default one falls back to none without the extra."""
    global _warned_no_vectors
    if embedder is None:
        return None
    if isinstance(embedder, str) and embedder == DEFAULT_EMBEDDER:
        if missing_vector_packages():
            if not _warned_no_vectors:
                _warned_no_vectors = True
                logger.warning(
                    "Vector search is off: the 'vector' extra is not installed (missing %s). "
                    "Keyword (BM25) search works; for vector and hybrid search run: %s",
                    ", ".join(missing_vector_packages()),
                    VECTOR_INSTALL,
                )
            return None
        return SentenceTransformerEmbedder()
    if isinstance(embedder, str):
        require_vector(f"the embedding model {embedder!r}", "sentence_transformers", "faiss")
        return as_embedder(embedder)
    require_vector("vector search", "faiss")
    return as_embedder(embedder)


class Workspace:
    """A folder of files (and any strings you add) indexed for BM25, vector and hybrid search.

    Settings not passed here come from the project's ``workspace-tools.yaml`` (its
    ``workspace:`` section), the same file the CLI reads, so ``Workspace(root)`` and
    ``workspace-tools --root root`` open the same index the same way. Arguments win over the file.

    Args:
        root: The workspace folder. File ids are POSIX paths relative to it.
        index_dir: Where the index lives; default ``<root>/.workspace_tools/index``.
        bm25: Keep a BM25 index.
        embedder: ``"default"`` (packaged all-MiniLM-L6-v2, loaded on first use; BM25 only,
            with a warning, when the ``vector`` extra is not installed), a sentence-transformers
            model name or path, an object with ``embed(texts)``, one with LangChain's
            ``embed_documents``/``embed_query``, or ``None`` for no vectors.
        tokenizer: Tokenizer settings (stored with the index).
        chunking: Chunk sizes (stored with the index).
        bm25_config: BM25 parameters.
        scan_config: What ``sync()`` walks into.
        conversion_limits: Time, memory and unpacked-size budgets for converting each rich
            document (default 10 s, 512 MB, 512 MB unpacked, in worker processes).
        fusion: Hybrid fusion rule (``core/index/fusion.py``): ``"zscore"`` (default: both
            sides as standard scores over their candidate pools; best mean and worst case over
            SciFact and three classic collections), ``"weighted"`` (Mastra's), ``"rrf"``,
            ``"minmax"`` or ``"spread"``; see docs/benchmarks.md, "Fusion rules".
        vector_weight: Weight of the vector side in hybrid fusion, in [0, 1] (default 0.5).
        read_only: Refuse every change to the index (default False).
        autosave: Save after every call that changed the index.
        rebuild: Ignore (and replace) an existing index instead of loading it.
        show_progress: Show progress bars on long work.
        hnsw_threshold: Vector count above which FAISS switches from exact to HNSW search.
        config: Read ``<root>/workspace-tools.yaml`` for the settings not passed (``False``: use
            only the arguments).

    Raises:
        InvalidInputError: ``root`` is not a folder, an argument or a setting of the file is
            invalid.
        MissingDependencyError: a named embedding model needs the ``vector`` extra.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        bm25: bool = True,
        embedder: Any = DEFAULT_EMBEDDER,
        tokenizer: TokenizerConfig | None = None,
        chunking: ChunkingConfig | None = None,
        bm25_config: BM25Config | None = None,
        scan_config: ScanConfig | None = None,
        conversion_limits: ConversionLimits | None = None,
        fusion: str | None = None,
        vector_weight: float | None = None,
        read_only: bool | None = None,
        autosave: bool = True,
        rebuild: bool = False,
        show_progress: bool = False,
        hnsw_threshold: int = HNSW_THRESHOLD,
        config: bool = True,
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            msg = (
                f"Workspace root {str(root)!r} is not a directory. "
                "Create it or pass an existing folder."
            )
            raise InvalidInputError(msg)
        file: dict[str, Any] = {}
        self.default_paths: list[str] | None = None
        """Paths :meth:`sync` scans when called without paths (``None``: the whole root)."""
        if config:
            file, self.default_paths = workspace_options(ProjectConfig.load(self.root))
        if index_dir is None:
            index_dir = file.get("index_dir")
        if isinstance(embedder, str) and embedder == DEFAULT_EMBEDDER:
            embedder = file.get("embedder", DEFAULT_EMBEDDER)
        chunking = chunking or file.get("chunking")
        bm25_config = bm25_config or file.get("bm25_config")
        scan_config = scan_config or file.get("scan_config")
        conversion_limits = conversion_limits or file.get("conversion_limits")
        fusion = fusion if fusion is not None else file.get("fusion", DEFAULT_FUSION)
        vector_weight = vector_weight if vector_weight is not None else file.get("vector_weight")
        vector_weight = 0.5 if vector_weight is None else vector_weight
        read_only = bool(read_only if read_only is not None else file.get("read_only", False))
        self.embedder: Embedder | None = _make_embedder(embedder)
        if not bm25 and self.embedder is None:
            msg = "A workspace needs at least one index: keep bm25=True or pass an embedder."
            raise InvalidInputError(msg)
        if fusion not in FUSION_RULES:
            msg = f"fusion must be one of {', '.join(FUSION_RULES)}; got {fusion!r}."
            raise InvalidInputError(msg)
        if not 0.0 <= vector_weight <= 1.0:
            msg = f"vector_weight must be between 0 and 1, got {vector_weight}."
            raise InvalidInputError(msg)
        self.bm25_enabled = bm25
        self.tokenizer = Tokenizer(tokenizer)
        self.chunking = chunking or ChunkingConfig()
        self.bm25_config = bm25_config or BM25Config()
        self.scan_config = scan_config or ScanConfig()
        self.fusion = fusion
        self.vector_weight = vector_weight
        self.read_only = read_only
        self.autosave = autosave
        self.show_progress = show_progress
        self.hnsw_threshold = hnsw_threshold
        self.index_dir = (
            Path(index_dir).expanduser().resolve()
            if index_dir is not None
            else self.root / ".workspace_tools" / "index"
        )
        self._db = IndexDatabase(self.index_dir, read_only=read_only, durable=autosave)
        self.conversion_limits = conversion_limits or DEFAULT_LIMITS
        self._conversions = ConversionCache(
            self.index_dir.parent / "converted", limits=self.conversion_limits
        )
        self._converted_live: frozenset[str] | None = None
        self._lock = threading.RLock()
        self._write_lock = threading.RLock()
        self._state = IndexState(
            db=self._db,
            tokenizer=self.tokenizer,
            bm25_config=self.bm25_config,
            hnsw_threshold=hnsw_threshold,
        )
        self._clear_on_commit = False
        self._chunk_cache: dict[int, Chunk] = {}
        self._saved_settings: dict[str, Any] | None = None
        if rebuild and not read_only:
            # The old index stays until the first commit replaces it in the same transaction,
            # so an interrupted rebuild leaves the previous index, not an empty one.
            self._clear_on_commit = clear_index(self._db)
            if self._clear_on_commit:
                self._saved_settings = self._db.settings()
            self._state.empty = True
        else:
            self._load()

    @classmethod
    def from_project(cls, root: str | os.PathLike[str], **overrides: Any) -> Workspace:
        """Open the workspace of a project; the same as ``Workspace(root, **overrides)``.

        Kept for compatibility: the constructor reads ``workspace-tools.yaml`` itself.
        """
        return cls(root, **overrides)

    # -- public properties ---------------------------------------------------------------------

    @property
    def modes(self) -> tuple[str, ...]:
        """Search modes this workspace can run."""
        out = []
        if self.bm25_enabled:
            out.append("bm25")
        if self.embedder is not None:
            out.append("vector")
        if len(out) == 2:
            out.append("hybrid")
        return tuple(out)

    @property
    def conversion_cache(self) -> ConversionCache:
        """Converted text of the indexed rich documents, by content hash (grep reads it too)."""
        return self._conversions

    @property
    def default_mode(self) -> str:
        """Mode used when none is given: hybrid when both indexes exist, else the one there is."""
        return "hybrid" if "hybrid" in self.modes else self.modes[0]

    def __len__(self) -> int:
        with self._lock:
            self._state.refresh()
            return len(self._state)

    def __repr__(self) -> str:
        return (
            f"Workspace(root={str(self.root)!r}, sources={len(self.source_ids())}, "
            f"chunks={len(self)}, modes={self.modes})"
        )

    def source_ids(self) -> list[str]:
        """Ids of every indexed file and string."""
        with self._lock:
            self._state.refresh()
            return list(self._state.sources())

    def source(self, source_id: str) -> SourceRecord | None:
        """The manifest row of a source, if indexed."""
        with self._lock:
            self._state.refresh()
            return self._state.source(self._normalise_source_id(source_id))

    def chunks_of(self, source_id: str) -> list[Chunk]:
        """Chunks of a source, in order."""
        with self._lock:
            if self._state.empty or not self._db.exists():
                return []
            return [_chunk(r) for r in self._db.chunks_of(self._normalise_source_id(source_id))]

    def stats(self) -> dict[str, Any]:
        """Counts and settings, for people and tools."""
        with self._lock:
            self._state.refresh()
            dense = self._state.dense
            if dense is not None:
                vectors = len(dense)
            elif self.embedder is None or self._state.empty or not self._db.exists():
                vectors = 0
            else:
                vectors = self._db.count_embedded()
            return {
                "root": str(self.root),
                "index_dir": str(self.index_dir),
                "sources": len(self._state.sources()),
                "chunks": len(self._state),
                "modes": list(self.modes),
                "embedder": self.embedder.model_id if self.embedder else None,
                "vectors": vectors,
            }

    # -- indexing ------------------------------------------------------------------------------

    def index(
        self,
        id: str,  # noqa: A002 - the public API name
        content: str,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[str]:
        """Index a string under ``id`` (chunked like files); returns its chunk ids.

        Re-indexing an id replaces all of its previous chunks.
        """
        report = self.index_many([(id, content, dict(metadata or {}))], show_progress=False)
        del report
        record = self.source(id)
        return list(record.chunk_ids) if record else []

    def index_many(
        self, documents: Iterable[DocumentLike], *, show_progress: bool | None = None
    ) -> SyncReport:
        """Index many strings in one batch (one BM25 rebuild, batched embedding, one save)."""
        self._check_writable()
        started = time.perf_counter()
        report = SyncReport()
        staged: list[tuple[SourceRecord, list[Chunk]]] = []
        with self._write_lock:
            self._refresh()
            latest: dict[str, tuple[str, dict[str, Any]]] = {}
            for doc in documents:
                doc_id, content, metadata = unpack_document(doc)
                latest[self._normalise_source_id(doc_id)] = (content, metadata)
            for source_id, (content, metadata) in latest.items():
                digest = text_hash(content)
                with self._lock:
                    previous = self._state.source(source_id)
                if previous and previous.content_hash == digest and previous.metadata == metadata:
                    report.unchanged += 1
                    continue
                markdown = Path(source_id).suffix.lower() in MARKDOWN_EXTENSIONS
                converted = Converted(
                    text=content, format="markdown" if markdown else "text", markdown=markdown
                )
                staged.append(
                    (
                        make_record(source_id, "text", digest, converted, metadata),
                        chunk_converted(source_id, converted, metadata, config=self.chunking),
                    )
                )
                (report.updated if previous else report.added).append(source_id)
            self._apply(staged, [], report, show_progress=show_progress)
        report.seconds = time.perf_counter() - started
        return report

    def remove(self, id_or_prefix: str) -> list[str]:
        """Remove a source, every source under a folder prefix, or every source matching a glob.

        Returns:
            The removed source ids (empty when nothing matched).
        """
        self._check_writable()
        with self._write_lock:
            self._refresh()
            target = self._normalise_source_id(id_or_prefix.rstrip("/") or ".")
            if is_glob(id_or_prefix):
                import pathspec

                spec = pathspec.PathSpec.from_lines("gitignore", ["/" + id_or_prefix.lstrip("./")])
                with self._lock:
                    ids = [s for s in self._state.sources() if spec.match_file(s)]
            else:
                ids = self._matching(target)
            report = SyncReport(removed=ids)
            self._apply([], ids, report, show_progress=False)
            return ids

    def sync(
        self, paths: Sequence[str] | str | None = None, *, show_progress: bool | None = None
    ) -> SyncReport:
        """Bring the index in line with files under the root.

        New and changed files are converted, chunked and embedded (vectors come from the cache
        first); files deleted from disk leave both indexes; unchanged files cost one ``stat``.

        Args:
            paths: Files, directories and glob patterns relative to the root (default: the root).
            show_progress: Show a progress bar (default: the workspace setting).

        Returns:
            What was added, updated, removed and skipped (with reasons).
        """
        self._check_writable()
        started = time.perf_counter()
        if isinstance(paths, str):
            paths = [paths]
        if paths is None:
            paths = self.default_paths
        with self._write_lock:
            self._refresh()
            found = scan(self.root, paths, config=self.scan_config)
            index_rel = self._index_rel()
            report = SyncReport(skipped=list(found.skipped))
            staged: list[tuple[SourceRecord, list[Chunk]]] = []
            kept: set[str] = set()
            touched: list[SourceRecord] = []
            with self._lock:
                sources = dict(self._state.sources())
            for rel, path in self._progress(
                list(found.files.items()), "Reading", show=show_progress
            ):
                if index_rel and (rel == index_rel or rel.startswith(index_rel + "/")):
                    continue
                outcome = stage_file(
                    rel,
                    path,
                    sources.get(rel),
                    report,
                    conversions=self._conversions,
                    chunking=self.chunking,
                    read_only=self.read_only,
                    root=self.root,
                    scan_config=self.scan_config,
                )
                if outcome is None:
                    continue
                kept.add(rel)
                if outcome is True:
                    touched.append(sources[rel])
                elif outcome is not False:
                    staged.append(outcome)
            removed = [
                sid
                for sid, rec in sources.items()
                if rec.kind == "file" and sid not in kept and found.in_scope(sid)
            ]
            report.removed = removed
            self._apply(staged, removed, report, show_progress=show_progress, touched=touched)
        report.seconds = time.perf_counter() - started
        return report

    def read_text(self, path: str) -> str:
        """Text of a file inside the root (converted like ``sync`` does), for tools.

        Raises:
            InvalidInputError: No such file, not a regular file, too large, unreadable (the OS
                reason), or not convertible.
            PathOutsideWorkspaceError: The path leaves the root.
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
            return convert_bytes(absolute, data, limits=self.conversion_limits).text
        except ConversionError as exc:
            msg = f"Cannot read {path!r} as text ({exc})."
            raise InvalidInputError(msg) from exc

    # -- search --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        mode: str | None = None,
        min_score: float | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the public API name
        vector_weight: float | None = None,
    ) -> list[SearchResult]:
        """Rank chunks for ``query``.

        Args:
            query: Words, a question, or code identifiers.
            top_k: Most results (larger than the corpus returns the whole ranked corpus).
            mode: ``bm25``, ``vector`` or ``hybrid``; default hybrid when both indexes exist.
            min_score: Drop results scoring below this (scores depend on the mode; see docs).
            filter: Conditions on chunk metadata (``source_id``, ``format`` and your own keys):
                plain values for equality, or operators ``$eq $ne $in $nin $gt $gte $lt $lte
                $exists``, combined with ``$and``/``$or`` (see ``core/index/filters.py``);
                applied before ranking, so ``top_k`` matching hits come back.
            vector_weight: Weight of the vector side in hybrid fusion for this call, in [0, 1]
                (default: the workspace's).

        Returns:
            Results best first. An empty query or index gives an empty list; BM25 never returns
            chunks that share no term with the query.
        """
        if not isinstance(query, str):
            msg = f"query must be a string, got {type(query).__name__}."
            raise InvalidInputError(msg)
        if len(query) > MAX_QUERY_CHARS:
            msg = (
                f"The query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}. "
                "Search with the key words or a short passage instead."
            )
            raise InvalidInputError(msg)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            msg = f"top_k must be a whole number of at least 1, got {top_k!r}."
            raise InvalidInputError(msg)
        weight = self.vector_weight if vector_weight is None else vector_weight
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 <= weight <= 1:
            msg = f"vector_weight must be a number between 0 and 1, got {vector_weight!r}."
            raise InvalidInputError(msg)
        chosen = resolve_mode(mode, self.modes)
        if not query.strip():
            return []
        counts = self.tokenizer.query_term_counts(query)
        terms = list(counts)
        query_vector = None
        if chosen in {"vector", "hybrid"}:
            self._ensure_vectors()
            assert self.embedder is not None
            query_vector = embed_query(self.embedder, query)
        if filter is not None:
            filter_mask([], filter)  # validates the conditions
        results: list[SearchResult] = []
        for attempt in range(_SEARCH_ATTEMPTS):
            # Chunk rows never change under a key, so results are consistent with the state the
            # ranking used unless a row was deleted since; then catch up and rank again. The last
            # attempt holds one read transaction, so nothing can move under it.
            consistent = self._db.reading() if attempt else contextlib.nullcontext()
            with self._lock, consistent:
                self._refresh()
                ranked = self._rank(
                    counts,
                    query_vector,
                    chosen,
                    top_k=top_k,
                    filter=filter,
                    vector_weight=float(weight),
                )
                found = self._chunks([key for key, _score, _details in ranked])
                if all(key in found for key, _s, _d in ranked) or attempt + 1 == _SEARCH_ATTEMPTS:
                    results = [
                        build_result(found[key], score, details, terms, self.tokenizer)
                        for key, score, details in ranked
                        if key in found
                    ]
                    break
        if min_score is not None:
            results = [r for r in results if r.score >= min_score]
        return results

    # -- persistence ---------------------------------------------------------------------------

    def save(self) -> None:
        """Make every change durable and compact the index.

        Each change is already committed (atomically) when the call that made it returns; with
        ``autosave=True`` it is also on disk. ``save()`` additionally folds recent BM25 changes
        into a new base, writes the derived snapshot (so the next process opens fast), forgets
        cached vectors and converted documents no longer used, and gives freed space back to
        the file system, so the text and terms of deleted documents leave the disk.
        """
        self._check_writable()
        with self._write_lock, self._lock:
            self._refresh()
            if self._clear_on_commit:
                self._commit_rows([], [], [], SyncReport(), show_progress=False)
            if self._db.exists():
                self._merge(prune=True)
                self._db.compact()
            self._prune_conversions()

    def _prune_conversions(self) -> None:
        sources = self._state.sources().values()
        live = frozenset(r.content_hash for r in sources if r.format in DOCUMENT_FORMAT_NAMES)
        if live != self._converted_live:  # walk the cache only when its live set moved
            try:
                self._conversions.prune(live)
            except OSError as exc:
                raise storage_error(exc, self._conversions.directory, "prune conversions") from exc
            self._converted_live = live

    # -- internals -----------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self.read_only:
            msg = (
                f"The workspace at {str(self.root)!r} is read-only: indexing, removing and syncing "
                "are disabled. Open it with read_only=False to change the index."
            )
            raise ReadOnlyWorkspaceError(msg)

    def _normalise_source_id(self, source_id: str) -> str:
        if not isinstance(source_id, str) or not source_id.strip():
            msg = f"A source id must be a non-empty string, got {source_id!r}."
            raise InvalidInputError(msg)
        if "\x00" in source_id:
            msg = f"Source id {source_id!r} contains a NUL byte."
            raise InvalidInputError(msg)
        if "://" in source_id:
            return source_id
        return normalise_id(self.root, self._root_relative(source_id)) or "."

    def _root_relative(self, path: str) -> str:
        """``'/docs/guide.md'`` (Mastra's id style) as ``'docs/guide.md'``.

        An absolute path inside the root keeps its meaning; any other leading slash marks a
        path relative to the workspace root.
        """
        if not path.startswith("/"):
            return path
        candidate = Path(os.path.normpath(path))
        if candidate == self.root or self.root in candidate.parents:
            return path
        return path.lstrip("/") or "."

    def _index_rel(self) -> str | None:
        try:
            return self.index_dir.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def _matching(self, target: str) -> list[str]:
        """Sources ``target`` names: itself, or everything under it as a folder."""
        with self._lock:
            if target in {"", "."}:
                return list(self._state.sources())
            single = self._state.source(target) is not None
            if single and (self._state.empty or not self._db.has_children(target)):
                return [target]
            return [s for s in self._state.sources() if s == target or s.startswith(target + "/")]

    def _refresh(self) -> None:
        with self._lock:
            self._state.refresh()

    def _apply(
        self,
        staged: list[tuple[SourceRecord, list[Chunk]]],
        removed: list[str],
        report: SyncReport,
        *,
        show_progress: bool | None,
        touched: Sequence[SourceRecord] = (),
    ) -> None:
        with gc_paused():
            rows = [(record, self._records(record, chunks)) for record, chunks in staged]
        self._commit_rows(rows, removed, touched, report, show_progress=show_progress)

    def _records(self, record: SourceRecord, chunks: list[Chunk]) -> list[ChunkRecord]:
        record.chunk_ids = [c.id for c in chunks]
        tokenize = self.tokenizer.tokenize
        return [
            ChunkRecord(
                key=-1,
                id=c.id,
                source=c.source_id,
                start_line=c.start_line,
                end_line=c.end_line,
                headings=list(c.headings),
                levels=list(c.heading_levels),
                hash=text_hash(c.text),
                metadata=dict(c.metadata),
                text=c.text,
                terms=TERM_SEPARATOR.join(tokenize(indexed_text(c))) if self.bm25_enabled else "",
            )
            for c in chunks
        ]

    def _commit_rows(
        self,
        rows: list[tuple[SourceRecord, list[ChunkRecord]]],
        removed: list[str],
        touched: Sequence[SourceRecord],
        report: SyncReport,
        *,
        show_progress: bool | None,
    ) -> None:
        """Write one change as one transaction, then catch up with it (and anything else)."""
        if not (rows or removed or touched or self._clear_on_commit):
            return
        vectors: dict[str, npt.NDArray[np.float32]] = {}
        if self.embedder is not None:
            self._ensure_vectors()
            chunks = [c for _, records in rows for c in records]
            vectors = self._embed(
                {c.hash: c.text for c in chunks}, show_progress=self._show(show_progress)
            )
            report.chunks_embedded += len(vectors)
        with self._lock:
            self._write_change(rows, removed, touched, vectors, report)

    def _write_change(
        self,
        rows: list[tuple[SourceRecord, list[ChunkRecord]]],
        removed: list[str],
        touched: Sequence[SourceRecord],
        vectors: dict[str, npt.NDArray[np.float32]],
        report: SyncReport,
    ) -> None:
        before = self._state.sources() if (removed or rows) else {}
        documents_left = any(
            (old := before.get(source_id)) is not None and old.format in DOCUMENT_FORMAT_NAMES
            for source_id in [*removed, *(record.id for record, _ in rows)]
        )
        with self._db.write("save the change") as writer:
            if self._clear_on_commit:
                writer.clear(keep_vectors=self._vectors_reusable())
            writer.set_meta("settings", json.dumps(self._settings(), sort_keys=True))
            for source_id in removed:
                writer.remove_source(source_id)
            for record, records in rows:
                writer.put_source(_row(record), records)
                report.chunks_indexed += len(records)
            for record in touched:
                writer.touch_source(_row(record))
            writer.put_vectors(vectors)
        if self._state.empty:
            self._clear_on_commit = False
            self._state.empty = False
            self._state.reset()
            remove_legacy(self.index_dir)
        self._state.refresh(force=True)
        if self._state.dense is not None and vectors:
            self._state.add_dense(vectors)
        state = self._state
        if state.sparse.wants_merge() or (
            state.snapshot_version < 0 and len(state) >= _SNAPSHOT_MINIMUM
        ):
            self._merge(prune=bool(removed))
        if documents_left:  # a converted document left or changed: its conversion goes too
            self._prune_conversions()

    def _merge(self, *, prune: bool) -> None:
        """New BM25 base and snapshot (and, after deletions, drop unused cached vectors)."""
        state = self._state
        if state.sparse.changes == 0 and state.snapshot_version == state.version:
            return
        if self.embedder is not None:
            self._ensure_vectors()
        if prune and not self.read_only:
            with self._db.write("forget unused vectors") as writer:
                writer.prune_vectors()
        state.merge(save=not self.read_only, config=self._snapshot_config())
        if prune and not self.read_only:
            self._db.compact()

    def _snapshot_config(self) -> dict[str, Any]:
        embedder = None
        if self.embedder is not None:
            embedder = {"model_id": self.embedder.model_id, "dimension": self.embedder.dimension}
        return {"bm25": self.bm25_config.to_dict(), "embedder": embedder}

    def _vectors_reusable(self) -> bool:
        saved = self._saved_settings
        if saved is None or self.embedder is None:
            return False
        embedder = saved.get("embedder") or {}
        return bool(
            embedder.get("model_id") == self.embedder.model_id
            and embedder.get("dimension") == self.embedder.dimension
        )

    def _embed(
        self, texts: dict[str, str], *, show_progress: bool
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Vectors of the texts (by content hash) the embedding cache lacks."""
        assert self.embedder is not None
        if not texts:
            return {}
        cached = self._db.vectors(texts) if self._db.exists() and not self._state.empty else {}
        todo = {h: t for h, t in texts.items() if h not in cached}
        return embed_texts(self.embedder, todo, show_progress=show_progress)

    def _ensure_vectors(self) -> None:
        """Load the FAISS index and embed chunks indexed before vectors were enabled."""
        if self.embedder is None:
            return
        with self._write_lock:
            with self._lock:
                self._state.refresh()
                pending = self._state.ensure_dense(self.embedder.dimension, self.embedder.model_id)
            if not pending:
                return
            texts = {r.hash: r.text for r in self._db.chunks(list(pending)).values()}
            vectors = embed_texts(self.embedder, texts, show_progress=self.show_progress)
            if not self.read_only and vectors:
                with self._lock, self._db.write("save vectors") as writer:
                    writer.put_vectors(vectors)
                    writer.set_meta("settings", json.dumps(self._settings(), sort_keys=True))
            with self._lock:
                self._state.add_dense(vectors)

    def _chunks(self, keys: list[int]) -> dict[int, Chunk]:
        """Chunks by key: from memory when seen before (a key's chunk never changes), else read."""
        cache = self._chunk_cache
        found = {k: cache[k] for k in keys if k in cache}
        missing = [k for k in keys if k not in found]
        if missing:
            for key, chunk in self._state.base_chunks(missing).items():
                found[key] = cache[key] = chunk
            missing = [k for k in keys if k not in found]
        if missing:
            for key, record in self._db.chunks(missing).items():
                found[key] = cache[key] = _chunk(record)
            while len(cache) > _CHUNK_CACHE:
                del cache[next(iter(cache))]
        return found

    def _rank(
        self,
        counts: Mapping[str, int],
        query_vector: npt.NDArray[np.float32] | None,
        chosen: str,
        *,
        top_k: int,
        filter: Mapping[str, Any] | None,  # noqa: A002 - as in search()
        vector_weight: float,
    ) -> list[tuple[int, float, dict[str, float]]]:
        """``(key, score, details)`` best first, from the state in memory (lock held)."""
        state = self._state
        total = len(state)
        if total == 0:
            return []
        k = min(top_k, total)
        mask = state.filter_mask(filter) if filter else None
        pool = min(total, max(2 * k, 100))
        bm25_hits: list[tuple[int, float]] = []
        vector_hits: list[tuple[int, float]] = []
        if chosen in {"bm25", "hybrid"} and counts:
            bm25_hits = state.bm25_top(counts, k=k if chosen == "bm25" else pool, mask=mask)
        if query_vector is not None:
            vector_hits = state.vector_top(
                query_vector, k=k if chosen == "vector" else pool, mask=mask
            )
        return fuse(
            chosen,
            bm25_hits,
            vector_hits,
            k=k,
            fusion=self.fusion,
            vector_weight=vector_weight,
        )

    def _settings(self) -> dict[str, Any]:
        embedder = None
        if self.embedder is not None:
            embedder = {"model_id": self.embedder.model_id, "dimension": self.embedder.dimension}
        elif self._saved_settings is not None:
            embedder = self._saved_settings.get("embedder")
        return {
            "tokenizer": self.tokenizer.fingerprint(),
            "chunking": self.chunking.to_dict(),
            "bm25": self.bm25_config.to_dict() if self.bm25_enabled else None,
            "embedder": embedder,
        }

    def _load(self) -> None:
        if not self._db.exists():
            migrate_legacy(self._db, read_only=self.read_only)
        if not self._db.exists():
            if any(self.index_dir.glob("snapshot-*")):
                msg = (
                    f"The index database {self._db.path} is missing while its derived files "
                    "remain. Open the workspace with rebuild=True (CLI: --rebuild) to rebuild it."
                )
                raise IndexCorruptError(msg)
            return
        saved = self._db.settings()
        self._saved_settings = saved
        if saved is None:
            return
        embedder = self.embedder
        check_settings(
            saved,
            self._settings(),
            embedder=(embedder.model_id, embedder.dimension) if embedder else None,
            bm25_enabled=self.bm25_enabled,
            index_dir=self.index_dir,
        )
        with self._lock:
            self._state.refresh(force=True)

    def _show(self, show: bool | None, /) -> bool:  # noqa: FBT001 - positional-only
        return self.show_progress if show is None else show

    def _progress(self, items: list[Any], label: str, *, show: bool | None) -> Iterator[Any]:
        bar = progress_bar(len(items), label, show=self._show(show))
        try:
            for item in items:
                yield item
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()


_SEARCH_ATTEMPTS: Final = 3
_CHUNK_CACHE: Final = 4096
"""Chunks kept in memory for results (the rest stay in the database until a result needs them)."""
_SNAPSHOT_MINIMUM: Final = 1_000
"""An index without a snapshot gets one once it holds this many chunks."""


def _row(record: SourceRecord) -> SourceRow:
    return SourceRow(
        id=record.id,
        kind=record.kind,
        hash=record.content_hash,
        chunk_ids=list(record.chunk_ids),
        metadata=dict(record.metadata),
        mtime_ns=record.mtime_ns,
        size=record.size,
        format=record.format,
    )


def _chunk(record: ChunkRecord) -> Chunk:
    return Chunk(
        id=record.id,
        source_id=record.source,
        text=record.text,
        start_line=record.start_line,
        end_line=record.end_line,
        headings=tuple(record.headings),
        heading_levels=tuple(record.levels),
        metadata=record.metadata,
    )
