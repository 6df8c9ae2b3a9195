"""Discovery forms: folder of skills, one skill, SKILL.md path, globs; resource lists."""

from __future__ import annotations

from pathlib import Path

from workspace_tools.core.skills import discover, is_glob, list_resources


def names(found) -> list[str]:
    return sorted(p.parent.name for p in found.skill_files)


def test_is_glob() -> None:
    assert is_glob("**/skills")
    assert is_glob("a/{b,c}")
    assert is_glob("a?")
    assert is_glob("[ab]")
    assert not is_glob("skills/my-skill")


def test_folder_of_skills_scans_one_level(tmp_path, make_skill, skills_dir) -> None:
    make_skill("a")
    make_skill("b")
    make_skill("deep", parent=skills_dir / "group")  # nested: needs a glob
    (skills_dir / "not-a-skill").mkdir()
    assert names(discover("skills", base=tmp_path)) == ["a", "b"]


def test_single_skill_folder_and_skill_md(tmp_path, make_skill) -> None:
    make_skill("a")
    make_skill("b")
    assert names(discover("skills/a", base=tmp_path)) == ["a"]
    assert names(discover("skills/a/SKILL.md", base=tmp_path)) == ["a"]
    assert names(discover(str(tmp_path / "skills/a/"), base=Path("/"))) == ["a"]


def test_missing_paths_give_a_diagnostic(tmp_path) -> None:
    found = discover("nope", base=tmp_path)
    assert found.skill_files == []
    assert found.diagnostics[0].message == (
        f"skills path does not exist (looked for {tmp_path / 'nope'}); create it or fix the path."
    )
    found = discover("nope/SKILL.md", base=tmp_path)
    assert found.skill_files == []
    assert found.diagnostics
    found = discover("nope/**/skills", base=tmp_path)
    assert found.skill_files == []
    assert found.diagnostics


def test_glob_dirs_with_dot_folders(tmp_path, make_skill) -> None:
    make_skill("a", parent=tmp_path / "pkg" / "skills")
    make_skill("b", parent=tmp_path / ".agents" / "skills")
    make_skill("c", parent=tmp_path / "x" / "y" / "skills")
    assert names(discover("**/skills", base=tmp_path)) == ["a", "b", "c"]
    assert names(discover("./**/skills", base=tmp_path)) == ["a", "b", "c"]
    assert names(discover("**/skills/", base=tmp_path)) == ["a", "b", "c"]


def test_glob_skill_md_files_and_braces(tmp_path, make_skill) -> None:
    make_skill("a", parent=tmp_path / "one")
    make_skill("b", parent=tmp_path / "two")
    make_skill("c", parent=tmp_path / "three")
    assert names(discover("**/SKILL.md", base=tmp_path)) == ["a", "b", "c"]
    assert names(discover("{one,two}/*", base=tmp_path)) == ["a", "b"]
    assert names(discover("t*/*/SKILL.md", base=tmp_path)) == ["b", "c"]
    assert names(discover("[ot]*/[!b]", base=tmp_path)) == ["a", "c"]


def test_glob_depth_limit_is_four_below_base(tmp_path, make_skill) -> None:
    make_skill("d4", parent=tmp_path / "base" / "1" / "2" / "3")  # skill folder at depth 4
    make_skill("d5", parent=tmp_path / "base" / "1" / "2" / "3" / "4")  # depth 5
    assert names(discover("base/**/SKILL.md", base=tmp_path)) == ["d4"]
    # depth counts from the glob base, so a deeper base reaches further
    assert names(discover("base/1/**/SKILL.md", base=tmp_path)) == ["d4", "d5"]


def test_glob_no_duplicates_across_matches(tmp_path, make_skill, skills_dir) -> None:
    make_skill("a")
    found = discover("**", base=tmp_path)  # matches skills/, skills/a, skills/a/SKILL.md
    assert [p.parent.name for p in found.skill_files] == ["a"]


def test_glob_under_skills_folder(tmp_path, make_skill, skills_dir) -> None:
    make_skill("a")
    make_skill("b", parent=skills_dir / "group")
    assert names(discover("skills/**", base=tmp_path)) == ["a", "b"]


def test_resources_listing(tmp_path, make_skill) -> None:
    folder = make_skill(
        "a",
        files={
            "references/guide.md": "x",
            "references/deep/more.md": "y",
            "scripts/run.py": "print()",
            "assets/logo.png": b"\x89PNG\x00",
            "other/notes.md": "not a resource folder",
        },
    )
    assert list_resources(folder) == (
        "assets/logo.png",
        "references/deep/more.md",
        "references/guide.md",
        "scripts/run.py",
    )


def test_resources_skip_symlinked_folders(tmp_path, make_skill) -> None:
    folder = make_skill("a", files={"references/a.md": "x"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("s")
    (folder / "references" / "link").symlink_to(outside, target_is_directory=True)
    assert list_resources(folder) == ("references/a.md",)
