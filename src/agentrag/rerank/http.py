"""A `/v1/rerank` endpoint (Jina/Cohere shape, served by TEI, vLLM, Xinference, LocalAI...)."""

from __future__ import annotations

import httpx

from agentrag.errors import ConfigError, RerankError
from agentrag.settings import RerankSettings


class HttpReranker:
    def __init__(self, settings: RerankSettings) -> None:
        if not settings.base_url:
            raise ConfigError("rerank.base_url is required for the http reranker (e.g. http://localhost:8080/v1)")
        self._settings = settings
        self._url = settings.base_url.rstrip("/") + "/rerank"
        headers = {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}
        self._client = httpx.Client(timeout=settings.timeout_s, headers=headers)

    @property
    def name(self) -> str:
        return f"http/{self._settings.model or 'default'}"

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        body: dict[str, object] = {"query": query, "documents": passages, "top_n": len(passages)}
        if self._settings.model:
            body["model"] = self._settings.model
        try:
            response = self._client.post(self._url, json=body)
            response.raise_for_status()
            results = response.json()["results"]
            scores = [0.0] * len(passages)
            for r in results:
                scores[int(r["index"])] = float(r.get("relevance_score", r.get("score", 0.0)))
        except httpx.HTTPError as exc:
            raise RerankError(f"rerank endpoint {self._url} failed: {exc}") from exc
        except (KeyError, ValueError, TypeError, IndexError) as exc:
            raise RerankError(f"rerank endpoint {self._url} returned an unexpected body: {exc}") from exc
        return scores
