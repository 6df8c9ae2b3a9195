"""The Milvus collection of a workspace: connection, schema, BM25 function and indexes."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from workspace_tools.core.index.sparse import BM25Config

__all__ = ["SCHEMA_VERSION", "connect", "create_collection"]

SCHEMA_VERSION: Final = 1
"""Bumped when the collection layout changes (an older collection is then rebuilt)."""
_SERVER_SCHEMES: Final = ("http://", "https://", "tcp://", "grpc://", "unix:")


def connect(uri: str, token: str | None) -> Any:
    """A ``MilvusClient`` for a server URI or a Milvus Lite file (its folder is created)."""
    from pymilvus import MilvusClient

    if not uri.startswith(_SERVER_SCHEMES):
        Path(uri).expanduser().parent.mkdir(parents=True, exist_ok=True)
    if token:
        return MilvusClient(uri=uri, token=token)
    return MilvusClient(uri=uri)


def create_collection(
    client: Any,
    name: str,
    *,
    analyzer: str,
    bm25_config: BM25Config | None,
    dimension: int | None,
) -> None:
    """Create the collection: key, source_id, metadata, and the BM25 and dense sides in use."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("key", DataType.INT64, is_primary=True)
    schema.add_field("source_id", DataType.VARCHAR, max_length=65_535)
    schema.add_field("metadata", DataType.JSON)
    index = client.prepare_index_params()
    if bm25_config is not None:
        kind = "standard" if analyzer == "workspace" else analyzer
        schema.add_field(
            "text",
            DataType.VARCHAR,
            max_length=65_535,
            enable_analyzer=True,
            analyzer_params={"type": kind},
        )
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="bm25",
                function_type=FunctionType.BM25,
                input_field_names=["text"],
                output_field_names=["sparse"],
            )
        )
        index.add_index(
            field_name="sparse",
            index_type="SPARSE_INVERTED_INDEX",
            metric_type="BM25",
            params={"bm25_k1": bm25_config.k1, "bm25_b": bm25_config.b},
        )
    if dimension is not None:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dimension)
        index.add_index(field_name="dense", index_type="AUTOINDEX", metric_type="COSINE")
    client.create_collection(name, schema=schema, index_params=index)
