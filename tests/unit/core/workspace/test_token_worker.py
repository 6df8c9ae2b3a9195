"""A workspace's bulk changes tokenized partly in a worker process rank exactly as without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.bulk import bm25_results, opened_workspaces, random_docs, small_bulk
from workspace_tools import Workspace
from workspace_tools.core.backends.embedded import EmbeddedBackend
from workspace_tools.core.backends.embedded import tokenizing as token_split
from workspace_tools.core.backends.embedded.tokenizing import SplitTokenizer

_WORDS = [f"w{n}" for n in range(400)] + ["alpha", "beta", "gamma", "parseHttp", "the", "東京"]
_QUERIES = ["w1 w2", "alpha w7", "gamma beta", "w399 w3", "parse http", "東京 w10", "w42"]


def _docs(count: int, *, seed: int, prefix: str = "d") -> list[tuple[str, str]]:
    return random_docs(_WORDS, count, seed=seed, most=40, prefix=prefix)


@pytest.fixture(autouse=True)
def _small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk change of 20 chunks (not thousands) starts the worker here, 10 use it."""
    small_bulk(monkeypatch)


opened = pytest.fixture(opened_workspaces)


def _open(root: Path, opened: list[Workspace]) -> Workspace:
    root.mkdir(exist_ok=True)
    ws = Workspace(root, embedder=None)
    opened.append(ws)
    return ws


def _split(ws: Workspace) -> SplitTokenizer:
    state = ws._state
    assert isinstance(state, EmbeddedBackend)
    return state.terms.split


def _results(ws: Workspace) -> list[list[tuple[str, float]]]:
    return bm25_results(ws, _QUERIES)


def _build(ws: Workspace) -> None:
    """Batches, a removal and a save (the merge compacts and renumbers the vocabulary)."""
    ws.index_many(_docs(60, seed=1))
    ws.index_many(_docs(60, seed=2))
    ws.remove("d1-*")
    ws.save()
    ws.index_many(_docs(60, seed=3))
    ws.index_many([(i, f"{text} w5 newword") for i, text in _docs(30, seed=2)])  # replaced
    ws._state.wait_for_background()


def test_bulk_changes_with_the_worker_rank_exactly_as_without(
    tmp_path: Path, opened: list[Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_worker = _open(tmp_path / "with", opened)
    handed: list[int] = []
    start = SplitTokenizer.start

    def counted(self: SplitTokenizer, texts: list[str]) -> object:
        job = start(self, texts)
        handed.append(len(texts) if job is not None else 0)
        return job

    monkeypatch.setattr(SplitTokenizer, "start", counted)
    _build(with_worker)
    assert [n for n in handed if n] == [60, 60, 60, 30]  # each bulk change, whole
    monkeypatch.setattr(SplitTokenizer, "start", start)
    monkeypatch.setenv(token_split.WORKER_ENV, "0")
    without = _open(tmp_path / "without", opened)
    _build(without)
    assert _split(with_worker).worker_texts > 0
    assert _split(without).worker is None
    assert _split(without).worker_texts == 0
    assert _results(with_worker) == _results(without)
    assert _results(with_worker)[0]
    assert with_worker.tokenizer.vocab == without.tokenizer.vocab


def test_close_stops_the_worker(tmp_path: Path, opened: list[Workspace]) -> None:
    ws = _open(tmp_path / "ws", opened)
    ws.index_many(_docs(60, seed=1))
    worker = _split(ws).worker
    assert worker is not None
    assert worker.alive()
    ws.close()
    assert worker.helper.process.poll() is not None
    assert _split(ws).worker is None
    assert ws.search("w1", mode="bm25")  # still usable
    ws.index_many(_docs(60, seed=2))  # a later bulk change starts another
    assert _split(ws).worker is not None


def test_a_rebuild_and_a_catch_up_use_the_worker(
    tmp_path: Path, opened: list[Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = _open(tmp_path / "ws", opened)
    writer.index_many(_docs(60, seed=1))  # under the snapshot minimum: no snapshot
    reader = _open(tmp_path / "ws", opened)
    assert _results(reader) == _results(writer)  # rebuilt from the database's texts
    rebuilt = _split(reader).worker_texts
    assert rebuilt > 0
    writer.index_many(_docs(60, seed=2))  # another workspace's change: caught up from the log
    assert _results(reader) == _results(writer)
    assert _split(reader).worker_texts > rebuilt
    monkeypatch.setenv(token_split.WORKER_ENV, "0")
    alone = _open(tmp_path / "ws", opened)
    assert _results(alone) == _results(writer)
    assert _split(alone).worker is None


def test_a_batched_sync_uses_the_worker_and_ranks_exactly_as_without(
    tmp_path: Path, opened: list[Workspace], monkeypatch: pytest.MonkeyPatch
) -> None:
    built = []
    for name, switch in (("with", "1"), ("without", "0")):
        monkeypatch.setenv(token_split.WORKER_ENV, switch)
        root = tmp_path / name
        root.mkdir()
        for doc_id, text in _docs(80, seed=5):
            (root / doc_id).write_text(text, encoding="utf-8")
        ws = _open(root, opened)
        ws.batch_files = 15  # a sync of 80 files commits batches of 15 (each under the bulk)
        ws.sync()
        built.append(ws)
    with_worker, without = built
    assert _split(with_worker).worker_texts >= 15
    assert _split(without).worker_texts == 0
    assert _results(with_worker) == _results(without)
    assert _results(with_worker)[0]
