"""Workspace settings read from the ``workspace`` section of ``workspace-tools.yaml``.

Example::

    skills: [skills]
    workspace:
      index_dir: .workspace_tools/index   # relative to the project root
      embedder: default                   # default | none | <sentence-transformers name or path>
      paths: [docs, src]                  # what `sync()` and `workspace-tools index` scan
      fusion: zscore                      # zscore | weighted | rrf | minmax | spread
      vector_weight: 0.5
      ranking_prior: true                 # weigh scores by kind of file (navigation, lockfile)
      bm25: {k1: 1.2, b: 0.6}
      chunking: {max_chars: 4000, overlap_lines: 3}
      scan: {max_depth: 10, max_file_bytes: 20971520, include_hidden: false}
      conversion: {seconds: 10, memory_bytes: 536870912, per_format: {pdf: {seconds: 30}}}
      read_only: false
      backend: embedded                   # embedded | milvus | {type: milvus, uri: ..., ...}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.backends.config import backend_config
from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.convert.limits import ConversionLimits
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.scan import ScanConfig

__all__ = ["SECTION", "workspace_options"]

SECTION: Final = "workspace"
"""Top-level key of the workspace settings in ``workspace-tools.yaml``."""

_KEYS: Final = {
    "index_dir",
    "embedder",
    "paths",
    "fusion",
    "vector_weight",
    "ranking_prior",
    "bm25",
    "chunking",
    "scan",
    "conversion",
    "read_only",
    "backend",
}
_SECTIONS: Final[dict[str, Any]] = {
    "bm25": BM25Config,
    "chunking": ChunkingConfig,
    "scan": ScanConfig,
    "conversion": ConversionLimits,
}


def workspace_options(config: ProjectConfig) -> tuple[dict[str, Any], list[str] | None]:
    """Keyword arguments for :class:`~workspace_tools.core.workspace.Workspace` and sync paths.

    Raises:
        InvalidInputError: an unknown key or a value of the wrong shape, naming the key.
    """
    raw = config.section(SECTION, known=_KEYS)
    where = f"'{SECTION}' in {config.path}"
    options: dict[str, Any] = {}
    if "index_dir" in raw:
        options["index_dir"] = Path(config.root, str(raw["index_dir"]))
    if "embedder" in raw:
        value = raw["embedder"]
        options["embedder"] = None if value in (None, "none", False) else str(value)
    if "backend" in raw:
        backend = backend_config(raw["backend"], where=f"'backend' under {where}")
        uri = backend.uri
        if uri is not None and "://" not in uri and not uri.startswith("unix:"):
            backend = dataclasses.replace(backend, uri=str(Path(config.root, uri)))
        options["backend"] = backend
    for key in ("fusion", "vector_weight", "ranking_prior", "read_only"):
        if key in raw:
            options[key] = raw[key]
    for key, cls in _SECTIONS.items():
        if key in raw:
            section = raw[key]
            if not isinstance(section, Mapping):
                msg = f"'{key}' under {where} must be a mapping, got {section!r}."
                raise InvalidInputError(msg)
            try:
                options[key if key != "bm25" else "bm25_config"] = _build(cls, key, section)
            except (TypeError, ValueError) as exc:
                msg = f"Invalid '{key}' settings under {where}: {exc}."
                raise InvalidInputError(msg) from exc
    if "scan" in options:
        options["scan_config"] = options.pop("scan")
    if "conversion" in options:
        options["conversion_limits"] = options.pop("conversion")
    paths = raw.get("paths")
    if paths is not None:
        if isinstance(paths, str):
            paths = [paths]
        if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
            msg = f"'paths' under {where} must be a list of paths, got {paths!r}."
            raise InvalidInputError(msg)
    return options, paths


def _build(cls: Any, key: str, section: Mapping[str, Any]) -> Any:
    for name in ("excluded_dirs", "excluded_files"):
        if key == "scan" and name in section:
            section = {**section, name: frozenset(section[name])}
    return cls(**dict(section))
