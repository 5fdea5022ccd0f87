"""Long-term memory: what the service remembers about a key's user, listed and deleted by that key."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Response

from agentrag.server.deps import Key, ServiceDep
from agentrag.server.json_body import api_router
from agentrag.server.schemas import KEYED, error_responses

router = api_router(prefix="/v1/memory", tags=["memory"])


@router.get("", responses=error_responses(*KEYED))
def list_memory(key: Key, service: ServiceDep) -> dict[str, Any]:
    return {"facts": [f.model_dump() for f in service.sessions.facts(key.key_id)]}


@router.delete("/{fact_id}", status_code=204, responses=error_responses(*KEYED, 404, 422))
def delete_memory(fact_id: str, key: Key, service: ServiceDep) -> Response:
    if not service.sessions.forget(key.key_id, fact_id):
        raise HTTPException(404, "no such fact")
    return Response(status_code=204)
