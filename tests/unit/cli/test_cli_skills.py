"""``workspace-tools skills`` subcommands and the project configuration file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from workspace_tools.cli.skills import add_skills_parser
from workspace_tools.core.config import ProjectConfig
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.skills import registry as registry_module


def run(root: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="workspace-tools")
    parser.add_argument("--root", default=".")
    add_skills_parser(parser.add_subparsers())
    args = parser.parse_args(["--root", str(root), "skills", *argv])
    return int(args.func(args))


def test_add_list_show_remove(tmp_path: Path, make_skill, capsys) -> None:
    make_skill("alpha", "Alpha does things.", "# Alpha body", files={"references/r.md": "x"})
    assert run(tmp_path, "add", "skills") == 0
    assert "Added 'skills' to" in capsys.readouterr().out
    assert ProjectConfig.load(tmp_path).skills == ("skills",)
    assert run(tmp_path, "add", str(tmp_path / "skills") + "/") == 0
    assert "already listed" in capsys.readouterr().out
    assert run(tmp_path, "list", "--no-entry-points") == 0
    out = capsys.readouterr().out
    assert "alpha  local     skills/alpha/SKILL.md" in out
    assert "Alpha does things." in out
    assert run(tmp_path, "list", "--json", "--no-entry-points") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["skills"][0]["name"] == "alpha"
    assert run(tmp_path, "show", "alpha", "--no-entry-points") == 0
    out = capsys.readouterr().out
    assert "resources:\n  references/r.md" in out
    assert out.rstrip().endswith("# Alpha body")
    assert run(tmp_path, "remove", "skills") == 0
    assert ProjectConfig.load(tmp_path).skills == ()


def test_show_unknown(tmp_path: Path, make_skill, capsys) -> None:
    make_skill("alpha")
    run(tmp_path, "add", "skills")
    assert run(tmp_path, "show", "alpah", "--no-entry-points") == 1
    assert "Did you mean: alpha?" in capsys.readouterr().err


def test_add_missing_and_remove_unknown(tmp_path: Path, capsys) -> None:
    assert run(tmp_path, "add", "nope") == 2  # a path that does not exist is an input error
    assert "skills path 'nope' does not exist" in capsys.readouterr().err
    assert run(tmp_path, "add", "**/skills") == 0  # globs are stored as given
    assert run(tmp_path, "remove", "other") == 1
    assert "Listed paths: '**/skills'." in capsys.readouterr().err


def test_list_prints_problems(tmp_path: Path, make_skill, skills_dir, capsys) -> None:
    make_skill("alpha")
    (skills_dir / "broken").mkdir()
    (skills_dir / "broken" / "SKILL.md").write_text("no frontmatter")
    run(tmp_path, "add", "skills")
    capsys.readouterr()
    run(tmp_path, "list", "--no-entry-points")
    out = capsys.readouterr().out
    assert "Problems (1):" in out
    assert "error: " in out
    assert "no YAML frontmatter" in out


def test_validate(tmp_path: Path, make_skill, capsys) -> None:
    make_skill("good")
    make_skill("warned", extra="version: 1\n")
    assert run(tmp_path, "validate", "skills/good") == 0
    assert "1 skill(s) checked: 0 error(s), 0 warning(s)." in capsys.readouterr().out
    assert run(tmp_path, "validate", "skills") == 1
    out = capsys.readouterr().out
    assert "loaded with warnings: skills/warned" in out
    assert "  warning: version: unknown field 'version' ignored" in out
    assert run(tmp_path, "validate", "skills", "--lenient") == 0
    capsys.readouterr()
    assert run(tmp_path, "validate") == 1  # nothing configured
    assert "No skills found" in capsys.readouterr().out
    run(tmp_path, "add", "skills/good")
    assert run(tmp_path, "validate") == 0


def test_project_config_round_trip_keeps_other_settings(tmp_path: Path) -> None:
    (tmp_path / "workspace-tools.yaml").write_text("index:\n  dense: true\nskills: skills\n")
    config = ProjectConfig.load(tmp_path)
    assert config.skills == ("skills",)
    assert config.settings == {"index": {"dense": True}}
    config.with_skills(["a", "b", "a"]).save()
    again = ProjectConfig.load(tmp_path)
    assert again.skills == ("a", "b")
    assert again.settings == {"index": {"dense": True}}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("skills: [unclosed", "is not valid YAML"),
        ("- a\n- b", "must hold a mapping of settings"),
        ("skills: {a: 1}", "'skills' in"),
    ],
)
def test_project_config_errors(tmp_path: Path, text: str, fragment: str) -> None:
    (tmp_path / "workspace-tools.yaml").write_text(text)
    with pytest.raises(InvalidInputError, match=fragment):
        ProjectConfig.load(tmp_path)


def test_missing_config_is_empty(tmp_path: Path) -> None:
    assert ProjectConfig.load(tmp_path).skills == ()


@pytest.mark.parametrize("command", ["add", "remove"])
def test_add_and_remove_report_a_broken_config_and_leave_it(
    tmp_path: Path, command: str, capsys
) -> None:
    (tmp_path / "skills").mkdir()
    config = tmp_path / "workspace-tools.yaml"
    config.write_text("skills: [unclosed")
    assert run(tmp_path, command, "skills") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is not valid YAML" in err
    assert config.read_text() == "skills: [unclosed"


def test_disable_and_enable(tmp_path: Path, make_skill, capsys) -> None:
    make_skill("alpha")
    make_skill("beta")
    run(tmp_path, "add", "skills")
    capsys.readouterr()
    assert run(tmp_path, "disable", "beta") == 0
    out = capsys.readouterr().out
    assert out.startswith("Disabled 'beta' in ")
    assert "workspace-tools skills enable beta" in out
    assert ProjectConfig.load(tmp_path).disabled_skills == ("beta",)
    assert ProjectConfig.load(tmp_path).skills == ("skills",)  # other settings kept
    assert run(tmp_path, "disable", "beta") == 0
    assert "already disabled" in capsys.readouterr().out
    assert run(tmp_path, "list", "--no-entry-points") == 0
    out = capsys.readouterr().out
    assert "alpha" in out and "beta  local" not in out
    assert "Disabled (workspace-tools.yaml): beta" in out
    assert run(tmp_path, "show", "beta", "--no-entry-points") == 1
    assert "Skill 'beta' is disabled" in capsys.readouterr().err
    assert run(tmp_path, "enable", "beta") == 0
    assert capsys.readouterr().out.startswith("Enabled 'beta' again in ")
    assert ProjectConfig.load(tmp_path).disabled_skills == ()
    assert run(tmp_path, "enable", "beta") == 0
    assert "is not disabled" in capsys.readouterr().out


def test_disable_unknown_skill_fails(tmp_path: Path, make_skill, capsys) -> None:
    make_skill("alpha")
    run(tmp_path, "add", "skills")
    assert run(tmp_path, "disable", "alpah") == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no skill named 'alpah' in this project; nothing disabled.")
    assert ProjectConfig.load(tmp_path).disabled_skills == ()


def test_disable_refuses_an_installed_packages_skill(
    tmp_path: Path, make_skill, monkeypatch, capsys
) -> None:
    make_skill("alpha")
    make_skill("plugged", parent=tmp_path / "plugin")

    class EntryPoint:
        name = "plugin"

        def load(self) -> object:
            return lambda: str(tmp_path / "plugin")

    monkeypatch.setattr(
        registry_module.importlib.metadata,
        "entry_points",
        lambda group: [EntryPoint()] if group == registry_module.ENTRY_POINT_GROUP else [],
    )
    run(tmp_path, "add", "skills")
    capsys.readouterr()
    assert run(tmp_path, "disable", "plugged") == 1  # it was disabled: `skills list` omits it
    assert capsys.readouterr().err == (
        "error: no skill named 'plugged' in this project; nothing disabled. "
        "Skills (as `workspace-tools skills list` shows them): alpha.\n"
    )
    assert ProjectConfig.load(tmp_path).disabled_skills == ()
    assert run(tmp_path, "list") == 0
    assert "plugged" not in capsys.readouterr().out
