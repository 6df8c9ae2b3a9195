"""Find SKILL.md files from configured paths: folders, single skills, SKILL.md paths and globs.

A folder with ``SKILL.md`` is one skill, any other its sub-folders with one; a glob matches up to
:data:`GLOB_MAX_DEPTH` levels. The paths ``stat`` watches for freshness are recorded too.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from workspace_tools.core.skills.model import RESOURCE_DIRS, SkillDiagnostic
from workspace_tools.core.text.scan import SKILL_FOLDER_WALK, glob_matcher, is_glob, scan

__all__ = [
    "GLOB_MAX_DEPTH",
    "Discovery",
    "discover",
    "is_glob",
    "list_resources",
    "spec_root",
    "stat_signature",
]

GLOB_MAX_DEPTH: Final = 4
"""Folders more than this many levels below a glob's base are not visited."""
MAX_WALKED_DIRS: Final = 5000
MAX_RESOURCE_FILES: Final = 500
_SKIP_DIRS: Final = frozenset({".git", "__pycache__"})

Signature = tuple[tuple[str, int, int], ...]


@dataclass(slots=True)
class Discovery:
    """What one configured path yields."""

    skill_files: list[Path] = field(default_factory=list)
    """SKILL.md files found (absolute, not resolved), in a stable order."""
    watched: list[Path] = field(default_factory=list)
    """Files and folders to ``stat`` to know whether discovery must run again."""
    diagnostics: list[SkillDiagnostic] = field(default_factory=list)
    allowed: list[Path] = field(default_factory=list)
    """Resolved folders, besides the path's own, that a link may lead into."""


def spec_root(spec: str | os.PathLike[str], *, base: Path) -> Path:
    """The folder a configured path confines its skills to (a glob's fixed base folder)."""
    text = os.fspath(spec).replace("\\", "/")
    if len(text) > 1:
        text = text.rstrip("/")
    if is_glob(text):
        fixed = []
        for part in text.split("/"):
            if is_glob(part):
                break
            fixed.append(part)
        text = "/".join(fixed) or ("/" if text.startswith("/") else ".")
    path = Path(text).expanduser()
    path = Path(os.path.normpath(path if path.is_absolute() else base / path))
    return path.parent if path.name == "SKILL.md" else path


def discover(
    spec: str | os.PathLike[str], *, base: Path, allowed: Sequence[Path] = ()
) -> Discovery:
    """SKILL.md files for one configured path (links followed only into ``allowed`` folders)."""
    text = os.fspath(spec).replace("\\", "/")
    if len(text) > 1:
        text = text.rstrip("/")
    out = Discovery()
    out.allowed = [Path(os.path.realpath(p)) for p in allowed]
    if is_glob(text):
        _discover_glob(text, base=base, out=out)
        return out
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = base / path
    path = Path(os.path.normpath(path))
    out.watched.append(path)
    if path.name == "SKILL.md":
        if path.is_file():
            _add_skill(path, out, root=path.parent)
        else:
            out.diagnostics.append(_missing(text, path))
    elif path.is_dir():
        _expand_dir(path, out)
    else:
        out.diagnostics.append(_missing(text, path))
    return out


def list_resources(folder: Path) -> tuple[str, ...]:
    """Files under ``references/``, ``scripts/`` and ``assets/`` (links not followed, capped)."""
    subs = [sub for sub in RESOURCE_DIRS if (folder / sub).is_dir()]
    if not subs:
        return ()
    found = scan(folder.resolve(), subs, config=SKILL_FOLDER_WALK)
    return tuple(sorted(found.files)[:MAX_RESOURCE_FILES])


def stat_signature(paths: list[Path]) -> Signature:
    """``(path, mtime_ns, size)`` of each path; ``(-1, -1)`` for a missing one."""
    out = []
    for path in paths:
        try:
            st = path.stat()
            out.append((str(path), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(path), -1, -1))
    return tuple(out)


def _add_skill(skill_md: Path, out: Discovery, *, root: Path) -> None:
    """Add a skill unless its folder or its SKILL.md is a link that leads out of ``root``."""
    roots = [Path(os.path.realpath(root)), *out.allowed]
    for part in (skill_md.parent, skill_md):
        real = Path(os.path.realpath(part))
        if not any(real == r or r in real.parents for r in roots):
            out.diagnostics.append(
                SkillDiagnostic(
                    path=str(part),
                    message=(
                        f"links outside the skills folder {str(root)!r} (to {str(real)!r}); "
                        "it is not loaded. Copy the skill into the folder instead of linking it."
                    ),
                )
            )
            return
    out.skill_files.append(skill_md)
    out.watched.append(skill_md)
    folder = skill_md.parent
    out.watched.append(folder)
    for sub in RESOURCE_DIRS:
        top = folder / sub
        if top.is_dir() and not top.is_symlink():  # linked resource folders are not listed
            out.watched.append(top)
            out.watched.extend(p for p in sorted(top.rglob("*")) if p.is_dir())
    for rel in list_resources(folder):
        if rel.startswith("references/"):
            out.watched.append(folder / rel)


def _expand_dir(path: Path, out: Discovery) -> None:
    skill_md = path / "SKILL.md"
    if skill_md.is_file():
        _add_skill(skill_md, out, root=path)
        return
    try:
        children = sorted(e.path for e in os.scandir(path) if e.is_dir())
    except OSError as exc:
        out.diagnostics.append(
            SkillDiagnostic(path=str(path), message=f"cannot list the folder ({exc.strerror}).")
        )
        return
    for child in children:
        child_path = Path(child)
        out.watched.append(child_path)
        if (child_path / "SKILL.md").is_file():
            _add_skill(child_path / "SKILL.md", out, root=path)


def _discover_glob(pattern: str, *, base: Path, out: Discovery) -> None:
    while pattern.startswith("./"):
        pattern = pattern[2:]
    parts = pattern.split("/")
    fixed: list[str] = []
    for part in parts:
        if is_glob(part):
            break
        fixed.append(part)
    rest = parts[len(fixed) :]
    root = Path("/".join(fixed) or ".").expanduser()
    if pattern.startswith("/") and not fixed[1:]:
        root = Path("/")
    if not root.is_absolute():
        root = base / root
    root = Path(os.path.normpath(root))
    out.watched.append(root)
    if not root.is_dir():
        out.diagnostics.append(_missing(pattern, root))
        return
    matcher = glob_matcher("/".join(rest))
    seen: set[Path] = set()
    visited: set[str] = set()
    stack: list[tuple[Path, int]] = [(root, 0)]
    matches: list[Path] = []
    while stack and len(visited) < MAX_WALKED_DIRS:
        current, depth = stack.pop()
        real = os.path.realpath(current)
        if real in visited:
            continue
        visited.add(real)
        out.watched.append(current)
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            is_dir = entry.is_dir()
            deep_enough = not is_dir or depth + 1 <= GLOB_MAX_DEPTH
            if deep_enough and matcher(rel):
                matches.append(Path(entry.path))
            walk = is_dir and not entry.is_symlink()  # linked folders are matched, not walked
            if walk and depth + 1 <= GLOB_MAX_DEPTH and entry.name not in _SKIP_DIRS:
                stack.append((Path(entry.path), depth + 1))
    for match in sorted(matches):
        if match.name == "SKILL.md" and match.is_file():
            if match not in seen:
                seen.add(match)
                _add_skill(match, out, root=root)
        elif match.is_dir():
            target = Path(os.path.realpath(match))
            roots = [Path(os.path.realpath(root)), *out.allowed]
            if not any(target == r or r in target.parents for r in roots):
                out.diagnostics.append(
                    SkillDiagnostic(
                        path=str(match),
                        message=(
                            f"links outside the skills folder {str(root)!r} "
                            f"(to {str(target)!r}); it is not loaded."
                        ),
                    )
                )
                continue
            sub = Discovery(allowed=out.allowed)
            _expand_dir(match, sub)
            out.watched.extend(sub.watched)
            out.diagnostics.extend(sub.diagnostics)
            for found in sub.skill_files:
                if found not in seen:
                    seen.add(found)
                    out.skill_files.append(found)


def _missing(spec: str, path: Path) -> SkillDiagnostic:
    return SkillDiagnostic(
        path=spec,
        message=f"skills path does not exist (looked for {path}); create it or fix the path.",
    )
