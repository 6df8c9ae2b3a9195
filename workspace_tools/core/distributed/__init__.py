"""Distributed indexing on a Ray cluster (the ``ray`` extra): the index a local sync makes."""

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
