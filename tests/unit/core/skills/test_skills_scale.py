"""Skills that scale: disabled skills, the catalogue budget, async dynamic paths (issue 29)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import InvalidInputError, SkillNotFoundError
from workspace_tools.core.skills import (
    CatalogueBudget,
    SkillRegistry,
    render_skills_prompt,
    select_skills,
)


def registry(root: Path, **kw: object) -> SkillRegistry:
    return SkillRegistry(["skills"], root=root, **kw)  # type: ignore[arg-type]


# -- disabled skills --------------------------------------------------------------------------


def test_disabled_skills_from_the_project_file_are_left_out_and_followed(
    tmp_path: Path, make_skill
) -> None:
    make_skill("alpha")
    make_skill("beta", "Beta does other things.")
    r = registry(tmp_path)
    assert [s.name for s in r.list_skills()] == ["alpha", "beta"]
    (tmp_path / "workspace-tools.yaml").write_text(
        "skills: [skills]\ndisabled_skills: [beta]\n", encoding="utf-8"
    )
    assert [s.name for s in r.list_skills()] == ["alpha"]  # the same registry follows the file
    assert r.disabled == frozenset({"beta"})
    assert "beta" not in render_skills_prompt(r)
    assert "beta" not in [h.skill_name for h in r.search("beta other things")]
    with pytest.raises(SkillNotFoundError, match=r"^Skill 'beta' is disabled \(disabled_skills"):
        r.get("beta")
    with pytest.raises(SkillNotFoundError, match="workspace-tools skills enable beta"):
        r.get("skills/beta")  # by path too
    (tmp_path / "workspace-tools.yaml").write_text("skills: [skills]\n", encoding="utf-8")
    assert r.get("beta").name == "beta"


def test_disabled_argument_overrides_the_file(tmp_path: Path, make_skill) -> None:
    make_skill("alpha")
    (tmp_path / "workspace-tools.yaml").write_text("disabled_skills: [alpha]\n", encoding="utf-8")
    assert registry(tmp_path, disabled=()).get("alpha").name == "alpha"
    assert registry(tmp_path).list_skills() == []
    assert [s.name for s in registry(tmp_path).catalog().disabled] == ["alpha"]


def test_a_bad_disabled_list_is_reported_not_fatal(tmp_path: Path, make_skill, caplog) -> None:
    make_skill("alpha")
    (tmp_path / "workspace-tools.yaml").write_text("disabled_skills: {a: 1}\n", encoding="utf-8")
    assert [s.name for s in registry(tmp_path).list_skills()] == ["alpha"]
    assert "'disabled_skills' in " in caplog.text
    with pytest.raises(InvalidInputError, match="must be a list of skill names"):
        _ = ProjectConfig.load(tmp_path).disabled_skills


def test_config_round_trip_keeps_other_settings(tmp_path: Path) -> None:
    (tmp_path / "workspace-tools.yaml").write_text(
        "skills: [skills]\nworkspace:\n  embedder: none\n", encoding="utf-8"
    )
    config = ProjectConfig.load(tmp_path)
    config.with_disabled_skills(["b", "a", "b"]).save()
    again = ProjectConfig.load(tmp_path)
    assert again.disabled_skills == ("a", "b")
    assert again.settings["workspace"] == {"embedder": "none"}
    again.with_disabled_skills([]).save()
    assert "disabled_skills" not in (tmp_path / "workspace-tools.yaml").read_text()


# -- catalogue budget -------------------------------------------------------------------------

TOPICS = [
    ("pdf-forms", "Fill and flatten PDF forms."),
    ("git-release", "Tag and publish a git release."),
    ("sql-tuning", "Speed up slow SQL queries with indexes."),
    ("image-resize", "Resize and crop images in bulk."),
    ("email-draft", "Draft polite customer emails."),
    ("csv-clean", "Clean messy CSV spreadsheets."),
]


@pytest.fixture
def many(tmp_path: Path, make_skill) -> SkillRegistry:
    for name, description in TOPICS:
        make_skill(name, description, f"# {name}\n\nSteps for {description.lower()}")
    return registry(tmp_path)


def test_within_budget_every_skill_is_listed(many: SkillRegistry) -> None:
    text = render_skills_prompt(many, budget=CatalogueBudget(max_skills=6))
    assert text.count("<skill>") == 6
    assert "skill_search" in text and "more skills are not listed" not in text
    assert render_skills_prompt(many, budget=None) == text


def test_past_the_skill_budget_the_most_relevant_are_listed(many: SkillRegistry) -> None:
    budget = CatalogueBudget(max_skills=2)
    text = render_skills_prompt(many, budget=budget, query="my SQL query is slow")
    assert text.count("<skill>") == 2
    assert "<name>sql-tuning</name>" in text
    assert (
        "4 more skills are not listed here (6 in all). Find them with the `skill_search` tool"
        in text
    )
    other = render_skills_prompt(many, budget=budget, query="fill this PDF form")
    assert "<name>pdf-forms</name>" in other and "<name>sql-tuning</name>" not in other
    # no conversation yet: a stable choice (by source, then name)
    assert render_skills_prompt(many, budget=budget) == render_skills_prompt(many, budget=budget)
    assert "<name>csv-clean</name>" in render_skills_prompt(many, budget=budget)


def test_past_the_character_budget(many: SkillRegistry) -> None:
    one = len(render_skills_prompt(many, budget=None, instructions=False)) // 6
    text = render_skills_prompt(
        many, budget=CatalogueBudget(max_skills=None, max_chars=one * 3), query="resize images"
    )
    assert 1 <= text.count("<skill>") <= 3
    assert "<name>image-resize</name>" in text
    assert "more skills are not listed here (6 in all)" in text
    tiny = render_skills_prompt(many, budget=CatalogueBudget(max_chars=1), instructions=False)
    assert tiny.startswith("6 more skills are not listed here")


def test_select_skills_and_budget_checks(many: SkillRegistry) -> None:
    skills = many.list_skills()
    assert select_skills(skills, budget=CatalogueBudget(max_skills=10)) == skills
    chosen = select_skills(skills, budget=CatalogueBudget(max_skills=1), query="git tag")
    assert [s.name for s in chosen] == ["git-release"]
    with pytest.raises(InvalidInputError, match="max_skills must be at least 1"):
        CatalogueBudget(max_skills=0)


# -- async dynamic paths (gap 5) --------------------------------------------------------------


def test_async_dynamic_paths(tmp_path: Path, make_skill) -> None:
    make_skill("dev-only", parent=tmp_path / "dev")
    make_skill("shared", parent=tmp_path / "common")

    async def paths(ctx: object) -> list[str]:
        await asyncio.sleep(0)
        return ["common", "dev"] if ctx == "dev" else ["common"]

    r = SkillRegistry(paths, root=tmp_path)
    assert [s.name for s in r.list_skills(context="dev")] == ["dev-only", "shared"]
    assert [s.name for s in r.list_skills(context="user")] == ["shared"]
    assert r.get("dev-only", context="dev").name == "dev-only"
    assert "dev-only" in render_skills_prompt(r, context="dev")

    async def inside_a_loop() -> tuple[list[str], list[str]]:
        sync_call = [s.name for s in r.list_skills(context="dev")]  # a loop runs in this thread
        async_call = [s.name for s in (await r.acatalog(context="user")).skills]
        return sync_call, async_call

    assert asyncio.run(inside_a_loop()) == (["dev-only", "shared"], ["shared"])
