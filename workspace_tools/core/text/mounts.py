"""Folders mounted under path prefixes of one workspace: one index, ids like ``docs/guide.md``.

A file ``guide.md`` of the folder mounted at ``/docs`` has the id ``docs/guide.md``; every other
id is a path under the root. Each path resolves inside its own folder: a link out of a mount is
not followed, as a link out of the root is not (:func:`~.scan.resolve_inside`).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.text.safe_read import is_inside
from workspace_tools.core.text.scan import (
    ScanConfig,
    ScanResult,
    is_glob,
    normalise_id,
    resolve_inside,
    scan,
)

__all__ = ["Mounts"]

_PREFIX: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


class Mounts:
    """A workspace root and the folders mounted under its prefixes (empty: the root alone).

    Args:
        root: The resolved workspace root.
        folders: Prefix (``"/docs"`` or ``"docs"``) -> folder (relative paths: to the root).

    Raises:
        InvalidInputError: a prefix that is not one simple name or that names an entry of the
            root, a missing folder, or folders that overlap each other or hold the root.
    """

    def __init__(
        self, root: Path, folders: Mapping[str, str | os.PathLike[str]] | None = None
    ) -> None:
        self.root = root
        self.folders: dict[str, Path] = {}
        for prefix, value in (folders or {}).items():
            name = str(prefix).strip("/")
            where = f"Mount '/{name}' -> {str(value)!r}"
            if not _PREFIX.fullmatch(name) or name in self.folders:
                msg = (
                    f"{where}: the prefix must be one simple folder name, given once (letters, "
                    "digits, '.', '_', '-'; like '/docs'). Rename the prefix."
                )
                raise InvalidInputError(msg)
            if os.path.lexists(root / name):
                msg = (
                    f"{where}: the workspace root already has an entry {name!r} "
                    f"({root / name}); its files and the mount's would share ids. Choose "
                    "another prefix."
                )
                raise InvalidInputError(msg)
            folder = (root / Path(value).expanduser()).resolve()
            if not folder.is_dir():
                msg = f"{where}: no such folder ({folder}). Mount an existing folder."
                raise InvalidInputError(msg)
            clash = [f"the workspace root {root}"] if is_inside(folder, root) else []
            clash += [f"mount '/{n}' ({f})" for n, f in self if _nested(f, folder)]
            if clash:
                msg = (
                    f"{where}: the folder {folder} overlaps {clash[0]}; its files would be "
                    "indexed twice. Mount folders that do not contain one another."
                )
                raise InvalidInputError(msg)
            self.folders[name] = folder

    @classmethod
    def merged(cls, root: Path, *layers: Mapping[str, str | os.PathLike[str]] | None) -> Mounts:
        """The mounts of several mappings; a later one's prefix replaces an earlier one's."""
        given = [item for layer in layers for item in (layer or {}).items()]
        return cls(root, {str(k).strip("/"): v for k, v in given})

    def __iter__(self) -> Iterator[tuple[str, Path]]:
        """``(prefix, folder)`` of each mount (the prefix without its slash)."""
        return iter(self.folders.items())

    def __bool__(self) -> bool:
        return bool(self.folders)

    def route(self, source_id: str) -> tuple[Path, str]:
        """The folder holding a (normalised) source id, and the id's path inside it."""
        head, _, rest = source_id.partition("/")
        folder = self.folders.get(head)
        return (self.root, source_id) if folder is None else (folder, rest)

    def id_of(self, path: str) -> str:
        """A path given by a caller as a source id: root-relative, ``/docs/...`` or absolute.

        Raises:
            PathOutsideWorkspaceError: it lies outside the root and every mount.
        """
        if path.startswith("/") and self.folders:
            found = self.source_id(Path(os.path.normpath(path)))
            if found is not None:
                return found
            if path.lstrip("/").partition("/")[0] in self.folders:
                path = path.lstrip("/")
        return normalise_id(self.root, path)

    def resolve(self, path: str) -> Path:
        """The real path of ``path`` (see :meth:`id_of`), inside its own folder.

        Raises:
            PathOutsideWorkspaceError: it leaves the root, or its mount through a link.
        """
        source_id = self.id_of(path)
        folder, inner = self.route(source_id)
        try:
            return resolve_inside(folder, inner)
        except PathOutsideWorkspaceError:
            if folder == self.root:
                raise
            msg = (
                f"Path {source_id!r} leads outside its mount ({folder}) through a symbolic "
                "link. Only files inside the mount can be read."
            )
            raise PathOutsideWorkspaceError(msg) from None

    def path(self, source_id: str) -> Path:
        """Where a source id lies on disk (links not resolved)."""
        folder, rest = self.route(source_id)
        return folder / rest if rest else folder

    def source_id(self, path: Path) -> str | None:
        """The id of an absolute path in a mount or the root (``None``: outside them)."""
        for name, folder in (*self, ("", self.root)):
            if is_inside(folder, path):
                return _join(name, path.relative_to(folder).as_posix())
        return None

    def scan(
        self,
        paths: Sequence[str] | None,
        *,
        config: ScanConfig | None = None,
        folders: Callable[[str], bool] | None = None,
    ) -> ScanResult:
        """:func:`~.scan.scan` over the root and the mounts; ids carry the mount prefix.

        ``.`` walks the root and every mount; ``docs/...`` (a file, folder or glob) walks the
        ``/docs`` mount; a glob starting with ``**`` walks them all; any other path the root.
        """
        if not self.folders:
            return scan(self.root, paths, config=config, folders=folders)
        routed: dict[str, list[str]] = {}
        for entry in ["."] if paths is None else paths:
            for name, inner in self._split(os.fspath(entry)):
                routed.setdefault(name, []).append(inner)
        out = ScanResult()
        scopes: list[Callable[[str], bool]] = []
        for name, inner_paths in routed.items():
            folder, walk = self.folders.get(name, self.root), self._folders(name, folders)
            found = scan(folder, inner_paths, config=config, folders=walk)
            add = functools.partial(_join, name) if name else str
            for rel, file in found.files.items():
                if name or rel.partition("/")[0] not in self.folders:  # a mount shadows the root
                    out.files[add(rel)] = file
            out.skipped += [dataclasses.replace(s, path=add(s.path)) for s in found.skipped]
            scopes.append(self._scope(name, found.in_scope))
        out.in_scope = lambda i: any(scope(i) for scope in scopes)
        return out

    def _split(self, entry: str) -> list[tuple[str, str]]:
        """``(prefix, path inside its folder)`` pairs a scan path walks (``""``: the root)."""
        if entry.startswith("/") and not is_glob(entry):
            entry = self.id_of(entry.rstrip("/") or "/")
        elif entry.lstrip("/").partition("/")[0] in self.folders:
            entry = entry.lstrip("/")
        text = entry if is_glob(entry) else normalise_id(self.root, entry.rstrip("/") or ".")
        while text.startswith("./"):
            text = text[2:]
        head, _, rest = text.partition("/")
        if head in self.folders:
            return [(head, rest or ".")]
        if text in ("", ".") or head.startswith("**"):
            return [("", text or "."), *((name, text or ".") for name in self.folders)]
        return [("", text)]

    def _folders(
        self, name: str, folders: Callable[[str], bool] | None
    ) -> Callable[[str], bool] | None:
        """Which folders the walk of ``name`` enters; the root's skips mount folders inside it."""
        if name:
            return None if folders is None else (lambda r: folders(f"{name}/{r}"))
        inside = {f.relative_to(self.root).as_posix() for _, f in self if is_inside(self.root, f)}
        return lambda r: r not in inside and (folders is None or folders(r))

    def _scope(self, name: str, in_scope: Callable[[str], bool]) -> Callable[[str], bool]:
        if not name:
            return lambda i: i.partition("/")[0] not in self.folders and in_scope(i)
        return lambda i: i.partition("/")[0] == name and in_scope(i.partition("/")[2])


def _nested(a: Path, b: Path) -> bool:
    return is_inside(a, b) or is_inside(b, a)


def _join(name: str, rel: str) -> str:
    """``docs`` + ``a/b.md`` -> ``docs/a/b.md``; ``.`` and empty parts are left out."""
    return "/".join(part for part in (name, rel) if part not in ("", "."))
