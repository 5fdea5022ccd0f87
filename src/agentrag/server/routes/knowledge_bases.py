"""Knowledge bases: create, list and delete the ones a key may use."""

from __future__ import annotations

import shutil
from typing import Any

from fastapi import HTTPException, Response

from agentrag.kb import validate_kb_name
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.json_body import api_router
from agentrag.server.schemas import IN_KB, KEYED, WITH_BODY, CreateKB, error_responses

router = api_router(prefix="/v1/kb", tags=["knowledge bases"])


@router.post("", status_code=201, responses=error_responses(*KEYED, 403, *WITH_BODY))
def create_kb(body: CreateKB, key: Key, service: ServiceDep) -> dict[str, Any]:
    """An admin key creates any name; another key only the names it was issued for (`keys create --kb NAME`).

    Names are global, so a key free to create any name would learn which ones exist (a taken name could only
    be refused). Refusing every name outside the key's scope, taken or not, tells it nothing it did not know.
    """
    name = validate_kb_name(body.name)
    if not key.can_use(name):
        raise HTTPException(
            403, f"this key may create only the knowledge bases it was issued for, not {name!r} (ask an admin)"
        )
    exists = name in service.knowledge_bases()
    service.kb(name, create=True)
    return {"name": name, "created": not exists}


@router.get("", responses=error_responses(*KEYED, 422))  # 422: a knowledge base that cannot be opened
def list_kbs(key: Key, service: ServiceDep) -> dict[str, Any]:
    out = []
    for name in service.knowledge_bases():
        if key.can_use(name):
            stats = service.kb(name).stats()
            out.append({"name": name, "documents": stats.documents, "chunks": stats.chunks})
    return {"knowledge_bases": out}


@router.delete("/{kb}", status_code=204, responses=error_responses(*IN_KB))
def delete_kb(kb: str, key: Key, service: ServiceDep) -> Response:
    """The knowledge base, its uploaded files and its traces are all removed."""
    visible_kb(service, kb, key)
    service.drop(kb)
    service.keys.revoke_kb(kb)
    shutil.rmtree(service.layout.uploads(kb), ignore_errors=True)
    shutil.rmtree(service.layout.traces(kb), ignore_errors=True)
    return Response(status_code=204)
