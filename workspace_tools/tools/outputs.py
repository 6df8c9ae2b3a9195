"""The declared shape of every tool's artifact, one pydantic model per tool.

Schemas are top-level objects (a list artifact under ``results``), items accept extra keys, and
``model_json_schema()`` is compacted (:func:`~workspace_tools.tools.output_schema.compact_schema`).
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import DEFAULT_REF_TEMPLATE, GenerateJsonSchema, JsonSchemaMode

from workspace_tools.tools.output_schema import compact_schema

__all__ = [
    "RESULTS_KEY",
    "DocsGetPageOutput",
    "DocsListOutput",
    "DocsRefreshIndexOutput",
    "DocsSearchOutput",
    "SearchDocumentsOutput",
    "SkillOutput",
    "SkillReadOutput",
    "SkillSearchOutput",
    "WorkspaceIndexOutput",
    "WorkspaceReadOutput",
    "WorkspaceSearchOutput",
]

RESULTS_KEY: Final = "results"
"""Key under which a list artifact is given as an object."""


class _Output(BaseModel):
    """Base of the declared shapes: its JSON schema is compact."""

    @classmethod
    def model_json_schema(
        cls,
        by_alias: bool | None = None,  # noqa: FBT001 - pydantic's signature
        ref_template: str = DEFAULT_REF_TEMPLATE,
        schema_generator: type[GenerateJsonSchema] = GenerateJsonSchema,
        mode: JsonSchemaMode = "validation",
        *,
        union_format: Literal["any_of", "primitive_type_array"] = "any_of",
    ) -> dict[str, Any]:
        """Pydantic's JSON schema of the model, compacted (same valid instances)."""
        schema = super().model_json_schema(
            by_alias=by_alias,
            ref_template=ref_template,
            schema_generator=schema_generator,
            mode=mode,
            union_format=union_format,
        )
        return compact_schema(schema)


class _Item(_Output):
    model_config = ConfigDict(extra="allow")


class SearchHit(_Item):
    """One ranked passage of ``workspace_search``."""

    id: str = Field(description="Chunk id.")
    source_id: str = Field(description="Path (or id) of the indexed source.")
    score: float = Field(description="Score; its scale depends on the mode.")
    line_range: list[int] | None = Field(description="[first, last] line, 1-based, or null.")
    snippet: str = Field(description="Best lines, hits marked <<like this>>.")
    headings: list[str] = Field(description="Section headings above the passage.")
    metadata: dict[str, Any] = Field(description="Metadata stored with the source.")
    score_details: dict[str, Any] = Field(description="Per-mode scores of a fused hit.")
    found_by: list[str] = Field(
        default_factory=list,
        description="Several formulations searched: those that found this hit.",
    )


class WorkspaceSearchOutput(_Output):
    """Result of ``workspace_search``."""

    results: list[SearchHit] = Field(description="Hits, best first.")


class WorkspaceReadOutput(_Item):
    """Result of ``workspace_read``: lines of a source's (converted) text."""

    source_id: str = Field(description="The file (or indexed id) read.")
    start_line: int = Field(description="First line returned (1-based).")
    end_line: int = Field(description="Last line returned (inclusive).")
    total_lines: int = Field(description="Lines in the whole text.")
    more_lines: int = Field(description="Lines after end_line.")
    truncated: bool = Field(description="The character limit cut the requested range.")
    format: str = Field(description="markdown, text, code, pdf, docx...")
    chunk_id: str | None = Field(default=None, description="The chunk read, if one was given.")
    text: str = Field(description="The lines, without numbers.")


class SkippedFile(_Item):
    """A file ``workspace_index`` did not index."""

    path: str
    reason: str


class WorkspaceIndexOutput(_Item):
    """Result of ``workspace_index``: chunk ids for given text, sync counts for files."""

    path: str = Field(description="The path that was indexed.")
    chunks: int = Field(description="Chunks indexed.")
    chunk_ids: list[str] | None = Field(default=None, description="Ids (text given as content).")
    added: list[str] | None = Field(default=None, description="Files indexed for the first time.")
    updated: list[str] | None = Field(default=None, description="Changed files re-indexed.")
    removed: list[str] | None = Field(default=None, description="Files gone from disk.")
    unchanged: int | None = Field(default=None, description="Files already up to date.")
    skipped: list[SkippedFile] | None = Field(default=None, description="Files left out.")


class DocumentHit(_Item):
    """One ``search_documents`` result (all2md's fields first)."""

    snippet: str
    score: float
    document_path: str
    section_heading: str | None
    chunk_id: str
    line: int | None = None


class SearchDocumentsOutput(_Output):
    """Result of ``search_documents`` (all2md's ``results``, ``mode``, ``total`` and more)."""

    results: list[DocumentHit]
    mode: str
    total: int
    truncated: bool
    notes: list[str]


class DocsHitItem(_Item):
    """One ranked docs section."""

    path: str
    title: str
    heading: str
    snippet: str
    score: float
    line: int


class DocsSearchOutput(_Output):
    """Result of ``docs_search``."""

    results: list[DocsHitItem] = Field(description="Sections, best first.")


class DocsPageItem(_Item):
    """One page in ``docs_list``."""

    path: str
    title: str
    description: str | None = None


class DocsListOutput(_Output):
    """Result of ``docs_list``."""

    results: list[DocsPageItem] = Field(description="Every page, sorted by path.")


class DocsPageContent(_Item):
    """The page ``docs_get_page`` read."""

    path: str
    title: str
    description: str | None = None
    content: str


class DocsGetPageOutput(_Item):
    """Result of ``docs_get_page``: ``success`` and the ``page`` (a failure is a tool error)."""

    success: bool
    page: DocsPageContent | None = None
    error: str | None = None


class DocsRefreshIndexOutput(_Item):
    """Result of ``docs_refresh_index``."""

    pages: int
    sections: int
    seconds: float


class SkillOutput(_Item):
    """Result of ``skill``."""

    name: str
    description: str
    location: str
    resources: list[str]


class SkillReadOutput(_Item):
    """Result of ``skill_read``."""

    skill: str
    path: str
    total_lines: int
    binary: bool
    truncated: bool


class SkillSearchHit(_Item):
    """One ``skill_search`` hit."""

    skill_name: str
    source: str
    score: float
    snippet: str


class SkillSearchOutput(_Output):
    """Result of ``skill_search``."""

    results: list[SkillSearchHit] = Field(description="Hits, best first.")
