"""SKILL.md parsing and validation against the Agent Skills spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools.core.errors import SkillFormatError
from workspace_tools.core.skills import parse_skill_file, parse_skill_text, validate_name
from workspace_tools.core.skills.parse import MAX_FRONTMATTER_CHARS


def parse(text: str, folder: str = "my-skill", *, strict: bool = False):
    return parse_skill_text(text, folder=Path("/x") / folder, strict=strict)


def doc(front: str, body: str = "Body.") -> str:
    return f"---\n{front}\n---\n{body}\n"


@pytest.mark.parametrize("name", ["a", "abc", "a1", "pdf-tools", "x" * 64, "9-lives", "café"])
def test_valid_names(name: str) -> None:
    assert validate_name(name) == []


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("x" * 65, "65 characters; the limit is 64"),
        ("PDF", "only lowercase letters, digits and hyphens"),
        ("my_skill", "only lowercase letters, digits and hyphens"),
        ("my.skill", "only lowercase letters, digits and hyphens"),
        ("my skill", "only lowercase letters, digits and hyphens"),
        ("-lead", "must not start or end with a hyphen"),
        ("trail-", "must not start or end with a hyphen"),
        ("dou--ble", "must not contain consecutive hyphens"),
    ],
)
def test_invalid_names(name: str, fragment: str) -> None:
    problems = validate_name(name)
    assert any(fragment in p for p in problems), problems


def test_invalid_name_suggests_a_fix() -> None:
    assert "'my-skill'" in validate_name("My_Skill")[0]


def test_minimal_skill_parses_with_no_diagnostics() -> None:
    result = parse(doc("name: my-skill\ndescription: D.", "\n\n# Hi\n\nText.\n\n"))
    assert result.diagnostics == []
    skill = result.skill
    assert skill is not None
    assert (skill.name, skill.description, skill.body) == ("my-skill", "D.", "# Hi\n\nText.")
    assert skill.body_line == 7  # ---, 2 fields, ---, 2 blank lines, then "# Hi"
    assert skill.path == Path("/x/my-skill")
    assert skill.source == "local"


def test_all_optional_fields() -> None:
    front = (
        "name: my-skill\ndescription: D.\nlicense: MIT\ncompatibility: Python 3.10+\n"
        "metadata:\n  author: me\n  version: '1.0'\nallowed-tools: Bash(git:*) Read\n"
        "user-invocable: true"
    )
    result = parse(doc(front))
    assert result.diagnostics == []
    s = result.skill
    assert s is not None
    assert s.license == "MIT"
    assert s.compatibility == "Python 3.10+"
    assert dict(s.metadata) == {"author": "me", "version": "1.0"}
    assert s.allowed_tools == ("Bash(git:*)", "Read")
    assert s.user_invocable is True


def test_allowed_tools_as_list_and_commas() -> None:
    s = parse(doc("name: my-skill\ndescription: D.\nallowed-tools: [Read, Write]")).skill
    assert s is not None
    assert s.allowed_tools == ("Read", "Write")
    s = parse(doc("name: my-skill\ndescription: D.\nallowed-tools: Read, Write")).skill
    assert s is not None
    assert s.allowed_tools == ("Read", "Write")


def test_missing_name_is_skipped_with_error() -> None:
    result = parse(doc("description: D."))
    assert result.skill is None
    [diag] = result.diagnostics
    assert diag.severity == "error"
    assert diag.field == "name"
    assert diag.message.startswith(
        "a non-empty string is required for 'name' (missing); the skill was skipped"
    )


@pytest.mark.parametrize(
    ("front", "got"),
    [
        ("name: my-skill", "missing"),
        ("name: my-skill\ndescription: ''", "got string ''"),
        ("name: my-skill\ndescription: '   '", "got string '   '"),
        ("name: my-skill\ndescription: 42", "got integer 42"),
    ],
)
def test_unusable_description_is_skipped(front: str, got: str) -> None:
    result = parse(doc(front))
    assert result.skill is None
    assert result.diagnostics[-1].field == "description"
    assert f"({got})" in result.diagnostics[-1].message


def test_name_not_a_string_is_skipped() -> None:
    result = parse(doc("name: 123\ndescription: D."))
    assert result.skill is None
    assert "got integer 123" in result.diagnostics[0].message


def test_name_must_match_folder_but_still_loads() -> None:
    result = parse(doc("name: other\ndescription: D."), folder="my-skill")
    assert result.skill is not None
    assert result.skill.name == "other"
    [diag] = result.diagnostics
    assert diag.severity == "warning"
    assert diag.message == (
        "name 'other' must equal the folder name 'my-skill'; rename the folder or the skill."
    )


def test_bad_name_loads_with_warnings_and_strict_raises() -> None:
    text = doc("name: My_Skill\ndescription: D.")
    result = parse(text, folder="My_Skill")
    assert result.skill is not None
    assert [d.field for d in result.diagnostics] == ["name"]
    with pytest.raises(SkillFormatError, match="may contain only lowercase letters"):
        parse(text, folder="My_Skill", strict=True)


def test_description_limits() -> None:
    assert parse(doc("name: my-skill\ndescription: x")).diagnostics == []
    ok = "d" * 1024
    assert parse(doc(f"name: my-skill\ndescription: {ok}")).diagnostics == []
    result = parse(doc(f"name: my-skill\ndescription: {ok}d"))
    assert result.skill is not None
    assert result.diagnostics[0].message == ("is 1025 characters; the limit is 1024. Shorten it.")


def test_unknown_fields_are_reported() -> None:
    result = parse(doc("name: my-skill\ndescription: D.\nversion: 1.0\ntags: [a]"))
    assert result.skill is not None
    assert [d.field for d in result.diagnostics] == ["version", "tags"]
    assert "unknown field 'version' ignored; allowed fields: name, description" in (
        result.diagnostics[0].message
    )


def test_optional_field_types() -> None:
    front = (
        "name: my-skill\ndescription: D.\nlicense: [MIT]\ncompatibility: 5\n"
        "metadata: [a, b]\nallowed-tools: {a: 1}\nuser-invocable: 'yes'"
    )
    result = parse(doc(front))
    s = result.skill
    assert s is not None
    assert (s.license, s.compatibility, dict(s.metadata), s.allowed_tools, s.user_invocable) == (
        None,
        None,
        {},
        (),
        False,
    )
    fields = [d.field for d in result.diagnostics]
    assert fields == ["license", "compatibility", "metadata", "allowed-tools", "user-invocable"]
    assert (
        result.diagnostics[-1].message
        == "must be true or false, got string 'yes'; treated as false."
    )


def test_metadata_values_coerced_or_dropped() -> None:
    result = parse(doc("name: my-skill\ndescription: D.\nmetadata: {a: 1, b: true, c: [1], d: x}"))
    s = result.skill
    assert s is not None
    assert dict(s.metadata) == {"a": "1", "b": "true", "d": "x"}
    assert [d.message for d in result.diagnostics] == [
        "value of 'a' should be a string, got integer; converted to '1'.",
        "value of 'b' should be a string, got boolean; converted to 'true'.",
        "value of 'c' must be a string, got list; dropped.",
    ]


def test_compatibility_limit() -> None:
    result = parse(doc(f"name: my-skill\ndescription: D.\ncompatibility: {'c' * 501}"))
    assert result.diagnostics[0].message == "is 501 characters; the limit is 500."


def test_no_frontmatter_is_skipped() -> None:
    result = parse("# Just markdown\n")
    assert result.skill is None
    assert result.diagnostics[0].message.startswith("no YAML frontmatter: the file must start")


def test_unclosed_frontmatter() -> None:
    result = parse("---\nname: my-skill\ndescription: D.\n")
    assert result.skill is None
    assert result.diagnostics[0].message.startswith("frontmatter is not closed")


def test_bad_yaml_is_skipped() -> None:
    result = parse(doc("name: [unclosed\ndescription: D."))
    assert result.skill is None
    assert result.diagnostics[0].severity == "error"
    assert result.diagnostics[0].message.startswith("frontmatter is not valid YAML (")


def test_frontmatter_must_be_a_mapping() -> None:
    result = parse(doc("- a\n- b"))
    assert result.skill is None
    assert (
        result.diagnostics[0].message == "frontmatter must be a YAML mapping of fields, got list."
    )


def test_unquoted_colon_is_repaired_with_a_warning() -> None:
    result = parse(doc("name: my-skill\ndescription: Use when: the user asks"))
    assert result.skill is not None
    assert result.skill.description == "Use when: the user asks"
    assert "it was read by quoting the values" in result.diagnostics[0].message


def test_bad_yaml_strict_raises() -> None:
    with pytest.raises(
        SkillFormatError,
        match=r"Invalid SKILL.md at /x/my-skill/SKILL.md: frontmatter is not valid YAML",
    ):
        parse(doc("name: [unclosed\ndescription: D."), strict=True)


def test_alias_bomb_is_rejected() -> None:
    lines = ["name: my-skill", "description: D.", "a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"b{i}: &b{i} [" + ", ".join([f"*{'a' if i == 1 else f'b{i - 1}'}"] * 9) + "]")
    result = parse(doc("\n".join(lines)))
    assert result.skill is None
    assert "YAML aliases; the limit is 20" in result.diagnostics[0].message


def test_huge_frontmatter_is_rejected() -> None:
    front = "name: my-skill\ndescription: D.\n" + "x: " + "y" * MAX_FRONTMATTER_CHARS
    result = parse(doc(front))
    assert result.skill is None
    assert result.diagnostics[0].message.startswith(
        f"frontmatter is over the limit of {MAX_FRONTMATTER_CHARS} characters"
    )


def test_python_tags_are_not_executed() -> None:
    result = parse(doc("name: my-skill\ndescription: !!python/object/apply:os.system ['echo hi']"))
    assert result.skill is None
    assert "not valid YAML" in result.diagnostics[0].message


def test_bom_and_crlf() -> None:
    text = "\ufeff---\r\nname: my-skill\r\ndescription: D.\r\n---\r\nBody\r\n"
    result = parse(text)
    assert result.skill is not None
    assert result.skill.description == "D."


def test_long_body_warnings() -> None:
    body = "\n".join(["word " * 20] * 501)
    result = parse(doc("name: my-skill\ndescription: D.", body))
    messages = [d.message for d in result.diagnostics]
    assert messages[0].startswith("body has 501 lines (recommended at most 500)")
    assert messages[1].startswith("body is about 13026 tokens (recommended at most 5000)")


def test_strict_error_lists_every_problem() -> None:
    with pytest.raises(SkillFormatError) as info:
        parse(doc("name: other\ndescription: D.\nversion: 2"), strict=True)
    assert str(info.value) == (
        "Invalid SKILL.md at /x/my-skill/SKILL.md:\n"
        "- name: name 'other' must equal the folder name 'my-skill'; rename the folder or the skill.\n"
        "- version: unknown field 'version' ignored; allowed fields: name, description, license, "
        "compatibility, metadata, allowed-tools, user-invocable, disable-model-invocation. "
        "Move it under `metadata`."
    )


def test_parse_file_errors(tmp_path: Path) -> None:
    missing = parse_skill_file(tmp_path / "nope" / "SKILL.md")
    assert missing.skill is None
    assert "cannot read the file" in missing.diagnostics[0].message
    bad = tmp_path / "bin" / "SKILL.md"
    bad.parent.mkdir()
    bad.write_bytes(b"---\nname: bin\n\xff\xfe")
    result = parse_skill_file(bad)
    assert result.diagnostics[0].message == "file is not valid UTF-8 text; save it as UTF-8."


def test_parse_file_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import workspace_tools.core.skills.parse as parse_module

    monkeypatch.setattr(parse_module, "MAX_SKILL_FILE_BYTES", 10)
    path = tmp_path / "big" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(doc("name: big\ndescription: D."))
    result = parse_skill_file(path)
    assert result.skill is None
    assert result.diagnostics[0].message.startswith("file is 40 bytes; the limit is 10.")
