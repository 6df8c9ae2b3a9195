"""Workspace settings read from the ``workspace`` section of ``workspace-tools.yaml``.

Example::

    skills: [skills]
    workspace:
      index_dir: .workspace_tools/index   # relative to the project root, and inside it
      embedder: default                   # default | none | <sentence-transformers name or path>
      paths: [docs, src]                  # what `sync()` and `workspace-tools index` scan
      fusion: zscore                      # zscore | weighted | rrf | minmax | spread
      vector_weight: 0.5
      ranking_prior: true                 # weigh scores by kind of file (navigation, lockfile)
      bm25: {k1: 1.35, b: 0.6}
      chunking: {max_chars: 4000, overlap_lines: 3}
      scan: {max_depth: 8, max_file_bytes: 10485760, include_hidden: false}
      conversion: {seconds: 5, memory_bytes: 268435456, per_format: {pdf: {seconds: 8}}}
      read_only: false
      backend: embedded                   # embedded | milvus | {type: milvus, analyzer: ...}
      mounts: {/docs: documentation}      # prefix -> folder inside the root (docs/mounts.md)

Every value is checked by type when the file is read (a pydantic model, strict: ``'false'`` is
not a boolean, ``'10'`` not a number), and an error names the key, the value and the file.

The file belongs to the indexed folder, which is not trusted (docs/security.md, "Who may set
what"): it may shape how its own content is indexed, but not move data or credentials. So
``index_dir`` and ``mounts`` must stay inside the root, and ``backend`` may not name a server
``uri``, a ``token`` or a Lite file outside the root: those come from the API, the CLI or the
environment.
Nor may it raise a limit that protects the reader: ``scan`` depth and file size and the
``conversion`` budgets may be lowered there, never raised above the defaults, and conversion
stays isolated in worker processes; a caller raises them with ``scan_config=`` and
``conversion_limits=``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.backends.config import backend_config, backend_spec
from workspace_tools.core.backends.registry import UntrustedSettingError
from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.convert.limits import DEFAULT_LIMITS, ConversionLimits
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.text.scan import ScanConfig

__all__ = [
    "INDEX_DIR_ENV",
    "MOUNTS_ENV",
    "SECTION",
    "UntrustedSettingError",
    "bm25_argument",
    "workspace_options",
]

SECTION: Final = "workspace"
"""Top-level key of the workspace settings in ``workspace-tools.yaml``."""
INDEX_DIR_ENV: Final = "WORKSPACE_TOOLS_INDEX_DIR"
"""Environment variable the CLI reads for ``--index-dir`` (an index folder anywhere)."""
MOUNTS_ENV: Final = "WORKSPACE_TOOLS_MOUNTS"
"""Environment variable the CLI reads for ``--mount`` (``PREFIX=PATH`` joined by ``os.pathsep``)."""

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
    "mounts",
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
        InvalidInputError: an unknown key or a value of the wrong type or range, naming the key.
        UntrustedSettingError: the file moves the index outside the root or names a backend
            target (server, token, file outside the root); the message says where to set it.
    """
    raw = config.section(SECTION, known=_KEYS)
    if not raw:
        return {}, None
    where = f"'{SECTION}' in {config.path}"
    data = _validated(raw, where)
    options: dict[str, Any] = {}
    if "index_dir" in data:
        options["index_dir"] = _inside_root(config, data["index_dir"])
    if "embedder" in data:
        value = data["embedder"]
        options["embedder"] = None if value == "none" else value
    if "backend" in data:
        options["backend"] = _backend(config, data["backend"], where)
    if "mounts" in data:
        fix = f"Pass mounts= to Workspace, --mount PREFIX=PATH on the CLI or set ${MOUNTS_ENV}."
        what = "mount a folder outside it"
        options["mounts"] = {
            p: _inside_root(config, f, key=f"mounts: {p}", what=what, fix=fix)
            for p, f in data["mounts"].items()
        }
    for key in ("fusion", "vector_weight", "ranking_prior", "read_only"):
        if key in data:
            options[key] = data[key]
    for key, cls in _SECTIONS.items():
        if key in data:
            try:
                options[key if key != "bm25" else "bm25_config"] = _build(cls, key, data[key])
            except (TypeError, ValueError) as exc:
                msg = f"Invalid '{key}' settings under {where}: {exc}"
                raise InvalidInputError(msg.rstrip(".") + ".") from exc
    _limits_not_raised(config, options)
    if "scan" in options:
        options["scan_config"] = options.pop("scan")
    if "conversion" in options:
        options["conversion_limits"] = options.pop("conversion")
    return options, data.get("paths")


def bm25_argument(bm25: Any, bm25_config: BM25Config | None) -> tuple[bool, BM25Config | None]:
    """Whether to keep a BM25 index, and its parameters, from ``Workspace(bm25=...)``.

    ``bm25`` is ``True``/``False``, a :class:`BM25Config` or a mapping of its fields (Mastra's
    spelling, also nested as ``{"bm25": {...}}``); parameters given here and in ``bm25_config``
    are refused.

    Raises:
        InvalidInputError: another type, an unknown field or value, or parameters given twice.
    """
    if isinstance(bm25, bool):
        return bm25, bm25_config
    fields = [f.name for f in dataclasses.fields(BM25Config)]
    forms = f"True, False, a BM25Config or a mapping of its fields ({', '.join(fields)})"
    if isinstance(bm25, Mapping) and set(bm25) == {"bm25"} and isinstance(bm25["bm25"], Mapping):
        bm25 = bm25["bm25"]
    if isinstance(bm25, Mapping):
        unknown = sorted(str(k) for k in bm25 if k not in fields)
        if unknown:
            msg = f"bm25 has unknown field(s) {', '.join(unknown)}: got {bm25!r}. Use {forms}."
            raise InvalidInputError(msg)
        try:
            bm25 = BM25Config(**bm25)
        except (TypeError, ValueError) as exc:
            msg = f"Invalid bm25 {bm25!r}: {exc}"
            raise InvalidInputError(msg) from exc
    if not isinstance(bm25, BM25Config):
        msg = f"bm25 must be {forms}; got {bm25!r}."
        raise InvalidInputError(msg)
    if bm25_config is not None:
        msg = (
            f"BM25 parameters were given twice: bm25={bm25!r} and bm25_config={bm25_config!r}. "
            "Pass one of them."
        )
        raise InvalidInputError(msg)
    return True, bm25


def _inside_root(
    config: ProjectConfig,
    value: str,
    *,
    key: str = "index_dir",
    what: str = "move its index elsewhere",
    fix: str = f"Pass index_dir= to Workspace, --index-dir on the CLI or set ${INDEX_DIR_ENV}.",
) -> Path:
    """A path of the file (``index_dir``, a mount), refused unless it stays inside the root."""
    root = config.root.resolve()
    target = Path(os.path.normpath(Path(config.root, value)))
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        msg = f"'{key}' {value!r} in {config.path} cannot be resolved ({exc})."
        raise InvalidInputError(msg) from exc
    if resolved != root and root not in resolved.parents:
        msg = (
            f"'{key}: {value}' in {config.path} is refused: it points outside the project "
            f"root ({resolved}), and the folder's own file may not {what}. {fix}"
        )
        raise UntrustedSettingError(msg)
    return target


def _limits_not_raised(config: ProjectConfig, options: Mapping[str, Any]) -> None:
    """Refuse a ``scan`` or ``conversion`` limit of the file above its default.

    Raises:
        UntrustedSettingError: naming the key, its value, the default and where to raise it.
    """
    raised: list[tuple[str, object, object, str]] = []
    scan = options.get("scan")
    if scan is not None:
        default_scan = ScanConfig()
        for name in ("max_depth", "max_file_bytes"):
            value, default = getattr(scan, name), getattr(default_scan, name)
            if value > default:
                raised.append((f"scan.{name}", value, default, "scan_config=ScanConfig"))
    limits = options.get("conversion")
    if limits is not None:
        if not limits.isolate:
            raised.append(("conversion.isolate", False, True, "conversion_limits=ConversionLimits"))
        for fmt in ("", *limits.per_format):
            budget, default_budget = limits.budget(fmt), DEFAULT_LIMITS.budget(fmt)
            for name in ("seconds", "memory_bytes", "unpacked_bytes"):
                value, default = getattr(budget, name), getattr(default_budget, name)
                if value > default:
                    key = f"conversion.per_format.{fmt}.{name}" if fmt else f"conversion.{name}"
                    raised.append((key, value, default, "conversion_limits=ConversionLimits"))
    if not raised:
        return
    key, value, default, api = raised[0]
    more = f" (and {len(raised) - 1} more)" if len(raised) > 1 else ""
    msg = (
        f"'{key}: {value}' in {config.path} is refused{more}: the folder's own file may lower a "
        f"limit that protects the reader, not raise it above the default ({default}). Pass "
        f"{api}(...) to Workspace to raise it, or remove the key."
    )
    raise UntrustedSettingError(msg)


def _backend(config: ProjectConfig, value: Any, where: str) -> Any:
    """The file's backend, as its registry entry lets a project file set it (no server, no key)."""
    backend = backend_config(value, where=f"'backend' under {where}")
    settings = backend_spec(backend.type).settings
    return settings.from_project(backend, root=config.root, path=config.path)


def _build(cls: Any, key: str, section: Mapping[str, Any]) -> Any:
    for name in ("excluded_dirs", "excluded_files"):
        if key == "scan" and name in section:
            section = {**section, name: frozenset(section[name])}
    return cls(**dict(section))


def _validated(raw: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The section checked by type (strict), as plain values: only the keys the file set."""
    from pydantic import ValidationError

    from workspace_tools.core.workspace._settings_model import WorkspaceSection

    try:
        checked = WorkspaceSection.model_validate(dict(raw))
    except ValidationError as exc:
        raise InvalidInputError(_one_line(exc, where)) from None
    return checked.model_dump(exclude_unset=True)


_PROBLEMS: Final = {
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "string_type": "must be a string",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
}


def _one_line(exc: Any, where: str) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    key = ".".join(str(part) for part in first["loc"]) or SECTION
    more = len(errors) - 1
    extra = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if first["type"] == "extra_forbidden":
        section, _, name = key.rpartition(".")
        return f"Invalid '{section}' settings under {where}: unknown setting '{name}'{extra}."
    problem = _PROBLEMS.get(first["type"]) or str(first["msg"]).removeprefix("Value error, ")
    problem = problem.replace("Input should be", "must be")
    return f"Invalid '{key}' under {where}: {problem}, got {first['input']!r}{extra}."
