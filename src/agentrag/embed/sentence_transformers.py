"""sentence-transformers models (optional extra `agentrag[st]`: pulls torch, so not in the default install)."""

from __future__ import annotations

from typing import Any

import numpy as np

from agentrag.embed.base import Vectors
from agentrag.errors import ConfigError
from agentrag.settings import EmbedderSettings
from agentrag.threads import libraries_loaded


class SentenceTransformerEmbedder:
    def __init__(self, settings: EmbedderSettings) -> None:
        if not settings.model:
            raise ConfigError("embedder.model is required for the sentence-transformers provider")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError("the sentence-transformers provider needs the extra: pip install 'agentrag[st]'") from exc
        self._settings = settings
        self._model: Any = SentenceTransformer(settings.model)
        libraries_loaded()  # torch's OpenMP runtime, for the retriever's one-thread query encode
        self._dim = int(self._model.get_sentence_embedding_dimension())

    @property
    def name(self) -> str:
        return f"sentence-transformers/{self._settings.model}"

    @property
    def dim(self) -> int:
        return self._dim

    def _encode(self, texts: list[str], prefix: str) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        out = self._model.encode([prefix + t for t in texts], normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(out, dtype=np.float32)

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._encode(texts, self._settings.query_prefix)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._encode(texts, self._settings.passage_prefix)
