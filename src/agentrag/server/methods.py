"""A 405 names every method its path has (RFC 9110's `Allow`), not only one route's.

FastAPI keeps one route per method and path, and its 405 lists the methods of the first route whose path
matched: `PUT /v1/kb/x/documents` said `Allow: POST` though `GET` works there too. The table here holds every
route of the service, so the answer lists them all; any other HTTP error goes to FastAPI's own handler.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from starlette.exceptions import HTTPException
from starlette.responses import Response
from starlette.routing import BaseRoute, Route


class AllowedMethods:
    def __init__(self, routes: Iterable[BaseRoute]) -> None:
        self._routes = [(r.path_regex, frozenset(r.methods)) for r in routes if isinstance(r, Route) and r.methods]

    def of(self, path: str) -> list[str]:
        """Every method some route answers at `path` (sorted); empty for a path no route of the table has."""
        return sorted({m for regex, methods in self._routes if regex.match(path) for m in methods})


def http_error_handler(allowed: AllowedMethods) -> Callable[[Request, HTTPException], Awaitable[Response]]:
    async def handle(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 405:
            path = request.scope["path"].removeprefix(request.scope.get("root_path", ""))
            methods = allowed.of(path)
            if methods:  # else a mount (the static files) that set its own
                exc = HTTPException(405, exc.detail, headers={**(exc.headers or {}), "Allow": ", ".join(methods)})
        return await http_exception_handler(request, exc)

    return handle
