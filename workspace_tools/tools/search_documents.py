"""``search_documents``: keyword BM25 passages or grep lines over a Workspace."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, BeforeValidator, Field, model_validator

from workspace_tools.core.convert import CachedConverter
from workspace_tools.core.errors import InvalidInputError
from workspace_tools.core.grep import collect_files, grep, looks_like_regex
from workspace_tools.core.grep_counts import grep_counts
from workspace_tools.core.text.within import within_filter
from workspace_tools.core.types import SearchResult
from workspace_tools.tools.base import (
    ThreadedTool,
    ToolFacts,
    as_tool_errors,
    sync_with_progress,
)
from workspace_tools.tools.outputs import SearchDocumentsOutput

__all__ = ["MAX_DOCUMENTS_OUTPUT_CHARS", "SearchDocumentsInput", "SearchDocumentsTool"]

MAX_DOCUMENTS_OUTPUT_CHARS: Final = 6000
"""Characters of ``search_documents`` text output; later results are left out with a note."""
_SCOPE_BATCH: Final = 1_000
"""Source ids per ``$in`` pre-filter (the most the Milvus backend takes in one list)."""


MODE_ALIASES: Final[dict[str, str]] = {"keyword": "bm25"}
"""Other spellings of a mode, taken as its canonical name (the Workspace core's)."""


def _known_mode(value: Any) -> Any:
    if isinstance(value, str):
        value = MODE_ALIASES.get(value, value)
        if value not in {"bm25", "grep"}:
            msg = (
                f"Unsupported search mode {value!r}: search_documents supports 'bm25' (alias "
                "'keyword') and 'grep'. Use workspace_search for vector or hybrid search"
            )
            raise ValueError(msg)
    return value


class SearchDocumentsInput(BaseModel):
    """Arguments of ``search_documents``."""

    query: str = Field(
        min_length=1,
        max_length=1000,
        description="Natural language or keywords for bm25 mode; a literal string (or a "
        "regex with regex=true) for grep mode.",
    )
    mode: Annotated[Literal["bm25", "grep"], BeforeValidator(_known_mode)] = Field(
        default="bm25",
        description="'bm25' (alias 'keyword'): BM25-ranked passages (most relevant first). "
        "'grep': every line containing the query, in file order.",
    )
    paths: list[str] | None = Field(
        default=None,
        max_length=50,
        description="Files, folders or globs (e.g. 'docs/**/*.pdf') relative to the workspace "
        "root, all inside it. Default: the whole workspace.",
    )
    recursive: bool = Field(default=True, description="Walk into subfolders of given folders.")
    top_k: int = Field(default=10, ge=1, le=100, description="Most results to return (1-100).")
    regex: bool = Field(
        default=False, description="grep only: treat the query as a regular expression."
    )
    ignore_case: bool = Field(default=False, description="grep only: case-insensitive matching.")
    context_lines: int = Field(
        default=0, ge=0, le=5, description="grep only: lines of context around each match (0-5)."
    )
    output_mode: Literal["content", "files_with_matches", "count"] = Field(
        default="content",
        description="grep only: 'content' = the matching lines; 'files_with_matches' = only "
        "the paths of files with a match; 'count' = each such file with its number of "
        "matching lines. top_k caps the lines (content) or the files (other modes).",
    )


class SearchDocumentsTool(ThreadedTool):
    """Keyword passages or grep lines across the workspace documents (PDF, DOCX, Markdown...)."""

    name: str = "search_documents"
    description: str = (
        "Find passages across many documents without reading whole files. mode='bm25' "
        "(default) returns the most relevant passages ranked by BM25; mode='grep' returns every "
        "line containing the query (literal, or regex=true), with line numbers. Works on PDF, "
        "DOCX, HTML, Markdown and code (converted to text first). Each result has the document "
        "path, line, section heading and a snippet with hits marked <<like this>>."
    )
    args_schema: Any = SearchDocumentsInput
    output_model: ClassVar[type[BaseModel] | None] = SearchDocumentsOutput
    facts: ClassVar[ToolFacts] = ToolFacts(
        title="Search documents", writes=False, syncs=True, idempotent=True, destructive=False
    )
    auto_sync: bool = False
    """Keyword mode: index the new or changed files in ``paths`` before searching."""
    read_only: bool = False
    """Never write: no sync even with ``auto_sync`` (set by a read-only toolkit)."""
    converter: CachedConverter = Field(default_factory=CachedConverter)
    """Grep mode: file-to-text conversion, cached in memory and read from the disk cache."""

    @model_validator(mode="after")
    def _read_sync_conversions(self) -> SearchDocumentsTool:
        if self.converter.disk is None:
            self.converter.disk = self.workspace.conversion_cache
        return self

    def _run(
        self,
        query: str,
        mode: str = "bm25",
        paths: list[str] | None = None,
        recursive: bool = True,  # noqa: FBT001, FBT002 - tool arguments come by name
        top_k: int = 10,
        regex: bool = False,  # noqa: FBT001, FBT002
        ignore_case: bool = False,  # noqa: FBT001, FBT002
        context_lines: int = 0,
        output_mode: str = "content",
    ) -> tuple[str, dict[str, Any]]:
        with as_tool_errors():
            if output_mode != "content":
                if mode != "grep":
                    msg = (
                        f"output_mode={output_mode!r} lists files with grep matches: pass "
                        "mode='grep' (bm25 mode ranks passages; its output_mode is 'content')."
                    )
                    raise InvalidInputError(msg)
                return self._grep_files(
                    query,
                    paths=paths,
                    recursive=recursive,
                    top_k=top_k,
                    regex=regex,
                    ignore_case=ignore_case,
                    counts=output_mode == "count",
                )
            if mode == "grep":
                items, notes, truncated = self._grep(
                    query,
                    paths=paths,
                    recursive=recursive,
                    top_k=top_k,
                    regex=regex,
                    ignore_case=ignore_case,
                    context_lines=context_lines,
                )
            else:
                items, notes, truncated = self._keyword(
                    query, paths=paths, recursive=recursive, top_k=top_k
                )
        artifact = {
            "results": items,
            "mode": mode,
            "total": len(items),
            "truncated": truncated,
            "notes": notes,
        }
        return _render(query, items, mode, notes), artifact

    def _keyword(
        self, query: str, *, paths: list[str] | None, recursive: bool, top_k: int
    ) -> tuple[list[dict[str, Any]], list[str], bool]:
        ws = self.workspace
        files, _ = collect_files(
            ws.root,
            paths,
            config=ws.scan_config,
            recursive=recursive,
            within=self.within,
            mounts=ws.mounts,
        )
        notes: list[str] = []
        if self.auto_sync and not (self.read_only or ws.read_only):
            sync_with_progress(ws, list(files))
        missing = set(files) - set(ws.source_ids())
        if missing:
            how = (  # a read-only server offers no workspace_index
                ". The workspace is read-only here: ask the user to index them "
                f"(`workspace-tools --root {ws.root} index`)."
                if self.read_only or ws.read_only
                else ", or index them with workspace_index."
            )
            notes.append(
                f"{len(missing)} file(s) in scope are not indexed (new since the last indexing, "
                f"or not convertible); search them with mode='grep'{how}"
            )
        scope = None if paths is None and recursive else sorted(files)
        # the folders this call may see (MCP roots): a pre-filter, so top_k hits come back
        confine = None
        if self.within is not None:
            sources = {p for p in self.within if ws.source(p) is not None}
            confine = within_filter(self.within, sources=sources)
        if scope is None:
            hits = ws.search(query, top_k=top_k, mode="bm25", filter=confine)
        else:  # pre-filtered by source id; BM25 scores do not depend on the filter
            hits = []
            for start in range(0, len(scope), _SCOPE_BATCH):
                part = scope[start : start + _SCOPE_BATCH]
                ids: Any = part[0] if len(part) == 1 else {"$in": part}
                where: dict[str, Any] = {"source_id": ids}
                if confine is not None:
                    where = {"$and": [where, confine]}
                hits += ws.search(query, top_k=top_k, mode="bm25", filter=where)
            hits.sort(key=lambda hit: -hit.score)
        return [_keyword_item(hit) for hit in hits[:top_k]], notes, False

    def _grep(
        self,
        query: str,
        *,
        paths: list[str] | None,
        recursive: bool,
        top_k: int,
        regex: bool,
        ignore_case: bool,
        context_lines: int,
    ) -> tuple[list[dict[str, Any]], list[str], bool]:
        ws = self.workspace
        report = grep(
            ws.root,
            query,
            paths,
            regex_mode=regex,
            ignore_case=ignore_case,
            context_lines=context_lines,
            max_matches=top_k,
            recursive=recursive,
            config=ws.scan_config,
            convert=self.converter,
            within=self.within,
            mounts=ws.mounts,
        )
        items = [
            {
                "snippet": m.text,
                "score": float(m.hits),
                "document_path": m.path,
                "section_heading": m.section_heading,
                "chunk_id": f"{m.path}#L{m.line}",
                "line": m.line,
                "column": m.column,
                "before": [list(pair) for pair in m.before],
                "after": [list(pair) for pair in m.after],
                **m.units,
            }
            for m in report.matches
        ]
        notes: list[str] = []
        if report.truncated:
            notes.append(
                f"Showing the first {len(items)} matching lines; there are more. Narrow the "
                "search: give paths, a more specific query, or a larger top_k (max 100)."
            )
        if report.timed_out:
            notes.append(
                f"Matching stopped early in {', '.join(report.timed_out[:5])}: the pattern is too "
                "slow on this text. Simplify the regular expression."
            )
        if report.long_lines:
            notes.append(
                f"{report.long_lines} very long line(s) were searched only in their first "
                "10,000 characters."
            )
        if not items and not regex and looks_like_regex(query):
            notes.append("The query was matched literally; pass regex=true to use it as a regex.")
        return items, notes, report.truncated

    def _grep_files(
        self,
        query: str,
        *,
        paths: list[str] | None,
        recursive: bool,
        top_k: int,
        regex: bool,
        ignore_case: bool,
        counts: bool,
    ) -> tuple[str, dict[str, Any]]:
        ws = self.workspace
        report = grep_counts(
            ws.root,
            query,
            paths,
            regex_mode=regex,
            ignore_case=ignore_case,
            max_files=top_k,
            recursive=recursive,
            config=ws.scan_config,
            convert=self.converter,
            within=self.within,
            mounts=ws.mounts,
        )
        output_mode = "count" if counts else "files_with_matches"
        items = [
            {
                "snippet": f"{count} matching line(s)",
                "score": float(count),
                "document_path": path,
                "section_heading": None,
                "chunk_id": path,
                "count": count,
            }
            for path, count in report.counts
        ]
        notes: list[str] = []
        if report.truncated:
            notes.append(
                f"Showing the first {len(items)} files; more match. Narrow the paths or the "
                "query, or raise top_k (max 100)."
            )
        if report.timed_out:
            notes.append(
                f"Matching stopped early in {', '.join(report.timed_out[:5])} (counts there are "
                "lower bounds): the pattern is too slow on this text."
            )
        if not items and not regex and looks_like_regex(query):
            notes.append("The query was matched literally; pass regex=true to use it as a regex.")
        artifact = {
            "results": items,
            "mode": "grep",
            "output_mode": output_mode,
            "total": len(items),
            "truncated": report.truncated,
            "notes": notes,
            "files_searched": report.files_searched,
        }
        if not items:
            text = f"No file matches {query!r} ({report.files_searched} searched)."
            return "\n".join([text, *notes]), artifact
        rows = [f"{p}:{c}" if counts else p for p, c in report.counts]
        lines = sum(c for _, c in report.counts)
        footer = f"---\n{len(items)} file(s) with matches"
        footer += f", {lines} matching line(s)" if counts else ""
        footer += f" of {report.files_searched} searched (grep, {output_mode})"
        return "\n".join([*rows, footer, *notes]), artifact


def _keyword_item(hit: SearchResult) -> dict[str, Any]:
    lines = hit.line_range
    return {
        "snippet": hit.snippet,
        "score": hit.score,
        "document_path": hit.source_id,
        "section_heading": hit.section_heading,
        "chunk_id": hit.id,
        "line": lines.start if lines else None,
        "line_range": [lines.start, lines.end] if lines else None,
        **{k: hit.metadata[k] for k in ("page", "slide", "sheet") if k in hit.metadata},
    }


def _render(query: str, items: list[dict[str, Any]], mode: str, notes: list[str]) -> str:
    if not items:
        return "\n".join([*notes, f"No {mode} results for {query!r}. Try other words or paths."])
    blocks = _grep_blocks(items) if mode == "grep" else _keyword_blocks(items)
    kept: list[str] = []
    size = sum(len(n) + 1 for n in notes)
    for block in blocks:
        if kept and size + len(block) > MAX_DOCUMENTS_OUTPUT_CHARS:
            notes = [
                *notes,
                f"Output cut at {MAX_DOCUMENTS_OUTPUT_CHARS:,} characters; every result is in the "
                "artifact. Lower top_k or narrow the paths to see the rest.",
            ]
            break
        kept.append(block)
        size += len(block) + 1
    footer = f"---\n{len(items)} result(s) ({mode} search)"
    return "\n".join([*kept, footer, *notes])


def _keyword_blocks(items: list[dict[str, Any]]) -> list[str]:
    blocks = []
    for rank, item in enumerate(items, start=1):
        heading = f" › {item['section_heading']}" if item["section_heading"] else ""
        span = item["line_range"]
        where = f"{item['document_path']}:{span[0]}-{span[1]}" if span else item["document_path"]
        where += "".join(f" ({k} {item[k]})" for k in ("page", "slide", "sheet") if k in item)
        body = "\n".join(f"   {x}" for x in item["snippet"].split("\n") if x.strip())
        blocks.append(f"{rank}. {where}{heading} (score {item['score']:.3f})\n{body}\n")
    return blocks


def _grep_blocks(items: list[dict[str, Any]]) -> list[str]:
    """Groups of ``path:line:col: text`` lines with context as ``path-line- text``."""
    rows: dict[tuple[str, int], str] = {}
    files: dict[str, int] = {}
    for item in items:
        path, line = item["document_path"], item["line"]
        files.setdefault(path, len(files))
        for number, text in [*item["before"], *item["after"]]:
            rows.setdefault((path, number), f"{path}-{number}- {text}")
        heading = f" › {item['section_heading']}" if item["section_heading"] else ""
        unit = "".join(f" ({k} {item[k]})" for k in ("page", "slide", "sheet") if k in item)
        rows[(path, line)] = f"{path}:{line}:{item['column']}{unit}{heading}: {item['snippet']}"
    groups: list[list[str]] = []
    previous: tuple[str, int] | None = None
    for key in sorted(rows, key=lambda k: (files[k[0]], k[1])):
        if previous is None or key[0] != previous[0] or key[1] > previous[1] + 1:
            groups.append([])
        groups[-1].append(rows[key])
        previous = key
    context = any(item["before"] or item["after"] for item in items)
    return [("--\n" if context and i else "") + "\n".join(g) for i, g in enumerate(groups)]
