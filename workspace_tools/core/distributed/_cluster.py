"""The Ray side: connect to (or start) a cluster, and the two Ray Data pipelines (Ray lazily)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, cast

import numpy as np

from workspace_tools.core.convert import ConversionLimits
from workspace_tools.core.distributed._extras import require_ray
from workspace_tools.core.distributed._plan import FileWork
from workspace_tools.core.distributed._work import EmbedActor, chunk_batch
from workspace_tools.core.embedding.embedder import Embedder
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.text.chunking import ChunkingConfig

__all__ = ["Cluster", "chunk_on_cluster", "embed_on_cluster"]

Batch = dict[str, Any]


class Cluster:
    """A connection to a Ray cluster for a ``with`` block (``address`` as for ``index_on_ray``)."""

    def __init__(self, address: str | None) -> None:
        require_ray()
        self.address = address
        self.started = False

    def __enter__(self) -> Cluster:
        import ray

        if not ray.is_initialized():
            address = self.address or os.environ.get("RAY_ADDRESS") or "local"
            kwargs: dict[str, Any] = {"log_to_driver": False}
            if address == "local":
                kwargs["include_dashboard"] = False
            try:
                ray.init(address=address, **kwargs)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                msg = (
                    f"Cannot connect to the Ray cluster at {address!r}: {exc}. Check the address "
                    "(`ray status` on the head node prints it) and, since Ray 2.60 turns token "
                    "authentication on, export the same RAY_AUTH_MODE=token (and token) on the "
                    "driver as on every node."
                )
                raise InvalidInputError(msg) from exc
            self.started = True
        from ray.data import DataContext

        context = DataContext.get_current()
        context.enable_progress_bars = False  # the driver shows its own bar
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.started:
            import ray

            ray.shutdown()

    def cpus(self) -> int:
        """CPUs the cluster offers (at least 1)."""
        import ray

        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        return max(1, int(resources.get("CPU", 1)))


@contextlib.contextmanager
def _quiet_ray_data() -> Iterator[None]:
    """Ray Data's per-run INFO lines (plans, log folders) off while a pipeline runs."""
    logger = logging.getLogger("ray.data")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def chunk_on_cluster(
    files: Sequence[FileWork],
    *,
    chunking: ChunkingConfig,
    limits: ConversionLimits,
    files_per_task: int,
) -> Iterator[Batch]:
    """Batches of :func:`~._work.chunk_batch` output for ``files`` (Ray Data tasks)."""
    import ray.data

    if not files:
        return
    items = [
        {"rel": f.rel, "digest": f.digest, "data": f.data, "converted": f.converted} for f in files
    ]
    source = ray.data.from_items(items, override_num_blocks=max(1, -(-len(items) // 64)))
    dataset = source.map_batches(
        cast("Any", chunk_batch),
        fn_kwargs={"chunking": chunking, "limits": limits},
        batch_size=files_per_task,
        batch_format="numpy",
        num_cpus=1,
    )
    with _quiet_ray_data():
        yield from dataset.iter_batches(batch_size=files_per_task, batch_format="numpy")


def embed_on_cluster(
    groups: Sequence[Sequence[tuple[str, str]]],
    *,
    factory: Callable[[], Embedder],
    model_id: str,
    dimension: int,
    actors: int,
    groups_per_call: int,
    commit_every: int,
    threads: int,
) -> Iterator[Batch]:
    """Batches of ``{hash, vector, node, call}`` for ``groups`` of ``(hash, text)`` pairs."""
    import ray.data

    if not groups:
        return
    items = [
        {
            "hashes": json.dumps([h for h, _ in group]),
            "texts": json.dumps([t for _, t in group], ensure_ascii=False),
        }
        for group in groups
    ]
    blocks = max(1, -(-len(items) // groups_per_call))
    source = ray.data.from_items(items, override_num_blocks=blocks)
    dataset = source.map_batches(
        EmbedActor,
        fn_constructor_kwargs={
            "factory": factory,
            "model_id": model_id,
            "dimension": dimension,
            "threads": threads,
        },
        # One call in flight per actor: a fast actor cannot queue up an idle one's blocks.
        compute=ray.data.ActorPoolStrategy(size=actors, max_tasks_in_flight_per_actor=1),
        batch_size=groups_per_call,
        batch_format="numpy",
        num_cpus=1,
    )
    with _quiet_ray_data():
        for batch in dataset.iter_batches(batch_size=commit_every, batch_format="numpy"):
            batch["vector"] = np.asarray(batch["vector"], dtype=np.float32)
            yield batch
