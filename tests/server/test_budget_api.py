"""Budget overrides through HTTP: the ask request and the OpenAI-compatible facade take a `budget` object,
checked against the budget model (422 naming the field)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.server.conftest import Running
from tests.server.test_api import make_kb, upload

COMPARISON = "What is the difference between Aurora and Kestrel?"  # the agent searches once per side and more


@pytest.fixture
def client(running: Running) -> httpx.Client:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", "# Aurora\n\nAurora is the search API. Error E1042 means quota exhausted.\n")
    upload(client, "kb", "kestrel.md", "# Kestrel\n\nKestrel is the queue service owned by the storage team.\n")
    return client


def test_ask_takes_a_budget(client: httpx.Client) -> None:
    ask = {"question": COMPARISON, "mode": "agent"}
    assert client.post("/v1/kb/kb/ask", json=ask).json()["usage"]["retrieval_calls"] > 1
    limited = client.post("/v1/kb/kb/ask", json={**ask, "budget": {"max_retrieval_calls": 1}})
    assert limited.status_code == 200, limited.text
    assert limited.json()["usage"]["retrieval_calls"] == 1
    with client.stream(
        "POST", "/v1/kb/kb/ask", json={**ask, "stream": True, "budget": {"max_retrieval_calls": 1}}
    ) as r:
        done = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")][-1]
    assert done["usage"]["retrieval_calls"] == 1


@pytest.mark.parametrize(
    ("budget", "named"),
    [
        ({"max_searches": 1}, "max_searches"),
        ({"max_llm_calls": -1}, "max_llm_calls"),
        ({"max_seconds": "soon"}, "max_seconds"),
        ({"context_split": {"history": 2}}, "context_split.history"),
        ({"context_split": {"histroy": 0.2}}, "histroy"),
    ],
)
def test_a_bad_budget_is_a_422_naming_the_field(client: httpx.Client, budget: dict[str, object], named: str) -> None:
    response = client.post("/v1/kb/kb/ask", json={"question": COMPARISON, "budget": budget})
    assert response.status_code == 422
    assert named in response.text
    assert "budget" in json.dumps(response.json()["detail"])
    chat = {"model": "kb", "messages": [{"role": "user", "content": COMPARISON}], "budget": budget}
    response = client.post("/v1/chat/completions", json=chat)
    assert response.status_code == 422
    assert named in response.text


def test_the_openai_facade_takes_a_budget_as_an_extension_field(running: Running, client: httpx.Client) -> None:
    import openai

    sdk = openai.OpenAI(base_url=f"{running.url}/v1", api_key=running.admin)
    messages = [{"role": "user", "content": COMPARISON}]
    completion = sdk.chat.completions.create(
        model="kb",
        messages=messages,  # type: ignore[arg-type]
        extra_body={"budget": {"max_retrieval_calls": 1}},
    )
    assert completion.model_extra
    assert completion.model_extra["agentrag"]["usage"]["retrieval_calls"] == 1
