"""Hybrid docs search on the Mastra docs: lexical against lexical + vectors over sections.

    .venv/bin/python tests/benchmarks/docs_hybrid.py [--root DIR] [--grid]

Builds one :class:`DocsIndex` with the packaged embedding model (all-MiniLM-L6-v2, OpenVINO int8
where available) and reports success@1, success@3 (distinct pages) and MRR@10 for the written
questions of ``_mastra_questions.py`` (TUNE and HELD_OUT halves) and the twenty keyword queries of
``docs_mastra.py``, lexical and hybrid. ``--grid`` also sweeps vector weight and fusion rule, on
the TUNE half and the keyword queries only (the held-out half is never part of a choice).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _mastra_questions import HELD_OUT, TUNE, Question
from docs_mastra import DEFAULT_ROOT, QUERIES

from workspace_tools.core.docs.index import DocsIndex, HybridConfig
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder

KEYWORDS: list[Question] = [(query, (expected,)) for query, expected, _ in QUERIES]


def scores(index: DocsIndex, questions: list[Question], mode: str) -> tuple[int, int, float]:
    """Success@1, success@3 and MRR@10 over distinct pages."""
    found = []
    for query, answers in questions:
        hits = index.search(query, top_k=10, max_per_page=1, mode=mode)  # type: ignore[arg-type]
        pages = [hit.path for hit in hits]
        found.append(next((i + 1 for i, p in enumerate(pages) if p in answers), 0))
    mrr = sum(1 / r for r in found if r) / len(found)
    return sum(r == 1 for r in found), sum(0 < r <= 3 for r in found), mrr


def report(index: DocsIndex, label: str, mode: str, *, held_out: bool) -> None:
    """Print one row per question set."""
    groups = [("tune", TUNE), ("keywords", KEYWORDS)]
    if held_out:
        groups.append(("held-out", HELD_OUT))
    for name, group in groups:
        s1, s3, mrr = scores(index, group, mode)
        n = len(group)
        print(f"{label:28} {name:9} S@1 {s1:2}/{n}  S@3 {s3:2}/{n}  MRR@10 {mrr:.3f}")


def main() -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="docs folder")
    parser.add_argument("--grid", action="store_true", help="sweep weight and rule (tune only)")
    args = parser.parse_args()
    embedder = SentenceTransformerEmbedder()  # the packaged model (the workspace default)
    started = time.perf_counter()
    index = DocsIndex(args.root, embedder=embedder, vector_cache=True)
    stats = index.stats
    print(
        f"{stats.pages} pages, {stats.sections} sections embedded in "
        f"{time.perf_counter() - started:.1f} s ({embedder.backend}, {embedder.precision})"
    )
    if args.grid:
        for rule in ("zscore", "rrf", "weighted", "minmax", "spread"):
            for weight in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
                index.hybrid = HybridConfig(fusion=rule, vector_weight=weight)
                report(index, f"hybrid {rule} w={weight}", "hybrid", held_out=False)
        index.hybrid = HybridConfig()
    report(index, "lexical", "lexical", held_out=True)
    cfg = index.hybrid
    report(index, f"hybrid {cfg.fusion} w={cfg.vector_weight}", "hybrid", held_out=True)
    latencies = []
    for query, _ in TUNE:
        t0 = time.perf_counter()
        index.search(query, top_k=10)
        latencies.append(time.perf_counter() - t0)
    latencies.sort()
    print(f"hybrid query p50 {latencies[len(latencies) // 2] * 1000:.1f} ms over {len(TUNE)}")


if __name__ == "__main__":
    main()
