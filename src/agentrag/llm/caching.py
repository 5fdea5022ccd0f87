"""LLM calls answered from the cache: an identical request is not sent to the model again.

A completion is kept under a hash of the whole request (model, messages, tools, every parameter) together with
the endpoint and `cache_scope()` (the knowledge base and its generation), so an update to the knowledge base
can never bring back an answer written from the old content. A cached completion cost no tokens: it comes back
with zero usage and `cached=True`. A stream is kept as its whole text, and only once it finished.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from agentrag.cache import Cache, cache_key
from agentrag.llm.types import ChatResponse

logger = logging.getLogger(__name__)

# Key namespaces: a stream's text and a completion of the same request are different entries.
COMPLETION = "llm"
STREAM = "llm-stream"


class LLMCache:
    """The client's view of its cache (or of no cache: then nothing is kept and every call asks the model)."""

    def __init__(self, cache: Cache | None, endpoint: str, scope: Callable[[], str] | None) -> None:
        self._cache = cache
        self._endpoint = endpoint
        self._scope = scope

    def key(self, namespace: str, params: dict[str, Any]) -> str | None:
        """The key of the request `params` under the current scope; None without a cache."""
        if self._cache is None:
            return None
        scope = self._scope() if self._scope is not None else ""
        return cache_key(namespace, self._endpoint, scope, params)

    def completion(self, params: dict[str, Any], ask_model: Callable[[], ChatResponse]) -> ChatResponse:
        """The cached completion of `params` (no tokens spent), or `ask_model()`'s, which is then kept."""
        key = self.key(COMPLETION, params)
        if key is not None and self._cache is not None:
            cached = self._cache.get(key)
            if cached is not None:
                try:
                    return ChatResponse.model_validate_json(cached).model_copy(
                        update={"prompt_tokens": 0, "completion_tokens": 0, "cached": True}
                    )
                except ValidationError:
                    logger.debug("ignoring an unreadable LLM cache entry")
        response = ask_model()
        if key is not None and self._cache is not None:
            self._cache.set(key, response.model_dump_json().encode("utf-8"))
        return response

    def stream_text(self, key: str | None) -> str | None:
        """The whole text of a finished stream kept under `key`, if any."""
        if key is None or self._cache is None:
            return None
        cached = self._cache.get(key)
        return cached.decode("utf-8") if cached is not None else None

    def keep_stream(self, key: str | None, text: str) -> None:
        if key is not None and self._cache is not None:
            self._cache.set(key, text.encode("utf-8"))
