"""What an MCP server serves: the tool groups, their roots and ``--read-only``.

Settings come from the ``mcp`` section of ``workspace-tools.yaml``; command-line flags win.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import InvalidInputError

__all__ = ["SECTION", "ServerOptions", "server_options"]

SECTION: Final = "mcp"
"""Top-level key of the MCP settings in ``workspace-tools.yaml``."""
_KEYS: Final = frozenset(
    {"workspace", "docs", "docs_scopes", "skills", "read_only", "sync", "watch", "name"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerOptions:
    """The tool groups of one server and how it runs."""

    root: Path
    """Project root: relative paths below are resolved against it."""
    workspace: Path | None = None
    """Workspace folder (``None``: no workspace tools)."""
    docs: Path | None = None
    """Documentation folder (``None``: no docs tools)."""
    docs_scopes: tuple[str, ...] = ()
    """Subfolders of ``docs``, each served as its own set of scoped tools."""
    skills: tuple[str, ...] = ()
    """Skills paths relative to ``root`` (empty: no skill tools)."""
    read_only: bool = False
    """Never write: no ``workspace_index``, no indexing at start-up or before a search."""
    sync: bool = True
    """Index new and changed workspace files at start-up (ignored when read-only)."""
    watch: bool = True
    """Keep following the workspace files after start-up (ignored when read-only)."""
    name: str = "workspace-tools"
    """Server name reported to clients."""
    index_dir: Path | None = None
    """The workspace's index folder (``--index-dir``; ``None``: the workspace's own)."""
    mounts: Mapping[str, str] | None = None
    """More folders of the workspace, prefix -> folder (``--mount``; docs/mounts.md)."""

    def with_flags(self, **flags: Any) -> ServerOptions:
        """A copy with the flags that were given (``None`` and empty values are left out)."""
        given = {k: v for k, v in flags.items() if v not in (None, (), [])}
        for key in ("workspace", "docs"):
            if key in given:
                given[key] = _path(self.root, given[key])
        for key in ("docs_scopes", "skills"):
            if key in given:
                given[key] = tuple(given[key])
        return replace(self, **given)

    def defaulted(self, project_skills: Sequence[str]) -> ServerOptions:
        """With no group chosen, the workspace at ``root`` and the project's (or managed) skills."""
        from workspace_tools.core.skills import MANAGED_DIR

        if self.workspace is None and self.docs is None and not self.skills:
            managed = (MANAGED_DIR,) if (self.root / MANAGED_DIR).is_dir() else ()
            return replace(self, workspace=self.root, skills=tuple(project_skills) or managed)
        return self


def _inside(config: ProjectConfig, key: str, value: Any) -> Path:
    """A folder the project file names, refused outside the project root (flags may)."""
    if not isinstance(value, str) or "\x00" in value:
        msg = f"'{key}' in '{SECTION}' in {config.path} must be a path (a string), got {value!r}."
        raise InvalidInputError(msg)
    path = (config.root / value).resolve()
    root = config.root.resolve()
    if path != root and root not in path.parents:
        msg = (
            f"'{SECTION}.{key}: {value}' in {config.path} is refused: it points outside the "
            f"project root ({path}), and the folder's own file may not serve another folder. "
            f"Pass --{key} {value} to `workspace-tools mcp` instead."
        )
        raise InvalidInputError(msg)
    return path


def _path(root: Path, value: str | os.PathLike[str]) -> Path:
    return (root / Path(value).expanduser()).resolve()


def _strings(raw: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key) or []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        msg = f"'{key}' in {where} must be a list of strings, got {value!r}."
        raise InvalidInputError(msg)
    return tuple(value)


def server_options(root: str | os.PathLike[str]) -> ServerOptions:
    """The options of the ``mcp`` section of ``<root>/workspace-tools.yaml``.

    Raises:
        InvalidInputError: an unknown key or a value of the wrong shape, naming the key.
    """
    config = ProjectConfig.load(root)
    raw = config.section(SECTION, known=_KEYS)
    where = f"'{SECTION}' in {config.path}"
    for key in ("read_only", "sync", "watch"):
        if key in raw and not isinstance(raw[key], bool):
            msg = f"'{key}' in {where} must be true or false, got {raw[key]!r}."
            raise InvalidInputError(msg)
    options = ServerOptions(
        root=config.root,
        workspace=_inside(config, "workspace", raw["workspace"]) if raw.get("workspace") else None,
        docs=_inside(config, "docs", raw["docs"]) if raw.get("docs") else None,
        docs_scopes=_strings(raw, "docs_scopes", where),
        skills=_strings(raw, "skills", where) if "skills" in raw else (),
        read_only=bool(raw.get("read_only", False)),
        sync=bool(raw.get("sync", True)),
        watch=bool(raw.get("watch", True)),
        name=str(raw.get("name", "workspace-tools")),
    )
    if "skills" not in raw and (options.workspace is not None or options.docs is not None):
        options = replace(options, skills=config.skills)
    return options
