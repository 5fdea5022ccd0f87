"""The HTTP service: many knowledge bases in one data directory, API keys, streaming answers, a web page.

Everything under /v1 needs `Authorization: Bearer KEY`. A key sees only its knowledge bases: another
one answers 404 exactly as a missing one does, so names never leak. The routes (`agentrag.server.routes`)
call the same Python API as the CLI (`KnowledgeBase`, `Sessions`), so the service and the command line
cannot drift apart.

    uvicorn --factory agentrag.server.app:create_app_from_environment   # settings from $AGENTRAG_HOME
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from agentrag import __version__
from agentrag.errors import AgentragError, DocumentNotFound
from agentrag.server import access_log
from agentrag.server.deps import Service
from agentrag.server.json_body import validation_error
from agentrag.server.routes import answers, documents, knowledge_bases, memory, openai, site
from agentrag.settings import Settings, load_settings


def create_app(settings: Settings) -> FastAPI:
    service = Service(settings)
    access_log.install()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        service.close()

    app = FastAPI(
        title="agentrag",
        version=__version__,
        description="Agentic RAG over your own documents, Chinese and English: search, cited answers, streaming.",
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_exception_handler(AgentragError, _agentrag_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, validation_error)  # type: ignore[arg-type]
    app.middleware("http")(_body_limit(settings))
    app.include_router(site.router)
    app.mount("/static", StaticFiles(directory=site.STATIC), name="static")
    for routes in (knowledge_bases, documents, answers, memory, openai):
        app.include_router(routes.router)
    return app


def create_app_from_environment() -> FastAPI:
    """The app for `uvicorn --factory`: settings from the environment (`AGENTRAG_HOME`, ...)."""
    return create_app(load_settings())


def _agentrag_error(request: Request, exc: AgentragError) -> JSONResponse:
    status = 404 if isinstance(exc, DocumentNotFound) else 422
    return JSONResponse({"detail": str(exc)}, status_code=status)


def _body_limit(
    settings: Settings,
) -> Callable[[Request, Callable[[Request], Awaitable[Response]]], Awaitable[Response]]:
    """Middleware refusing oversized requests before reading them (uploads have their own, larger limit)."""
    upload_limit = int(settings.ingest.max_file_mb * 1024 * 1024) + 64 * 1024
    json_limit = settings.server.max_json_kb * 1024

    async def limit_body(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        length = request.headers.get("content-length")
        limit = upload_limit if request.url.path.endswith("/documents") else json_limit
        if length is not None and length.isdigit() and int(length) > limit:
            return JSONResponse(
                {"detail": f"request too large: {int(length) / 2**20:.1f} MB > limit {limit / 2**20:.1f} MB"},
                status_code=413,
            )
        return await call_next(request)

    return limit_body
