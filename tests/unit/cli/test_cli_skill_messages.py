"""Skill diagnostics on the command line: the field named, each problem once, honest counts."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_tools.cli import main
from workspace_tools.core.skills import SkillRegistry


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _broken(skills: Path) -> None:
    (skills / "broken").mkdir(parents=True)
    (skills / "broken" / "SKILL.md").write_text("---\ndescription: D.\n---\nBody\n", "utf-8")


def test_the_missing_field_is_named_in_the_log(
    tmp_path: Path, skills_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _broken(skills_dir)
    with caplog.at_level(logging.WARNING, logger="workspace_tools.core.skills.registry"):
        SkillRegistry(["skills"], root=tmp_path).catalog()
    [record] = caplog.records
    assert record.getMessage() == (
        f"Skipping {skills_dir / 'broken' / 'SKILL.md'}: name: a non-empty string is required "
        "for 'name' (missing); the skill was skipped. Add `name: <folder name>` to the "
        "frontmatter."
    )


def test_list_prints_each_problem_once(tmp_path: Path, make_skill, skills_dir: Path) -> None:
    make_skill("alpha")
    _broken(skills_dir)
    (tmp_path / "workspace-tools.yaml").write_text("skills: [skills]\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "workspace_tools.cli", "--root", str(tmp_path), "skills", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout + done.stderr
    assert printed.count("a non-empty string is required for 'name' (missing)") == 1
    assert done.stderr == ""
    assert "Problems (1):" in done.stdout


def test_add_counts_the_skills_that_load(
    tmp_path: Path, make_skill, skills_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("alpha")
    _broken(skills_dir)
    code, out, _ = run(capsys, "--root", str(tmp_path), "skills", "add", "skills")
    assert code == 0
    assert "(1 skill found)." in out and "2 skills" not in out
    assert (
        "  skipped skills/broken: name: a non-empty string is required for 'name' (missing)" in out
    )
    assert "Run `workspace-tools skills validate skills` for every problem." in out


def test_errors_speak_to_a_person_not_an_agent(
    tmp_path: Path, make_skill, capsys: pytest.CaptureFixture[str]
) -> None:
    make_skill("alpha")
    run(capsys, "--root", str(tmp_path), "skills", "add", "skills")
    code, out, err = run(capsys, "--root", str(tmp_path), "skills", "show", "alpah")
    assert code == 1 and out == ""
    assert "Call the skill tool" not in err
    assert err == (
        "error: No skill named or located at 'alpah'. Did you mean: alpha? Available skills: "
        "alpha. See them with `workspace-tools skills list`.\n"
    )
