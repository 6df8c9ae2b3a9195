"""float32 against float16 FAISS indexes: flat scan latency, HNSW build time and recall by size.

Run: ``.venv/bin/python tests/benchmarks/faiss_float16.py [--size 50000] [--vectors doc.npy]
[SPEC ...]`` where a SPEC is ``flat`` (IndexFlatIP), ``flat16`` (IndexScalarQuantizer QT_fp16),
``hnsw:M:efConstruction`` (IndexHNSWFlat) or ``hnsw16:M:efConstruction`` (IndexHNSWSQ QT_fp16).

Vectors are shaped like real ones (as in ``faiss_threshold.py``): real MiniLM document vectors
(by default the quality benchmarks' cache, ``/tmp/wt-quality-embeddings``) as centres plus
Gaussian noise, re-normalised; 200 fresh noisy queries. Each index is filled in batches of
10,000 (as ``index_many`` adds them) on FAISS's default threads; latency is one query at a time
on one OpenMP thread (as ``DenseIndex.search`` runs), p50 of 100; recall against exact float32.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import faiss
import numpy as np

DEFAULT_VECTORS = Path(
    "/tmp/wt-quality-embeddings/sentence-transformers_all-MiniLM-L6-v2-int8-doc/vectors.npy"
)


def noisy(centres: np.ndarray, n: int, rng: np.random.Generator, sigma: float = 0.5) -> np.ndarray:
    picks = centres[rng.integers(0, len(centres), n)]
    noise = rng.normal(0, sigma / np.sqrt(centres.shape[1]), picks.shape).astype(np.float32)
    out = picks + noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return np.ascontiguousarray(out, dtype=np.float32)


def make(kind: str, dim: int, m: int, ef_construction: int) -> faiss.Index:
    fp16, ip = faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
    if kind == "flat":
        return faiss.IndexFlatIP(dim)
    if kind == "flat16":
        return faiss.IndexScalarQuantizer(dim, fp16, ip)
    index = (
        faiss.IndexHNSWFlat(dim, m, ip) if kind == "hnsw" else faiss.IndexHNSWSQ(dim, fp16, m, ip)
    )
    index.hnsw.efConstruction = ef_construction
    index.hnsw.efSearch = 128
    return index


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--vectors", type=Path, default=DEFAULT_VECTORS)
    parser.add_argument(
        "specs", nargs="*", default=["flat", "flat16", "hnsw:32:40", "hnsw16:32:40"]
    )
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    centres = np.load(args.vectors).astype(np.float32)
    data, queries = noisy(centres, args.size, rng), noisy(centres, 200, rng)
    exact = faiss.IndexFlatIP(data.shape[1])
    exact.add(data)
    _, truth10 = exact.search(queries, 10)
    _, truth100 = exact.search(queries, 100)
    threads = faiss.omp_get_max_threads()
    for spec in args.specs:
        kind, m, ef = ([*spec.split(":"), "32", "40"])[:3]
        index = make(kind, data.shape[1], int(m), int(ef))
        start = time.perf_counter()
        for row in range(0, args.size, 10_000):
            index.add(data[row : row + 10_000])
        build = time.perf_counter() - start
        faiss.omp_set_num_threads(1)
        p50 = {}
        for k in (10, 100):
            times = []
            for query in queries[:100]:
                start = time.perf_counter()
                index.search(query[None], k)
                times.append(time.perf_counter() - start)
            p50[k] = float(np.median(times)) * 1000
        _, got10 = index.search(queries, 10)
        _, got100 = index.search(queries, 100)
        faiss.omp_set_num_threads(threads)
        r10 = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got10, truth10, strict=True)])
        r100 = np.mean([len(set(a) & set(b)) / 100 for a, b in zip(got100, truth100, strict=True)])
        print(
            f"{spec:14s} n={args.size} build {build:6.2f} s  p50 k=10 {p50[10]:.3f} ms "
            f"k=100 {p50[100]:.3f} ms  recall@10 {r10:.3f} @100 {r100:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
