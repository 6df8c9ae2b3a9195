"""Checks of an index database before anything reads or writes it: format, tables, meta."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Final

from workspace_tools.core.errors import IndexCorruptError, IndexMismatchError

__all__ = ["TABLES", "check_database"]

TABLES: Final = frozenset({"meta", "sources", "chunks", "removed", "vectors"})
"""Tables every index database holds."""
_COUNTERS: Final = ("version", "horizon")


def _damaged(path: Path, problem: str) -> IndexCorruptError:
    return IndexCorruptError(
        f"The index database {path} is damaged ({problem}). Open the workspace with "
        "rebuild=True (CLI: --rebuild) to rebuild it."
    )


def check_database(conn: sqlite3.Connection, path: Path, *, current: int) -> int | None:
    """The database's format version, its tables and meta checked; ``None`` for a new file.

    Args:
        conn: A connection to the database (read-only is enough).
        path: The database file (for messages).
        current: The format version this package writes.

    Raises:
        IndexMismatchError: A format this version cannot read (e.g. a newer one).
        IndexCorruptError: a table is missing, or a ``meta`` value does not parse.
    """
    tables = {
        str(name) for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    if not tables & TABLES:
        return None  # a writer killed while creating the file: no index yet
    if "meta" not in tables:
        raise _damaged(path, "the meta table is missing")
    meta = {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    raw = meta.get("format_version")
    try:
        found = int(raw) if raw is not None else -1
    except ValueError:
        found = -1
    if found < 0:
        raise _damaged(path, f"its format version is {raw!r}")
    if found != current:
        newer = found > current
        writer = f"a newer workspace-tools {meta.get('written_by', 'release')}"
        advice = "upgrade workspace-tools to open it, or replace it" if newer else "Rebuild it"
        msg = (
            f"The index database {path} was written by {writer if newer else 'an older release'}"
            f" (format {found}; this version reads format {current}); it was left unchanged. "
            f"{advice} with Workspace(root, rebuild=True) (CLI: --rebuild)."
        )
        raise IndexMismatchError(msg)
    missing = sorted(TABLES - tables)
    if missing:
        raise _damaged(path, f"table {', '.join(missing)} is missing")
    for key in _COUNTERS:
        value = meta.get(key)
        if value is None or not value.isascii() or not value.isdigit():
            raise _damaged(path, f"meta {key!r} is {value!r}, not a count")
    last_key = meta.get("last_key")
    if last_key is None or not last_key.isascii() or not last_key.isdigit():
        raise _damaged(path, f"meta 'last_key' is {last_key!r}, not a count")
    if "database_id" not in meta:
        raise _damaged(path, "meta 'database_id' is missing")
    settings = meta.get("settings")
    if settings is not None:
        try:
            parsed = json.loads(settings)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise _damaged(path, f"meta 'settings' is not a JSON object: {settings[:40]!r}")
    return found
