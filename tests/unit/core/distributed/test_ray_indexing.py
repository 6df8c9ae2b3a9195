"""Distributed indexing on a local Ray cluster: the same index as a local sync, resumable.

One local cluster (``ray.init(address="local", num_cpus=2)``) serves the whole module and is shut
down by the fixture that started it. The module skips, with the reason, without the ray extra.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text.hashing import text_hash
from workspace_tools.core.workspace import progress_listener

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install '.[ray]')")

from workspace_tools.core.distributed import index_on_ray  # noqa: E402

pytestmark = pytest.mark.slow

QUERIES = ("install the package", "keyword ranking", "tax deadline", "tune a guitar", "café")
TOPICS = (
    "Installation needs Python and pip; run pip install to install the package.",
    "Keyword ranking with BM25 is fast and exact for rare words.",
    "The quarterly tax filing deadline is in April for most people.",
    "Tune each guitar string against a reference pitch before playing.",
    "Café au lait and crème brûlée are French words for coffee and dessert.",
    "Vector search finds paraphrases that share no word with the query.",
)


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    """A private local cluster for the module (never another program's), shut down after."""
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


def make_tree(root: Path, files: int) -> Path:
    """Markdown, text and one HTML page (a rich document) with repeated and unique chunks."""
    (root / "docs").mkdir(parents=True)
    for n in range(files):
        topic = TOPICS[n % len(TOPICS)]
        sections = "\n\n".join(
            f"## Part {p}\n\n{topic} Page {n}, part {p}: {' '.join([f'word{n}x{p}'] * 30)}."
            for p in range(3)
        )
        (root / "docs" / f"page{n}.md").write_text(f"# Page {n}\n\n{sections}\n", "utf-8")
    (root / "shared.txt").write_text(f"{TOPICS[0]}\n", "utf-8")  # a chunk text seen twice
    (root / "docs" / "copy.txt").write_text(f"{TOPICS[0]}\n", "utf-8")
    (root / "page.html").write_text(
        f"<html><body><h1>Web page</h1><p>{TOPICS[1]}</p><p>{TOPICS[3]}</p></body></html>",
        "utf-8",
    )
    return root


def index_rows(ws: Workspace) -> list[tuple[str, str, str]]:
    """``(source, chunk id, text)`` of every chunk, in source order."""
    return [(sid, c.id, c.text) for sid in sorted(ws.source_ids()) for c in ws.chunks_of(sid)]


def index_vectors(ws: Workspace) -> dict[str, np.ndarray]:
    hashes = [text_hash(text) for _, _, text in index_rows(ws)]
    return IndexDatabase(ws.index_dir, read_only=True).vectors(hashes)


def rankings(ws: Workspace) -> dict[tuple[str, str], list[tuple[str, float]]]:
    return {
        (query, mode): [(r.id, r.score) for r in ws.search(query, top_k=8, mode=mode)]
        for query in QUERIES
        for mode in ws.modes
    }


def cached_vectors(ws: Workspace) -> int:
    with sqlite3.connect(ws.index_dir / "index.sqlite3") as conn:
        return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


def assert_same_index(ray_ws: Workspace, local_ws: Workspace, *, atol: float) -> None:
    assert index_rows(ray_ws) == index_rows(local_ws)
    got, want = index_vectors(ray_ws), index_vectors(local_ws)
    assert got.keys() == want.keys()
    assert max(float(np.abs(got[h] - want[h]).max()) for h in want) <= atol
    ray_ranks, local_ranks = rankings(ray_ws), rankings(local_ws)
    assert ray_ranks.keys() == local_ranks.keys()
    for key, hits in local_ranks.items():
        assert [i for i, _ in ray_ranks[key]] == [i for i, _ in hits], key
        assert np.allclose([s for _, s in ray_ranks[key]], [s for _, s in hits], atol=1e-4)


def open_ws(root: Path, index: str, embedder: Any, **kwargs: Any) -> Workspace:
    return Workspace(root, index_dir=root.parent / index, embedder=embedder, config=False, **kwargs)


def test_distributed_build_equals_a_local_build(tmp_path: Path, cluster: None) -> None:
    root = make_tree(tmp_path / "ws", files=12)
    local = open_ws(root, "local", FakeEmbedder())
    local.sync()
    driver_embedder = FakeEmbedder()
    ws = open_ws(root, "ray", driver_embedder)

    report = index_on_ray(ws, actors=2, batch_size=8, commit_every=16)

    distinct = len({text_hash(text) for _, _, text in index_rows(local)})
    assert report.files_chunked == len(local.source_ids()) == 15
    assert report.texts == report.texts_embedded == distinct
    assert sum(w.texts for w in report.nodes.values()) == distinct
    assert sum(w.calls for w in report.nodes.values()) >= distinct // 8
    assert report.sync.chunks_embedded == 0  # every vector came from the cluster
    assert driver_embedder.texts_embedded == 0
    assert sorted(report.sync.added) == sorted(local.source_ids())
    assert_same_index(ws, local, atol=1e-6)
    assert ws.conversion_cache.get(text_hash((root / "page.html").read_bytes())) is not None


def test_a_second_run_with_no_change_embeds_nothing(tmp_path: Path, cluster: None) -> None:
    root = make_tree(tmp_path / "ws", files=3)
    ws = open_ws(root, "ray", FakeEmbedder())
    index_on_ray(ws, actors=1)
    (root / "docs" / "page0.md").write_text("# Changed\n\nA brand new sentence here.\n", "utf-8")

    report = index_on_ray(ws, actors=1)

    assert report.files_chunked == 1
    assert report.texts_embedded == 1
    assert report.sync.updated == ["docs/page0.md"]
    assert report.sync.chunks_embedded == 0


class Interrupt(Exception):
    pass


def test_an_interrupted_run_resumes_and_embeds_only_the_rest(tmp_path: Path, cluster: None) -> None:
    root = make_tree(tmp_path / "ws", files=12)
    ws = open_ws(root, "ray", FakeEmbedder())

    def stop_after_first_commit(stage: str, done: int, total: int) -> None:
        if stage == "Embedding on Ray" and done > 0:
            raise Interrupt

    with pytest.raises(Interrupt), progress_listener(stop_after_first_commit):
        index_on_ray(ws, actors=2, batch_size=4, commit_every=8)
    committed = cached_vectors(ws)
    assert committed == 8  # one commit kept, nothing indexed yet
    assert ws.source_ids() == []

    report = index_on_ray(ws, actors=2, batch_size=4, commit_every=8)

    assert report.texts_cached == committed
    assert report.texts_embedded == report.texts - committed > 0
    assert report.sync.chunks_embedded == 0
    local = open_ws(root, "local", FakeEmbedder())
    local.sync()
    assert_same_index(ws, local, atol=1e-6)


def test_a_rebuild_on_ray_equals_a_local_build(tmp_path: Path, cluster: None) -> None:
    root = make_tree(tmp_path / "ws", files=4)
    open_ws(root, "ray", FakeEmbedder()).sync()
    (root / "docs" / "page1.md").unlink()

    ws = open_ws(root, "ray", FakeEmbedder(), rebuild=True)
    report = index_on_ray(ws, actors=1)

    assert report.sync.chunks_embedded == 0
    local = open_ws(root, "local", FakeEmbedder())
    local.sync()
    assert_same_index(ws, local, atol=1e-6)


def test_the_cli_refuses_ray_without_an_embedder(
    tmp_path: Path, cluster: None, capsys: Any
) -> None:
    from workspace_tools.cli import main

    root = make_tree(tmp_path / "ws", files=2)
    (root / "workspace-tools.yaml").write_text("workspace:\n  embedder: none\n", "utf-8")
    assert main(["--root", str(root), "-q", "index", "--ray"]) == 2
    assert "no embedder" in capsys.readouterr().err


@pytest.mark.requires_model
def test_the_cli_indexes_on_ray_with_the_packaged_model(
    tmp_path: Path, cluster: None, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from workspace_tools.cli import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the actors load the model from site-packages
    root = make_tree(tmp_path / "ws", files=3)

    assert main(["--root", str(root), "-q", "index", "--ray"]) == 0

    out = capsys.readouterr().out
    assert "Ray: 6 files chunked" in out
    assert "(0 embedded)" in out  # the local sync found every vector cached
    ws = Workspace(root)
    local = open_ws(root, "local", "default")
    local.sync()
    assert_same_index(ws, local, atol=1e-5)
