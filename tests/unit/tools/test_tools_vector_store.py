"""WorkspaceVectorStore: LangChain's VectorStore over the workspace the tools search."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.documents import Document

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceVectorStore


def test_the_vector_store_adds_searches_gets_and_deletes_on_the_workspace(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=FakeEmbedder(), config=False)
    store = WorkspaceVectorStore(ws)
    ids = store.add_documents(
        [
            Document(id="/notes/cats.md", page_content="Cats nap in the sun.", metadata={"t": 1}),
            Document(page_content="Dogs fetch balls.", metadata={"t": 2}),
        ]
    )
    assert ids[0] == "notes/cats.md" and len(ids[1]) == 36  # a uuid4 for the one without an id
    assert set(ws.source_ids()) == set(ids)  # the same index the tools search
    hits = store.similarity_search_with_score("cats sun", k=1, mode="bm25")
    assert hits[0][0].metadata["source"] == "notes/cats.md" and hits[0][1] > 0
    only_dogs = store.similarity_search("sun balls", k=5, filter={"t": 2})
    assert [d.metadata["source"] for d in only_dogs] == [ids[1]]
    assert [d.page_content for d in store.get_by_ids(["notes/cats.md", "nope"])] == [
        "Cats nap in the sun."
    ]
    assert store.delete([ids[1]]) is True
    assert ws.source_ids() == ["notes/cats.md"]
    with pytest.raises(ValueError, match="Unknown search option"):
        store.similarity_search("x", fetch_k=3)
    retrieved = store.as_retriever(search_kwargs={"k": 1}).invoke("cats")
    assert retrieved[0].metadata["source"] == "notes/cats.md"


def test_the_vector_store_from_texts(tmp_path: Path) -> None:
    store = WorkspaceVectorStore.from_texts(
        ["alpha text", "beta text"], FakeEmbedder(), ids=["a", "b"], root=tmp_path
    )
    assert store.similarity_search("alpha", k=1, mode="vector")[0].id == "a"
