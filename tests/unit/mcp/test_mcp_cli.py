"""``workspace-tools mcp`` settings (flags and ``workspace-tools.yaml``) and ``mcp smoke``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.mcp.conftest import server_env, tree_digest
from workspace_tools.cli import build_parser
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.mcp.config import server_options
from workspace_tools.mcp.run import parse_address
from workspace_tools.mcp.server import build_tools


def test_no_settings_serve_the_workspace_and_project_skills(project: Path) -> None:
    options = server_options(project).defaulted(["skills"])
    assert options.workspace == project.resolve()
    assert options.skills == ("skills",)
    assert options.docs is None
    assert not options.read_only


def test_yaml_section_and_flags(project: Path) -> None:
    (project / "workspace-tools.yaml").write_text(
        "skills: [skills]\nmcp:\n  docs: docs\n  docs_scopes: [guides]\n  read_only: true\n"
        "  name: docs-server\n",
        encoding="utf-8",
    )
    options = server_options(project)
    assert options.docs == (project / "docs").resolve()
    assert options.docs_scopes == ("guides",)
    assert options.read_only
    assert options.name == "docs-server"
    assert options.skills == ("skills",)  # the top-level list when not given
    assert options.workspace is None
    flagged = options.with_flags(docs_scopes=["api"], workspace=".", read_only=None)
    assert flagged.docs_scopes == ("api",)
    assert flagged.workspace == project.resolve()
    assert flagged.read_only  # a flag not given leaves the file's value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mcp:\n  doc: docs\n", "Unknown setting(s) doc in 'mcp' in "),
        ("mcp:\n  read_only: yes please\n", "'read_only' in 'mcp' in "),
        ("mcp: [docs]\n", "'mcp' in "),
        ("mcp:\n  docs_scopes: 3\n", "'docs_scopes' in 'mcp' in "),
    ],
)
def test_bad_settings_name_the_key(project: Path, text: str, message: str) -> None:
    (project / "workspace-tools.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(
        InvalidInputError, match=r"^" + message.replace("(", r"\(").replace(")", r"\)")
    ):
        server_options(project)


def test_duplicate_scopes_are_refused(project: Path) -> None:
    options = server_options(project).with_flags(docs="docs", docs_scopes=["guides", "guides"])
    with pytest.raises(
        InvalidInputError,
        match="^Two tools would be named docs_get_page_guides, docs_list_guides, ",
    ):
        build_tools(options)


def test_skip_env_var_drops_the_docs_tools(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKSPACE_TOOLS_DISABLE_DOCS", "1")
    served = build_tools(server_options(project).with_flags(docs="docs", skills=["skills"]))
    assert [t.name for t in served.tools] == ["skill", "skill_read", "skill_search"]
    assert "docs: skipped (WORKSPACE_TOOLS_DISABLE_DOCS)" in served.notes


def test_parse_address() -> None:
    assert parse_address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_address(":9000") == ("127.0.0.1", 9000)
    assert parse_address("[::1]:80") == ("::1", 80)
    with pytest.raises(ValueError, match="--http takes HOST:PORT"):
        parse_address("8765")


def test_parser_has_mcp_and_smoke() -> None:
    args = build_parser().parse_args(
        ["mcp", "--docs", "d", "--docs-scope", "a", "--docs-scope", "b", "--read-only"]
    )
    assert args.docs_scopes == ["a", "b"]
    assert args.read_only is True
    assert args.sync is None
    smoke = build_parser().parse_args(
        ["mcp", "smoke", "--skills", "s", "--skills", "t", "--no-sync"]
    )
    assert smoke.mcp_command == "smoke"
    assert smoke.skills == ["s", "t"]
    assert smoke.sync is False


def test_bad_http_address_exits_2(project: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "workspace_tools.cli", "--root", str(project), "mcp", "--http", "x"],
        capture_output=True,
        text=True,
        timeout=120,
        env=server_env(),
        check=False,
    )
    assert completed.returncode == 2
    assert "--http takes HOST:PORT" in completed.stderr


def _cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workspace_tools.cli", "--root", str(project), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=server_env(),
        check=False,
    )


def test_smoke_command_calls_every_tool_of_the_real_cli_server(project: Path) -> None:
    assert _cli(project, "--embedder", "none", "-q", "index").returncode == 0
    (project / "new.md").write_text("# New\n\nWritten after the index.\n", encoding="utf-8")
    index = tree_digest(project / ".workspace_tools")
    completed = _cli(
        project,
        "--embedder",
        "none",
        "mcp",
        "smoke",
        "--workspace",
        ".",
        "--docs",
        "docs",
        "--docs-scope",
        "guides",
        "--skills",
        "skills",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    lines = completed.stdout.splitlines()
    assert lines[-1] == "11/11 tools ok"  # workspace_status and workspace_read, not workspace_index
    verdicts = {line.split()[1]: line.split()[0] for line in lines[:-1]}
    assert verdicts["docs_get_page_guides"] == "ok"
    assert verdicts["workspace_search"] == "ok"
    assert verdicts["workspace_status"] == "ok"
    assert verdicts["skill"] == "ok"
    assert "workspace_index" not in verdicts  # a read-only server: nothing is written
    assert "workspace_index is not called" in completed.stderr
    assert tree_digest(project / ".workspace_tools") == index


def test_smoke_honours_the_flags_before_and_after_smoke(project: Path) -> None:
    before = tree_digest(project)
    completed = _cli(project, "mcp", "--docs", "docs", "--no-sync", "smoke", "--skills", "skills")
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    tools = [line.split()[1] for line in completed.stdout.splitlines()[:-1]]
    assert sorted(tools) == [
        "docs_get_page",
        "docs_list",
        "docs_refresh_index",
        "docs_search",
        "skill",
        "skill_read",
        "skill_search",
        "workspace_status",  # a docs and skills server's status: what it serves
    ]
    assert completed.stdout.splitlines()[-1] == "8/8 tools ok"
    assert tree_digest(project) == before  # no workspace served, no index written


def test_smoke_of_a_folder_never_indexed_fails_and_writes_nothing(project: Path) -> None:
    before = tree_digest(project)
    completed = _cli(project, "--embedder", "none", "mcp", "smoke")
    assert completed.returncode == 1
    assert f"No index in {project.resolve() / '.workspace_tools' / 'index'} yet" in (
        completed.stderr
    )
    verdicts = {line.split()[1]: line for line in completed.stdout.splitlines()[:-1]}
    assert verdicts["workspace_search"].startswith("FAIL")
    assert verdicts["search_documents"].startswith("FAIL")
    assert "no results, although the query comes from the data" in (verdicts["search_documents"])
    assert tree_digest(project) == before


def test_smoke_fails_a_search_that_finds_nothing() -> None:
    from mcp import types

    from workspace_tools.mcp.smoke import _check

    tool = types.Tool(name="docs_search_api", inputSchema={"type": "object"})
    empty = types.CallToolResult(content=[types.TextContent(type="text", text="No section.")])
    ok, detail = _check(tool, empty)
    assert not ok and detail.startswith("no results, although the query comes from the data")
    rows = types.CallToolResult(
        content=[types.TextContent(type="text", text="1. Hit")], structuredContent={"results": []}
    )
    assert _check(tool, rows)[0] is False
    listing = types.Tool(name="docs_list", inputSchema={"type": "object"})
    assert _check(listing, empty) == (True, "No section.")


def test_mcp_serves_the_index_of_index_dir(project: Path, tmp_path: Path) -> None:
    index = tmp_path / "elsewhere" / "index"
    flags = ("--embedder", "none", "--index-dir", str(index))
    assert _cli(project, *flags, "-q", "index").returncode == 0
    assert index.is_dir()
    assert not (project / ".workspace_tools").exists()
    completed = _cli(project, *flags, "mcp", "smoke", "--workspace", ".")
    assert completed.returncode == 0, completed.stdout + completed.stderr[-3000:]
    assert f"{index} is not written" in completed.stderr
    search = next(line for line in completed.stdout.splitlines() if " workspace_search " in line)
    assert search.startswith("ok")
    assert not (project / ".workspace_tools").exists()  # the server opened the index given


def test_smoke_of_a_server_that_cannot_start_says_why_in_one_line(project: Path) -> None:
    completed = _cli(project, "--embedder", "none", "mcp", "smoke", "--docs", "missing")
    assert completed.returncode == 1
    assert "Traceback" not in completed.stderr
    assert "ExceptionGroup" not in completed.stderr
    last = completed.stderr.strip().splitlines()[-1]
    missing = project.resolve() / "missing"
    assert last == (
        f"error: The MCP server failed: The server could not start its tools: Docs root "
        f"'{missing}' is not a folder. Pass the folder that holds the pages."
    )
