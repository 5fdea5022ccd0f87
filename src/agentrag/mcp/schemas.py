"""What the MCP tools take and give: argument types (choices derived from `agentrag.vocab`) and results."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from agentrag.errors import ConfigError
from agentrag.text.dates import parse_date
from agentrag.types import Chunk, Hit, SearchFilter

# One document as a resource: `agentrag://KB/documents/DOC_ID` (both parts percent-encoded).
DOCUMENT_URI = "agentrag://{kb}/documents/{doc_id}"

KbArg = Annotated[
    str | None,
    Field(
        description="The knowledge base to use (an id or display name from list_knowledge_bases); "
        "omit it for the server's default knowledge base.",
    ),
]


class SearchFilterArg(BaseModel):
    """Restrict a search to some documents; every field given must match."""

    model_config = ConfigDict(extra="forbid")

    source: str | None = Field(None, description="A glob on the document's source path, e.g. '*.pdf' or '*runbook*'.")
    doc_id: str | None = Field(None, description="One document's id (from a hit's doc_id).")
    tags: dict[str, str] = Field(default_factory=dict, description="Tags given at ingest, e.g. {'team': 'ops'}.")
    after: str | None = Field(None, description="Only documents dated on or after this day, YYYY-MM-DD.")
    before: str | None = Field(None, description="Only documents dated on or before this day, YYYY-MM-DD.")

    def to_filter(self) -> SearchFilter:
        dates = {}
        for name in ("after", "before"):
            value = getattr(self, name)
            try:
                dates[name] = parse_date(value) if value else None
            except ValueError as exc:
                raise ConfigError(f"filter.{name}: {exc} (expected YYYY-MM-DD)") from None
        source = self.source
        return SearchFilter(
            sources=[source if any(c in source for c in "*?[") else f"*{source}*"] if source else [],
            doc_ids=[self.doc_id] if self.doc_id else [],
            tags=self.tags,
            date_from=dates["after"],
            date_to=dates["before"],
        )


def document_uri(kb: str, doc_id: str) -> str:
    return DOCUMENT_URI.format(kb=quote(kb, safe=""), doc_id=quote(doc_id, safe=""))


def hit_result(kb: str, hit: Hit) -> dict[str, Any]:
    """A hit as `search --json` gives it, with the URI of its document's resource."""
    return {**hit.contract(), "document_uri": document_uri(kb, hit.chunk.doc_id)}


def chunk_result(kb: str, chunk: Chunk) -> dict[str, Any]:
    return {
        "kb": kb,
        "chunk_id": chunk.chunk_id,
        "doc_id": chunk.doc_id,
        "source": chunk.source,
        "title": chunk.title,
        "heading": chunk.heading,
        "page": chunk.page,
        "date": chunk.date.isoformat() if chunk.date else None,
        "position": chunk.position,
        "text": chunk.text,
        "document_uri": document_uri(kb, chunk.doc_id),
    }
