"""Real token usage wherever the service answers with an LLM: the ask endpoint (JSON and SSE) and the chat facade
(JSON and stream) report the tokens the model endpoint counted; model-free answers report 0."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentrag.settings import load_settings
from tests.agent.test_agent_llm import ROLES, role_of
from tests.llm_server import Reply, ScriptedLLM, error, prompt_text, text
from tests.server.conftest import Running, serving
from tests.server.test_answer_fields import sse_events
from tests.server.test_api import AURORA, make_kb, upload

PROMPT, COMPLETION = 100, 7  # what the scripted endpoint reports for every call


def script(body: dict[str, Any], index: int) -> Reply:
    """The grader passes every passage, the synthesizer answers from passage [1]; other roles fail (their rules
    take over), so only calls that returned count."""
    role = role_of(body)
    if role == "grader":
        ids = re.findall(r"^\[(\d+)\]", prompt_text(body), re.M)
        grades = [{"id": int(i), "grade": "correct", "reason": "ok"} for i in ids]
        reply = text(json.dumps({"grades": grades}))
    elif role == "synthesizer":
        reply = text("Error E1042 means the query is too complex [1].")
    else:
        return error(500, "not scripted")
    return reply.with_(prompt_tokens=PROMPT, completion_tokens=COMPLETION)


@pytest.fixture
def with_llm(tmp_path: Path) -> Iterator[Running]:
    with ScriptedLLM(script) as llm:
        llm_config = {
            "base_url": llm.base_url,
            "api_key": "test-key",
            "model": "m-default",
            "role_models": {r: f"m-{r}" for r in ROLES},
            "max_retries": 0,
        }
        settings = load_settings(tmp_path / "home", server={"requests_per_minute": 600}, llm=llm_config)
        with serving(settings) as running:
            yield running


def expected(usage: dict[str, Any]) -> dict[str, int]:
    calls = usage["llm_calls"]
    assert calls >= 1, "the LLM answered"
    return {"prompt_tokens": PROMPT * calls, "completion_tokens": COMPLETION * calls, "total_tokens": 107 * calls}


def test_every_answer_that_used_the_llm_reports_its_tokens(with_llm: Running) -> None:
    client = make_kb(with_llm, "kb")
    assert upload(client, "kb", "aurora.md", AURORA).status_code == 201

    def chat(question: str, **extra: Any) -> dict[str, Any]:
        return {"model": "kb", "messages": [{"role": "user", "content": question}], **extra}

    completion = client.post("/v1/chat/completions", json=chat("What does error E1042 mean?")).json()
    assert "too complex" in completion["choices"][0]["message"]["content"]
    assert completion["usage"] == expected(completion["agentrag"]["usage"])

    chunks = [d for _, d in sse_events(client, "/v1/chat/completions", chat("What is E1042?", stream=True))]
    last = chunks[-1]
    assert last["choices"][0]["finish_reason"] == "stop"
    assert last["usage"] == expected(last["agentrag"]["usage"])
    with_usage = chat("What is the meaning of E1042?", stream=True, stream_options={"include_usage": True})
    chunks = [d for _, d in sse_events(client, "/v1/chat/completions", with_usage)]
    assert chunks[-1]["choices"] == [], "the usage chunk the OpenAI API sends when asked"
    assert chunks[-1]["usage"] == expected(chunks[-2]["agentrag"]["usage"])

    answer = client.post("/v1/kb/kb/ask", json={"question": "What does the error E1042 mean?"}).json()
    assert answer["usage"]["prompt_tokens"] == PROMPT * answer["usage"]["llm_calls"] > 0
    done = sse_events(client, "/v1/kb/kb/ask", {"question": "What does E1042 mean?", "stream": True})[-1][1]
    assert done["usage"]["completion_tokens"] == COMPLETION * done["usage"]["llm_calls"] > 0


def test_a_model_free_answer_reports_no_tokens(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA)
    chat = {"model": "kb", "messages": [{"role": "user", "content": "What does error E1042 mean?"}]}
    completion = client.post("/v1/chat/completions", json=chat).json()
    assert completion["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    last = [d for _, d in sse_events(client, "/v1/chat/completions", {**chat, "stream": True})][-1]
    assert last["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
