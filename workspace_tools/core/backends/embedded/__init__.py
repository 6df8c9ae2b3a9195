"""The embedded backend: bm25s segments and FAISS held in this process, in step with the database.

Nothing outside this package imports its modules: what others use is exported here, lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workspace_tools.core.backends.embedded.backend import EmbeddedBackend
    from workspace_tools.core.backends.embedded.dense import HNSW_THRESHOLD

__all__ = ["HNSW_THRESHOLD", "EmbeddedBackend"]


def __getattr__(name: str) -> Any:
    if name == "EmbeddedBackend":
        from workspace_tools.core.backends.embedded.backend import EmbeddedBackend

        return EmbeddedBackend
    if name == "HNSW_THRESHOLD":
        from workspace_tools.core.backends.embedded.dense import HNSW_THRESHOLD

        return HNSW_THRESHOLD
    raise AttributeError(name)
