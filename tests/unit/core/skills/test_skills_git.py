"""Skills from git (issue 40): pinned commits, nothing run from the repository, explicit only.

Every repository is a local one made in the test and fetched over ``file://`` (no network).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.skills import git_repo, skill_md
from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import InvalidInputError, SkillFormatError, SkillSourceError
from workspace_tools.core.skills import GitSkills, SkillRegistry, is_git_source
from workspace_tools.core.skills import git as git_module

DEPLOY = skill_md("deploy", "Deploy the app. Use when asked to ship.", "Version one.")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    git_repo(
        path,
        {
            "README.md": "A repository of skills.\n",
            "skills/deploy/SKILL.md": DEPLOY,
            "skills/deploy/scripts/run.sh": "echo deploy\n",
            "skills/deploy/leak.md": "->/etc/passwd",
            "skills/other/SKILL.md": skill_md("other", "Another skill."),
        },
    )
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def test_add_pins_the_commit_and_discovery_finds_it(repo: Path, project: Path) -> None:
    first = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    git_repo(repo, {"skills/deploy/SKILL.md": DEPLOY.replace("one", "two")}, message="two")
    pin = GitSkills(project).add(f"{repo.as_uri()}@{first}#skills/deploy/")
    assert (pin.name, pin.commit, pin.subdir, pin.ref) == ("deploy", first, "skills/deploy", first)
    folder = project / ".workspace_tools" / "skills" / "deploy"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "SKILL.md",
        "scripts/run.sh",
    ]  # the symbolic link is not copied
    entry = ProjectConfig.load(project).settings["skill_git"]["deploy"]
    assert entry == {"url": repo.as_uri(), "ref": first, "subdir": "skills/deploy", "commit": first}
    skill = SkillRegistry([], root=project).get("deploy")
    assert skill.source == "managed" and skill.body == "Version one."
    assert GitSkills(project).pins()["deploy"].source == f"{repo.as_uri()}@{first}#skills/deploy"


def test_update_moves_the_pin_and_sync_reinstalls(repo: Path, project: Path) -> None:
    skills = GitSkills(project)
    before = skills.add(f"{repo.as_uri()}@main#skills/deploy")
    [(old, same)] = skills.update()
    assert old == before and same.commit == before.commit
    after = git_repo(repo, {"skills/deploy/SKILL.md": DEPLOY.replace("one", "two")})
    [(old, new)] = skills.update(["deploy"])
    assert new.commit == after != old.commit
    assert skills.pins()["deploy"].commit == after
    registry = SkillRegistry([], root=project)
    assert registry.get("deploy").body == "Version two."
    folder = project / ".workspace_tools" / "skills" / "deploy"
    (folder / "SKILL.md").write_text("edited by hand", encoding="utf-8")
    [pin] = skills.sync()
    assert pin.commit == after and registry.get("deploy").body == "Version two."
    assert skills.remove("deploy").name == "deploy"
    assert not folder.exists() and "skill_git" not in ProjectConfig.load(project).settings


def test_no_hook_or_filter_runs(repo: Path, project: Path, tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("reference-transaction", "post-checkout", "post-merge"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
        (hooks / hook).chmod(0o755)
    config = tmp_path / "gitconfig"
    config.write_text(
        f"[core]\n\thooksPath = {hooks}\n[filter \"evil\"]\n\tsmudge = sh -c 'touch {marker}; cat'\n"
        "\trequired = true\n",
        encoding="utf-8",
    )
    git_repo(repo, {".gitattributes": "* filter=evil\n"})
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    subprocess.run(["git", "clone", "-q", "--bare", repo.as_uri(), str(tmp_path / "c")], check=True)
    assert marker.exists(), "the hook runs for a plain clone: the test would catch a regression"
    marker.unlink()
    GitSkills(project).add(f"{repo.as_uri()}#skills/deploy")
    assert not marker.exists()


def test_discovery_and_serving_never_run_git(repo: Path, project: Path, monkeypatch) -> None:
    GitSkills(project).add(f"{repo.as_uri()}#skills/deploy")
    (project / "workspace-tools.yaml").write_text(
        "skills: []\nskill_git:\n  evil:\n    url: file:///nowhere\n    commit: " + "a" * 40 + "\n",
        encoding="utf-8",
    )

    def refuse(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("git ran during discovery")

    monkeypatch.setattr(git_module, "_git", refuse)
    registry = SkillRegistry([], root=project)
    assert [s.name for s in registry.list_skills()] == ["deploy"]
    assert registry.search("deploy")[0].skill_name == "deploy"


def test_bad_sources_are_refused_before_git_runs(project: Path, monkeypatch) -> None:
    monkeypatch.setattr(git_module, "_git", lambda *a, **k: pytest.fail("git ran"))
    skills = GitSkills(project)
    with pytest.raises(InvalidInputError, match="is not a git URL"):
        skills.add("ext::sh -c touch% /tmp/x")
    with pytest.raises(InvalidInputError, match="ref '--upload-pack=touch' must be a branch"):
        skills.add("file:///tmp/repo@--upload-pack=touch")
    with pytest.raises(InvalidInputError, match="must be a plain relative folder"):
        skills.add("https://example.com/r.git#../../etc")
    (project / "workspace-tools.yaml").write_text(
        "skill_git:\n  x:\n    url: ext::sh\n    commit: " + "a" * 40 + "\n", encoding="utf-8"
    )
    with pytest.raises(InvalidInputError, match="is not a git URL"):
        skills.update()
    (project / "workspace-tools.yaml").write_text(
        "skill_git:\n  x:\n    url: file:///r\n    commit: abc\n", encoding="utf-8"
    )
    with pytest.raises(InvalidInputError, match="'x' needs a valid skill name and a full commit"):
        skills.sync()
    assert is_git_source("git@github.com:org/skills.git") and not is_git_source("skills/x")


def test_not_a_skill_and_git_failures(repo: Path, project: Path) -> None:
    skills = GitSkills(project)
    with pytest.raises(SkillFormatError, match="Skills inside it: deploy, other; add one"):
        skills.add(f"{repo.as_uri()}#skills")
    with pytest.raises(SkillSourceError, match="has no branch, tag or commit 'no-such-branch'"):
        skills.add(f"{repo.as_uri()}@no-such-branch")
    with pytest.raises(SkillSourceError, match="git clone failed"):
        skills.add((project / "missing").as_uri())
    (project / ".workspace_tools" / "skills" / "deploy").mkdir(parents=True)
    with pytest.raises(InvalidInputError, match="'deploy' already exists .* not added from git"):
        skills.add(f"{repo.as_uri()}#skills/deploy")
    assert [p.name for p in (project / ".workspace_tools").iterdir()] == ["skills"]  # no leftovers
