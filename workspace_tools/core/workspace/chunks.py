"""A converted source as chunks: the one rule a local sync and distributed indexing share.

Package-internal but public: :mod:`workspace_tools.core.distributed` chunks on the cluster with
the same function a local sync uses, so both give the same chunks.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from workspace_tools.core.convert import UNIT_FORMATS, Converted
from workspace_tools.core.ranking.content_kinds import KIND_KEY, content_kind
from workspace_tools.core.text.chunking import ChunkingConfig, chunk_text
from workspace_tools.core.text.code_chunks import code_chunks
from workspace_tools.core.types import Chunk

__all__ = ["chunk_converted"]


def chunk_converted(
    source_id: str,
    converted: Converted,
    metadata: dict[str, Any],
    *,
    config: ChunkingConfig,
) -> list[Chunk]:
    """Chunks of a converted source; PDF pages, slides and sheets go into chunk metadata.

    Source files are cut at their definitions when ``config.code`` is on (``symbol`` and
    ``symbol_kind`` metadata, ``core/text/code_chunks.py``), else (or when that fails) by lines.

    Each chunk's metadata also holds the source's content kind (``content_kind``: prose, code,
    navigation, lockfile, minified...: ``core/ranking/content_kinds.py``).
    """
    kind = content_kind(source_id, converted.text, fmt=converted.format)
    meta = {KIND_KEY: kind, **converted.metadata, **metadata, "format": converted.format}
    meta.pop("headings", None)
    chunks = None
    if config.code and converted.format == "code" and kind != "minified":
        chunks = code_chunks(converted.text, source_id=source_id, config=config, metadata=meta)
    if chunks is None:
        chunks = chunk_text(
            converted.text,
            source_id=source_id,
            config=config,
            markdown=converted.markdown,
            metadata=meta,
        )
    if converted.format in UNIT_FORMATS:
        from workspace_tools.core.convert import locate_unit

        chunks = [
            dataclasses.replace(
                c, metadata={**c.metadata, **locate_unit(converted.text, c.start_line)}
            )
            for c in chunks
        ]
    return chunks
