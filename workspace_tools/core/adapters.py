"""Adapters the layers above core offer to core's facades, looked up by name.

Core never imports those layers; ``workspace_tools/__init__.py`` registers the adapters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workspace_tools.core.errors import MissingDependencyError

__all__ = ["adapter", "register_adapter"]

_FACTORIES: dict[str, Callable[..., Any]] = {}


def register_adapter(name: str, factory: Callable[..., Any]) -> None:
    """Offer ``factory`` under ``name`` (a later registration replaces an earlier one)."""
    _FACTORIES[name] = factory


def adapter(name: str) -> Callable[..., Any]:
    """The factory registered under ``name``.

    Raises:
        MissingDependencyError: nothing is registered under ``name``.
    """
    factory = _FACTORIES.get(name)
    if factory is None:
        msg = (
            f"No {name} adapter is registered: it comes with the workspace_tools package "
            "(import workspace_tools, with langchain-core installed)."
        )
        raise MissingDependencyError(msg)
    return factory
