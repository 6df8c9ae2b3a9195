"""A third search backend, written here only: in memory, exact BM25 (bm25s) and exact vectors.

It proves the seam: it touches no file of the package, it is one registry entry
(:data:`TOY_SPEC`, registered by the ``backend`` fixture), and the whole behaviour suite of
``test_backend_behaviour.py`` runs through it as it runs through the embedded and Milvus ones.
Each search scores every chunk: bm25s over the workspace tokenizer's terms (the corpus is
indexed again when it changed), and the dot product of unit vectors (cosine) for the vector side.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt

from workspace_tools.core.backends.base import BackendHits, BackendQuery, Hit
from workspace_tools.core.backends.config import BackendConfig
from workspace_tools.core.backends.registry import BackendContext, BackendSpec
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.ranking.filters import missing
from workspace_tools.core.store.database import Changes
from workspace_tools.core.text.indexed import bm25_text


@dataclasses.dataclass(frozen=True, slots=True)
class _Row:
    source: str
    metadata: dict[str, Any]
    terms: list[str]
    vector: npt.NDArray[np.float32] | None


class ToyBackend:
    """Every chunk in a dict; each search scores them all (see the module docstring)."""

    name = "toy"

    def __init__(self, context: BackendContext) -> None:
        self.follower = context.follower
        self.db = context.db
        self.bm25 = context.bm25_config
        self.tokenizer = context.tokenizer
        self.rows: dict[int, _Row] = {}
        self.version = -1
        self._index: tuple[list[int], bm25s.BM25] | None = None
        context.follower.follow(self)

    # -- the seam -------------------------------------------------------------------------------

    def search(self, query: BackendQuery) -> BackendHits:
        keys = [k for k, row in self.rows.items() if query.filter is None or _holds(query, row)]
        hits = BackendHits()
        if query.terms and self.bm25 is not None and keys:
            scored = self._bm25_scores(list(query.terms))
            found = [Hit(k, scored[k]) for k in keys if scored.get(k, 0.0) > 0]
            hits.bm25 = sorted(found, key=lambda h: (-h.score, h.key))[: query.bm25_k]
        if query.vector is not None:
            found = [
                Hit(k, float(np.dot(row.vector, query.vector)))
                for k in keys
                if (row := self.rows[k]).vector is not None
            ]
            hits.vector = sorted(found, key=lambda h: (-h.score, h.key))[: query.vector_k]
        return hits

    def __len__(self) -> int:
        return len(self.rows)

    def cursor(self) -> int:
        return self.version

    def apply(self, changes: Changes) -> None:
        if self.version >= changes.version:
            return
        fresh = changes.after(self.version)
        for removed in fresh.removed_chunks:
            self.rows.pop(removed.key, None)
        self._add([c.key for c in fresh.chunks])
        self.version = changes.version

    def rebuild(self) -> None:
        rows = self.db.snapshot_of_rows()
        self.rows = {}
        self._add([c.key for c in rows.chunks])
        self.version = rows.version

    def reset(self) -> None:
        self.rows, self.version, self._index = {}, -1, None

    def close(self) -> None:
        """Nothing to release."""

    # -- helpers ----------------------------------------------------------------------------------

    def _add(self, keys: list[int]) -> None:
        records = self.db.chunks(keys)
        vectors = self.db.vectors({r.hash for r in records.values()})
        for key, r in records.items():
            # The database stores the text only: the workspace tokenizer makes its terms
            terms = self.tokenizer.tokenize(bm25_text(r.text, r.metadata))
            self.rows[key] = _Row(r.source, r.metadata, terms, vectors.get(r.hash))
        self._index = None

    def _bm25_scores(self, terms: list[str]) -> dict[int, float]:
        if self._index is None:
            assert self.bm25 is not None
            keys = list(self.rows)
            model = bm25s.BM25(k1=self.bm25.k1, b=self.bm25.b, method=self.bm25.method)
            model.index([self.rows[k].terms or [""] for k in keys], show_progress=False)
            self._index = (keys, model)
        keys, model = self._index
        known = [t for t in terms if t in model.vocab_dict]
        if not known:
            return {}
        scores = model.get_scores(known)
        return {key: float(score) for key, score in zip(keys, scores.tolist(), strict=True)}


def _holds(query: BackendQuery, row: _Row) -> bool:
    assert query.filter is not None
    absent = missing()
    return query.filter.holds(
        lambda key: row.source if key == "source_id" else row.metadata.get(key, absent)
    )


@dataclasses.dataclass(frozen=True, slots=True)
class ToySettings:
    """The toy takes no settings."""

    @classmethod
    def of(cls, config: BackendConfig) -> ToySettings:
        if config.given():
            msg = f"The toy backend takes no {', '.join(config.given())}."
            raise InvalidInputError(msg)
        return cls()

    @classmethod
    def from_project(cls, config: BackendConfig, *, root: Path, path: Path) -> BackendConfig:
        del root, path
        return config


TOY_SPEC = BackendSpec(
    name="toy", settings=ToySettings, open=lambda context, _settings: ToyBackend(context)
)
"""The toy's registry entry."""
