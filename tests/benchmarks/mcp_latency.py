"""Hybrid ``workspace_search`` through a warm MCP server vs the CLI's per-call cost, one run.

SciFact's 5,183 abstracts are written as files and indexed once with the packaged model (kept in
``--workdir`` for later runs). Then, in the same run:

* in-process ``Workspace.search`` (hybrid, top 10): the floor;
* ``workspace_search`` through a warm ``workspace-tools mcp --read-only`` server over stdio,
  driven by the ``mcp`` SDK's ``ClientSession`` (model and indexes loaded once at start-up);
* ``workspace-tools search --mode hybrid --no-sync``: a new process per query, as a shell user
  or an agent calling the CLI pays it (import, model and index load, search).

Usage: ``python tests/benchmarks/mcp_latency.py [--queries 100] [--cli-queries 5]``.
The machine is shared: compare the rows of one run, and repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scifact import SCIFACT, load_scifact

from workspace_tools.core.workspace import Workspace

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def prepare(workdir: Path, scifact: Path) -> Path:
    root = workdir / "scifact"
    corpus, _, _ = load_scifact(scifact)
    done = workdir / "indexed"
    if not done.exists():
        root.mkdir(parents=True, exist_ok=True)
        for doc_id, text in corpus.items():
            (root / f"{doc_id}.txt").write_text(text, encoding="utf-8")
        started = time.perf_counter()
        ws = Workspace(root, show_progress=True)
        report = ws.sync()
        print(f"indexed {report.summary()} in {time.perf_counter() - started:.0f} s")
        done.write_text("ok\n", encoding="utf-8")
    return root


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def through_mcp(root: Path, queries: list[str]) -> tuple[list[float], float]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workspace_tools.cli", "--root", str(root), "-q", "mcp", "--read-only"],
        env=ENV,
    )
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        start_up = time.perf_counter() - started
        for query in queries[:5]:  # warm-up
            await session.call_tool("workspace_search", {"query": query, "mode": "hybrid"})
        times = []
        for query in queries:
            t = time.perf_counter()
            result = await session.call_tool(
                "workspace_search", {"query": query, "mode": "hybrid", "top_k": 10}
            )
            times.append((time.perf_counter() - t) * 1000)
            assert not result.isError, result.content
    return times, start_up


def through_cli(root: Path, queries: list[str]) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for query in queries:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "workspace_tools.cli", "--root", str(root), "-q", "search",
             query, "--mode", "hybrid", "--no-sync", "-k", "10"],
            env=ENV, check=True, capture_output=True,
        )  # fmt: skip
        walls.append((time.perf_counter() - t) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/workspace-tools-mcp-bench"))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cli-queries", type=int, default=5)
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="the SciFact folder")
    args = parser.parse_args()
    root = prepare(args.workdir, args.scifact)
    _, queries, _ = load_scifact(args.scifact)
    texts = list(queries.values())[: args.queries]

    ws = Workspace(root, read_only=True)
    ws.embedder.load()  # type: ignore[union-attr]
    for query in texts[:5]:
        ws.search(query, top_k=10, mode="hybrid")
    local = []
    for query in texts:
        t = time.perf_counter()
        ws.search(query, top_k=10, mode="hybrid")
        local.append((time.perf_counter() - t) * 1000)

    mcp_times, start_up = asyncio.run(through_mcp(root, texts))
    cli_walls, cli_cpus = through_cli(root, texts[: args.cli_queries])

    print(f"SciFact: {len(ws.source_ids())} documents, {len(ws)} chunks; {len(texts)} queries")
    print("| path | p50 ms | p90 ms | per-call CPU ms |")
    print("|---|---|---|---|")
    print(f"| in-process Workspace.search | {pct(local, 0.5):.1f} | {pct(local, 0.9):.1f} | - |")
    print(f"| MCP workspace_search (warm, stdio) | {pct(mcp_times, .5):.1f} | "
          f"{pct(mcp_times, .9):.1f} | - |")  # fmt: skip
    print(f"| CLI `workspace-tools search` (new process) | {statistics.median(cli_walls):.0f} | "
          f"{max(cli_walls):.0f} | {statistics.median(cli_cpus):.0f} |")  # fmt: skip
    print(f"MCP server start-up (initialize answered): {start_up:.1f} s")
    ratio = statistics.median(cli_walls) / pct(mcp_times, 0.5)
    print(f"CLI / MCP p50: {ratio:.0f}x; MCP overhead over in-process: "
          f"{pct(mcp_times, .5) - pct(local, .5):.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
