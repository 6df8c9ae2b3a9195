"""The rules of the house that a reading of the code can check (docs/layout.md).

Each rule is a function over a package folder, run on the package and on a copy with one
violation planted, so the check is shown to catch what it is for.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.architecture import read_imports

PACKAGE = Path(__file__).resolve().parents[2] / "workspace_tools"
LAYOUT = PACKAGE.parent / "docs" / "layout.md"
_STARTS = {"Thread", "Popen", "ThreadPoolExecutor", "ProcessPoolExecutor", "Process"}
_TEXT_MAY_IMPORT = (
    "workspace_tools.core.text",
    "workspace_tools.core.errors",
    "workspace_tools.core.types",
)


def _modules(package: Path) -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(package.rglob("*.py")):
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def text_layer_violations(package: Path) -> list[str]:
    """``core/text`` is the bottom layer: it imports no other core part and starts nothing."""
    graph = read_imports(package)
    found = [
        f"{module} imports {target}"
        for module, targets in graph.edges.items()
        if module.startswith("workspace_tools.core.text")
        for target in sorted(targets)
        if not target.startswith(_TEXT_MAY_IMPORT)
    ]
    for path, tree in _modules(package / "core" / "text"):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                found += [
                    f"{path.name} imports {n}"
                    for n in names
                    if n.split(".")[0]
                    in {"threading", "subprocess", "multiprocessing", "concurrent"}
                ]
    return sorted(found)


def private_imports(package: Path) -> list[str]:
    """Imports of a ``_module`` from outside the package that holds it."""
    graph = read_imports(package)
    found = []
    for module, targets in graph.edges.items():
        for target in targets:
            parts = target.split(".")
            for i, part in enumerate(parts[1:], start=1):
                if part.startswith("_") and not part.startswith("__"):
                    owner = ".".join(parts[:i])
                    if not (module == owner or module.startswith(owner + ".")):
                        found.append(f"{module} imports {target}")
                    break
    return sorted(found)


def embedded_insides_imported(package: Path) -> list[str]:
    """Modules outside ``core/backends/embedded`` that import one of its modules."""
    room = "workspace_tools.core.backends.embedded"
    graph = read_imports(package)
    return sorted(
        f"{module} imports {target}"
        for module, targets in graph.edges.items()
        if not module.startswith(room)
        for target in targets
        if target.startswith(room + ".")
    )


def start_sites(package: Path) -> list[str]:
    """Every place the package starts a thread or a process: ``path:line Name``."""
    sites = []
    for path, tree in _modules(package):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in _STARTS:
                    rel = path.relative_to(package.parent).as_posix()
                    sites.append(f"{rel}:{node.lineno} {name}")
    return sites


def test_text_is_the_bottom_layer() -> None:
    assert text_layer_violations(PACKAGE) == []


def test_no_package_imports_another_packages_private_module() -> None:
    assert private_imports(PACKAGE) == []


def test_nothing_outside_the_embedded_backend_imports_its_insides() -> None:
    assert embedded_insides_imported(PACKAGE) == []


def test_at_most_six_thread_or_process_start_sites_each_named_in_the_layout() -> None:
    sites = start_sites(PACKAGE)
    assert len(sites) <= 6, sites
    layout = LAYOUT.read_text(encoding="utf-8")
    for site in sites:
        path = site.split(":")[0].removeprefix("workspace_tools/")
        assert path in layout, f"{site} is not named in docs/layout.md"


def test_no_module_is_over_800_lines() -> None:
    long = [
        (p.relative_to(PACKAGE).as_posix(), n)
        for p, _ in _modules(PACKAGE)
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 800
    ]
    assert long == []


def test_the_workspace_holds_its_collaborators_and_inherits_none() -> None:
    ours = {
        node.name
        for _, tree in _modules(PACKAGE)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }
    mixed = [
        f"{path.name}: {node.name}"
        for path, tree in _modules(PACKAGE / "core" / "workspace")
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        and (
            sum(ast.unparse(b).split(".")[-1] in ours for b in node.bases) > 1
            or (node.name == "Workspace" and node.bases)
        )
    ]
    assert mixed == []


def test_the_seam_has_at_most_four_capabilities() -> None:
    tree = ast.parse((PACKAGE / "core" / "backends" / "base.py").read_text(encoding="utf-8"))
    protocols = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(b) == "Protocol" for b in node.bases)
        and node.name != "SearchBackend"
    ]
    assert len(protocols) <= 4, protocols


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "workspace_tools"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _plant(path: Path, code: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n" + code + "\n", encoding="utf-8")


@pytest.mark.slow  # parses a copy of the package per violation
def test_planted_violations_are_caught(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    _plant(
        copy / "core" / "text" / "snippets.py",
        "import threading\nfrom workspace_tools.core.ranking import content_kinds",
    )
    _plant(copy / "tools" / "read.py", "from workspace_tools.core.workspace import _writer")
    _plant(copy / "core" / "grep.py", "from workspace_tools.core.backends.embedded import segments")
    _plant(copy / "core" / "config.py", "import threading\nthreading.Thread(target=print).start()")
    assert text_layer_violations(copy) == [
        "snippets.py imports threading",
        "workspace_tools.core.text.snippets imports workspace_tools.core.ranking.content_kinds",
    ]
    assert (
        "workspace_tools.tools.read imports workspace_tools.core.workspace._writer"
        in private_imports(copy)
    )
    assert embedded_insides_imported(copy) == [
        "workspace_tools.core.grep imports workspace_tools.core.backends.embedded.segments"
    ]
    assert len(start_sites(copy)) == len(start_sites(PACKAGE)) + 1
    assert any(re.match(r"workspace_tools/core/config.py:\d+ Thread", s) for s in start_sites(copy))
