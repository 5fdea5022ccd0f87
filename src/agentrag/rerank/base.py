"""The Reranker protocol and its factory."""

from __future__ import annotations

from typing import Protocol

from agentrag.errors import ConfigError
from agentrag.settings import RerankSettings


class Reranker(Protocol):
    @property
    def name(self) -> str: ...

    def score(self, query: str, passages: list[str]) -> list[float]:
        """Relevance of each passage to the query, higher is better, in the order given."""
        ...


def make_reranker(settings: RerankSettings) -> Reranker | None:
    if settings.provider == "none":
        return None
    if settings.provider == "http":
        from agentrag.rerank.http import HttpReranker

        return HttpReranker(settings)
    if settings.provider == "cross-encoder":
        from agentrag.rerank.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(settings)
    raise ConfigError(f"rerank.provider: unknown provider {settings.provider!r}")
