"""The indexed folder's own ``workspace-tools.yaml`` is not trusted (issue 28, items 2, 3, 15).

It may shape how its own content is indexed; it may not move the index outside the root, name a
backend server, a token or a file outside the root, and every value is checked by type.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.cli import main
from workspace_tools.core.errors import InvalidInputError


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Another project, indexed, whose index a hostile folder aims at."""
    root = tmp_path / "victim"
    root.mkdir()
    (root / "secret.md").write_text("# Victim\n\nThe victim's own notes.\n", encoding="utf-8")
    ws = Workspace(root, embedder=None)
    ws.sync()
    ws.save()
    del ws
    gc.collect()  # the connection closes: its -wal and -shm files go
    return root


def _hostile(tmp_path: Path, setting: str) -> Path:
    root = tmp_path / "hostile"
    root.mkdir(exist_ok=True)
    (root / "plant.md").write_text("# Planted\n\nHostile text.\n", encoding="utf-8")
    (root / "workspace-tools.yaml").write_text(
        f"workspace:\n  embedder: none\n  {setting}\n", encoding="utf-8"
    )
    return root


@pytest.mark.parametrize(
    "target",
    ["../victim/.workspace_tools/index", "{victim}/.workspace_tools/index", "link/index"],
)
def test_the_project_file_cannot_move_the_index_outside_the_root(
    tmp_path: Path, victim: Path, target: str
) -> None:
    before = _files(victim)
    hostile = _hostile(tmp_path, f"index_dir: {target.format(victim=victim)}")
    (hostile / "link").symlink_to(victim / ".workspace_tools")
    with pytest.raises(InvalidInputError, match="index_dir: .* is refused: it points outside"):
        Workspace(hostile)
    assert _files(victim) == before
    code = main(["--root", str(hostile), "-q", "index"])
    assert code == 2
    assert _files(victim) == before


def test_the_cli_reports_the_refusal_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = _hostile(tmp_path, "index_dir: /tmp/elsewhere")
    assert main(["--root", str(hostile), "-q", "index"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "--index-dir on the CLI or set $WORKSPACE_TOOLS_INDEX_DIR" in err


def test_the_caller_may_put_the_index_anywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _hostile(tmp_path, "paths: [.]")
    elsewhere = tmp_path / "indexes" / "one"
    ws = Workspace(root, index_dir=elsewhere)
    assert "plant.md" in ws.sync().added
    assert (elsewhere / "index.sqlite3").is_file()
    by_flag = tmp_path / "indexes" / "two"
    assert main(["--root", str(root), "-q", "--index-dir", str(by_flag), "index"]) == 0
    assert (by_flag / "index.sqlite3").is_file()
    by_env = tmp_path / "indexes" / "three"
    monkeypatch.setenv("WORKSPACE_TOOLS_INDEX_DIR", str(by_env))
    assert main(["--root", str(root), "-q", "index"]) == 0
    assert (by_env / "index.sqlite3").is_file()


def test_an_index_dir_inside_the_root_is_still_fine(tmp_path: Path) -> None:
    root = _hostile(tmp_path, "index_dir: build/../.idx")
    ws = Workspace(root)
    assert ws.index_dir == (root / ".idx").resolve()


@pytest.mark.parametrize(
    ("backend", "message"),
    [
        (
            "{type: milvus, uri: 'http://attacker.example:19530'}",
            r"'backend.uri: http://attacker.example:19530' in .* is refused: the folder's own "
            r"file may not send the index \(and your Milvus token\) to a server. Pass it with "
            r"--backend-uri",
        ),
        ("{type: milvus, uri: 'https://x'}", "may not send the index"),
        ("{type: milvus, uri: 'unix:/run/milvus.sock'}", "may not send the index"),
        ("{type: milvus, token: 'root:Milvus'}", r"'backend.token' in .* is refused.*\$WORKSPACE"),
        (
            "{type: milvus, uri: ../victim/milvus.db}",
            "a Milvus Lite file outside the project root",
        ),
    ],
)
def test_the_project_file_cannot_name_a_backend_target(
    tmp_path: Path, backend: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKSPACE_TOOLS_MILVUS_TOKEN", "the-users-token")
    hostile = _hostile(tmp_path, f"backend: {backend}")
    with pytest.raises(InvalidInputError, match=message):
        Workspace(hostile)


# -- item 15: values checked by type, one-line errors -----------------------------------------


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        (
            "scan: {max_file_bytes: x}",
            r"Invalid 'scan.max_file_bytes' .*must be a whole number, got 'x'",
        ),
        ("conversion: {per_format: 5}", r"'conversion.per_format' .*must be a mapping, got 5"),
        ("vector_weight: x", r"Invalid 'vector_weight' .*must be a number, got 'x'"),
        ("vector_weight: 2", r"Invalid 'vector_weight' .*less than or equal to 1, got 2"),
        ("bm25: {method: bogus}", r"Invalid 'bm25' settings .*Unknown BM25 method 'bogus'"),
        ('index_dir: "a\\0b"', r"Invalid 'index_dir' .*must not contain a NUL character"),
        ("read_only: 'false'", r"Invalid 'read_only' .*must be true or false, got 'false'"),
        ("scan: {max_depth: -1}", r"'scan.max_depth' .*greater than or equal to 0, got -1"),
        ("scan: {excluded_dirs: 5}", r"'scan.excluded_dirs' .*must be a list, got 5"),
        ("chunking: {max_chars: x}", r"'chunking.max_chars' .*must be a whole number, got 'x'"),
        ("chunking: {size: 3}", r"Invalid 'chunking' settings .*unknown setting 'size'"),
        ("ranking_prior: 1", r"Invalid 'ranking_prior' .*must be true or false, got 1"),
        ("paths: 5", r"Invalid 'paths' .*must be a list, got 5"),
        ("embedder: 5", r"Invalid 'embedder' .*must be a string, got 5"),
        ("backend: 5", r"Invalid 'backend' .*must be a mapping, got 5"),
    ],
)
def test_project_values_are_checked_by_type(
    tmp_path: Path, setting: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _hostile(tmp_path, setting)
    with pytest.raises(InvalidInputError, match=message):
        Workspace(root)
    assert main(["--root", str(root), "-q", "index"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert not (root / ".workspace_tools").exists()


def test_invalid_utf8_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _hostile(tmp_path, "fusion: zscore")
    (root / "workspace-tools.yaml").write_bytes(b"workspace:\n  fusion: '\xff'\n")
    with pytest.raises(InvalidInputError, match=r"is not UTF-8 text \(byte 22 is 0xff\)"):
        Workspace(root)
    assert main(["--root", str(root), "-q", "index"]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err


def test_read_only_must_be_a_boolean_through_the_api(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="read_only must be true or false, got 'false'"):
        Workspace(tmp_path, embedder=None, config=False, read_only="false")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"vector_weight must be between 0 and 1"):
        Workspace(tmp_path, embedder=None, config=False, vector_weight="x")  # type: ignore[arg-type]


def test_a_negative_scan_depth_is_an_error_not_an_empty_index(tmp_path: Path) -> None:
    from workspace_tools.core.text.scan import ScanConfig

    with pytest.raises(InvalidInputError, match="max_depth must be a whole number >= 0, got -1"):
        ScanConfig(max_depth=-1)


def test_valid_settings_still_apply(tmp_path: Path) -> None:
    root = _hostile(
        tmp_path,
        "scan: {max_depth: 3, include_hidden: true, excluded_dirs: [x]}\n  vector_weight: 1\n"
        "  bm25: {k1: 2}\n  read_only: false\n  paths: plant.md\n  embedder: false",
    )
    ws = Workspace(root)
    assert ws.scan_config.max_depth == 3 and ws.scan_config.excluded_dirs == frozenset({"x"})
    assert ws.vector_weight == 1 and ws.bm25_config.k1 == 2 and ws.read_only is False
    assert ws.default_paths == ["plant.md"] and ws.embedder is None
    assert os.fspath(ws.root) == os.fspath(root.resolve())


@pytest.mark.parametrize("key", ["workspace", "docs"])
def test_the_mcp_section_cannot_serve_another_folder(
    tmp_path: Path, victim: Path, key: str
) -> None:
    from workspace_tools.mcp.config import server_options

    hostile = _hostile(tmp_path, "paths: [.]")
    (hostile / "workspace-tools.yaml").write_text(f"mcp:\n  {key}: ../victim\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=rf"'mcp.{key}: ../victim' in .* is refused"):
        server_options(hostile)
    (hostile / "workspace-tools.yaml").write_text(f"mcp:\n  {key}: .\n", encoding="utf-8")
    assert getattr(server_options(hostile), key) == hostile.resolve()


@pytest.mark.parametrize(
    ("setting", "key", "default"),
    [
        ("scan: {max_file_bytes: 1073741824}", "scan.max_file_bytes", "20971520"),
        ("scan: {max_depth: 1000}", "scan.max_depth", "10"),
        ("conversion: {seconds: 3600}", "conversion.seconds", "10.0"),
        ("conversion: {memory_bytes: 68719476736}", "conversion.memory_bytes", "536870912"),
        ("conversion: {unpacked_bytes: 68719476736}", "conversion.unpacked_bytes", "536870912"),
        (
            "conversion: {per_format: {pdf: {seconds: 600}}}",
            "conversion.per_format.pdf.seconds",
            "10.0",
        ),
        ("conversion: {isolate: false}", "conversion.isolate", "True"),
    ],
)
def test_the_project_file_cannot_raise_a_limit(
    tmp_path: Path, setting: str, key: str, default: str
) -> None:
    root = _hostile(tmp_path, setting)
    with pytest.raises(InvalidInputError, match=rf"'{key}: .*' in .* is refused") as caught:
        Workspace(root)
    message = str(caught.value)
    assert f"not raise it above the default ({default})" in message
    assert "to Workspace to raise it" in message
    assert not (root / ".workspace_tools").exists()  # refused before anything was written
    assert main(["--root", str(root), "-q", "index"]) == 2


def test_the_project_file_may_lower_limits_and_the_caller_may_raise_them(tmp_path: Path) -> None:
    from workspace_tools.core.convert.limits import ConversionLimits
    from workspace_tools.core.text.scan import ScanConfig

    root = _hostile(
        tmp_path, "scan: {max_file_bytes: 1024}\n  conversion: {per_format: {pdf: {seconds: 2}}}"
    )
    ws = Workspace(root)
    assert ws.scan_config.max_file_bytes == 1024
    assert ws.conversion_limits.budget("pdf").seconds == 2
    (root / "workspace-tools.yaml").write_text("workspace:\n  embedder: none\n", encoding="utf-8")
    trusted = Workspace(
        root,
        scan_config=ScanConfig(max_file_bytes=1 << 30),
        conversion_limits=ConversionLimits(seconds=60),
    )
    assert trusted.scan_config.max_file_bytes == 1 << 30
    assert trusted.conversion_limits.seconds == 60
