from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.cli import main
from workspace_tools.core.docs import embedding
from workspace_tools.core.embedding import embedder as embedder_module


def run(argv: list[str]) -> int:
    return main(argv)


def test_docs_without_a_subcommand_shows_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["docs"]) == 2
    out, err = capsys.readouterr()
    assert "docs_command" not in out + err  # was: "the following arguments are required: ..."
    assert out.startswith("usage: workspace-tools docs [-h] COMMAND ...")
    assert "    search    ranked sections for a query\n    list      every page" in out


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


class _BoxEmbedder(FakeEmbedder):
    """Bag-of-words vectors in which "box" and "container" share a word."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return super().embed([t.lower().replace("container", "box") for t in texts])


def test_search_mode_hybrid_ranks_with_the_embedder(
    docs_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("WORKSPACE_TOOLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(embedding, "missing_vector_packages", lambda: [])
    monkeypatch.setattr(embedder_module, "SentenceTransformerEmbedder", _BoxEmbedder)
    root = ["--root", str(docs_root)]
    assert run(["docs", "search", "box", *root]) == 1  # lexical by default: no word in common
    assert run(["docs", "search", "box", *root, "--mode", "lexical"]) == 1
    capsys.readouterr()
    assert run(["docs", "search", "box", *root, "--mode", "hybrid", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["path"] == "guides/deployment.md"
    assert list((tmp_path / "cache" / "docs-vectors").glob("*.npz"))  # vectors kept for next time


def test_search_mode_hybrid_without_a_model_says_why(
    docs_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ["--root", str(docs_root)]
    assert run(["--embedder", "none", "docs", "search", "box", *root, "--mode", "hybrid"]) == 2
    assert capsys.readouterr().err == (
        "error: Hybrid docs search needs an embedding model, but --embedder none: leave "
        "--embedder out (or pass 'default'). Keyword ranking works without one: --mode lexical.\n"
    )
    monkeypatch.setattr(embedding, "missing_vector_packages", lambda: ["faiss-cpu"])
    assert run(["docs", "search", "box", *root, "--mode", "hybrid"]) == 2
    assert capsys.readouterr().err == (
        "error: Hybrid docs search needs an embedding model, but the vector extra is not "
        'installed (faiss-cpu): install it: pip install "workspace-tools[vector]". Keyword '
        "ranking works without one: --mode lexical.\n"
    )
