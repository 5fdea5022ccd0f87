"""The connection and the four collections of one knowledge base: `chunks` (text, BM25 terms, vector), `docs`
(the document registry: the live generation of each document, its metadata), `changes` (one row per committed
change; their count is the knowledge base's generation) and `meta` (embedder, dimension, pending writes).

Milvus wants a vector field in every collection; the bookkeeping collections carry a 2-d placeholder.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrag.errors import StoreError
from agentrag.settings import StoreSettings
from agentrag.vocab import MilvusIndex

LITE_FILE = "milvus.db"
STRONG = "Strong"  # every read sees every write acknowledged before it
MAX_VARCHAR = 65535
PLACEHOLDER = [0.0, 1.0]


@dataclass(frozen=True, slots=True)
class Names:
    chunks: str
    docs: str
    changes: str
    meta: str


def collection_names(prefix: str, kb: str) -> Names:
    """Collection names for a knowledge base id (letters, digits and `_` only; a hash keeps `a-b` and `a_b`
    apart)."""
    slug = re.sub(r"[^A-Za-z0-9_]", "_", kb)[:48]
    base = f"{prefix}_{slug}_{hashlib.sha1(kb.encode()).hexdigest()[:6]}"
    return Names(f"{base}_chunks", f"{base}_docs", f"{base}_changes", f"{base}_meta")


def lit(value: str | list[str]) -> str:
    """A string (or list of strings) as a literal in a Milvus filter expression (quotes and backslashes escaped;
    expression templates are not served by every engine, Milvus Lite 2.5's delete among them)."""
    if isinstance(value, list):
        return "[" + ",".join(lit(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def resolve_uri(settings: StoreSettings, directory: Path) -> str:
    if settings.uri:
        return settings.uri
    directory.mkdir(parents=True, exist_ok=True)
    return str(directory / LITE_FILE)


def connect(settings: StoreSettings, directory: Path) -> Any:
    """A `MilvusClient` for the settings; an unreachable engine is a `StoreError` naming the URI."""
    try:
        from pymilvus import MilvusClient
    except ImportError as exc:
        raise StoreError("store.backend = 'milvus' needs pymilvus: pip install 'agentrag[milvus]'") from exc
    uri = resolve_uri(settings, directory)
    try:
        return MilvusClient(uri=uri, token=settings.token or "", db_name=settings.db_name, timeout=30)
    except Exception as exc:  # pymilvus raises MilvusException or a bare gRPC error
        raise StoreError(f"store.uri = {uri!r}: cannot connect to Milvus ({exc})") from exc


def _bookkeeping_schema(client: Any, key_type: str) -> Any:
    from pymilvus import DataType

    schema = client.create_schema(auto_id=key_type == "auto", enable_dynamic_field=False)
    if key_type == "auto":
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("at", DataType.DOUBLE)
    else:
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=2048)
        schema.add_field("value", DataType.VARCHAR, max_length=MAX_VARCHAR)
    if key_type == "document":  # what ingest looks a renamed file up by, as a field the engine can filter on
        schema.add_field("content", DataType.VARCHAR, max_length=512)
    schema.add_field("_v", DataType.FLOAT_VECTOR, dim=len(PLACEHOLDER))
    return schema


def _create(client: Any, name: str, schema: Any, indexes: list[tuple[str, dict[str, Any]]]) -> None:
    params = client.prepare_index_params()
    for field, options in indexes:
        params.add_index(field, **options)
    client.create_collection(name, schema=schema, index_params=params, consistency_level=STRONG)


def ensure_bookkeeping(client: Any, names: Names) -> None:
    """Create the registry, change log and meta collections if they are missing, and load them."""
    placeholder = ("_v", {"index_type": "FLAT", "metric_type": "L2"})
    for name, key_type in ((names.docs, "document"), (names.changes, "auto"), (names.meta, "varchar")):
        if not client.has_collection(name):
            _create(client, name, _bookkeeping_schema(client, key_type), [placeholder])
        client.load_collection(name)


def dense_index_options(index: MilvusIndex) -> dict[str, Any]:
    params = {"nlist": 128} if index is MilvusIndex.IVF_FLAT else {}
    return {"index_type": index.value, "metric_type": "IP", "params": params}


def dense_search_params(index: MilvusIndex) -> dict[str, Any]:
    return {"metric_type": "IP", "params": {"nprobe": 32} if index is MilvusIndex.IVF_FLAT else {}}


def ensure_chunks(client: Any, name: str, dim: int, index: MilvusIndex) -> None:
    """The chunk collection, created once the embedder (and so the vector size) is known."""
    from pymilvus import DataType, Function, FunctionType

    if not client.has_collection(name):
        schema = client.create_schema(auto_id=True, enable_dynamic_field=False)
        schema.add_field("key", DataType.INT64, is_primary=True)
        schema.add_field("doc_id", DataType.VARCHAR, max_length=2048)
        schema.add_field("doc_gen", DataType.INT64)
        schema.add_field("chunk_id", DataType.VARCHAR, max_length=2100)
        for field in ("position", "page", "char_start", "char_end"):
            schema.add_field(field, DataType.INT64)
        for field in ("text", "heading", "page_breaks"):
            schema.add_field(field, DataType.VARCHAR, max_length=MAX_VARCHAR)
        schema.add_field("fingerprint", DataType.VARCHAR, max_length=256)
        schema.add_field(
            "terms",
            DataType.VARCHAR,
            max_length=MAX_VARCHAR,
            enable_analyzer=True,
            analyzer_params={"tokenizer": "standard"},
        )
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_field("vec", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_function(
            Function(
                name="bm25", function_type=FunctionType.BM25, input_field_names=["terms"], output_field_names=["sparse"]
            )
        )
        sparse = {"index_type": "SPARSE_INVERTED_INDEX", "metric_type": "BM25"}
        _create(client, name, schema, [("vec", dense_index_options(index)), ("sparse", sparse)])
    client.load_collection(name)
