"""Fixtures for the reliability tests: a hostile file layout and an audit of every file opened.

``arena`` builds, under ``tmp_path``:

* ``outside/``: a canary file (and a fake skill and docs page holding it) that no tool may read;
* ``ws/``: a workspace root with ordinary files and symlinks leading into ``outside/``;
* ``docs/``: a docs root with pages and symlinks leading outside;
* ``skills/demo/``: a skill with resource files and symlinks leading outside.

``file_audit`` records every ``open``/``os.open``/``os.scandir``/``os.listdir`` made while it is
active (through :func:`sys.addaudithook`, which sees every open whatever module makes it), so a
test can prove that zero bytes were read outside the allowed roots.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

CANARY = "CANARY-7f3a9c-do-not-leak"
"""Text of the files outside the roots; it must never appear in any output."""

_EVENTS = frozenset({"open", "os.scandir", "os.listdir", "os.chdir"})


@dataclass
class _Recorder:
    active: bool = False
    events: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hook(self, event: str, args: tuple[object, ...]) -> None:
        if not self.active or event not in _EVENTS or not args:
            return
        target = args[0]
        if isinstance(target, int) or target is None:
            return
        try:
            text = os.fsdecode(target)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if not os.path.isabs(text):
            text = os.path.join(os.getcwd(), text)
        with self.lock:
            self.events.append((event, text))


_RECORDER = _Recorder()
sys.addaudithook(_RECORDER.hook)


@dataclass
class FileAudit:
    """Files opened and folders listed while :meth:`watch` was active."""

    forbidden: list[Path]

    @property
    def events(self) -> list[tuple[str, str]]:
        return list(_RECORDER.events)

    def watch(self) -> _Watch:
        return _Watch()

    def violations(self) -> list[tuple[str, str]]:
        """Events whose target (symlinks followed) lies in a forbidden folder."""
        bad = []
        for event, raw in _RECORDER.events:
            if "\x00" in raw:
                continue
            try:
                real = Path(os.path.realpath(raw))
            except (OSError, ValueError):
                continue
            if any(real == f or f in real.parents for f in self.forbidden):
                bad.append((event, raw))
        return bad


class _Watch:
    def __enter__(self) -> None:
        _RECORDER.events.clear()
        _RECORDER.active = True

    def __exit__(self, *exc: object) -> None:
        _RECORDER.active = False


@dataclass(frozen=True)
class Arena:
    base: Path
    outside: Path
    canary: Path
    ws: Path
    docs: Path
    skills: Path


def _skill(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {name} skill. Use it for {name} tasks.\n---\n\n{body}\n",
        encoding="utf-8",
    )


@pytest.fixture
def arena(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Arena:
    base = tmp_path.resolve()
    outside = base / "outside"
    outside.mkdir()
    canary = outside / "canary.txt"
    canary.write_text(f"{CANARY}\n", encoding="utf-8")
    (outside / "passwd").write_text(f"root:x:0:0:{CANARY}\n", encoding="utf-8")
    (outside / "page.md").write_text(f"# Canary page\n\n{CANARY}\n", encoding="utf-8")
    _skill(outside / "evil", "evil", CANARY)
    # ``~`` means the outside folder during these tests.
    monkeypatch.setenv("HOME", str(outside))

    ws = base / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "guide.md").write_text(
        "# Guide\n\nInstall the package with pip.\n", encoding="utf-8"
    )
    (ws / "notes.txt").write_text("Plain notes about searching.\n", encoding="utf-8")
    (ws / "link_file.md").symlink_to(canary)
    (ws / "link_dir").symlink_to(outside, target_is_directory=True)
    (ws / "docs" / "deep_link.md").symlink_to(Path("..") / ".." / "outside" / "page.md")

    docs = base / "docs"
    (docs / "guides").mkdir(parents=True)
    (docs / "index.md").write_text("---\ntitle: Home\n---\n# Home\n\nWelcome.\n", encoding="utf-8")
    (docs / "guides" / "deploy.md").write_text(
        "# Deploy\n\nDeploy to a server.\n", encoding="utf-8"
    )
    (docs / "leak.md").symlink_to(outside / "page.md")
    (docs / "leak_dir").symlink_to(outside, target_is_directory=True)

    skills = base / "skills"
    _skill(skills / "demo", "demo", "Read references/guide.md.")
    (skills / "demo" / "references").mkdir()
    (skills / "demo" / "references" / "guide.md").write_text("Guide text.\n", encoding="utf-8")
    (skills / "demo" / "leak.md").symlink_to(canary)
    (skills / "demo" / "out").symlink_to(outside, target_is_directory=True)
    (skills / "demo" / "references" / "up").symlink_to(Path("..") / "..", target_is_directory=True)
    return Arena(base, outside, canary, ws, docs, skills)


@pytest.fixture
def file_audit(arena: Arena) -> Iterator[FileAudit]:
    audit = FileAudit(forbidden=[arena.outside, Path("/etc/passwd"), Path("/etc/shadow")])
    try:
        yield audit
    finally:
        _RECORDER.active = False
        _RECORDER.events.clear()
