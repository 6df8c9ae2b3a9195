"""Retrieval quality across collections: SciFact and the three ir-classic ones, every mode.

Run: ``.venv/bin/python tests/benchmarks/quality_collections.py [--sweep] [--json out.json]``

For each collection (``scifact-train`` is where settings are chosen, ``scifact-test`` where they
are reported; CISI has long natural-language queries, Cranfield one-sentence questions, NPL
short keyword lists) one run prints nDCG@10 and Recall@100 of:

* raw bm25s with the defaults the collections' SOURCE.md quotes (``bm25s.tokenize`` with its
  English stop words and PyStemmer, ``BM25(k1=1.2, b=0.75)``), and with bm25s's own constructor
  defaults (k1 1.5): the baselines;
* the workspace in ``bm25`` mode under each query-term-frequency rule (``saturated`` is the
  default, ``count``, ``distinct``), ``vector`` mode, and ``hybrid`` under each fusion rule
  (``--sweep``: at vector weights 0.3 to 0.7; otherwise at 0.5).

Everything goes through ``Workspace.index_many`` and ``Workspace.search``: chunk hits are
deduplicated to document ids, nDCG@10 comes from a ``top_k=10`` search (the candidate pool an
agent's search uses), Recall@100 from ``top_k=100``. Vectors come from the default embedder
behind an on-disk cache in ``/tmp`` (``_testsets.CachedEmbedder``), so only the first run embeds.

``--prior``: only bm25, vector and hybrid at the defaults, with the ranking prior off and on, and
the kinds ``core/ranking/content_kinds.py`` gave the collection's documents.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _testsets import (
    FOLDERS,
    RAW_BM25S_PUBLISHED,
    CachedEmbedder,
    default_cached_embedder,
    load,
    ndcg_at_10,
    recall_at,
)

from workspace_tools import Workspace
from workspace_tools.core.index.sparse import QUERY_TF_RULES, BM25Config
from workspace_tools.core.ranking.content_kinds import KIND_KEY
from workspace_tools.core.ranking.fusion import FUSION_RULES

COLLECTIONS = ["scifact-train", "scifact-test", "cisi", "cranfield", "npl"]


def raw_bm25s(name: str, *, k1: float) -> dict[str, float]:
    import bm25s
    import Stemmer

    corpus, queries, qrels = load(name)
    ids = list(corpus)
    stemmer = Stemmer.Stemmer("english")
    tokens = bm25s.tokenize(
        list(corpus.values()), stopwords="en", stemmer=stemmer, show_progress=False
    )
    retriever = bm25s.BM25(k1=k1, b=0.75)
    retriever.index(tokens, show_progress=False)
    query_tokens = bm25s.tokenize(
        list(queries.values()),
        stopwords="en",
        stemmer=stemmer,
        show_progress=False,
        return_ids=False,
    )
    docs, _ = retriever.retrieve(query_tokens, k=100, show_progress=False, n_threads=1)
    ranked = {qid: [ids[i] for i in row] for qid, row in zip(queries, docs, strict=True)}
    return {"ndcg10": ndcg_at_10(ranked, qrels), "recall100": recall_at(ranked, qrels)}


def _ranked(
    ws: Workspace, queries: dict[str, str], top_k: int, **options: Any
) -> dict[str, list[str]]:
    return {
        qid: list(dict.fromkeys(h.source_id for h in ws.search(text, top_k=top_k, **options)))
        for qid, text in queries.items()
    }


def measure(
    ws: Workspace, queries: dict[str, str], qrels: dict[str, dict[str, int]], **options: Any
) -> dict[str, float]:
    top10 = _ranked(ws, queries, 10, **options)
    top100 = _ranked(ws, queries, 100, **options)
    return {"ndcg10": ndcg_at_10(top10, qrels), "recall100": recall_at(top100, qrels)}


def build(name: str, embedder: CachedEmbedder | None, **options: Any) -> Workspace:
    corpus, _, _ = load(name)
    ws = Workspace(tempfile.mkdtemp(), embedder=embedder, autosave=False, **options)
    ws.index_many(corpus.items())
    return ws


def run_collection(
    name: str,
    embedder: CachedEmbedder,
    *,
    sweep: bool,
    hybrids: list[str] | None = None,
    modes: tuple[str, ...] = ("bm25", "vector", "hybrid"),
) -> dict[str, Any]:
    _, queries, qrels = load(name)
    rows: dict[str, Any] = {}
    rows["raw bm25s k1 1.2 b 0.75"] = raw_bm25s(name, k1=1.2)
    rows["raw bm25s k1 1.5 b 0.75"] = raw_bm25s(name, k1=1.5)
    if "bm25" in modes:
        for rule in QUERY_TF_RULES:
            ws = build(name, None, bm25_config=BM25Config(query_tf=rule))
            rows[f"bm25 query_tf={rule}"] = measure(ws, queries, qrels, mode="bm25")
    if "vector" not in modes and "hybrid" not in modes:
        return rows
    ws = build(name, embedder)
    if "vector" in modes:
        rows["vector"] = measure(ws, queries, qrels, mode="vector")
    if "hybrid" not in modes:
        return rows
    weights = [0.3, 0.4, 0.5, 0.6, 0.7] if sweep else [0.5]
    pairs = [(f, w) for f in FUSION_RULES for w in weights]
    if hybrids:
        pairs = [(h.split(":")[0], float(h.split(":")[1])) for h in hybrids]
    for fusion, weight in pairs:
        ws.fusion = fusion
        rows[f"hybrid {fusion} w={weight}"] = measure(
            ws, queries, qrels, mode="hybrid", vector_weight=weight
        )
    return rows


def prior_check(name: str, embedder: CachedEmbedder) -> dict[str, Any]:
    """The default modes with the ranking prior (``core/ranking/content_kinds.py``) off and on."""
    _, queries, qrels = load(name)
    ws = build(name, embedder)
    kinds: dict[str, int] = {}
    for source_id in ws.source_ids():
        chunks = ws.chunks_of(source_id)
        kind = str(chunks[0].metadata.get(KIND_KEY)) if chunks else "(empty)"
        kinds[kind] = kinds.get(kind, 0) + 1
    rows: dict[str, Any] = {"kinds": kinds}
    for mode in ("bm25", "vector", "hybrid"):
        for prior in (False, True):
            ws.ranking_prior = prior
            rows[f"{mode} prior {'on' if prior else 'off'}"] = measure(
                ws, queries, qrels, mode=mode
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", nargs="*", default=COLLECTIONS, choices=list(FOLDERS))
    parser.add_argument("--sweep", action="store_true", help="hybrid at vector weights 0.3-0.7")
    parser.add_argument(
        "--hybrid", nargs="*", help="only these hybrid settings, as rule:weight (zscore:0.5)"
    )
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    parser.add_argument(
        "--modes",
        nargs="*",
        default=["bm25", "vector", "hybrid"],
        choices=["bm25", "vector", "hybrid"],
        help="only these modes (bm25 alone loads no model); raw bm25s always runs",
    )
    parser.add_argument(
        "--prior", action="store_true", help="only the default modes, ranking prior off and on"
    )
    args = parser.parse_args()
    embedder = default_cached_embedder()
    results: dict[str, Any] = {}
    if args.prior:
        for name in args.collections:
            results[name] = rows = prior_check(name, embedder)
            print(f"\n== {name}: kinds {rows.pop('kinds')}")
            for system, row in rows.items():
                print(f"{system:34} {row['ndcg10']:8.4f} {row['recall100']:7.4f}", flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
        return
    for name in args.collections:
        start = time.perf_counter()
        results[name] = run_collection(
            name, embedder, sweep=args.sweep, hybrids=args.hybrid, modes=tuple(args.modes)
        )
        published = RAW_BM25S_PUBLISHED.get(name)
        print(f"\n== {name} ({time.perf_counter() - start:.0f} s; bm25s published {published})")
        print(f"{'system':34} {'nDCG@10':>8} {'R@100':>7}")
        for system, row in results[name].items():
            print(f"{system:34} {row['ndcg10']:8.4f} {row['recall100']:7.4f}")
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    print(f"\nembedding cache misses this run: {embedder.misses}")


if __name__ == "__main__":
    main()
