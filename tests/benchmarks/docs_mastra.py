"""Docs search benchmark on the Mastra documentation (430 .mdx pages).

Prints the index build time, p50/p95 query latency, and for twenty hand-written queries (what a
user would type, typos and unfinished words included) whether the expected page is in the top 3
(distinct pages), with its rank and the mean reciprocal rank. The same queries also run with
prefix/typo expansion switched off, to show what expansion adds.

    .venv/bin/python tests/benchmarks/docs_mastra.py [--root DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from workspace_tools.core.docs import DocsIndex
from workspace_tools.core.expand import ExpansionConfig

DEFAULT_ROOT = Path(__file__).resolve().parents[2].parent / "shared/benchmarks/mastra-docs/en"

# (query as a user would type it, the page that answers it, what the query exercises)
QUERIES: list[tuple[str, str, str]] = [
    ("deploy to vercel", "docs/deployment/serverless-platforms/vercel-deployer.mdx", "plain"),
    ("add memory to an agent", "docs/agents/agent-memory.mdx", "plain"),
    ("semantic recal", "docs/memory/semantic-recall.mdx", "unfinished word"),
    ("working memmory", "docs/memory/working-memory.mdx", "typo"),
    ("suspend and resume a workflow", "docs/workflows/suspend-and-resume.mdx", "plain"),
    ("createTool", "reference/tools/create-tool.mdx", "identifier"),
    ("jwt authentication", "docs/auth/jwt.mdx", "plain"),
    ("chunking and embeding documents", "docs/rag/chunking-and-embedding.mdx", "typo"),
    ("pgvector store", "reference/rag/pg.mdx", "plain"),
    ("text to speech", "docs/voice/text-to-speech.mdx", "plain"),
    ("install mastra", "docs/getting-started/installation.mdx", "plain"),
    ("langfuse obsevability", "reference/observability/providers/langfuse.mdx", "typo"),
    ("cloudflare deploy", "docs/deployment/serverless-platforms/cloudflare-deployer.mdx", "stem"),
    ("next.js", "docs/frameworks/web-frameworks/next-js.mdx", "identifier"),
    ("custom api routes", "docs/server-db/custom-api-routes.mdx", "plain"),
    ("stream tool output", "docs/streaming/tool-streaming.mdx", "plain"),
    ("hallucination scorer", "reference/scorers/hallucination.mdx", "plain"),
    ("dynamic agnets runtime context", "docs/agents/dynamic-agents.mdx", "typo"),
    ("run evals in CI", "docs/evals/running-in-ci.mdx", "plain"),
    ("inngest workfl", "docs/workflows/inngest-workflow.mdx", "unfinished word"),
]

# One distinctive word, mistyped or unfinished: here only expansion can find the page.
PROBES: list[tuple[str, str, str]] = [
    ("langfsue", "reference/observability/providers/langfuse.mdx", "typo"),
    ("qdrnt", "reference/rag/qdrant.mdx", "typo"),
    ("couchbse", "reference/rag/couchbase.mdx", "typo"),
    ("inngst", "docs/workflows/inngest-workflow.mdx", "typo"),
    ("pinecon", "reference/rag/pinecone.mdx", "unfinished word"),
    ("turbopuf", "reference/rag/turbopuffer.mdx", "unfinished word"),
]


def top_pages(index: DocsIndex, query: str, k: int = 3) -> list[str]:
    """The ``k`` best distinct pages for ``query``."""
    return [hit.path for hit in index.search(query, top_k=k, max_per_page=1)]


def ranks(index: DocsIndex, queries: list[tuple[str, str, str]] = QUERIES) -> list[int]:
    """Rank (1-3) of each query's expected page among the top 3 distinct pages, 0 if absent."""
    out = []
    for query, expected, _ in queries:
        pages = top_pages(index, query)
        out.append(pages.index(expected) + 1 if expected in pages else 0)
    return out


def show(label: str, found: list[int]) -> None:
    """Print the hit count and the mean reciprocal rank at 3."""
    mrr = sum(1 / r for r in found if r) / len(found)
    print(f"{label}: {sum(r > 0 for r in found)}/{len(found)} in top 3, MRR@3 {mrr:.3f}")


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="docs folder")
    parser.add_argument("--repeat", type=int, default=20, help="passes over the queries")
    args = parser.parse_args()

    started = time.perf_counter()
    index = DocsIndex(args.root)
    first_build = time.perf_counter() - started
    rebuilds = [index.refresh().seconds for _ in range(3)]
    stats = index.stats
    print(f"root: {args.root}")
    print(f"pages: {stats.pages}, sections: {stats.sections}")
    print(
        f"build: first {first_build:.3f} s (includes imports), rebuild median "
        f"{statistics.median(rebuilds):.3f} s"
    )

    latencies: list[float] = []
    for _ in range(args.repeat):
        for query, _, _ in QUERIES:
            t0 = time.perf_counter()
            index.search(query, top_k=10)
            latencies.append(time.perf_counter() - t0)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p95 = latencies[int(len(latencies) * 0.95)] * 1000
    print(
        f"query latency over {len(latencies)} searches (top_k=10): p50 {p50:.2f} ms, "
        f"p95 {p95:.2f} ms"
    )

    plain = DocsIndex(args.root, expansion=ExpansionConfig(prefix=False, typo=False))
    full, without = ranks(index), ranks(plain)
    print("queries: rank of the expected page among the top 3 pages (no expansion in brackets)")
    for (query, expected, kind), rank, rank_plain in zip(QUERIES, full, without, strict=True):
        mark = f"top{rank}" if rank else "MISS"
        other = f"top{rank_plain}" if rank_plain else "MISS"
        print(f"  {mark:>4} [{other:>4}] {query!r} ({kind}) -> {expected}")
        if not rank:
            for page in top_pages(index, query):
                print(f"              got {page}")
    show("with prefix/typo expansion", full)
    show("without expansion         ", without)
    print("single-word probes (no expansion in brackets):")
    full, without = ranks(index, PROBES), ranks(plain, PROBES)
    for (query, expected, kind), rank, rank_plain in zip(PROBES, full, without, strict=True):
        mark = f"top{rank}" if rank else "MISS"
        other = f"top{rank_plain}" if rank_plain else "MISS"
        print(f"  {mark:>4} [{other:>4}] {query!r} ({kind}) -> {expected}")
    show("probes with expansion     ", full)
    show("probes without expansion  ", without)


if __name__ == "__main__":
    main()
