"""The backend registry: name -> :class:`BackendSpec`, read by the config, CLI and YAML reader.

A backend is one entry: its name, its settings class (which checks the keys a configuration
gives it and reads them), whether it stores vectors itself, and how to open it. The built-in
``embedded`` and ``milvus`` entries are registered by ``backends/config.py``; a third-party
package registers its own with :func:`register`, or exposes a :class:`BackendSpec` under the
entry-point group :data:`ENTRY_POINT_GROUP` (loaded when a name is not found), so adding a
backend needs no edit of this package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from workspace_tools.core.errors import InvalidInputError

if TYPE_CHECKING:
    from workspace_tools.core.backends.base import SearchBackend
    from workspace_tools.core.backends.config import BackendConfig
    from workspace_tools.core.backends.follow import ChangeFollower
    from workspace_tools.core.index.sparse import BM25Config
    from workspace_tools.core.store.database import IndexDatabase
    from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendContext",
    "BackendSettings",
    "BackendSpec",
    "UntrustedSettingError",
    "backend_names",
    "backend_spec",
    "register",
    "unregister",
]

ENTRY_POINT_GROUP: Final = "workspace_tools.backends"
"""Entry points of this group are :class:`BackendSpec` objects of third-party backends."""


class UntrustedSettingError(InvalidInputError):
    """The project file sets something only the caller may set (it would move data or keys)."""


@dataclass(frozen=True, slots=True)
class BackendContext:
    """What a backend is opened with (besides its own settings)."""

    db: IndexDatabase
    """The index database (the source of truth the backend follows)."""
    follower: ChangeFollower
    """The change-log follower the backend is to register with (``follower.follow``)."""
    index_dir: Path
    tokenizer: Tokenizer
    bm25_config: BM25Config | None
    """BM25 parameters (``None``: no BM25 side)."""
    embedder: tuple[str, int] | None
    """``(model_id, dimension)`` for a backend that stores vectors itself, else ``None``."""
    hnsw_threshold: int
    read_only: bool


class BackendSettings(Protocol):
    """A backend's own settings, read from a :class:`BackendConfig`."""

    @classmethod
    def of(cls, config: BackendConfig) -> BackendSettings:
        """The settings ``config`` gives (raises :class:`InvalidInputError` on a foreign key)."""
        ...

    @classmethod
    def from_project(cls, config: BackendConfig, *, root: Path, path: Path) -> BackendConfig:
        """``config`` as the project file ``path`` may set it (raises UntrustedSettingError)."""
        ...


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """One backend: its name, its settings class and how to open it."""

    name: str
    settings: type[BackendSettings]
    open: Callable[[BackendContext, Any], SearchBackend]
    """Open the backend from the context and an instance of :attr:`settings`."""
    stores_vectors: bool = False
    """The backend keeps vectors itself, so it is told the embedder's identity."""


_SPECS: dict[str, BackendSpec] = {}


def register(spec: BackendSpec) -> None:
    """Add (or replace) a backend under ``spec.name``."""
    _SPECS[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a backend (no error when absent)."""
    _SPECS.pop(name, None)


def backend_names() -> tuple[str, ...]:
    """Every registered backend name, built-ins first."""
    _builtins()
    return tuple(_SPECS)


def backend_spec(name: str) -> BackendSpec:
    """The backend called ``name`` (entry points are looked at for an unknown name).

    Raises:
        InvalidInputError: no backend has that name (the message lists the known ones).
    """
    _builtins()
    spec = _SPECS.get(name)
    if spec is None:
        import importlib.metadata  # only for a name that is not registered

        for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if entry.name == name:
                loaded = entry.load()
                if isinstance(loaded, BackendSpec):
                    register(loaded)
                    spec = loaded
    if spec is None:
        msg = f"Unknown search backend {name!r}. Use one of: {', '.join(_SPECS)}."
        raise InvalidInputError(msg)
    return spec


def _builtins() -> None:
    if "embedded" not in _SPECS:
        from workspace_tools.core.backends import config

        config.register_builtins()
