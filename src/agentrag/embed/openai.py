"""Any OpenAI-compatible `/v1/embeddings` endpoint: TEI, vLLM, Ollama, llama.cpp, or a cloud API."""

from __future__ import annotations

import base64
import os
from typing import Any, Literal

import numpy as np

from agentrag.breaker import Breaker
from agentrag.embed.base import Vectors, normalize_rows
from agentrag.errors import ConfigError, EmbeddingError
from agentrag.settings import EmbedderSettings

# Most servers cap a request's input list; 64 is accepted by TEI, vLLM, Ollama and OpenAI alike.
REQUEST_BATCH = 64


class OpenAIEmbedder:
    def __init__(self, settings: EmbedderSettings) -> None:
        import openai

        if not settings.model:
            raise ConfigError("embedder.model is required for the openai provider (e.g. 'bge-m3')")
        base_url = settings.base_url or os.environ.get("OPENAI_BASE_URL")
        api_key = settings.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        if not base_url and api_key == "not-needed":
            raise ConfigError("embedder.base_url (or OPENAI_BASE_URL) is required for the openai provider")
        self._settings = settings
        self._model = settings.model
        self._base_url = base_url or "https://api.openai.com/v1"
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=settings.timeout_s, max_retries=settings.max_retries
        )
        self._dim = settings.dimension
        # An endpoint that could not be reached fails at once for a while, not after the retries every time.
        self._breaker = Breaker(settings.unreachable_cooldown_s)
        # base64 (little-endian float32) is decoded by numpy at once; JSON floats cost the SDK a fifth of an
        # ingest. An endpoint that refuses it (400/422 naming the field) is asked for floats from then on.
        self._encoding: Literal["base64", "float"] = "base64"

    @property
    def name(self) -> str:
        return f"openai/{self._model}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._request(["dimension probe"]).shape[1])
        return self._dim

    def _request(self, texts: list[str]) -> Vectors:
        import openai

        refusal = self._breaker.refusal()
        if refusal is not None:
            raise EmbeddingError(refusal)
        try:
            response = self._create(texts)
            self._breaker.reset()
        except openai.APITimeoutError as exc:
            raise EmbeddingError(
                f"embeddings endpoint {self._base_url} timed out after {self._settings.timeout_s:g}s"
            ) from exc
        except openai.APIConnectionError as exc:
            problem = f"cannot reach embeddings endpoint {self._base_url}: {exc}"
            self._breaker.trip(problem)
            raise EmbeddingError(problem) from exc
        except openai.APIStatusError as exc:
            raise EmbeddingError(
                f"embeddings endpoint {self._base_url} answered {exc.status_code}: {exc.message}"
            ) from exc
        rows = sorted(response.data, key=lambda d: d.index)
        if len(rows) != len(texts):
            raise EmbeddingError(
                f"embeddings endpoint {self._base_url} returned {len(rows)} vectors for {len(texts)} inputs"
            )
        vectors = _decode([r.embedding for r in rows])
        if self._dim is not None and vectors.shape[1] != self._dim:
            raise EmbeddingError(
                f"embeddings endpoint {self._base_url} returned {vectors.shape[1]}-dimensional vectors; "
                f"expected {self._dim} (embedder.dimension)"
            )
        return normalize_rows(vectors)

    def _create(self, texts: list[str]) -> Any:
        import openai

        try:
            return self._client.embeddings.create(model=self._model, input=texts, encoding_format=self._encoding)
        except openai.APIStatusError as exc:
            if self._encoding == "float" or exc.status_code not in (400, 422) or "encoding" not in str(exc.message):
                raise
            self._encoding = "float"
            return self._client.embeddings.create(model=self._model, input=texts, encoding_format="float")

    def _encode(self, texts: list[str], prefix: str) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [
            self._request([prefix + t for t in texts[i : i + REQUEST_BATCH]])
            for i in range(0, len(texts), REQUEST_BATCH)
        ]
        return np.vstack(parts)

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._encode(texts, self._settings.query_prefix)

    def embed_passages(self, texts: list[str]) -> Vectors:
        return self._encode(texts, self._settings.passage_prefix)


def _decode(embeddings: list[Any]) -> Vectors:
    """Rows as the endpoint sent them: base64 strings of float32s, or JSON floats from one that ignored the ask."""
    if embeddings and all(isinstance(e, str) for e in embeddings):
        return (
            np.frombuffer(b"".join(base64.b64decode(e) for e in embeddings), dtype="<f4")
            .reshape(len(embeddings), -1)
            .astype(np.float32)
        )
    return np.asarray(embeddings, dtype=np.float32)
