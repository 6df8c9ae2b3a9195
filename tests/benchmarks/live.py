"""A live workspace, measured in one run: start-up, edit-to-visible, bursts, cold CLI searches.

Rows (all through the real ``workspace-tools`` command and the official ``mcp`` client):

* time to ``initialize`` of ``workspace-tools mcp`` on a never-indexed tree of 100 / 1,000 /
  10,000 Markdown files (spawn -> initialize answered; the first sync then runs behind it), and
  ``tools/list`` right after;
* edit-to-visible latency of a watching server: a file is written with a new word, then
  ``workspace_search`` (bm25) is polled every 10 ms until it finds it; p50/p95 while the server
  is idle and while another client task keeps it answering hybrid searches;
* the floor of the first row: a new process importing the MCP SDK's server modules;
* the cost of a 2,000-file burst written into the watched tree: wall time until every file is
  searchable, and the syncs and commits the watcher made (``workspace_status``);
* a cold CLI search (new process: import, open, search) in hybrid and bm25 mode, against the time
  a new process takes to ``import torch, sentence_transformers``.

Usage: ``python tests/benchmarks/live.py [--samples 20] [--embedder default|none]
[--workdir DIR]``. The machine is shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]


def make_tree(root: Path, files: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for number in range(files):
        folder = root / f"d{number // 500:03}"
        folder.mkdir(exist_ok=True)
        words = " ".join(WORDS[(number + i) % len(WORDS)] for i in range(40))
        (folder / f"n{number:05}.md").write_text(
            f"# Note {number}\n\n{words}\n\nterm{number} closes note {number}.\n", "utf-8"
        )
    return root


def cli(root: Path, embedder: str, *args: str) -> list[str]:
    base = [sys.executable, "-m", "workspace_tools.cli", "--root", str(root)]
    return [*base, "--embedder", embedder, *args]


@contextlib.asynccontextmanager
async def server(root: Path, embedder: str) -> AsyncIterator[ClientSession]:
    argv = cli(root, embedder, "-q", "mcp")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    async with (
        stdio_client(params, errlog=subprocess.DEVNULL) as (read, write),  # type: ignore[arg-type]
        ClientSession(read, write) as session,
    ):
        yield session


async def status(session: ClientSession) -> dict[str, Any]:
    result = await session.call_tool("workspace_status", {})
    assert result.structuredContent is not None
    return result.structuredContent


async def found(session: ClientSession, word: str, mode: str = "bm25") -> bool:
    result = await session.call_tool("workspace_search", {"query": word, "mode": mode})
    data = result.structuredContent or {}
    return any(word in hit.get("snippet", "") for hit in data.get("results", []))


async def time_initialize(root: Path, embedder: str) -> tuple[float, float]:
    argv = cli(root, embedder, "-q", "mcp")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
    started = time.perf_counter()
    async with (
        stdio_client(params, errlog=subprocess.DEVNULL) as (read, write),  # type: ignore[arg-type]
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        init = time.perf_counter() - started
        await session.list_tools()
        listed = time.perf_counter() - started
    return init, listed


async def wait_idle(session: ClientSession, sources: int, timeout: float = 900.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        s = await status(session)
        if (
            s["index"]["sources"] >= sources
            and not s["indexing"]["running"]
            and s["watch"].get("syncs", 0) >= 1
        ):
            return
        if time.monotonic() > deadline:
            msg = f"server not idle after {timeout} s: {s}"
            raise TimeoutError(msg)
        await asyncio.sleep(0.2)


async def edit_latencies(session: ClientSession, root: Path, samples: int, tag: str) -> list[float]:
    out = []
    for number in range(samples):
        word = f"edit{tag}{number}z"
        path = root / f"edit-{tag}-{number}.md"
        started = time.perf_counter()
        path.write_text(f"# Edit\n\n{word}\n", "utf-8")
        while not await found(session, word):
            await asyncio.sleep(0.01)
        out.append(time.perf_counter() - started)
        await asyncio.sleep(0.3)
    return out


async def busy(session: ClientSession, stop: asyncio.Event, mode: str) -> int:
    count = 0
    while not stop.is_set():
        await session.call_tool(
            "workspace_search", {"query": WORDS[count % len(WORDS)], "mode": mode}
        )
        count += 1
    return count


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_cold(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--latency-files", type=int, default=300)
    parser.add_argument("--cold-repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="live-bench-"))
    print(f"# live.py, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"embedder {args.embedder}; load average {os.getloadavg()} on {os.cpu_count()} cores")

    print("\n## Time to initialize (never-indexed tree)\n")
    floor = run_cold([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], 3)
    print(f"(floor: a new process importing the MCP SDK's server takes {floor:.2f} s)\n")
    print("| files | initialize (s) | tools/list answered (s) |")
    print("|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        root = work / f"init-{size}"
        shutil.rmtree(root, ignore_errors=True)
        make_tree(root, size)
        init, listed = await time_initialize(root, args.embedder)
        print(f"| {size:,} | {init:.2f} | {listed:.2f} |", flush=True)
        shutil.rmtree(root, ignore_errors=True)

    root = work / "latency"
    shutil.rmtree(root, ignore_errors=True)
    make_tree(root, args.latency_files)
    subprocess.run(cli(root, args.embedder, "-q", "index"), check=True, capture_output=True)
    async with server(root, args.embedder) as session:
        await session.initialize()
        await wait_idle(session, args.latency_files)
        idle = await edit_latencies(session, root, args.samples, "idle")
        stop = asyncio.Event()
        mode = "bm25" if args.embedder == "none" else "hybrid"
        hammer = asyncio.create_task(busy(session, stop, mode))
        loaded = await edit_latencies(session, root, args.samples, "busy")
        stop.set()
        searches = await hammer
        print("\n## Edit-to-visible latency (watching server, bm25 poll every 10 ms)\n")
        print("| server | samples | p50 (s) | p95 (s) | max (s) |")
        print("|---|---:|---:|---:|---:|")
        for name, values in (
            ("idle", idle),
            (f"answering {mode} searches ({searches} during the run)", loaded),
        ):
            print(
                f"| {name} | {len(values)} | {pct(values, 0.5):.3f} | {pct(values, 0.95):.3f} "
                f"| {max(values):.3f} |"
            )
        before = await status(session)
        burst = root / "burst"
        burst.mkdir()
        started = time.perf_counter()
        for number in range(2000):
            (burst / f"b{number:04}.md").write_text(f"burst file b{number}x\n", "utf-8")
        written = time.perf_counter() - started
        total = before["index"]["sources"] + 2000
        await wait_idle(session, total)
        elapsed = time.perf_counter() - started
        after = await status(session)
        print("\n## A 2,000-file burst into the watched tree\n")
        print("| written in (s) | all searchable after (s) | syncs | commits |")
        print("|---:|---:|---:|---:|")
        print(
            f"| {written:.2f} | {elapsed:.2f} | "
            f"{after['watch']['syncs'] - before['watch']['syncs']} | "
            f"{after['watch']['commits'] - before['watch']['commits']} |"
        )

    print("\n## Cold CLI search (a new process per query) vs importing torch\n")
    print("| command | median of runs (s) |")
    print("|---|---:|")
    torch = run_cold([sys.executable, "-c", "import torch, sentence_transformers"], 3)
    print(f"| python -c 'import torch, sentence_transformers' | {torch:.2f} |")
    for mode in ("hybrid", "bm25"):
        if mode == "hybrid" and args.embedder == "none":
            continue
        argv = cli(root, args.embedder, "-q", "search", "charlie delta", "--mode", mode)
        cold = run_cold([*argv, "--no-sync"], args.cold_repeat)
        print(f"| workspace-tools search --mode {mode} --no-sync | {cold:.2f} |")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
