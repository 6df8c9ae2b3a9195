"""A bulk change's term ids made while its COMMIT waits for the disk (``TermIds.prepare``).

The tokenizing worker takes the change's last texts before the write (``token_split.py``); this
process's head and the worker's reply are then made on the helper thread of ``_ahead.py`` during
the ``COMMIT``. Nothing here is timed: the tests check that the job went ahead, on which thread,
and that the ids, vocabulary and scores are those of a workspace tokenizing after its commit, a
failed commit included.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.bulk import bm25_results, opened_workspaces, random_docs, small_bulk
from tests.support.failing_commit import CommitFails
from workspace_tools import Workspace
from workspace_tools.core.backends import _ahead, _term_ids, embedded
from workspace_tools.core.errors import StorageError

_WORDS = [f"w{n}" for n in range(300)] + ["alpha", "beta", "parseHttp", "the", "東京"]
_QUERIES = ["w1 w2", "alpha w7", "parse http", "東京 w10", "w299 beta"]


def _docs(count: int, *, seed: int) -> list[tuple[str, str]]:
    return random_docs(_WORDS, count, seed=seed, most=30)


@pytest.fixture(autouse=True)
def _small_bulk(monkeypatch: pytest.MonkeyPatch) -> None:
    """A change of 20 chunks is bulk here: it starts the worker and goes ahead whole."""
    small_bulk(monkeypatch)
    monkeypatch.setattr(_term_ids, "_AHEAD_BULK", 20)


opened = pytest.fixture(opened_workspaces)


def _open(root: Path, opened: list[Workspace]) -> Workspace:
    root.mkdir()
    ws = Workspace(root, embedder=None)
    opened.append(ws)
    return ws


def _results(ws: Workspace) -> list[list[tuple[str, float]]]:
    return bm25_results(ws, _QUERIES)


def test_a_bulk_change_is_tokenized_on_the_helper_while_it_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[Workspace]
) -> None:
    threads: list[str] = []
    tokenize = embedded.EmbeddedBackend._term_ids_of

    def traced(self: Any, changes: Any) -> Any:
        threads.append(threading.current_thread().name)
        return tokenize(self, changes)

    counted_on: list[str] = []
    count = _term_ids.count_terms

    def traced_count(terms: Any) -> Any:
        counted_on.append(threading.current_thread().name)
        return count(terms)

    monkeypatch.setattr(embedded.EmbeddedBackend, "_term_ids_of", traced)
    monkeypatch.setattr(_term_ids, "count_terms", traced_count)
    ws = _open(tmp_path / "ahead", opened)
    ws.index_many(_docs(5, seed=1))  # a small first change: ahead too, by the small-write rule
    handed = _ahead._HELPER.handed
    threads.clear()
    for seed in (2, 3):
        ws.index_many(_docs(80, seed=seed))
    assert _ahead._HELPER.handed == handed + 2  # each bulk change went ahead
    assert len(threads) == 2  # tokenized once each: by the helper, or here if it was not free
    assert counted_on == threads  # the frequencies counted by the same job, bulk changes only
    assert ws._state._ahead is None  # the ids were taken
    assert ws._state.split.worker_texts > 0  # the worker took part of them

    monkeypatch.setattr(_term_ids, "_AHEAD_BULK", 10**9)  # as before: after the commit
    after = _open(tmp_path / "after", opened)
    after.index_many(_docs(5, seed=1))
    handed, counts = _ahead._HELPER.handed, len(counted_on)
    for seed in (2, 3):
        after.index_many(_docs(80, seed=seed))
    assert _ahead._HELPER.handed == handed  # nothing went ahead in this one
    assert len(counted_on) == counts  # none counted apart in this one
    assert ws._state.tokenizer.vocab == after._state.tokenizer.vocab
    size = len(ws._state.tokenizer.vocab)  # past it, zeros (a merge may have sized the array)
    df, df_after = ws._state.sparse._df, after._state.sparse._df
    assert not df[size:].any() and not df_after[size:].any()
    assert df[:size].tolist() == df_after[:size].tolist()  # added after counting apart
    assert _results(ws) == _results(after)


def test_a_change_between_the_small_and_the_bulk_sizes_is_tokenized_after_its_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[Workspace]
) -> None:
    monkeypatch.setattr(_term_ids, "_AHEAD_BULK", _term_ids._AHEAD_CHUNKS + 2)
    ws = _open(tmp_path / "ws", opened)
    for count, goes_ahead in (
        (_term_ids._AHEAD_CHUNKS + 1, False),
        (_term_ids._AHEAD_CHUNKS + 2, True),
    ):
        handed = _ahead._HELPER.handed
        ws.index_many(_docs(count, seed=count))
        assert _ahead._HELPER.handed == handed + goes_ahead, count


def test_a_failed_bulk_commit_leaves_no_term_of_its_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[Workspace]
) -> None:
    ws = _open(tmp_path / "ws", opened)
    ws.index_many(_docs(30, seed=5))
    before = dict(ws._state.tokenizer.vocab)
    new = [(f"n{i}.txt", f"zorblax{i} quuxle{i} w1 alpha") for i in range(80)]
    handed = _ahead._HELPER.handed
    real = ws._db.connection()
    failing = CommitFails(real)
    ws._db._conn = failing  # type: ignore[assignment]
    try:
        with pytest.raises(StorageError, match=r"Could not save the change in .*The disk is full"):
            ws.index_many(new)
    finally:
        ws._db._conn = real
    assert failing.failed
    assert _ahead._HELPER.handed == handed + 1  # it had gone ahead
    assert ws._state._ahead is None
    assert ws._state.tokenizer.vocab == before  # zorblax0.. are gone again
    assert ws.search("zorblax3", mode="bm25") == []
    ws.index_many(new)  # the retry numbers them as a workspace that never failed does
    clean = _open(tmp_path / "clean", opened)
    clean.index_many(_docs(30, seed=5))
    clean.index_many(new)
    assert ws._state.tokenizer.vocab == clean._state.tokenizer.vocab
    assert _results(ws) == _results(clean)
    got = [(r.id, r.score) for r in ws.search("zorblax3 quuxle7", mode="bm25")]
    assert got == [(r.id, r.score) for r in clean.search("zorblax3 quuxle7", mode="bm25")]
    assert got  # the retried change is searchable
