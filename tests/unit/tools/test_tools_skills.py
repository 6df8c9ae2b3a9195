"""The skill, skill_read and skill_search tools: outputs, artifacts and error messages."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage

from workspace_tools.core.skills import SkillRegistry
from workspace_tools.tools.skills import SkillReadTool, SkillSearchTool, SkillTool, skill_tools


@pytest.fixture
def registry(tmp_path: Path, make_skill) -> SkillRegistry:
    make_skill(
        "pdf-tools",
        "Fill and extract PDF forms. Use when a user asks about PDF forms.",
        "# PDF\n\nUse pdfplumber.\nSee references/forms.md.",
        files={
            "references/forms.md": "# Forms\n\nline 3 about acroform fields\nline 4\nline 5\n",
            "scripts/fill.py": "print('fill')\n",
            "assets/logo.png": b"\x89PNG\r\n\x00\x00binary",
            "references/empty.md": "",
        },
    )
    make_skill("web-research", "Research topics on the web with citations.")
    return SkillRegistry(["skills"], root=tmp_path, entry_points=False)


def call(tool, **args) -> ToolMessage:
    msg = tool.invoke({"args": args, "id": "1", "name": tool.name, "type": "tool_call"})
    assert isinstance(msg, ToolMessage)
    return msg


def test_skill_loads_body_with_resources(registry: SkillRegistry, tmp_path: Path) -> None:
    msg = call(SkillTool(registry=registry), name="pdf-tools")
    folder = tmp_path / "skills" / "pdf-tools"
    assert msg.status == "success"
    assert msg.content == (
        '<skill_content name="pdf-tools">\n'
        f"<skill_folder>{folder}</skill_folder>\n"
        "# PDF\n\nUse pdfplumber.\nSee references/forms.md.\n"
        "<skill_resources>\nassets/logo.png\nreferences/empty.md\nreferences/forms.md\n"
        "scripts/fill.py\n</skill_resources>\n"
        'Read these files with skill_read(skill_name="pdf-tools", path=...); paths are relative '
        "to the skill folder.\n</skill_content>"
    )
    assert msg.artifact["location"] == "skills/pdf-tools/SKILL.md"
    assert msg.artifact["source"] == "local"


def test_skill_by_path(registry: SkillRegistry) -> None:
    msg = call(SkillTool(registry=registry), name="skills/pdf-tools/SKILL.md")
    assert msg.artifact["name"] == "pdf-tools"


def test_skill_unknown_name_did_you_mean(registry: SkillRegistry) -> None:
    msg = call(SkillTool(registry=registry), name="pdf-tool")
    assert msg.status == "error"
    assert msg.content == (
        "No skill named or located at 'pdf-tool'. Did you mean: pdf-tools? Available skills: "
        "pdf-tools, web-research. Call the skill tool with one of these names or a catalogue "
        "location."
    )


def test_skill_read_whole_and_ranges(registry: SkillRegistry) -> None:
    tool = SkillReadTool(registry=registry)
    msg = call(tool, skill_name="pdf-tools", path="references/forms.md")
    assert msg.content == (
        "references/forms.md (lines 1-5 of 5)\n# Forms\n\nline 3 about acroform fields\nline 4\nline 5"
    )
    msg = call(tool, skill_name="pdf-tools", path="./references/forms.md", start_line=3, end_line=4)
    assert msg.content == (
        "references/forms.md (lines 3-4 of 5)\nline 3 about acroform fields\nline 4\n"
        "[... lines 5-5 not shown; call skill_read with start_line=5 to continue]"
    )
    assert msg.artifact["truncated"] is True
    msg = call(tool, skill_name="pdf-tools", path="SKILL.md", start_line=1, end_line=2)
    assert msg.content.startswith("SKILL.md (lines 1-2 of 9)\n---\nname: pdf-tools\n[... lines 3-9")


def test_skill_read_errors(registry: SkillRegistry) -> None:
    tool = SkillReadTool(registry=registry)
    msg = call(tool, skill_name="pdf-tools", path="references/forms.md", start_line=9)
    assert msg.status == "error"
    assert msg.content == (
        "File 'references/forms.md' has 5 lines (valid range 1-5). Requested start_line 9 is past "
        "the end of the file. The file has been fully read; stop paginating."
    )
    msg = call(tool, skill_name="pdf-tools", path="references/forms.md", start_line=4, end_line=2)
    assert msg.content.startswith("start_line 4 is after end_line 2 for 'references/forms.md'")
    msg = call(tool, skill_name="pdf-tools", path="../web-research/SKILL.md")
    assert msg.content == (
        "Invalid skill file path '../web-research/SKILL.md': '..' is not allowed. Paths are "
        "relative to the root of skill 'pdf-tools' and cannot leave it."
    )
    msg = call(tool, skill_name="pdf-tools", path="/etc/passwd")
    assert msg.content.startswith("Invalid skill file path '/etc/passwd': absolute paths are not")
    msg = call(tool, skill_name="pdf-tools", path="references/nope.md")
    assert msg.content == (
        "File 'references/nope.md' not found in skill 'pdf-tools'. Available files: SKILL.md, "
        "assets/logo.png, references/empty.md, references/forms.md, scripts/fill.py."
    )
    msg = call(tool, skill_name="pdf-tool", path="SKILL.md")
    assert msg.content.startswith(
        "No skill named or located at 'pdf-tool'. Did you mean: pdf-tools?"
    )


def test_skill_read_binary_and_empty(registry: SkillRegistry) -> None:
    tool = SkillReadTool(registry=registry)
    msg = call(tool, skill_name="pdf-tools", path="assets/logo.png")
    assert msg.content == (
        "Binary file: assets/logo.png in skill 'pdf-tools' (14 bytes); its content is not shown. "
        "Use it by path if the instructions say so."
    )
    assert msg.artifact["binary"] is True
    msg = call(tool, skill_name="pdf-tools", path="references/empty.md")
    assert msg.content == "File 'references/empty.md' in skill 'pdf-tools' is empty."


def test_skill_read_symlink_escape(registry: SkillRegistry, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (tmp_path / "skills" / "pdf-tools" / "references" / "leak.md").symlink_to(secret)
    msg = call(SkillReadTool(registry=registry), skill_name="pdf-tools", path="references/leak.md")
    assert msg.status == "error"
    assert "resolves outside skill 'pdf-tools'" in msg.content


def test_skill_read_long_file_is_paged(registry: SkillRegistry, tmp_path: Path) -> None:
    long = tmp_path / "skills" / "pdf-tools" / "references" / "long.md"
    long.write_text("\n".join(f"l{i}" for i in range(1, 2101)))
    msg = call(SkillReadTool(registry=registry), skill_name="pdf-tools", path="references/long.md")
    assert msg.content.startswith("references/long.md (lines 1-2000 of 2100)\nl1\n")
    assert msg.content.endswith(
        "[... lines 2001-2100 not shown; call skill_read with start_line=2001 to continue]"
    )


def test_skill_search(registry: SkillRegistry) -> None:
    tool = SkillSearchTool(registry=registry)
    msg = call(tool, query="acroform fields")
    assert msg.content == (
        "[pdf-tools] references/forms.md (lines 3-3) (score: "
        f"{msg.artifact[0]['score']:.2f})\nline 3 about <<acroform>> <<fields>>"
    )
    # a word only in a description finds the skill (Mastra's body-only search does not)
    msg = call(tool, query="citations")
    assert msg.artifact[0]["skill_name"] == "web-research"
    assert msg.artifact[0]["source"] == "SKILL.md"
    msg = call(tool, query="pdf", skill_names=["web-research"])
    assert msg.content == "No results found for 'pdf' in skills web-research. Try other keywords."
    assert msg.artifact == []


def test_skill_search_top_k_and_validation(registry: SkillRegistry) -> None:
    tool = SkillSearchTool(registry=registry)
    assert len(call(tool, query="pdf forms line", top_k=1).artifact) == 1
    msg = call(tool, query="pdf", top_k=0)
    assert msg.status == "error"
    assert msg.content.startswith(
        "Invalid tool input: 'top_k': Input should be greater than or equal to 1"
    )


def test_skill_tools_bundle(registry: SkillRegistry) -> None:
    assert [t.name for t in skill_tools(registry)] == ["skill", "skill_read", "skill_search"]
