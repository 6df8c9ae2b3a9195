"""index_on_ray's refusals: they come before any cluster is touched, with or without Ray."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fakes import FakeEmbedder
from workspace_tools import Workspace
from workspace_tools.cli import build_parser
from workspace_tools.core import extras
from workspace_tools.core.distributed import (
    RayNotInstalledError,
    index_on_ray,
    require_ray,
)
from workspace_tools.core.errors import (
    InvalidInputError,
    MissingDependencyError,
    ReadOnlyWorkspaceError,
    WorkspaceError,
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "a.md").write_text("# A\n\nSome text.\n", "utf-8")
    return Workspace(tmp_path, embedder=FakeEmbedder(), config=False)


def test_a_missing_extra_names_the_install_command(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: module != "ray")
    with pytest.raises(RayNotInstalledError) as caught:
        index_on_ray(ws)
    assert isinstance(caught.value, MissingDependencyError)
    assert isinstance(caught.value, WorkspaceError)
    assert str(caught.value) == (
        "Distributed indexing on Ray needs ray, which is not installed. Install the ray extra: "
        'pip install "workspace-tools[ray]" (on the driver and on every node of the '
        "cluster), or index locally with Workspace.sync() / `workspace-tools index` without --ray."
    )


def test_require_ray_passes_when_both_packages_are_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras, "_installed", lambda module: True)
    require_ray()


def test_a_read_only_workspace_is_refused(ws: Workspace) -> None:
    ws.sync()
    read_only = Workspace(ws.root, embedder=FakeEmbedder(), read_only=True, config=False)
    with pytest.raises(ReadOnlyWorkspaceError, match="read-only: indexing on Ray writes its"):
        index_on_ray(read_only)


def test_a_workspace_without_embedder_is_refused(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    with pytest.raises(InvalidInputError, match="no embedder, so there is nothing for a Ray"):
        index_on_ray(ws)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"actors": 0}, "actors must be at least 1, got 0."),
        ({"batch_size": -1}, "batch_size must be at least 1, got -1."),
        ({"commit_every": 0}, "commit_every must be at least 1, got 0."),
        ({"threads": 0}, "threads must be at least 1, got 0."),
    ],
)
def test_counts_below_one_are_refused(ws: Workspace, option: dict[str, int], message: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        index_on_ray(ws, **option)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["index"], None),
        (["index", "--ray"], ""),
        (["index", "docs", "--ray"], ""),
        (["index", "--ray=auto"], "auto"),
        (["index", "--ray", "ray://head:10001"], "ray://head:10001"),
    ],
)
def test_the_index_command_takes_an_optional_ray_address(
    argv: list[str], expected: str | None
) -> None:
    assert build_parser().parse_args(argv).ray == expected
