"""Routes that need no key: the health check and the web page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.responses import FileResponse

from agentrag import __version__
from agentrag.kb import shared_cache
from agentrag.server.deps import ServiceDep
from agentrag.server.json_body import api_router

STATIC = Path(__file__).resolve().parent.parent / "static"

router = api_router()


@router.get("/health", tags=["service"])
def health(service: ServiceDep) -> dict[str, Any]:
    """Open to anyone, so it says nothing about the knowledge bases (not even how many there are)."""
    cache = shared_cache(service.settings)
    return {
        "status": "ok",
        "version": __version__,
        "cache": {"backend": cache.name, "hits": cache.hits, "misses": cache.misses} if cache else None,
    }


@router.get("/", include_in_schema=False)
def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")
