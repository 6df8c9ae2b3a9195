"""SciFact quality and latency through each search backend, side by side (issue 19).

Run: ``.venv/bin/python tests/benchmarks/backend_quality.py [--json out.json] [--queries N]``
(needs the ``vector`` and ``milvus`` extras and ``$WORKSPACE_TOOLS_SHARED`` or ``../shared``).

The corpus (SciFact test split's 5,183 documents) is embedded once by ``Workspace.index_many``
with the packaged all-MiniLM-L6-v2 model into an embedded workspace. Its index folder is then
copied and reopened with ``backend="milvus"`` (a Milvus Lite file): the Milvus collection is
built from the copied database and its embedding cache, so both backends search identical
vectors and identical chunks. Printed, per backend and mode (bm25, vector, hybrid with the
default ``zscore`` fusion and with ``rrf``): nDCG@10 and recall@100 on the test queries, p50
query latency (query embedding included). For Milvus also: BM25 with the server's ``standard``
analyzer on the raw text instead of our tokenizer's terms, and Milvus' own ``hybrid_search`` with
``RRFRanker`` and ``WeightedRanker`` over the same two requests. Timings come from a shared 2-core
machine: compare within one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scifact import load_scifact, ndcg_at_10, recall_at

from workspace_tools import Workspace
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder, embed_query

SHARED = Path(os.environ.get("WORKSPACE_TOOLS_SHARED") or Path(__file__).parents[3] / "shared")
TOP_K = 100


def run(ws: Workspace, queries: dict[str, str], **options: Any) -> dict[str, Any]:
    """nDCG@10, recall@100 and p50 latency of one search configuration."""
    ranked: dict[str, list[str]] = {}
    seconds = []
    for qid, text in queries.items():
        start = time.perf_counter()
        hits = ws.search(text, top_k=TOP_K, **options)
        seconds.append(time.perf_counter() - start)
        ranked[qid] = list(dict.fromkeys(h.source_id for h in hits))
    return {"ranked": ranked, "p50_ms": 1000 * statistics.median(seconds)}


def milvus_native_hybrid(ws: Workspace, queries: dict[str, str], ranker: Any) -> dict[str, Any]:
    """Milvus' hybrid_search over the same BM25 and dense requests, with a Milvus ranker."""
    from pymilvus import AnnSearchRequest

    from workspace_tools.core.backends.milvus import term_token

    backend: Any = ws._state
    assert ws.embedder is not None
    ranked: dict[str, list[str]] = {}
    seconds = []
    for qid, text in queries.items():
        start = time.perf_counter()
        terms = ws.tokenizer.query_term_counts(text)
        vector = embed_query(ws.embedder, text)
        requests = [
            AnnSearchRequest(
                data=[" ".join(term_token(t) for t in terms)],
                anns_field="sparse",
                param={"metric_type": "BM25"},
                limit=TOP_K,
            ),
            AnnSearchRequest(
                data=[vector.tolist()],
                anns_field="dense",
                param={"metric_type": "COSINE"},
                limit=TOP_K,
            ),
        ]
        found = backend.client.hybrid_search(
            backend.collection, requests, ranker=ranker, limit=TOP_K, output_fields=["key"]
        )
        keys = [int(hit["key"]) for hit in found[0]]
        chunks = ws._db.chunks(keys)
        seconds.append(time.perf_counter() - start)
        ranked[qid] = list(dict.fromkeys(chunks[k].source for k in keys if k in chunks))
    return {"ranked": ranked, "p50_ms": 1000 * statistics.median(seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--queries", type=int, default=0, help="first N test queries (0: all)")
    parser.add_argument("--docs", type=int, default=0, help="first N documents (0: all; smoke)")
    parser.add_argument(
        "--fake-embedder",
        action="store_true",
        help="the tests' hashed bag-of-words embedder (fast; only BM25 and equality are meaningful)",
    )
    parser.add_argument(
        "--keep", type=Path, help="keep the embedded index in this folder and reuse it next time"
    )
    args = parser.parse_args()
    corpus, queries, qrels = load_scifact(SHARED / "benchmarks" / "scifact")
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
        qrels = {q: qrels[q] for q in queries}
    if args.docs:
        corpus = dict(list(corpus.items())[: args.docs])
    embedder: Any = SentenceTransformerEmbedder()
    if args.fake_embedder:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
        from tests.support.fakes import FakeEmbedder

        embedder = FakeEmbedder(384)
    out: dict[str, Any] = {
        "docs": len(corpus),
        "queries": len(queries),
        "embedder": embedder.model_id,
    }
    with tempfile.TemporaryDirectory() as tmp:
        base = args.keep or Path(tmp, "embedded")
        base.mkdir(exist_ok=True)
        start = time.perf_counter()
        ws = Workspace(base, embedder=embedder, config=False)
        ws.index_many(list(corpus.items()))
        ws.save()
        out["embed_index_s"] = time.perf_counter() - start  # near 0 when --keep reused it
        runs: dict[str, dict[str, Any]] = {}
        for mode, fusion in (("bm25", None), ("vector", None), ("hybrid", "zscore")):
            runs[f"embedded {mode}"] = run(ws, queries, mode=mode)
        runs["embedded hybrid rrf"] = run(
            Workspace(base, embedder=embedder, config=False, fusion="rrf", read_only=True),
            queries,
            mode="hybrid",
        )
        for analyzer in ("workspace", "standard"):
            copy = Path(tmp, f"milvus-{analyzer}")
            shutil.copytree(base, copy, ignore=shutil.ignore_patterns("milvus.db"))
            start = time.perf_counter()
            mws = Workspace(
                copy,
                embedder=embedder,
                config=False,
                backend={"type": "milvus", "analyzer": analyzer},
            )
            out[f"milvus_{analyzer}_build_s"] = time.perf_counter() - start
            label = "milvus" if analyzer == "workspace" else "milvus standard-analyzer"
            modes = ("bm25", "vector", "hybrid") if analyzer == "workspace" else ("bm25",)
            for mode in modes:
                runs[f"{label} {mode}"] = run(mws, queries, mode=mode)
            if analyzer == "workspace":
                runs["milvus hybrid rrf"] = run(
                    Workspace(
                        copy,
                        embedder=embedder,
                        config=False,
                        fusion="rrf",
                        backend={"type": "milvus"},
                    ),
                    queries,
                    mode="hybrid",
                )
                from pymilvus import RRFRanker, WeightedRanker

                runs["milvus native RRFRanker(60)"] = milvus_native_hybrid(
                    mws, queries, RRFRanker(60)
                )
                runs["milvus native WeightedRanker(0.5,0.5)"] = milvus_native_hybrid(
                    mws, queries, WeightedRanker(0.5, 0.5)
                )
            mws._state.close()
    print(
        f"SciFact test: {out['docs']} docs, {out['queries']} queries; top_k={TOP_K}; "
        f"embedder {out['embedder']}"
    )
    print(f"{'configuration':42} {'nDCG@10':>8} {'R@100':>7} {'p50 ms':>8}")
    results = {}
    for name, result in runs.items():
        ndcg = ndcg_at_10(result["ranked"], qrels)
        recall = recall_at(result["ranked"], qrels, 100)
        results[name] = {"ndcg10": ndcg, "recall100": recall, "p50_ms": result["p50_ms"]}
        print(f"{name:42} {ndcg:8.4f} {recall:7.4f} {result['p50_ms']:8.1f}")
    for key in ("embed_index_s", "milvus_workspace_build_s", "milvus_standard_build_s"):
        print(f"{key}: {out[key]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({**out, "results": results}, indent=2))


if __name__ == "__main__":
    main()
