"""``workspace-tools skills`` for skill sources (issue 40): git skills, versions, explicit loads."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tests.support.skills import git_repo, skill_md, write_skill
from workspace_tools.cli.skills import add_skills_parser
from workspace_tools.core.config import ProjectConfig


def run(root: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="workspace-tools")
    parser.add_argument("--root", default=".")
    add_skills_parser(parser.add_subparsers())
    args = parser.parse_args(["--root", str(root), "skills", *argv])
    return int(args.func(args))


def test_git_skill_add_update_sync_remove(tmp_path: Path, capsys) -> None:
    repo = tmp_path / "repo"
    first = git_repo(repo, {"deploy/SKILL.md": skill_md("deploy", "Deploy it.", "One.")})
    project = tmp_path / "project"
    project.mkdir()
    url = f"{repo.as_uri()}@main#deploy"
    assert run(project, "add", url) == 0
    assert capsys.readouterr().out == (
        f"Added 'deploy' from {url} at commit {first[:12]} into "
        ".workspace_tools/skills/deploy; pinned in workspace-tools.yaml.\n"
    )
    assert run(project, "list") == 0
    assert "deploy  managed   .workspace_tools/skills/deploy/SKILL.md" in capsys.readouterr().out
    assert run(project, "update") == 0
    assert capsys.readouterr().out == f"deploy: up to date ({url})\n"
    second = git_repo(repo, {"deploy/SKILL.md": skill_md("deploy", "Deploy it.", "Two.")})
    assert run(project, "update", "deploy") == 0
    assert capsys.readouterr().out == f"deploy: {first[:12]} -> {second[:12]} ({url})\n"
    folder = project / ".workspace_tools" / "skills" / "deploy"
    (folder / "SKILL.md").unlink()
    assert run(project, "sync") == 0
    assert capsys.readouterr().out == f"deploy: commit {second[:12]} installed ({url})\n"
    assert run(project, "load", "deploy") == 0
    assert capsys.readouterr().out == "Two.\n"
    assert run(project, "update", "nope") == 1
    assert "No git skill named 'nope' in this project (git skills: deploy)" in (
        capsys.readouterr().err
    )
    assert run(project, "add", f"{repo.as_uri()}@nope") == 1
    assert "has no branch, tag or commit 'nope'" in capsys.readouterr().err
    assert run(project, "remove", "deploy") == 0
    assert "Removed git skill 'deploy'" in capsys.readouterr().out
    assert not folder.exists() and "skill_git" not in ProjectConfig.load(project).settings


def test_publish_versions_pin_rollback(tmp_path: Path, capsys) -> None:
    draft = write_skill(tmp_path / "drafts", "review", "Review code.", "One.")
    assert run(tmp_path, "publish", "drafts/review") == 0
    out = capsys.readouterr().out
    assert out.startswith("Published 'review' version ") and out.endswith(
        "(1 file(s)); pinned in workspace-tools.yaml.\n"
    )
    first = ProjectConfig.load(tmp_path).settings["skill_versions"]["review"]
    (draft / "SKILL.md").write_text(skill_md("review", "Review code.", "Two."), encoding="utf-8")
    assert run(tmp_path, "publish", "drafts/review", "--no-pin") == 0
    assert "serve it with `workspace-tools skills pin review " in capsys.readouterr().out
    assert run(tmp_path, "versions", "review") == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith(f"* {first[:12]}  ") and rows[1].startswith("  ")
    second = rows[1].split()[0]
    assert run(tmp_path, "pin", "review", second) == 0
    assert capsys.readouterr().out.startswith(f"Pinned 'review' at {second} (published ")
    assert run(tmp_path, "list") == 0
    assert f".workspace_tools/skills/review@{second}/SKILL.md" in capsys.readouterr().out
    assert run(tmp_path, "load", "review") == 0
    assert capsys.readouterr().out == "Two.\n"
    assert run(tmp_path, "rollback", "review") == 0
    assert capsys.readouterr().out.startswith(f"Rolled 'review' back to {first[:12]}")
    assert run(tmp_path, "rollback", "review") == 1
    assert "is pinned at its oldest version (2 published)" in capsys.readouterr().err
    assert run(tmp_path, "versions", "other") == 1
    assert run(tmp_path, "publish", "drafts/nothing") == 1
    assert "error: Cannot publish" in capsys.readouterr().err


def test_explicit_only_skill_for_a_person(tmp_path: Path, make_skill, capsys) -> None:
    make_skill("deploy", "Deploy it.", "Run the deploy.", extra="disable-model-invocation: true\n")
    (tmp_path / "workspace-tools.yaml").write_text("skills: [skills]\n", encoding="utf-8")
    assert run(tmp_path, "list") == 0
    assert "deploy  local     skills/deploy/SKILL.md  (explicit only)" in capsys.readouterr().out
    assert run(tmp_path, "list", "--json") == 0
    assert json.loads(capsys.readouterr().out)["skills"][0]["disable_model_invocation"] is True
    assert run(tmp_path, "show", "deploy") == 0
    out = capsys.readouterr().out
    assert "disable-model-invocation: true (explicit only" in out and "Run the deploy." in out
    assert run(tmp_path, "load", "deploy") == 0
    assert capsys.readouterr().out == "Run the deploy.\n"
    assert run(tmp_path, "validate", "skills") == 0  # a known field: no warning
