"""workspace_search and workspace_index: output, artifacts, mode fallback, budgets, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.tools import acall, call, toolkit_tools
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import workspace as workspace_tools_module
from workspace_tools.tools.workspace import WorkspaceIndexTool, WorkspaceSearchTool


def test_search_output_and_artifact(bm25_ws: Workspace) -> None:
    message = call(WorkspaceSearchTool(workspace=bm25_ws), query="install package", top_k=2)
    assert message.status == "success"
    first = message.content.splitlines()[0]
    assert first.startswith("1. docs/guide.md:5-7 › Installation (score ")
    assert "<<install>>" in message.content
    assert message.content.endswith("(bm25 search)")
    assert "Welcome to the guide" not in message.content  # snippets, never whole files
    artifact = message.artifact
    assert artifact[0]["source_id"] == "docs/guide.md"
    assert artifact[0]["line_range"] == [5, 7]
    assert artifact[0]["headings"] == ["Guide", "Installation"]
    assert set(artifact[0]) >= {"id", "score", "snippet", "metadata", "score_details"}


def test_schema_offers_only_the_workspace_modes(bm25_ws: Workspace, hybrid_ws: Workspace) -> None:
    bm25_schema = WorkspaceSearchTool(workspace=bm25_ws).tool_call_schema.model_json_schema()
    assert bm25_schema["properties"]["mode"]["enum"] == ["bm25"]
    assert bm25_schema["properties"]["mode"]["default"] == "bm25"
    hybrid_schema = WorkspaceSearchTool(workspace=hybrid_ws).tool_call_schema.model_json_schema()
    assert hybrid_schema["properties"]["mode"]["enum"] == ["bm25", "vector", "hybrid"]
    assert hybrid_schema["properties"]["mode"]["default"] == "hybrid"


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_unavailable_mode_falls_back_with_a_note(bm25_ws: Workspace, mode: str) -> None:
    message = call(WorkspaceSearchTool(workspace=bm25_ws), query="install", mode=mode)
    assert message.status == "success"
    assert message.content.startswith(
        f"Note: {mode} search is not available in this workspace (modes: bm25); used bm25 instead."
    )
    assert message.artifact


def test_hybrid_to_vector_fallback(tree: Path, tmp_path: Path) -> None:
    from tests.support.fakes import FakeEmbedder

    ws = Workspace(tree, bm25=False, embedder=FakeEmbedder(), index_dir=tmp_path / "v")
    ws.sync()
    message = call(WorkspaceSearchTool(workspace=ws), query="install", mode="hybrid")
    assert "used vector instead" in message.content
    assert "(vector search)" in message.content


def test_unknown_mode_is_a_readable_validation_error(bm25_ws: Workspace) -> None:
    message = call(WorkspaceSearchTool(workspace=bm25_ws), query="x", mode="fuzzy")
    assert message.status == "error"
    assert "Unsupported search mode 'fuzzy'; use one of: bm25" in message.content


def test_empty_index_is_an_actionable_error(empty_ws: Workspace) -> None:
    message = call(WorkspaceSearchTool(workspace=empty_ws), query="install")
    assert message.status == "error"
    assert message.content.startswith("The workspace index is empty: nothing has been indexed yet.")
    assert "workspace_index" in message.content


def test_no_results_and_min_score(bm25_ws: Workspace) -> None:
    tool = WorkspaceSearchTool(workspace=bm25_ws)
    assert (
        call(tool, query="zebra").content
        == "No results for 'zebra' (bm25 search). Try other words."
    )
    message = call(tool, query="install", min_score=1e9)
    assert message.content.startswith("No results for 'install' scoring at least 1000000000.0")
    assert message.artifact == []


def test_output_budget_cuts_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "many"
    root.mkdir()
    for i in range(8):
        (root / f"f{i}.md").write_text(f"# F{i}\n\nalpha beta {i}\n", encoding="utf-8")
    ws = Workspace(root, embedder=None, index_dir=tmp_path / "i")
    ws.sync()
    monkeypatch.setattr(workspace_tools_module, "MAX_SEARCH_OUTPUT_CHARS", 150)
    message = call(WorkspaceSearchTool(workspace=ws), query="alpha", top_k=8)
    assert "left out to keep the output under 150 characters" in message.content
    assert len(message.artifact) == 8
    assert message.content.count("(score ") < 8


def test_bad_top_k_is_readable(bm25_ws: Workspace) -> None:
    message = call(WorkspaceSearchTool(workspace=bm25_ws), query="x", top_k=500)
    assert message.status == "error"
    assert message.content.startswith("Invalid tool input: 'top_k': Input should be less than")


async def test_search_async(bm25_ws: Workspace) -> None:
    message = await acall(WorkspaceSearchTool(workspace=bm25_ws), query="install")
    assert message.artifact[0]["source_id"] == "docs/guide.md"


def test_index_content_then_search(empty_ws: Workspace) -> None:
    index = WorkspaceIndexTool(workspace=empty_ws)
    message = call(
        index,
        path="notes/meeting.md",
        content="# Meeting\n\nWe chose zebra.",
        metadata={"team": "a"},
    )
    assert message.status == "success"
    assert message.content.startswith("Indexed notes/meeting.md (1 chunk(s)")
    assert message.artifact["chunk_ids"] == ["notes/meeting.md"]
    hits = call(WorkspaceSearchTool(workspace=empty_ws), query="zebra").artifact
    assert hits[0]["source_id"] == "notes/meeting.md"
    assert hits[0]["metadata"]["team"] == "a"


def test_index_file_from_disk(empty_ws: Workspace) -> None:
    message = call(WorkspaceIndexTool(workspace=empty_ws), path="docs/faq.md")
    assert message.content.startswith("Indexed docs/faq.md: 1 added")
    assert message.artifact["added"] == ["docs/faq.md"]
    assert empty_ws.source_ids() == ["docs/faq.md"]
    again = call(WorkspaceIndexTool(workspace=empty_ws), path="docs")
    assert again.artifact["added"] == ["docs/guide.md"]
    assert again.artifact["unchanged"] == 1


def test_index_file_with_metadata_reads_it(empty_ws: Workspace) -> None:
    message = call(WorkspaceIndexTool(workspace=empty_ws), path="docs/faq.md", metadata={"k": 1})
    assert message.artifact["chunks"] == 1
    assert empty_ws.chunks_of("docs/faq.md")[0].metadata["k"] == 1


def test_index_errors(empty_ws: Workspace, tree: Path, tmp_path: Path) -> None:
    index = WorkspaceIndexTool(workspace=empty_ws)
    missing = call(index, path="docs/nope.md")
    assert missing.status == "error"
    assert missing.content.startswith("No file or folder 'docs/nope.md' in the workspace.")
    dotdot = call(index, path="../secret.md", content="x")
    assert dotdot.status == "error"
    assert "is outside the workspace root" in dotdot.content
    absolute = call(index, path="/etc/passwd")
    assert "is outside the workspace root" in absolute.content
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    os.symlink(outside, tree / "link.md")
    escaped = call(index, path="link.md")
    assert escaped.status == "error"
    assert "leads outside the workspace root through a symbolic link" in escaped.content
    binary = call(index, path="image.bin")
    assert binary.status == "error"
    assert binary.content.startswith("Nothing indexed from 'image.bin': image.bin: binary")


def test_read_only_index_attempt(tree: Path, bm25_ws: Workspace) -> None:
    ro = Workspace(tree, embedder=None, index_dir=bm25_ws.index_dir, read_only=True)
    message = call(WorkspaceIndexTool(workspace=ro), path="docs/faq.md", content="x")
    assert message.status == "error"
    assert "is read-only: workspace_index cannot change its index" in message.content
    assert call(WorkspaceSearchTool(workspace=ro), query="install").status == "success"


async def test_index_async(empty_ws: Workspace) -> None:
    message = await acall(WorkspaceIndexTool(workspace=empty_ws), path="a.md", content="hello")
    assert message.status == "success"
    assert empty_ws.source_ids() == ["a.md"]


def test_search_filter_and_vector_weight_reach_the_workspace(
    hybrid_ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, object] = {}
    original = hybrid_ws.search

    def spy(query: str, **kwargs: object) -> object:
        seen.update(kwargs)
        return original(query, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hybrid_ws, "search", spy)
    tool = WorkspaceSearchTool(workspace=hybrid_ws)
    schema = tool.tool_call_schema.model_json_schema()["properties"]
    assert "$in" in schema["filter"]["description"]
    weight = schema["vector_weight"]
    assert any(part.get("maximum") == 1.0 for part in weight.get("anyOf", [weight]))
    flt = {"source_id": {"$in": ["docs/guide.md"]}}
    message = call(tool, query="install package", filter=flt, vector_weight=0.2)
    assert message.status == "success"
    assert seen["filter"] == flt and seen["vector_weight"] == 0.2
    assert {hit["source_id"] for hit in message.artifact} == {"docs/guide.md"}


def test_search_unknown_filter_operator_is_a_tool_error(bm25_ws: Workspace) -> None:
    tool = WorkspaceSearchTool(workspace=bm25_ws)
    message = call(tool, query="install", filter={"source_id": {"$like": "docs/%"}})
    assert message.status == "error"
    assert "Unknown filter operator '$like' on 'source_id'" in message.content


def test_search_vector_weight_out_of_range_is_a_validation_error(hybrid_ws: Workspace) -> None:
    message = call(WorkspaceSearchTool(workspace=hybrid_ws), query="install", vector_weight=2)
    assert message.status == "error"
    assert "vector_weight" in message.content


def test_the_index_tool_names_the_stored_id(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    message = call(
        toolkit_tools(ws)["workspace_index"], path="/notes/launch.md", content="Launch day."
    )  # type: ignore[arg-type]
    assert str(message.content).startswith("Indexed notes/launch.md (1 chunk(s)")
    assert "Its id is 'notes/launch.md'" in str(message.content)
    assert message.artifact["path"] == "notes/launch.md"
    found = ws.search("launch", filter={"source_id": "/notes/launch.md"})
    assert [r.source_id for r in found] == ["notes/launch.md"]
