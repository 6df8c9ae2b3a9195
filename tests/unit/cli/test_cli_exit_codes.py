"""One exit-status rule for every command: 0 found, 1 nothing found, 2 usage or input error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.paths import REPO
from workspace_tools.cli import main

BM25 = ("--embedder", "none")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_rule_is_documented() -> None:
    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "## Exit status" in text
    for row in ("| 0 | found or done |", "| 1 | nothing found |", "| 2 | usage or input error |"):
        assert row in text
    assert "| 130 | interrupted |" in text


def test_search(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ("--root", str(tree), *BM25, "-q")
    assert run(capsys, *root, "search", "install")[0] == 0
    code, out, _ = run(capsys, *root, "search", "zebra")
    assert code == 1 and out == "No results for 'zebra' (bm25 search).\n"
    code, out, _ = run(capsys, *root, "search", "zebra", "--json")
    assert code == 1 and json.loads(out)["results"] == []


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["search"], ["nope"], ["search", "x", "-k", "many"], ["--nope", "stats"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2, argv
    capsys.readouterr()


def test_docs_commands(docs_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, _ = run(capsys, "docs", "list", "--root", str(empty))
    assert code == 1 and out == f"No docs pages (.md, .mdx) in {empty}.\n"
    code, out, _ = run(capsys, "docs", "list", "--root", str(empty), "--json")
    assert code == 1 and json.loads(out) == []
    assert run(capsys, "docs", "list", "--root", str(docs_root))[0] == 0
    code, _, _ = run(capsys, "docs", "search", "quantum", "--root", str(docs_root))
    assert code == 1


def test_a_folder_filter_on_pages_without_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAbout results.\n", encoding="utf-8")
    code, out, err = run(capsys, "docs", "search", "x", "--root", str(tmp_path), "--folder", "res")
    assert code == 2 and out == ""
    assert "Top-level folders: ." not in err
    assert err == (
        "error: No docs page under folder 'res'. The pages have no subfolders: search without a "
        "folder.\n"
    )


def test_skills_commands(tmp_path: Path, make_skill, capsys: pytest.CaptureFixture[str]) -> None:
    root = ("--root", str(tmp_path))
    code, out, _ = run(capsys, *root, "skills", "list")
    assert code == 1 and out.startswith("No skills found.")
    code, out, _ = run(capsys, *root, "skills", "list", "--json")
    assert code == 1 and json.loads(out)["skills"] == []
    assert run(capsys, *root, "skills", "add", "nope")[0] == 2  # no such path: input error
    (tmp_path / "empty").mkdir()
    assert run(capsys, *root, "skills", "add", "empty")[0] == 1  # nothing found in it
    make_skill("alpha")
    assert run(capsys, *root, "skills", "add", "skills")[0] == 0
    assert run(capsys, *root, "skills", "list")[0] == 0
    assert run(capsys, *root, "skills", "show", "beta")[0] == 1
    assert run(capsys, *root, "skills")[0] == 2  # no subcommand: usage


def test_interrupted_exits_130(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from workspace_tools.cli import grep as grep_cli

    def interrupted(_args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(grep_cli, "cmd_grep", interrupted)
    code, _, err = run(capsys, "--root", str(tree), "grep", "x")
    assert code == 130 and err == "interrupted\n"
