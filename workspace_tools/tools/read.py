"""``workspace_read``: a file's converted text by line range or chunk id, a page at a time."""

from __future__ import annotations

import posixpath
from typing import Any, ClassVar, Final

from langchain_core.tools import ToolException
from pydantic import BaseModel, Field

from workspace_tools.core.text.within import is_within
from workspace_tools.core.workspace import DEFAULT_READ_CHARS, MIN_READ_CHARS
from workspace_tools.tools.base import ThreadedTool, ToolFacts, as_tool_errors
from workspace_tools.tools.outputs import WorkspaceReadOutput

__all__ = ["MAX_TOOL_READ_CHARS", "WorkspaceReadInput", "WorkspaceReadTool"]

MAX_TOOL_READ_CHARS: Final = 20_000
"""Largest page the tool returns in one call."""


class WorkspaceReadInput(BaseModel):
    """Arguments of ``workspace_read``."""

    path: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="File path relative to the workspace root, as search results show it "
        "(PDF, DOCX, HTML... are read as their converted text). Optional with chunk_id.",
    )
    start_line: int | None = Field(
        default=None, ge=1, description="First line to read (1-based; default 1)."
    )
    end_line: int | None = Field(
        default=None, ge=1, description="Last line to read (inclusive; default: the end)."
    )
    chunk_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=1100,
        description="Read the lines of this chunk (the id of a workspace_search result) "
        "instead of a line range.",
    )
    max_chars: int = Field(
        default=DEFAULT_READ_CHARS,
        ge=MIN_READ_CHARS,
        le=MAX_TOOL_READ_CHARS,
        description=f"Most characters to return ({MIN_READ_CHARS}-{MAX_TOOL_READ_CHARS:,}); "
        "whole lines are kept, and the output says how many lines follow.",
    )


class WorkspaceReadTool(ThreadedTool):
    """Lines of a workspace file (converted text), by line range or chunk id."""

    name: str = "workspace_read"
    description: str = (
        "Read a workspace file's text by line range, or the lines of a search hit by its "
        "chunk_id: what workspace_search or search_documents found, with more context. PDF, "
        "DOCX, HTML... are read as converted text with the same line numbers search gives. "
        "Lines are numbered; a long range is cut at max_chars with a note saying how many lines "
        "follow and the start_line to read on from."
    )
    args_schema: Any = WorkspaceReadInput
    output_model: ClassVar[type[BaseModel] | None] = WorkspaceReadOutput
    facts: ClassVar[ToolFacts] = ToolFacts(title="Read a file", writes=False, idempotent=True)

    def _run(
        self,
        path: str | None = None,
        start_line: int | None = None,
        end_line: int | None = None,
        chunk_id: str | None = None,
        max_chars: int = DEFAULT_READ_CHARS,
    ) -> tuple[str, dict[str, Any]]:
        if path is not None and not is_within(posixpath.normpath(path.lstrip("/")), self.within):
            raise ToolException(self._outside(path))
        with as_tool_errors():
            page = self.workspace.read(
                path,
                start_line=start_line,
                end_line=end_line,
                chunk_id=chunk_id,
                max_chars=max_chars,
            )
        if not is_within(page.source_id, self.within):  # a chunk id names its source
            raise ToolException(self._outside(page.source_id))
        units = "".join(
            f"; {key} {page.units[key]}"
            + (f"-{page.units['last_' + key]}" if f"last_{key}" in page.units else "")
            for key in ("page", "slide", "sheet")
            if key in page.units
        )
        header = (
            f"{page.source_id} ({page.format}) lines {page.start_line}-{page.end_line} of "
            f"{page.total_lines:,}{units}"
        )
        width = len(str(page.end_line))
        body = "\n".join(
            f"{number:>{width}}  {line}"
            for number, line in enumerate(page.text.split("\n"), start=page.start_line)
        )
        text = f"{header}\n{body}"
        if page.more_lines:
            text += (
                f"\n[{page.more_lines:,} more lines. Call workspace_read with "
                f"path={page.source_id!r}, start_line={page.end_line + 1} to read on.]"
            )
        elif page.truncated:
            text += f"\n[Line {page.end_line} cut at {max_chars:,} characters.]"
        return text, page.to_dict()

    def _outside(self, path: str) -> str:
        shown = ", ".join(self.within or ()) or "none"
        return (
            f"{path!r} is outside the folders this session serves (relative to the workspace "
            f"root: {shown}). Read a file inside them, as workspace_search shows it."
        )
