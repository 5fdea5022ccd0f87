"""Strict JSON for request bodies, and a validation-error answer that cannot itself fail.

Python's `json` accepts `NaN`, `Infinity` and lone surrogate escapes (`"\\ud800"`); none is JSON text a
client means to send, and each broke something later (the 422 handler could not encode them, the store
could not write them). Every route parses its body with `loads_strict`, so they are a 422 `json_invalid`
naming the problem; the handler turns whatever it is given into encodable JSON as a last guard.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

# A surrogate escape that is not half of a proper pair: where the error points.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check_strings(value: Any, doc: str) -> None:
    if isinstance(value, str):
        strings = [value]
    elif isinstance(value, dict):
        strings = list(value)
        for item in value.values():
            _check_strings(item, doc)
    elif isinstance(value, list):
        strings = []
        for item in value:
            _check_strings(item, doc)
    else:
        return
    if any(_has_lone_surrogate(s) for s in strings):
        found = _LONE_SURROGATE.search(doc)
        raise json.JSONDecodeError("lone surrogate in a string: not valid Unicode", doc, found.start() if found else 0)


def loads_strict(data: bytes | str) -> Any:
    """`json.loads` that refuses NaN, Infinity, lone surrogates and bytes that are not UTF-8 with a `JSONDecodeError`
    saying which."""
    if isinstance(data, bytes):
        try:
            doc = data.decode("utf-8")
        except UnicodeDecodeError as exc:  # a JSONDecodeError, so FastAPI answers 422 json_invalid, not a 400
            raise json.JSONDecodeError("not UTF-8 text", data.decode("utf-8", "replace"), exc.start) from None
    else:
        doc = data

    def refuse(name: str) -> Any:
        raise json.JSONDecodeError(f"{name} is not a JSON number", doc, max(doc.find(name), 0))

    value = json.loads(doc, parse_constant=refuse)
    _check_strings(value, doc)
    return value


class _StrictRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = loads_strict(await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    """A route whose JSON body is parsed by `loads_strict` (FastAPI's documented custom-Request hook)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict_handler(request: Request) -> Response:
            return await handler(_StrictRequest(request.scope, request.receive))

        return strict_handler


def api_router(**kwargs: Any) -> APIRouter:
    """Every router of the service: strict JSON bodies."""
    return APIRouter(route_class=StrictJSONRoute, **kwargs)


def _encodable(value: Any) -> Any:
    """Non-finite floats as text and surrogates escaped, so the answer is always valid UTF-8 JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and _has_lone_surrogate(value):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encodable(v) for v in value]
    return value


ECHO_CHARS = 200  # of an invalid input echoed back: enough to recognise it, not the whole megabyte


def _short(error: dict[str, Any]) -> dict[str, Any]:
    value = error.get("input")
    if isinstance(value, str) and len(value) > ECHO_CHARS:
        return {**error, "input": value[:ECHO_CHARS] + f"... ({len(value)} characters)"}
    return error


def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    """FastAPI's 422 shape (`{"detail": [errors]}`), encodable whatever the input was."""
    errors = [_short(e) if isinstance(e, dict) else e for e in jsonable_encoder(exc.errors())]
    return JSONResponse({"detail": _encodable(errors)}, status_code=422)
