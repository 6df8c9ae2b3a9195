"""The skill tools over skill sources (issue 40): pinned versions served, explicit-only refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from tests.support.skills import write_skill
from workspace_tools.core.skills import SkillRegistry, SkillStore
from workspace_tools.tools.middleware import SkillsMiddleware
from workspace_tools.tools.skills import SkillReadTool, SkillSearchTool, SkillTool


def call(tool, **args) -> ToolMessage:
    msg = tool.invoke({"args": args, "id": "1", "name": tool.name, "type": "tool_call"})
    assert isinstance(msg, ToolMessage)
    return msg


@pytest.fixture
def registry(tmp_path: Path) -> SkillRegistry:
    write_skill(
        tmp_path / "skills",
        "deploy",
        "Deploy the service to production. Use when asked to ship a release.",
        "Run the deploy pipeline.",
        extra="disable-model-invocation: true\n",
        files={"references/steps.md": "Ship the release train.\n"},
    )
    draft = write_skill(
        tmp_path / "drafts",
        "review",
        "Review code changes before a release.",
        "Pinned review body.",
        files={"references/checklist.md": "Check the release notes.\n"},
    )
    store = SkillStore(tmp_path)
    store.pin("review", store.publish(draft).version)
    return SkillRegistry(["skills"], root=tmp_path)


def test_explicit_only_skill_is_refused_to_the_model(registry: SkillRegistry) -> None:
    msg = call(SkillTool(registry=registry), name="deploy")
    assert msg.status == "error"
    assert "Skill 'deploy' is explicit-only (disable-model-invocation: true" in str(msg.content)
    read = call(SkillReadTool(registry=registry), skill_name="deploy", path="SKILL.md")
    assert read.status == "error" and "explicit-only" in str(read.content)
    search = call(SkillSearchTool(registry=registry), query="ship release deploy")
    assert {hit["skill_name"] for hit in search.artifact} == {"review"}
    prompt = SkillsMiddleware(registry).skills_prompt()
    assert "<name>review</name>" in prompt and "deploy" not in prompt
    assert registry.get("deploy").body == "Run the deploy pipeline."  # the program may


def test_pinned_version_is_loaded_and_read(registry: SkillRegistry) -> None:
    msg = call(SkillTool(registry=registry), name="review")
    assert msg.status == "success"
    assert "Pinned review body." in str(msg.content)
    assert "<skill_resources>\nreferences/checklist.md\n</skill_resources>" in str(msg.content)
    assert msg.artifact["source"] == "managed"
    assert msg.artifact["location"].startswith(".workspace_tools/skills/review@")
    assert "(a stored version, not a folder: read its files with skill_read)" in str(msg.content)
    read = call(
        SkillReadTool(registry=registry), skill_name="review", path="references/checklist.md"
    )
    assert read.content == "references/checklist.md (lines 1-1 of 1)\nCheck the release notes."


def test_toolkit_serves_managed_skills_without_skills_paths(tmp_path: Path) -> None:
    from workspace_tools import Workspace
    from workspace_tools.tools import WorkspaceToolkit

    draft = write_skill(tmp_path / "drafts", "review", "Review code changes.", "Pinned body.")
    store = SkillStore(tmp_path)
    store.pin("review", store.publish(draft).version)
    toolkit = WorkspaceToolkit(workspace=Workspace(tmp_path, embedder=None))
    assert toolkit.skills is not None and toolkit.skills.get("review").body == "Pinned body."
    none = WorkspaceToolkit(workspace=Workspace(tmp_path, embedder=None), skills_paths=[])
    assert none.skills is None  # skills_paths=[] still means no skills
