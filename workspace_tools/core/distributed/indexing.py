"""index_on_ray: convert, chunk and embed a workspace's new files on Ray, then sync locally.

Vectors go to the embedding cache as they arrive, so the local sync makes the same index.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.distributed._extras import require_ray
from workspace_tools.core.distributed._plan import converted_from_json, file_work, scan_files
from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.errors import InvalidInputError, ReadOnlyWorkspaceError
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.types import SyncReport
from workspace_tools.core.workspace.reporting import progress_bar

if TYPE_CHECKING:
    from workspace_tools.core.workspace import Workspace

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_COMMIT_EVERY",
    "NodeWork",
    "RayIndexReport",
    "embedding_groups",
    "index_on_ray",
]

DEFAULT_BATCH_SIZE: Final = 64
"""Texts per actor call, in whole forward passes (docs/scaling-out.md: measured)."""
DEFAULT_COMMIT_EVERY: Final = 512
"""Vectors per embedding-cache transaction: what an interruption can lose at most."""
FILES_PER_TASK: Final = 16
"""Files per convert-and-chunk task."""
FILE_WINDOW: Final = 1024
"""Files read and shipped per Ray Data run (bounds the bytes the driver holds at once)."""


@dataclass(slots=True)
class NodeWork:
    """What one node of the cluster embedded."""

    texts: int = 0
    calls: int = 0
    """Actor calls (Ray Data tasks) that ran on the node."""


@dataclass(slots=True)
class RayIndexReport:
    """What one :func:`index_on_ray` did."""

    sync: SyncReport = field(default_factory=SyncReport)
    """The local sync that wrote the index (``chunks_embedded`` is 0 after a complete run)."""
    files_chunked: int = 0
    """New and changed files converted and chunked on the cluster."""
    texts: int = 0
    """Distinct chunk texts of those files."""
    texts_cached: int = 0
    """Of those, texts the embedding cache held already (an earlier, interrupted run)."""
    texts_embedded: int = 0
    """Texts embedded on the cluster and committed to the cache."""
    actors: int = 0
    nodes: dict[str, NodeWork] = field(default_factory=dict)
    """Node id -> its share of the embedding."""
    seconds_chunk: float = 0.0
    seconds_embed: float = 0.0
    seconds_sync: float = 0.0

    def summary(self) -> str:
        """Lines a person can read."""
        lines = [
            f"Ray: {self.files_chunked} files chunked, {self.texts} distinct chunk texts "
            f"({self.texts_cached} cached, {self.texts_embedded} embedded by {self.actors} "
            f"actors) in {self.seconds_chunk + self.seconds_embed:.2f}s",
        ]
        for node, work in sorted(self.nodes.items()):
            lines.append(f"  node {node[:12]}: {work.texts} texts in {work.calls} tasks")
        lines.append(f"Local sync: {self.sync.summary()}")
        return "\n".join(lines)


def index_on_ray(
    workspace: Workspace,
    paths: Sequence[str] | str | None = None,
    *,
    address: str | None = None,
    actors: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    commit_every: int = DEFAULT_COMMIT_EVERY,
    threads: int = 1,
    embedder_factory: Callable[[], Embedder] | None = None,
    show_progress: bool | None = None,
) -> RayIndexReport:
    """Sync ``workspace`` with the conversion, chunking and embedding done on a Ray cluster.

    The result is the index ``workspace.sync(paths)`` makes; a rerun embeds only what is missing.

    Args:
        workspace: A writable workspace with an embedder.
        paths: As for :meth:`Workspace.sync` (default: the workspace's default paths).
        address: ``None`` (this session, ``RAY_ADDRESS`` or a private local one), ``"auto"``,
            ``"host:6379"`` or ``"ray://host:10001"``; nodes need ``workspace-tools[ray,vector]``.
        actors: Embedding actors (one CPU each; default: every CPU of the cluster).
        batch_size: Texts per actor call (whole forward passes, at least one).
        commit_every: Vectors per embedding-cache commit.
        threads: Torch threads per actor.
        embedder_factory: Builds the embedder on each node (default: from the workspace's).
        show_progress: Progress bars on the driver (default: the workspace setting).

    Raises:
        RayNotInstalledError: The ``ray`` extra is missing.
        ReadOnlyWorkspaceError: The workspace is read-only.
        InvalidInputError: No embedder, a count below 1, or the cluster cannot be reached.
    """
    _check(
        workspace, actors=actors, batch_size=batch_size, commit_every=commit_every, threads=threads
    )
    require_ray()
    assert workspace.embedder is not None
    from workspace_tools.core.distributed._cluster import (
        Cluster,
        chunk_on_cluster,
        embed_on_cluster,
    )
    from workspace_tools.core.distributed._work import embedder_factory as default_factory

    if isinstance(paths, str):
        paths = [paths]
    show = workspace.show_progress if show_progress is None else show_progress
    embedder = workspace.embedder
    factory = embedder_factory or default_factory(embedder)
    report = RayIndexReport()
    _settle_rebuild(workspace)
    cache = _VectorCache(workspace)
    try:
        with Cluster(address) as cluster:
            report.actors = actors or cluster.cpus()
            started = time.perf_counter()
            texts = _chunk(workspace, paths, report, chunk_on_cluster, show=show)
            missing = cache.missing(texts)
            report.texts, report.texts_cached = len(texts), len(texts) - len(missing)
            report.seconds_chunk = time.perf_counter() - started
            started = time.perf_counter()
            group_size = int(getattr(embedder, "batch_size", 0) or batch_size)
            groups = embedding_groups(
                missing, call_size=max(1, embedder.max_batch_size), group_size=group_size
            )
            bar = progress_bar(len(missing), "Embedding on Ray", show=show)
            try:
                for batch in embed_on_cluster(
                    groups,
                    factory=factory,
                    model_id=embedder.model_id,
                    dimension=embedder.dimension,
                    actors=report.actors,
                    groups_per_call=max(1, batch_size // group_size),
                    commit_every=commit_every,
                    threads=threads,
                ):
                    hashes = [str(h) for h in batch["hash"]]
                    cache.put(dict(zip(hashes, batch["vector"], strict=True)))
                    report.texts_embedded += len(hashes)
                    _count_nodes(report, batch)
                    if bar is not None:
                        bar.update(len(hashes))
            finally:
                if bar is not None:
                    bar.close()
            report.seconds_embed = time.perf_counter() - started
    finally:
        cache.close()
    started = time.perf_counter()
    report.sync = workspace.sync(paths, show_progress=show)
    report.seconds_sync = time.perf_counter() - started
    return report


def embedding_groups(
    texts: dict[str, str], *, call_size: int, group_size: int
) -> list[list[tuple[str, str]]]:
    """The texts cut into the forward passes a local sync makes (same padding, same vectors).

    Args:
        texts: Content hash -> text, in walk order.
        call_size: Texts per embedder call (the embedder's max_batch_size).
        group_size: Texts per forward pass (the sentence-transformers batch size).
    """
    ordered = sorted(texts.items(), key=lambda item: -len(item[1]))
    groups: list[list[tuple[str, str]]] = []
    for start in range(0, len(ordered), call_size):
        call = ordered[start : start + call_size]
        order = np.argsort([-len(text) for _, text in call])
        for first in range(0, len(call), group_size):
            groups.append([call[int(i)] for i in order[first : first + group_size]])
    return groups


def _check(
    workspace: Workspace, *, actors: int | None, batch_size: int, commit_every: int, threads: int
) -> None:
    if workspace.read_only:
        msg = (
            f"The workspace at {str(workspace.root)!r} is read-only: indexing on Ray writes its "
            "index. Open it with read_only=False."
        )
        raise ReadOnlyWorkspaceError(msg)
    if workspace.embedder is None:
        msg = (
            "This workspace has no embedder, so there is nothing for a Ray cluster to compute: "
            "index it locally with sync() (keyword indexing is fast), or open it with an embedder."
        )
        raise InvalidInputError(msg)
    counts = (
        ("actors", actors),
        ("batch_size", batch_size),
        ("commit_every", commit_every),
        ("threads", threads),
    )
    for name, value in counts:
        if value is not None and value < 1:
            msg = f"{name} must be at least 1, got {value}."
            raise InvalidInputError(msg)


def _settle_rebuild(workspace: Workspace) -> None:
    """Commit a pending ``rebuild=True`` (the clear) now, before vectors enter the cache."""
    workspace.commit_pending_rebuild()


def _chunk(
    workspace: Workspace,
    paths: Sequence[str] | None,
    report: RayIndexReport,
    chunk_on_cluster: Callable[..., object],
    *,
    show: bool,
) -> dict[str, str]:
    """Distinct chunk texts (content hash -> text) of the new and changed files."""
    scanned = scan_files(workspace, paths)
    by_file: dict[str, list[list[str]]] = {}
    bar = progress_bar(len(scanned), "Chunking on Ray", show=show)
    try:
        for start in range(0, len(scanned), FILE_WINDOW):
            window = scanned[start : start + FILE_WINDOW]
            work = [w for rel, path in window if (w := file_work(workspace, rel, path))]
            report.files_chunked += len(work)
            if bar is not None:
                bar.update(len(window) - len(work))
            batches = chunk_on_cluster(
                work,
                chunking=workspace.chunking,
                limits=workspace.conversion_limits,
                files_per_task=FILES_PER_TASK,
            )
            for batch in batches:  # type: ignore[attr-defined]
                for rel, digest, conversion, chunks in zip(
                    batch["rel"], batch["digest"], batch["conversion"], batch["chunks"], strict=True
                ):
                    if conversion:  # a rich document: the local sync reads it from the cache
                        workspace.conversion_cache.put(str(digest), converted_from_json(conversion))
                    by_file[str(rel)] = json.loads(str(chunks))
                if bar is not None:
                    bar.update(len(batch["digest"]))
    finally:
        if bar is not None:
            bar.close()
    texts: dict[str, str] = {}
    for rel, _ in scanned:  # the order the local sync meets the texts in (tasks end unordered)
        for content_hash, text in by_file.get(rel, ()):
            texts.setdefault(content_hash, text)
    return texts


def _count_nodes(report: RayIndexReport, batch: dict[str, npt.NDArray[np.generic]]) -> None:
    calls: dict[str, set[str]] = {}
    for node, call in zip(batch["node"], batch["call"], strict=True):
        work = report.nodes.setdefault(str(node), NodeWork())
        work.texts += 1
        calls.setdefault(str(node), set()).add(str(call))
    for node, seen in calls.items():
        report.nodes[node].calls += len(seen)


class _VectorCache:
    """The workspace's embedding cache, written through its own database connection."""

    def __init__(self, workspace: Workspace) -> None:
        self._db = IndexDatabase(workspace.index_dir, read_only=False)
        settings = workspace._settings()  # the settings the sync writes
        self._settings = json.dumps(settings, sort_keys=True)

    def missing(self, texts: dict[str, str]) -> dict[str, str]:
        """The texts whose content hash has no cached vector."""
        if not texts or not self._db.exists():
            return dict(texts)
        cached = self._db.vectors(texts)
        return {h: t for h, t in texts.items() if h not in cached}

    def put(self, vectors: dict[str, npt.NDArray[np.float32]]) -> None:
        """Commit ``vectors`` in one transaction (with the settings, on a new index)."""
        with self._db.write("cache vectors computed on Ray") as writer:
            if writer.meta("settings") is None:
                writer.set_meta("settings", self._settings)
            writer.put_vectors(vectors)

    def close(self) -> None:
        self._db.close()
