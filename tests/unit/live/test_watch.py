"""Workspace.watch(): file events become incremental syncs, with no call to sync()."""

from __future__ import annotations

import asyncio
import math
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.errors import ReadOnlyWorkspaceError
from workspace_tools.core.workspace import Workspace
from workspace_tools.core.workspace._progress import BATCH_FILES
from workspace_tools.core.workspace._watch import Watcher, WatchStats

GUARD = 30.0  # hang guard, not a timing claim


def wait_until(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def hits(ws: Workspace, word: str) -> set[str]:
    return {r.source_id for r in ws.search(word, mode="bm25", top_k=50)}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nalpha words here\n", encoding="utf-8")
    (root / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    return root


@pytest.fixture
def ws(tree: Path, tmp_path: Path) -> Workspace:
    return Workspace(tree, index_dir=tmp_path / "index", embedder=FakeEmbedder())


@pytest.fixture
def watcher(ws: Workspace) -> Iterator[Watcher]:
    with ws.watch(debounce_ms=400, poll_seconds=0.5) as running:
        wait_until(lambda: running.stats.syncs >= 1, "the initial sync")
        yield running


def test_create_edit_rename_delete_reach_search(
    ws: Workspace, tree: Path, watcher: Watcher
) -> None:
    assert hits(ws, "alpha") == {"a.md"}
    (tree / "b.md").write_text("bravo created\n", encoding="utf-8")
    wait_until(lambda: hits(ws, "bravo") == {"b.md"}, "a created file")
    (tree / "b.md").write_text("charlie edited\n", encoding="utf-8")
    wait_until(lambda: hits(ws, "charlie") == {"b.md"} and not hits(ws, "bravo"), "an edit")
    (tree / "b.md").rename(tree / "c.md")
    wait_until(lambda: hits(ws, "charlie") == {"c.md"}, "a rename")
    (tree / "c.md").unlink()
    wait_until(lambda: not hits(ws, "charlie"), "a deletion")
    assert ws.source_ids() == ["a.md"]
    assert watcher.stats.mode == "events"


def test_ignored_and_index_folder_writes_cause_no_sync(
    ws: Workspace, tree: Path, watcher: Watcher, tmp_path: Path
) -> None:
    syncs, bursts, ignored = watcher.stats.syncs, watcher.stats.bursts, watcher.stats.ignored
    (ws.index_dir / "stray.md").write_text("index folder noise\n", encoding="utf-8")
    (tree / "ignored").mkdir()
    (tree / "ignored" / "x.md").write_text("gitignored noise\n", encoding="utf-8")
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "y.md").write_text("excluded noise\n", encoding="utf-8")
    wait_until(lambda: watcher.stats.bursts > bursts, "the ignored burst")
    assert watcher.stats.syncs == syncs
    assert watcher.stats.ignored > ignored
    # The sentinel arrives by one rename (one event, so one burst however loaded the machine);
    # events come in order, so its sync also proves every earlier noise burst caused none.
    (tmp_path / "seen.md").write_text("sentinel file\n", encoding="utf-8")
    (tmp_path / "seen.md").replace(tree / "seen.md")
    wait_until(lambda: watcher.stats.syncs > syncs, "the sentinel's sync")
    assert hits(ws, "sentinel") == {"seen.md"}
    assert watcher.stats.syncs == syncs + 1
    assert watcher.stats.last_report is not None
    assert watcher.stats.last_report.added == ["seen.md"]
    assert not hits(ws, "noise")


@pytest.mark.slow  # writes 2,000 files
def test_a_burst_of_2000_files_costs_a_bounded_number_of_commits(
    ws: Workspace, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ws.watch() as watcher:  # default debounce
        wait_until(lambda: watcher.stats.syncs >= 1, "the initial sync")
        syncs, commits = watcher.stats.syncs, watcher.stats.commits
        (tree / "gen").mkdir()
        for number in range(2000):
            (tree / "gen" / f"f{number:04}.md").write_text(f"burst file{number}\n", "utf-8")
        wait_until(lambda: len(ws.source_ids()) == 2001, "2000 files indexed")
        burst_syncs = watcher.stats.syncs - syncs
        burst_commits = watcher.stats.commits - commits
    with capsys.disabled():
        print(f"\n2000-file burst: {burst_syncs} syncs, {burst_commits} commits")
    assert burst_syncs <= 4
    assert burst_commits <= math.ceil(2000 / BATCH_FILES) + burst_syncs


@pytest.mark.slow  # waits for the root to come back
def test_a_deleted_root_is_waited_for_and_synced_when_it_comes_back(
    ws: Workspace, tree: Path, watcher: Watcher
) -> None:
    shutil.rmtree(tree)
    wait_until(lambda: watcher.stats.mode == "waiting", "the watcher to notice")
    assert "missing" in (watcher.stats.last_error or "")
    assert hits(ws, "alpha") == {"a.md"}  # the index is kept while the root is away
    tree.mkdir()
    (tree / "back.md").write_text("returned root\n", encoding="utf-8")
    wait_until(lambda: hits(ws, "returned") == {"back.md"}, "the re-created root")
    assert ws.source_ids() == ["back.md"]
    wait_until(lambda: watcher.stats.mode == "events", "events again")
    (tree / "later.md").write_text("watched again\n", encoding="utf-8")
    wait_until(lambda: hits(ws, "watched") == {"later.md"}, "an event on the new root")


def test_no_file_events_degrade_to_stat_polling(
    ws: Workspace, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import watchfiles

    def no_events(*_: object, **__: object) -> Iterator[set[tuple[object, str]]]:
        raise OSError(28, "OS file watch limit reached")

    monkeypatch.setattr(watchfiles, "watch", no_events)
    with ws.watch(poll_seconds=0.2) as watcher:
        wait_until(lambda: watcher.stats.mode == "polling", "the fallback")
        (tree / "p.md").write_text("polled file\n", encoding="utf-8")
        wait_until(lambda: hits(ws, "polled") == {"p.md"}, "a polled change")
        assert watcher.running
    assert "watch limit reached" in (watcher.stats.last_error or "")
    assert "syncing by stat every 0.2 s instead" in (watcher.stats.last_error or "")


def test_async_form(ws: Workspace, tree: Path) -> None:
    async def main() -> None:
        async with ws.watch(debounce_ms=300) as watcher:
            while watcher.stats.syncs < 1:
                await asyncio.sleep(0.05)
            (tree / "async.md").write_text("asynchronous edit\n", encoding="utf-8")
            while not hits(ws, "asynchronous"):
                await asyncio.sleep(0.05)
        assert not watcher.running

    asyncio.run(asyncio.wait_for(main(), GUARD))


def test_read_only_workspace_cannot_watch(tree: Path, tmp_path: Path) -> None:
    Workspace(tree, index_dir=tmp_path / "index", embedder=FakeEmbedder()).sync()
    ro = Workspace(tree, index_dir=tmp_path / "index", embedder=FakeEmbedder(), read_only=True)
    with pytest.raises(ReadOnlyWorkspaceError, match="read-only"):
        ro.watch()


def test_two_watchers_of_one_root_write_safely(tree: Path, tmp_path: Path) -> None:
    first = Workspace(tree, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    second = Workspace(tree, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    with first.watch(debounce_ms=300) as one, second.watch(debounce_ms=300) as two:
        wait_until(lambda: one.stats.syncs >= 1 and two.stats.syncs >= 1, "both first syncs")
        for number in range(50):
            (tree / f"w{number}.md").write_text(f"shared word{number}\n", encoding="utf-8")
        wait_until(lambda: len(first.source_ids()) == 51, "every file, seen by the first")
        wait_until(lambda: len(second.source_ids()) == 51, "every file, seen by the second")
    assert one.stats.last_error is None and two.stats.last_error is None
    assert hits(first, "word7") == hits(second, "word7") == {"w7.md"}
    fresh = Workspace(tree, index_dir=tmp_path / "index", embedder=FakeEmbedder())
    assert fresh.sync().commits == 0  # nothing left to do


@dataclass(kw_only=True)
class RecordedStats(WatchStats):
    """Watch statistics that note the order in which the watcher sets them."""

    order: list[str] = field(default_factory=list)

    def __setattr__(self, name: str, value: object) -> None:
        if "order" in self.__dict__:
            self.order.append(name)
        super().__setattr__(name, value)


def test_counts_are_published_after_the_outcome_they_count(
    ws: Workspace, tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader who sees ``syncs`` or ``bursts`` move also sees that sync's report or burst's fate."""
    import watchfiles

    watcher = Watcher(ws, debounce_ms=50)
    stats = watcher.stats = RecordedStats()

    def two_bursts(*_: object, **__: object) -> Iterator[set[tuple[object, str]]]:
        yield set()  # the watch is up: the initial sync
        yield {(watchfiles.Change.added, str(tree / "node_modules" / "y.md"))}  # ignored
        yield {(watchfiles.Change.added, str(tree / "a.md"))}  # synced
        watcher._stop.set()

    monkeypatch.setattr(watchfiles, "watch", two_bursts)
    (tree / "node_modules").mkdir()
    (tree / "node_modules" / "y.md").write_text("excluded\n", encoding="utf-8")
    watcher._watch_events(full=True)
    counted = [
        name for name in stats.order if name in {"bursts", "ignored", "syncs", "last_report"}
    ]
    assert counted == [
        *("last_report", "syncs"),  # the initial sync
        *("ignored", "bursts"),  # the ignored burst
        *("last_report", "syncs", "bursts"),  # the synced burst
    ]
    assert (stats.syncs, stats.bursts, stats.ignored) == (2, 2, 1)
