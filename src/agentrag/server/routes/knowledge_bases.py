"""Knowledge bases: create, list and delete the ones a key may use."""

from __future__ import annotations

import shutil
from typing import Any

from fastapi import HTTPException, Response

from agentrag.kb import validate_kb_name
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.json_body import api_router
from agentrag.server.schemas import CreateKB

router = api_router(prefix="/v1/kb", tags=["knowledge bases"])


@router.post("", status_code=201)
def create_kb(body: CreateKB, key: Key, service: ServiceDep) -> dict[str, Any]:
    name = validate_kb_name(body.name)
    exists = name in service.knowledge_bases()
    if exists and not key.can_use(name):
        raise HTTPException(409, f"the name {name!r} is not available")
    service.kb(name, create=True)
    if not key.admin:
        service.keys.grant(key.key_id, name)
    return {"name": name, "created": not exists}


@router.get("")
def list_kbs(key: Key, service: ServiceDep) -> dict[str, Any]:
    out = []
    for name in service.knowledge_bases():
        if key.can_use(name):
            stats = service.kb(name).stats()
            out.append({"name": name, "documents": stats.documents, "chunks": stats.chunks})
    return {"knowledge_bases": out}


@router.delete("/{kb}", status_code=204)
def delete_kb(kb: str, key: Key, service: ServiceDep) -> Response:
    """The knowledge base, its uploaded files and its traces are all removed."""
    visible_kb(service, kb, key)
    service.drop(kb)
    service.keys.revoke_kb(kb)
    shutil.rmtree(service.layout.uploads(kb), ignore_errors=True)
    shutil.rmtree(service.layout.traces(kb), ignore_errors=True)
    return Response(status_code=204)
