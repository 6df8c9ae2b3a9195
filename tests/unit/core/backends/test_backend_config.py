"""Choosing a backend: the argument, workspace-tools.yaml, the CLI flag, and their errors."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools.cli import build_parser
from workspace_tools.core.backends.config import BackendConfig, backend_config
from workspace_tools.core.errors import InvalidInputError, MissingDependencyError, WorkspaceError
from workspace_tools.core.workspace import Workspace


def test_the_default_backend_is_embedded(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    assert ws.backend_config == BackendConfig()
    assert ws.stats()["backend"] == "embedded"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("elastic", r"Unknown search backend 'elastic'\. Use one of: embedded, milvus\."),
        ({"type": "milvus", "analyser": "x"}, r"Unknown key\(s\) analyser in backend\. Known:"),
        ({"type": "milvus", "analyzer": "icu"}, r"Unknown Milvus analyzer 'icu'\. Use one of"),
        ({"type": "milvus", "collection": "1bad-name"}, r"collection name '1bad-name' is invalid"),
        ({"type": "milvus", "uri": 19530}, r"backend: 'uri' must be a string, got 19530\."),
        (3, r"backend must be a backend name \(embedded, milvus\).*got int\."),
        (
            {"type": "embedded", "uri": "m.db", "collection": "c"},
            r"The embedded backend takes no uri, collection: those settings are the Milvus",
        ),
        ({"analyzer": "english"}, r"The embedded backend takes no analyzer"),
    ],
)
def test_invalid_backend_settings_are_refused(value: Any, message: str, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match=message):
        backend_config(value)
    with pytest.raises(InvalidInputError, match=message):
        Workspace(tmp_path, embedder=None, config=False, backend=value)


def test_the_config_file_chooses_the_backend(tmp_path: Path) -> None:
    (tmp_path / "workspace-tools.yaml").write_text(
        "workspace:\n  backend: {type: milvus, uri: data/m.db, analyzer: standard}\n",
        encoding="utf-8",
    )
    from workspace_tools.core.config import ProjectConfig
    from workspace_tools.core.workspace.settings import workspace_options

    options, _ = workspace_options(ProjectConfig.load(tmp_path))
    assert options["backend"] == BackendConfig(
        type="milvus", uri=str(tmp_path / "data" / "m.db"), analyzer="standard"
    )
    (tmp_path / "workspace-tools.yaml").write_text(
        "workspace:\n  backend: {type: milvus, port: 1}\n", encoding="utf-8"
    )
    with pytest.raises(InvalidInputError, match=r"Unknown key\(s\) port in 'backend' under"):
        workspace_options(ProjectConfig.load(tmp_path))


def test_the_cli_passes_the_backend() -> None:
    args = build_parser().parse_args(["--backend-uri", "http://m:19530", "search", "x"])
    assert (args.backend, args.backend_uri) == (None, "http://m:19530")
    args = build_parser().parse_args(["--backend", "milvus", "search", "x"])
    assert args.backend == "milvus"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--backend", "qdrant", "search", "x"])


def test_the_cli_refuses_a_uri_for_the_embedded_backend(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from workspace_tools.cli import main

    argv = ["--root", str(tmp_path), "--embedder", "none", "--backend", "embedded"]
    assert main([*argv, "--backend-uri", "m.db", "search", "x"]) == 2
    assert "The embedded backend takes no uri" in capsys.readouterr().err
    assert not (tmp_path / "m.db").exists()


def test_a_missing_milvus_extra_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name in {"pymilvus", "milvus_lite"} else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(MissingDependencyError) as caught:
        Workspace(tmp_path, embedder=FakeEmbedder(), config=False, backend="milvus")
    assert isinstance(caught.value, WorkspaceError)
    assert str(caught.value) == (
        "The Milvus search backend needs pymilvus, milvus-lite, which are not installed. "
        'Install the milvus extra: pip install "workspace-tools[milvus]" '
        "(or use backend='embedded')."
    )
