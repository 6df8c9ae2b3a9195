"""A static reading of the package's imports: who imports whom, and which rules that breaks.

Every import counts, wherever it is written: module level, inside a function, under
``TYPE_CHECKING``, and ``importlib.import_module("...")`` with a literal name. So a lazy
function-level import cannot slip past the direction rule the way it slips past an import-time check.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ImportGraph", "read_imports"]

FORBIDDEN_IN_CORE = ("langchain", "langchain_core", "langgraph", "mcp")
"""Third-party roots core must never import (core has no LangChain and no MCP inside)."""


@dataclass
class ImportGraph:
    """Modules of one package and the imports each one makes (resolved to modules)."""

    package: str
    modules: dict[str, Path] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)
    """Module -> modules of this package it imports."""
    external: dict[str, set[str]] = field(default_factory=dict)
    """Module -> top-level names of other distributions it imports."""

    def direction_violations(self) -> list[str]:
        """Imports that point the wrong way: core -> tools/cli/mcp/LangChain, tools -> cli/mcp."""
        core, tools = f"{self.package}.core", f"{self.package}.tools"
        upward = (f"{self.package}.tools", f"{self.package}.cli", f"{self.package}.mcp")
        found = []
        for module in sorted(self.modules):
            if _within(module, core):
                for target in sorted(self.edges.get(module, ())):
                    if any(_within(target, up) for up in upward):
                        found.append(f"{module} imports {target} (core never imports adapters)")
                for name in sorted(self.external.get(module, ())):
                    if name in FORBIDDEN_IN_CORE:
                        found.append(f"{module} imports {name} (core has no LangChain or MCP)")
            elif _within(module, tools):
                for target in sorted(self.edges.get(module, ())):
                    if _within(target, f"{self.package}.cli") or _within(
                        target, f"{self.package}.mcp"
                    ):
                        found.append(f"{module} imports {target} (tools never import cli/mcp)")
        return found

    def module_cycles(self) -> list[list[str]]:
        """Every strongly connected group of two or more modules (an import cycle), sorted."""
        return _cycles(self.edges)

    def part_cycles(self, parent: str) -> list[list[str]]:
        """Import cycles between the direct children of ``parent`` (core's parts)."""
        parts: dict[str, set[str]] = {}
        for module, targets in self.edges.items():
            source = _part(module, parent)
            if source is None:
                continue
            for target in targets:
                dest = _part(target, parent)
                if dest is not None and dest != source:
                    parts.setdefault(source, set()).add(dest)
        return _cycles(parts)


def read_imports(package_dir: Path) -> ImportGraph:
    """Read every ``.py`` file under ``package_dir`` (a package folder) into an import graph."""
    package = package_dir.name
    graph = ImportGraph(package=package)
    for path in sorted(package_dir.rglob("*.py")):
        rel = path.relative_to(package_dir.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        graph.modules[".".join(parts)] = path
    for module, path in graph.modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for names in _imported_names(tree, module, is_package=is_package):
            if names[0].endswith("*"):
                prefix = names[0][:-1]
                names = [prefix.rstrip("._"), *(m for m in graph.modules if m.startswith(prefix))]
            root = names[0].split(".", 1)[0]
            if root != package:
                graph.external.setdefault(module, set()).add(root)
                continue
            # ``from pkg import sub`` loads ``pkg.sub`` when it is a module: that is the edge; the
            # package's own ``__init__`` counts only when a name is not a module of its own.
            targets = {t for t in (_resolve(n, graph.modules) for n in names) if t is not None}
            exact = {n for n in names[1:] if n in graph.modules}
            for target in exact or targets:
                if target != module:
                    graph.edges.setdefault(module, set()).add(target)
    return graph


def _imported_names(tree: ast.AST, module: str, *, is_package: bool) -> Iterable[list[str]]:
    """Per import statement: the module named, then (for ``from`` imports) each ``module.name``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ([alias.name] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package=is_package)
            yield [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
        ):
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield [first.value]
            elif isinstance(first, ast.JoinedStr) and first.values:
                head = first.values[0]
                if isinstance(head, ast.Constant) and isinstance(head.value, str):
                    yield [head.value + "*"]  # a family of modules: every one with this prefix


def _absolute(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    drop = node.level - 1 if is_package else node.level
    base = base[: len(base) - drop] if drop else base
    return ".".join([*base, node.module] if node.module else base)


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` loads: itself if it is one, else its nearest enclosing module."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _part(module: str, parent: str) -> str | None:
    if not module.startswith(parent + "."):
        return None
    return module[len(parent) + 1 :].split(".", 1)[0]


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of size >= 2."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                group.append(item)
                if item == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)
