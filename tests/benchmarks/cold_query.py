"""The cost of one cold ``workspace-tools search`` (a new process per query), one run.

In the same run, round-robin so that load changes hit every row alike, ``--repeats`` times each:

* ``python -c "import torch, sentence_transformers"``: what a new process paid before the lean
  query path, for the import alone (the yardstick of the targets);
* ``workspace-tools -q search QUERY --mode hybrid`` on a small index (``--files`` Markdown files
  embedded with the packaged model): the query embedded on the lean path (OpenVINO and
  ``tokenizers``, no torch), FAISS, BM25, the freshness stat walk;
* the same with ``--mode bm25``.

Then the freshness stat walk alone (``pending_changes``) on a tree of ``--walk-files`` files with
nothing changed, against a no-change ``Workspace.sync()`` of the same tree.

Targets (issue 24): hybrid under a third of the import time, bm25 under 0.5 s. Wall time and CPU
time (user + system of the child) are both printed: the machine is shared, so wall time moves
with the load; compare the rows of one run, and repeat. The load average is printed.

Usage: ``python tests/benchmarks/cold_query.py [--repeats 7] [--files 25] [--walk-files 3000]
[--before FOLDER]`` (``--before``: also time an older checkout's CLI on the same index).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from workspace_tools.core.workspace import Workspace
from workspace_tools.core.workspace.freshness import pending_changes

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
CLI = [sys.executable, "-m", "workspace_tools.cli"]
TOPICS = ("incremental sync", "search modes", "embedding model", "skills", "the MCP server")


def write_tree(root: Path, count: int) -> None:
    """``count`` small Markdown pages with a few sections each."""
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        (root / f"page{i:05}.md").write_text(
            f"# Page {i}: {topic}\n\nThis page explains {topic} with example number {i}.\n\n"
            f"## Details\n\nMore about {topic}, widgets {i} and gadgets {i * 7}.\n",
            encoding="utf-8",
        )
    old = time.time() - 3600  # written an hour ago: mtimes the index trusts
    for path in root.iterdir():
        os.utime(path, (old, old))


def timed(command: list[str], *, source: str | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one child process.

    ``source``: a folder whose ``workspace_tools`` the child imports instead of this one.
    """
    env = ENV if source is None else {**ENV, "PYTHONPATH": source}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=source, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def median(values: list[float]) -> float:
    return statistics.median(values)


def cold_rows(
    root: Path, repeats: int, before: str | None
) -> dict[str, tuple[list[float], list[float]]]:
    commands = {
        "import torch, sentence_transformers": [
            sys.executable,
            "-c",
            "import torch, sentence_transformers",
        ],
        "search --mode hybrid (cold)": [*CLI, "--root", str(root), "-q", "search"],
        "search --mode bm25 (cold)": [*CLI, "--root", str(root), "-q", "search"],
    }
    if before is not None:
        old = [*CLI, "--root", str(root), "-q", "search", "--no-sync"]
        commands["before: search --mode hybrid (cold)"] = old
        commands["before: search --mode bm25 (cold)"] = old
    rows: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in commands}
    for repeat in range(repeats):
        for name, command in commands.items():
            if "search" in name:
                mode = "hybrid" if "hybrid" in name else "bm25"
                command = [*command, TOPICS[repeat % len(TOPICS)], "--mode", mode, "-k", "5"]
            wall, cpu = timed(command, source=before if name.startswith("before") else None)
            rows[name][0].append(wall)
            rows[name][1].append(cpu)
    return rows


def walk_rows(root: Path, repeats: int) -> tuple[list[float], list[float]]:
    ws = Workspace(root, embedder=None)
    ws.sync()
    walks, syncs = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        pending = pending_changes(ws)
        walks.append(time.perf_counter() - started)
        assert pending.count == 0 and not pending.touched, pending.summary()
        started = time.perf_counter()
        report = ws.sync()
        syncs.append(time.perf_counter() - started)
        assert not report.changed
    return walks, syncs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--files", type=int, default=25, help="files of the searched index")
    parser.add_argument("--walk-files", type=int, default=3000, help="files of the walked tree")
    parser.add_argument(
        "--before",
        metavar="FOLDER",
        help="also time the searches with the workspace_tools package in FOLDER (an older "
        "checkout, e.g. `git archive COMMIT workspace_tools | tar -x -C FOLDER`)",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="cold-query-"))
    try:
        load_before = os.getloadavg()
        small = workdir / "small"
        write_tree(small, args.files)
        started = time.perf_counter()
        subprocess.run([*CLI, "--root", str(small), "-q", "index"], env=ENV, check=True)
        print(
            f"indexed {args.files} files with the default model in {time.perf_counter() - started:.1f} s"
        )
        timed([*CLI, "--root", str(small), "-q", "search", "warm the page cache"])
        rows = cold_rows(small, args.repeats, args.before)
        big = workdir / "walk"
        write_tree(big, args.walk_files)
        walks, syncs = walk_rows(big, args.repeats)
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    print(
        f"\nload average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at the end "
        f"({os.cpu_count()} cores); medians of {args.repeats} runs\n"
    )
    print(f"| {'cold process':38} | wall s | CPU s |")
    print(f"|{'-' * 40}|-------:|------:|")
    for name, (wall, cpu) in rows.items():
        print(f"| {name:38} | {median(wall):6.2f} | {median(cpu):5.2f} |")
    base_wall, base_cpu = (median(v) for v in rows["import torch, sentence_transformers"])
    for name in (n for n in rows if "search" in n):
        wall, cpu = (median(v) for v in rows[name])
        print(
            f"{name}: {wall / base_wall:.2f} of the import's wall time, {cpu / base_cpu:.2f} of its CPU time"
        )
    print(
        f"\nstat walk, {args.walk_files} files, nothing changed: {median(walks) * 1000:.0f} ms "
        f"(no-change sync() {median(syncs) * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    main()
