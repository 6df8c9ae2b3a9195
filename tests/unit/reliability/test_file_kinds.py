"""What a file system can hold: FIFOs, links swapped under a reader, hard links, skill links.

Only regular files inside a root are read, checked on the opened file descriptor (not the path),
so a link swapped in between the scan and the read, or a FIFO named ``*.md``, is skipped.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.reliability import CANARY, Arena
from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.errors import WorkspaceError
from workspace_tools.core.grep import grep
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.skills.files import list_skill_files, read_skill_file
from workspace_tools.core.text.scan import ScanConfig
from workspace_tools.core.workspace import Workspace

pytestmark = pytest.mark.timeout(120)

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


# -- FIFOs --------------------------------------------------------------------------------


@needs_fifo
def test_fifo_named_md_does_not_hang_docs_indexing(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "page.md").write_text("# Page\n\nalpha\n")
    os.mkfifo(root / "pipe.md")
    index = DocsIndex(root)
    assert [p.path for p in index.list_pages()] == ["page.md"]


@needs_fifo
def test_symlink_to_fifo_does_not_hang_sync_or_grep(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "page.md").write_text("# Page\n\nalpha\n")
    os.mkfifo(root / "pipe")
    (root / "pipe.md").symlink_to(root / "pipe")
    ws = Workspace(root, embedder=None)
    report = ws.sync()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["pipe.md"].startswith("not a regular file"), reasons
    assert ws.source_ids() == ["page.md"]
    found = grep(root, "alpha")
    assert [m.path for m in found.matches] == ["page.md"]
    assert {s.path for s in found.skipped} >= {"pipe.md"}
    with pytest.raises(WorkspaceError, match="not a regular file"):
        ws.read_text("pipe.md")
    with pytest.raises(WorkspaceError, match="not a regular file"):
        grep(root, "alpha", ["pipe.md"])


# -- a symlink swapped in between scan and read ---------------------------------------


class _Swapper:
    """Flips ``path`` between a regular file and a symlink to ``target`` as fast as it can."""

    def __init__(self, path: Path, target: Path, text: str) -> None:
        self.path = path
        self.stop = threading.Event()
        folder = path.parent
        self.regular = folder / f".{path.name}.regular"
        self.link = folder / f".{path.name}.link"
        self.text = text
        self.target = target
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            self.regular.write_text(self.text)
            os.replace(self.regular, self.path)
            self.link.unlink(missing_ok=True)
            self.link.symlink_to(self.target)
            os.replace(self.link, self.path)

    def __enter__(self) -> _Swapper:
        self.path.write_text(self.text)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


@pytest.mark.slow  # thousands of syncs against a racing thread
def test_symlink_swap_race_never_reads_outside(arena: Arena) -> None:
    """2,000 racing reads (800 syncs, 800 greps, 400 docs builds): 0 outside reads."""
    root = arena.ws
    docs = arena.docs
    ws = Workspace(root, embedder=None, autosave=False)
    leaks: list[str] = []
    rounds = {"sync": 0, "grep": 0, "docs": 0}

    def check(kind: str, text: str) -> None:
        rounds[kind] += 1
        if CANARY in text:
            leaks.append(kind)

    with (
        _Swapper(root / "race.md", arena.outside / "page.md", "# Race\n\ninside words\n"),
        _Swapper(docs / "race.md", arena.outside / "page.md", "# Race\n\ninside words\n"),
    ):
        index = DocsIndex(docs)
        for n in range(800):
            ws.sync(["race.md"])
            check("sync", " ".join(c.text for c in ws.chunks_of("race.md")))
            try:
                found = grep(root, "e", ["race.md"])
                check("grep", " ".join(m.text for m in found.matches))
            except WorkspaceError:
                check("grep", "")
            if n % 2 == 0:
                index.refresh()
                pages = " ".join(p.path + str(p) for p in index.list_pages())
                hits = " ".join(h.snippet for h in index.search("canary leak", top_k=5))
                check("docs", pages + " " + hits)
    assert rounds["sync"] + rounds["grep"] + rounds["docs"] == 2000
    assert leaks == []


# -- hard links --------------------------------------------------------------------------


def test_hard_links_are_read_by_default_and_refused_on_request(arena: Arena) -> None:
    os.link(arena.canary, arena.ws / "hard.txt")
    default = Workspace(arena.ws, embedder=None, autosave=False)
    default.sync(["hard.txt"])
    assert "hard.txt" in default.source_ids()  # documented: the link lives inside the root
    strict = Workspace(
        arena.ws,
        embedder=None,
        autosave=False,
        rebuild=True,
        scan_config=ScanConfig(refuse_hard_links=True),
    )
    report = strict.sync(["hard.txt", "notes.txt"])
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["hard.txt"].startswith("hard link: "), reasons
    assert strict.source_ids() == ["notes.txt"]


# -- skills discovery stays in the skills root ----------------------------------------------


def _registry(arena: Arena) -> SkillRegistry:
    return SkillRegistry([str(arena.skills)], root=arena.base, entry_points=False)


def test_symlinked_skill_folder_from_outside_is_not_loaded(arena: Arena) -> None:
    (arena.skills / "borrowed").symlink_to(arena.outside / "evil", target_is_directory=True)
    registry = _registry(arena)
    names = [s.name for s in registry.list_skills()]
    assert "evil" not in names
    assert "demo" in names
    messages = " ".join(d.message for d in registry.diagnostics())
    assert "outside the skills folder" in messages


def test_skill_md_linked_to_an_outside_file_is_not_served(arena: Arena) -> None:
    folder = arena.skills / "linked"
    folder.mkdir()
    (folder / "SKILL.md").symlink_to(arena.outside / "evil" / "SKILL.md")
    registry = _registry(arena)
    assert "evil" not in [s.name for s in registry.list_skills()]
    assert "linked" not in [s.name for s in registry.list_skills()]


def test_references_link_to_outside_lists_no_outside_names(arena: Arena) -> None:
    demo = arena.skills / "demo"
    (demo / "assets").symlink_to(arena.outside, target_is_directory=True)
    (demo / "references" / "canary.txt").symlink_to(arena.canary)
    registry = _registry(arena)
    skill = registry.get("demo")
    listed = list_skill_files(skill, limit=100)
    assert "references/guide.md" in listed
    assert not [name for name in listed if "canary" in name or "passwd" in name], listed
    read: Callable[[str], object] = lambda rel: read_skill_file(skill, rel)  # noqa: E731
    with pytest.raises(WorkspaceError):
        read("references/canary.txt")
    with pytest.raises(WorkspaceError):
        read("assets/canary.txt")
