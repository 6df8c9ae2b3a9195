"""Dense vectors over docs sections, and their fusion with the weighted lexical ranking.

Section vectors are cached by text hash (optionally on disk); a fusion rule merges the pools.
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
    """A rule of :data:`~workspace_tools.core.ranking.fusion.FUSION_RULES` (docs/benchmarks.md)."""
    pool: int = 100
    """Candidates each side brings to the fusion."""
    page_weight: float = 0.0
    """Share of the page's vector in each section's cosine (see docs/benchmarks-docs.md)."""

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
        """One embedding at a time (a later call then finds the shared texts cached)."""
        self._loaded = False

    @property
    def model_id(self) -> str:
        """The embedder's model id."""
        return str(getattr(self.embedder, "model_id", type(self.embedder).__name__))

    def has_all(self, texts: Sequence[str]) -> bool:
        """Whether every text's vector is cached (then embedding them costs nothing)."""
        with self._lock:
            if not self._loaded:
                self._loaded = True
                self._cache.update(self._read_cache())
            return all(text_hash(t) in self._cache for t in texts)

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
            Path(tmp).unlink(missing_ok=True)
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
    """Fused section scores: positive for the fused candidates (best highest), 0 elsewhere."""
    rule = fusion_rule(config.fusion)
    fused = rule(
        _top(lexical, config.pool), _top(cosine, config.pool), vector_weight=config.vector_weight
    )
    out = np.zeros_like(lexical)
    if not fused:
        return out
    low = min(hit.score for hit in fused)
    for rank, hit in enumerate(fused):
        out[hit.key] = hit.score - low + 1e-6 * (len(fused) - rank)  # the rule's order, above 0
    return out
