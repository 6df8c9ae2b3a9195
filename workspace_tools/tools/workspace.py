"""``workspace_search`` and ``workspace_index``: ranked search over, and indexing into, a Workspace.

Only the workspace's modes are offered; another falls back (hybrid -> vector -> bm25) with a note.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, ClassVar, Final, Literal

from langchain_core.tools import ToolException
from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    WithJsonSchema,
    create_model,
    model_validator,
)

from workspace_tools.core.errors import InvalidInputError, ReadOnlyWorkspaceError
from workspace_tools.core.ranking.multi import MAX_QUERIES
from workspace_tools.core.text.scan import is_glob
from workspace_tools.core.text.within import and_filters, within_filter
from workspace_tools.core.types import SearchResult
from workspace_tools.core.workspace import MAX_QUERY_CHARS
from workspace_tools.tools.base import (
    ThreadedTool,
    ToolFacts,
    as_tool_errors,
    sync_with_progress,
)
from workspace_tools.tools.outputs import WorkspaceIndexOutput, WorkspaceSearchOutput

__all__ = [
    "MAX_SEARCH_OUTPUT_CHARS",
    "WorkspaceIndexInput",
    "WorkspaceIndexTool",
    "WorkspaceSearchTool",
    "search_input_model",
]

MAX_SEARCH_OUTPUT_CHARS: Final = 6000
"""Characters of ``workspace_search`` text output; later hits are left out with a note."""
_QueryText = Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
_FALLBACK: Final[dict[str, tuple[str, ...]]] = {
    "hybrid": ("vector", "bm25"),
    "vector": ("bm25",),
    "bm25": ("hybrid", "vector"),
}
MODE_ALIASES: Final[dict[str, str]] = {"keyword": "bm25", "semantic": "vector"}
"""Other spellings of a mode, taken as its canonical name (the Workspace core's)."""


@functools.lru_cache(maxsize=16)
def search_input_model(modes: tuple[str, ...], default: str) -> type[BaseModel]:
    """Arguments of ``workspace_search`` offering ``modes`` (validation accepts every mode)."""
    shown = {"enum": list(modes), "type": "string"}

    def known(value: Any) -> Any:
        if isinstance(value, str):
            value = MODE_ALIASES.get(value, value)
            if value not in _FALLBACK:
                aliases = ", ".join(f"{a!r} for {c!r}" for a, c in MODE_ALIASES.items())
                msg = (
                    f"Unsupported search mode {value!r}; use one of: {', '.join(modes)} "
                    f"(aliases: {aliases})"
                )
                raise ValueError(msg)
        return value

    mode_type = Annotated[
        Literal["bm25", "vector", "hybrid"], BeforeValidator(known), WithJsonSchema(shown)
    ]
    return create_model(
        "WorkspaceSearchInput",
        __doc__="Arguments of ``workspace_search``.",
        query=(
            _QueryText | Annotated[list[_QueryText], Field(min_length=1, max_length=MAX_QUERIES)],
            Field(
                description="What to look for: words, a question or code identifiers. Or a "
                f"list of up to {MAX_QUERIES} formulations of the same need (paraphrases, "
                "synonyms, the key terms): each is searched and the rankings fused; each hit "
                "says which formulations found it.",
            ),
        ),
        top_k=(int, Field(default=5, ge=1, le=50, description="Most results to return (1-50).")),
        mode=(
            mode_type,
            Field(
                default=default,
                description="bm25 (alias 'keyword') = keywords and exact identifiers; vector "
                "(alias 'semantic') = meaning; hybrid = both fused. Only the modes this "
                "workspace has are offered.",
            ),
        ),
        min_score=(
            float | None,
            Field(
                default=None, description="Drop hits scoring below this (scale depends on mode)."
            ),
        ),
        filter=(
            dict[str, Any] | None,
            Field(
                default=None,
                description="Only chunks whose metadata match, e.g. {'format': 'markdown'}, "
                "{'source_id': {'$in': ['a.md', 'b.md']}}, {'year': {'$gte': 2020}}, "
                "{'symbol': 'Class.method'} (source code cut at definitions). "
                "Operators: $eq $ne $in $nin $gt $gte $lt $lte $exists, $and/$or.",
            ),
        ),
        vector_weight=(
            float | None,
            Field(
                default=None,
                ge=0.0,
                le=1.0,
                description="Hybrid only: share of the vector score, 0-1 (higher = more meaning, "
                "lower = more exact words). Default: the workspace's.",
            ),
        ),
    )


class WorkspaceSearchTool(ThreadedTool):
    """Ranked passages of the workspace for a query (BM25, vector or hybrid)."""

    name: str = "workspace_search"
    description: str = (
        "Search the indexed workspace files and notes. Returns the best passages, best first, "
        "each as path:start-end (line range), section heading, score and a short snippet with "
        "hits marked <<like this>>; never whole files. Use search_documents with mode='grep' to "
        "find every literal occurrence of a string."
    )
    args_schema: Any = None
    output_model: ClassVar[type[BaseModel] | None] = WorkspaceSearchOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Search the workspace", writes=False, idempotent=True, destructive=False
    )

    @model_validator(mode="after")
    def _schema_for_workspace(self) -> WorkspaceSearchTool:
        if self.args_schema is None:
            ws = self.workspace
            self.args_schema = search_input_model(tuple(ws.modes), ws.default_mode)
        return self

    def _run(
        self,
        query: str | list[str],
        top_k: int = 5,
        mode: str | None = None,
        min_score: float | None = None,
        filter: dict[str, Any] | None = None,  # noqa: A002 - the schema's name
        vector_weight: float | None = None,
    ) -> tuple[str, list[dict[str, Any]]]:
        ws = self.workspace
        chosen, note = _choose_mode(mode, ws.modes, ws.default_mode)
        with as_tool_errors():
            if len(ws) == 0:
                how = (
                    # a read-only server offers no workspace_index: say what the user can do
                    f"This workspace is read-only: ask the user to index it first "
                    f"(`workspace-tools --root {ws.root} index`)"
                    if ws.read_only
                    else "Index files with workspace_index (or Workspace.sync())"
                )
                msg = (
                    f"The workspace index is empty: nothing has been indexed yet. {how}, or use "
                    "search_documents with mode='grep' to search the files directly."
                )
                raise InvalidInputError(msg)
            if self.within is not None:  # a pre-filter: top_k hits inside still come back
                sources = {p for p in self.within if ws.source(p) is not None}
                confine = within_filter(self.within, sources=sources)
                filter = and_filters(filter, confine)  # noqa: A001
            results = ws.search(
                query,
                top_k=top_k,
                mode=chosen,
                min_score=min_score,
                filter=filter,
                vector_weight=vector_weight,
            )
        artifact = [r.to_dict() for r in results]
        notes = [note] if note else []
        if not isinstance(query, str) and len(query) > 1:
            listed = "; ".join(f"q{i} {q!r}" for i, q in enumerate(query, start=1))
            notes.append(f"Searched {len(query)} formulations, rankings fused (RRF): {listed}")
        if not results:
            floor = f" scoring at least {min_score}" if min_score is not None else ""
            text = f"No results for {query!r}{floor} ({chosen} search). Try other words"
            text += " or mode='bm25' for exact identifiers." if chosen != "bm25" else "."
            return "\n".join([*notes, text]), artifact
        labels = {q: f"q{i}" for i, q in reversed(list(enumerate(query, start=1)))}
        return _render(
            results, chosen, notes, labels if not isinstance(query, str) else {}
        ), artifact


def _choose_mode(mode: str | None, modes: tuple[str, ...], default: str) -> tuple[str, str]:
    if mode is None:
        return default, ""
    if mode in modes:
        return mode, ""
    fallback = next((m for m in _FALLBACK.get(mode, ()) if m in modes), default)
    note = (
        f"Note: {mode} search is not available in this workspace (modes: {', '.join(modes)}); "
        f"used {fallback} instead."
    )
    return fallback, note


def _render(
    results: list[SearchResult], mode: str, notes: list[str], labels: dict[str, str]
) -> str:
    blocks: list[str] = []
    size = sum(len(n) + 1 for n in notes)
    shown = 0
    for rank, result in enumerate(results, start=1):
        lines = result.line_range
        where = f"{result.source_id}:{lines}" if lines else result.source_id
        where += _unit(result.metadata)
        heading = f" › {result.section_heading}" if result.section_heading else ""
        body = "\n".join(f"   {line}" for line in result.snippet.split("\n") if line.strip())
        found = ""
        if result.found_by and labels:
            found = "; found by " + ", ".join(labels.get(q, repr(q)) for q in result.found_by)
        block = f"{rank}. {where}{heading} (score {result.score:.3f}{found})\n{body}"
        if blocks and size + len(block) > MAX_SEARCH_OUTPUT_CHARS:
            break
        blocks.append(block)
        size += len(block) + 2
        shown += 1
    footer = f"---\n{len(results)} result(s) ({mode} search)"
    if shown < len(results):
        footer += (
            f"; {len(results) - shown} left out to keep the output under "
            f"{MAX_SEARCH_OUTPUT_CHARS:,} characters (all are in the artifact). Lower top_k "
            "or refine the query."
        )
    return "\n".join([*notes, "\n\n".join(blocks), footer])


def _unit(metadata: dict[str, Any]) -> str:
    """`` (page 2)``, `` (slide 3)``, `` (sheet Totals)`` or `` (symbol A.f)`` (source code)."""
    for key in ("page", "slide", "sheet", "symbol"):
        value = metadata.get(key)
        if value is not None:
            return f" ({key} {', '.join(map(str, value)) if isinstance(value, list) else value})"
    return ""


class WorkspaceIndexInput(BaseModel):
    """Arguments of ``workspace_index``."""

    path: str = Field(
        min_length=1,
        max_length=1000,
        description="Path relative to the workspace root; it becomes the id in search results. "
        "Without content, the file (or every file of a folder or glob) is read from disk.",
    )
    content: str | None = Field(
        default=None,
        description="Text to index under path. Omit it to index the file on disk instead.",
    )
    metadata: dict[str, Any] | None = Field(
        default=None, description="Extra key/value pairs stored with the indexed chunks."
    )


class WorkspaceIndexTool(ThreadedTool):
    """Add or refresh content in the workspace index."""

    name: str = "workspace_index"
    description: str = (
        "Index content for workspace_search. Give a path and either the text (content) or "
        "nothing, to read the file, folder or glob from disk (PDF, DOCX... are converted). "
        "Re-indexing a path replaces its previous content. Returns what was indexed."
    )
    args_schema: Any = WorkspaceIndexInput
    output_model: ClassVar[type[BaseModel] | None] = WorkspaceIndexOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Index workspace content", writes=True, idempotent=True, destructive=False
    )
    require_approval: bool = False
    """Ask a person before this tool runs (see ``WorkspaceToolkit.interrupt_on()``)."""

    def _run(
        self, path: str, content: str | None = None, metadata: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        ws = self.workspace
        with as_tool_errors():
            if ws.read_only:
                msg = (
                    f"The workspace at {str(ws.root)!r} is read-only: workspace_index cannot "
                    "change its index. Search what is indexed with workspace_search instead."
                )
                raise ReadOnlyWorkspaceError(msg)
            if content is not None or metadata:
                if content is None:
                    content = ws.read_text(path)
                chunk_ids = ws.index(path, content, metadata=metadata)
                record = ws.source(path)
                stored = record.id if record is not None else path
                text = f"Indexed {stored} ({len(chunk_ids)} chunk(s), {len(content):,} characters)."
                if stored != path:
                    text += f" Its id is {stored!r} (filter and remove by either form)."
                return text, {"path": stored, "chunk_ids": chunk_ids, "chunks": len(chunk_ids)}
            if not is_glob(path):
                resolved = ws.mounts.resolve(path)
                if not resolved.exists():
                    msg = (
                        f"No file or folder {path!r} in the workspace. Give a path relative to "
                        "the workspace root, or pass content to index text under that id."
                    )
                    raise InvalidInputError(msg)
            report = sync_with_progress(ws, [path])
        if not report.changed and report.skipped and not report.unchanged:
            reasons = "; ".join(f"{s.path}: {s.reason}" for s in report.skipped[:5])
            msg = f"Nothing indexed from {path!r}: {reasons}."
            raise ToolException(msg)
        artifact = {
            "path": path,
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": report.unchanged,
            "chunks": report.chunks_indexed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in report.skipped],
        }
        return f"Indexed {path}: {report.summary()}.", artifact
