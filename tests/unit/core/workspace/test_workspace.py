from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools import Workspace
from workspace_tools.core.errors import (
    IndexMismatchError,
    InvalidInputError,
    PathOutsideWorkspaceError,
    ReadOnlyWorkspaceError,
    SearchModeError,
)
from workspace_tools.core.text.tokenizer import TokenizerConfig


def bm25_ws(root: Path, **kw: object) -> Workspace:
    return Workspace(root, embedder=None, **kw)  # type: ignore[arg-type]


def test_sync_indexes_files_and_reports_skips(tree: Path) -> None:
    ws = bm25_ws(tree)
    report = ws.sync()
    assert sorted(report.added) == ["docs/faq.md", "docs/guide.md", "notes.txt", "src/http.py"]
    assert [(s.path, s.reason.split(":")[0]) for s in report.skipped] == [("image.bin", "binary")]
    assert report.formats == {"markdown": 2, "text": 1, "code": 1}
    assert "1 skipped (binary: 1)" in report.summary()


def test_search_returns_ranked_hits_with_snippet_and_lines(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    hits = ws.search("install the package")
    assert hits[0].id == "docs/guide.md"
    top = hits[0]
    assert top.line_range is not None and (top.line_range.start, top.line_range.end) == (5, 7)
    assert "<<install>>" in top.snippet and "<<package>>" in top.snippet
    assert top.section_heading == "Installation"
    assert top.headings == ("Guide", "Installation")
    assert top.score_details == {"bm25": pytest.approx(top.score)}
    assert top.metadata["format"] == "markdown"


def test_identifier_and_unicode_search(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    assert ws.search("http request")[0].id == "src/http.py"
    assert ws.search("parseHttpRequest")[0].id == "src/http.py"
    assert ws.search("snake_case_name")[0].id == "src/http.py"
    assert ws.search("cafe creme")[0].id == "notes.txt"
    assert ws.search("привет")[0].id == "notes.txt"
    assert ws.search("東京")[0].id == "notes.txt"


def test_no_zero_score_junk_and_empty_cases(tree: Path) -> None:
    ws = bm25_ws(tree)
    assert ws.search("anything") == []  # empty index
    ws.sync()
    assert ws.search("zzzz nothing matches") == []
    assert ws.search("") == []
    assert ws.search("the and of") == []
    assert len(ws.search("guide", top_k=10_000)) == 1


def test_top_k_larger_than_corpus_and_min_score(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    hits = ws.search("search query chunks bm25 keyword", top_k=1_000_000_000)
    assert 1 <= len(hits) <= len(ws)
    best = hits[0].score
    assert ws.search("search query chunks bm25 keyword", min_score=best) == hits[:1]


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_bad_top_k_is_rejected(tree: Path, bad: object) -> None:
    ws = bm25_ws(tree)
    with pytest.raises(InvalidInputError, match="top_k must be a whole number of at least 1"):
        ws.search("x", top_k=bad)  # type: ignore[arg-type]


def test_huge_query_is_rejected_clearly(tree: Path) -> None:
    ws = bm25_ws(tree)
    with pytest.raises(InvalidInputError, match="the limit is 10000"):
        ws.search("word " * 20_000)


def test_unconfigured_mode_names_the_configured_modes(tree: Path) -> None:
    ws = bm25_ws(tree)
    with pytest.raises(SearchModeError, match="configured modes: bm25"):
        ws.search("x", mode="vector")
    with pytest.raises(SearchModeError, match="Unknown search mode 'fuzzy'"):
        ws.search("x", mode="fuzzy")


def test_manual_index_chunks_and_replaces_same_id(tmp_path: Path) -> None:
    ws = bm25_ws(tmp_path)
    long_text = "\n".join(f"alpha line {i}" for i in range(800))
    ids = ws.index("notes/long.txt", long_text)
    assert len(ids) > 1 and ids[0] == "notes/long.txt#chunk-0"
    ids2 = ws.index("./notes/long.txt", "short replacement about beta")
    assert ids2 == ["notes/long.txt"]
    assert ws.source_ids() == ["notes/long.txt"]
    assert len(ws) == 1
    assert ws.search("alpha") == []
    assert ws.search("beta")[0].id == "notes/long.txt"


def test_chunk_line_offsets_in_results(tmp_path: Path) -> None:
    ws = bm25_ws(tmp_path)
    lines = [f"filler {i}" for i in range(1, 900)]
    lines[700] = "the unique needle is here"
    ws.index("big.txt", "\n".join(lines))
    hit = ws.search("needle")[0]
    assert hit.line_range is not None and hit.line_range.start == 701
    assert (
        hit.content.split("\n")[701 - hit.metadata["chunk_start_line"]]
        == "the unique needle is here"
    )


def test_metadata_and_filter(tmp_path: Path) -> None:
    ws = bm25_ws(tmp_path)
    ws.index_many(
        [
            ("a", "apple pie recipe", {"lang": "en"}),
            ("b", "apple tart recipe", {"lang": "fr"}),
            ("c", "apple juice", {"lang": "fr"}),
        ]
    )
    hits = ws.search("apple", filter={"lang": "fr"})
    assert {h.id for h in hits} == {"b", "c"}
    assert ws.search("apple", filter={"source_id": "a"})[0].metadata["lang"] == "en"
    assert ws.search("apple", filter={"lang": "de"}) == []
    with pytest.raises(InvalidInputError, match="filter must be a mapping"):
        ws.search("apple", filter=["lang"])  # type: ignore[arg-type]


def test_index_many_accepts_documents_and_rejects_junk(tmp_path: Path) -> None:
    class Doc:
        def __init__(self, id: str, page_content: str) -> None:
            self.id, self.page_content, self.metadata = id, page_content, {"k": 1}

    ws = bm25_ws(tmp_path)
    report = ws.index_many(
        [Doc("d1", "hello world"), {"id": "d2", "content": "hello there"}, ("d3", "bye")]
    )
    assert sorted(report.added) == ["d1", "d2", "d3"]
    assert ws.index_many([("d3", "bye")]).unchanged == 1
    with pytest.raises(InvalidInputError, match="Cannot index int"):
        ws.index_many([42])
    with pytest.raises(InvalidInputError, match="non-empty string"):
        ws.index("", "x")


def test_remove_by_id_prefix_and_glob(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    assert ws.remove("docs/faq.md") == ["docs/faq.md"]
    assert ws.search("BM25") == []
    assert sorted(ws.remove("docs/")) == ["docs/guide.md"]
    assert ws.remove("**/*.py") == ["src/http.py"]
    assert ws.remove("missing") == []
    assert ws.source_ids() == ["notes.txt"]


def test_sync_is_incremental(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    again = ws.sync()
    assert (again.added, again.updated, again.removed, again.chunks_indexed) == ([], [], [], 0)
    assert again.unchanged == 4
    (tree / "docs" / "faq.md").write_text("# FAQ\n\nNew answer about zebras.\n", encoding="utf-8")
    (tree / "notes.txt").unlink()
    (tree / "new.md").write_text("fresh file", encoding="utf-8")
    third = ws.sync()
    assert (
        third.updated == ["docs/faq.md"]
        and third.removed == ["notes.txt"]
        and third.added == ["new.md"]
    )
    assert third.chunks_indexed == 2
    assert ws.search("zebras")[0].id == "docs/faq.md"
    assert ws.search("café") == []


def test_sync_of_a_subpath_only_removes_inside_it(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    (tree / "notes.txt").unlink()
    (tree / "docs" / "faq.md").unlink()
    report = ws.sync(["docs"])
    assert report.removed == ["docs/faq.md"]
    assert "notes.txt" in ws.source_ids()


def test_touch_without_change_does_not_reindex(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    path = tree / "docs" / "guide.md"
    path.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    report = ws.sync()
    assert report.chunks_indexed == 0 and report.unchanged == 4


def test_save_reopen_gives_identical_results(tree: Path) -> None:
    ws = bm25_ws(tree)
    ws.sync()
    queries = ["install", "search chunks", "parseHttpRequest", "привет"]
    before = [[(h.id, h.score, h.snippet, h.line_range) for h in ws.search(q)] for q in queries]
    reopened = bm25_ws(tree)
    after = [
        [(h.id, h.score, h.snippet, h.line_range) for h in reopened.search(q)] for q in queries
    ]
    assert before == after
    assert reopened.sync().chunks_indexed == 0


def test_reopen_with_other_tokenizer_says_what_differs(tree: Path) -> None:
    bm25_ws(tree).sync()
    with pytest.raises(IndexMismatchError, match="tokenizer settings differ") as info:
        bm25_ws(tree, tokenizer=TokenizerConfig(stemmer=None))
    assert "rebuild=True" in str(info.value)
    rebuilt = bm25_ws(tree, tokenizer=TokenizerConfig(stemmer=None), rebuild=True)
    assert len(rebuilt) == 0
    rebuilt.sync()
    assert rebuilt.search("install")


def test_commit_pending_rebuild_clears_the_old_index_on_disk_once(tree: Path) -> None:
    bm25_ws(tree).sync()
    rebuilt = bm25_ws(tree, rebuild=True)
    assert len(bm25_ws(tree, read_only=True)) == 4  # the old index stays until a commit
    assert rebuilt.commit_pending_rebuild() is True
    assert len(bm25_ws(tree, read_only=True)) == 0  # the clear is on disk now
    version = rebuilt._db.version()
    assert rebuilt.commit_pending_rebuild() is False  # nothing pending: nothing written
    assert rebuilt._db.version() == version
    assert bm25_ws(tree).commit_pending_rebuild() is False  # not a rebuild


def test_read_only_workspace_refuses_changes(tree: Path) -> None:
    bm25_ws(tree).sync()
    ws = bm25_ws(tree, read_only=True)
    assert ws.search("install")
    for call in (lambda: ws.sync(), lambda: ws.index("x", "y"), lambda: ws.remove("x"), ws.save):
        with pytest.raises(ReadOnlyWorkspaceError, match="is read-only"):
            call()


def test_read_text_is_confined(tree: Path) -> None:
    ws = bm25_ws(tree)
    assert "Welcome" in ws.read_text("docs/guide.md")
    with pytest.raises(PathOutsideWorkspaceError, match="outside the workspace root"):
        ws.read_text("../outside.txt")
    with pytest.raises(InvalidInputError, match="No file 'nope.md'"):
        ws.read_text("nope.md")
    with pytest.raises(InvalidInputError, match="Cannot read 'image.bin' as text"):
        ws.read_text("image.bin")


def test_invalid_constructor_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="is not a directory"):
        Workspace(tmp_path / "missing", embedder=None)
    with pytest.raises(InvalidInputError, match="at least one index"):
        Workspace(tmp_path, embedder=None, bm25=False)
    with pytest.raises(InvalidInputError, match="vector_weight must be between 0 and 1"):
        Workspace(tmp_path, embedder=None, vector_weight=1.5)


def test_index_dir_inside_root_is_never_indexed(tree: Path) -> None:
    ws = bm25_ws(tree, index_dir=tree / "myindex")
    ws.sync()
    ws.sync()
    assert not any(s.startswith("myindex") for s in ws.source_ids())


def test_markdown_link_targets_are_not_indexed(tmp_path: Path) -> None:
    ws = bm25_ws(tmp_path)
    ws.index("a.md", "See [the guide](other.md#zebra-anchor) for more.")
    ws.index("b.txt", "a zebra anchor in plain text")
    assert [h.id for h in ws.search("zebra anchor")] == ["b.txt"]
    assert ws.search("guide")[0].id == "a.md"
