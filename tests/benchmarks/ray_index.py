"""Distributed indexing on a two-node Ray cluster on this machine against a local build.

Run: ``.venv/bin/python tests/benchmarks/ray_index.py [--docs 1200] [--repeats 2]
[--batch-sizes 64] [--json out.json]``

What it does, in one run:

1. Writes ``--docs`` SciFact abstracts as text files into a temporary tree.
2. Starts a two-node cluster here: ``ray start --head --num-cpus 1 --block`` and
   ``ray start --address HEAD --num-cpus 1 --block``, each in its own process group, with
   ``RAY_AUTH_MODE=token`` exported for both nodes and for this driver (Ray 2.60 turns token
   auth on; a node or driver without it fails with ``InvalidAuthToken``) and a private
   ``--temp-dir``, so no other program's ``ray.init()`` finds this cluster.
3. Alternates, ``--repeats`` times: a local single-process build (``Workspace.sync()``, the
   default model, torch's default 2 threads on the 2 cores) and ``index_on_ray`` on the cluster
   (2 actors of 1 CPU and 1 torch thread), each into a fresh index of the same tree.
4. Prints per-node task counts, docs/s per CPU of both (2 CPUs each, wall time), their ratio
   (target >= 0.8), the same per CPU-second actually used (the driver plus every process of
   both nodes, from ``/proc``: fairer when other jobs take CPU), the phases of the Ray run,
   and checks that both indexes are the same (chunk ids, vectors within 1e-5, top-10 rankings
   of 30 queries in each mode).
5. Stops the cluster by the process groups it started (never ``ray stop``, which kills every
   Ray process of the machine by name, other programs' included).

The machine is shared with other jobs: compare rows of one run, and repeat.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ["RAY_AUTH_MODE"] = "token"  # the driver, and the nodes it starts (inherited)
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from _testsets import load

from workspace_tools import Workspace
from workspace_tools.core.distributed import index_on_ray
from workspace_tools.core.embedding.embedder import SentenceTransformerEmbedder
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text.hashing import text_hash

RAY = Path(sys.executable).parent / "ray"
CPUS = 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def two_node_cluster() -> Iterator[str]:
    """A head and a worker node of one CPU each; yields the address; stops both by group."""
    temp = Path(tempfile.mkdtemp(prefix="rb", dir="/tmp"))  # short: Ray's socket paths
    port = free_port()
    address = f"127.0.0.1:{port}"
    common = ["--num-cpus", "1", "--block", "--disable-usage-stats"]
    head_cmd = [str(RAY), "start", "--head", "--port", str(port), "--temp-dir", str(temp)]
    head_cmd += ["--include-dashboard", "false", *common]
    nodes: list[subprocess.Popen[bytes]] = []
    head_log, worker_log = (temp.parent / f"{temp.name}-{n}.log" for n in ("head", "worker"))
    with head_log.open("wb") as head_out, worker_log.open("wb") as worker_out:
        try:
            nodes.append(
                subprocess.Popen(head_cmd, stdout=head_out, stderr=head_out, start_new_session=True)
            )
            wait_for_nodes(address, 1)
            worker_cmd = [str(RAY), "start", "--address", address, *common]
            nodes.append(
                subprocess.Popen(
                    worker_cmd, stdout=worker_out, stderr=worker_out, start_new_session=True
                )
            )
            wait_for_nodes(address, 2)
            GROUPS[:] = [node.pid for node in nodes]
            yield address
        finally:
            import ray

            if ray.is_initialized():
                ray.shutdown()
            for node in reversed(nodes):
                stop_group(node)
            shutil.rmtree(temp, ignore_errors=True)
    head_log.unlink(missing_ok=True)  # kept only when stopping the nodes failed
    worker_log.unlink(missing_ok=True)


def wait_for_nodes(address: str, count: int, timeout: float = 120.0) -> None:
    """Poll the cluster (in a child process, to keep this driver unconnected) for ``count`` nodes."""
    code = (
        "import ray, sys; ray.init(address=sys.argv[1], log_to_driver=False); "
        "print(sum(n['Alive'] for n in ray.nodes()))"
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(
            [sys.executable, "-c", code, address], capture_output=True, text=True, check=False
        )
        lines = out.stdout.strip().splitlines()
        if out.returncode == 0 and lines and int(lines[-1]) >= count:
            return
        time.sleep(2)
    msg = f"the cluster at {address} did not reach {count} nodes in {timeout:.0f}s"
    raise RuntimeError(msg)


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group this script created, then SIGKILL what is left of it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    time.sleep(2)  # gcs_server ignores SIGTERM: whatever of the group remains is killed
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


def make_tree(root: Path, texts: list[str]) -> None:
    for n, text in enumerate(texts):
        folder = root / f"part{n % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"doc{n:05}.txt").write_text(text, encoding="utf-8")


def snapshot(ws: Workspace) -> tuple[list[tuple[str, str]], dict[str, np.ndarray]]:
    rows = [(c.id, c.text) for sid in sorted(ws.source_ids()) for c in ws.chunks_of(sid)]
    vectors = IndexDatabase(ws.index_dir, read_only=True).vectors(text_hash(t) for _, t in rows)
    return rows, vectors


def compare(ray_ws: Workspace, local_ws: Workspace, queries: list[str]) -> dict[str, Any]:
    ray_rows, ray_vectors = snapshot(ray_ws)
    local_rows, local_vectors = snapshot(local_ws)
    diff = max(float(np.abs(ray_vectors[h] - v).max()) for h, v in local_vectors.items())
    same_rankings = all(
        [r.id for r in ray_ws.search(q, top_k=10, mode=mode)]
        == [r.id for r in local_ws.search(q, top_k=10, mode=mode)]
        for q in queries
        for mode in ("bm25", "vector", "hybrid")
    )
    return {
        "same_chunks": ray_rows == local_rows,
        "chunks": len(local_rows),
        "max_vector_diff": diff,
        "same_rankings": same_rankings,
    }


def cpu_seconds() -> float:
    """CPU seconds of this process (the driver) and its reaped children."""
    usage = os.times()
    return usage.user + usage.system + usage.children_user + usage.children_system


GROUPS: list[int] = []
"""Pids of the ``ray start --block`` processes this script started (filled by two_node_cluster)."""


def cluster_cpu_seconds() -> float:
    """CPU seconds of every process descending from the nodes this script started.

    Ray starts its workers from the raylet, in new process groups, so the tree (parent pids) is
    followed rather than the group; reaped children count through ``cutime``/``cstime``.
    """
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        times[pid] = sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    total = 0
    for pid, used in times.items():
        seen, current = 0, pid
        while current > 1 and seen < 64:
            if current in GROUPS:
                total += used
                break
            current, seen = parents.get(current, 0), seen + 1
    return total / tick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1200)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--batch-sizes", default="64", help="texts per actor call, comma-separated")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    corpus, queries, _ = load("scifact-test")
    texts = list(corpus.values())[: args.docs]
    query_list = list(queries.values())[:30]
    work = Path(tempfile.mkdtemp(prefix="ray-index-bench-"))
    root = work / "tree"
    make_tree(root, texts)
    batch_sizes = [int(b) for b in args.batch_sizes.split(",")]
    rows: list[dict[str, Any]] = []
    try:
        with two_node_cluster() as address:
            print(f"cluster: 2 nodes x 1 CPU at {address} (RAY_AUTH_MODE=token)")
            run = 0
            for repeat in range(args.repeats):
                run += 1
                local_dir = work / f"local-{run}"
                embedder = SentenceTransformerEmbedder()
                embedder.load()  # keep the one-off model load out of the local time
                local = Workspace(root, index_dir=local_dir, embedder=embedder, config=False)
                started, cpu = time.perf_counter(), cpu_seconds()
                report = local.sync()
                local_s, local_cpu = time.perf_counter() - started, cpu_seconds() - cpu
                row: dict[str, Any] = {
                    "repeat": repeat,
                    "local_s": local_s,
                    "local_cpu_util": local_cpu / local_s,
                    "local_cpu_s": local_cpu,
                    "local_docs_per_cpu_s": args.docs / local_s / CPUS,
                    "chunks": report.chunks_indexed,
                }
                print(
                    f"[{repeat}] local: {args.docs} docs, {report.chunks_indexed} chunks in "
                    f"{local_s:.1f}s (cpu util {local_cpu / local_s:.2f}) -> "
                    f"{row['local_docs_per_cpu_s']:.2f} docs/s per CPU"
                )
                for batch_size in batch_sizes:
                    run += 1
                    ws = Workspace(
                        root, index_dir=work / f"ray-{run}", embedder="default", config=False
                    )
                    started = time.perf_counter()
                    cpu, node_cpu = cpu_seconds(), cluster_cpu_seconds()
                    result = index_on_ray(ws, address=address, actors=CPUS, batch_size=batch_size)
                    ray_s = time.perf_counter() - started
                    ray_cpu = cpu_seconds() - cpu + cluster_cpu_seconds() - node_cpu
                    per_cpu = args.docs / ray_s / CPUS
                    entry = {
                        **row,
                        "batch_size": batch_size,
                        "ray_s": ray_s,
                        "ray_docs_per_cpu_s": per_cpu,
                        "ratio": per_cpu / row["local_docs_per_cpu_s"],
                        "ray_cpu_s": ray_cpu,
                        "docs_per_cpu_second_ratio": row["local_cpu_s"] / ray_cpu,
                        "chunk_s": result.seconds_chunk,
                        "embed_s": result.seconds_embed,
                        "sync_s": result.seconds_sync,
                        "embed_only_ratio": (local_s / CPUS) / (result.seconds_embed / CPUS),
                        "nodes": {
                            n[:8]: {"texts": w.texts, "tasks": w.calls}
                            for n, w in result.nodes.items()
                        },
                        "sync_embedded": result.sync.chunks_embedded,
                        **compare(ws, local, query_list),
                    }
                    rows.append(entry)
                    nodes = ", ".join(
                        f"node {n}: {w['tasks']} tasks / {w['texts']} texts"
                        for n, w in entry["nodes"].items()
                    )
                    print(
                        f"[{repeat}] ray batch {batch_size}: {ray_s:.1f}s (chunk "
                        f"{result.seconds_chunk:.1f}s, embed {result.seconds_embed:.1f}s, "
                        f"local sync {result.seconds_sync:.1f}s) -> {per_cpu:.2f} docs/s per CPU "
                        f"= {entry['ratio']:.2f}x local (per CPU-second used: "
                        f"{entry['docs_per_cpu_second_ratio']:.2f}x, {ray_cpu:.0f} vs "
                        f"{row['local_cpu_s']:.0f} CPU-s); {nodes}; same chunks "
                        f"{entry['same_chunks']}, max vector diff {entry['max_vector_diff']:.1e}, "
                        f"same rankings {entry['same_rankings']}, embedded by the local sync "
                        f"{entry['sync_embedded']}"
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
