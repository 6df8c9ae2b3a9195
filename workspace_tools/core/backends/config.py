"""Which search backend a workspace uses, and opening it (``backend=``, YAML, ``--backend``)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from workspace_tools.core.backends.registry import (
    ENTRY_POINT_GROUP,
    BackendContext,
    BackendSpec,
    UntrustedSettingError,
    register,
    registered,
)
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.extras import install_hint, require_extra

if TYPE_CHECKING:
    from workspace_tools.core.backends.base import SearchBackend

__all__ = [
    "MILVUS_INSTALL",
    "MILVUS_TOKEN_ENV",
    "BackendConfig",
    "backend_config",
    "backend_names",
    "backend_spec",
    "open_backend",
    "register_builtins",
]

MILVUS_INSTALL: Final = install_hint("milvus")
"""The command that installs what the Milvus backend needs."""
MILVUS_TOKEN_ENV: Final = "WORKSPACE_TOOLS_MILVUS_TOKEN"  # noqa: S105 - a variable name
"""Environment variable read for the Milvus token when none is configured."""
MILVUS_ANALYZERS: Final = ("workspace", "standard", "english", "jieba")
"""``workspace``: our tokenizer's terms; the others: a Milvus analyzer on the chunk text."""
_KEYS: Final = ("type", "uri", "token", "collection", "analyzer")


@dataclasses.dataclass(frozen=True, kw_only=True)
class BackendConfig:
    """Settings of the search backend (checked by the settings class of its registry entry).

    Attributes:
        type: ``embedded`` (default), ``milvus`` or another registered backend's name.
        uri: Milvus: a Lite file path (default ``<index_dir>/milvus.db``) or a server URI.
        token: Milvus: the server token (default: ``$WORKSPACE_TOOLS_MILVUS_TOKEN``).
        collection: Milvus: the collection name (default: derived from the index folder).
        analyzer: Milvus: ``workspace`` (this workspace's terms) or a Milvus analyzer name.
    """

    type: str = "embedded"
    uri: str | None = None
    token: str | None = dataclasses.field(default=None, repr=False)
    collection: str | None = None
    analyzer: str = "workspace"

    def __post_init__(self) -> None:
        backend_spec(self.type).settings.of(self)

    def given(self) -> list[str]:
        """The keys besides ``type`` set to something other than their default."""
        return [
            name
            for name, value in (
                ("uri", self.uri),
                ("token", self.token),
                ("collection", self.collection),
                ("analyzer", None if self.analyzer == "workspace" else self.analyzer),
            )
            if value is not None
        ]


@dataclasses.dataclass(frozen=True, slots=True)
class EmbeddedSettings:
    """The embedded backend takes no settings (its index lives in the index folder)."""

    @classmethod
    def of(cls, config: BackendConfig) -> EmbeddedSettings:
        """Refuse the Milvus backend's keys."""
        foreign = config.given()
        if foreign:
            msg = (
                f"The embedded backend takes no {', '.join(foreign)}: those settings are the "
                "Milvus backend's (the embedded index lives in the index folder). Set the type "
                "to 'milvus' (the CLI's --backend-uri implies it) or drop them."
            )
            raise InvalidInputError(msg)
        return cls()

    @classmethod
    def from_project(cls, config: BackendConfig, *, root: Path, path: Path) -> BackendConfig:
        """Nothing to check: the embedded backend has no target."""
        del root, path
        return config


@dataclasses.dataclass(frozen=True, slots=True)
class MilvusSettings:
    """The Milvus backend's settings (see :class:`BackendConfig`)."""

    uri: str | None
    token: str | None = dataclasses.field(repr=False)
    collection: str | None
    analyzer: str

    @classmethod
    def of(cls, config: BackendConfig) -> MilvusSettings:
        """Check the analyzer and the collection name."""
        if config.analyzer not in MILVUS_ANALYZERS:
            msg = (
                f"Unknown Milvus analyzer {config.analyzer!r}. Use one of: "
                f"{', '.join(MILVUS_ANALYZERS)}."
            )
            raise InvalidInputError(msg)
        if config.collection is not None and not _valid_collection(config.collection):
            msg = (
                f"Milvus collection name {config.collection!r} is invalid: use letters, digits "
                "and underscores, starting with a letter or underscore (at most 255)."
            )
            raise InvalidInputError(msg)
        return cls(
            uri=config.uri,
            token=config.token,
            collection=config.collection,
            analyzer=config.analyzer,
        )

    @classmethod
    def from_project(cls, config: BackendConfig, *, root: Path, path: Path) -> BackendConfig:
        """A project file's Milvus settings: a local Lite file inside ``root``, no server or key."""
        if config.token is not None:
            msg = (
                f"'backend.token' in {path} is refused: the folder's own file may not hold "
                f"a credential. Set ${MILVUS_TOKEN_ENV} or pass backend={{'token': ...}} to "
                "Workspace."
            )
            raise UntrustedSettingError(msg)
        uri = config.uri
        if uri is None:
            return config
        if "\x00" in uri:
            msg = f"'backend.uri' in {path} must not contain a NUL character, got {uri!r}."
            raise InvalidInputError(msg)
        if "://" in uri or uri.startswith("unix:"):
            msg = (
                f"'backend.uri: {uri}' in {path} is refused: the folder's own file may not "
                "send the index (and your Milvus token) to a server. Pass it with --backend-uri "
                "on the CLI or backend={'type': 'milvus', 'uri': ...} to Workspace."
            )
            raise UntrustedSettingError(msg)
        resolved_root = root.resolve()
        if resolved_root not in Path(root, uri).resolve().parents:
            msg = (
                f"'backend.uri: {uri}' in {path} is refused: a Milvus Lite file outside the "
                "project root. Keep it inside the root, or pass it with --backend-uri on the CLI "
                "or backend={'type': 'milvus', 'uri': ...} to Workspace."
            )
            raise UntrustedSettingError(msg)
        return dataclasses.replace(config, uri=str(Path(root, uri)))


def _valid_collection(name: str) -> bool:
    return (
        0 < len(name) <= 255
        and (name[0].isascii() and (name[0].isalpha() or name[0] == "_"))
        and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
    )


def backend_config(value: Any, *, where: str = "backend") -> BackendConfig:
    """A :class:`BackendConfig` from a name, a mapping, a config or ``None`` (embedded).

    Raises:
        InvalidInputError: an unknown backend, key or value (the message names it).
    """
    if value is None:
        return BackendConfig()
    if isinstance(value, BackendConfig):
        return value
    if isinstance(value, str):
        return BackendConfig(type=value)
    if isinstance(value, Mapping):
        unknown = sorted(str(k) for k in value if k not in _KEYS)
        if unknown:
            msg = f"Unknown key(s) {', '.join(unknown)} in {where}. Known: {', '.join(_KEYS)}."
            raise InvalidInputError(msg)
        options = {str(k): v for k, v in value.items()}
        for key, item in options.items():
            if item is not None and not isinstance(item, str):
                msg = f"{where}: {key!r} must be a string, got {item!r}."
                raise InvalidInputError(msg)
        return BackendConfig(**options)
    msg = (
        f"{where} must be a backend name ({', '.join(backend_names())}), a mapping of settings "
        "or a "
        f"BackendConfig, got {type(value).__name__}."
    )
    raise InvalidInputError(msg)


def require_milvus() -> None:
    """Raise :class:`MissingDependencyError` naming the extra when pymilvus/milvus-lite lack."""
    require_extra("milvus", purpose="the Milvus search backend")


def _open_embedded(context: BackendContext, settings: EmbeddedSettings) -> SearchBackend:
    del settings
    from workspace_tools.core.backends.embedded import EmbeddedBackend
    from workspace_tools.core.index.sparse import BM25Config

    return EmbeddedBackend(
        follower=context.follower,
        tokenizer=context.tokenizer,
        bm25_config=context.bm25_config or BM25Config(),
        hnsw_threshold=context.hnsw_threshold,
        index_terms=context.bm25_config is not None,
        embedder=context.embedder,
        read_only=context.read_only,
    )


def _open_milvus(context: BackendContext, settings: MilvusSettings) -> SearchBackend:
    require_milvus()
    from workspace_tools.core.backends.milvus import MilvusBackend

    token = settings.token if settings.token is not None else os.environ.get(MILVUS_TOKEN_ENV)
    return MilvusBackend(
        follower=context.follower,
        uri=settings.uri or str(context.index_dir / "milvus.db"),
        token=token,
        collection=settings.collection,
        index_dir=context.index_dir,
        analyzer=settings.analyzer,
        bm25_config=context.bm25_config,
        embedder=context.embedder,
        read_only=context.read_only,
        tokenizer=context.tokenizer,
    )


def register_builtins() -> None:
    """Register the ``embedded`` and ``milvus`` backends."""
    register(BackendSpec(name="embedded", settings=EmbeddedSettings, open=_open_embedded))
    register(BackendSpec(name="milvus", settings=MilvusSettings, open=_open_milvus))


def open_backend(config: BackendConfig, context: BackendContext) -> SearchBackend:
    """Open the backend ``config`` names, through its registry entry.

    Raises:
        MissingDependencyError: the backend's extra is not installed (Milvus).
        StorageError: the Milvus server or file cannot be reached.
    """
    spec = backend_spec(config.type)
    return spec.open(context, spec.settings.of(config))


def backend_names() -> tuple[str, ...]:
    """Every registered backend name, built-ins first."""
    if "embedded" not in registered():
        register_builtins()
    return tuple(registered())


def backend_spec(name: str) -> BackendSpec:
    """The backend called ``name`` (entry points are looked at for an unknown name).

    Raises:
        InvalidInputError: no backend has that name (the message lists the known ones).
    """
    specs = registered()
    if "embedded" not in specs:
        register_builtins()
        specs = registered()
    spec = specs.get(name)
    if spec is None:
        import importlib.metadata  # only for a name that is not registered

        for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if entry.name == name:
                loaded = entry.load()
                if isinstance(loaded, BackendSpec):
                    register(loaded)
                    spec = loaded
    if spec is None:
        msg = f"Unknown search backend {name!r}. Use one of: {', '.join(specs)}."
        raise InvalidInputError(msg)
    return spec
