"""A local cross-encoder (optional extra `agentrag[st]`, which pulls torch). Slow on CPU: rerank few hits."""

from __future__ import annotations

from typing import Any

from agentrag.errors import ConfigError
from agentrag.settings import RerankSettings

DEFAULT_MODEL = "BAAI/bge-reranker-v2-m3"


class CrossEncoderReranker:
    def __init__(self, settings: RerankSettings) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise ConfigError("the cross-encoder reranker needs the extra: pip install 'agentrag[st]'") from exc
        self._model_name = settings.model or DEFAULT_MODEL
        self._model: Any = CrossEncoder(self._model_name)

    @property
    def name(self) -> str:
        return f"cross-encoder/{self._model_name}"

    def score(self, query: str, passages: list[str]) -> list[float]:
        if not passages:
            return []
        return [float(s) for s in self._model.predict([(query, p) for p in passages])]
