"""The ``ray`` extra: the error that names it (the check is :func:`core.extras.require_extra`)."""

from __future__ import annotations

from typing import Final

from workspace_tools.core.errors import MissingDependencyError
from workspace_tools.core.extras import install_hint, require_extra

__all__ = ["RAY_INSTALL", "RayNotInstalledError", "require_ray"]

RAY_INSTALL: Final = install_hint("ray")
"""The command that installs what distributed indexing needs (Ray Data)."""


class RayNotInstalledError(MissingDependencyError):
    """Distributed indexing was asked for without the ``ray`` extra."""


def require_ray(purpose: str = "Distributed indexing") -> None:
    """Raise :class:`RayNotInstalledError` unless Ray Data can be imported.

    Raises:
        RayNotInstalledError: Names the missing package and :data:`RAY_INSTALL`.
    """
    require_extra("ray", purpose=f"{purpose} on Ray", error=RayNotInstalledError)
