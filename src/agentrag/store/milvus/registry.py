"""The document registry, the generation and the pending writes of one knowledge base, all stored in Milvus so
every process pointed at the same engine sees the same knowledge base.

A document's row names its live generation: chunks written under any other generation are invisible to
readers (new ones not yet committed, old ones not yet deleted). Writing that row is a document change's single
commit point. Every change then adds a row to `changes`; their count is the knowledge base's generation (a
count cannot be lost between two writers the way a read-then-write counter can).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from agentrag.store.milvus.collections import PLACEHOLDER, STRONG, Names
from agentrag.types import Document

INTENT = "intent:"


@dataclass(frozen=True, slots=True)
class Entry:
    """A registered document: its live chunk generation, the pipeline that indexed it, its metadata."""

    gen: int
    pipeline: str
    document: Document


def _row(doc: Document, gen: int, pipeline: str) -> dict[str, Any]:
    record = {"gen": gen, "pipeline": pipeline, "document": doc.model_dump(mode="json")}
    value = json.dumps(record, ensure_ascii=False)
    return {"id": doc.doc_id, "value": value, "content": content_key(doc.content_hash, pipeline), "_v": PLACEHOLDER}


def content_key(content_hash: str, pipeline: str) -> str:
    return f"{pipeline}|{content_hash}"[:512]


def _entry(value: str) -> Entry:
    record = json.loads(value)
    return Entry(int(record["gen"]), str(record["pipeline"]), Document.model_validate(record["document"]))


class Registry:
    def __init__(self, client: Any, names: Names) -> None:
        self._client = client
        self._names = names
        self._lock = threading.Lock()
        self._snapshot: tuple[int, dict[str, Entry]] | None = None

    # ------------------------------------------------------------------ generation

    @property
    def generation(self) -> int:
        rows = self._client.query(self._names.changes, filter="", output_fields=["count(*)"], consistency_level=STRONG)
        return int(rows[0]["count(*)"])

    def changed(self) -> None:
        """Record one committed change (after its commit point)."""
        self._client.insert(self._names.changes, [{"at": time.time(), "_v": PLACEHOLDER}])

    # ------------------------------------------------------------------ documents

    def entries(self) -> tuple[int, dict[str, Entry]]:
        """Every registered document, as of the generation returned (re-read only when it has moved)."""
        generation = self.generation
        with self._lock:
            if self._snapshot is not None and self._snapshot[0] == generation:
                return self._snapshot
        entries: dict[str, Entry] = {}
        iterator = self._client.query_iterator(
            self._names.docs, batch_size=1000, filter="", output_fields=["id", "value"], consistency_level=STRONG
        )
        try:
            while batch := iterator.next():
                for row in batch:
                    entries[str(row["id"])] = _entry(row["value"])
        finally:
            iterator.close()
        with self._lock:
            self._snapshot = (generation, entries)
        return self._snapshot

    def get(self, doc_id: str) -> Entry | None:
        """One document, read from the engine (not from the snapshot)."""
        rows = self._client.get(self._names.docs, ids=[doc_id], output_fields=["value"], consistency_level=STRONG)
        return _entry(rows[0]["value"]) if rows else None

    def with_content(self, content_hash: str, pipeline: str) -> list[Entry]:
        """The documents indexed from this content by this pipeline, read from the engine."""
        rows = self._client.query(
            self._names.docs,
            filter=f"content == {json.dumps(content_key(content_hash, pipeline), ensure_ascii=False)}",
            output_fields=["value"],
            consistency_level=STRONG,
        )
        return [_entry(r["value"]) for r in rows]

    def put(self, doc: Document, gen: int, pipeline: str) -> None:
        self._client.upsert(self._names.docs, [_row(doc, gen, pipeline)])

    def remove(self, doc_id: str) -> None:
        self._client.delete(self._names.docs, ids=[doc_id])

    # ------------------------------------------------------------------ meta and pending writes

    def meta(self, key: str) -> str | None:
        rows = self._client.get(self._names.meta, ids=[key], output_fields=["value"], consistency_level=STRONG)
        return str(rows[0]["value"]) if rows else None

    def set_meta(self, values: dict[str, str]) -> None:
        self._client.upsert(self._names.meta, [{"id": k, "value": v, "_v": PLACEHOLDER} for k, v in values.items()])

    def begin(self, doc_ids: list[str], gen: int) -> str:
        """Note a write about to touch these documents' chunks, so a crash before `end` can be cleaned up."""
        key = f"{INTENT}{gen}"
        self.set_meta({key: json.dumps(doc_ids, ensure_ascii=False)})
        return key

    def end(self, key: str) -> None:
        self._client.delete(self._names.meta, ids=[key])

    def pending(self) -> dict[str, list[str]]:
        """Writes begun and never ended (the process died): their key and the documents they touched."""
        rows = self._client.query(
            self._names.meta,
            filter=f'id like "{INTENT}%"',
            output_fields=["id", "value"],
            consistency_level=STRONG,
        )
        return {str(r["id"]): list(json.loads(r["value"])) for r in rows}
