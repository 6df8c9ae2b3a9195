from __future__ import annotations

import json
from pathlib import Path

import pytest

from workspace_tools.cli import main


def run(argv: list[str]) -> int:
    return main(argv)


def test_search_prints_ranked_sections(docs_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["docs", "search", "registry", "--root", str(docs_root), "-k", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. Deployment Guide › Docker  (guides/deployment.md:")
    assert "<<registry>>" in out


def test_search_json_and_no_match(docs_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["docs", "search", "docker", "--root", str(docs_root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["path"] == "guides/deployment.md"
    assert run(["docs", "search", "quantum", "--root", str(docs_root)]) == 1
    assert "No section matches 'quantum'." in capsys.readouterr().out


def test_list_with_folder_and_errors(docs_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["docs", "list", "--root", str(docs_root), "--folder", "guides"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "guides/caching.md\tCaching Strategies",
        "guides/deployment.md\tDeployment Guide",
        "guides/plain.md\tplain",
    ]
    assert run(["docs", "list", "--root", str(docs_root), "--folder", "../x"]) == 2
    assert "outside the docs root" in capsys.readouterr().err
