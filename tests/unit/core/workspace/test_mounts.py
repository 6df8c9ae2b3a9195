"""Mounts: several folders in one index, each under a path prefix (issue 40)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.tools import ToolException

from tests.support.fakes import FakeEmbedder
from workspace_tools.core.errors import InvalidInputError, PathOutsideWorkspaceError
from workspace_tools.core.grep import grep
from workspace_tools.core.grep_counts import grep_counts
from workspace_tools.core.text.mounts import Mounts
from workspace_tools.core.workspace import Workspace
from workspace_tools.core.workspace.freshness import pending_changes
from workspace_tools.core.workspace.settings import UntrustedSettingError
from workspace_tools.tools.toolkit import WorkspaceToolkit


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    """A root with one note, a handbook folder and a code folder beside it, a secret outside."""
    root, handbook, code = tmp_path / "root", tmp_path / "handbook", tmp_path / "code"
    (root / "notes").mkdir(parents=True)
    (handbook / "sub").mkdir(parents=True)
    code.mkdir()
    (root / "notes" / "todo.md").write_text("# Todo\n\nfeed the zebra\n", encoding="utf-8")
    (handbook / "guide.md").write_text("# Guide\n\nThe zebra guide.\n", encoding="utf-8")
    (handbook / "sub" / "deep.md").write_text("a deep zebra page\n", encoding="utf-8")
    (code / "zoo.py").write_text("def zebra():\n    return 'stripes'\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("zebra password\n", encoding="utf-8")
    return {"root": root, "handbook": handbook, "code": code, "tmp": tmp_path}


def open_ws(places: dict[str, Path], **kwargs: object) -> Workspace:
    mounts = {"/docs": "../handbook", "src": places["code"]}
    return Workspace(places["root"], embedder=FakeEmbedder(), mounts=mounts, **kwargs)  # type: ignore[arg-type]


def ids(ws: Workspace, query: str, **kwargs: object) -> list[str]:
    return sorted({r.source_id for r in ws.search(query, mode="bm25", top_k=20, **kwargs)})  # type: ignore[arg-type]


def test_one_index_holds_the_root_and_every_mount_with_prefixed_ids(
    places: dict[str, Path],
) -> None:
    ws = open_ws(places)
    report = ws.sync()
    assert sorted(report.added) == [
        "docs/guide.md",
        "docs/sub/deep.md",
        "notes/todo.md",
        "src/zoo.py",
    ]
    assert ws.index_dir == places["root"] / ".workspace_tools" / "index"  # the root's, as today
    assert ids(ws, "zebra") == ["docs/guide.md", "docs/sub/deep.md", "notes/todo.md", "src/zoo.py"]
    hybrid = ws.search("zebra guide", top_k=1)
    assert hybrid[0].source_id == "docs/guide.md"
    assert hybrid[0].id == "docs/guide.md"  # a one-chunk file's chunk id is its id
    assert ws.stats(within=["docs"])["sources"] == 2
    assert sorted(ws.source_ids()) == sorted(report.added)
    assert [p for p, _ in ws.mounts] == ["docs", "src"]
    assert dict(ws.mounts)["docs"] == places["handbook"].resolve()


def test_within_and_globs_work_on_the_prefixes(places: dict[str, Path]) -> None:
    ws = open_ws(places)
    assert sorted(ws.sync("docs/**/*.md").added) == ["docs/guide.md", "docs/sub/deep.md"]
    assert sorted(ws.sync("/src").added) == ["src/zoo.py"]  # Mastra's spelling
    assert sorted(ws.sync("**/*.md").added) == ["notes/todo.md"]  # ** reaches every mount
    from workspace_tools.core.text.within import within_filter

    assert ids(ws, "zebra", filter=within_filter(("docs",))) == [
        "docs/guide.md",
        "docs/sub/deep.md",
    ]
    assert ws.remove("docs/sub") == ["docs/sub/deep.md"]
    assert ws.remove("src/*.py") == ["src/zoo.py"]
    assert sorted(ws.source_ids()) == ["docs/guide.md", "notes/todo.md"]


def test_read_and_grep_go_through_the_prefix(places: dict[str, Path]) -> None:
    ws = open_ws(places)
    ws.sync()
    page = ws.read("docs/guide.md", start_line=3, end_line=3)
    assert (page.source_id, page.text) == ("docs/guide.md", "The zebra guide.")
    assert ws.read("/docs/sub/deep.md").text == "a deep zebra page"
    assert ws.read(str(places["code"] / "zoo.py")).source_id == "src/zoo.py"  # absolute path
    chunk = ws.search("stripes", mode="bm25", top_k=1)[0]
    assert ws.read(chunk_id=chunk.id).source_id == "src/zoo.py"
    assert ws.read_text("src/zoo.py").startswith("def zebra")
    report = grep(ws.root, "zebra", mounts=ws.mounts)
    assert [(m.path, m.line) for m in report.matches] == [
        ("notes/todo.md", 3),
        ("docs/guide.md", 3),
        ("docs/sub/deep.md", 1),
        ("src/zoo.py", 1),
    ]
    report = grep(ws.root, "zebra", ["docs/**/*.md"], mounts=ws.mounts, within=["docs/sub"])
    assert [m.path for m in report.matches] == ["docs/sub/deep.md"]
    assert [m.path for m in grep(ws.root, "zebra", within=["src"], mounts=ws.mounts).matches] == [
        "src/zoo.py"
    ]
    counts = grep_counts(ws.root, "zebra", ["src", "docs/guide.md"], mounts=ws.mounts)
    assert counts.counts == [("src/zoo.py", 1), ("docs/guide.md", 1)]


def test_freshness_sees_changes_in_a_mount(places: dict[str, Path]) -> None:
    ws = open_ws(places)
    ws.sync()
    time.sleep(0.01)
    (places["handbook"] / "new.md").write_text("new zebra\n", encoding="utf-8")
    (places["code"] / "zoo.py").unlink()
    pending = pending_changes(ws)
    assert (pending.added, pending.deleted) == (["docs/new.md"], ["src/zoo.py"])
    report = ws.sync(pending.ids)
    assert (report.added, report.removed) == (["docs/new.md"], ["src/zoo.py"])
    assert pending_changes(ws).count == 0


def test_a_link_out_of_its_mount_is_not_followed(places: dict[str, Path]) -> None:
    handbook = places["handbook"]
    (handbook / "leak.md").symlink_to(places["tmp"] / "secret.txt")
    (handbook / "to-root.md").symlink_to(places["root"] / "notes" / "todo.md")  # another folder
    ws = open_ws(places)
    report = ws.sync("docs")
    assert {s.path: s.reason for s in report.skipped} == {
        "docs/leak.md": "outside workspace: symbolic link leads outside the root",
        "docs/to-root.md": "outside workspace: symbolic link leads outside the root",
    }
    with pytest.raises(PathOutsideWorkspaceError) as caught:
        ws.read("docs/leak.md")
    assert str(caught.value) == (
        f"Path 'docs/leak.md' leads outside its mount ({handbook.resolve()}) through a symbolic "
        "link. Only files inside the mount can be read."
    )
    with pytest.raises(PathOutsideWorkspaceError, match="^Path 'docs/leak.md' leads outside"):
        grep(ws.root, "zebra", ["docs/leak.md"], mounts=ws.mounts)
    with pytest.raises(PathOutsideWorkspaceError, match=r"^Path '\.\./secret.txt' is outside"):
        ws.read("../secret.txt")


def test_tools_serve_the_mounts_and_turn_errors_into_tool_errors(
    places: dict[str, Path],
) -> None:
    (places["handbook"] / "leak.md").symlink_to(places["tmp"] / "secret.txt")
    ws = open_ws(places)
    ws.sync()
    tools = {t.name: t for t in WorkspaceToolkit(workspace=ws).get_tools()}
    found = tools["workspace_search"].invoke({"query": "zebra guide", "top_k": 1})
    assert found.startswith("1.") and "docs/guide.md" in found
    assert "The zebra guide." in tools["workspace_read"].invoke({"path": "docs/guide.md"})
    grepped = tools["search_documents"].invoke({"query": "zebra", "mode": "grep", "paths": ["src"]})
    assert "src/zoo.py" in grepped and "docs/" not in grepped
    read = tools["workspace_read"]
    assert read.invoke({"path": "docs/leak.md"}).startswith(  # the model reads the error
        "Path 'docs/leak.md' leads outside its mount"
    )
    read.handle_tool_error = False
    with pytest.raises(ToolException, match=r"^Path 'docs/leak.md' leads outside its mount"):
        read.invoke({"path": "docs/leak.md"})
    indexed = tools["workspace_index"].invoke({"path": "docs/guide.md"})
    assert indexed.startswith("Indexed docs/guide.md")


BAD: list[tuple[Callable[[Path], dict[str, object]], str]] = [
    (
        lambda _: {"a/b": "../handbook"},
        "Mount '/a/b' -> '../handbook': the prefix must be one simple folder name, given once "
        "(letters, digits, '.', '_', '-'; like '/docs'). Rename the prefix.",
    ),
    (
        lambda _: {"/": "../handbook"},
        "Mount '/' -> '../handbook': the prefix must be one simple folder name",
    ),
    (
        lambda _: {"..": "../handbook"},
        "Mount '/..' -> '../handbook': the prefix must be one simple folder name",
    ),
    (
        lambda _: {"d*": "../handbook"},
        "Mount '/d*' -> '../handbook': the prefix must be one simple folder name",
    ),
    (
        lambda tmp: {"notes": "../handbook"},
        "Mount '/notes' -> '../handbook': the workspace root already has an entry 'notes' "
        "({root}/notes); its files and the mount's would share ids. Choose another prefix.",
    ),
    (
        lambda _: {"docs": "../missing"},
        "Mount '/docs' -> '../missing': no such folder ({tmp}/missing). Mount an existing folder.",
    ),
    (
        lambda _: {"docs": "../handbook", "deep": "../handbook/sub"},
        "Mount '/deep' -> '../handbook/sub': the folder {tmp}/handbook/sub overlaps mount '/docs' "
        "({tmp}/handbook); its files would be indexed twice. Mount folders that do not contain "
        "one another.",
    ),
    (
        lambda _: {"up": ".."},
        "Mount '/up' -> '..': the folder {tmp} overlaps the workspace root {root}; its files "
        "would be indexed twice. Mount folders that do not contain one another.",
    ),
]


@pytest.mark.parametrize(("mounts", "message"), BAD)
def test_bad_mounts_are_refused_with_the_value_the_rule_and_the_fix(
    places: dict[str, Path], mounts: Callable[[Path], dict[str, object]], message: str
) -> None:
    tmp, root = places["tmp"].resolve(), places["root"].resolve()
    expected = message.format(tmp=tmp, root=root)
    with pytest.raises(InvalidInputError) as caught:
        Workspace(places["root"], embedder=None, mounts=mounts(tmp))  # type: ignore[arg-type]
    assert str(caught.value).startswith(expected)


def test_project_file_mounts_stay_inside_the_root(places: dict[str, Path]) -> None:
    root = places["root"]
    (root / "manual").mkdir()
    (root / "manual" / "intro.md").write_text("zebra intro\n", encoding="utf-8")
    config = root / "workspace-tools.yaml"
    config.write_text("workspace:\n  mounts:\n    /guide: manual\n", encoding="utf-8")
    ws = Workspace(root, embedder=None)
    assert sorted(ws.sync().added) == ["guide/intro.md", "notes/todo.md"]  # not manual/intro.md
    assert ws.read("guide/intro.md").text == "zebra intro"
    both = Workspace(root, embedder=None, mounts={"guide": places["handbook"]})  # the caller wins
    assert dict(both.mounts) == {"guide": places["handbook"].resolve()}
    config.write_text("workspace:\n  mounts:\n    /docs: ../handbook\n", encoding="utf-8")
    with pytest.raises(UntrustedSettingError) as caught:
        Workspace(root, embedder=None)
    assert str(caught.value) == (
        f"'mounts: /docs: ../handbook' in {config} is refused: it points outside the project root "
        f"({places['handbook'].resolve()}), and the folder's own file may not mount a folder "
        "outside it. Pass mounts= to Workspace, --mount PREFIX=PATH on the CLI or set "
        "$WORKSPACE_TOOLS_MOUNTS."
    )
    config.write_text("workspace:\n  mounts: [docs]\n", encoding="utf-8")
    with pytest.raises(
        InvalidInputError, match=r"^Invalid 'mounts' under 'workspace' in .*must be"
    ):
        Workspace(root, embedder=None)


def test_the_root_never_shadows_a_mount_and_an_empty_map_changes_nothing(
    places: dict[str, Path],
) -> None:
    ws = open_ws(places)
    (places["root"] / "docs").mkdir()  # made after the mount was checked
    (places["root"] / "docs" / "guide.md").write_text("root copy zebra\n", encoding="utf-8")
    ws.sync()
    assert ws.read("docs/guide.md").text.startswith("# Guide")  # the mount's file
    twice = {"/guide": places["handbook"], "guide": places["code"]}  # Mounts itself, not merged
    with pytest.raises(InvalidInputError, match=r"^Mount '/guide' -> '.*code': the prefix must be"):
        Mounts(places["root"].resolve(), twice)  # type: ignore[arg-type]
    plain = Mounts(places["root"].resolve())
    assert not plain and plain.route("docs/guide.md") == (plain.root, "docs/guide.md")
    assert plain.source_id(places["tmp"] / "secret.txt") is None


@pytest.mark.slow
def test_the_watcher_follows_every_mount(places: dict[str, Path]) -> None:
    ws = open_ws(places, index_dir=places["tmp"] / "index")
    with ws.watch(debounce_ms=300, poll_seconds=0.5) as watcher:
        deadline = time.monotonic() + 30
        while watcher.stats.syncs < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        (places["code"] / "giraffe.py").write_text("giraffe = 1\n", encoding="utf-8")
        (places["handbook"] / "sub" / "okapi.md").write_text("okapi\n", encoding="utf-8")
        while time.monotonic() < deadline and not (ids(ws, "giraffe") and ids(ws, "okapi")):
            time.sleep(0.05)
        assert watcher.stats.mode == "events"  # file events from folders outside the root
    assert (ids(ws, "giraffe"), ids(ws, "okapi")) == (["src/giraffe.py"], ["docs/sub/okapi.md"])
