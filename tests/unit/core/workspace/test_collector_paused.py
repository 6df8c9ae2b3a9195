"""``index_many`` pauses the cyclic garbage collector for the whole batch, and only for it.

A batch makes many small objects and no cycles; with the collector on, the documents unpacked
and the rows written set off collections that walked every object the process holds.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import InvalidInputError


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    ws = Workspace(tmp_path, embedder=None)
    yield ws
    ws.close()


def _documents(seen: list[bool], *, then_fail: bool = False) -> Iterator[tuple[str, str]]:
    for n in range(3):
        seen.append(gc.isenabled())  # read while index_many unpacks the documents
        yield f"doc{n}.txt", f"pebbles and rivers number {n}"
    if then_fail:
        yield ("broken",)  # type: ignore[misc]  # not a document shape: the batch is refused


def test_the_collector_is_paused_while_a_batch_is_read_and_on_again_after(
    workspace: Workspace,
) -> None:
    assert gc.isenabled()
    seen: list[bool] = []
    workspace.index_many(_documents(seen))
    assert seen == [False, False, False]
    assert gc.isenabled()
    hits = workspace.search("pebbles number 1", mode="bm25")
    assert hits[0].source_id == "doc1.txt"


def test_a_refused_batch_turns_the_collector_on_again(workspace: Workspace) -> None:
    seen: list[bool] = []
    with pytest.raises(InvalidInputError, match="Cannot index tuple"):
        workspace.index_many(_documents(seen, then_fail=True))
    assert seen == [False, False, False]
    assert gc.isenabled()
    assert workspace.stats()["sources"] == 0  # nothing of the refused batch was written


def test_a_caller_that_paused_the_collector_finds_it_paused_after(workspace: Workspace) -> None:
    gc.disable()
    try:
        workspace.index_many([("a.txt", "one text")])
        assert not gc.isenabled()  # not turned on behind the caller's back
    finally:
        gc.enable()
