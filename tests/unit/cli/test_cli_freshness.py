"""`workspace-tools search` never answers silently from a stale index (cli/_fresh.py).

A stat walk finds what changed since the last index: a few files are synced first, more make
the search stop with `N files changed since the last index; run with --sync` and exit 2.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from workspace_tools.cli import main
from workspace_tools.core.workspace import freshness as _freshness

BM25 = ("--embedder", "none")
OLD = time.time() - 3600  # an hour ago: mtimes the index trusts (outside the racy window)


def run(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--root", str(root), *BM25, *args])
    out, err = capsys.readouterr()
    return code, out, err


def age(root: Path) -> None:
    """Give every file an old mtime, as files that were not written just now have."""
    for path in root.rglob("*"):
        if path.is_file() and ".workspace_tools" not in path.parts:
            os.utime(path, (OLD, OLD))


@pytest.fixture
def indexed(tree: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    age(tree)
    assert run(capsys, tree, "-q", "index")[0] == 0
    return tree


def test_a_few_edits_are_synced_before_the_search_answers(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (indexed / "docs" / "new.md").write_text("# New\n\nZebras graze here.\n", encoding="utf-8")
    (indexed / "docs" / "faq.md").write_text("# FAQ\n\nZebras are striped.\n", encoding="utf-8")
    (indexed / "notes.txt").unlink()
    code, out, err = run(capsys, indexed, "search", "zebras")
    assert code == 0
    assert "Synced 3 files changed since the last index first" in err
    assert "(1 new, 1 changed, 1 deleted: docs/new.md, docs/faq.md, notes.txt" in err
    assert "docs/new.md:" in out and "docs/faq.md:" in out
    code, out, err = run(capsys, indexed, "search", "café")
    assert (code, err) == (1, "")  # in step now: no sync, no note; nothing found: exit 1
    assert "No results for 'café'" in out  # the deleted file is gone from the index
    # --json keeps stdout one JSON document and stderr silent
    (indexed / "src" / "more.py").write_text("def zebra_count():\n    return 3\n", "utf-8")
    code, out, err = run(capsys, indexed, "search", "zebra_count", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["results"][0]["source_id"] == "src/more.py"


def test_many_changes_stop_the_search_with_the_way_out(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(_freshness.AUTO_SYNC_FILES + 1):
        (indexed / "docs" / f"zebra{i:02}.md").write_text(f"zebra number {i}\n", "utf-8")
    code, out, err = run(capsys, indexed, "search", "zebra")
    assert code == 2 and out == ""
    assert err.startswith(
        "error: 21 files changed since the last index; run with --sync to index them first, "
        "or --no-sync to search the index as it is (a search syncs by itself only up to 20 "
        "files and 1 MiB). Changed: 21 new: docs/zebra00.md, docs/zebra01.md,"
    )
    assert "... (16 more)." in err
    code, out, _ = run(capsys, indexed, "search", "zebra", "--no-sync")
    assert code == 1 and "No results for 'zebra'" in out  # the index as it is, on request
    code, out, _ = run(capsys, indexed, "-q", "search", "zebra", "--sync", "-k", "30")
    assert code == 0 and "--- 21 results (bm25 search" in out
    code, _, err = run(capsys, indexed, "search", "zebra")
    assert (code, err) == (0, "")


def test_one_large_new_file_is_not_synced_by_a_search(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = "zebra crossing " * 10 + "\n"
    big = indexed / "big.txt"
    big.write_text(line * ((_freshness.AUTO_SYNC_BYTES // len(line)) + 1), encoding="utf-8")
    code, _, err = run(capsys, indexed, "search", "zebra")
    assert code == 2
    assert "error: 1 file changed since the last index; run with --sync" in err
    assert "Changed: 1 new: big.txt." in err


def test_skipped_and_removed_files_do_not_count_until_they_change(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # image.bin was skipped (binary) by the index and guide.md is removed on purpose: the
    # walk sees both on disk without indexing them, and neither is a change
    code, out, _ = run(capsys, indexed, "remove", "docs/guide.md")
    assert code == 0
    for _ in range(2):
        code, out, err = run(capsys, indexed, "search", "install package")
        assert (code, err) == (1, "")  # the one file about it was removed: nothing found
        assert "docs/guide.md" not in out
    (indexed / "image.bin").write_bytes(b"\x89PNG\x00\x01\x02\x03 edited")
    (indexed / "docs" / "guide.md").write_text("# Guide\n\nInstall it again.\n", "utf-8")
    code, out, err = run(capsys, indexed, "search", "install")
    assert code == 0
    assert (
        "Synced 2 files changed since the last index first (2 new: docs/guide.md, image.bin" in err
    )
    assert "docs/guide.md:" in out


def test_a_file_skipped_just_after_it_was_written_is_not_a_change(
    tree: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PDF skipped for a missing extra right after it was written counted as new at the next
    searches (its mtime was too recent to record), so each synced it and said so again."""
    from workspace_tools.core.convert import _pdf
    from workspace_tools.core.convert.limits import ConversionLimits
    from workspace_tools.core.errors import ConversionError
    from workspace_tools.core.workspace import _workspace

    def missing(module: str, *, suffix: str) -> object:
        raise ConversionError(f"missing extra: pip install ... to read {suffix} files")

    monkeypatch.setattr(_pdf, "require", missing)  # in this process: no worker processes
    monkeypatch.setattr(_workspace, "DEFAULT_LIMITS", ConversionLimits(isolate=False))
    report = tree / "report.pdf"
    report.write_bytes(b"%PDF-1.4\n%%EOF\n")
    assert run(capsys, tree, "-q", "index")[0] == 0  # all written just now: racy mtimes
    for _ in range(2):
        code, _, err = run(capsys, tree, "search", "keyword")
        assert (code, err) == (0, "")
    stat = report.stat()  # the same size and mtime, other bytes: still a change
    report.write_bytes(b"%PDF-1.4\n%%EOG\n")
    os.utime(report, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    code, _, err = run(capsys, tree, "search", "keyword")
    assert code == 0 and "(1 new: report.pdf;" in err


def test_an_edit_within_the_timestamp_granularity_is_found(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # indexed right after it was written: the index cannot trust the mtime (racy rule), so
    # the walk hashes the file; same size, same mtime, other text is still a change
    faq = tree / "docs" / "faq.md"
    os.utime(tree / "image.bin", (OLD, OLD))  # the one skipped file: not in the way
    assert run(capsys, tree, "-q", "index")[0] == 0
    code, _, err = run(capsys, tree, "search", "keyword")
    assert (code, err) == (0, "")  # hashed: unchanged, so nothing to sync
    stat = faq.stat()
    text = faq.read_text(encoding="utf-8").replace("fast", "slow")
    faq.write_text(text, encoding="utf-8")
    os.utime(faq, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert faq.stat().st_size == stat.st_size
    code, out, err = run(capsys, tree, "search", "slow")
    assert code == 0 and "1 changed: docs/faq.md" in err and "docs/faq.md:" in out


def test_a_read_only_index_says_so_instead_of_syncing(
    indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (indexed / "workspace-tools.yaml").write_text("workspace:\n  read_only: true\n", "utf-8")
    (indexed / "docs" / "new.md").write_text("zebra\n", "utf-8")
    code, out, err = run(capsys, indexed, "search", "zebra")
    assert code == 2 and out == ""
    assert "changed since the last index; the index is read-only" in err
    assert "run with --no-sync to search the index as it is" in err
    assert run(capsys, indexed, "search", "zebra", "--no-sync")[0] == 1  # searched: no hit


def test_the_stat_walk_reads_no_unchanged_file(
    indexed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from workspace_tools.core.text import scan
    from workspace_tools.core.workspace import Workspace

    reads: list[str] = []
    real = scan.read_inside

    def counting(root: Path, rel: str, **kwargs: object) -> object:
        reads.append(rel)
        return real(root, rel, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan, "read_inside", counting)  # every ScanConfig.read
    ws = Workspace(indexed, embedder=None)
    (indexed / "docs" / "faq.md").write_text("# FAQ\n\nedited\n", encoding="utf-8")
    pending = _freshness.pending_changes(ws)
    assert (pending.added, pending.changed, pending.deleted) == ([], ["docs/faq.md"], [])
    assert reads == []  # the changed file is found by its stat; no file is read


def test_search_after_removing_the_last_source_does_not_reindex_the_folder(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, tree, "-q", "index")
    assert run(capsys, tree, "remove", ".")[0] == 0
    code, out, err = run(capsys, tree, "search", "install package")
    assert code == 1  # nothing found (docs/cli.md's exit-status rule)
    assert "indexing" not in err and "Indexed" not in out
    assert "No results for 'install package'" in out
    _, stats, _ = run(capsys, tree, "stats")
    assert '"sources": 0' in stats
