"""fp32 against bf16 embedding on this CPU: throughput, vector agreement and the nDCG@10 effect.

Run: ``.venv/bin/python tests/benchmarks/embed_precision.py [--json out.json] [--save-vectors v.npy]``

Both sides are ``SentenceTransformerEmbedder(precision=...)`` over the packaged all-MiniLM-L6-v2,
so the figures are those of the product's embedder.

* Throughput: the SciFact corpus (5,183 title + abstract texts; most fill the 256-token window)
  embedded with ``embed`` at the default batch size, plus a batch-size sweep on a subset.
* Agreement: cosine between the fp32 and the bf16 vector of each document, and the overlap of each
  test query's top 10 documents.
* Quality: nDCG@10 of exact inner-product search (every SciFact document is one vector here, so
  the ranking is a plain matrix product) with the query and documents in the same precision.
  ``--docs N`` embeds a reduced corpus (the first N documents plus every judged one) to save time;
  its nDCG@10 is higher than the full corpus's and only the fp32/bf16 difference is meaningful.

``cpu_util`` is process CPU seconds over wall seconds (about 2.0 = both cores to ourselves).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _scifact import load_scifact, ndcg_at_10

from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder, bf16_supported


def timed_embed(
    embedder: SentenceTransformerEmbedder, texts: list[str]
) -> tuple[np.ndarray, float, float]:
    """Vectors, wall seconds and cpu_util."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    vectors = embedder.embed(texts)
    wall = time.perf_counter() - wall0
    return vectors, wall, (time.process_time() - cpu0) / wall


def rank(
    query_vectors: np.ndarray, doc_vectors: np.ndarray, doc_ids: list[str], qids: list[str]
) -> dict[str, list[str]]:
    scores = query_vectors @ doc_vectors.T
    top = np.argsort(-scores, axis=1)[:, :10]
    return {qid: [doc_ids[j] for j in row] for qid, row in zip(qids, top)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument(
        "--save-vectors",
        type=Path,
        help="save the fp32 corpus vectors (.npy) for faiss_threshold.py",
    )
    parser.add_argument(
        "--docs",
        type=int,
        default=0,
        help="embed only the first N documents plus every judged one (0 = all)",
    )
    parser.add_argument(
        "--sweep-docs", type=int, default=400, help="documents in the batch-size sweep (0 = skip)"
    )
    args = parser.parse_args()

    corpus, queries, qrels = load_scifact()
    doc_ids = list(corpus)
    if args.docs:  # a reduced corpus: the first N documents plus every judged one
        judged = {d for docs in qrels.values() for d in docs}
        doc_ids = [d for i, d in enumerate(doc_ids) if i < args.docs or d in judged]
    texts = [corpus[d] for d in doc_ids]
    qids, qtexts = list(queries), list(queries.values())
    import torch

    out: dict[str, Any] = {
        "docs": len(texts),
        "bf16_supported": bf16_supported(),
        "amx_tile": bool(getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)()),
        "torch_threads": torch.get_num_threads(),
    }
    print(
        f"{len(texts)} documents; bf16 supported: {out['bf16_supported']}, AMX: {out['amx_tile']}, "
        f"torch threads {out['torch_threads']}",
        flush=True,
    )

    vectors: dict[str, np.ndarray] = {}
    qvectors: dict[str, np.ndarray] = {}
    for precision in ("bf16", "fp32"):
        embedder = SentenceTransformerEmbedder(precision=precision)
        embedder.embed(["warm up", "the model"])
        vecs, wall, util = timed_embed(embedder, texts)
        vectors[precision] = vecs
        qvectors[precision] = embedder.embed(qtexts)
        row: dict[str, Any] = {
            "seconds": wall,
            "docs_per_s": len(texts) / wall,
            "cpu_util": util,
            "batch_size": embedder.batch_size,
        }
        if args.sweep_docs:
            sweep = {}
            subset = texts[: args.sweep_docs]
            for batch in (16, 32, 64, 128):
                embedder.batch_size = batch
                _, wall, util = timed_embed(embedder, subset)
                sweep[batch] = {"docs_per_s": len(subset) / wall, "cpu_util": util}
            row["sweep"] = sweep
        row["ndcg10"] = ndcg_at_10(rank(qvectors[precision], vecs, doc_ids, qids), qrels)
        out[precision] = row
        sweep_text = "".join(
            f"; bs {b}: {s['docs_per_s']:.1f}/s (util {s['cpu_util']:.2f})"
            for b, s in row.get("sweep", {}).items()
        )
        print(
            f"{precision}: {row['docs_per_s']:.1f} docs/s ({row['seconds']:.1f} s, cpu_util {row['cpu_util']:.2f}), "
            f"nDCG@10 {row['ndcg10']:.4f}{sweep_text}",
            flush=True,
        )
        del embedder

    cos = np.sum(vectors["fp32"] * vectors["bf16"], axis=1)
    qcos = np.sum(qvectors["fp32"] * qvectors["bf16"], axis=1)
    a = rank(qvectors["fp32"], vectors["fp32"], doc_ids, qids)
    b = rank(qvectors["bf16"], vectors["bf16"], doc_ids, qids)
    overlap = float(np.mean([len(set(a[q]) & set(b[q])) / 10 for q in qids]))
    out["agreement"] = {
        "doc_cos_min": float(cos.min()),
        "doc_cos_p01": float(np.percentile(cos, 1)),
        "doc_cos_mean": float(cos.mean()),
        "query_cos_min": float(qcos.min()),
        "query_cos_mean": float(qcos.mean()),
        "top10_overlap": overlap,
    }
    out["speedup_bf16"] = out["bf16"]["docs_per_s"] / out["fp32"]["docs_per_s"]
    g = out["agreement"]
    print(
        f"bf16 vs fp32: doc cosine min {g['doc_cos_min']:.4f}, p1 {g['doc_cos_p01']:.4f}, mean {g['doc_cos_mean']:.5f}; "
        f"query cosine min {g['query_cos_min']:.4f}; top-10 overlap {overlap:.3f}; "
        f"bf16 speed-up {out['speedup_bf16']:.2f}x"
    )
    if args.save_vectors:
        np.save(args.save_vectors, vectors["fp32"])
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
