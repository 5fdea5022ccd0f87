"""The LLM client through the real `openai` SDK and HTTP, against the scripted server in tests/llm_server.py."""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import openai
import pytest
from pydantic import BaseModel, Field

from agentrag.errors import ConfigError, LLMError, LLMOutputError, LLMTimeout, LLMUnavailable
from agentrag.llm import (
    LLMClient,
    TokenMeter,
    estimate_message_tokens,
    estimate_tokens,
    extract_json,
    make_llm,
    model_free_notice,
    truncate_to_tokens,
)
from agentrag.settings import LLMSettings
from tests.llm_server import ScriptedLLM, error, llm_settings, prompt_text, raw, text, tool_calls
from tests.servers import free_port

USER = [{"role": "user", "content": "What does the Kestrel service do?"}]
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "semantic_search",
        "description": "Search the knowledge base by meaning.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}


class Grade(BaseModel):
    verdict: Literal["correct", "ambiguous", "incorrect"]
    confidence: float = Field(ge=0, le=1)


GOOD = '{"verdict": "correct", "confidence": 0.9}'


def last_user(body: dict[str, Any]) -> str:
    content = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    assert isinstance(content, str)
    return content


# ------------------------------------------------------------------------------------------------ chat


def test_chat_returns_the_reply_and_adds_reported_usage_to_the_meter() -> None:
    replies = [
        text("Kestrel is the queue service.", prompt_tokens=40, completion_tokens=7),
        text("It is owned by storage."),
    ]
    with ScriptedLLM(replies) as llm:
        client = LLMClient(llm_settings(llm, temperature=0.2, max_output_tokens=300))
        meter = TokenMeter()
        first = client.chat(USER, role="synthesizer", meter=meter)
        second = client.chat(USER, role="synthesizer", meter=meter, max_tokens=50)
    assert first.content == "Kestrel is the queue service."
    assert first.finish_reason == "stop"
    assert (first.prompt_tokens, first.completion_tokens, first.model) == (40, 7, "scripted-model")
    # Default usage from the server is a word count: 6 words asked, 5 answered.
    assert (second.prompt_tokens, second.completion_tokens) == (6, 5)
    assert (meter.calls, meter.prompt_tokens, meter.completion_tokens, meter.total) == (2, 46, 12, 58)
    body = llm.requests[0]
    assert body["messages"] == USER
    assert (body["model"], body["temperature"], body["max_tokens"]) == ("scripted-model", 0.2, 300)
    assert llm.requests[1]["max_tokens"] == 50
    assert llm.headers[0]["authorization"] == "Bearer test-key"


def test_usage_is_estimated_when_the_server_omits_it() -> None:
    with ScriptedLLM([text("住宿标准为每晚五百元。", usage=False)]) as llm:
        meter = TokenMeter()
        response = LLMClient(llm_settings(llm)).chat(USER, role="agent", meter=meter)
    assert response.completion_tokens == estimate_tokens("住宿标准为每晚五百元。") == 11
    assert response.prompt_tokens == estimate_message_tokens(USER) > 0
    assert meter.calls == 1


def test_tool_calls_are_parsed_with_ids_names_and_raw_arguments() -> None:
    reply = tool_calls([("semantic_search", {"query": "Kestrel owner"}), ("keyword_search", '{"query": "E-42"')])
    with ScriptedLLM([reply]) as llm:
        client = LLMClient(llm_settings(llm))
        response = client.chat(USER, role="agent", tools=[SEARCH_TOOL], tool_choice="auto")
    assert response.finish_reason == "tool_calls"
    assert [(c.id, c.name) for c in response.tool_calls] == [
        ("call_0_0", "semantic_search"),
        ("call_0_1", "keyword_search"),
    ]
    assert json.loads(response.tool_calls[0].arguments) == {"query": "Kestrel owner"}
    assert response.tool_calls[1].arguments == '{"query": "E-42"'  # malformed arguments reach the tool layer as is
    assert llm.requests[0]["tools"] == [SEARCH_TOOL]
    assert llm.requests[0]["tool_choice"] == "auto"
    message = response.as_message()
    assert message["role"] == "assistant"
    assert message["tool_calls"][0]["function"] == {
        "name": "semantic_search",
        "arguments": '{"query": "Kestrel owner"}',
    }


def test_each_role_uses_its_own_model() -> None:
    with ScriptedLLM([text("a"), text("b")]) as llm:
        client = LLMClient(llm_settings(llm, role_models={"grader": "small-grader"}))
        client.chat(USER, role="grader")
        client.chat(USER, role="synthesizer")
    assert [r["model"] for r in llm.requests] == ["small-grader", "scripted-model"]


def test_concurrent_calls_add_into_one_meter() -> None:
    with ScriptedLLM(lambda body, i: text("ok", delay=0.05, prompt_tokens=10, completion_tokens=1)) as llm:
        client = LLMClient(llm_settings(llm))
        meter = TokenMeter()
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: client.chat(USER, role="grader", meter=meter), range(16)))
    assert (meter.calls, meter.prompt_tokens, meter.completion_tokens) == (16, 160, 16)


# ------------------------------------------------------------------------------------------- streaming


def test_stream_yields_the_deltas_in_order_and_records_the_usage_chunk() -> None:
    reply = text(
        "Kestrel is owned by storage.", pieces=["Kes", "trel is ", "owned by ", "storage."], completion_tokens=6
    )
    with ScriptedLLM([reply]) as llm:
        meter = TokenMeter()
        deltas = list(LLMClient(llm_settings(llm)).stream(USER, role="synthesizer", meter=meter))
    assert deltas == ["Kes", "trel is ", "owned by ", "storage."]
    assert (meter.calls, meter.prompt_tokens, meter.completion_tokens) == (1, 6, 6)
    assert llm.requests[0]["stream"] is True
    assert llm.requests[0]["stream_options"] == {"include_usage": True}


def test_an_identical_call_is_answered_from_the_cache_and_a_new_scope_asks_the_model_again() -> None:
    from agentrag.cache import MemoryCache

    scope = ["kb@1"]
    replies = [text("Kestrel is the queue service."), text("Kestrel is the new queue service."), text("Streamed.")]
    with ScriptedLLM(replies) as llm:
        client = LLMClient(llm_settings(llm), cache=MemoryCache(), cache_scope=lambda: scope[0])
        meter = TokenMeter()
        first = client.chat(USER, role="synthesizer", meter=meter)
        again = client.chat(USER, role="synthesizer", meter=meter)
        assert len(llm.requests) == 1, "the second identical call never reached the model"
        assert (again.content, again.cached, again.prompt_tokens) == (first.content, True, 0)
        assert meter.calls == 1
        scope[0] = "kb@2"  # the knowledge base changed: nothing written from the old content may come back
        assert client.chat(USER, role="synthesizer").content == "Kestrel is the new queue service."
        assert "".join(client.stream(USER, role="planner")) == "Streamed."
        assert "".join(client.stream(USER, role="planner")) == "Streamed."
    assert len(llm.requests) == 3


def test_stream_without_a_usage_chunk_estimates_the_usage() -> None:
    with ScriptedLLM([text("报销标准 is five hundred.", usage=False)]) as llm:
        meter = TokenMeter()
        assert "".join(LLMClient(llm_settings(llm)).stream(USER, role="synthesizer", meter=meter)) == (
            "报销标准 is five hundred."
        )
    assert meter.completion_tokens == estimate_tokens("报销标准 is five hundred.")
    assert meter.prompt_tokens == estimate_message_tokens(USER)


def test_a_stream_that_stalls_times_out_after_the_deltas_already_yielded() -> None:
    with ScriptedLLM([text("one two three four", stall_after=2, stall=10)]) as llm:
        meter = TokenMeter()
        deltas: list[str] = []
        start = time.monotonic()
        stream = LLMClient(llm_settings(llm)).stream(USER, role="synthesizer", timeout_s=1, meter=meter)
        with pytest.raises(LLMTimeout, match=r"timed out after 1s"):
            deltas.extend(stream)
        elapsed = time.monotonic() - start
    assert deltas == ["one ", "two "]
    assert elapsed < 1 + 1.5
    assert meter.calls == 1  # what arrived is still accounted for
    assert meter.completion_tokens == estimate_tokens("one two ")


def test_a_stream_cut_off_mid_answer_raises_unavailable_after_the_deltas() -> None:
    with ScriptedLLM([text("one two three four", cut_after=3)]) as llm:
        deltas: list[str] = []
        stream = LLMClient(llm_settings(llm)).stream(USER, role="synthesizer")
        with pytest.raises(LLMUnavailable, match=r"broke off"):
            deltas.extend(stream)
    assert deltas == ["one ", "two ", "three "]


def test_a_stream_refused_before_any_delta_raises_the_endpoint_error() -> None:
    with (
        ScriptedLLM([error(401, "invalid api key")]) as llm,
        pytest.raises(LLMUnavailable, match=r"refused the API key \(401\): invalid api key"),
    ):
        list(LLMClient(llm_settings(llm)).stream(USER, role="synthesizer"))


# ------------------------------------------------------------------------------------------ structured


def test_structured_parses_a_valid_reply_and_requests_the_json_schema() -> None:
    with ScriptedLLM([text(f"Here is my grade:\n```json\n{GOOD}\n```")]) as llm:
        meter = TokenMeter()
        grade = LLMClient(llm_settings(llm)).structured(
            USER, Grade, role="grader", meter=meter, examples='{"verdict": "incorrect", "confidence": 0.2}'
        )
    assert grade == Grade(verdict="correct", confidence=0.9)
    body = llm.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "Grade"
    assert body["response_format"]["json_schema"]["schema"] == Grade.model_json_schema()
    assert body["response_format"]["json_schema"]["strict"] is False
    prompt = last_user(body)
    assert prompt.startswith(USER[0]["content"])
    assert json.dumps(Grade.model_json_schema()) in prompt  # the schema is stated in the prompt as well
    assert '"verdict": "incorrect"' in prompt
    assert meter.calls == 1


def test_structured_repairs_an_invalid_reply_once() -> None:
    bad = '{"verdict": "correct", "confidence": "very"}'
    with ScriptedLLM([text(bad), text(GOOD)]) as llm:
        meter = TokenMeter()
        grade = LLMClient(llm_settings(llm, json_mode="json_object")).structured(
            USER, Grade, role="grader", meter=meter
        )
    assert grade.confidence == 0.9
    assert len(llm.requests) == 2
    repair = llm.requests[1]
    assert repair["response_format"] == {"type": "json_object"}
    assert repair["messages"][-2] == {"role": "assistant", "content": bad}
    assert "confidence: Input should be a valid number" in last_user(repair)
    assert meter.calls == 2


def test_structured_repair_names_a_json_syntax_error() -> None:
    with ScriptedLLM([text('{"verdict": "correct" "confidence": 0.5}'), text(GOOD)]) as llm:
        LLMClient(llm_settings(llm, json_mode="none")).structured(USER, Grade, role="grader")
    assert "response_format" not in llm.requests[0]
    assert "not valid JSON (Expecting ',' delimiter" in last_user(llm.requests[1])


def test_structured_invalid_twice_raises_output_error() -> None:
    with ScriptedLLM([text("I think it is correct."), text('{"verdict": "maybe", "confidence": 2}')]) as llm:
        meter = TokenMeter()
        with pytest.raises(LLMOutputError, match=r"invalid Grade output twice: .*verdict: Input should be"):
            LLMClient(llm_settings(llm)).structured(USER, Grade, role="grader", meter=meter)
    assert len(llm.requests) == 2
    assert "no JSON object in the reply" in last_user(llm.requests[1])
    assert meter.calls == 2


def test_a_server_rejecting_response_format_is_asked_without_it_and_that_is_remembered(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def script(body: dict[str, Any], i: int) -> Any:
        if "response_format" in body:
            return error(400, "response_format is not supported by this server")
        return text(GOOD)

    with ScriptedLLM(script) as llm, caplog.at_level(logging.WARNING, logger="agentrag.llm.client"):
        client = LLMClient(llm_settings(llm))
        assert client.structured(USER, Grade, role="grader").verdict == "correct"
        assert client.structured(USER, Grade, role="grader").verdict == "correct"
    formats = [r.get("response_format", {}).get("type") for r in llm.requests]
    assert formats == ["json_schema", "json_object", None, None]
    assert client.json_mode == "none"
    assert all("JSON schema" in last_user(r) for r in llm.requests)
    warnings = [r.getMessage() for r in caplog.records if r.name == "agentrag.llm.client"]
    assert len(warnings) == 1
    assert "rejects response_format" in warnings[0]


def test_a_server_with_json_object_but_not_json_schema_keeps_json_object() -> None:
    def script(body: dict[str, Any], i: int) -> Any:
        if body.get("response_format", {}).get("type") == "json_schema":
            return error(400, "This response_format type is unavailable now")
        return text(GOOD)

    with ScriptedLLM(script) as llm:
        client = LLMClient(llm_settings(llm))
        client.structured(USER, Grade, role="grader")
        client.structured(USER, Grade, role="grader")
    assert [r["response_format"]["type"] for r in llm.requests] == ["json_schema", "json_object", "json_object"]


def test_a_bad_request_unrelated_to_optional_parameters_is_not_retried_or_remembered() -> None:
    with ScriptedLLM([error(400, "prompt is longer than the context window (8192 tokens)")]) as llm:
        client = LLMClient(llm_settings(llm))
        with pytest.raises(LLMError, match=r"rejected the request \(400\): prompt is longer") as caught:
            client.chat(USER, role="synthesizer")
    assert caught.value.status == 400
    assert not isinstance(caught.value, LLMUnavailable)
    assert len(llm.requests) == 1


def test_max_completion_tokens_is_sent_once_the_server_asks_for_it() -> None:
    def script(body: dict[str, Any], i: int) -> Any:
        if "max_tokens" in body:
            return error(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.")
        return text("ok")

    with ScriptedLLM(script) as llm:
        client = LLMClient(llm_settings(llm, max_output_tokens=200))
        client.chat(USER, role="agent")
        client.chat(USER, role="agent")
    assert [r.get("max_completion_tokens") for r in llm.requests] == [None, 200, 200]


def test_structured_output_helpers_tolerate_fences_thinking_and_prose() -> None:
    assert extract_json('<think>the user wants {x}</think>\nSure! {"a": [1, {"b": 2}]} Hope this helps.') == {
        "a": [1, {"b": 2}]
    }
    assert extract_json("```\n[1, 2]\n```") == [1, 2]
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("no json here")


# ---------------------------------------------------------------------------------- failures and budgets


def test_a_rate_limit_is_retried_honouring_retry_after() -> None:
    with ScriptedLLM([error(429, "slow down", headers={"Retry-After": "0"}), text("ok")]) as llm:
        client = LLMClient(llm_settings(llm, max_retries=2))
        start = time.monotonic()
        assert client.chat(USER, role="agent").content == "ok"
        assert time.monotonic() - start < 0.4  # Retry-After: 0 means now, not the 0.5 s default backoff
    assert len(llm.requests) == 2


def test_a_server_error_that_persists_raises_unavailable_naming_the_endpoint() -> None:
    with ScriptedLLM(lambda body, i: error(500, "CUDA out of memory")) as llm:
        client = LLMClient(llm_settings(llm, max_retries=1))
        start = time.monotonic()
        with pytest.raises(LLMUnavailable) as caught:
            client.chat(USER, role="agent")
        elapsed = time.monotonic() - start
    message = str(caught.value)
    assert f"model 'scripted-model' at {llm.base_url} answered 500: CUDA out of memory" in message
    assert "gave up after 2 attempts" in message
    assert caught.value.status == 500
    assert len(llm.requests) == 2
    assert 0.3 < elapsed < 1.5  # one backoff of about half a second


def test_no_retry_is_started_that_cannot_finish_before_the_deadline() -> None:
    with ScriptedLLM(lambda body, i: error(503, "overloaded", headers={"Retry-After": "30"})) as llm:
        client = LLMClient(llm_settings(llm, max_retries=5))
        start = time.monotonic()
        with pytest.raises(LLMUnavailable, match=r"answered 503: overloaded \(no time left for a retry within 2s\)"):
            client.chat(USER, role="agent", timeout_s=2)
        assert time.monotonic() - start < 1
    assert len(llm.requests) == 1


def test_a_reply_slower_than_the_timeout_raises_timeout_in_time() -> None:
    with ScriptedLLM([text("late", delay=5)]) as llm:
        client = LLMClient(llm_settings(llm, timeout_s=20, max_retries=3))
        start = time.monotonic()
        with pytest.raises(LLMTimeout) as caught:
            client.chat(USER, role="agent", timeout_s=0.5)
        elapsed = time.monotonic() - start
    assert str(caught.value) == f"model 'scripted-model' at {llm.base_url} timed out after 0.5s"
    assert elapsed < 0.5 + 1.5
    assert len(llm.requests) == 1  # a timeout used the whole budget: no retry


def test_no_time_left_raises_timeout_without_calling() -> None:
    with ScriptedLLM([]) as llm, pytest.raises(LLMTimeout, match="no time left"):
        LLMClient(llm_settings(llm)).chat(USER, role="agent", timeout_s=0)
    assert llm.requests == []


def test_connection_refused_raises_unavailable() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    client = LLMClient(LLMSettings(base_url=url, model="qwen2.5", max_retries=0))
    with pytest.raises(LLMUnavailable, match=rf"cannot reach model 'qwen2.5' at {url}"):
        client.chat(USER, role="agent", timeout_s=3)


def test_an_unknown_model_names_the_server_message_and_what_to_check() -> None:
    with (
        ScriptedLLM([error(404, "model 'qwen9' not found")]) as llm,
        pytest.raises(LLMUnavailable, match=r"answered 404: model 'qwen9' not found; check the model name"),
    ):
        LLMClient(llm_settings(llm, model="qwen9")).chat(USER, role="agent")


def test_a_body_that_is_not_json_is_an_llm_error() -> None:
    with (
        ScriptedLLM([raw(200, "<html>proxy error</html>")]) as llm,
        pytest.raises(LLMError, match="unreadable response"),
    ):
        LLMClient(llm_settings(llm)).chat(USER, role="agent")


# ----------------------------------------------------------------------------------- configuration


def test_without_configuration_there_is_no_client_and_one_plain_notice() -> None:
    settings = LLMSettings()
    assert make_llm(settings) is None
    notice = model_free_notice(settings)
    assert notice is not None
    assert "OPENAI_BASE_URL" in notice
    assert "model-free" in notice
    configured = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m")
    assert isinstance(make_llm(configured), LLMClient)
    assert model_free_notice(configured) is None


def test_an_endpoint_without_a_model_is_a_configuration_error() -> None:
    with pytest.raises(ConfigError, match="AGENTRAG_LLM_MODEL"):
        make_llm(LLMSettings(base_url="http://127.0.0.1:9/v1"))


# ---------------------------------------------------------------------------------------- tokens


def test_token_estimate_counts_cjk_per_character_and_other_text_per_four_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("住宿标准") == 4
    assert estimate_tokens("E-42 报错") == 2 + 2


def test_truncation_ends_at_a_sentence_boundary_near_the_cut() -> None:
    body = "The first sentence is here. The second one follows it. The third sentence runs on and on and on."
    cut = truncate_to_tokens(body, 16)
    assert cut == "The first sentence is here. The second one follows it."
    assert truncate_to_tokens(body, 1000) == body
    chinese = "住宿标准为每晚五百元。出差补贴每天一百元。交通费实报实销。"
    assert truncate_to_tokens(chinese, 24) == "住宿标准为每晚五百元。出差补贴每天一百元。"
    assert truncate_to_tokens("word " * 40, 5).endswith("word")  # no sentence end nearby: a word boundary


# ---------------------------------------------------------------------------------- the test server


def test_the_scripted_server_lists_models_and_fails_loudly_when_under_scripted() -> None:
    # The code under test swallowed the 500; leaving the block still fails the test.
    exhausted = pytest.raises(AssertionError, match=r"script exhausted: request #1 arrived but only 1 replies")
    with exhausted, ScriptedLLM([text("only one")], models=("a", "b")) as llm:
        sdk = openai.OpenAI(base_url=llm.base_url, api_key="x", max_retries=0)
        assert [m.id for m in sdk.models.list()] == ["a", "b"]
        client = LLMClient(llm_settings(llm))
        client.chat(USER, role="agent")
        with pytest.raises(LLMUnavailable, match="script exhausted"):
            client.chat(USER, role="agent")
    assert "Kestrel" in prompt_text(llm.requests[0])
