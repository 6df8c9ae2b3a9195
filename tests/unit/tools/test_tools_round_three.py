"""Issue 29 through the tools: several formulations, workspace_read, grep output modes, the
retriever's ``search_kwargs``, stored ids (gap 1) and PDF pages (gap 10)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from langchain_core.documents import Document

from tests.support.fakes import FakeEmbedder
from tests.support.pdfs import write_two_column_pdf
from tests.support.tools import call
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.workspace import Workspace
from workspace_tools.tools import WorkspaceRetriever, WorkspaceToolkit

HAS_PDF = importlib.util.find_spec("pdfminer") is not None


def _tools(ws: Workspace) -> dict[str, object]:
    return {t.name: t for t in WorkspaceToolkit(workspace=ws).get_tools()}


# -- several formulations ------------------------------------------------------------------------


def test_several_formulations_are_fused_and_each_hit_says_who_found_it(bm25_ws: Workspace) -> None:
    results = bm25_ws.search(["install package", "parseHttpRequest"], top_k=5, mode="bm25")
    by_source = {r.source_id: r for r in results}
    assert by_source["docs/guide.md"].found_by == ("install package",)
    assert by_source["src/http.py"].found_by == ("parseHttpRequest",)
    assert by_source["docs/guide.md"].to_dict()["found_by"] == ["install package"]
    alone = bm25_ws.search("install package", top_k=5, mode="bm25")
    assert alone[0].found_by == () and "found_by" not in alone[0].to_dict()
    # A hit both find ranks above hits only one finds.
    both = bm25_ws.search(["install the package", "pip install"], top_k=3, mode="bm25")
    assert both[0].source_id == "docs/guide.md"
    assert both[0].found_by == ("install the package", "pip install")
    assert both[0].score_details["q1_rank"] == 1.0 and "q2_score" in both[0].score_details
    # The snippet marks the words of every formulation.
    mixed = bm25_ws.search(["install package", "Python"], top_k=1, mode="bm25")[0]
    assert "<<install>>" in mixed.snippet and "<<Python>>" in mixed.snippet


@pytest.mark.parametrize("mode", ["bm25", "vector", "hybrid"])
def test_several_formulations_in_every_mode(hybrid_ws: Workspace, mode: str) -> None:
    results = hybrid_ws.search(["install package", "search query chunks"], top_k=4, mode=mode)
    assert results and all(r.found_by for r in results)
    assert len({r.id for r in results}) == len(results)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (["a", "b", "c", "d", "e", "f"], "query lists 6 formulations; the limit is 5"),
        ([], "query is an empty list"),
        (["ok", 3], r"query\[1\] must be a string, got int"),
        (["ok", "x" * 10_001], r"query\[1\] is 10001 characters long; the limit is 10000"),
        (42, "query must be a string or a list of strings, got int"),
    ],
)
def test_bad_formulation_lists_are_refused(bm25_ws: Workspace, query: object, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bm25_ws.search(query, top_k=3)  # type: ignore[arg-type]


def test_the_search_tool_takes_a_list_and_names_the_formulations(bm25_ws: Workspace) -> None:
    tool = _tools(bm25_ws)["workspace_search"]
    message = call(tool, query=["install package", "parseHttpRequest"], top_k=3)  # type: ignore[arg-type]
    assert message.status == "success"
    text = str(message.content)
    assert "q1 'install package'; q2 'parseHttpRequest'" in text
    assert "found by q1)" in text and "found by q2)" in text
    assert {tuple(hit["found_by"]) for hit in message.artifact} >= {("parseHttpRequest",)}
    too_many = call(tool, query=["a", "b", "c", "d", "e", "f"])  # type: ignore[arg-type]
    assert too_many.status == "error" and "at most 5 items" in str(too_many.content)


# -- workspace_read -------------------------------------------------------------------------------


def test_read_by_line_range_pages_with_more_lines(bm25_ws: Workspace) -> None:
    page = bm25_ws.read("docs/guide.md", start_line=5, end_line=7)
    assert (page.start_line, page.end_line, page.total_lines) == (5, 7, 12)
    assert page.text.split("\n")[0] == "## Installation"
    assert page.more_lines == 5 and not page.truncated
    short = bm25_ws.read("docs/guide.md", max_chars=200)
    assert short.end_line == 12  # the whole file fits
    tool = _tools(bm25_ws)["workspace_read"]
    message = call(tool, path="docs/guide.md", start_line=5, end_line=7)  # type: ignore[arg-type]
    assert str(message.content).startswith("docs/guide.md (markdown) lines 5-7 of 12\n5  ## ")
    assert "[5 more lines. Call workspace_read with path='docs/guide.md', start_line=8" in str(
        message.content
    )
    assert message.artifact["more_lines"] == 5


def test_read_by_chunk_id_returns_the_chunk_lines(bm25_ws: Workspace) -> None:
    hit = bm25_ws.search("install package", top_k=1)[0]
    page = bm25_ws.read(chunk_id=hit.id)
    chunk = next(c for c in bm25_ws.chunks_of(hit.source_id) if c.id == hit.id)
    assert (page.start_line, page.end_line) == (chunk.start_line, chunk.end_line)
    assert page.chunk_id == hit.id and "pip install" in page.text


def test_read_cuts_at_max_chars_and_says_what_follows(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text(
        "".join(f"line {n} " + "x" * 40 + "\n" for n in range(1, 101))
    )
    ws = Workspace(tmp_path, embedder=None, config=False)
    page = ws.read("long.txt", start_line=10, max_chars=500)
    assert page.start_line == 10 and page.end_line == 19 and page.truncated
    assert page.more_lines == 81
    assert page.text.startswith("line 10 ")


def test_read_of_an_indexed_string(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    ws.index("/notes/launch.md", "one\ntwo\nthree\n")
    page = ws.read("/notes/launch.md", start_line=2)
    assert page.source_id == "notes/launch.md" and page.text == "two\nthree"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "../outside.txt"}, "is outside the workspace root"),
        ({"path": "nowhere.md"}, "No file 'nowhere.md' in the workspace"),
        ({"path": "docs/guide.md", "start_line": 99}, "start_line 99 is past the end"),
        ({"path": "docs/guide.md", "start_line": 5, "end_line": 2}, "end_line 2 is before"),
        ({"chunk_id": "nope#chunk-9"}, "No indexed chunk 'nope#chunk-9'"),
        ({"chunk_id": "docs/guide.md", "start_line": 2}, "either chunk_id or start_line"),
        ({}, "Give the path of a file"),
        ({"path": "docs/guide.md", "max_chars": 10}, "max_chars must be between 200"),
    ],
)
def test_read_errors(bm25_ws: Workspace, args: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        bm25_ws.read(**args)  # type: ignore[arg-type]


def test_the_read_tool_refuses_paths_outside(bm25_ws: Workspace) -> None:
    message = call(_tools(bm25_ws)["workspace_read"], path="../../etc/passwd")  # type: ignore[arg-type]
    assert message.status == "error" and "is outside the workspace root" in str(message.content)


@pytest.mark.skipif(not HAS_PDF, reason="documents extra")
def test_read_a_pdf_as_converted_text_with_its_pages(tmp_path: Path) -> None:
    write_two_column_pdf(tmp_path / "two.pdf")
    ws = Workspace(tmp_path, embedder=None, config=False)
    unsynced = ws.read("two.pdf", start_line=39, end_line=39)  # converted, never stored
    assert unsynced.text == "<!-- page 2 -->"
    assert not list(ws.conversion_cache.directory.rglob("*.json"))
    ws.sync()
    page = ws.read("two.pdf", start_line=36, end_line=43)
    assert page.format == "pdf" and page.units == {"page": 1, "last_page": 2}
    assert "<!-- page 2 -->" in page.text
    message = call(_tools(ws)["workspace_read"], path="two.pdf", start_line=65, end_line=66)  # type: ignore[arg-type]
    content = str(message.content)
    assert content.startswith("two.pdf (pdf) lines 65-66 of 73; page 2\n")
    assert "a higher retrieval" in content and "precision indeed translates" in content


# -- grep output modes ----------------------------------------------------------------------------


def test_grep_files_with_matches_and_count(bm25_ws: Workspace) -> None:
    tool = _tools(bm25_ws)["search_documents"]
    files = call(tool, query="install", mode="grep", output_mode="files_with_matches")  # type: ignore[arg-type]
    assert str(files.content).split("\n")[0] == "docs/guide.md"
    assert [r["document_path"] for r in files.artifact["results"]] == ["docs/guide.md"]
    assert files.artifact["output_mode"] == "files_with_matches"
    counts = call(tool, query="search", mode="grep", output_mode="count", ignore_case=True)  # type: ignore[arg-type]
    rows = {r["document_path"]: r["count"] for r in counts.artifact["results"]}
    assert rows == {"docs/guide.md": 2}
    assert "docs/guide.md:2\n---\n1 file(s) with matches, 2 matching line(s)" in str(counts.content)
    tool.structured_output(counts.artifact)  # type: ignore[attr-defined]


def test_grep_output_modes_keep_the_paths_rules(bm25_ws: Workspace) -> None:
    tool = _tools(bm25_ws)["search_documents"]
    scoped = call(tool, query="e", mode="grep", output_mode="count", paths=["src/*.py"])  # type: ignore[arg-type]
    assert [r["document_path"] for r in scoped.artifact["results"]] == ["src/http.py"]
    outside = call(tool, query="e", mode="grep", output_mode="count", paths=["../x"])  # type: ignore[arg-type]
    assert outside.status == "error" and "outside the workspace root" in str(outside.content)
    capped = call(tool, query="e", mode="grep", output_mode="files_with_matches", top_k=1)  # type: ignore[arg-type]
    assert capped.artifact["total"] == 1 and capped.artifact["truncated"] is True
    keyword = call(tool, query="install", output_mode="count")  # type: ignore[arg-type]
    assert keyword.status == "error" and "pass mode='grep'" in str(keyword.content)


@pytest.mark.skipif(not HAS_PDF, reason="documents extra")
def test_pdf_hits_name_the_page_of_the_hit_in_search_and_grep(tmp_path: Path) -> None:
    write_two_column_pdf(tmp_path / "two.pdf")
    ws = Workspace(tmp_path, embedder=None, config=False)
    ws.sync()
    hit = ws.search("higher retrieval precision translates end-to-end QA", top_k=1)[0]
    assert hit.line_range is not None and hit.line_range.start >= 39  # after "<!-- page 2 -->"
    assert hit.metadata["page"] == 2 and hit.metadata["chunk_page"] == 1
    tools = _tools(ws)
    text = str(call(tools["workspace_search"], query="higher retrieval precision", top_k=1).content)  # type: ignore[arg-type]
    assert text.startswith("1. two.pdf:65-66 (page 2)")
    grep = call(tools["search_documents"], query="translates to a higher", mode="grep")  # type: ignore[arg-type]
    assert grep.artifact["results"][0]["page"] == 2
    assert str(grep.content).startswith("two.pdf:66:18 (page 2)")
    keyword = call(tools["search_documents"], query="higher retrieval precision", top_k=1)  # type: ignore[arg-type]
    assert str(keyword.content).startswith("1. two.pdf:65-66 (page 2)")


# -- gap 1: the stored id -------------------------------------------------------------------------


def test_the_index_tool_names_the_stored_id(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, embedder=None, config=False)
    message = call(_tools(ws)["workspace_index"], path="/notes/launch.md", content="Launch day.")  # type: ignore[arg-type]
    assert str(message.content).startswith("Indexed notes/launch.md (1 chunk(s)")
    assert "Its id is 'notes/launch.md'" in str(message.content)
    assert message.artifact["path"] == "notes/launch.md"
    found = ws.search("launch", filter={"source_id": "/notes/launch.md"})
    assert [r.source_id for r in found] == ["notes/launch.md"]


# -- the retriever --------------------------------------------------------------------------------


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


# -- the VectorStore adapter ----------------------------------------------------------------------


def test_the_vector_store_adds_searches_gets_and_deletes_on_the_workspace(tmp_path: Path) -> None:
    from workspace_tools.tools import WorkspaceVectorStore

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
    from workspace_tools.tools import WorkspaceVectorStore

    store = WorkspaceVectorStore.from_texts(
        ["alpha text", "beta text"], FakeEmbedder(), ids=["a", "b"], root=tmp_path
    )
    assert store.similarity_search("alpha", k=1, mode="vector")[0].id == "a"
