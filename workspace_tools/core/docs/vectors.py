"""Dense vectors over docs sections, and their fusion with the weighted lexical ranking.

A :class:`~workspace_tools.core.docs.index.DocsIndex` given an embedder (the workspace's, or any
object with ``embed(texts)``) embeds one text per section: the page title, the section heading
and the section's text; with :attr:`HybridConfig.page_weight` above 0, also one per page (its
title and description), which then weighs into the cosine of each of its sections. Vectors are
cached by the hash of that text, so a refresh embeds only the texts that changed; with a cache file
(:func:`default_cache_file`) they are also kept on disk, checked before use (model, shape,
checksum) and rebuilt when they do not match. At query time the lexical scores and the cosine
similarities each keep their best candidates, and a fusion rule of
:mod:`workspace_tools.core.ranking.fusion` merges the two pools.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.embedding.embedder import Embedder, embed_query, normalise
from workspace_tools.core.embedding.openvino_model import cache_root
from workspace_tools.core.ranking.fusion import fusion_rule
from workspace_tools.core.text.hashing import text_hash

__all__ = [
    "HybridConfig",
    "SectionVectors",
    "default_cache_file",
    "fuse_scores",
    "page_text",
    "section_text",
]

logger = logging.getLogger(__name__)

MAX_SECTION_CHARS: Final = 2000
"""Characters of a section's text that are embedded (the model reads about 256 tokens)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridConfig:
    """How vectors and the lexical ranking are fused."""

    vector_weight: float = 0.4
    """Weight of the vector side (0: lexical only, 1: vectors only)."""
    fusion: str = "weighted"
    """A fusion rule of :data:`~workspace_tools.core.ranking.fusion.FUSION_RULES`: by default
    Mastra's ``w * cosine + (1 - w) * minmax(lexical)`` (chosen on the Mastra docs' tuning
    questions, docs/benchmarks.md)."""
    pool: int = 100
    """Candidates each side brings to the fusion."""
    page_weight: float = 0.0
    """Share of the page's own vector (title and description) in each section's cosine; 0 (the
    default) ranks by the section's vector alone. 0.5 won one tuning question of 56 on the Mastra
    docs and lost two of 35 held out, so it is not the default (docs/benchmarks-docs.md). Page
    vectors are embedded by a build (creation or refresh) whose config has it above 0."""

    def __post_init__(self) -> None:
        for name in ("vector_weight", "page_weight"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                msg = f"{name} must be between 0 and 1, got {value}."
                raise ValueError(msg)
        if self.pool < 1:
            msg = f"pool must be at least 1, got {self.pool}."
            raise ValueError(msg)
        fusion_rule(self.fusion)  # raises ValueError naming the known rules


def section_text(title: str, heading: str, text: str) -> str:
    """The text embedded for one section: page title, heading, then the section's text."""
    head = f"{title}: {heading}" if heading and heading != title else title
    body = " ".join(text.split())[:MAX_SECTION_CHARS]
    return f"{head}\n{body}" if body else head


def page_text(title: str, description: str) -> str:
    """The text embedded for one page: its title, then its description."""
    return f"{title}\n{description}".strip()


def default_cache_file(root: Path, scope: str, model_id: str) -> Path:
    """Where the section vectors of one docs tree and model are kept (the user cache folder)."""
    key = text_hash(f"{root}\0{scope}\0{model_id}")[:24]
    return cache_root() / "docs-vectors" / f"{key}.npz"


class SectionVectors:
    """An embedder and a cache of section vectors by text hash (optionally kept on disk)."""

    def __init__(self, embedder: Embedder, *, cache_file: Path | None = None) -> None:
        self.embedder = embedder
        self.cache_file = cache_file
        self._cache: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()
        self._embedding = threading.Lock()
        """One embedding at a time: a call made while another embeds waits for it, then finds
        the texts they share cached (each docs refresh embeds in a thread of its own, and
        several embedding the same texts at once with one local model deadlocked in it)."""
        self._loaded = False

    @property
    def model_id(self) -> str:
        """The embedder's model id."""
        return str(getattr(self.embedder, "model_id", type(self.embedder).__name__))

    def embed_sections(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit-length row per text; cached texts are not embedded again."""
        with self._embedding:
            return self._embed_sections(texts)

    def _embed_sections(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        keys = [text_hash(t) for t in texts]
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self._cache.update(self._read_cache())
            missing = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            step = max(1, int(getattr(self.embedder, "max_batch_size", 256)))
            batches = [
                np.asarray(self.embedder.embed([by_key[k] for k in missing[i : i + step]]))
                for i in range(0, len(missing), step)
            ]
            vectors = normalise(np.concatenate(batches).astype(np.float32))
        with self._lock:
            if missing:
                self._cache.update(zip(missing, vectors, strict=True))
            live = set(keys)
            stale = [k for k in self._cache if k not in live]
            for key in stale:
                del self._cache[key]
            if missing or stale:
                self._write_cache()
            rows = [self._cache[k] for k in keys]
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        return np.ascontiguousarray(np.stack(rows), dtype=np.float32)

    def _read_cache(self) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors of the cache file, or nothing when it is missing or does not check."""
        path = self.cache_file
        if path is None or not path.is_file():
            return {}
        try:
            with np.load(path, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
                model, digest = str(data["model"]), str(data["digest"])
        except (OSError, ValueError, KeyError) as exc:
            logger.warning("Ignoring the docs vector cache %s: %s", path, exc)
            return {}
        ok = (
            model == self.model_id
            and vectors.ndim == 2
            and vectors.dtype == np.float32
            and len(keys) == len(vectors)
            and digest == text_hash(vectors.tobytes())
        )
        if not ok:
            logger.warning("Ignoring the docs vector cache %s: it does not match", path)
            return {}
        return {str(k): v for k, v in zip(keys, vectors, strict=True)}

    def _write_cache(self) -> None:
        path = self.cache_file
        if path is None or not self._cache:
            return
        keys = np.array(list(self._cache), dtype=str)
        vectors = np.ascontiguousarray(np.stack(list(self._cache.values())), dtype=np.float32)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".vectors.", suffix=".npz", dir=path.parent)
        except OSError as exc:
            logger.warning("Could not write the docs vector cache %s: %s", path, exc)
            return
        try:
            with os.fdopen(fd, "wb") as handle:
                np.savez(
                    handle,
                    keys=keys,
                    vectors=vectors,
                    model=np.array(self.model_id),
                    digest=np.array(text_hash(vectors.tobytes())),
                )
            os.replace(tmp, path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)  # an unwritten cache costs time, not correctness
            logger.warning("Could not write the docs vector cache %s: %s", path, exc)

    def query(self, text: str) -> npt.NDArray[np.float32]:
        """The unit-length vector of a query."""
        vector = np.asarray(embed_query(self.embedder, text), dtype=np.float32).reshape(1, -1)
        return np.asarray(normalise(vector)[0], dtype=np.float32)


def _top(scores: npt.NDArray[np.float32], pool: int) -> list[tuple[int, float]]:
    keep = np.flatnonzero(scores > 0)
    if len(keep) > pool:
        keep = keep[np.argpartition(-scores[keep], pool - 1)[:pool]]
    order = keep[np.argsort(-scores[keep], kind="stable")]
    return [(int(i), float(scores[i])) for i in order]


def fuse_scores(
    lexical: npt.NDArray[np.float32],
    cosine: npt.NDArray[np.float32],
    config: HybridConfig,
) -> npt.NDArray[np.float32]:
    """Fused section scores: positive for the fused candidates (best highest), 0 elsewhere.

    ``lexical`` and ``cosine`` hold one score per section (already weighed by page kind and
    zeroed outside the folder asked for). The fused scores are shifted so the weakest candidate
    stays above 0 and keeps its place.
    """
    rule = fusion_rule(config.fusion)
    fused = rule(
        _top(lexical, config.pool), _top(cosine, config.pool), vector_weight=config.vector_weight
    )
    out = np.zeros_like(lexical)
    if not fused:
        return out
    low = min(hit.score for hit in fused)
    for rank, hit in enumerate(fused):
        # keep the rule's order exactly (ties broken as the rule did), all above zero
        out[hit.key] = hit.score - low + 1e-6 * (len(fused) - rank)
    return out
