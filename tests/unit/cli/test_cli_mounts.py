"""``--mount PREFIX=PATH``: more folders in the index, on every command (issue 40)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workspace_tools.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    root, handbook = tmp_path / "root", tmp_path / "handbook"
    root.mkdir()
    (handbook / "sub").mkdir(parents=True)
    (root / "todo.md").write_text("feed the zebra\n", encoding="utf-8")
    (handbook / "guide.md").write_text("# Guide\n\nThe zebra guide.\n", encoding="utf-8")
    (handbook / "sub" / "deep.md").write_text("a deep zebra page\n", encoding="utf-8")
    return root, handbook


def test_index_search_and_grep_see_the_mount_under_its_prefix(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, handbook = places
    monkeypatch.chdir(root)  # `docs` on the command line: no such folder here, so the mount's
    base = ["--root", str(root), "--embedder", "none", "--mount", f"/docs={handbook}"]
    code, out, _ = run(capsys, *base, "index")
    assert code == 0 and out.startswith("Indexed: 3 added, 0 updated, 0 removed")
    code, out, _ = run(capsys, *base, "search", "zebra", "--json", "-q")
    assert sorted(r["source_id"] for r in json.loads(out)["results"]) == [
        "docs/guide.md",
        "docs/sub/deep.md",
        "todo.md",
    ]
    code, out, _ = run(capsys, *base, "grep", "zebra", "docs/**/*.md")
    assert out.splitlines() == [
        "docs/guide.md:3: The zebra guide.",
        "docs/sub/deep.md:1: a deep zebra page",
    ]
    code, out, _ = run(capsys, *base, "grep", "-l", "zebra", str(handbook / "sub"))
    assert out.splitlines() == ["docs/sub/deep.md"]  # a path in the mount, as its id
    code, out, _ = run(capsys, *base, "grep", "zebra", "docs", "--glob", "**/deep.md")
    assert out.splitlines() == ["docs/sub/deep.md:1: a deep zebra page"]


def test_the_option_goes_before_or_after_the_command_and_repeats(
    places: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, handbook = places
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "zoo.py").write_text("zebra = 1\n", encoding="utf-8")
    code, out, _ = run(
        capsys,
        *("--root", str(root), "--embedder", "none", "--mount", f"docs={handbook}"),
        *("index", "--mount", f"src={tmp_path / 'code'}"),
    )
    assert code == 0 and "Index: 4 sources" in out
    code, out, _ = run(capsys, "--root", str(root), "grep", "-c", "zebra", "src")
    assert code == 2  # without the mount, `src` is no folder of the root


def test_the_environment_gives_mounts_when_no_flag_does(
    places: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root, handbook = places
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "zoo.py").write_text("zebra = 1\n", encoding="utf-8")
    monkeypatch.setenv(
        "WORKSPACE_TOOLS_MOUNTS", f"docs={handbook}{os.pathsep}src={tmp_path / 'code'}"
    )
    code, out, _ = run(capsys, "--root", str(root), "grep", "-l", "zebra")
    assert out.splitlines() == ["todo.md", "docs/guide.md", "docs/sub/deep.md", "src/zoo.py"]
    code, out, _ = run(
        capsys, "--root", str(root), "--mount", f"d={handbook}", "grep", "-l", "zebra"
    )
    assert out.splitlines() == ["todo.md", "d/guide.md", "d/sub/deep.md"]  # the flag wins


def test_search_freshens_a_changed_mount(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, handbook = places
    base = ["--root", str(root), "--embedder", "none", "--mount", f"/docs={handbook}"]
    assert run(capsys, *base, "index")[0] == 0
    (handbook / "okapi.md").write_text("okapi facts\n", encoding="utf-8")
    code, out, _ = run(capsys, *base, "search", "okapi", "--json", "-q")
    assert code == 0
    assert [r["source_id"] for r in json.loads(out)["results"]] == ["docs/okapi.md"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--mount", "docs", "grep", "x"],
            "error: --mount 'docs' is not PREFIX=PATH. Give a prefix, '=' and a folder, like "
            "--mount /docs=../handbook.",
        ),
        (
            ["--mount", "a/b={handbook}", "grep", "x"],
            "error: Mount '/a/b' -> '{handbook}': the prefix must be one simple folder name",
        ),
        (
            ["--mount", "docs={handbook}/none", "index"],
            "error: Mount '/docs' -> '{handbook}/none': no such folder ({handbook}/none). Mount "
            "an existing folder.",
        ),
    ],
)
def test_bad_mounts_exit_2_with_the_reason(
    places: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    root, handbook = places
    argv = [a.format(handbook=handbook) for a in args]
    code, _, err = run(capsys, "--root", str(root), "--embedder", "none", *argv)
    assert code == 2
    assert err.startswith(message.format(handbook=handbook))


def test_the_project_file_may_not_mount_outside_the_root_but_the_flag_may(
    places: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, handbook = places
    config = root / "workspace-tools.yaml"
    config.write_text("workspace:\n  mounts:\n    /docs: ../handbook\n", encoding="utf-8")
    code, _, err = run(capsys, "--root", str(root), "grep", "zebra")
    assert code == 2
    assert err == (
        f"error: 'mounts: /docs: ../handbook' in {config} is refused: it points outside the "
        f"project root ({handbook}), and the folder's own file may not mount a folder outside "
        "it. Pass mounts= to Workspace, --mount PREFIX=PATH on the CLI or set "
        "$WORKSPACE_TOOLS_MOUNTS.\n"
    )
    config.write_text("workspace:\n  paths: [docs]\n", encoding="utf-8")
    code, out, _ = run(
        capsys, "--root", str(root), "--mount", f"docs={handbook}", "grep", "-l", "zebra"
    )
    assert out.splitlines() == ["todo.md", "docs/guide.md", "docs/sub/deep.md"]
