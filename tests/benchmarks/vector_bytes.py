"""Where the bytes of a 50k-chunk build go, and what the vectors cost to build and to load.

Run: ``.venv/bin/python tests/benchmarks/vector_bytes.py [--size 50000]``

Builds the synthetic chunks and precomputed vectors of ``storage_peers.py`` (the same ``Ours``
store: ``index_many`` in batches of 10,000, then ``save()``) and prints the build's wall and CPU
time, how many HNSW graphs were built, the largest files of the index folder and the largest
tables of the database (SQLite's ``dbstat``). Then, twice in a fresh ``Workspace``: the first
vector search (which loads ``dense.faiss``) against building the flat index from the embedding
cache instead (``snapshot_of_rows``, ``vectors``, ``DenseIndex.add``: what a process without the
file does).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import storage_peers as sp

from workspace_tools import Workspace
from workspace_tools.core.index import dense as dense_module

MB = 1 << 20


def _sizes(index: Path) -> None:
    files = {p.relative_to(index).as_posix(): p.stat().st_size for p in index.rglob("*")}
    files = {name: size for name, size in files.items() if (index / name).is_file()}
    print(f"total {sum(files.values()) / MB:.1f} MB")
    for name, size in sorted(files.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {name:48s} {size / MB:8.1f} MB")
    with sqlite3.connect(index / "index.sqlite3") as conn:
        tables = conn.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
    conn.close()
    for name, size in tables:
        print(f"  table {name:42s} {size / MB:8.1f} MB")


class _Query:
    """One fixed query vector (the search's text is not embedded)."""

    def __init__(self, vectors: sp.Vectors, query: np.ndarray) -> None:
        self.model_id, self.dimension, self.max_batch_size = vectors.model_id, sp.DIM, 4096
        self.query = query

    def embed(self, texts: Any) -> np.ndarray:
        return np.tile(self.query, (len(texts), 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=50_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vector-bytes-") as name:
        tmp = Path(name)
        sp.make_vectors(tmp / "v.npy", args.size)
        docs = list(sp.chunks(args.size))
        vectors = sp.Vectors(tmp / "v.npy", [t for _, t in docs])
        store = sp.Ours(tmp / "ws", vectors)
        builds = 0
        rebuild = dense_module.DenseIndex._rebuild

        def counted(self: Any, **options: Any) -> None:
            nonlocal builds
            builds += bool(options.get("hnsw"))
            rebuild(self, **options)

        dense_module.DenseIndex._rebuild = counted  # type: ignore[method-assign]
        wall, cpu = time.perf_counter(), time.process_time()
        store.build(docs)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"{args.size} chunks: build {wall:.1f} s wall, {cpu:.1f} s CPU, HNSW graphs {builds}")
        _sizes(tmp / "ws" / "index")
        embedder = _Query(vectors, np.asarray(vectors.array[123], dtype=np.float32))
        for _ in range(2):
            ws = Workspace(tmp / "ws", index_dir=tmp / "ws" / "index", embedder=embedder)
            start = time.perf_counter()
            ws.search("x", mode="vector", top_k=10)
            from_file = time.perf_counter() - start
            start = time.perf_counter()
            _, rows = ws._db.snapshot_of_rows()
            hashes = {int(r[0]): str(r[2]) for r in rows}
            found = ws._db.vectors(hashes.values())
            index = dense_module.DenseIndex(sp.DIM)
            keys = list(hashes)
            index.add(np.asarray(keys, dtype=np.int64), np.vstack([found[hashes[k]] for k in keys]))
            from_cache = time.perf_counter() - start
            print(
                f"first vector search (loads dense.faiss) {from_file * 1000:.0f} ms; "
                f"flat index from the cache {from_cache * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
