"""Module-level ``__getattr__`` that imports public names on first use (PEP 562)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_getattr"]


def lazy_getattr(
    package: str, names: dict[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A ``__getattr__`` for ``package`` that imports ``name`` from ``names[name]`` when asked.

    The value is cached in ``namespace`` (the package's ``globals()``), so each import happens once.
    """

    def getattr_(name: str) -> Any:
        module = names.get(name)
        if module is None:
            msg = f"module {package!r} has no attribute {name!r}"
            raise AttributeError(msg)
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return getattr_
