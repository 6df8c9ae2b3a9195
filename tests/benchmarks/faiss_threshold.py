"""Flat against HNSW in ``DenseIndex``: single-query latency, recall and build/remove cost by size.

Run: ``.venv/bin/python tests/benchmarks/faiss_threshold.py [--vectors v.npy] [--json out.json]``

The vectors are shaped like real ones (stack-notes section 5): real all-MiniLM-L6-v2 vectors of
SciFact documents (from ``embed_precision.py --save-vectors``, or embedded here when no file is
given) serve as centres, and every indexed vector is a centre plus Gaussian noise, re-normalised.
Queries are fresh noisy copies of random centres. I.i.d. random vectors would be the pathological
case for HNSW and say nothing about real text.

Both indexes are ``DenseIndex`` as the workspace builds them (``IndexIDMap2`` over a float16
``IndexScalarQuantizer``, or over ``IndexHNSWSQ`` M=32, efConstruction=40, efSearch=128; float32
``IndexFlatIP`` / ``IndexHNSWFlat`` before issue 25: ``faiss_float16.py`` compares the two),
forced with ``hnsw_threshold``.
Latency is one query at a time, as ``Workspace.search`` issues them: ``k=10`` (vector mode) and
``k=100`` (the hybrid candidate pool). Recall is against the flat index's exact answer. "remove"
is the time to drop 10 ids (HNSW cannot delete in place, so ``DenseIndex`` rebuilds it).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np

from workspace_tools.core.backends.embedded.dense import DenseIndex

SIZES = (5_000, 10_000, 20_000, 30_000, 50_000, 100_000)


def real_vectors(path: Path | None, n: int) -> np.ndarray:
    if path is not None and path.exists():
        return np.load(path).astype(np.float32)
    from _scifact import load_scifact

    from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

    corpus, _, _ = load_scifact()
    return SentenceTransformerEmbedder().embed(list(corpus.values())[:n])


def noisy(
    centres: np.ndarray, n: int, sigma: float, rng: np.random.Generator
) -> tuple[np.ndarray, float]:
    """``n`` noisy copies of random centres and their mean cosine to their centre."""
    picks = centres[rng.integers(0, len(centres), n)]
    out = picks + rng.normal(0.0, sigma / np.sqrt(centres.shape[1]), picks.shape).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return np.ascontiguousarray(out, dtype=np.float32), float(np.mean(np.sum(out * picks, axis=1)))


def latencies(
    index: DenseIndex, queries: np.ndarray, k: int
) -> tuple[list[list[int]], list[float]]:
    ids, lat = [], []
    for q in queries:
        start = time.perf_counter()
        hits = index.search(q, k=k)
        lat.append(time.perf_counter() - start)
        ids.append([i for i, _ in hits])
    return ids, lat


def recall(approx: list[list[int]], exact: list[list[int]]) -> float:
    return float(np.mean([len(set(a) & set(e)) / len(e) for a, e in zip(approx, exact)]))


def measure(size: int, data: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    ids = np.arange(size, dtype=np.int64)
    row: dict[str, Any] = {"size": size}
    exact: dict[int, list[list[int]]] = {}
    for kind, threshold in (("flat", 10**12), ("hnsw", 0)):
        index = DenseIndex(data.shape[1], hnsw_threshold=threshold)
        start = time.perf_counter()
        index.add(ids, data[:size])
        index.wait_for_graph()  # the graph is built in a background thread
        build = time.perf_counter() - start
        assert index.kind == kind
        out: dict[str, Any] = {"build_s": build}
        for k in (10, 100):
            found, lat = latencies(index, queries, k)
            out[f"p50_ms_k{k}"] = statistics.median(lat) * 1000
            out[f"p95_ms_k{k}"] = float(np.percentile(lat, 95) * 1000)
            if kind == "flat":
                exact[k] = found
            else:
                out[f"recall_at_{k}"] = recall(found, exact[k])
        start = time.perf_counter()
        index.remove(ids[:10])
        out["remove10_s"] = time.perf_counter() - start
        row[kind] = out
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--vectors",
        type=Path,
        help=".npy of real MiniLM vectors (embed_precision.py --save-vectors)",
    )
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument("--sigma", type=float, default=0.5, help="noise norm added to each centre")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = parser.parse_args()
    import faiss

    rng = np.random.default_rng(0)
    centres = real_vectors(args.vectors, 2000)
    data, cos = noisy(centres, max(args.sizes), args.sigma, rng)
    queries, _ = noisy(centres, args.queries, args.sigma, rng)
    print(
        f"{len(centres)} real centres, noise sigma {args.sigma} (mean cosine to centre {cos:.3f}), "
        f"{args.queries} single queries; "
        f"faiss {faiss.__version__}, omp threads {faiss.omp_get_max_threads()}",
        flush=True,
    )
    print(
        f"{'size':>7} | {'flat p50 k10':>12} {'k100':>6} {'build':>6} {'rm10':>6} | "
        f"{'hnsw p50 k10':>12} {'k100':>6} {'R@10':>6} {'R@100':>6} {'build':>6} {'rm10':>6}"
    )
    rows = []
    for size in args.sizes:
        r = measure(size, data, queries)
        rows.append(r)
        f, h = r["flat"], r["hnsw"]
        print(
            f"{size:7d} | {f['p50_ms_k10']:10.2f}ms {f['p50_ms_k100']:6.2f} {f['build_s']:6.2f} {f['remove10_s']:6.3f} | "
            f"{h['p50_ms_k10']:10.2f}ms {h['p50_ms_k100']:6.2f} {h['recall_at_10']:6.3f} {h['recall_at_100']:6.3f} "
            f"{h['build_s']:6.1f} {h['remove10_s']:6.1f}",
            flush=True,
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "sigma": args.sigma,
                    "cosine_to_centre": cos,
                    "centres": len(centres),
                    "rows": rows,
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
