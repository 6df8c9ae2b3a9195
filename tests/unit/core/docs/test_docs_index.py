from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest

from workspace_tools.core.docs.index import DocsIndex, DocsStats, FieldWeights, parse_page
from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError


@pytest.fixture
def index(docs_root: Path) -> DocsIndex:
    return DocsIndex(docs_root)


def top_paths(index: DocsIndex, query: str, **kwargs: object) -> list[str]:
    return [hit.path for hit in index.search(query, **kwargs)]  # type: ignore[arg-type]


# -- pages, titles, sections ---------------------------------------------------------------------


def test_lists_every_page_sorted_with_titles(index: DocsIndex) -> None:
    pages = {p.path: p for p in index.list_pages()}
    assert list(pages) == [
        "guides/caching.md",
        "guides/deployment.md",
        "guides/plain.md",
        "index.mdx",
        "reference/api.mdx",
        "reference/skyscraper.md",
    ]
    assert pages["index.mdx"].title == "Getting Started"
    assert pages["index.mdx"].description == "Install the toolkit and run a first search."
    assert pages["guides/caching.md"].title == "Caching Strategies"  # no frontmatter: 1st heading
    assert pages["guides/caching.md"].description == ""
    assert pages["guides/plain.md"].title == "plain"  # no frontmatter, no heading: file name
    assert index.stats.pages == 6


def test_bad_frontmatter_falls_back_to_heading(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        page, _ = parse_page("a.md", "---\ntitle: [unclosed\n---\n# Real Heading\n\nText.\n")
    assert page.title == "Real Heading"
    assert "Ignoring the frontmatter of a.md" in caplog.text
    page, _ = parse_page("b.md", "---\n- a list\n---\n\n## Second Level\n")
    assert page.title == "Second Level"
    assert page.body_line == 4


def test_first_paragraph_stands_in_for_a_missing_description(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: Alpha\n---\n# Alpha\n\nQuokkas live here.\n\nMore.\n")
    (root / "b.md").write_text("---\ntitle: Beta\n---\n# Beta\n\nNothing.\n\nQuokkas too.\n")
    index = DocsIndex(root, weights=FieldWeights(title=0, description=1, heading=0, content=0))
    assert top_paths(index, "quokkas") == ["a.md"]  # only a.md's first paragraph has it
    assert index.get_page("a.md").description == ""  # the page record keeps the frontmatter


def test_sections_split_at_headings_outside_code(tmp_path: Path) -> None:
    text = "---\ntitle: T\n---\nIntro.\n# One\nalpha\n```\n# not a heading\n```\n## Two\nbeta\n"
    page, sections = parse_page("p.md", text)
    assert [(h, line) for h, line, _ in sections] == [("", 4), ("One", 5), ("Two", 10)]
    assert sections[1][2].split("\n") == ["", "alpha", "", "# not a heading", ""]
    assert page.content.startswith("Intro.")


def test_hit_has_title_heading_snippet_and_file_line(index: DocsIndex, docs_root: Path) -> None:
    [hit] = index.search("registry", top_k=1)
    assert (hit.path, hit.title, hit.heading) == (
        "guides/deployment.md",
        "Deployment Guide",
        "Docker",
    )
    assert "<<registry>>" in hit.snippet
    lines = (docs_root / hit.path).read_text().split("\n")
    assert "registry" in lines[hit.line - 1]
    assert hit.score > 0


def test_mdx_imports_exports_and_component_tags_are_not_indexed(index: DocsIndex) -> None:
    assert index.search("nextra") == []  # import line
    assert index.search("hidden") == []  # export line
    assert index.search("Callout") == []  # component tag
    assert index.search("isOptional") == []  # prop key
    assert top_paths(index, "pinned") == ["index.mdx"]  # text inside a component stays


def test_component_prop_strings_are_indexed(index: DocsIndex, docs_root: Path) -> None:
    [hit] = index.search("threadId", top_k=1)
    assert hit.path == "reference/api.mdx"
    assert "<<threadId>>" in hit.snippet
    assert "threadId" in (docs_root / hit.path).read_text().split("\n")[hit.line - 1]


def test_empty_and_stopword_queries_give_nothing(index: DocsIndex) -> None:
    assert index.search("") == []
    assert index.search("the of and") == []
    with pytest.raises(InvalidInputError, match="top_k must be at least 1, got 0"):
        index.search("docker", top_k=0)


# -- query features -------------------------------------------------------------------------------


def test_prefix_matches(index: DocsIndex) -> None:
    assert top_paths(index, "deplo")[0] == "guides/deployment.md"
    assert top_paths(index, "memoiz") == ["guides/caching.md"]


def test_typo_tolerance_for_longer_words(index: DocsIndex) -> None:
    hits = index.search("deploymnet")
    assert hits[0].path == "guides/deployment.md"
    assert "<<deployment>>" in hits[0].snippet
    assert top_paths(index, "cachnig")[0] == "guides/caching.md"
    assert top_paths(index, "widgtes") == ["guides/plain.md"]


def test_no_typo_tolerance_for_short_words(index: DocsIndex) -> None:
    assert index.search("sjy") == []  # 'sky' is one edit away, but three letters is too short


def test_exact_match_outranks_prefix_match(index: DocsIndex) -> None:
    paths = top_paths(index, "sky")
    assert paths == ["reference/api.mdx", "reference/skyscraper.md"]


def test_weights_change_the_ranking(tmp_path: Path) -> None:
    root = tmp_path / "w"
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: Zephyr\ndescription: Winds.\n---\nA page.\n")
    (root / "b.md").write_text("---\ntitle: Other\ndescription: Winds.\n---\nZephyr zephyr.\n")
    assert top_paths(DocsIndex(root), "zephyr") == ["a.md", "b.md"]
    content_first = FieldWeights(title=0.2, description=3, heading=2, content=5)
    assert top_paths(DocsIndex(root, weights=content_first), "zephyr") == ["b.md", "a.md"]
    with pytest.raises(ValueError, match="Field weights must be >= 0 and not all 0"):
        FieldWeights(title=0, description=0, heading=0, content=0)


def test_one_section_per_page_unless_asked(index: DocsIndex) -> None:
    assert top_paths(index, "container") == ["guides/deployment.md"]
    hits = index.search("container", max_per_page=None)
    assert [h.path for h in hits] == ["guides/deployment.md", "guides/deployment.md"]
    assert {h.heading for h in hits} == {"Deployment", "Serverless"}


def test_folder_filter(index: DocsIndex) -> None:
    assert top_paths(index, "tall OR install OR container", folder="reference") == [
        "reference/skyscraper.md"
    ]
    assert [p.path for p in index.list_pages("guides")] == [
        "guides/caching.md",
        "guides/deployment.md",
        "guides/plain.md",
    ]
    assert len(index.list_pages("./")) == 6
    with pytest.raises(
        InvalidInputError,
        match=r"No docs page under folder 'nope'\. Top-level folders: guides, reference\.",
    ):
        index.list_pages("nope")


# -- pages and confinement ------------------------------------------------------------------------


def test_get_page(index: DocsIndex) -> None:
    page = index.get_page("guides/deployment.md")
    assert page.title == "Deployment Guide"
    assert page.content.startswith("\n# Deployment")
    assert index.get_page("guides/deployment").path == "guides/deployment.md"
    assert index.get_page("./reference/api.mdx").path == "reference/api.mdx"


def test_missing_page_suggests_close_paths(index: DocsIndex) -> None:
    with pytest.raises(
        InvalidInputError,
        match=r"No docs page 'guides/deploy.md'\. Did you mean: guides/deployment.md",
    ):
        index.get_page("guides/deploy.md")


@pytest.mark.parametrize("path", ["../secret.md", "guides/../../secret.md", "/etc/passwd"])
def test_paths_leaving_the_root_are_rejected(index: DocsIndex, path: str) -> None:
    with pytest.raises(
        PathOutsideWorkspaceError,
        match=r"is outside the docs root: absolute paths and '\.\.' are not allowed",
    ):
        index.get_page(path)
    with pytest.raises(PathOutsideWorkspaceError):
        index.list_pages(path)


def test_symlinks_out_of_the_root_are_rejected(docs_root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n\nclassified launch codes\n")
    (docs_root / "leak.md").symlink_to(outside / "secret.md")
    (docs_root / "linked").symlink_to(outside, target_is_directory=True)
    index = DocsIndex(docs_root)
    assert "leak.md" not in {p.path for p in index.list_pages()}
    assert index.search("classified") == []
    for path in ("leak.md", "linked/secret.md"):
        with pytest.raises(
            PathOutsideWorkspaceError,
            match="resolves outside the docs root through a symbolic link",
        ):
            index.get_page(path)


def test_scope_restricts_pages_and_paths(docs_root: Path) -> None:
    index = DocsIndex(docs_root, scope="guides")
    assert [p.path for p in index.list_pages()] == [
        "guides/caching.md",
        "guides/deployment.md",
        "guides/plain.md",
    ]
    assert top_paths(index, "threadId") == []
    with pytest.raises(
        PathOutsideWorkspaceError, match=r"'reference/api\.mdx' is outside the docs scope 'guides'"
    ):
        index.get_page("reference/api.mdx")
    with pytest.raises(
        PathOutsideWorkspaceError, match=r"Docs scope '\.\./x' is outside the docs root"
    ):
        DocsIndex(docs_root, scope="../x")
    with pytest.raises(InvalidInputError, match="Docs scope 'missing' is not a folder"):
        DocsIndex(docs_root, scope="missing")


def test_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="is not a folder"):
        DocsIndex(tmp_path / "nowhere")


# -- refresh --------------------------------------------------------------------------------------


def test_refresh_sees_edits(index: DocsIndex, docs_root: Path) -> None:
    assert index.search("kubernetes") == []
    (docs_root / "guides" / "k8s.md").write_text("# Kubernetes\n\nRun pods.\n")
    assert index.search("kubernetes") == []  # searches use the last build
    stats = index.refresh()
    assert (stats.pages, stats.build) == (7, 2)
    assert top_paths(index, "kubernetes") == ["guides/k8s.md"]


def test_concurrent_refreshes_share_one_build(
    index: DocsIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    real_build = DocsIndex._build

    def slow_build(self: DocsIndex) -> object:
        builds.append(1)
        time.sleep(0.3)
        return real_build(self)

    monkeypatch.setattr(DocsIndex, "_build", slow_build)
    threads_count = 8
    barrier = threading.Barrier(threads_count)
    results: list[DocsStats] = []

    def worker() -> None:
        barrier.wait()
        results.append(index.refresh())

    threads = [threading.Thread(target=worker) for _ in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert len(results) == threads_count
    assert {r.build for r in results} == {2}
    assert index.refresh().build == 3  # a later call builds again
    assert len(builds) == 2


def test_a_failed_build_reaches_every_waiter(
    index: DocsIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_build(self: DocsIndex) -> object:
        time.sleep(0.2)
        msg = "disk on fire"
        raise OSError(msg)

    monkeypatch.setattr(DocsIndex, "_build", broken_build)
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            index.refresh()
        except OSError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [str(e) for e in errors] == ["disk on fire"] * 4
    assert index.stats.build == 1  # the previous index still answers
    assert top_paths(index, "docker") == ["guides/deployment.md"]


def test_link_targets_are_not_indexed_but_link_text_is(tmp_path: Path) -> None:
    root = tmp_path / "l"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nRead [the zebra guide](/internal/okapipath) first.\n")
    index = DocsIndex(root)
    assert index.search("okapipath") == []
    [hit] = index.search("zebra")
    assert hit.snippet == "Read the <<zebra>> guide first."
