"""stage_texts tells a Markdown text by its id's suffix, read as ``Path(id).suffix`` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from workspace_tools.core.workspace import _ingest

IDS = [
    "",
    ".",
    "..",
    "a",
    "a/",
    "a/.",
    "a/./",
    "./a.md",
    "/",
    "//x.md",
    "a//b.txt",
    "a/..",
    ".md",
    "x.",
    "x.tar.gz",
    "dir.d/file",
    "dir.d/",
    "a/.hidden.md",
    "b.MD",
    "é/ß.markdown",
    "docs/guide.md/",
    "c00000001",
    "notes.mdx",
]


@pytest.mark.parametrize("source_id", IDS)
def test_the_suffix_is_the_path_object_s(source_id: str) -> None:
    assert _ingest._suffix(source_id) == Path(source_id).suffix
