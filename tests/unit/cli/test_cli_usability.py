"""What a new user trips over on the command line: one test per item of issue 18."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace_tools import __version__
from workspace_tools.cli import main
from workspace_tools.core.config import ProjectConfig

BM25 = ("--embedder", "none")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("where", ["before", "after"])
def test_root_before_or_after_every_subcommand(
    where: str, tree: Path, make_skill, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.chdir(tree.parent)  # "." is not the workspace: --root must be honoured
    make_skill("alpha", parent=tree / "skills")

    def call(*command: str) -> tuple[int, str, str]:
        root = ("--root", str(tree))
        if where == "before":
            return run(capsys, *root, *BM25, *command)
        head, *rest = command
        if head in {"skills", "docs"}:  # --root right after the subcommand and its action
            return run(capsys, *BM25, head, rest[0], *root, *rest[1:])
        return run(capsys, *BM25, head, *root, *rest)

    assert call("index")[0] == 0
    code, out, _ = call("search", "install package")
    assert code == 0 and "docs/guide.md" in out
    code, out, _ = call("stats")
    assert code == 0 and json.loads(out)["root"] == str(tree.resolve())
    assert call("skills", "add", "skills")[0] == 0
    assert ProjectConfig.load(tree).skills == ("skills",)
    code, out, _ = call("skills", "list")
    assert code == 0 and "alpha" in out
    code, out, _ = call("docs", "search", "installation")
    assert code == 0 and "guide" in out.lower()
    code, out, _ = call("remove", "docs/faq.md")
    assert code == 0 and "Removed 1 source." in out


def test_root_after_the_subcommand_wins(tree: Path, tmp_path: Path, capsys) -> None:
    code, out, _ = run(capsys, "--root", str(tmp_path / "elsewhere"), *BM25, "stats")
    assert code == 2  # a missing root is an error, not a silent default
    code, out, _ = run(capsys, "--root", "/nope", *BM25, "stats", "--root", str(tree))
    assert code == 0 and json.loads(out)["root"] == str(tree.resolve())


def test_remove_is_not_undone_by_the_next_search(tree: Path, capsys) -> None:
    root = ("--root", str(tree), *BM25)
    run(capsys, *root, "-q", "index")
    code, out, _ = run(capsys, *root, "remove", "docs/guide.md")
    assert code == 0
    assert "Removed 1 source." in out
    assert "come back at the next `index`" in out
    code, out, err = run(capsys, *root, "search", "install package")
    assert code == 1  # nothing found: the one file about it was removed
    assert "docs/guide.md" not in out
    assert "Indexed:" not in out + err  # no sync, so nothing re-added or re-embedded
    assert json.loads(run(capsys, *root, "stats")[1])["sources"] == 3
    # --sync refreshes from disk on request
    code, out, _ = run(capsys, *root, "search", "install package", "--sync")
    assert code == 0 and "docs/guide.md" in out


def test_search_indexes_a_fresh_folder_unless_no_sync(tree: Path, capsys) -> None:
    code, out, err = run(capsys, "--root", str(tree), *BM25, "search", "install", "--no-sync")
    assert code == 1 and "No results" in out and "indexing" not in err
    code, out, err = run(capsys, "--root", str(tree), *BM25, "-q", "search", "install")
    assert code == 0 and "docs/guide.md" in out
    assert err == "" and "Indexed:" not in out  # -q: results only, though it indexed first


def test_grammar_of_counts(tree: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tree)
    root = ("--root", str(tree), *BM25)
    code, out, _ = run(capsys, *root, "-q", "index", "docs/faq.md")
    assert code == 0
    assert "0 unchanged files; 1 chunk (0 embedded)" in out
    assert "Index: 1 source, 1 chunk, modes bm25" in out
    code, out, _ = run(capsys, *root, "search", "keyword ranking", "--no-sync")
    assert "--- 1 result (bm25 search" in out
    code, out, _ = run(capsys, *root, "remove", "docs/faq.md")
    assert "Removed 1 source." in out
    code, out, _ = run(capsys, *root, "remove", "docs/faq.md")
    assert code == 1 and "Nothing indexed matches 'docs/faq.md'." in out


def test_index_paths_are_relative_to_the_current_folder(tree: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tree / "docs")
    code, out, _ = run(capsys, "--root", str(tree), *BM25, "-q", "index", "guide.md")
    assert code == 0 and "1 added" in out
    code, out, _ = run(capsys, "--root", str(tree), *BM25, "-q", "index", "missing.md")
    assert code == 2
    code, _, err = run(capsys, "--root", str(tree), *BM25, "-q", "index", "missing.md")
    assert code == 2
    assert err.startswith("error: Path 'missing.md' does not exist")
    assert str(tree / "docs" / "missing.md") in err
    outside = tree.parent / "outside.md"
    outside.write_text("# Out\n", encoding="utf-8")
    code, _, err = run(capsys, "--root", str(tree), *BM25, "index", str(outside))
    assert code == 2 and "is outside the workspace root" in err


def test_bad_embedder_is_an_error_line_and_exit_2(tree: Path, capsys) -> None:
    code, out, err = run(
        capsys, "--root", str(tree), "--embedder", "nope/not-a-model", "search", "install"
    )
    assert code == 2
    assert err.startswith("error: Embedding model 'nope/not-a-model' is neither a local folder")
    assert "Traceback" not in err
    assert "'none'" in err


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"workspace-tools {__version__}"


def test_closed_pipe_exits_quietly(tree: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-m", "workspace_tools.cli", "--root", str(tree), *BM25]
    subprocess.run([*args, "-q", "index"], check=True, capture_output=True, env=env)
    with subprocess.Popen(
        [*args, "search", "install"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # like `| head` exiting before the output comes
        err = proc.stderr.read().decode()
        code = proc.wait(timeout=120)
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert code == 141


def test_skills_add_of_a_folder_without_skills_fails(tmp_path: Path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    code, out, err = run(capsys, "--root", str(tmp_path), "skills", "add", "empty")
    assert code == 1
    assert err.startswith("error: no skills found in 'empty'")
    assert not (tmp_path / "workspace-tools.yaml").exists()


def test_skills_and_docs_on_a_missing_root_fail(tmp_path: Path, capsys) -> None:
    missing = str(tmp_path / "nope")
    code, _, err = run(capsys, "--root", missing, "skills", "list")
    assert code == 2 and err.startswith("error: Project root") and "is not a folder" in err
    code, _, err = run(capsys, "--root", missing, "skills", "add", "x")
    assert code == 2 and "is not a folder" in err
    code, _, err = run(capsys, "--root", missing, "docs", "list")
    assert code == 2 and err.startswith("error: ")
