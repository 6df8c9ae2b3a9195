"""``workspace-tools search`` on source code: the symbol shown, ``--symbol`` and ``--filter``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.code_repo import make_code_repo
from workspace_tools.cli import main
from workspace_tools.core.text.code_chunks import code_available

pytestmark = pytest.mark.skipif(not code_available(), reason="needs the code extra")


def _search(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--root", str(root), "--embedder", "none", "-q", "search", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_search_shows_and_filters_the_symbol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_code_repo(tmp_path / "repo")
    (root / "workspace-tools.yaml").write_text(
        "workspace:\n  chunking: {min_section_chars: 0, code: true}\n", encoding="utf-8"
    )
    code, out, _ = _search(capsys, root, "listens address", "-k", "1")
    assert code == 0
    assert out.startswith(" 1. server/server.go:10-12 (symbol Server.Start)  score ")
    code, out, _ = _search(capsys, root, "document words", "--symbol", "SparseIndex.add")
    assert code == 0
    assert out.startswith(" 1. src/index.py:12-14 (symbol SparseIndex.add)  score ")
    assert "--- 1 result (bm25 search" in out
    code, out, _ = _search(capsys, root, "point server", "--filter", '{"symbol_kind": "struct"}')
    assert code == 0
    assert "(symbol Point)" in out and "(symbol Server)" in out and "--- 2 results" in out
    code, out, _ = _search(capsys, root, "server", "--json", "--symbol", "NewServer")
    (hit,) = json.loads(out)["results"]
    assert hit["metadata"]["symbol"] == "NewServer"
    assert hit["metadata"]["symbol_kind"] == "function"
    code, out, _ = _search(
        capsys, root, "point", "--filter", '{"symbol_kind": "struct"}', "--symbol", "Server"
    )
    assert code == 1 and "No results" in out  # both must hold: Point is no Server
    code, out, err = _search(capsys, root, "point", "--filter", "{symbol: Point}")
    assert code == 2
    assert "--filter takes a JSON object" in err
