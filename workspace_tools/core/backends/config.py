"""Which search backend a workspace uses, and opening it.

``Workspace(root, backend=...)``, the ``backend:`` setting of ``workspace-tools.yaml`` and the
CLI's ``--backend`` all end here::

    backend: embedded                     # the default: bm25s + FAISS in this process
    backend: milvus                       # a Milvus Lite file <index_dir>/milvus.db
    backend:
      type: milvus
      uri: http://milvus.internal:19530   # a Milvus server (token: $WORKSPACE_TOOLS_MILVUS_TOKEN)
      collection: team_docs
      analyzer: workspace                 # workspace | standard | english | jieba
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from workspace_tools.core.backends.base import SearchBackend
from workspace_tools.core.errors import InvalidInputError, MissingDependencyError
from workspace_tools.core.index.sparse import BM25Config
from workspace_tools.core.store.database import IndexDatabase
from workspace_tools.core.text.tokenizer import Tokenizer

__all__ = [
    "BACKENDS",
    "MILVUS_INSTALL",
    "MILVUS_TOKEN_ENV",
    "BackendConfig",
    "backend_config",
    "open_backend",
]

BACKENDS: Final = ("embedded", "milvus")
"""Backend names."""
MILVUS_INSTALL: Final = 'pip install "workspace-tools[milvus]"'
"""The command that installs what the Milvus backend needs."""
MILVUS_TOKEN_ENV: Final = "WORKSPACE_TOOLS_MILVUS_TOKEN"  # noqa: S105 - a variable name
"""Environment variable read for the Milvus token when none is configured."""
MILVUS_ANALYZERS: Final = ("workspace", "standard", "english", "jieba")
"""``workspace``: our tokenizer's terms; the others: a Milvus analyzer on the chunk text."""
_KEYS: Final = ("type", "uri", "token", "collection", "analyzer")


@dataclasses.dataclass(frozen=True, kw_only=True)
class BackendConfig:
    """Settings of the search backend.

    Attributes:
        type: ``embedded`` (default) or ``milvus``.
        uri: Milvus: a Lite file path (default ``<index_dir>/milvus.db``) or a server URI.
        token: Milvus: the server token (default: ``$WORKSPACE_TOOLS_MILVUS_TOKEN``).
        collection: Milvus: the collection name (default: derived from the index folder).
        analyzer: Milvus: ``workspace`` (BM25 over this workspace's tokenizer terms, the same
            terms the embedded backend scores) or a Milvus analyzer (``standard``, ``english``,
            ``jieba``) run by the server on the chunk text.
    """

    type: str = "embedded"
    uri: str | None = None
    token: str | None = dataclasses.field(default=None, repr=False)
    collection: str | None = None
    analyzer: str = "workspace"

    def __post_init__(self) -> None:
        if self.type not in BACKENDS:
            msg = f"Unknown search backend {self.type!r}. Use one of: {', '.join(BACKENDS)}."
            raise InvalidInputError(msg)
        milvus_only = [
            name
            for name, value in (
                ("uri", self.uri),
                ("token", self.token),
                ("collection", self.collection),
                ("analyzer", None if self.analyzer == "workspace" else self.analyzer),
            )
            if value is not None
        ]
        if self.type == "embedded" and milvus_only:
            msg = (
                f"The embedded backend takes no {', '.join(milvus_only)}: those settings are the "
                "Milvus backend's (the embedded index lives in the index folder). Set the type "
                "to 'milvus' (the CLI's --backend-uri implies it) or drop them."
            )
            raise InvalidInputError(msg)
        if self.analyzer not in MILVUS_ANALYZERS:
            msg = (
                f"Unknown Milvus analyzer {self.analyzer!r}. Use one of: "
                f"{', '.join(MILVUS_ANALYZERS)}."
            )
            raise InvalidInputError(msg)
        if self.collection is not None and not _valid_collection(self.collection):
            msg = (
                f"Milvus collection name {self.collection!r} is invalid: use letters, digits "
                "and underscores, starting with a letter or underscore (at most 255)."
            )
            raise InvalidInputError(msg)


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
        f"{where} must be a backend name ({', '.join(BACKENDS)}), a mapping of settings or a "
        f"BackendConfig, got {type(value).__name__}."
    )
    raise InvalidInputError(msg)


def require_milvus() -> None:
    """Raise :class:`MissingDependencyError` naming the extra when pymilvus/milvus-lite lack."""
    missing = [
        name
        for module, name in (("pymilvus", "pymilvus"), ("milvus_lite", "milvus-lite"))
        if importlib.util.find_spec(module) is None
    ]
    if missing:
        msg = (
            f"The Milvus search backend needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install the milvus extra: "
            f"{MILVUS_INSTALL} (or use backend='embedded')."
        )
        raise MissingDependencyError(msg)


def open_backend(
    config: BackendConfig,
    *,
    db: IndexDatabase,
    index_dir: Path,
    tokenizer: Tokenizer,
    bm25_config: BM25Config | None,
    embedder: tuple[str, int] | None,
    hnsw_threshold: int,
    read_only: bool,
) -> SearchBackend:
    """Open the backend ``config`` names over the index database ``db``.

    Args:
        config: Which backend and its settings.
        db: The index database (the source of truth the backend follows).
        index_dir: The index folder (a Milvus Lite file goes there by default).
        tokenizer: The workspace tokenizer.
        bm25_config: BM25 parameters (``None``: no BM25 side).
        embedder: ``(model_id, dimension)`` of the embedder (``None``: no vector side).
        hnsw_threshold: Embedded: vector count above which FAISS switches to HNSW.
        read_only: The workspace refuses changes (a Milvus backend still follows the database).

    Raises:
        MissingDependencyError: the ``milvus`` extra is not installed.
        StorageError: the Milvus server or file cannot be reached (the message says which).
    """
    if config.type == "embedded":
        from workspace_tools.core.backends.embedded import EmbeddedBackend

        return EmbeddedBackend(
            db=db,
            tokenizer=tokenizer,
            bm25_config=bm25_config or BM25Config(),
            hnsw_threshold=hnsw_threshold,
        )
    require_milvus()
    from workspace_tools.core.backends.milvus import MilvusBackend

    token = config.token if config.token is not None else os.environ.get(MILVUS_TOKEN_ENV)
    return MilvusBackend(
        db=db,
        uri=config.uri or str(index_dir / "milvus.db"),
        token=token,
        collection=config.collection,
        index_dir=index_dir,
        analyzer=config.analyzer,
        bm25_config=bm25_config,
        embedder=embedder,
        read_only=read_only,
    )
