"""What runs on the cluster, with the local sync's functions: convert, chunk and embed."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from workspace_tools.core.convert import (
    DOCUMENT_EXTENSIONS,
    ConversionLimits,
    convert_bytes,
)
from workspace_tools.core.distributed._plan import converted_from_json, converted_to_json
from workspace_tools.core.embedding.embedder import (
    DEFAULT_MODEL_ID,
    Embedder,
    SentenceTransformerEmbedder,
)
from workspace_tools.core.errors import ConversionError, InvalidInputError
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.workspace.chunks import chunk_converted

__all__ = ["EmbedActor", "SentenceTransformerSpec", "chunk_batch", "embedder_factory"]

Batch = dict[str, Any]


def chunk_batch(batch: Batch, *, chunking: ChunkingConfig, limits: ConversionLimits) -> Batch:
    """Convert (unless cached) and chunk each file of a batch.

    Output columns: ``rel``, ``digest``, ``conversion`` (fresh conversion JSON or ``""``) and
    ``chunks`` (JSON list of ``[content hash, text]``, ``[]`` for an unconvertible file).
    """
    conversions: list[str] = []
    chunk_lists: list[str] = []
    for rel, data, cached in zip(batch["rel"], batch["data"], batch["converted"], strict=True):
        fresh = ""
        try:
            if cached:
                converted = converted_from_json(str(cached))
            else:
                converted = convert_bytes(Path(str(rel)), bytes(data), limits=limits)
                if Path(str(rel)).suffix.lower() in DOCUMENT_EXTENSIONS:
                    fresh = converted_to_json(converted)
        except ConversionError:
            conversions.append("")
            chunk_lists.append("[]")
            continue
        chunks = chunk_converted(str(rel), converted, {}, config=chunking)
        conversions.append(fresh)
        chunk_lists.append(
            json.dumps([[text_hash(c.text), c.text] for c in chunks], ensure_ascii=False)
        )
    return {
        "rel": batch["rel"],
        "digest": batch["digest"],
        "conversion": np.array(conversions, dtype=object),
        "chunks": np.array(chunk_lists, dtype=object),
    }


@dataclass(frozen=True, slots=True)
class SentenceTransformerSpec:
    """Builds, on a cluster node, the driver's sentence-transformers embedder (resolved)."""

    model: str | None
    precision: str
    batch_size: int
    backend: str = "torch"

    def __call__(self) -> Embedder:
        return SentenceTransformerEmbedder(
            self.model,
            device="cpu",
            precision=self.precision,
            batch_size=self.batch_size,
            backend=self.backend,
        )


@dataclass(frozen=True, slots=True)
class _Shipped:
    """An embedder object sent to the nodes as it is (it must pickle)."""

    embedder: Any

    def __call__(self) -> Embedder:
        return self.embedder  # type: ignore[no-any-return]


def embedder_factory(embedder: Embedder) -> Callable[[], Embedder]:
    """A picklable function that builds ``embedder`` again on a node (others ship as they are)."""
    if isinstance(embedder, SentenceTransformerEmbedder):
        name = embedder.model_id
        return SentenceTransformerSpec(
            model=None if name == DEFAULT_MODEL_ID else name,
            precision=embedder.precision,
            batch_size=embedder.batch_size,
            backend=embedder.backend,
        )
    return _Shipped(embedder)


class EmbedActor:
    """One actor of the pool: loads the model once, embeds batches on ``threads`` torch threads.

    Args:
        factory: Builds the embedder (see :func:`embedder_factory`).
        model_id: The driver's model id; the actor's must match.
        dimension: The driver's vector length; the actor's must match.
        threads: Torch intra-op (or OpenVINO inference) threads.

    Raises:
        InvalidInputError: The embedder built on the node is another model.
    """

    def __init__(
        self, factory: Callable[[], Embedder], model_id: str, dimension: int, threads: int
    ) -> None:
        import sys

        import ray

        self.embedder = factory()
        if (self.embedder.model_id, self.embedder.dimension) != (model_id, dimension):
            msg = (
                f"The embedder built on the cluster is {self.embedder.model_id!r} "
                f"({self.embedder.dimension} dimensions), the workspace's is {model_id!r} "
                f"({dimension}). Pass an embedder_factory that builds the workspace's model."
            )
            raise InvalidInputError(msg)
        if isinstance(self.embedder, SentenceTransformerEmbedder) and self.embedder.threads is None:
            self.embedder.threads = threads  # OpenVINO's inference threads, read when it loads
        load = getattr(self.embedder, "load", None)
        if callable(load):
            load()  # once per actor, before the first batch
        torch = sys.modules.get("torch")  # an embedder without torch leaves it unimported
        if torch is not None:
            torch.set_num_threads(threads)
        context = ray.get_runtime_context()
        self.node = context.get_node_id()
        self.actor = context.get_actor_id() or "actor"
        self.calls = 0

    def __call__(self, batch: Batch) -> Batch:
        """Vectors of the texts of each group (one embedder call per group), with the node."""
        hashes: list[str] = []
        parts: list[np.ndarray[Any, np.dtype[np.float32]]] = []
        for group_hashes, group_texts in zip(batch["hashes"], batch["texts"], strict=True):
            texts = [str(t) for t in json.loads(str(group_texts))]
            matrix = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            if matrix.shape != (len(texts), self.embedder.dimension):
                msg = (
                    f"The embedder returned an array of shape {matrix.shape} for {len(texts)} "
                    f"texts (expected ({len(texts)}, {self.embedder.dimension}))."
                )
                raise InvalidInputError(msg)
            hashes.extend(str(h) for h in json.loads(str(group_hashes)))
            parts.append(matrix)
        self.calls += 1
        call = f"{self.actor}:{self.calls}"
        return {
            "hash": np.array(hashes, dtype=object),
            "vector": np.vstack(parts),
            "node": np.array([self.node] * len(hashes), dtype=object),
            "call": np.array([call] * len(hashes), dtype=object),
        }
