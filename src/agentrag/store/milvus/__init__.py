"""The Milvus backend (pymilvus `MilvusClient`): `store` (the `Store` itself), `rows` (chunk rows, filters),
`collections` (names, schemas, the connection), `registry` (documents, generation and pending writes, kept in
Milvus beside the chunks) and `terms` (agentrag's BM25 tokens as the engine's analyzer sees them)."""

from agentrag.store.milvus.store import MilvusStore

__all__ = ["MilvusStore"]
