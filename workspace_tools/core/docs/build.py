"""Building a docs snapshot: walk the tree, read and parse the pages, index the fields."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from workspace_tools.core.convert.formats import DOCS_PAGE_SUFFIXES
from workspace_tools.core.docs._mdx import DocsPage, first_paragraph, parse_page
from workspace_tools.core.docs.expand import ExpansionConfig, QueryExpander, surface_map
from workspace_tools.core.docs.page_types import page_type
from workspace_tools.core.docs.results import DocsStats
from workspace_tools.core.docs.vectors import SectionVectors, page_text, section_text
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.index.sparse import BM25Config, SparseIndex
from workspace_tools.core.text.scan import ScanConfig, read_inside, scan
from workspace_tools.core.text.tokenizer import WORD_PATTERN, Tokenizer

__all__ = ["DOC_SUFFIXES", "FIELDS", "MAX_PAGE_BYTES", "Section", "Snapshot", "build_snapshot"]

logger = logging.getLogger(__name__)

DOC_SUFFIXES: Final = DOCS_PAGE_SUFFIXES
"""File types indexed as documentation pages."""
MAX_PAGE_BYTES: Final = 5_000_000
"""Pages larger than this are skipped (with a warning) instead of read."""
_DOCS_WALK: Final = ScanConfig(
    max_depth=32,
    max_file_bytes=MAX_PAGE_BYTES,
    excluded_dirs=frozenset({"node_modules", "__pycache__"}),
)
"""How a docs tree is walked: hidden and dependency folders skipped, ``.gitignore`` honoured."""
FIELDS: Final = (("title", True), ("description", True), ("heading", False), ("content", False))
"""Field names, and whether the field is indexed per page (else per section)."""


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a page: the text under one heading."""

    page: int
    heading: str
    line: int  # 1-based file line of the section's first line
    text: str  # cleaned lines, one per file line


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one search reads, built at once and never changed."""

    pages: tuple[DocsPage, ...]
    by_path: dict[str, int]
    sections: tuple[Section, ...]
    section_page: npt.NDArray[np.int64]
    page_types: tuple[str, ...]
    fields: dict[str, SparseIndex | None]
    expander: QueryExpander
    stats: DocsStats
    vectors: npt.NDArray[np.float32] | None = None  # one row per section
    page_vectors: npt.NDArray[np.float32] | None = None  # one row per page
    embed_texts: tuple[str, ...] = ()  # what to embed (sections, then pages) while pending

    def with_vectors(self, rows: npt.NDArray[np.float32]) -> Snapshot:
        """This snapshot with the embedded rows of :attr:`embed_texts` (sections, then pages)."""
        cut = len(self.sections)
        return replace(self, vectors=rows[:cut], page_vectors=rows[cut:], embed_texts=())


def scan_pages(root: Path, scope: str, suffixes: tuple[str, ...]) -> list[tuple[str, Path]]:
    """Pages under the root (or scope), walked by the one file walker (``.gitignore`` too)."""
    found = scan(root, [scope or "."], config=_DOCS_WALK)
    for skipped in found.skipped:
        if skipped.path.endswith(suffixes) or not skipped.reason.startswith("missing"):
            logger.warning("Skipping %s: %s", skipped.path, skipped.reason)
    return sorted((rel, file) for rel, file in found.files.items() if rel.endswith(suffixes))


def build_snapshot(
    root: Path,
    *,
    scope: str,
    suffixes: tuple[str, ...],
    tokenizer: Tokenizer,
    bm25: BM25Config,
    expansion: ExpansionConfig,
    vectors: SectionVectors | None,
    embed_in_background: bool,
    embed_pages: bool,
    next_build: Callable[[], int],
) -> Snapshot:
    """Read every page under ``root`` (or ``root/scope``) and index it.

    Args:
        root: The docs root (resolved).
        scope: The subfolder indexed, or ``""`` for the whole root.
        suffixes: File name endings indexed as pages.
        tokenizer: Tokenizer of every field.
        bm25: BM25 parameters of every field index.
        expansion: Prefix and typo settings of the query expander.
        vectors: The section embedder and its cache, ``None`` for a lexical index.
        embed_in_background: Leave the texts to embed in the snapshot instead of embedding now.
        embed_pages: Embed each page's title and description too (after the sections).
        next_build: Called once the pages are indexed; returns this build's number.
    """
    started = time.perf_counter()
    pages: list[DocsPage] = []
    sections: list[Section] = []
    summaries: list[str] = []
    for rel, file in scan_pages(root, scope, suffixes):
        try:
            data, _ = read_inside(root, rel, max_bytes=MAX_PAGE_BYTES)
        except (OSError, InvalidInputError) as exc:
            logger.warning("Skipping %s: %s", file, exc)
            continue
        text = data.decode("utf-8", errors="replace")
        if "\r" in text:  # universal newlines
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        page, parts = parse_page(rel, text)
        sections.extend(Section(len(pages), h, line, body) for h, line, body in parts)
        pages.append(page)
        summaries.append(page.description or first_paragraph(body for _, _, body in parts))
    texts = {
        "title": [p.title for p in pages],
        "description": summaries,
        "heading": [s.heading for s in sections],
        "content": [s.text for s in sections],
    }
    fields: dict[str, SparseIndex | None] = {}
    words: set[str] = set()
    for name, field_texts in texts.items():
        tokens = tokenizer.tokenize_many(field_texts)
        index = None
        if any(tokens):
            index = SparseIndex(bm25)
            index.build(tokens)
        fields[name] = index
        for text in field_texts:
            words.update(WORD_PATTERN.findall(text))
    expander = QueryExpander(surface_map(words, tokenizer), tokenizer, config=expansion)
    to_embed: tuple[str, ...] = ()
    if vectors is not None and sections:
        to_embed = (
            *(section_text(pages[s.page].title, s.heading, s.text) for s in sections),
            *(page_text(p.title, p.description) for p in pages if embed_pages),
        )
    stats = DocsStats(
        pages=len(pages),
        sections=len(sections),
        seconds=time.perf_counter() - started,
        build=next_build(),
    )
    snapshot = Snapshot(
        pages=tuple(pages),
        by_path={p.path: i for i, p in enumerate(pages)},
        sections=tuple(sections),
        section_page=np.array([s.page for s in sections], dtype=np.int64),
        page_types=tuple(page_type(p.path) for p in pages),
        fields=fields,
        expander=expander,
        stats=stats,
        embed_texts=to_embed,
    )
    if vectors is None or (embed_in_background and to_embed and not vectors.has_all(to_embed)):
        return snapshot  # lexical, or embedded later (DocsIndex queues it)
    return snapshot.with_vectors(vectors.embed_sections(to_embed))
