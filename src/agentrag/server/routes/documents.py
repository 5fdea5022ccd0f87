"""Documents and their chunks: upload (checked by content), list, show, delete."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, HTTPException, Response, UploadFile

from agentrag.errors import LoadError
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.uploads import resolve_upload, upload_path

router = APIRouter(prefix="/v1/kb/{kb}", tags=["documents"])


def _parse_tags(tags: str | None) -> dict[str, str]:
    if not tags:
        return {}
    try:
        raw = json.loads(tags)
        assert isinstance(raw, dict)
        return {str(k): str(v) for k, v in raw.items()}
    except (ValueError, AssertionError) as exc:
        raise HTTPException(422, 'tags: expected a JSON object such as {"team": "ops"}') from exc


@router.post("/documents", status_code=201)
def upload(
    kb: str,
    key: Key,
    service: ServiceDep,
    file: Annotated[UploadFile, File(description="txt, md, html, pdf or docx; the type is read from the content")],
    tags: Annotated[str | None, Form(description='JSON object of tags, e.g. {"team": "ops"}')] = None,
) -> dict[str, Any]:
    knowledge_base = visible_kb(service, kb, key)
    max_mb = service.settings.ingest.max_file_mb
    limit = int(max_mb * 1024 * 1024)
    data = file.file.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"file too large: over the {max_mb:g} MB limit")
    parsed_tags = _parse_tags(tags)
    try:
        name = resolve_upload(file.filename or "upload", data)
    except LoadError as exc:
        raise HTTPException(415, str(exc)) from exc
    path = upload_path(service.layout.uploads(kb), name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
    tmp.write_bytes(data)
    tmp.replace(path)
    report = knowledge_base.ingest([path], parsed_tags, source_root=path.parent)
    item = report.items[0] if report.items else None
    if item is None or item.status == "failed":
        # Too much work to parse (a limit in ingest.limits, named in the error) is 413 like too many bytes.
        status = 413 if item is not None and item.limit else 422
        raise HTTPException(status, f"{name}: {item.error if item else 'nothing ingested'}")
    return {"doc_id": item.doc_id, "filename": name, "status": item.status, "chunks": item.chunks}


@router.get("/documents")
def list_documents(kb: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    knowledge_base = visible_kb(service, kb, key)
    return {"documents": [d.model_dump(mode="json") for d in knowledge_base.documents()]}


@router.get("/documents/{doc_id}")
def get_document(kb: str, doc_id: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    document, chunks = visible_kb(service, kb, key).document(doc_id)
    return {"document": document.model_dump(mode="json"), "chunks": [c.model_dump(mode="json") for c in chunks]}


@router.delete("/documents/{doc_id}", status_code=204)
def delete_document(kb: str, doc_id: str, key: Key, service: ServiceDep) -> Response:
    """The document, everything indexed from it, and the uploaded file it came from."""
    knowledge_base = visible_kb(service, kb, key)
    document, _ = knowledge_base.document(doc_id)
    knowledge_base.delete(doc_id)
    folder = service.layout.uploads(kb).resolve()
    uploaded = (folder / document.source).resolve()  # uploads are recorded relative to their folder
    if uploaded.is_relative_to(folder) and uploaded != folder:
        uploaded.unlink(missing_ok=True)
    return Response(status_code=204)


@router.get("/chunks/{chunk_id:path}")
def get_chunk(kb: str, chunk_id: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    chunk = visible_kb(service, kb, key).chunk(chunk_id)
    return chunk.model_dump(mode="json")
