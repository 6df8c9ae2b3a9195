"""YAML nested thousands of levels deep: a clear error in the one loader, one file at a time.

PyYAML's composer recurses once per nesting level, so 10 KB of ``[`` used to raise a raw
``RecursionError`` out of all three YAML readers (SKILL.md frontmatter, docs frontmatter, the
project file), taking every skill or the whole docs index down with the one hostile file.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.skills import write_skill
from workspace_tools.core.docs.index import DocsIndex
from workspace_tools.core.errors import InvalidInputError, WorkspaceError
from workspace_tools.core.skills import SkillRegistry
from workspace_tools.core.text.safe_yaml import (
    MAX_YAML_CHARS,
    MAX_YAML_DEPTH,
    UnsafeYamlError,
    load_yaml,
)
from workspace_tools.core.workspace import Workspace

pytestmark = pytest.mark.timeout(60)

DEEP_FLOW = "[" * 5000 + "]" * 5000
"""10 KB: lists nested 5,000 levels deep."""
DEEP_MAPPINGS = "".join(f"{' ' * i}k{i}:\n" for i in range(400)) + " " * 400 + "end: 1\n"
"""Block mappings nested 400 levels deep."""


@pytest.mark.parametrize("text", [DEEP_FLOW, "a: " + "{b: " * 3000 + "1" + "}" * 3000])
def test_deep_yaml_is_a_workspace_error_naming_the_limit(text: str) -> None:
    with pytest.raises(UnsafeYamlError, match=f"more than {MAX_YAML_DEPTH} levels deep") as caught:
        load_yaml(text)
    assert isinstance(caught.value, WorkspaceError)
    assert isinstance(caught.value, InvalidInputError)


def test_block_nesting_and_size_are_limited() -> None:
    with pytest.raises(UnsafeYamlError, match="levels deep \\(line 65\\)"):
        load_yaml(DEEP_MAPPINGS)
    with pytest.raises(UnsafeYamlError, match=f"the limit is {MAX_YAML_CHARS}"):
        load_yaml("a: " + "x" * MAX_YAML_CHARS)


def test_nesting_within_the_limit_loads() -> None:
    depth = MAX_YAML_DEPTH
    assert load_yaml("[" * depth + "1" + "]" * depth) == eval("[" * depth + "1" + "]" * depth)
    assert load_yaml("a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}
    assert load_yaml("") is None


def test_one_deep_skill_is_a_diagnostic_the_others_load(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "good", "Works fine. Use it always.")
    write_skill(skills, "deep", "x", extra=f"metadata: {DEEP_FLOW}\n")
    registry = SkillRegistry(["skills"], root=tmp_path, entry_points=False)
    assert [s.name for s in registry.list_skills()] == ["good"]
    [diag] = registry.diagnostics()
    assert "deep" in str(diag.path)
    assert f"more than {MAX_YAML_DEPTH} levels deep" in diag.message
    assert "without anchors or deep nesting" in diag.message


def test_one_deep_docs_page_keeps_the_docs_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("---\ntitle: Good page\n---\n# Good\n\nalpha beta\n")
    (docs / "deep.md").write_text(f"---\ntitle: {DEEP_FLOW}\n---\n# Deep heading\n\ngamma\n")
    with caplog.at_level(logging.WARNING):
        index = DocsIndex(docs)
        pages = {p.path: p.title for p in index.list_pages()}
    assert pages == {"deep.md": "Deep heading", "good.md": "Good page"}
    assert index.search("alpha")[0].path == "good.md"
    assert any(
        "deep.md" in r.getMessage() and "levels deep" in r.getMessage() for r in caplog.records
    )


def test_a_deep_project_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "workspace-tools.yaml").write_text(f"skills: {DEEP_FLOW}\n")
    with pytest.raises(InvalidInputError, match=f"more than {MAX_YAML_DEPTH} levels deep"):
        Workspace.from_project(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "workspace_tools.cli", "--root", str(tmp_path), "index"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert f"more than {MAX_YAML_DEPTH} levels deep" in done.stderr + done.stdout


@pytest.mark.parametrize(
    "text",
    ["a: " + "1" * 5000, "a: 2001-13-45", "a: !!float x", "a: !!timestamp x"],
)
def test_values_pyyaml_cannot_build_are_invalid_yaml_not_a_crash(text: str) -> None:
    with pytest.raises(yaml.YAMLError, match="a value cannot be read"):
        load_yaml(text)


def test_an_unbuildable_value_in_one_skill_leaves_the_others(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "good", "Works fine. Use it always.")
    write_skill(skills, "dated", "x", extra="metadata:\n  released: 2001-13-45\n")
    registry = SkillRegistry(["skills"], root=tmp_path, entry_points=False)
    assert [s.name for s in registry.list_skills()] == ["good"]
    assert "a value cannot be read" in registry.diagnostics()[0].message
