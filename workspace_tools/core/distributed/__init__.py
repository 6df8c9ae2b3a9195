"""Distributed indexing on a Ray cluster (the ``ray`` extra): the index a local sync makes.

:func:`index_on_ray` converts, chunks and embeds the new and changed files of a workspace on a
Ray cluster, commits the vectors to the workspace's embedding cache as they arrive, then runs the
ordinary local :meth:`~workspace_tools.core.workspace.Workspace.sync`, which finds every vector
cached: the index is by construction the one a local sync makes. Importing this package does not
import Ray; a missing extra raises :class:`RayNotInstalledError` naming the install command.
"""

from workspace_tools.core.distributed._extras import RAY_INSTALL, RayNotInstalledError, require_ray
from workspace_tools.core.distributed.indexing import NodeWork, RayIndexReport, index_on_ray

__all__ = [
    "RAY_INSTALL",
    "NodeWork",
    "RayIndexReport",
    "RayNotInstalledError",
    "index_on_ray",
    "require_ray",
]
