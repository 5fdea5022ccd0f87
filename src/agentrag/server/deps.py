"""What the routes share: the `Service` (settings, keys, open knowledge bases, sessions) and the
dependencies that authenticate a request and find the knowledge bases its key may use."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from agentrag.errors import ConfigError
from agentrag.kb import KnowledgeBase, claim_display_name, list_knowledge_bases, resolve_kb, shared_embedder
from agentrag.layout import Layout
from agentrag.server.access_log import has_secret_param
from agentrag.server.keys import ApiKey, KeyStore
from agentrag.server.limits import RateLimiter
from agentrag.session import Sessions
from agentrag.settings import Settings


class Service:
    """State shared by the routes: settings, keys, open knowledge bases, conversations, memory."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.home
        self.layout = Layout(settings.home)
        self.home.mkdir(parents=True, exist_ok=True)
        self.keys = KeyStore(self.home)
        self.limiter = RateLimiter(settings.server.requests_per_minute, settings.redis_url)
        self.embedder = shared_embedder(settings.embedder)
        self.sessions = Sessions(settings, self.embedder)
        self._kbs: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()
        self.closed = False

    def upload_lock(self, name_key: str) -> AbstractContextManager[None]:
        """The lock for uploads sent under one name (`uploads.name_key`, hex): they take turns (no two both
        "added"), in this process and in every other worker (`Sessions.locks`: Redis, else a file lock)."""
        return self.sessions.locks.hold(f"upload {name_key}")

    def knowledge_bases(self) -> list[str]:
        return list_knowledge_bases(self.home)

    def resolve(self, name: str) -> str:
        """The id `name` (an id or a display name) stands for; ConfigError for a name no knowledge base can have."""
        return resolve_kb(self.home, name)

    def kb(self, kb_id: str) -> KnowledgeBase:
        """The open knowledge base `kb_id` (an id, as `resolve` gives)."""
        with self._lock:
            held = self._kbs.get(kb_id)
            if held is not None and held.instance_id != self.layout.recorded_instance_id(kb_id):
                # Deleted and created again by another worker: the copy open here is the old one's. Dropped,
                # not closed: a request still using it finishes on it.
                del self._kbs[kb_id]
            if kb_id not in self._kbs:
                self._kbs[kb_id] = KnowledgeBase.open(
                    kb_id, settings=self.settings, create=False, embedder=self.embedder
                )
            return self._kbs[kb_id]

    def create(self, name: str, display_name: str | None = None) -> KnowledgeBase:
        """Create (or open) the knowledge base `name`; one at a time, so display names stay unique."""
        with self._lock, self.sessions.locks.hold("knowledge base names"):  # another worker may be creating too
            kb_id = resolve_kb(self.home, name)
            if kb_id in self._kbs:  # open already: only its display name may need recording (or refusing)
                claim_display_name(self.layout, kb_id, display_name or name, explicit=display_name is not None)
                return self._kbs[kb_id]
            kb = KnowledgeBase.open(
                name, settings=self.settings, create=True, embedder=self.embedder, display_name=display_name
            )
            self._kbs[kb.name] = kb
            return kb

    def drop(self, name: str) -> None:
        with self._lock:
            kb = self._kbs.pop(name, None)
        if kb is None:
            kb = KnowledgeBase.open(name, settings=self.settings, create=False, embedder=self.embedder)
        kb.destroy()

    def close(self) -> None:
        with self._lock:
            for kb in self._kbs.values():
                kb.close()
            self._kbs.clear()
        self.keys.close()
        self.sessions.close()
        self.closed = True


def get_service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


ServiceDep = Annotated[Service, Depends(get_service)]


# `auto_error=False`: the 401 below says what to send; the scheme puts the requirement in the OpenAPI document.
_BEARER = HTTPBearer(auto_error=False, description="an API key from `agentrag keys create`")


def current_key(
    request: Request,
    service: ServiceDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)],
) -> ApiKey:
    """The request's API key (401 without a valid one), counted against its rate limit (429 over it)."""
    key = service.keys.authenticate(bearer.credentials.strip()) if bearer else None
    if key is None:
        in_url = has_secret_param(request.url.query)
        raise HTTPException(
            401,
            ("an API key in the URL is refused: " if in_url else "missing or invalid API key ")
            + "(send Authorization: Bearer KEY)",
            headers={"WWW-Authenticate": "Bearer"},
        )
    wait = service.limiter.check(key.key_id)
    if wait > 0:
        raise HTTPException(
            429,
            f"rate limit: {service.settings.server.requests_per_minute} requests per minute; retry in {wait:.0f}s",
            headers={"Retry-After": str(int(wait) + 1)},
        )
    return key


Key = Annotated[ApiKey, Depends(current_key)]


def visible_kb(service: Service, name: str, key: ApiKey) -> KnowledgeBase:
    """The knowledge base named `name` (its id or its display name) if this key may use it; 404 otherwise,
    whether or not it exists, naming it as asked (never its id, so a refusal tells nothing). The message says it is
    about this key: a key made without `--kb` or `--admin` uses only the knowledge bases it creates, and a first user
    asking such a key about the one `agentrag ingest` made read "no knowledge base 'default'" as a missing one."""
    refused = f"no knowledge base {name!r} this key may use"
    try:
        kb_id = service.resolve(name)
    except ConfigError as exc:
        raise HTTPException(404, refused) from exc
    if not key.can_use(kb_id) or kb_id not in service.knowledge_bases():
        raise HTTPException(404, refused)
    return service.kb(kb_id)
