"""`GET /v1/models`: the knowledge bases a key may use, in OpenAI's shape, so a chat client can pick one; each
`id` is a `model` that `/v1/chat/completions` takes. Same keys and isolation as every other route."""

from __future__ import annotations

from agentrag.server.deps import Key, Service, ServiceDep, visible_kb
from agentrag.server.json_body import api_router
from agentrag.server.keys import ApiKey
from agentrag.server.schemas import KEYED, ModelList, ModelObject, error_responses

router = api_router(tags=["OpenAI-compatible"])


def _model(service: Service, kb_id: str) -> ModelObject:
    made = service.layout.kb_instance_file(kb_id)  # written when the knowledge base is created
    stamp = made if made.exists() else service.layout.kb_dir(kb_id)
    shown = service.layout.kb_display_name(kb_id) or kb_id
    return ModelObject(id=kb_id, created=int(stamp.stat().st_mtime), display_name=shown)


def _usable(service: Service, key: ApiKey) -> list[str]:
    return [kb_id for kb_id in service.knowledge_bases() if key.can_use(kb_id)]


@router.get("/v1/models", responses=error_responses(*KEYED))
def list_models(key: Key, service: ServiceDep) -> ModelList:
    """The knowledge bases this key may use; each `id` is a `model` that /v1/chat/completions takes."""
    return ModelList(data=[_model(service, kb_id) for kb_id in _usable(service, key)])


# 422 as FastAPI declares for any route with a parameter (the shared error model, not its default one)
@router.get("/v1/models/{model}", responses=error_responses(*KEYED, 404, 422))
def get_model(model: str, key: Key, service: ServiceDep) -> ModelObject:
    """One knowledge base as a model, by its id or display name; 404 as for any knowledge base the key may not use."""
    return _model(service, visible_kb(service, model, key).name)
