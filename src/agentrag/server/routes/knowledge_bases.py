"""Knowledge bases: create, list and delete the ones a key may use."""

from __future__ import annotations

import shutil
from typing import Any

from fastapi import HTTPException, Response

from agentrag.kb import KnowledgeBase
from agentrag.server.deps import Key, ServiceDep, visible_kb
from agentrag.server.json_body import api_router
from agentrag.server.schemas import IN_KB, KEYED, WITH_BODY, CreateKB, error_responses

router = api_router(prefix="/v1/kb", tags=["knowledge bases"])


@router.post("", status_code=201, responses=error_responses(*KEYED, 403, *WITH_BODY))
def create_kb(body: CreateKB, key: Key, service: ServiceDep) -> dict[str, Any]:
    """An admin key creates any name; another key only the names it was issued for (`keys create --kb NAME`).

    Names are global, so a key free to create any name would learn which ones exist (a taken name could only
    be refused). Refusing every name outside the key's scope, taken or not, tells it nothing it did not know.

    `name` may be in any script: one that is not a valid id (`网页测试`) becomes the display name of a knowledge
    base with a derived id (`kb-` and a hash); the response and `GET /v1/kb` give both.
    """
    kb_id = service.resolve(body.name)
    if not key.can_use(kb_id):
        raise HTTPException(
            403, f"this key may create only the knowledge bases it was issued for, not {body.name!r} (ask an admin)"
        )
    exists = kb_id in service.knowledge_bases()
    return {**_described(service.create(body.name, body.display_name)), "created": not exists}


def _described(kb: KnowledgeBase) -> dict[str, Any]:
    """`name` and `id` are the id (what URLs and keys use); `display_name` is what people see."""
    return {"name": kb.name, "id": kb.name, "display_name": kb.display_name}


@router.get("", responses=error_responses(*KEYED, 422))  # 422: a knowledge base that cannot be opened
def list_kbs(key: Key, service: ServiceDep) -> dict[str, Any]:
    out = []
    for kb_id in service.knowledge_bases():
        if key.can_use(kb_id):
            kb = service.kb(kb_id)
            stats = kb.stats()
            out.append({**_described(kb), "documents": stats.documents, "chunks": stats.chunks})
    return {"knowledge_bases": out}


@router.delete("/{kb}", status_code=204, responses=error_responses(*IN_KB))
def delete_kb(kb: str, key: Key, service: ServiceDep) -> Response:
    """The knowledge base, its uploaded files and its traces are all removed."""
    kb_id = visible_kb(service, kb, key).name
    service.drop(kb_id)
    service.keys.revoke_kb(kb_id)
    shutil.rmtree(service.layout.uploads(kb_id), ignore_errors=True)
    shutil.rmtree(service.layout.traces(kb_id), ignore_errors=True)
    return Response(status_code=204)
