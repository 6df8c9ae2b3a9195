"""Docs search benchmark on the Mastra documentation (430 .mdx pages).

Prints the index build time, p50/p95 query latency, and for twenty hand-written queries (what a
user would type, typos and unfinished words included) whether the expected page is in the top 3
(distinct pages), with its rank and the mean reciprocal rank. The same queries also run with
prefix/typo expansion switched off, to show what expansion adds.

    .venv/bin/python tests/benchmarks/docs_mastra.py [--root DIR] [--repeat N] [--peer DIR]

Then the 71 written questions of ``_mastra_questions.py`` (TUNE half looked at while choosing the
page-type prior, HELD_OUT half only reported) and the twenty queries above, with the page-type
prior (``core/docs/page_types.py``) off and on: success@1, success@3 and MRR@10 over distinct pages.

``--peer DIR`` also runs the peer: MiniSearch (the engine behind lightweight docs servers such as
Mastra's) configured as the reference server describes it (boosts title 5, description 3,
heading 2, content 1; prefix search; one edit for tokens of 5+ characters), fed the very same
sections, in Node. DIR is a folder where ``npm install minisearch@7.2.0`` was run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _mastra_questions import HELD_OUT, TUNE, Question

from workspace_tools.core.docs.expand import ExpansionConfig
from workspace_tools.core.docs.index import DocsIndex, PagePrior

DEFAULT_ROOT = Path(
    os.environ.get("WORKSPACE_TOOLS_SHARED", Path(__file__).resolve().parents[2].parent / "shared"),
    "benchmarks/mastra-docs/en",
)

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


def first_hits(index: DocsIndex, questions: list[Question]) -> tuple[int, int, float]:
    """Success@1, success@3 (counts) and MRR@10 over distinct pages."""
    ranks_found = []
    for query, answers in questions:
        pages = [hit.path for hit in index.search(query, top_k=10, max_per_page=1)]
        ranks_found.append(next((i + 1 for i, p in enumerate(pages) if p in answers), 0))
    mrr = sum(1 / r for r in ranks_found if r) / len(ranks_found)
    return sum(r == 1 for r in ranks_found), sum(0 < r <= 3 for r in ranks_found), mrr


def report_page_prior(root: Path) -> None:
    """The written questions and the twenty queries, page-type prior off and on."""
    older = [(query, (expected,)) for query, expected, _ in QUERIES]
    for label, prior in (("off", PagePrior(guide=1.0, match=1.0)), ("on ", PagePrior())):
        index = DocsIndex(root, page_prior=prior)
        for name, group in (("tune", TUNE), ("held-out", HELD_OUT), ("queries", older)):
            s1, s3, mrr = first_hits(index, group)
            n = len(group)
            print(f"page prior {label} {name:9} S@1 {s1:2}/{n}  S@3 {s3:2}/{n}  MRR@10 {mrr:.3f}")


def show(label: str, found: list[int]) -> None:
    """Print the hit count and the mean reciprocal rank at 3."""
    mrr = sum(1 / r for r in found if r) / len(found)
    print(f"{label}: {sum(r > 0 for r in found)}/{len(found)} in top 3, MRR@3 {mrr:.3f}")


PEER_SCRIPT = r"""
const fs = require("fs");
const MiniSearch = require("minisearch");
const data = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const fields = ["pageTitle", "pageDescription", "sectionHeading", "content"];
let t0 = process.hrtime.bigint();
const ms = new MiniSearch({ fields, storeFields: ["path"] });
ms.addAll(data.sections);
const build = Number(process.hrtime.bigint() - t0) / 1e9;
const options = {
  boost: { pageTitle: 5, pageDescription: 3, sectionHeading: 2, content: 1 },
  prefix: true,
  fuzzy: (term) => (term.length >= 5 ? 1 : 0),
};
const top = (q) => {
  const pages = [];
  for (const r of ms.search(q, options)) {
    if (!pages.includes(r.path)) pages.push(r.path);
    if (pages.length === 3) break;
  }
  return pages;
};
const lat = [];
for (let i = 0; i < data.repeat; i++) for (const q of data.queries) {
  t0 = process.hrtime.bigint(); ms.search(q, options);
  lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
lat.sort((a, b) => a - b);
console.log(JSON.stringify({
  build, p50: lat[Math.floor(lat.length / 2)], p95: lat[Math.floor(lat.length * 0.95)],
  tops: data.queries.map(top),
}));
"""


def run_peer(index: DocsIndex, peer_dir: Path, repeat: int) -> None:
    """Run the MiniSearch peer on the sections of ``index`` and print its figures."""
    snap = index._snap()  # the benchmark feeds the peer exactly our parsed sections
    sections = [
        {
            "id": i,
            "path": snap.pages[s.page].path,
            "pageTitle": snap.pages[s.page].title,
            "pageDescription": snap.pages[s.page].description,
            "sectionHeading": s.heading,
            "content": s.text,
        }
        for i, s in enumerate(snap.sections)
    ]
    queries = [q for q, _, _ in QUERIES + PROBES]
    with tempfile.TemporaryDirectory() as tmp:
        data, script = Path(tmp) / "data.json", peer_dir / "_docs_peer.js"
        data.write_text(json.dumps({"sections": sections, "queries": queries, "repeat": repeat}))
        script.write_text(PEER_SCRIPT)
        try:
            out = subprocess.run(
                ["node", str(script), str(data)], check=True, capture_output=True, text=True
            ).stdout
        finally:
            script.unlink()
    result = json.loads(out)
    print(
        f"peer MiniSearch 7.2.0: build {result['build']:.3f} s, query p50 "
        f"{result['p50']:.2f} ms, p95 {result['p95']:.2f} ms"
    )
    for label, group, offset in (("queries", QUERIES, 0), ("probes", PROBES, len(QUERIES))):
        found = []
        for i, (query, expected, _) in enumerate(group):
            pages = result["tops"][offset + i]
            rank = pages.index(expected) + 1 if expected in pages else 0
            found.append(rank)
            if not rank:
                print(f"  peer MISS {query!r} -> {expected}; got {pages}")
        show(f"peer {label:<21}", found)


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="docs folder")
    parser.add_argument("--repeat", type=int, default=20, help="passes over the queries")
    parser.add_argument("--peer", type=Path, help="folder with node_modules/minisearch")
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
    report_page_prior(args.root)
    if args.peer:
        run_peer(index, args.peer, args.repeat)


if __name__ == "__main__":
    main()
