"""Concurrency: searches during sync see the old or the new index, never a mix; async tools do not
block the event loop; skills discovery is single-flight (docs refresh is tested in tests/unit/docs).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools.docs import make_docs_tools
from workspace_tools.tools.toolkit import WorkspaceToolkit

QUERIES = ["alpha", "beta gamma", "release notes", "shared words", "delta"]
ROUNDS = 12


def _state(version: str) -> dict[str, str]:
    """Two versions of a small tree; every file changes between them, one appears, one goes."""
    files = {
        f"doc{i}.md": f"# Doc {i}\n\nshared words {version} {'alpha' if (i + len(version)) % 2 else 'beta'}"
        f" gamma {i}\n\n"
        + ("release notes delta " * (i + 1) + "\n")
        * (3 if version == "old" else 1)
        for i in range(5)
    }
    files["old_only.md" if version == "old" else "new_only.md"] = f"alpha delta {version} only\n"
    return files


def _write(root: Path, files: dict[str, str], stamp: int) -> None:
    for path in root.glob("*.md"):
        if path.name not in files:
            path.unlink()
    for name, text in files.items():
        path = root / name
        path.write_text(text, encoding="utf-8")
        os.utime(path, ns=(stamp, stamp))


def _signature(ws: Workspace, query: str, mode: str) -> frozenset[tuple[str, float, str]]:
    return frozenset(
        (r.id, round(r.score, 4), r.content) for r in ws.search(query, top_k=100, mode=mode)
    )


def _expected(tmp_path: Path, version: str) -> dict[tuple[str, str], frozenset[Any]]:
    root = tmp_path / f"expected-{version}"
    root.mkdir()
    _write(root, _state(version), 1)
    ws = Workspace(root, embedder=FakeEmbedder(), autosave=False)
    ws.sync()
    return {(q, m): _signature(ws, q, m) for q in QUERIES for m in ("bm25", "vector")}


def test_searches_during_sync_see_the_old_or_the_new_index(tmp_path: Path) -> None:
    old, new = _expected(tmp_path, "old"), _expected(tmp_path, "new")
    assert any(old[k] != new[k] for k in old)
    root = tmp_path / "ws"
    root.mkdir()
    _write(root, _state("old"), 10)
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.sync()
    stop = threading.Event()
    errors: list[BaseException] = []
    mixed: list[str] = []
    counts = {"old": 0, "new": 0}

    def searcher(seed: int) -> None:
        rng = np.random.default_rng(seed)
        while not stop.is_set():
            query = QUERIES[int(rng.integers(len(QUERIES)))]
            mode = "bm25" if rng.random() < 0.5 else "vector"
            try:
                got = _signature(ws, query, mode)
            except BaseException as exc:
                errors.append(exc)
                return
            if got == old[(query, mode)]:
                counts["old"] += 1
            elif got == new[(query, mode)]:
                counts["new"] += 1
            else:
                mixed.append(f"{mode} {query!r}: {sorted(got)[:3]}")

    threads = [threading.Thread(target=searcher, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    try:
        for round_ in range(ROUNDS):
            version = "new" if round_ % 2 == 0 else "old"
            _write(root, _state(version), 100 + round_)
            report = ws.sync()
            assert report.changed
            time.sleep(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not errors, errors[:3]
    assert not mixed, mixed[:5]
    assert counts["old"] and counts["new"], counts
    print(
        f"\nconcurrency: {sum(counts.values())} searches in 4 threads across {ROUNDS} syncs, "
        f"{counts['old']} saw the old index, {counts['new']} the new, 0 a mix"
    )


class SlowEmbedder(FakeEmbedder):
    """Embedding a single text (a query) takes a while, like a real model on CPU."""

    def embed(self, texts: Any) -> np.ndarray:
        if len(texts) == 1:
            time.sleep(0.4)
        return super().embed(texts)


class SlowDocsIndex(DocsIndex):
    def search(self, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.4)
        return super().search(*args, **kwargs)


async def test_async_tools_do_not_block_the_event_loop(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A\n\nalpha beta gamma\n", encoding="utf-8")
    ws = Workspace(root, embedder=SlowEmbedder())
    ws.sync()
    tools = {
        t.name: t for t in WorkspaceToolkit(workspace=ws, skills_entry_points=False).get_tools()
    }
    docs_tools = {
        t.name: t for t in make_docs_tools(root / "docs", index=SlowDocsIndex(root / "docs"))
    }
    gaps: list[float] = []
    done = asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    started = time.perf_counter()
    calls = [
        tools["workspace_search"].ainvoke({"query": "alpha", "mode": "vector"}) for _ in range(3)
    ]
    calls += [docs_tools["docs_search"].ainvoke({"query": "alpha"}) for _ in range(2)]
    results = await asyncio.gather(*calls)
    elapsed = time.perf_counter() - started
    done.set()
    await beat
    assert all(results)
    assert elapsed >= 0.4  # the slow parts really ran
    assert max(gaps) < 0.3, f"event loop blocked for {max(gaps):.2f} s"
    print(
        f"\nevent loop: 5 slow tool calls in {elapsed:.2f} s, longest heartbeat gap {max(gaps) * 1000:.0f} ms"
    )


def test_skills_discovery_is_single_flight(tmp_path: Path, monkeypatch: Any) -> None:
    from workspace_tools.core.skills import registry as registry_module

    skills = tmp_path / "skills"
    for number in range(5):
        folder = skills / f"skill-{number}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{number}\ndescription: Skill {number}. Use it for {number}.\n---\nBody\n",
            encoding="utf-8",
        )
    parsed: list[str] = []
    original = registry_module.parse_skill_file

    def counting(path: Path, **kwargs: Any) -> Any:
        parsed.append(str(path))
        time.sleep(0.02)
        return original(path, **kwargs)

    monkeypatch.setattr(registry_module, "parse_skill_file", counting)
    registry = SkillRegistry([str(skills)], root=tmp_path, entry_points=False)
    barrier = threading.Barrier(8)
    names: list[list[str]] = []

    def worker() -> None:
        barrier.wait()
        names.append([s.name for s in registry.list_skills()])

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(parsed) == 5, parsed  # each SKILL.md parsed once, not once per caller
    assert all(n == names[0] for n in names) and len(names[0]) == 5
