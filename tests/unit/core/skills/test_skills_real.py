"""Real skills: the 13 benchmark skills load; every shipped example passes strict validation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import BENCHMARKS, REPO, missing
from workspace_tools.core.skills import SkillRegistry, list_resources, parse_skill_file
from workspace_tools.skills_entry import example_skills_path

BENCHMARK = BENCHMARKS / "agent-skills" / "skills"
EXAMPLES = REPO / "skills_examples"


@pytest.mark.skipif(not BENCHMARK.is_dir(), reason=missing(BENCHMARK))
def test_all_benchmark_skills_load_with_diagnostics_listed(tmp_path: Path) -> None:
    registry = SkillRegistry([str(BENCHMARK)], root=tmp_path, entry_points=False)
    names = [s.name for s in registry.list_skills()]
    assert len(names) == 13
    assert names == sorted(p.name for p in BENCHMARK.iterdir() if (p / "SKILL.md").is_file())
    diags = [
        (Path(d.path).parent.name, d.field, d.message.split(";")[0]) for d in registry.diagnostics()
    ]
    assert diags == [
        ("claude-api", "description", "is 1068 characters"),
        ("claude-api", None, "body has 569 lines (recommended at most 500)"),
        ("claude-api", None, "body is about 12521 tokens (recommended at most 5000)"),
        ("skill-creator", None, "body is about 6696 tokens (recommended at most 5000)"),
    ]
    assert all(d.severity == "warning" for d in registry.diagnostics())
    creator = registry.get("skill-creator")
    assert "references/schemas.md" in creator.resources
    assert any(r.startswith("scripts/") for r in creator.resources)
    hits = registry.search("animated GIF for Slack", top_k=3)
    assert hits[0].skill_name == "slack-gif-creator"


@pytest.mark.parametrize(
    "folder", sorted(p for p in EXAMPLES.iterdir() if p.is_dir()), ids=lambda p: p.name
)
def test_examples_pass_strict_validation(folder: Path) -> None:
    result = parse_skill_file(folder / "SKILL.md", resources=list_resources(folder), strict=True)
    assert result.diagnostics == []
    assert result.skill is not None
    assert result.skill.name == folder.name
    for rel in result.skill.resources:  # every resource the body links to exists
        assert (folder / rel).is_file()
    for line in result.skill.body.splitlines():
        for part in line.split("(")[1:]:
            target = part.split(")")[0]
            if target.startswith(("references/", "assets/", "scripts/")):
                assert (folder / target).is_file(), target


def test_at_least_three_examples_and_entry_point() -> None:
    assert len([p for p in EXAMPLES.iterdir() if (p / "SKILL.md").is_file()]) >= 3
    assert Path(example_skills_path()) == EXAMPLES


def test_example_validator_script() -> None:
    script = EXAMPLES / "skill-authoring" / "scripts" / "validate_skill.py"
    out = subprocess.run(
        [sys.executable, str(script), str(EXAMPLES / "workspace-search")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "ok: workspace-search (1 resource files)\n"


def test_core_does_not_import_langchain() -> None:
    code = (
        "import sys, workspace_tools.core.skills, workspace_tools.core.config;"
        "bad = [m for m in sys.modules if m.startswith(('langchain', 'torch'))];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
