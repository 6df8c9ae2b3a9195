"""Term ids made while a one-document write's COMMIT waits for the disk (``backends/_ahead.py``).

Nothing here is timed: the tests check which thread tokenizes, when the job is handed over (after
every statement but the ``COMMIT``), that the ids, vocabulary and scores are the ones the write
made before, and that a failed commit leaves the vocabulary as it was.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.failing_commit import CommitFails
from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.core.backends import _ahead, _term_ids, embedded
from workspace_tools.core.errors import StorageError

DOCS = [
    ("a.txt", "Stones and rivers: a survey of rounded pebbles in mountain streams.\n"),
    ("b.txt", "The river carried pebbles, sand and quartzite downstream every spring.\n"),
    ("c.txt", "Glacial erratics are boulders carried far by moving ice sheets.\n"),
]
NEW = [
    ("d.txt", "Quartzite pebbles polished by the stream, and unheardofwords like zorblax.\n"),
    ("e.txt", "Ice sheets moved boulders; zorblax again, and another newterm.\n"),
]


# -- the helper thread ---------------------------------------------------------------------------


def test_a_job_the_helper_ran_gives_its_result_from_that_thread() -> None:
    ran_on: list[str] = []
    started = threading.Event()

    def job() -> int:
        ran_on.append(threading.current_thread().name)
        started.set()
        return 42

    handed = _ahead.ahead(job)
    assert started.wait(10)
    assert handed.result() == 42
    assert ran_on == ["workspace-tools-ahead"]
    assert handed.taken


def test_a_job_the_helper_has_not_started_runs_in_the_caller() -> None:
    release = threading.Event()
    busy = _ahead.ahead(lambda: release.wait(10))  # holds the helper thread
    ran_on: list[str] = []
    waiting = _ahead.ahead(lambda: ran_on.append(threading.current_thread().name) or "here")
    try:
        assert waiting.result() == "here"
        assert ran_on == [threading.current_thread().name]
        assert not waiting.taken
    finally:
        release.set()
    assert busy.result() is True
    assert ran_on == [threading.current_thread().name]  # taken back: the helper skipped it


def test_a_job_error_reaches_the_caller_with_its_message() -> None:
    def job() -> None:
        msg = "the texts could not be tokenized"
        raise ValueError(msg)

    handed = _ahead.ahead(job)
    with pytest.raises(ValueError, match="the texts could not be tokenized"):
        handed.result()


def test_a_dropped_job_that_had_not_started_never_runs() -> None:
    release = threading.Event()
    busy = _ahead.ahead(lambda: release.wait(10))
    ran: list[int] = []
    dropped = _ahead.ahead(lambda: ran.append(1))
    dropped.drop()
    release.set()
    busy.result()
    _ahead.ahead(lambda: None).result()  # the helper has passed the dropped job by now
    assert ran == []


# -- a one-document write ------------------------------------------------------------------------


def _workspace(tmp_path: Path, name: str) -> Workspace:
    root = tmp_path / name
    root.mkdir()
    ws = Workspace(root, embedder=FakeEmbedder())
    ws.index_many(DOCS)
    ws._wait_for_merge()
    return ws


def test_a_one_document_write_hands_its_term_ids_over_right_before_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path, "ws")
    events: list[str] = []
    threads: list[str] = []
    handed = _ahead.ahead

    def traced_ahead(job: Any) -> Any:
        events.append("handed over")
        return handed(job)

    tokenize = embedded.EmbeddedBackend._term_ids_of

    def traced_tokenize(self: Any, changes: Any) -> Any:
        threads.append(threading.current_thread().name)
        return tokenize(self, changes)

    monkeypatch.setattr(_term_ids, "ahead", traced_ahead)
    monkeypatch.setattr(embedded.EmbeddedBackend, "_term_ids_of", traced_tokenize)
    conn = ws._db.connection()
    conn.set_trace_callback(events.append)
    try:
        ws.index(*NEW[0])
    finally:
        conn.set_trace_callback(None)
    # Every statement of the transaction ran before the hand-over; the COMMIT right after it.
    assert events.count("handed over") == 1
    handed_at = events.index("handed over")
    assert events[handed_at + 1] == "COMMIT", events
    assert "BEGIN IMMEDIATE" in events[:handed_at]
    assert any(e.startswith("UPDATE meta SET value=") for e in events[:handed_at])
    assert len(threads) == 1  # tokenized once, by the helper or (if it was not scheduled) here
    assert ws._state._ahead is None  # the ids were taken
    assert NEW[0][0] in [r.source_id for r in ws.search("zorblax", mode="bm25")]


def test_term_ids_made_ahead_equal_the_ones_made_after_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ahead_ws = _workspace(tmp_path, "ahead")
    handed = _ahead._HELPER.handed
    for doc in NEW:
        ahead_ws.index(*doc)
    assert _ahead._HELPER.handed == handed + len(NEW)  # each write's ids went ahead
    monkeypatch.setattr(_term_ids, "_AHEAD_CHUNKS", 0)  # as before: tokenized after the commit
    after_ws = _workspace(tmp_path, "after")
    handed = _ahead._HELPER.handed
    for doc in NEW:
        after_ws.index(*doc)
    assert _ahead._HELPER.handed == handed  # nothing went ahead in this one
    assert ahead_ws._state.tokenizer.vocab == after_ws._state.tokenizer.vocab
    for query in ("zorblax pebbles", "boulders ice newterm", "quartzite stream"):
        got = [(r.source_id, r.score) for r in ahead_ws.search(query, mode="bm25")]
        assert got == [(r.source_id, r.score) for r in after_ws.search(query, mode="bm25")]


def test_a_failed_commit_leaves_no_term_of_its_change_in_the_vocabulary(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "ws")
    before = dict(ws._state.tokenizer.vocab)
    real = ws._db.connection()
    failing = CommitFails(real)
    ws._db._conn = failing  # type: ignore[assignment]
    try:
        with pytest.raises(StorageError, match=r"Could not save the change in .*The disk is full"):
            ws.index(*NEW[0])
    finally:
        ws._db._conn = real
    assert failing.failed
    assert ws._state._ahead is None
    assert ws._state.tokenizer.vocab == before  # "zorblax" and the rest are gone again
    assert ws.source(NEW[0][0]) is None
    assert ws.search("zorblax", mode="bm25") == []
    ws.index(*NEW[0])  # the retry writes it, with the ids a write that never failed gives
    clean = _workspace(tmp_path, "clean")
    clean.index(*NEW[0])
    assert ws._state.tokenizer.vocab == clean._state.tokenizer.vocab
    got = [(r.source_id, r.score) for r in ws.search("zorblax pebbles", mode="bm25")]
    assert got == [(r.source_id, r.score) for r in clean.search("zorblax pebbles", mode="bm25")]


def test_a_job_that_fails_after_the_commit_leaves_no_term_and_the_change_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path, "ws")
    before = dict(ws._state.tokenizer.vocab)
    tokenize = embedded.EmbeddedBackend._term_ids_of

    def failing(self: Any, changes: Any) -> Any:
        tokenize(self, changes)  # the terms are numbered, then the job fails
        msg = "the tokenizer broke half way"
        raise ValueError(msg)

    monkeypatch.setattr(embedded.EmbeddedBackend, "_term_ids_of", failing)
    with pytest.raises(ValueError, match="the tokenizer broke half way"):
        ws.index(*NEW[0])
    assert ws._state._ahead is None
    assert ws._state.tokenizer.vocab == before
    monkeypatch.setattr(embedded.EmbeddedBackend, "_term_ids_of", tokenize)
    # Committed all the same: the next search reads it back from the database.
    clean = _workspace(tmp_path, "clean")
    clean.index(*NEW[0])
    got = [(r.source_id, r.score) for r in ws.search("zorblax pebbles", mode="bm25")]
    assert got == [(r.source_id, r.score) for r in clean.search("zorblax pebbles", mode="bm25")]
    assert ws._state.tokenizer.vocab == clean._state.tokenizer.vocab
