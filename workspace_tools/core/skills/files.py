"""Read a file that belongs to a skill, safely: paths stay inside the skill folder."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.skills.model import Skill
from workspace_tools.core.text.scan import SKILL_FOLDER_WALK, read_inside, scan

__all__ = [
    "DEFAULT_MAX_LINES",
    "SkillFile",
    "list_skill_files",
    "read_skill_bytes",
    "read_skill_file",
]

DEFAULT_MAX_LINES: Final = 2000
"""Lines returned by a read without a range; longer files say how to page on."""
MAX_READ_BYTES: Final = 10_000_000
_BINARY_SNIFF: Final = 8000
_DRIVE: Final = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillFile:
    """Content of (part of) a skill file."""

    skill: str
    """Skill name."""
    path: str
    """Path relative to the skill root (POSIX)."""
    text: str
    """The requested lines, or ``""`` for a binary file."""
    start_line: int
    """First line returned (1-based); 0 for an empty or binary file."""
    end_line: int
    """Last line returned (inclusive); 0 for an empty or binary file."""
    total_lines: int
    """Lines in the whole file."""
    size: int
    """Size of the file in bytes."""
    binary: bool = False
    """True when the file is not text; ``text`` is then empty."""

    @property
    def truncated(self) -> bool:
        """True when lines after ``end_line`` were left out."""
        return not self.binary and self.end_line < self.total_lines


def list_skill_files(skill: Skill, *, limit: int = 200) -> list[str]:
    """Every file of a skill (relative POSIX paths, sorted, SKILL.md included), up to ``limit``."""
    files = set(skill.files)
    if skill.path is None:
        files.add("SKILL.md")
    if skill.path is not None and skill.path.is_dir():
        found = scan(skill.path.resolve(), config=SKILL_FOLDER_WALK)
        files.update(list(found.files)[: limit * 5])
    return sorted(files)[:limit]


def read_skill_file(
    skill: Skill,
    path: str,
    *,
    start_line: int | None = None,
    end_line: int | None = None,
    max_lines: int = DEFAULT_MAX_LINES,
) -> SkillFile:
    """Read ``path`` (relative to the skill root), optionally only lines ``start_line..end_line``.

    Raises:
        PathOutsideWorkspaceError: ``path`` leaves the skill folder.
        InvalidInputError: No such file, or the line range is empty or past the end.
    """
    rel = _normalise(skill, path)
    data = _read_bytes(skill, rel)
    size = len(data)
    if b"\x00" in data[:_BINARY_SNIFF]:
        return _binary(skill, rel, size)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _binary(skill, rel, size)
    lines = text.splitlines()
    total = len(lines)
    first = 1 if start_line is None else start_line
    if first < 1 or (end_line is not None and end_line < 1):
        msg = f"Line numbers are 1-based; got start_line={start_line}, end_line={end_line}."
        raise InvalidInputError(msg)
    if end_line is not None and end_line < first:
        msg = (
            f"start_line {first} is after end_line {end_line} for {rel!r} in skill "
            f"{skill.name!r}. Use start_line <= end_line (the file has {total} lines)."
        )
        raise InvalidInputError(msg)
    if total == 0:
        return SkillFile(
            skill=skill.name, path=rel, text="", start_line=0, end_line=0, total_lines=0, size=size
        )
    if first > total:
        msg = (
            f"File {rel!r} has {total} lines (valid range 1-{total}). Requested start_line "
            f"{first} is past the end of the file. The file has been fully read; stop paginating."
        )
        raise InvalidInputError(msg)
    last = min(total, end_line if end_line is not None else first + max_lines - 1)
    return SkillFile(
        skill=skill.name,
        path=rel,
        text="\n".join(lines[first - 1 : last]),
        start_line=first,
        end_line=last,
        total_lines=total,
        size=size,
    )


def read_skill_bytes(skill: Skill, path: str) -> bytes:
    """The bytes of ``path`` (relative to the skill root); raises as :func:`read_skill_file`."""
    return _read_bytes(skill, _normalise(skill, path))


def _normalise(skill: Skill, path: str) -> str:
    raw = path.strip().replace("\\", "/")
    if not raw:
        msg = f"A file path is required, relative to the root of skill {skill.name!r}."
        raise InvalidInputError(msg)
    if "\x00" in raw:
        msg = f"Invalid skill file path {path[:80]!r}: it contains a NUL byte."
        raise InvalidInputError(msg)
    if raw.startswith("/") or _DRIVE.match(raw):
        msg = (
            f"Invalid skill file path {path!r}: absolute paths are not allowed. Give a path "
            f"relative to the root of skill {skill.name!r}, e.g. 'references/guide.md'."
        )
        raise PathOutsideWorkspaceError(msg)
    parts = [p for p in PurePosixPath(raw).parts if p not in {"", "."}]
    if ".." in parts:
        msg = (
            f"Invalid skill file path {path!r}: '..' is not allowed. Paths are relative to the "
            f"root of skill {skill.name!r} and cannot leave it."
        )
        raise PathOutsideWorkspaceError(msg)
    return "/".join(parts)


def _read_bytes(skill: Skill, rel: str) -> bytes:
    if rel in skill.files:
        data = skill.files[rel]
        return data if isinstance(data, bytes) else data.encode("utf-8")
    if rel == "SKILL.md" and skill.path is None:
        return skill.body.encode("utf-8")
    if skill.path is not None:
        root = Path(os.path.realpath(skill.path))
        target = Path(os.path.realpath(skill.path / rel))
        if target != root and root not in target.parents:
            msg = (
                f"Invalid skill file path {rel!r}: it resolves outside skill {skill.name!r} "
                "(through a symlink). Only files inside the skill folder can be read."
            )
            raise PathOutsideWorkspaceError(msg)
        try:
            if target.is_file():
                if target.stat().st_size > MAX_READ_BYTES:
                    msg = (
                        f"File {rel!r} in skill {skill.name!r} is larger than "
                        f"{MAX_READ_BYTES} bytes; it cannot be read as a resource."
                    )
                    raise InvalidInputError(msg)
                # read through the descriptor: no link followed out of the skill folder
                data, _ = read_inside(
                    root, target.relative_to(root).as_posix(), max_bytes=MAX_READ_BYTES
                )
                return data
        except OSError as exc:
            msg = f"Cannot read {rel[:80]!r} in skill {skill.name!r}: {exc.strerror or exc}."
            raise InvalidInputError(msg) from exc
    available = list_skill_files(skill, limit=50)
    shown = ", ".join(available) if available else "(none)"
    msg = f"File {rel!r} not found in skill {skill.name!r}. Available files: {shown}."
    raise InvalidInputError(msg)


def _binary(skill: Skill, rel: str, size: int) -> SkillFile:
    return SkillFile(
        skill=skill.name,
        path=rel,
        text="",
        start_line=0,
        end_line=0,
        total_lines=0,
        size=size,
        binary=True,
    )
