"""One way to open a project: ``Workspace(root)``, the CLI and the toolkit read the same file."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest

import workspace_tools.core.workspace._workspace as workspace_module
from workspace_tools.cli import main
from workspace_tools.core.errors import MissingDependencyError
from workspace_tools.core.text.chunking import ChunkingConfig
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceToolkit


def _project(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    body = "\n".join(f"Line {i} about incremental sync and chunking." for i in range(60))
    (root / "docs" / "a.md").write_text(f"# A\n\n{body}\n", encoding="utf-8")
    (root / "workspace-tools.yaml").write_text(
        "workspace:\n  embedder: none\n  paths: [docs]\n  fusion: rrf\n"
        "  chunking: {max_chars: 300}\n",
        encoding="utf-8",
    )
    return root


def test_workspace_root_applies_the_config_file_like_the_cli(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    assert main(["--root", str(root), "-q", "index"]) == 0
    ws = Workspace(root)  # used to raise IndexMismatchError: chunking differs
    assert dataclasses.replace(ws.chunking, code=None) == ChunkingConfig(max_chars=300)
    assert ws.embedder is None
    assert ws.fusion == "rrf"
    assert ws.default_paths == ["docs"]
    assert len(ws) > 1
    assert ws.search("incremental sync", top_k=1)[0].source_id == "docs/a.md"


def test_arguments_win_over_the_file_and_config_false_ignores_it(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    ws = Workspace(root, fusion="weighted", chunking=ChunkingConfig(max_chars=500))
    assert ws.fusion == "weighted"
    assert ws.chunking.max_chars == 500
    plain = Workspace(root, config=False, embedder=None, index_dir=tmp_path / "other")
    assert dataclasses.replace(plain.chunking, code=None) == ChunkingConfig()
    assert plain.fusion == "zscore"  # the default, not the file's rrf
    assert plain.default_paths is None


def test_toolkit_uses_the_skills_listed_by_skills_add(tmp_path: Path) -> None:
    root = tmp_path / "p"
    skill = root / "team-skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: How we deploy.\n---\nRun make deploy.\n",
        encoding="utf-8",
    )
    assert main(["--root", str(root), "skills", "add", "team-skills"]) == 0
    toolkit = WorkspaceToolkit(workspace=Workspace(root, embedder=None))
    assert toolkit.skills is not None
    assert [s.name for s in toolkit.skills.list_skills()] == ["deploy"]
    assert "skill" in {t.name for t in toolkit.get_tools()}
    # an explicit list still wins, and no paths at all means no skill tools
    none = WorkspaceToolkit(workspace=Workspace(root, embedder=None), skills_paths=[])
    assert none.skills is None
    assert "skill" not in {t.name for t in none.get_tools()}


def test_default_embedder_without_the_vector_extra_falls_back_to_bm25(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(workspace_module, "missing_vector_packages", lambda: ["faiss-cpu"])
    monkeypatch.setattr(workspace_module, "_warned_no_vectors", False)
    with caplog.at_level(logging.WARNING, logger="workspace_tools.core.workspace"):
        ws = Workspace(tmp_path)
    assert ws.modes == ("bm25",)
    assert 'pip install "workspace-tools[vector]"' in caplog.text
    assert "faiss-cpu" in caplog.text


def test_named_model_without_the_vector_extra_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "workspace_tools.core.extras._installed", lambda module: module != "sentence_transformers"
    )
    with pytest.raises(MissingDependencyError) as info:
        Workspace(tmp_path, embedder="BAAI/bge-small-en-v1.5")
    message = str(info.value)
    assert "The embedding model 'BAAI/bge-small-en-v1.5' needs sentence-transformers" in message
    assert 'pip install "workspace-tools[vector]"' in message
    assert "embedder=None" in message


def test_embeddings_object_without_faiss_says_which_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_embedder
) -> None:
    monkeypatch.setattr("workspace_tools.core.extras._installed", lambda module: False)
    with pytest.raises(MissingDependencyError, match=r"Vector search needs faiss-cpu, which is"):
        Workspace(tmp_path, embedder=fake_embedder)
