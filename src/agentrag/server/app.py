"""The HTTP service: many knowledge bases in one data directory, API keys, streaming answers, a web page.

Everything under /v1 needs `Authorization: Bearer KEY`. A key sees only its knowledge bases: another
one answers 404 exactly as a missing one does, so names never leak. The routes (`agentrag.server.routes`)
call the same Python API as the CLI (`KnowledgeBase`, `Sessions`), so the service and the command line
cannot drift apart.

    uvicorn --factory agentrag.server.app:create_app_from_environment   # settings from $AGENTRAG_HOME
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.types import Scope

from agentrag import __version__, telemetry
from agentrag.errors import AgentragError, Busy, DocumentNotFound
from agentrag.kb import KnowledgeBaseNameTaken
from agentrag.server import access_log, mcp_mount
from agentrag.server.deps import Service
from agentrag.server.headers import SecurityHeaders
from agentrag.server.json_body import validation_error
from agentrag.server.limits import BodyLimit
from agentrag.server.methods import AllowedMethods, http_error_handler
from agentrag.server.routes import (
    answers,
    documents,
    knowledge_bases,
    memory,
    openai,
    openai_models,
    site,
    vector_stores,
)
from agentrag.settings import Settings, load_settings


def create_app(settings: Settings) -> FastAPI:
    telemetry.writer()  # a bad OTEL_* variable stops the service from starting, naming it
    service = Service(settings)
    access_log.install()
    mcp = mcp_mount.McpEndpoint()  # MCP over Streamable HTTP at /mcp, same keys as /v1

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # A lifespan can run more than once (a test client opened twice, a server restarted in process):
        # the service closed by the last shutdown is replaced, never served closed.
        if app.state.service.closed:
            app.state.service = Service(settings)
        async with mcp.running():
            yield
        app.state.service.close()

    app = FastAPI(
        title="agentrag",
        version=__version__,
        description="Agentic RAG over your own documents, Chinese and English: search, cited answers, streaming.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_exception_handler(AgentragError, _agentrag_error)  # type: ignore[arg-type]
    app.add_exception_handler(Busy, _busy)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
    app.add_middleware(BodyLimit, limit_for=_body_limits(settings))
    app.add_middleware(SecurityHeaders)  # outermost: the 413s carry the headers too
    app.include_router(site.router)
    app.mount("/static", StaticFiles(directory=site.STATIC), name="static")
    app.router.routes.append(mcp.route())
    api = [routes.router for routes in (knowledge_bases, documents, answers, memory, openai)]
    api += [openai_models.router, vector_stores.router]  # the OpenAI-shaped catalogue and file search
    for router in api:
        app.include_router(router)
    # app.routes has the document's own routes; the included routers' are in the routers (FastAPI wraps them)
    allowed = AllowedMethods([*app.routes, *(route for router in (site.router, *api) for route in router.routes)])
    app.add_exception_handler(HTTPException, http_error_handler(allowed))  # type: ignore[arg-type]
    return app


def create_app_from_environment() -> FastAPI:
    """The app for `uvicorn --factory`: settings from the environment (`AGENTRAG_HOME`, ...)."""
    return create_app(load_settings())


def _agentrag_error(request: Request, exc: AgentragError) -> JSONResponse:
    status = 404 if isinstance(exc, DocumentNotFound) else 409 if isinstance(exc, KnowledgeBaseNameTaken) else 422
    return JSONResponse({"detail": str(exc)}, status_code=status)


def _busy(request: Request, exc: Busy) -> JSONResponse:
    """409: another request (on this worker or another) held the conversation or the upload's name too long."""
    return JSONResponse({"detail": str(exc)}, status_code=409, headers={"Retry-After": "5"})


def _body_limits(settings: Settings) -> Callable[[Scope], tuple[int, str]]:
    """Uploads have their own, larger limit; every other body is JSON."""
    upload_limit = int(settings.ingest.max_file_mb * 1024 * 1024) + 64 * 1024  # the file plus its form fields
    json_limit = settings.server.max_json_kb * 1024

    def limit_for(scope: Scope) -> tuple[int, str]:
        if str(scope.get("path", "")).endswith("/documents"):
            return upload_limit, "ingest.max_file_mb"
        return json_limit, "server.max_json_kb"

    return limit_for
