"""The direction rule and the no-cycle rule, read statically from the source.

core never imports tools, cli, mcp, LangChain or MCP (at any level of any function); tools never
import cli or mcp; no import cycle between modules, and none between core's parts.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

from tests.support.architecture import ImportGraph, read_imports
from tests.support.paths import REPO

PACKAGE = REPO / "workspace_tools"


@functools.cache
def _package_imports() -> ImportGraph:
    """The package's import graph, read once for the tests that only look at it."""
    return read_imports(PACKAGE)


def test_core_never_imports_adapters_or_langchain() -> None:
    assert _package_imports().direction_violations() == []


def test_no_import_cycle_between_modules() -> None:
    assert _package_imports().module_cycles() == []


def test_no_import_cycle_between_core_parts() -> None:
    assert _package_imports().part_cycles("workspace_tools.core") == []


def test_core_has_its_parts() -> None:
    graph = _package_imports()
    parts = {m.split(".")[2] for m in graph.modules if m.startswith("workspace_tools.core.")}
    assert {
        "text",
        "convert",
        "embedding",
        "index",
        "ranking",
        "store",
        "workspace",
        "docs",
        "skills",
    } <= parts


def test_index_embedding_and_ranking_stay_apart() -> None:
    # The indexes, the embedders and the ranking are separate parts: none imports another.
    graph = _package_imports()
    split = ("index", "embedding", "ranking")
    crossings = sorted(
        f"{module} imports {target}"
        for module, targets in graph.edges.items()
        for target in targets
        if (source := _core_part(module)) in split
        and (dest := _core_part(target)) in split
        and source != dest
    )
    assert crossings == []


def test_distributed_uses_no_private_module_of_the_workspace() -> None:
    # chunking and progress live in public modules both use (workspace/chunks.py, reporting.py)
    graph = _package_imports()
    private = sorted(
        f"{module} imports {target}"
        for module, targets in graph.edges.items()
        if module.startswith("workspace_tools.core.distributed")
        for target in targets
        if target.startswith("workspace_tools.core.workspace._")
    )
    assert private == []


def _core_part(module: str) -> str | None:
    prefix = "workspace_tools.core."
    return module[len(prefix) :].split(".")[0] if module.startswith(prefix) else None


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "workspace_tools"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_planted_function_level_import_of_tools_is_caught(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    target = copy / "core" / "text" / "snippets.py"
    target.write_text(
        target.read_text() + "\n\ndef _sneaky():\n    from workspace_tools.tools import toolkit\n"
    )
    assert read_imports(copy).direction_violations() == [
        "workspace_tools.core.text.snippets imports workspace_tools.tools.toolkit"
        " (core never imports adapters)"
    ]


def test_a_planted_langchain_import_in_core_is_caught(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    target = copy / "core" / "grep.py"
    target.write_text(target.read_text() + "\nif False:\n    import langchain_core.tools\n")
    assert read_imports(copy).direction_violations() == [
        "workspace_tools.core.grep imports langchain_core (core has no LangChain or MCP)"
    ]


def test_a_planted_relative_cycle_is_caught(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    target = copy / "core" / "text" / "chunking.py"
    target.write_text(
        target.read_text() + "\n\ndef _back():\n    from ..workspace import _workspace\n"
    )
    graph = read_imports(copy)
    assert any({"text", "workspace"} <= set(c) for c in graph.part_cycles("workspace_tools.core"))
    assert any("workspace_tools.core.text.chunking" in cycle for cycle in graph.module_cycles())
