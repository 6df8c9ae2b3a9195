"""The pydantic model of the ``workspace`` section of ``workspace-tools.yaml`` (strict types).

Imported only when a project file has that section, so opening a workspace without one loads no
pydantic. Defaults here are placeholders: only the keys the file sets are used
(``model_dump(exclude_unset=True)``); the real defaults live in the settings classes.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

__all__ = ["WorkspaceSection"]


def _no_nul(value: str) -> str:
    if "\x00" in value:
        msg = "must not contain a NUL character"
        raise ValueError(msg)
    return value


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def _typed(value: Any) -> Any:
    return {"type": value} if isinstance(value, str) else {} if value is None else value


def _named(value: Any) -> Any:
    return "none" if value is None or value is False else value


Text = Annotated[str, AfterValidator(_no_nul)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _BM25(_Strict):
    k1: float = 0
    b: float = 0
    method: str = ""
    query_tf: str = ""


class _Chunking(_Strict):
    max_chars: int = 0
    overlap_lines: int = 0
    min_section_chars: int = 0
    code: bool = False


class _Scan(_Strict):
    max_depth: int = Field(default=0, ge=0)
    max_file_bytes: int = Field(default=0, ge=0)
    respect_gitignore: bool = True
    include_hidden: bool = False
    excluded_dirs: list[Text] = Field(default_factory=list)
    excluded_files: list[Text] = Field(default_factory=list)
    refuse_hard_links: bool = False


class _Conversion(_Strict):
    seconds: float = 0
    memory_bytes: int = 0
    unpacked_bytes: int = 0
    per_format: dict[str, dict[str, float]] = Field(default_factory=dict)
    isolate: bool = True


class WorkspaceSection(_Strict):
    """The ``workspace:`` mapping, each value of its documented type."""

    index_dir: Text = ""
    embedder: Annotated[Text, BeforeValidator(_named)] = ""
    paths: Annotated[list[Text], BeforeValidator(_listed)] = Field(default_factory=list)
    fusion: str = ""
    vector_weight: float = Field(default=0, ge=0, le=1)
    ranking_prior: bool = True
    bm25: _BM25 = _BM25()
    chunking: _Chunking = _Chunking()
    scan: _Scan = _Scan()
    conversion: _Conversion = _Conversion()
    read_only: bool = False
    backend: Annotated[dict[str, Any], BeforeValidator(_typed)] = Field(default_factory=dict)
    mounts: dict[Text, Text] = Field(default_factory=dict)
