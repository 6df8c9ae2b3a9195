"""Turn files, directories and glob patterns into the list of files to index.

Honours ``.gitignore``, skips VCS and dependency folders, and gives every file left out a reason.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

import pathspec

from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.text.braces import MAX_BRACE_PATTERNS, expand_braces
from workspace_tools.core.text.glob_prune import both, folder_filter
from workspace_tools.core.text.safe_read import (
    check_path_length,
    is_inside,
    kind_problem,
    open_inside,
    read_inside,
)
from workspace_tools.core.types import SkippedFile

__all__ = [
    "DEFAULT_EXCLUDED_DIRS",
    "DEFAULT_EXCLUDED_FILES",
    "MAX_BRACE_PATTERNS",
    "SKILL_FOLDER_WALK",
    "PathRules",
    "ScanConfig",
    "ScanResult",
    "expand_braces",
    "glob_matcher",
    "is_glob",
    "normalise_id",
    "open_inside",
    "read_inside",
    "resolve_inside",
    "scan",
]

DEFAULT_EXCLUDED_DIRS: Final[frozenset[str]] = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "env",
        ".env",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".workspace_tools",
        ".ipynb_checkpoints",
        "site-packages",
        "dist",
        "build",
    }
)
"""Folder names never walked into."""

DEFAULT_EXCLUDED_FILES: Final[frozenset[str]] = frozenset({"workspace-tools.yaml"})
"""File names left out of folder walks (the project's settings file); read when named."""

_GLOB_CHARS: Final = re.compile(r"[*?\[\]{}]")
_PLAIN_ID: Final = re.compile(r"[^/\\\x00][^\\\x00]*[^/\\\x00]|[^/\\\x00.]")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanConfig:
    """What a scan walks into and what it leaves out."""

    max_depth: int = 10
    """Deepest folder level walked below a scanned directory (Mastra's limit)."""
    max_file_bytes: int = 20 * 1024 * 1024
    """Files larger than this are skipped with reason ``too large``."""
    respect_gitignore: bool = True
    """Leave out what ``.gitignore`` files ignore."""
    include_hidden: bool = False
    """Walk into dot-files and dot-folders."""
    excluded_dirs: frozenset[str] = DEFAULT_EXCLUDED_DIRS
    """Folder names never walked into."""
    excluded_files: frozenset[str] = DEFAULT_EXCLUDED_FILES
    """File names left out when a folder is walked (a file named explicitly is still read)."""
    refuse_hard_links: bool = False
    """Skip files with more than one hard link (see docs/security.md)."""

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_file_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                msg = f"ScanConfig: {name} must be a whole number >= 0, got {value!r}."
                raise InvalidInputError(msg)

    def read(self, root: Path, rel: str) -> tuple[bytes, os.stat_result]:
        """The bytes and ``fstat`` of file ``rel`` under ``root``, within this walk's limits.

        Raises:
            OSError: the file cannot be read.
            InvalidInputError: a link out of the root, not a regular file, over the size limit.
        """
        return read_inside(
            root, rel, max_bytes=self.max_file_bytes, refuse_hard_links=self.refuse_hard_links
        )


SKILL_FOLDER_WALK: Final = ScanConfig(
    max_depth=20,
    max_file_bytes=2**62,
    respect_gitignore=False,
    include_hidden=True,
    excluded_dirs=frozenset({".git", "__pycache__"}),
)
"""How a skill's own folder is listed: every file, links out of the folder left out."""


@dataclass(slots=True)
class ScanResult:
    """Files found by :func:`scan`."""

    files: dict[str, Path] = field(default_factory=dict)
    """Id (root-relative POSIX path) -> absolute path, in walk order."""
    skipped: list[SkippedFile] = field(default_factory=list)
    """Files left out, with reasons."""
    in_scope: Callable[[str], bool] = field(default=lambda _id: True)
    """Whether an id lies inside what was scanned (used to find deleted files)."""


def is_glob(path: str) -> bool:
    """True when ``path`` contains glob characters."""
    return bool(_GLOB_CHARS.search(path))


def normalise_id(root: Path, path: str | os.PathLike[str]) -> str:
    """Root-relative POSIX id of ``path``; raise when it lies outside (resolved) ``root``."""
    raw = os.fspath(path)
    if (
        _PLAIN_ID.fullmatch(raw)
        and "/./" not in raw
        and "//" not in raw
        and not raw.startswith("./")
    ):
        parts = raw.split("/")
        if ".." not in parts and "." not in parts:
            return raw
    if "\x00" in raw:
        msg = f"Path {raw!r} contains a NUL byte. Pass a plain relative path inside the workspace."
        raise InvalidInputError(msg)
    candidate = Path(raw)
    absolute = candidate if candidate.is_absolute() else root / candidate
    normal = Path(os.path.normpath(absolute))
    try:
        relative = normal.relative_to(root)
    except ValueError:
        msg = (
            f"Path {raw!r} is outside the workspace root {str(root)!r}. "
            "Use a path relative to the workspace root, without '..'."
        )
        raise PathOutsideWorkspaceError(msg) from None
    text = relative.as_posix()
    return "" if text == "." else text


def resolve_inside(root: Path, path: str | os.PathLike[str]) -> Path:
    """Absolute path of ``path`` under ``root`` after following symlinks; raise if it escapes."""
    check_path_length(os.fspath(path))
    rel = normalise_id(root, path)
    resolved = _resolve(root / rel)
    if resolved is None:
        msg = (
            f"Path {os.fspath(path)!r} changed while it was being resolved (a link was replaced). "
            "Try again once the folder is stable."
        )
        raise InvalidInputError(msg)
    if resolved != root and root not in resolved.parents:
        msg = (
            f"Path {os.fspath(path)!r} leads outside the workspace root through a symbolic link. "
            "Only files inside the workspace can be read."
        )
        raise PathOutsideWorkspaceError(msg)
    return resolved


def scan(
    root: Path,
    paths: Sequence[str] | None = None,
    *,
    config: ScanConfig | None = None,
    folders: Callable[[str], bool] | None = None,
) -> ScanResult:
    """Find the files to index under ``root``.

    Args:
        root: Absolute, resolved workspace root.
        paths: Files, directories or glob patterns relative to ``root``; ``None`` scans the root.
        config: Walk limits.
        folders: Walk into a folder only when this holds for its path; ``None``: every folder.

    Returns:
        The files, the skipped files with reasons, and a scope predicate.
    """
    cfg = config or ScanConfig()
    walker = _Walker(root, cfg)
    walker._descend = folders
    scopes: list[Callable[[str], bool]] = []
    for entry in paths if paths is not None else ["."]:
        text = os.fspath(entry)
        check_path_length(text)
        if is_glob(text):
            walker.walk_glob(text)
            scopes.append(glob_matcher(_strip_dot(normalise_id_glob(root, text))))
            continue
        rel = normalise_id(root, text.rstrip("/") or ".")
        absolute = root / rel if rel else root
        resolved = _resolve(absolute)
        if resolved is None:
            walker.skip(rel, "unreadable: it changed while it was being scanned")
            scopes.append(_exact_matcher(rel))
        elif not is_inside(root, resolved):  # a symlink anywhere along the path
            walker.skip(rel, "outside workspace: symbolic link leads outside the root")
        elif absolute.is_dir():
            walker.walk_dir(absolute, rel, depth=0)
            scopes.append(_prefix_matcher(rel))
        elif absolute.exists():  # a file, or a FIFO/device that add_file refuses by name
            walker.add_file(absolute, rel)
            scopes.append(_exact_matcher(rel))
        else:
            walker.skip(rel or ".", "missing: no such file or directory")
            scopes.append(_prefix_matcher(rel))
    result = walker.result
    result.in_scope = lambda i: any(scope(i) for scope in scopes)
    return result


def normalise_id_glob(root: Path, pattern: str) -> str:
    """Root-relative form of a glob pattern (absolute patterns inside root are accepted)."""
    if pattern.startswith("/"):
        root_text = root.as_posix().rstrip("/") + "/"
        if not pattern.startswith(root_text):
            msg = f"Glob {pattern!r} is outside the workspace root {str(root)!r}."
            raise PathOutsideWorkspaceError(msg)
        pattern = pattern[len(root_text) :]
    if ".." in PurePosixPath(pattern).parts:
        msg = f"Glob {pattern!r} contains '..'. Use a pattern relative to the workspace root."
        raise PathOutsideWorkspaceError(msg)
    return pattern


class _Walker:
    def __init__(self, root: Path, config: ScanConfig) -> None:
        self.root = root
        self.config = config
        self.result = ScanResult()
        self._ignores: dict[str, pathspec.PathSpec[Any] | None] = {}
        self._descend: Callable[[str], bool] | None = None  # enter a folder only if it holds

    def skip(self, rel: str, reason: str) -> None:
        self.result.skipped.append(SkippedFile(path=rel, reason=reason))

    def add_file(self, absolute: Path, rel: str) -> None:
        if rel in self.result.files:
            return
        try:
            if absolute.is_symlink() and not is_inside(self.root, absolute.resolve(strict=True)):
                self.skip(rel, "outside workspace: symbolic link leads outside the root")
                return
            st = absolute.stat()
        except OSError as exc:
            self.skip(rel, f"unreadable: {exc.strerror or exc}")
            return
        problem = kind_problem(st, refuse_hard_links=self.config.refuse_hard_links)
        if problem is not None:
            self.skip(rel, problem)
            return
        size = st.st_size
        if size > self.config.max_file_bytes:
            self.skip(rel, f"too large: {size} bytes > limit {self.config.max_file_bytes}")
            return
        self.result.files[rel] = absolute

    def walk_dir(self, directory: Path, rel: str, *, depth: int) -> None:
        if depth > self.config.max_depth:
            self.skip(rel, f"depth limit: deeper than {self.config.max_depth} folders")
            return
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            self.skip(rel or ".", f"unreadable: {exc.strerror or exc}")
            return
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            if not self.config.include_hidden and entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in self.config.excluded_dirs or self._ignored(child, is_dir=True):
                    continue
                if self._descend is not None and not self._descend(child):
                    continue
                self.walk_dir(Path(entry.path), child, depth=depth + 1)
            elif entry.is_file() or entry.is_symlink():
                if entry.is_symlink() and os.path.isdir(entry.path):
                    continue  # symlinked folders are not followed
                if entry.name in self.config.excluded_files:
                    continue
                if not self._ignored(child, is_dir=False):
                    self.add_file(Path(entry.path), child)

    def walk_glob(self, pattern: str) -> None:
        rel_pattern = _strip_dot(normalise_id_glob(self.root, pattern))
        by_base: dict[str, list[str]] = {}
        for expanded in expand_braces(rel_pattern):
            base_parts: list[str] = []
            for part in PurePosixPath(expanded).parts:
                if is_glob(part):
                    break
                base_parts.append(part)
            by_base.setdefault("/".join(base_parts), []).append(expanded)
        for base, patterns in by_base.items():  # one walk per base folder
            specs = [glob_matcher(p) for p in patterns]
            matcher = specs[0] if len(specs) == 1 else (lambda r, m=specs: any(f(r) for f in m))
            base_dir = self.root / base if base else self.root
            resolved = _resolve(base_dir)
            if resolved is None or not is_inside(self.root, resolved):
                self.skip(base, "outside workspace: symbolic link leads outside the root")
                continue
            if base_dir.is_file():
                if matcher(base):
                    self.add_file(base_dir, base)
                continue
            if not base_dir.is_dir():
                continue
            found = _Walker(self.root, self.config)
            found._ignores = self._ignores
            found._descend = both(self._descend, folder_filter(patterns))  # prune the walk
            found.walk_dir(base_dir, base, depth=0)
            for rel, absolute in found.result.files.items():
                if matcher(rel) or any(matcher(parent) for parent in _parents(rel, base)):
                    self.add_file(absolute, rel)
            self.result.skipped.extend(s for s in found.result.skipped if matcher(s.path))

    def _ignored(self, rel: str, *, is_dir: bool) -> bool:
        if not self.config.respect_gitignore:
            return False
        parts = rel.split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            spec = self._spec_for(base)
            if spec is None:
                continue
            sub = "/".join(parts[depth:]) + ("/" if is_dir else "")
            if spec.match_file(sub):
                return True
        return False

    def _spec_for(self, base: str) -> pathspec.PathSpec[Any] | None:
        if base not in self._ignores:
            gitignore = (self.root / base / ".gitignore") if base else self.root / ".gitignore"
            spec = None
            if gitignore.is_file():
                try:
                    lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
                    spec = pathspec.PathSpec.from_lines("gitignore", lines)
                except (OSError, ValueError):
                    spec = None
            self._ignores[base] = spec
        return self._ignores[base]


def _resolve(path: Path) -> Path | None:
    """``path.resolve()``, or ``None`` when a link changes under it twice in a row."""
    for _ in range(2):
        try:
            return path.resolve()
        except OSError:  # a link replaced between lstat and readlink (EINVAL), a loop...
            continue
    return None


def _strip_dot(pattern: str) -> str:
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return pattern


def _exact_matcher(rel: str) -> Callable[[str], bool]:
    return lambda i: i == rel


def _prefix_matcher(rel: str) -> Callable[[str], bool]:
    if not rel:
        return lambda _i: True
    return lambda i: i == rel or i.startswith(rel + "/")


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """Predicate matching root-relative paths against a glob (gitignore rules, ``{a,b}``)."""
    specs = [pathspec.PathSpec.from_lines("gitignore", ["/" + p]) for p in expand_braces(pattern)]
    return lambda rel: any(spec.match_file(rel) for spec in specs)


def _parents(rel: str, base: str) -> Iterable[str]:
    parts = rel.split("/")
    start = len(base.split("/")) if base else 0
    for end in range(start + 1, len(parts)):
        yield "/".join(parts[:end])


class PathRules:
    """Whether a scan of the whole root would reach a path (``.gitignore`` read once)."""

    def __init__(self, root: Path, config: ScanConfig | None = None) -> None:
        self._walker = _Walker(root, config or ScanConfig())

    def admits(self, rel: str, *, is_dir: bool = False) -> bool:
        """True when a full scan would walk into ``rel`` (a root-relative POSIX path)."""
        config = self._walker.config
        parts = [p for p in rel.split("/") if p]
        if not parts or len(parts) - (0 if is_dir else 1) > config.max_depth:
            return not parts
        for depth, name in enumerate(parts, start=1):
            folder = is_dir or depth < len(parts)
            if not config.include_hidden and name.startswith("."):
                return False
            if folder and name in config.excluded_dirs:
                return False
            if self._walker._ignored("/".join(parts[:depth]), is_dir=folder):
                return False
        return True
