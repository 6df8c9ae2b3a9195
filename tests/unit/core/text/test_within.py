"""``within``: the folders a call may see, as a search pre-filter and a file check (issue 29)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.grep import grep
from workspace_tools.core.grep_counts import grep_counts
from workspace_tools.core.text.within import (
    and_filters,
    is_within,
    normalise_within,
    within_filter,
)
from workspace_tools.core.workspace import Workspace

# ids that sort next to "src/..." but are not under it: '-' and '.' sort before '/'
NEIGHBOURS = ("src-old/a.md", "src.md", "srcx/a.md", "docs/a.md")


def test_normalise_within() -> None:
    assert normalise_within(None) is None
    assert normalise_within(["."]) is None
    assert normalise_within(["src", ""]) is None
    assert normalise_within(["src/", "src/app", "./docs//guides"]) == ("docs/guides", "src")
    assert normalise_within([]) == ()


def test_is_within() -> None:
    assert is_within("src/a.md", ("src",))
    assert is_within("src", ("src",))
    assert not any(is_within(n, ("src",)) for n in NEIGHBOURS)
    assert is_within("anything", None)
    assert not is_within("src/a.md", ())


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_within_filter_is_a_prefilter_in_every_mode(tmp_path: Path, mode: str) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder())
    for source in NEIGHBOURS:
        ws.index(source, "alpha beta gamma. " * 5)
    for n in range(3):
        ws.index(f"src/deep/{n}.md", f"alpha note {n}")
    hits = ws.search(["alpha", "gamma"], top_k=3, mode=mode, filter=within_filter(("src",)))
    assert sorted(h.source_id for h in hits) == ["src/deep/0.md", "src/deep/1.md", "src/deep/2.md"]
    everywhere = ws.search("alpha", top_k=10, mode=mode)
    assert {h.source_id for h in everywhere} >= set(NEIGHBOURS)
    nothing = ws.search("alpha", top_k=3, mode=mode, filter=within_filter(()))
    assert nothing == []
    both = and_filters({"source_id": "src/deep/1.md"}, within_filter(("src",)))
    assert [h.source_id for h in ws.search("alpha", mode=mode, filter=both)] == ["src/deep/1.md"]


def test_grep_and_counts_read_only_files_within(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for rel in ("src/a.txt", "src-old/a.txt", "docs/a.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n", encoding="utf-8")
    root = root.resolve()
    assert [m.path for m in grep(root, "needle", within=("src",)).matches] == ["src/a.txt"]
    assert len(grep(root, "needle").matches) == 3
    counts = grep_counts(root, "needle", ["**/*.txt"], within=("src", "docs"))
    assert sorted(counts.counts) == [("docs/a.txt", 1), ("src/a.txt", 1)]
    with pytest.raises(InvalidInputError, match=r"No file of 'src-old' lies in the folders"):
        grep(root, "needle", ["src-old"], within=("src",))
    with pytest.raises(InvalidInputError, match=r"No readable files in the folders this search"):
        grep(root, "needle", within=("missing",))


def test_a_prefix_that_is_a_source_needs_the_equality(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None)
    for source in ("notes", "notes/a.md", "notes-old.md"):
        ws.index(source, "alpha")
    both = within_filter(("notes",), sources={"notes"})
    assert sorted(h.source_id for h in ws.search("alpha", filter=both)) == ["notes", "notes/a.md"]
    folder_only = within_filter(("notes",), sources=set())  # one range, no $or
    assert "$or" not in folder_only
    assert [h.source_id for h in ws.search("alpha", filter=folder_only)] == ["notes/a.md"]


def test_a_folder_around_within_walks_only_within(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workspace_tools.core.grep as grep_module

    root = tmp_path.resolve()
    for rel in ("src/a.txt", "docs/a.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("needle\n", encoding="utf-8")
    walked: list[list[str]] = []
    real_scan = grep_module.scan

    def scan(root: Path, entries: list[str], *, config: object, folders: object) -> object:
        walked.append(list(entries))
        return real_scan(root, entries, config=config, folders=folders)  # type: ignore[arg-type]

    monkeypatch.setattr(grep_module, "scan", scan)
    assert [m.path for m in grep(root, "needle", ["."], within=("src",)).matches] == ["src/a.txt"]
    assert [m.path for m in grep(root, "needle", ["**/*.txt"], within=("src",)).matches] == [
        "src/a.txt"
    ]
    assert walked == [["src"], ["**/*.txt"]]  # a glob walks only the folders in or around within
    # (tests/unit/core/text/test_glob_prune.py: which folders it reads)
