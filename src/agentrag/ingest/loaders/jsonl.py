"""JSONL corpus loader: one `{"_id", "title", "text"}` record per line, each its own document."""

from __future__ import annotations

import json

from agentrag.errors import LoadError
from agentrag.ingest.encoding import decode_text
from agentrag.ingest.loaders.common import BLANK_LINES, WorkBudget
from agentrag.types import Block, LoadedDocument

_CORE_FIELDS = ("_id", "title", "text")


def load_jsonl(data: bytes, path: str, work: WorkBudget | None = None) -> list[LoadedDocument]:
    """A benchmark corpus: one `{"_id", "title", "text"}` record per line, each its own document.

    Records are trusted shapes after the checks below, so models are built without re-validation: a 5,000
    record file loads in tens of milliseconds.
    """
    text = decode_text(data, path)
    budget = work or WorkBudget(path)
    documents: list[LoadedDocument] = []
    seen: dict[str, int] = {}
    loads = json.loads
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as exc:
            raise LoadError(path, f"line {number}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise LoadError(path, f"line {number}: expected a JSON object, got {type(record).__name__}")
        doc_id = record.get("_id")
        body = record.get("text")
        title = record.get("title", "")
        if doc_id is None:
            raise LoadError(path, f"line {number}: missing field '_id'")
        if body is None:
            raise LoadError(path, f"line {number}: missing field 'text'")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id:
            raise LoadError(path, f"line {number}: field '_id' must be a non-empty string")
        if not isinstance(body, str):
            raise LoadError(path, f"line {number}: field 'text' must be a string")
        if not isinstance(title, str):
            raise LoadError(path, f"line {number}: field 'title' must be a string")
        if doc_id in seen:
            raise LoadError(path, f"line {number}: duplicate _id '{doc_id}' (first on line {seen[doc_id]})")
        seen[doc_id] = number
        if "\r" in body:
            body = body.replace("\r\n", "\n").replace("\r", "\n")
        body = body.strip()
        title = title.strip()
        if not body:
            if not title:
                raise LoadError(path, f"line {number}: record '{doc_id}' has no text")
            body = title  # a title-only record is still a findable document
        if "\n" in body and BLANK_LINES.search(body):
            paragraphs = [p.strip() for p in BLANK_LINES.split(body)]
            blocks = [Block.model_construct(text=p, heading_path=(), page=None) for p in paragraphs if p]
        else:
            blocks = [Block.model_construct(text=body, heading_path=(), page=None)]
        budget.document(blocks)
        meta = {k: v for k, v in record.items() if k not in _CORE_FIELDS and isinstance(v, str)}
        documents.append(
            LoadedDocument.model_construct(
                title=title, blocks=blocks, date=None, doc_id=doc_id, source=f"{path}#{doc_id}", meta=meta
            )
        )
    if not documents:
        raise LoadError(path, "no records (empty corpus file)")
    return documents
