"""Requests are bounded however they arrive: question and message length, and the body size whether or not it
declares a Content-Length."""

from __future__ import annotations

from collections.abc import Iterator

from tests.server.conftest import Running
from tests.server.test_api import AURORA, make_kb, upload


def test_a_long_chat_message_or_question_is_a_422_naming_the_limit(running: Running) -> None:
    client = make_kb(running, "kb")
    upload(client, "kb", "aurora.md", AURORA)
    limit = running.settings.server.max_question_chars
    long = "What does E1042 mean? " * (42_000 // 22)
    chat = client.post("/v1/chat/completions", json={"model": "kb", "messages": [{"role": "user", "content": long}]})
    assert chat.status_code == 422, chat.text
    assert "max_question_chars" in chat.json()["detail"]
    assert str(limit) in chat.json()["detail"]
    history = [{"role": "assistant", "content": long}, {"role": "user", "content": "What does E1042 mean?"}]
    assert client.post("/v1/chat/completions", json={"model": "kb", "messages": history}).status_code == 422
    parts = [{"type": "text", "text": long[:3000]}, {"type": "text", "text": long[:3000]}]
    as_parts = client.post(
        "/v1/chat/completions", json={"model": "kb", "messages": [{"role": "user", "content": parts}]}
    )
    assert as_parts.status_code == 422, "content parts count together"
    ask = client.post("/v1/kb/kb/ask", json={"question": "x" * (limit + 1)})
    assert ask.status_code == 422
    assert "max_question_chars" in str(ask.json()["detail"])
    ok = client.post(
        "/v1/chat/completions", json={"model": "kb", "messages": [{"role": "user", "content": long[:200]}]}
    )
    assert ok.status_code == 200


def _chunks(total: int, piece: int = 64 * 1024) -> Iterator[bytes]:
    yield b'{"query": "'
    for _ in range(total // piece):
        yield b"a" * piece
    yield b'"}'


def test_a_chunked_body_over_the_limit_is_a_413(running: Running) -> None:
    client = make_kb(running, "kb")
    limit_kb = running.settings.server.max_json_kb
    response = client.post(
        "/v1/kb/kb/search", content=_chunks(4 * limit_kb * 1024), headers={"content-type": "application/json"}
    )
    assert "content-length" not in response.request.headers, "sent without a Content-Length"
    assert response.status_code == 413, response.text
    assert "max_json_kb" in response.json()["detail"]
    declared = client.post("/v1/kb/kb/search", content=b"{" + b" " * (limit_kb * 1024 + 10) + b"}")
    assert declared.status_code == 413
    small = client.post("/v1/kb/kb/search", content=_chunks(1024), headers={"content-type": "application/json"})
    assert small.status_code in (200, 422), small.text
    assert client.get("/v1/kb").status_code == 200, "the server is fine afterwards"
