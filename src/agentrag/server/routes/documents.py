"""Documents and their chunks: upload (checked by content), list, show, delete."""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path
from typing import Annotated, Any

from fastapi import File, Form, HTTPException, Response, UploadFile

from agentrag.errors import DocumentNotFound, LoadError
from agentrag.ingest.pipeline import document_id_for_path
from agentrag.kb import KnowledgeBase
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.json_body import api_router, loads_strict
from agentrag.server.schemas import IN_KB, error_responses
from agentrag.server.uploads import namesakes, resolve_upload, staged, upload_path, uploaded_file

router = api_router(prefix="/v1/kb/{kb}", tags=["documents"])


def _parse_tags(tags: str | None) -> dict[str, str]:
    if not tags:
        return {}
    expected = 'tags: expected a JSON object such as {"team": "ops"}'
    try:
        raw = loads_strict(tags)
    except ValueError as exc:  # JSONDecodeError included
        raise HTTPException(422, f"{expected}: {exc}") from exc
    if not isinstance(raw, dict):
        raise HTTPException(422, f"{expected}, not a JSON {type(raw).__name__}")
    return {str(k): str(v) for k, v in raw.items()}


@router.post("/documents", status_code=201, responses=error_responses(*IN_KB, 400, 413, 415))
def upload(
    kb: str,
    key: Key,
    service: ServiceDep,
    file: Annotated[UploadFile, File(description="txt, md, html, pdf or docx; the type is read from the content")],
    tags: Annotated[str | None, Form(description='JSON object of tags, e.g. {"team": "ops"}')] = None,
) -> dict[str, Any]:
    """201 with `status`: `added` (a new name), `updated` (this name again, new content: a replace) or
    `unchanged`. Distinct names are distinct documents; same-named uploads take turns."""
    knowledge_base = visible_kb(service, kb, key)
    max_mb = service.settings.ingest.max_file_mb
    limit = int(max_mb * 1024 * 1024)
    data = file.file.read(limit + 1)
    if len(data) > limit:
        raise HTTPException(413, f"file too large: over the {max_mb:g} MB limit")
    parsed_tags = _parse_tags(tags)
    sent = file.filename or "upload"
    try:
        name = resolve_upload(sent, data)
        path = upload_path(service.layout.uploads(kb), sent, name)
    except LoadError as exc:
        raise HTTPException(415, str(exc)) from exc
    with service.upload_lock(path.parent.name), staged(path, data) as keep:
        earlier = namesakes(path)
        report = knowledge_base.ingest([path], parsed_tags, source_root=path.parent)
        item = report.items[0] if report.items else None
        if item is None or item.status == "failed":
            # Too much work to parse (a limit in ingest.limits, named in the error) is 413 like too many bytes.
            code = 413 if item is not None and item.limit else 422
            raise HTTPException(code, f"{name}: {item.error if item else 'nothing ingested'}")
        keep()
        for old in earlier:  # the same name sent before with content of another type: replaced now
            _forget(knowledge_base, old)
    status = "updated" if earlier and item.status == "added" else item.status
    return {"doc_id": item.doc_id, "filename": name, "status": status, "chunks": item.chunks}


def _forget(knowledge_base: KnowledgeBase, path: Path) -> None:
    with suppress(DocumentNotFound):
        knowledge_base.delete(document_id_for_path(path))
    path.unlink(missing_ok=True)


@router.get("/documents", responses=error_responses(*IN_KB))
def list_documents(kb: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    knowledge_base = visible_kb(service, kb, key)
    return {"documents": [d.model_dump(mode="json") for d in knowledge_base.documents()]}


@router.get("/documents/{doc_id}", responses=error_responses(*IN_KB))
def get_document(kb: str, doc_id: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    document, chunks = visible_kb(service, kb, key).document(doc_id)
    return {"document": document.model_dump(mode="json"), "chunks": [c.model_dump(mode="json") for c in chunks]}


@router.delete("/documents/{doc_id}", status_code=204, responses=error_responses(*IN_KB))
def delete_document(kb: str, doc_id: str, key: Key, service: ServiceDep) -> Response:
    """The document, everything indexed from it, and the uploaded file it came from."""
    knowledge_base = visible_kb(service, kb, key)
    document, _ = knowledge_base.document(doc_id)
    knowledge_base.delete(doc_id)
    folder = service.layout.uploads(kb)
    uploaded = uploaded_file(folder, doc_id, document.source, document_id_for_path)
    if uploaded is not None:
        uploaded.unlink()
        if uploaded.parent != folder.resolve():
            with suppress(OSError):
                uploaded.parent.rmdir()  # the name's folder, once empty
    return Response(status_code=204)


@router.get("/chunks/{chunk_id:path}", responses=error_responses(*IN_KB))
def get_chunk(kb: str, chunk_id: str, key: Key, service: ServiceDep) -> dict[str, Any]:
    chunk = visible_kb(service, kb, key).chunk(chunk_id)
    return chunk.model_dump(mode="json")
