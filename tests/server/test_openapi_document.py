"""The OpenAPI document says what the service answers: the error statuses and their bodies, the 405's `Allow`,
the types of body fields. (tests/server/test_schema_fuzz.py holds the whole document to generated requests.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from agentrag.server.app import create_app
from agentrag.server.keys import KeyStore
from agentrag.settings import load_settings


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    return TestClient(create_app(load_settings(tmp_path / "home")))


def _key(client: TestClient, *kbs: str) -> dict[str, str]:
    with KeyStore(client.app.state.service.home) as keys:  # type: ignore[attr-defined]
        _, secret = keys.create(list(kbs))
    return {"Authorization": f"Bearer {secret}"}


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method, path, op) for path, item in document["paths"].items() for method, op in item.items()]


def test_every_422_in_the_document_allows_the_string_detail_the_service_sends(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    answer = client.post("/v1/kb", json={"name": "not/a name"}, headers=_key(client, "kb"))
    assert answer.status_code == 422
    assert isinstance(answer.json()["detail"], str)
    body = document["components"]["schemas"]["ValidationErrorBody"]["properties"]["detail"]
    assert {"type": "string"} in body["anyOf"]
    refs = {
        op["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
        for _, _, op in _operations(document)
        if "422" in op["responses"]
    }
    assert refs == {"#/components/schemas/ValidationErrorBody"}
    assert "HTTPValidationError" not in document["components"]["schemas"]


def test_every_route_behind_a_key_declares_401_and_429_with_their_headers(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    keyed = [(m, p, op) for m, p, op in _operations(document) if p.startswith("/v1/")]
    assert len(keyed) >= 14
    for method, path, op in keyed:
        responses = op["responses"]
        assert "WWW-Authenticate" in responses["401"]["headers"], (method, path)
        assert "Retry-After" in responses["429"]["headers"], (method, path)
    answer = client.get("/v1/kb")
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == "Bearer"


def test_routes_under_a_knowledge_base_declare_the_404_they_answer(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    answer = client.get("/v1/kb/kb/documents", headers=_key(client, "kb"))
    assert answer.status_code == 404
    for method, path, op in _operations(document):
        if "{kb}" in path or path == "/v1/chat/completions":
            error = op["responses"]["404"]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorBody"}, (method, path)


def test_a_405_lists_every_method_its_path_has(client: TestClient) -> None:
    answer = client.put("/v1/kb/kb/documents")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "GET, POST"
    assert client.patch("/v1/kb").headers["allow"] == "GET, POST"
    assert client.get("/v1/kb/kb").headers["allow"] == "DELETE"
    assert client.post("/health").headers["allow"] == "GET"


def test_streamed_answers_are_declared_as_event_streams(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    for path in ("/v1/kb/{kb}/ask", "/v1/chat/completions"):
        content = document["paths"][path]["post"]["responses"]["200"]["content"]
        assert set(content) == {"application/json", "text/event-stream"}


def test_json_integers_and_booleans_are_not_taken_from_strings_or_numbers(client: TestClient) -> None:
    headers = _key(client, "kb")
    assert client.post("/v1/kb", json={"name": "kb"}, headers=headers).status_code == 201
    search = "/v1/kb/kb/search"
    assert client.post(search, json={"query": "q", "k": "10"}, headers=headers).status_code == 422
    assert client.post(search, json={"query": "q", "k": True}, headers=headers).status_code == 422
    assert client.post(search, json={"query": "q", "k": 10.0}, headers=headers).status_code == 200
    ask = client.post("/v1/kb/kb/ask", json={"question": "q", "stream": 0}, headers=headers)
    assert ask.status_code == 422
    assert ask.json()["detail"][0]["loc"] == ["body", "stream"]


def test_a_body_that_is_not_utf8_is_a_422_json_invalid(client: TestClient) -> None:
    headers = {**_key(client, "kb"), "Content-Type": "application/json"}
    answer = client.post("/v1/chat/completions", content=b'{"model": "\xff"}', headers=headers)
    assert answer.status_code == 422
    assert answer.json()["detail"][0]["type"] == "json_invalid"


def test_the_app_serves_again_after_its_lifespan_ran_twice(tmp_path: Path) -> None:
    app = create_app(load_settings(tmp_path / "home"))
    headers = _key(TestClient(app), "kb")
    with TestClient(app) as first:
        assert first.get("/v1/kb", headers=headers).status_code == 200
    with TestClient(app) as second:  # was a 500: the key store closed by the first shutdown
        assert second.get("/v1/kb", headers=headers).status_code == 200


def test_the_document_says_every_v1_route_needs_a_bearer_key(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    assert document["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    for method, path, op in _operations(document):
        assert (op.get("security") == [{"HTTPBearer": []}]) == path.startswith("/v1/"), (method, path)


def test_the_document_describes_the_openai_models_list_and_vector_store_search(client: TestClient) -> None:
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    listed = document["paths"]["/v1/models"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert listed == {"$ref": "#/components/schemas/ModelList"}
    assert set(schemas["ModelObject"]["required"]) >= {"id", "created"}
    search = document["paths"]["/v1/vector_stores/{kb}/search"]["post"]
    body = search["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": "#/components/schemas/VectorStoreSearchBody"}
    assert set(schemas["VectorStoreSearchBody"]["properties"]) == {
        "query", "max_num_results", "filters", "ranking_options", "rewrite_query"
    }  # fmt: skip
    page = search["responses"]["200"]["content"]["application/json"]["schema"]
    assert page == {"$ref": "#/components/schemas/VectorStoreSearchPage"}
    assert set(schemas["VectorStoreSearchResult"]["properties"]) == {
        "file_id",
        "filename",
        "score",
        "attributes",
        "content",
    }
    assert {"401", "404", "413", "422", "429"} <= set(search["responses"])
