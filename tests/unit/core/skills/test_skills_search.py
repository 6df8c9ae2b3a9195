"""Skill search: BM25 with boosted name/description, bodies, references, filters."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.skills import Skill, SkillRegistry, SkillSearchIndex, read_skill_file


@pytest.fixture
def registry(tmp_path: Path, make_skill) -> SkillRegistry:
    make_skill(
        "deploy",
        "Deploy services to staging and production.",
        "# Deploy\n\nRun the pipeline.\n\n## Rollback\n\nUse the rollback script.",
        files={
            "references/k8s.md": "# Kubernetes\n\nkubectl rollout undo\n",
            "scripts/rollback.sh": "kubectl rollout undo",
        },
    )
    make_skill(
        "testing", "Write unit tests.", "Mention deploy once.", extra="user-invocable: true\n"
    )
    return SkillRegistry(["skills"], root=tmp_path, entry_points=False)


def test_description_match_is_boosted(registry: SkillRegistry) -> None:
    hits = registry.search("deploy")
    assert [h.skill_name for h in hits][:2] == ["deploy", "testing"]
    assert hits[0].score > hits[1].score


def test_line_range_points_into_skill_md(registry: SkillRegistry) -> None:
    [hit] = registry.search("rollback script", include_references=False, top_k=1)
    assert hit.source == "SKILL.md"
    assert hit.line_range is not None
    text = read_skill_file(
        registry.get("deploy"),
        "SKILL.md",
        start_line=hit.line_range.start,
        end_line=hit.line_range.end,
    ).text
    assert "rollback script" in text


def test_references_indexed_scripts_not(registry: SkillRegistry) -> None:
    hits = registry.search("kubectl")
    assert [(h.skill_name, h.source) for h in hits] == [("deploy", "references/k8s.md")]
    assert hits[0].line_range is not None
    assert hits[0].line_range.start == 3
    assert registry.search("kubectl", include_references=False) == []


def test_skill_names_filter_and_top_k(registry: SkillRegistry) -> None:
    assert {h.skill_name for h in registry.search("deploy", skill_names=["testing"])} == {"testing"}
    assert len(registry.search("deploy rollback kubectl", top_k=1)) == 1
    with pytest.raises(InvalidInputError, match="top_k must be at least 1, got 0"):
        registry.search("x", top_k=0)


def test_empty_and_stopword_queries(registry: SkillRegistry) -> None:
    assert registry.search("") == []
    assert registry.search("the and of") == []


def test_code_skills_are_searchable() -> None:
    index = SkillSearchIndex(
        [
            Skill(
                name="inline",
                description="Translate invoices.",
                files={"references/x.md": "currency conversion"},
            )
        ]
    )
    assert [(h.skill_name, h.source) for h in index.search("currency")] == [
        ("inline", "references/x.md")
    ]
    assert index.search("invoices")[0].source == "SKILL.md"


def test_user_invocable_preserved(registry: SkillRegistry) -> None:
    assert registry.get("testing").user_invocable is True
    assert registry.get("deploy").user_invocable is False
