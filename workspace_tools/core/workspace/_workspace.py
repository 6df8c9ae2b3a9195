"""Workspace: index files and strings, keep the index in sync with the disk, and search it."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from workspace_tools.core.backends.catalog import SourceCatalog
from workspace_tools.core.backends.config import (
    BackendConfig,
    backend_config,
    open_backend,
)
from workspace_tools.core.backends.embedded import HNSW_THRESHOLD
from workspace_tools.core.backends.follow import ChangeFollower
from workspace_tools.core.backends.registry import BackendContext
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
from workspace_tools.core.text.scan import (
    ScanConfig,
    is_glob,
)
from workspace_tools.core.text.tokenizer import Tokenizer, TokenizerConfig
from workspace_tools.core.types import Chunk, SyncReport
from workspace_tools.core.workspace._compat import code_as_built
from workspace_tools.core.workspace._freshness import record_removed
from workspace_tools.core.workspace._ingest import (
    DocumentLike,
    gc_paused,
    stage_texts,
    unpack_document,
)
from workspace_tools.core.workspace._listing import ListingPath
from workspace_tools.core.workspace._progress import (
    BATCH_CHUNKS,
    BATCH_FILES,
    BATCH_SECONDS,
    SyncTracker,
)
from workspace_tools.core.workspace._reads import MAX_QUERY_CHARS, ReadPath
from workspace_tools.core.workspace._settings import bm25_argument, workspace_options
from workspace_tools.core.workspace._sync import SyncPath

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


class Workspace(ReadPath, SyncPath, ListingPath):
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
        ranking_prior: Weigh scores by the kind of file (``core/ranking/prior.py``): navigation
            files, lockfiles, minified bundles, sitemaps and generated files count less than
            the pages that answer (default True; see docs/benchmarks.md, "Ranking prior").
        read_only: Refuse every change to the index (default False).
        autosave: Save after every call that changed the index.
        rebuild: Ignore (and replace) an existing index instead of loading it.
        show_progress: Show progress bars on long work.
        hnsw_threshold: Vector count above which FAISS switches from exact to HNSW search.
        config: Read ``<root>/workspace-tools.yaml`` for the settings not passed (``False``: use
            only the arguments).
        backend: Search backend: ``"embedded"`` (default), ``"milvus"`` (Lite file in the index
            folder) or a :class:`BackendConfig` / mapping for a Milvus server (docs/milvus.md).

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
        self._sources = SourceCatalog(self._follower)
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
        if rebuild and not read_only:
            # The old index stays until the first commit replaces it in the same transaction,
            # so an interrupted rebuild leaves the previous index, not an empty one.
            self._clear_on_commit = self._db.prepare_rebuild()
            if self._clear_on_commit:
                self._saved_settings = self._db.settings()
            self._follower.empty = True
        else:
            self._load()
        if self.chunking.code is None:
            self.chunking = code_as_built(self.chunking, None)

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
        chunk_ids = self._index_documents(
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
            return self._index_documents(documents, show_progress=show_progress)[0]

    def _index_documents(
        self, documents: Iterable[DocumentLike], *, show_progress: bool | None
    ) -> tuple[SyncReport, dict[str, list[str]]]:
        """:meth:`index_many`, and the chunk ids of each source id (normalised) it was given."""
        self._check_writable()
        started = time.perf_counter()
        report = SyncReport()
        chunk_ids: dict[str, list[str]] = {}
        previous_of: dict[str, SourceRecord | None] = {}
        digests: dict[str, str] = {}
        with self._write_lock:
            self._refresh()
            latest: dict[str, tuple[str, dict[str, Any]]] = {}
            for doc in documents:
                doc_id, content, metadata = unpack_document(doc)
                latest[self._normalise_source_id(doc_id)] = (content, metadata)
            with gc_paused():  # many small objects, no cycles: no collection passes over them
                with self._lock:
                    previous = self._sources.get_many(latest)
                staged = stage_texts(
                    latest,
                    previous,
                    chunking=self.chunking,
                    report=report,
                    chunk_ids=chunk_ids,
                    previous_of=previous_of,
                    digests=digests,
                )
            self._apply(
                staged,
                [],
                report,
                show_progress=show_progress,
                previous=previous_of,
                digests=digests,
            )
        report.seconds = time.perf_counter() - started
        chunk_ids.update((record.id, list(record.chunk_ids)) for record, _ in staged)
        return report, chunk_ids

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
            self._apply([], ids, report, show_progress=False)
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
            self.commit_pending_rebuild()
            if self._db.exists():
                self._merge(prune=True)
                self._db.compact()
            self._prune_conversions()

    def close(self) -> None:
        """Stop the helper process this workspace started and release the backend's connections.

        The helper is the tokenizing worker of bulk changes (``text/token_split.py``). The
        workspace stays usable: a later bulk change starts a worker again, a backend reconnects.
        A worker also stops when the workspace is garbage-collected, when this process exits,
        and by itself when this process dies.
        """
        with self._lock:
            self._state.close()
