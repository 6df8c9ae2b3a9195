"""The backend registry: name -> :class:`BackendSpec` (:func:`register`, or entry points)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

from workspace_tools.core.errors import InvalidInputError

if TYPE_CHECKING:
    from workspace_tools.core.backends.base import SearchBackend
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
    "register",
    "registered",
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
    """A backend's own settings, read from a ``config.BackendConfig`` (``config`` below)."""

    @classmethod
    def of(cls, config: Any) -> BackendSettings:
        """The settings ``config`` gives (raises :class:`InvalidInputError` on a foreign key)."""
        ...

    @classmethod
    def from_project(cls, config: Any, *, root: Path, path: Path) -> Any:
        """``config`` as the project file ``path`` may set it (raises UntrustedSettingError)."""
        ...


@dataclass(frozen=True, slots=True)
class BackendSpec:
    """One backend: its name, its settings class and how to open it."""

    name: str
    settings: type[BackendSettings]
    open: Callable[[BackendContext, Any], SearchBackend]
    """Open the backend from the context and an instance of :attr:`settings`."""


_SPECS: dict[str, BackendSpec] = {}
"""Registered backends by name (the built-ins are added by ``backends/config.py``)."""


def registered() -> dict[str, BackendSpec]:
    """The registered backends by name (a copy)."""
    return dict(_SPECS)


def register(spec: BackendSpec) -> None:
    """Add (or replace) a backend under ``spec.name``."""
    _SPECS[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a backend (no error when absent)."""
    _SPECS.pop(name, None)
