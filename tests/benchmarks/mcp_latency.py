"""Hybrid ``workspace_search`` through a warm MCP server vs the CLI's per-call cost, one run.

SciFact's 5,183 abstracts are written as files and indexed once with the packaged model (kept in
``--workdir`` for later runs). Then, in the same run, for the same distinct queries (the warm-up
uses other queries):

* in-process ``Workspace.search`` (hybrid, top 10): the floor;
* the ``workspace_search`` LangChain tool in process (``tool.invoke`` of a tool call): the
  floor plus what every caller of the tool pays (snippets and line ranges of the ten hits, the
  text rendering, LangChain's argument handling);
* ``workspace_search`` through a warm ``workspace-tools mcp --read-only`` server over stdio,
  driven by the ``mcp`` SDK's ``ClientSession`` (which checks ``structuredContent`` against the
  tool's ``outputSchema`` on every call); with ``--http``, also over streamable HTTP;
* ``workspace-tools search --mode hybrid --no-sync``: a new process per query, as a shell user
  or an agent calling the CLI pays it (import, model and index load, search).

The MCP rows minus the in-process tool row is the protocol's own cost.

Usage: ``python tests/benchmarks/mcp_latency.py [--queries 100] [--cli-queries 5] [--http]``.
The machine is shared: compare the rows of one run, and repeat; the load average is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scifact import SCIFACT, load_scifact

from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.workspace import WorkspaceSearchTool

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


SERVE = [
    sys.executable,
    "-m",
    "workspace_tools.cli",
    "--root",
    "{root}",
    "-q",
    "mcp",
    "--read-only",
]


async def _timed_calls(
    session: ClientSession, queries: list[str], warm_up: list[str]
) -> list[float]:
    for query in warm_up:
        await session.call_tool("workspace_search", {"query": query, "mode": "hybrid"})
    times = []
    for query in queries:
        t = time.perf_counter()
        result = await session.call_tool(
            "workspace_search", {"query": query, "mode": "hybrid", "top_k": 10}
        )
        times.append((time.perf_counter() - t) * 1000)
        assert not result.isError, result.content
    return times


async def through_stdio(
    root: Path, queries: list[str], warm_up: list[str]
) -> tuple[list[float], float]:
    command, *args = [a.format(root=root) for a in SERVE]
    params = StdioServerParameters(command=command, args=args, env=ENV)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        start_up = time.perf_counter() - started
        times = await _timed_calls(session, queries, warm_up)
    return times, start_up


@contextlib.asynccontextmanager
async def http_server(root: Path) -> AsyncIterator[tuple[str, float]]:
    """A ``--http`` server on a free loopback port (stopped by its handle); URL, start-up s."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [a.format(root=root) for a in SERVE] + ["--http", f"127.0.0.1:{port}"]
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the HTTP server exited with {process.returncode}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", time.perf_counter() - started
    finally:
        process.terminate()
        process.wait(timeout=30)


async def through_http(
    root: Path, queries: list[str], warm_up: list[str]
) -> tuple[list[float], float]:
    async with (
        http_server(root) as (url, start_up),
        streamable_http_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        times = await _timed_calls(session, queries, warm_up)
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


def in_process(call: Any, queries: list[str], warm_up: list[str]) -> list[float]:
    for query in warm_up:
        call(query)
    times = []
    for query in queries:
        t = time.perf_counter()
        call(query)
        times.append((time.perf_counter() - t) * 1000)
    return times


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/workspace-tools-mcp-bench"))
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--cli-queries", type=int, default=5)
    parser.add_argument("--http", action="store_true", help="also time streamable HTTP")
    parser.add_argument("--scifact", type=Path, default=SCIFACT, help="the SciFact folder")
    args = parser.parse_args()
    root = prepare(args.workdir, args.scifact)
    _, queries, _ = load_scifact(args.scifact)
    every = list(queries.values())
    texts, warm_up = every[: args.queries], every[args.queries :][:5]
    assert len(set(texts)) == len(texts) and not set(texts) & set(warm_up), "distinct queries"
    print(f"load average at start: {load()}")

    ws = Workspace(root, read_only=True)
    ws.embedder.load()  # type: ignore[union-attr]
    tool = WorkspaceSearchTool(workspace=ws)
    local = in_process(lambda q: ws.search(q, top_k=10, mode="hybrid"), texts, warm_up)
    call = {"type": "tool_call", "name": tool.name, "id": "1"}
    args_of = {"mode": "hybrid", "top_k": 10}
    local_tool = in_process(
        lambda q: tool.invoke({**call, "args": {**args_of, "query": q}}), texts, warm_up
    )

    rows = [
        ("MCP workspace_search (warm, stdio)", *asyncio.run(through_stdio(root, texts, warm_up)))
    ]
    if args.http:
        rows.append(("MCP workspace_search (warm, streamable HTTP)", *asyncio.run(through_http(root, texts, warm_up))))  # fmt: skip
    cli_walls, cli_cpus = through_cli(root, texts[: args.cli_queries])

    print(f"SciFact: {len(ws.source_ids())} documents, {len(ws)} chunks; {len(texts)} queries")
    print("| path | p50 ms | p90 ms | per-call CPU ms |")
    print("|---|---|---|---|")
    print(f"| in-process Workspace.search | {pct(local, 0.5):.1f} | {pct(local, 0.9):.1f} | - |")
    print(f"| in-process workspace_search tool | {pct(local_tool, .5):.1f} | "
          f"{pct(local_tool, .9):.1f} | - |")  # fmt: skip
    for label, times, _ in rows:
        print(f"| {label} | {pct(times, 0.5):.1f} | {pct(times, 0.9):.1f} | - |")
    print(f"| CLI `workspace-tools search` (new process) | {statistics.median(cli_walls):.0f} | "
          f"{max(cli_walls):.0f} | {statistics.median(cli_cpus):.0f} |")  # fmt: skip
    for label, times, start_up in rows:
        print(f"{label}: start-up (ready) {start_up:.1f} s; p50 over in-process search "
              f"+{pct(times, .5) - pct(local, .5):.1f} ms, over the in-process tool "
              f"+{pct(times, .5) - pct(local_tool, .5):.1f} ms; CLI / MCP p50 "
              f"{statistics.median(cli_walls) / pct(times, .5):.0f}x")  # fmt: skip
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
