"""Workspace: index files and strings, keep the index in sync with the disk, and search it."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from workspace_tools.core.adapters import adapter
from workspace_tools.core.backends.base import VectorBackfill, backfills
from workspace_tools.core.backends.config import (
    BackendConfig,
    backend_config,
    open_backend,
)
from workspace_tools.core.backends.embedded import HNSW_THRESHOLD
from workspace_tools.core.backends.follow import ChangeFollower
from workspace_tools.core.backends.registry import BackendContext
from workspace_tools.core.backends.source_list import SourceList
from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.convert import (
    DEFAULT_LIMITS,
    ConversionCache,
    ConversionLimits,
)
from workspace_tools.core.embedding.adapters import as_embedder
from workspace_tools.core.embedding.embedder import Embedder, SentenceTransformerEmbedder
from workspace_tools.core.errors import (
    InvalidInputError,
    ReadOnlyWorkspaceError,
)
from workspace_tools.core.extras import (
    VECTOR_INSTALL,
    missing_vector_packages,
    require_extra,
    require_vector,
)
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.ranking.fusion import DEFAULT_FUSION, FUSION_RULES
from workspace_tools.core.ranking.ranking import MODES, SearchMode
from workspace_tools.core.store.database import IndexDatabase, SourceRecord
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.text.scan import (
    ScanConfig,
    is_glob,
    normalise_id,
)
from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig
from workspace_tools.core.text.within import is_within, normalise_within
from workspace_tools.core.types import Chunk, SearchResult, SyncReport
from workspace_tools.core.workspace._compat import code_as_built
from workspace_tools.core.workspace._ingest import (
    DocumentLike,
    embed_texts,
    gc_paused,
)
from workspace_tools.core.workspace._lines import DEFAULT_READ_CHARS, TextPage
from workspace_tools.core.workspace._progress import (
    BATCH_CHUNKS,
    BATCH_FILES,
    BATCH_SECONDS,
    SyncProgress,
    SyncTracker,
)
from workspace_tools.core.workspace._reader import MAX_QUERY_CHARS, IndexReader
from workspace_tools.core.workspace._writer import IndexWriter
from workspace_tools.core.workspace.freshness import record_removed
from workspace_tools.core.workspace.reporting import progress_bar
from workspace_tools.core.workspace.settings import bm25_argument, workspace_options

if TYPE_CHECKING:
    from workspace_tools.core.workspace._watch import Watcher

__all__ = ["DEFAULT_EMBEDDER", "MAX_QUERY_CHARS", "MODES", "SearchMode", "Workspace"]

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
        bm25: Keep a BM25 index (``True``/``False``), or keep one with these parameters: a
            :class:`BM25Config` or a mapping of its fields, ``{"k1": 1.2, "b": 0.75}``
            (Mastra's spelling; ``{"bm25": {...}}`` too).
        embedder: ``"default"`` (packaged all-MiniLM-L6-v2, loaded on first use; BM25 only,
            with a warning, when the ``vector`` extra is not installed), a sentence-transformers
            model name or path, an object with ``embed(texts)``, one with LangChain's
            ``embed_documents``/``embed_query``, or ``None`` for no vectors.
        tokenizer: Tokenizer settings (stored with the index).
        chunking: Chunk sizes, and whether source files are cut at their definitions (``code``;
            default: when the ``code`` extra is installed, or as the index was built). Stored
            with the index.
        bm25_config: BM25 parameters (or give them as ``bm25``, not both).
        scan_config: What ``sync()`` walks into.
        conversion_limits: Time, memory and unpacked-size budgets for converting each rich
            document (default 10 s, 512 MB, 512 MB unpacked, in worker processes).
        fusion: Hybrid fusion rule (``core/ranking/fusion.py``): ``"zscore"`` (default: both
            sides as standard scores over their candidate pools; best mean and worst case over
            SciFact and three classic collections), ``"weighted"`` (Mastra's), ``"rrf"``,
            ``"minmax"`` or ``"spread"``; see docs/benchmarks.md, "Fusion rules".
        vector_weight: Weight of the vector side in hybrid fusion, in [0, 1] (default 0.5).
        ranking_prior: Weigh scores by the content kind of each file
            (``core/ranking/content_kinds.py``): navigation files, lockfiles, minified bundles,
            sitemaps and generated files count less than the pages that answer (default True;
            see docs/benchmarks.md, "Ranking prior").
        read_only: Refuse every change to the index (default False).
        autosave: Save after every call that changed the index.
        rebuild: Ignore (and replace) an existing index instead of loading it.
        show_progress: Show progress bars on long work.
        hnsw_threshold: Vector count above which FAISS switches from exact to HNSW search.
        config: Read ``<root>/workspace-tools.yaml`` for the settings not passed (``False``: use
            only the arguments).
        backend: Search backend: ``"embedded"`` (default), ``"milvus"`` (Lite file in the index
            folder) or a :class:`BackendConfig` / mapping for a Milvus server (docs/milvus.md).
        mounts: More folders in the same index, each under a prefix: ``{"/docs": "path/a"}``
            (ids ``docs/...``; relative folders are under the root); see docs/mounts.md.

    Raises:
        InvalidInputError: ``root`` is not a folder, an argument or a setting of the file is
            invalid.
        MissingDependencyError: a named embedding model needs the ``vector`` extra, or the
            Milvus backend the ``milvus`` extra.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        bm25: bool | BM25Config | Mapping[str, Any] = True,
        embedder: Any = DEFAULT_EMBEDDER,
        tokenizer: TokenizerConfig | None = None,
        chunking: ChunkingConfig | None = None,
        bm25_config: BM25Config | None = None,
        scan_config: ScanConfig | None = None,
        conversion_limits: ConversionLimits | None = None,
        fusion: str | None = None,
        vector_weight: float | None = None,
        ranking_prior: bool | None = None,
        read_only: bool | None = None,
        autosave: bool = True,
        rebuild: bool = False,
        show_progress: bool = False,
        hnsw_threshold: int = HNSW_THRESHOLD,
        config: bool = True,
        backend: str | BackendConfig | Mapping[str, Any] | None = None,
        mounts: Mapping[str, str | os.PathLike[str]] | None = None,
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
        if chunking is not None and chunking.code:  # the caller's; a project file's may not raise
            require_extra("code", purpose="ChunkingConfig(code=True)")
        chunking = chunking or file.get("chunking")
        bm25, bm25_config = bm25_argument(bm25, bm25_config)
        bm25_config = bm25_config or file.get("bm25_config")
        scan_config = scan_config or file.get("scan_config")
        conversion_limits = conversion_limits or file.get("conversion_limits")
        fusion = fusion if fusion is not None else file.get("fusion", DEFAULT_FUSION)
        vector_weight = vector_weight if vector_weight is not None else file.get("vector_weight")
        vector_weight = 0.5 if vector_weight is None else vector_weight
        read_only = read_only if read_only is not None else file.get("read_only", False)
        if not isinstance(read_only, bool):
            msg = f"read_only must be true or false, got {read_only!r}."
            raise InvalidInputError(msg)
        if ranking_prior is None:
            ranking_prior = file.get("ranking_prior", True)
        if not isinstance(ranking_prior, bool):
            msg = f"ranking_prior must be true or false, got {ranking_prior!r}."
            raise InvalidInputError(msg)
        self.backend_config = backend_config(file.get("backend") if backend is None else backend)
        self.mounts = Mounts.merged(self.root, file.get("mounts"), mounts)  # the caller's win
        self.embedder: Embedder | None = _make_embedder(embedder)
        if not bm25 and self.embedder is None:
            msg = "A workspace needs at least one index: keep bm25=True or pass an embedder."
            raise InvalidInputError(msg)
        if fusion not in FUSION_RULES:
            msg = f"fusion must be one of {', '.join(FUSION_RULES)}; got {fusion!r}."
            raise InvalidInputError(msg)
        number = isinstance(vector_weight, (int, float)) and not isinstance(vector_weight, bool)
        if not number or not 0.0 <= vector_weight <= 1.0:
            msg = f"vector_weight must be between 0 and 1 (a number), got {vector_weight!r}."
            raise InvalidInputError(msg)
        self.bm25_enabled = bm25
        self.tokenizer = Tokenizer(tokenizer)
        self.chunking = chunking or ChunkingConfig()
        self.bm25_config = bm25_config or BM25Config()
        self.scan_config = scan_config or ScanConfig()
        self.fusion = fusion
        self.vector_weight = vector_weight
        self.ranking_prior = ranking_prior
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
        e = self.embedder
        self._follower = ChangeFollower(self._db)
        self._sources = SourceList(self._follower)
        self._state = open_backend(
            self.backend_config,
            BackendContext(
                db=self._db,
                follower=self._follower,
                index_dir=self.index_dir,
                tokenizer=self.tokenizer,
                bm25_config=self.bm25_config if bm25 else None,
                embedder=(e.model_id, e.dimension) if e else None,
                hnsw_threshold=hnsw_threshold,
                read_only=read_only,
            ),
        )
        self._clear_on_commit = False
        self._chunk_cache: dict[int, Chunk] = {}
        self._kind_cache: dict[int, Any] = {}
        self._saved_settings: dict[str, Any] | None = None
        self._prune_due = False
        self._removals_pruned = 0
        self._tracker = SyncTracker()
        self.batch_files = BATCH_FILES
        """A sync commits after this many changed files (see ``core/workspace/_progress.py``)."""
        self.batch_chunks = BATCH_CHUNKS
        """...or this many new chunks..."""
        self.batch_seconds = BATCH_SECONDS
        """...or this many seconds of reading, whichever comes first."""
        self._writer = IndexWriter(self)
        self._reader = IndexReader(self)
        if rebuild and not read_only:
            # The old index stays until the first commit replaces it in the same transaction,
            # so an interrupted rebuild leaves the previous index, not an empty one.
            self._clear_on_commit = self._db.prepare_rebuild()
            if self._clear_on_commit:
                self._saved_settings = self._db.settings()
            self._follower.empty = True
        else:
            self._writer._load()
        if self.chunking.code is None:
            self.chunking = code_as_built(self.chunking, None)

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
        found = self.mounts.source_id(Path(os.path.normpath(path)))  # in the root or a mount
        return (found or ".") if found is not None else path.lstrip("/") or "."

    def _refresh(self) -> None:
        with self._lock:
            self._follower.refresh()

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

    def _ensure_vectors(self, *, refreshed: bool = False, embed: bool = True) -> None:
        """Ready the backend's vectors and embed chunks indexed before vectors were enabled.

        ``refreshed``: the caller has just caught up with the database (a search). ``embed``:
        ``False`` leaves chunks without a vector to the next call that embeds.
        """
        state = self._state
        if self.embedder is None or not backfills(state):
            return
        embedder = self.embedder
        with self._lock:  # without the write lock: a search does not wait for a running sync
            if not refreshed:
                self._follower.refresh()
            if not state.ensure_vectors(embedder.dimension, embedder.model_id) or not embed:
                return
        with self._write_lock:
            with self._lock:
                self._follower.refresh()
                pending = state.ensure_vectors(embedder.dimension, embedder.model_id)
            if not pending:
                return
            texts = {r.hash: r.text for r in self._db.chunks(list(pending)).values()}
            vectors = embed_texts(self.embedder, texts, show_progress=self.show_progress)
            if not self.read_only and vectors:
                with self._lock, self._db.write("save vectors") as writer:
                    writer.put_vectors(vectors)
                    writer.set_meta("settings", json.dumps(self._settings(), sort_keys=True))
            with self._lock:
                state.add_vectors(vectors)

    def __len__(self) -> int:
        with self._lock:
            self._follower.refresh()
            return len(self._state)

    def __repr__(self) -> str:
        return (
            f"Workspace(root={str(self.root)!r}, sources={len(self.source_ids())}, "
            f"chunks={len(self)}, modes={self.modes})"
        )

    def source_ids(self) -> list[str]:
        """Ids of every indexed file and string."""
        with self._lock:
            self._follower.refresh()
            return list(self._sources.all())

    def source(self, source_id: str) -> SourceRecord | None:
        """The manifest row of a source, if indexed."""
        with self._lock:
            self._follower.refresh()
            return self._sources.get(self._normalise_source_id(source_id))

    def chunks_of(self, source_id: str) -> list[Chunk]:
        """Chunks of a source, in order."""
        with self._lock:
            if self._follower.empty or not self._db.exists():
                return []
            return [r.chunk() for r in self._db.chunks_of(self._normalise_source_id(source_id))]

    def stats(self, *, within: Sequence[str] | None = None) -> dict[str, Any]:
        """Counts and settings, for people and tools.

        Args:
            within: Count only the sources in these folders of the root (and their chunks),
                as an MCP client's roots confine a session; ``None``: every source. Vectors
                are then counted only when every chunk has one (else ``None``: not known).
        """
        within = normalise_within(within)
        with self._lock:
            self._follower.refresh()
            state = self._state
            vectors = state.vector_count() if isinstance(state, VectorBackfill) else None
            if vectors is None:
                no_vectors = self.embedder is None or self._follower.empty or not self._db.exists()
                vectors = 0 if no_vectors else self._db.count_embedded()
            sources, chunks = len(self._sources.all()), len(self._state)
            if within is not None:
                inside = [r for s, r in self._sources.all().items() if is_within(s, within)]
                every = vectors >= chunks
                sources, chunks = len(inside), sum(len(r.chunk_ids) for r in inside)
                vectors = chunks if every and vectors else (0 if not vectors else None)
            return {
                "root": str(self.root),
                "index_dir": str(self.index_dir),
                "sources": sources,
                "chunks": chunks,
                "modes": list(self.modes),
                "embedder": self.embedder.model_id if self.embedder else None,
                "vectors": vectors,
                "backend": self._state.name,
            }

    def _matching(self, target: str) -> list[str]:
        """Sources ``target`` names: itself, or everything under it as a folder."""
        with self._lock:
            if target in {"", "."}:
                return list(self._sources.all())
            single = self._sources.get(target) is not None
            if single and (self._follower.empty or not self._db.has_children(target)):
                return [target]
            return [s for s in self._sources.all() if s == target or s.startswith(target + "/")]

    @property
    def sync_progress(self) -> SyncProgress:
        """How far the running (or last) sync of this object got; safe from any thread."""
        return self._tracker.snapshot()

    def sync(
        self, paths: Sequence[str] | str | None = None, *, show_progress: bool | None = None
    ) -> SyncReport:
        """Bring the index in line with files under the root.

        New and changed files are converted, chunked and embedded (vectors come from the cache
        first); files deleted from disk leave both indexes; unchanged files cost one ``stat``.

        Args:
            paths: Files, directories and glob patterns relative to the root (default: the root).
            show_progress: Show a progress bar (default: the workspace setting).

        Changes are committed in bounded batches (``batch_files`` changed files,
        ``batch_chunks`` new chunks or ``batch_seconds`` of reading, whichever comes first;
        removals go with the last batch), so an interrupt, a kill or a crash keeps every
        finished batch and the next sync continues without embedding them again.
        :attr:`sync_progress` says how far a running sync got, from any thread.

        Returns:
            What was added, updated, removed and skipped (with reasons).
        """
        return self._writer.sync(paths, show_progress=show_progress)

    def commit_pending_rebuild(self) -> bool:
        """Commit a pending ``rebuild=True`` now: the old index is cleared in this commit.

        A workspace opened with ``rebuild=True`` keeps the previous index on disk until its first
        commit replaces it (an interrupted rebuild leaves the old index, not an empty one). Call
        this to make the clear durable before other work reads the stored state (``save()`` and
        ``ray_index()`` do). Cached vectors are kept when the embedder is unchanged.

        Returns:
            Whether there was a clear to commit (``False``: nothing was written).
        """
        return self._writer.commit_pending_rebuild()

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
        return self._reader.search(
            query,
            top_k=top_k,
            mode=mode,
            min_score=min_score,
            filter=filter,
            vector_weight=vector_weight,
        )

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
        return self._reader.read(
            path, start_line=start_line, end_line=end_line, chunk_id=chunk_id, max_chars=max_chars
        )

    def read_text(self, path: str) -> str:
        """Text of a file inside the root (converted like ``sync`` does), for tools.

        Raises:
            InvalidInputError: No such file, not a regular file, too large, unreadable (the OS
                reason), or not convertible.
            PathOutsideWorkspaceError: The path leaves the root.
        """
        return self._reader.read_text(path)

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

    @classmethod
    def from_project(cls, root: str | os.PathLike[str], **overrides: Any) -> Workspace:
        """Open the workspace of a project; the same as ``Workspace(root, **overrides)``.

        Kept for compatibility: the constructor reads ``workspace-tools.yaml`` itself.
        """
        return cls(root, **overrides)

    # -- public properties ---------------------------------------------------------------------

    @property
    def conversion_cache(self) -> ConversionCache:
        """Converted text of the indexed rich documents, by content hash (grep reads it too)."""
        return self._conversions

    @property
    def default_mode(self) -> str:
        """Mode used when none is given: hybrid when both indexes exist, else the one there is."""
        return "hybrid" if "hybrid" in self.modes else self.modes[0]

    @property
    def has_index(self) -> bool:
        """An index was created here (it may hold nothing: every source removed)."""
        return self._db.exists()

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
        # The chunk ids come from the change itself: reading the source back cost a refresh
        # and a query per write.
        chunk_ids = self._writer._index_documents(
            [(id, content, dict(metadata or {}))], show_progress=False
        )[1]
        return next(iter(chunk_ids.values()), [])

    def index_many(
        self, documents: Iterable[DocumentLike], *, show_progress: bool | None = None
    ) -> SyncReport:
        """Index many strings in one batch (one BM25 rebuild, batched embedding, one save)."""
        # The cyclic collector paused for the whole batch (it makes no cycles): with it on, the
        # documents unpacked and the rows written set off collections that walked every object
        # the workspace holds (~0.35 s of a 50,000-chunk build in 10,000-chunk batches, ~50 ms
        # paused; the objects that outlive the batch are walked once, after it).
        with gc_paused():
            return self._writer._index_documents(documents, show_progress=show_progress)[0]

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
                    ids = [s for s in self._sources.all() if spec.match_file(s)]
            else:
                ids = self._matching(target)
            report = SyncReport(removed=ids)
            self._writer._apply([], ids, report, show_progress=False)
            record_removed(self, ids)  # kept out of the next stat walk until they change
            return ids

    def watch(
        self,
        *,
        initial_sync: bool = True,
        debounce_ms: int = 1_600,
        step_ms: int = 50,
        poll_seconds: float = 2.0,
        force_polling: bool = False,
        on_sync: Callable[[SyncReport], None] | None = None,
    ) -> Watcher:
        """Follow the files from a background thread, started now (see :class:`Watcher`).

        Each burst of file events becomes one incremental :meth:`sync`; ``.gitignore``d,
        hidden and excluded paths and the index folder cost nothing. Use it as a context
        manager (``with ws.watch():`` or ``async with ws.watch():``) or call ``stop()``.

        Raises:
            ReadOnlyWorkspaceError: the workspace is read-only (its searches already see what
                other processes commit).
        """
        from workspace_tools.core.workspace._watch import Watcher

        return Watcher(
            self,
            initial_sync=initial_sync,
            debounce_ms=debounce_ms,
            step_ms=step_ms,
            poll_seconds=poll_seconds,
            force_polling=force_polling,
            on_sync=on_sync,
        ).start()

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
            self._writer.commit_pending_rebuild()
            if self._db.exists():
                self._writer._merge(prune=True)
                self._db.compact()
            self._writer._prune_conversions()

    def close(self) -> None:
        """Stop the helper process this workspace started and release the backend's connections.

        The helper is the tokenizing worker of bulk changes (``backends/embedded/tokenizing.py``).
        The workspace stays usable: a later bulk change starts a worker again, a backend reconnects.
        A worker also stops when the workspace is garbage-collected, when this process exits,
        and by itself when this process dies.
        """
        with self._lock:
            self._state.close()
