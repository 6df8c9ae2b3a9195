"""Test collections in the BEIR layout, their metrics, and an on-disk embedding cache.

Collections: SciFact (``scifact-train`` to choose settings, ``scifact-test`` to report) and the
three classic ones in ``../shared/benchmarks/ir-classic`` (CISI, Cranfield, NPL).

:class:`CachedEmbedder` wraps an embedder and keeps every vector it computed under ``/tmp``,
keyed by model, precision, role (document or query) and the SHA-256 of the text, so tuning runs
never embed the same text twice (embedding is the slow part on the shared 2-core machine).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _scifact import recall_at  # noqa: F401 - one definition, re-exported for the benchmarks

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks"
if not SHARED.is_dir():  # worktrees live one level deeper than the main checkout
    SHARED = Path("/work/shared/benchmarks")
FOLDERS = {
    "scifact-train": (SHARED / "scifact", "train"),
    "scifact-test": (SHARED / "scifact", "test"),
    "cisi": (SHARED / "ir-classic" / "cisi", "test"),
    "cranfield": (SHARED / "ir-classic" / "cranfield", "test"),
    "npl": (SHARED / "ir-classic" / "npl", "test"),
}
RAW_BM25S_PUBLISHED = {"cisi": 0.381, "cranfield": 0.519, "npl": 0.436, "scifact-test": 0.679}
"""bm25s defaults nDCG@10 as given in the collections' SOURCE.md / README (the targets)."""
CACHE_DIR = Path("/tmp/wt-quality-embeddings")

Collection = tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]


def load(name: str) -> Collection:
    """Corpus (id -> title + text), judged queries (id -> text), qrels (query -> doc -> grade)."""
    folder, split = FOLDERS[name]
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            title, text = row.get("title") or "", row.get("text") or ""
            corpus[row["_id"]] = f"{title}\n{text}" if title else text
    qrels: dict[str, dict[str, int]] = {}
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader)
        for qid, did, grade in reader:
            if int(grade) > 0:
                qrels.setdefault(qid, {})[did] = int(grade)
    queries = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    qrels = {q: d for q, d in qrels.items() if q in queries}
    return corpus, queries, qrels


def ndcg_at_10(ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> float:
    """Mean nDCG@10 over the judged queries (BEIR's definition, linear gains)."""
    return float(np.mean(per_query_ndcg(ranked, qrels)))


def per_query_ndcg(ranked: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> list[float]:
    """nDCG@10 of each judged query, in qrels order."""
    out = []
    for qid, judged in qrels.items():
        docs = ranked.get(qid, [])[:10]
        dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(docs))
        ideal = sorted(judged.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        out.append(dcg / idcg if idcg else 0.0)
    return out


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class VectorCache:
    """Vectors of one (model, precision, role) on disk: ``keys.json`` + ``vectors.npy``."""

    def __init__(self, name: str) -> None:
        self.folder = CACHE_DIR / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self._rows: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        keys = self.folder / "keys.json"
        if keys.exists():
            self._rows = {k: i for i, k in enumerate(json.loads(keys.read_text()))}
            self._matrix = np.load(self.folder / "vectors.npy")
        self._pending: dict[str, np.ndarray] = {}

    def get(self, text: str) -> np.ndarray | None:
        key = _digest(text)
        row = self._rows.get(key)
        if row is not None:
            return self._matrix[row]
        return self._pending.get(key)

    def put(self, text: str, vector: np.ndarray) -> None:
        self._pending[_digest(text)] = np.asarray(vector, dtype=np.float32)

    def flush(self) -> None:
        if not self._pending:
            return
        keys = list(self._rows) + list(self._pending)
        new = np.stack(list(self._pending.values()))
        matrix = new if self._matrix.size == 0 else np.vstack([self._matrix, new])
        np.save(self.folder / "vectors.npy", matrix)
        (self.folder / "keys.json").write_text(json.dumps(keys))
        self._rows = {k: i for i, k in enumerate(keys)}
        self._matrix = matrix
        self._pending = {}


class CachedEmbedder:
    """An embedder that reads vectors from :class:`VectorCache` and embeds only the misses.

    It has the workspace's ``Embedder`` surface (``embed`` for documents) plus ``embed_query``.
    """

    def __init__(self, inner: Any, *, tag: str) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.max_batch_size = 100_000
        safe = self.model_id.replace("/", "_")
        self.docs = VectorCache(f"{safe}-{tag}-doc")
        self.queries = VectorCache(f"{safe}-{tag}-query")
        self.misses = 0

    def _lookup(self, cache: VectorCache, texts: Sequence[str], embed: Any) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if cache.get(t) is None))
        if todo:
            self.misses += len(todo)
            step = 512
            for start in range(0, len(todo), step):
                batch = todo[start : start + step]
                for text, vector in zip(batch, embed(batch), strict=True):
                    cache.put(text, vector)
                cache.flush()
        return np.stack([cache.get(t) for t in texts]).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._lookup(self.docs, texts, self.inner.embed)

    def embed_query(self, text: str) -> np.ndarray:
        embed = getattr(self.inner, "embed_queries", None) or self.inner.embed
        return self._lookup(self.queries, [text], embed)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        embed = getattr(self.inner, "embed_queries", None) or self.inner.embed
        return self._lookup(self.queries, texts, embed)


def default_cached_embedder() -> CachedEmbedder:
    """The workspace's default embedder behind the cache."""
    from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

    inner = SentenceTransformerEmbedder()
    return CachedEmbedder(inner, tag=inner.precision)
