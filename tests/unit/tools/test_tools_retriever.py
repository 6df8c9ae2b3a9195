"""WorkspaceRetriever: ``search_kwargs`` honoured at creation and per call, score thresholds,
settings it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceRetriever


def test_as_retriever_honours_search_kwargs(hybrid_ws: Workspace) -> None:
    retriever = hybrid_ws.as_retriever(
        search_type="bm25", search_kwargs={"k": 1, "filter": {"format": "code"}}
    )
    assert isinstance(retriever, WorkspaceRetriever)
    docs = retriever.invoke("parseHttpRequest search")
    assert [d.metadata["source"] for d in docs] == ["src/http.py"]
    assert docs[0].metadata["score_details"].keys() == {"bm25"}
    # per call, as LangChain retrievers take them
    two = retriever.invoke("install parseHttpRequest", k=2, filter=None)
    assert len(two) == 2
    weighted = hybrid_ws.as_retriever(search_kwargs={"mode": "hybrid", "vector_weight": 1.0})
    assert weighted.vector_weight == 1.0
    doc = weighted.invoke("install package")[0]
    assert isinstance(doc, Document) and "vector" in doc.metadata["score_details"]


def test_score_threshold_and_bad_search_settings(bm25_ws: Workspace) -> None:
    strict = bm25_ws.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 1e9}
    )
    assert strict.invoke("install") == []
    with pytest.raises(ValueError, match="needs search_kwargs"):
        bm25_ws.as_retriever(search_type="similarity_score_threshold")
    with pytest.raises(ValueError, match="'mmr' is not supported"):
        bm25_ws.as_retriever(search_type="mmr")
    with pytest.raises(ValueError, match="unknown key\\(s\\) 'fetch_k'"):
        bm25_ws.as_retriever(search_kwargs={"fetch_k": 20})
    with pytest.raises(ValueError, match="disagree"):
        WorkspaceRetriever(workspace=bm25_ws, search_type="bm25", search_kwargs={"mode": "vector"})
    retriever = bm25_ws.as_retriever()
    with pytest.raises(ValueError, match="unknown key\\(s\\) 'lambda_mult'"):
        retriever.invoke("install", lambda_mult=0.5)


def test_the_retriever_takes_a_fake_embedder_workspace(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    ws.index_many([("a.md", "cats nap"), ("b.md", "dogs fetch")])
    docs = ws.as_retriever(search_type="vector", search_kwargs={"k": 1}).invoke("cats")
    assert docs[0].metadata["source"] == "a.md"
