"""LangChain tools over a :class:`~workspace_tools.core.docs.index.DocsIndex`.

``make_docs_tools(root)`` gives ``docs_search``, ``docs_list``, ``docs_get_page`` and
``docs_refresh_index`` over one index (``scope`` names a subfolder and suffixes the names).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, Field

from workspace_tools.core.docs.expand import ExpansionConfig
from workspace_tools.core.docs.index import DocsIndex, DocsPage, FieldWeights
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.text.tokenizer import Tokenizer
from workspace_tools.core.text.within import is_within
from workspace_tools.tools.base import ToolFacts, WorkspaceBaseTool, as_tool_errors
from workspace_tools.tools.outputs import (
    DocsGetPageOutput,
    DocsListOutput,
    DocsRefreshIndexOutput,
    DocsSearchOutput,
)

__all__ = [
    "DISABLE_DOCS_ENV",
    "DocsGetPageInput",
    "DocsGetPageTool",
    "DocsListInput",
    "DocsListTool",
    "DocsRefreshIndexInput",
    "DocsRefreshIndexTool",
    "DocsSearchInput",
    "DocsSearchTool",
    "docs_disabled",
    "make_docs_tools",
]

DISABLE_DOCS_ENV: Final = "WORKSPACE_TOOLS_DISABLE_DOCS"
"""Set to ``1`` (or ``true``/``yes``) and :func:`make_docs_tools` returns no tools."""
MAX_PAGE_CHARS: Final = 8000
"""Longest page text ``docs_get_page`` returns."""
MAX_LIST_CHARS: Final = 40_000
"""Longest page list ``docs_list`` returns as text (the artifact always holds every page)."""
_TOOL_NAME: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _where(index: DocsIndex) -> str:
    return f"the documentation under '{index.scope}/'" if index.scope else "the documentation"


class DocsSearchInput(BaseModel):
    """Arguments of ``docs_search``."""

    query: str = Field(
        min_length=1,
        max_length=500,
        description="Words to look for, e.g. 'deploy to vercel'. Prefixes and small typos match.",
    )
    top_k: int = Field(default=5, ge=1, le=50, description="Most sections to return (1-50).")
    folder: str | None = Field(
        default=None,
        description="Only pages under this folder, relative to the docs root (e.g. 'guides').",
    )


class DocsListInput(BaseModel):
    """Arguments of ``docs_list``."""

    folder: str | None = Field(
        default=None,
        description="Only pages under this folder, relative to the docs root; omit for all.",
    )
    offset: int = Field(
        default=0,
        ge=0,
        description="Skip this many pages (the note at the end of a long list gives the next "
        "offset).",
    )


class DocsGetPageInput(BaseModel):
    """Arguments of ``docs_get_page``."""

    path: str = Field(
        min_length=1,
        max_length=1000,
        description="Page path as docs_search or docs_list show it (e.g. 'guides/deploy.mdx').",
    )
    offset: int = Field(
        default=0,
        ge=0,
        description=f"Character to start reading at, to read on past the first "
        f"{MAX_PAGE_CHARS:,} (the note at the end of a cut page gives the next offset).",
    )


class DocsRefreshIndexInput(BaseModel):
    """``docs_refresh_index`` takes no arguments."""


class _DocsTool(WorkspaceBaseTool):
    index: DocsIndex
    """The shared docs index."""
    cite_prefix: str = ""
    """Put before every printed page path; see ``cite_from`` of :func:`make_docs_tools`."""

    within: tuple[str, ...] | None = None
    """Only pages in these folders (relative to the docs root; ``None``: all), set per MCP call."""

    def _cite(self, path: str) -> str:
        return f"{self.cite_prefix}{path}"

    def _outside(self, kind: str, value: str) -> str:
        shown = ", ".join(f"{self.cite_prefix}{w}" for w in self.within or ()) or "none"
        return (
            f"{kind} {value!r} is outside the docs folders this session serves ({shown}). "
            "Use a page or folder inside them."
        )

    def _folders(self, folder: str | None) -> list[str | None]:
        """The folders a search or listing under ``folder`` covers, within :attr:`within`."""
        if self.within is None:
            return [folder]
        if folder is None:
            return list(self.within)
        parts = folder.strip().replace("\\", "/").split("/")
        wanted = "/".join(p for p in parts if p not in ("", "."))
        if not wanted:
            return list(self.within)
        inner: list[str | None] = [w for w in self.within if is_within(w, (wanted,))]
        if any(is_within(wanted, (w,)) for w in self.within):
            inner = [folder]
        if not inner:
            msg = self._outside("Folder", folder)
            raise ToolException(msg)
        return inner


class DocsSearchTool(_DocsTool):
    """Ranked sections of the docs for a query."""

    name: str = "docs_search"
    description: str = (
        "Full-text search of the documentation pages. Returns the best-matching sections, best "
        "first, each with page title, section heading, path:line, score and a snippet with hits "
        "marked <<like this>>. Prefix and one-typo matches count, ranked below exact ones. Use "
        "docs_get_page with a returned path to read the whole page."
    )
    args_schema: type[BaseModel] = DocsSearchInput
    output_model: ClassVar[type[BaseModel] | None] = DocsSearchOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Search the docs", writes=False, idempotent=True, destructive=False
    )

    def _run(
        self, query: str, top_k: int = 5, folder: str | None = None
    ) -> tuple[str, list[dict[str, Any]]]:
        with as_tool_errors():
            folders = self._folders(folder)
            if len(folders) == 1:  # one folder: the index pre-filters, top_k hits come back
                hits = self.index.search(query, top_k=top_k, folder=folders[0])
            else:
                # Several folders: over-fetch and filter, widening when too few are left.
                hits = []
                for k in (max(top_k * 20, 200), 1_000_000):
                    found = self.index.search(query, top_k=k, folder=folder)
                    hits = [h for h in found if is_within(h.path, self.within)][:top_k]
                    if len(hits) == top_k or len(found) < k:
                        break
        if not hits:
            return (
                f"No section of {_where(self.index)} matches {query!r}. Try other words, "
                "or docs_list to browse the pages.",
                [],
            )
        lines = []
        for rank, hit in enumerate(hits, start=1):
            heading = f" › {hit.heading}" if hit.heading and hit.heading != hit.title else ""
            lines.append(
                f"{rank}. {hit.title}{heading} ({self._cite(hit.path)}:{hit.line}, "
                f"score {hit.score:.2f})"
            )
            lines.extend(f"   {line}" for line in hit.snippet.split("\n") if line.strip())
        return "\n".join(lines), [hit.to_dict() for hit in hits]


class DocsListTool(_DocsTool):
    """Every page's title and path."""

    name: str = "docs_list"
    description: str = (
        "List the documentation pages: one line per page with its path and title, sorted by "
        "path. Give a folder to list only that part of the tree. A long list is cut into pages: "
        "call again with the offset the note at its end gives. Use docs_search to find pages "
        "by content and docs_get_page to read one."
    )
    args_schema: type[BaseModel] = DocsListInput
    output_model: ClassVar[type[BaseModel] | None] = DocsListOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="List docs pages", writes=False, idempotent=True, destructive=False
    )

    def _run(self, folder: str | None = None, offset: int = 0) -> tuple[str, list[dict[str, str]]]:
        with as_tool_errors():
            self._folders(folder)  # a folder outside the served ones is refused
            pages = [p for p in self.index.list_pages(folder) if is_within(p.path, self.within)]
        total = len(pages)
        if offset and offset >= total:
            msg = f"offset {offset} is past the end: {_where(self.index)} lists {total} pages."
            raise ToolException(msg)
        head = f"{total} pages in {_where(self.index)}"
        lines = [f"{head}:" if not offset else f"{head}, from page {offset + 1}:"]
        size = len(lines[0])
        end = total
        for index in range(offset, total):
            page = pages[index]
            line = f"- {self._cite(page.path)}: {page.title}"
            if size + len(line) + 1 > MAX_LIST_CHARS:
                end = index
                lines.append(
                    f"[{total - index} more pages: call docs_list with offset={index}, or pass "
                    "a folder to narrow them.]"
                )
                break
            lines.append(line)
            size += len(line) + 1
        artifact = [
            {"path": p.path, "title": p.title, "description": p.description}
            for p in pages[offset:end]
        ]
        return "\n".join(lines), artifact


class DocsGetPageTool(_DocsTool):
    """One page's content, :data:`MAX_PAGE_CHARS` characters at a time (``offset`` reads on)."""

    name: str = "docs_get_page"
    description: str = (
        "Read one documentation page by its path (as docs_search or docs_list show it; the "
        ".md/.mdx extension may be left out). Returns the title, description and the page text, "
        f"{MAX_PAGE_CHARS:,} characters at a time: a longer page ends with a note giving the "
        "offset to read on from."
    )
    args_schema: type[BaseModel] = DocsGetPageInput
    output_model: ClassVar[type[BaseModel] | None] = DocsGetPageOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Read a docs page", writes=False, idempotent=True, destructive=False
    )

    def _run(self, path: str, offset: int = 0) -> tuple[str, dict[str, Any]]:
        wanted = path.strip()
        if self.cite_prefix and wanted.removeprefix("./").startswith(self.cite_prefix):
            wanted = wanted.removeprefix("./").removeprefix(self.cite_prefix)  # as printed
        with as_tool_errors():
            page = self.index.get_page(wanted)
        if not is_within(page.path, self.within):
            msg = self._outside("Page", path)
            raise ToolException(msg)
        return _page_result(page, offset=offset, cite_prefix=self.cite_prefix)


def _starts_with_title(content: str, title: str) -> bool:
    """Whether the page text opens with its title as a heading (``# Title``)."""
    first = content.lstrip().split("\n", 1)[0]
    return first.lstrip("#").strip() == title.strip() and first.startswith("#")


def _page_result(
    page: DocsPage, *, offset: int = 0, cite_prefix: str = ""
) -> tuple[str, dict[str, Any]]:
    total = len(page.content)
    if offset and offset >= total:
        msg = f"offset {offset} is past the end of {page.path!r}, which has {total:,} characters."
        raise ToolException(msg)
    end = min(total, offset + MAX_PAGE_CHARS)
    truncated = end < total
    content = page.content[offset:end]
    header = f"path: {cite_prefix}{page.path}\n"
    if offset or not _starts_with_title(content, page.title):
        header = f"# {page.title}\n{header}"  # else the page's own first line says it
    if page.description:
        header += f"description: {page.description}\n"
    if offset:
        header += f"characters {offset + 1:,}-{end:,} of {total:,}\n"
    text = f"{header}\n{content}"
    if truncated:
        text += (
            f"\n\n[Page cut at {end:,} of {total:,} characters. Call docs_get_page with "
            f"offset={end} to read on, or use docs_search to find the section you need.]"
        )
    page_data = {
        "path": page.path,
        "title": page.title,
        "description": page.description,
        "content": content,
        "offset": offset,
        "truncated": truncated,
        "total_chars": total,
    }
    return text, {"success": True, "page": page_data}


class DocsRefreshIndexTool(_DocsTool):
    """Rebuild the docs index from disk."""

    name: str = "docs_refresh_index"
    description: str = (
        "Rebuild the documentation search index from the files on disk. Call it only after "
        "pages were added, edited or removed; searches already see the last build."
    )
    args_schema: type[BaseModel] = DocsRefreshIndexInput
    output_model: ClassVar[type[BaseModel] | None] = DocsRefreshIndexOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Rebuild the docs index", writes=False, idempotent=True, destructive=False
    )

    def _run(self) -> tuple[str, dict[str, Any]]:
        with as_tool_errors():
            stats = self.index.refresh()
        text = (
            f"Rebuilt the index of {_where(self.index)}: {stats.pages} pages, "
            f"{stats.sections} sections in {stats.seconds:.2f} s; {self.index.status()}."
        )
        return text, {
            "pages": stats.pages,
            "sections": stats.sections,
            "seconds": stats.seconds,
            "build": stats.build,
        }


def docs_disabled() -> bool:
    """True when ``WORKSPACE_TOOLS_DISABLE_DOCS`` is set to ``1`` (``true``, ``yes``)."""
    return os.environ.get(DISABLE_DOCS_ENV, "").strip().lower() in {"1", "true", "yes"}


def make_docs_tools(
    root: str | os.PathLike[str],
    *,
    scope: str | None = None,
    prefix: str | None = None,
    enabled: bool = True,
    weights: FieldWeights | None = None,
    tokenizer: Tokenizer | None = None,
    expansion: ExpansionConfig | None = None,
    index: DocsIndex | None = None,
    embedder: Any = None,
    vector_cache: bool = False,
    embed_in_background: bool = False,
    cite_from: str | os.PathLike[str] | None = None,
) -> list[BaseTool]:
    """The four docs tools over one index, built now (eagerly).

    Args:
        root: The docs root folder.
        scope: A subfolder of ``root`` whose pages only are seen; names end in ``_<scope>``.
        prefix: Put before every tool name (``"mastra"`` gives ``mastra_docs_search``).
        enabled: ``False`` (or ``WORKSPACE_TOOLS_DISABLE_DOCS=1``) returns no tools.
        weights: Field weights of the ranking.
        tokenizer: Tokenizer for pages and queries.
        expansion: Prefix and typo settings.
        index: An index to share instead of building one (the settings above then unused).
        embedder: Rank hybrid with it (e.g. ``ws.embedder``); ``None``: keywords only.
        vector_cache: Also keep the section vectors in the user cache folder.
        embed_in_background: Answer by keywords until the vectors are ready.
        cite_from: A folder holding the docs root: printed paths are relative to it.

    Returns:
        ``[docs_search, docs_list, docs_get_page, docs_refresh_index]``, or ``[]`` when disabled.

    Raises:
        InvalidInputError: ``root`` or ``scope`` is not a folder, or the names are invalid.
    """
    if not enabled or docs_disabled():
        return []
    shared = index or DocsIndex(
        root,
        scope=scope,
        weights=weights,
        tokenizer=tokenizer,
        expansion=expansion,
        embedder=embedder,
        vector_cache=vector_cache,
        embed_in_background=embed_in_background,
    )
    suffix = ""
    if shared.scope:
        suffix = "_" + re.sub(r"[^a-zA-Z0-9_-]+", "_", shared.scope).strip("_")
    prefix_path = _cite_prefix(shared.root, cite_from)
    tools: list[BaseTool] = []
    classes: Sequence[type[_DocsTool]] = (
        DocsSearchTool,
        DocsListTool,
        DocsGetPageTool,
        DocsRefreshIndexTool,
    )
    for cls in classes:
        base = str(cls.model_fields["name"].default)
        name = f"{prefix}_{base}{suffix}" if prefix else f"{base}{suffix}"
        if not _TOOL_NAME.match(name):
            msg = (
                f"Tool name {name!r} is invalid: names are 1-64 letters, digits, '_' or '-'. "
                "Choose a shorter prefix or scope."
            )
            raise InvalidInputError(msg)
        description = str(cls.model_fields["description"].default)
        if shared.scope:
            description += f" Covers only the pages under '{shared.scope}/'."
        if cls is DocsSearchTool and shared.mode == "hybrid":
            description += " Ranking fuses keywords with meaning (vectors), so paraphrases match."
        tools.append(cls(index=shared, name=name, description=description, cite_prefix=prefix_path))
    return tools


def _cite_prefix(docs_root: Path, cite_from: str | os.PathLike[str] | None) -> str:
    """``"docs/"`` for a docs root ``<cite_from>/docs``; ``""`` when unset or not inside."""
    if cite_from is None:
        return ""
    try:
        rel = docs_root.resolve().relative_to(Path(cite_from).resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else f"{rel}/"
