"""`/mcp`: the MCP server (`agentrag.mcp`) over Streamable HTTP inside the service, under the same API keys,
rate limits and knowledge-base isolation as the REST API.

Each request is authenticated here, before the SDK reads its body: no valid `Authorization: Bearer KEY` is a
401 as on /v1. The key then travels in the request's ASGI scope to the tools, whose `Library` is that key's
knowledge bases; another key's answers "no knowledge base" exactly as a missing one does. The transport is
stateless (a fresh one per request, no session ids), so `serve --workers N` can send each request anywhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio.to_thread
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from agentrag.errors import ConfigError
from agentrag.kb import KnowledgeBase
from agentrag.mcp.library import not_found
from agentrag.server.access_log import has_secret_param
from agentrag.server.deps import Service
from agentrag.server.keys import ApiKey
from agentrag.settings import Settings

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from agentrag.mcp.library import Library

PATH = "/mcp"
METHODS = ["GET", "POST", "DELETE"]
_CALLER = "agentrag.mcp_caller"  # the scope entry holding (service, key) for the tools


class KeyLibrary:
    """The knowledge bases one API key may use (as `deps.visible_kb` decides for the REST routes)."""

    def __init__(self, service: Service, key: ApiKey) -> None:
        self._service = service
        self._key = key

    @property
    def settings(self) -> Settings:
        return self._service.settings

    @property
    def default_kb(self) -> str:
        """The key's knowledge base when it has exactly one, else `default`."""
        return next(iter(self._key.kbs)) if len(self._key.kbs) == 1 and not self._key.admin else "default"

    def visible(self) -> list[str]:
        return [kb for kb in self._service.knowledge_bases() if self._key.can_use(kb)]

    def open(self, name: str) -> KnowledgeBase:
        try:
            kb_id = self._service.resolve(name)
        except ConfigError as exc:
            raise not_found(name) from exc
        if not self._key.can_use(kb_id) or kb_id not in self._service.knowledge_bases():
            raise not_found(name)
        return self._service.kb(kb_id)


def _library_for(ctx: Context) -> Library:
    service, key = ctx.request_context.request.scope[_CALLER]  # type: ignore[union-attr]
    return KeyLibrary(service, key)


class McpEndpoint:
    """The ASGI app at /mcp; `running()` (in the service's lifespan) starts the SDK's session manager."""

    def __init__(self) -> None:
        self._manager: StreamableHTTPSessionManager | None = None
        self._missing = ""

    def route(self) -> Route:
        """/mcp itself (not a mount: that would redirect /mcp to /mcp/), out of the OpenAPI document."""
        return Route(PATH, self, methods=METHODS, include_in_schema=False)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:  # the SDK is an extra: without it /mcp says how to get it, the rest of the service runs
            from mcp.server.transport_security import TransportSecuritySettings

            from agentrag.mcp.tools import build_server
        except ImportError as exc:
            self._missing = str(exc)
            yield
            return
        server = build_server(_library_for)
        # No DNS-rebinding host check: every request needs an API key, as /v1 does, whatever host it names.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        server.streamable_http_app(stateless_http=True, transport_security=security)
        manager = server.session_manager  # one per lifespan: the SDK's cannot run twice
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        service: Service = scope["app"].state.service
        # In a worker thread, as the REST routes' key check is: the key database and a Redis rate limiter block.
        refusal = await anyio.to_thread.run_sync(self._refusal, service, scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        assert self._manager is not None  # checked by _refusal
        await self._manager.handle_request(scope, receive, send)

    def _refusal(self, service: Service, scope: Scope) -> JSONResponse | None:
        """The answer to a request that gets no further: no SDK, no valid key, over the rate limit."""
        if self._manager is None:
            detail = f"the MCP endpoint needs the MCP SDK: pip install 'agentrag[mcp]' ({self._missing})"
            return JSONResponse({"detail": detail}, status_code=503)
        scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
        key = service.keys.authenticate(token.strip()) if scheme.lower() == "bearer" else None
        if key is None:
            headers = {"WWW-Authenticate": "Bearer"}
            in_url = has_secret_param(scope.get("query_string", b"").decode("latin-1"))
            detail = ("an API key in the URL is refused: " if in_url else "missing or invalid API key ") + (
                "(send Authorization: Bearer KEY)"
            )
            return JSONResponse({"detail": detail}, status_code=401, headers=headers)
        wait = service.limiter.check(key.key_id)
        if wait > 0:
            limit = service.settings.server.requests_per_minute
            detail = f"rate limit: {limit} requests per minute; retry in {wait:.0f}s"
            return JSONResponse({"detail": detail}, status_code=429, headers={"Retry-After": str(int(wait) + 1)})
        caller: tuple[Service, ApiKey] = (service, key)
        scope[_CALLER] = caller
        return None
