"""The embedded backend: bm25s segments and FAISS held in this process, in step with the database.

Nothing outside this package imports its modules: what others use is exported here.
"""

from workspace_tools.core.backends.embedded.backend import EmbeddedBackend
from workspace_tools.core.backends.embedded.dense import HNSW_THRESHOLD

__all__ = ["HNSW_THRESHOLD", "EmbeddedBackend"]
