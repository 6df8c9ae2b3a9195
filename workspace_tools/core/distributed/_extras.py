"""The ``ray`` extra: whether it is installed, and the error that names it."""

from __future__ import annotations

import importlib.util
from typing import Final

from workspace_tools.core.errors import MissingDependencyError

__all__ = ["RAY_INSTALL", "RayNotInstalledError", "require_ray"]

RAY_INSTALL: Final = 'pip install "workspace-tools[ray]"'
"""The command that installs what distributed indexing needs (Ray Data)."""


class RayNotInstalledError(MissingDependencyError):
    """Distributed indexing was asked for without the ``ray`` extra."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # pragma: no cover - a broken or half-imported package
        return False


def require_ray(purpose: str = "Distributed indexing") -> None:
    """Raise :class:`RayNotInstalledError` unless Ray Data can be imported.

    Raises:
        RayNotInstalledError: Names the missing package and :data:`RAY_INSTALL`.
    """
    missing = [name for name in ("ray", "pyarrow") if not _installed(name)]
    if missing:
        msg = (
            f"{purpose} runs on Ray and needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install the ray extra: "
            f"{RAY_INSTALL} (on the driver and on every node of the cluster), or index locally "
            "with Workspace.sync() / `workspace-tools index` without --ray."
        )
        raise RayNotInstalledError(msg)
