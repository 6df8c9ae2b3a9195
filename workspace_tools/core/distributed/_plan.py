"""The driver's side: which files a local sync would convert, chunk and embed (its decision)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workspace_tools.core.convert import DOCUMENT_EXTENSIONS, Converted
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.text.hashing import text_hash

if TYPE_CHECKING:
    from workspace_tools.core.workspace import Workspace

__all__ = [
    "FileWork",
    "converted_from_json",
    "converted_to_json",
    "file_work",
    "scan_files",
]


@dataclass(slots=True)
class FileWork:
    """A new or changed file: its bytes to convert, or its conversion already cached."""

    rel: str
    digest: str
    data: bytes
    """The file's bytes (empty when ``converted`` is set)."""
    converted: str
    """A cached conversion as JSON (rich documents converted before), else ``""``."""


def converted_to_json(converted: Converted) -> str:
    """A conversion as JSON, to cross the cluster."""
    return json.dumps(
        {
            "text": converted.text,
            "format": converted.format,
            "markdown": converted.markdown,
            "metadata": converted.metadata,
        },
        ensure_ascii=False,
    )


def converted_from_json(text: str) -> Converted:
    """The :class:`Converted` :func:`converted_to_json` wrote."""
    raw: dict[str, Any] = json.loads(text)
    return Converted(
        text=raw["text"],
        format=raw["format"],
        markdown=bool(raw["markdown"]),
        metadata=dict(raw["metadata"]),
    )


def scan_files(workspace: Workspace, paths: Sequence[str] | None) -> list[tuple[str, Path]]:
    """The files a sync of ``workspace`` over ``paths`` walks (``None``: its default paths)."""
    root = workspace.root
    found = workspace.mounts.scan(
        paths if paths is not None else workspace.default_paths, config=workspace.scan_config
    )
    try:
        index_rel: str | None = workspace.index_dir.relative_to(root).as_posix()
    except ValueError:
        index_rel = None
    return [
        (rel, path)
        for rel, path in found.files.items()
        if not (index_rel and (rel == index_rel or rel.startswith(index_rel + "/")))
    ]


def file_work(workspace: Workspace, rel: str, path: Path) -> FileWork | None:
    """The work a sync would do on one scanned file; ``None`` when it would not stage it."""
    cfg = workspace.scan_config
    previous = workspace.source(rel)
    try:
        stat = path.stat()
        if (
            previous is not None
            and previous.kind == "file"
            and (previous.mtime_ns, previous.size) == (stat.st_mtime_ns, stat.st_size)
        ):
            return None
        data, _ = cfg.read(*workspace.mounts.route(rel))
    except (OSError, InvalidInputError):
        return None
    digest = text_hash(data)
    if previous is not None and previous.kind == "file" and previous.content_hash == digest:
        return None
    if Path(rel).suffix.lower() in DOCUMENT_EXTENSIONS:
        cached = workspace.conversion_cache.get(digest)
        if cached is not None:
            return FileWork(rel, digest, b"", converted_to_json(cached))
    return FileWork(rel, digest, data, "")
