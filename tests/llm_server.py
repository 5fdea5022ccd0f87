"""A scripted OpenAI-compatible chat server on 127.0.0.1 that tests start: the LLM path runs for real through
the `openai` SDK and HTTP, and only the model's words are scripted.

    with ScriptedLLM([text("Paris [1]."), tool_calls([("search", {"query": "x"})])]) as llm:
        client = LLMClient(llm_settings(llm))
        ...
        assert llm.requests[0]["model"] == "scripted-model"

A script is a list of replies consumed in order, or a callable `(request_body, call_index) -> Reply`.
Replies: `text(...)`, `tool_calls([...])`, `error(status, message)`, `raw(status, body)`; any can carry
`delay=` (seconds before answering), usage numbers, and for streams `chunk_delay=`, `stall_after=`/`stall=`
and `cut_after=` (drop the connection mid-stream). Streams are SSE exactly as OpenAI sends them.

Under-scripting fails loudly: a request past the end of the list gets a 500 naming the problem, and leaving
the `with` block raises AssertionError (as does an exception inside a callable script), even when the code
under test swallowed the 500 and fell back. Pass `strict=False` to allow it.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from agentrag.settings import LLMSettings

DEFAULT_MODEL = "scripted-model"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build with `text`, `tool_calls`, `error` or `raw` rather than directly."""

    content: str | None = None
    calls: tuple[tuple[str, str], ...] = ()  # (name, raw arguments text)
    status: int = 200
    body: bytes | None = None  # raw: sent as is, whether or not the request asked for a stream
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    prompt_tokens: int | None = None  # default: words in the request's messages
    completion_tokens: int | None = None  # default: words in the content and tool arguments
    usage: bool = True  # False: no usage at all, like servers that omit it
    finish_reason: str | None = None  # default: "tool_calls" with calls, else "stop"
    model: str | None = None  # default: the requested model
    pieces: tuple[str, ...] | None = None  # stream deltas; default: word by word (CJK character by character)
    chunk_delay: float = 0.0  # stream: seconds between chunks
    stall_after: int | None = None  # stream: after this many content deltas, go quiet for `stall` seconds
    stall: float = 0.0
    cut_after: int | None = None  # stream: after this many content deltas, drop the connection

    def with_(self, **changes: Any) -> Reply:
        return replace(self, **changes)


def text(content: str, **options: Any) -> Reply:
    """A plain assistant message."""
    pieces = options.pop("pieces", None)
    return Reply(content=content, pieces=tuple(pieces) if pieces is not None else None, **options)


def tool_calls(calls: Iterable[tuple[str, dict[str, Any] | str]], content: str | None = None, **options: Any) -> Reply:
    """Tool calls; arguments given as a dict are JSON-encoded, a string is sent verbatim (e.g. broken JSON)."""
    encoded = tuple(
        (name, args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)) for name, args in calls
    )
    return Reply(content=content, calls=encoded, **options)


def raw(status: int, body: bytes | str = b"", headers: dict[str, str] | None = None, **options: Any) -> Reply:
    """Exactly this status and body (e.g. a malformed JSON body, or 429 with `{"Retry-After": "0"}`)."""
    data = body.encode() if isinstance(body, str) else body
    return Reply(status=status, body=data, headers=tuple((headers or {}).items()), **options)


def error(status: int, message: str, headers: dict[str, str] | None = None, **options: Any) -> Reply:
    """An error in OpenAI's shape: `{"error": {"message", "type", "code"}}`."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    body = json.dumps({"error": {"message": message, "type": kind, "param": None, "code": status}})
    return raw(status, body, headers, **options)


Script = Sequence[Reply] | Callable[[dict[str, Any], int], Reply]


def prompt_text(body: dict[str, Any]) -> str:
    """All message text of a request, joined: handy for callable scripts that answer by what they are asked."""
    parts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


def _words(text: str) -> int:
    return len(text.split())


_PIECES = re.compile(
    r"[\u3000-\u9fff\uf900-\ufaff\uff00-\uffef]|\s*[^\s\u3000-\u9fff\uf900-\ufaff\uff00-\uffef]+\s*|\s+"
)


@dataclass
class _State:
    script: Script
    models: tuple[str, ...]
    strict: bool
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


class ScriptedLLM:
    """The server; use as a context manager. `base_url`, `requests` (chat request bodies in arrival order) and
    `headers` (each request's headers, names lower-cased)."""

    def __init__(self, script: Script, *, models: Sequence[str] = (DEFAULT_MODEL,), strict: bool = True) -> None:
        self._state = _State(script=script if callable(script) else list(script), models=tuple(models), strict=strict)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("ScriptedLLM is not running; use it in a `with` block")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._state.requests

    @property
    def headers(self) -> list[dict[str, str]]:
        return self._state.headers

    def __enter__(self) -> ScriptedLLM:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self._state))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._state.stopping.set()  # wakes replies still sleeping in `delay` or `stall`
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if exc_type is None and self._state.strict and self._state.problems:
            raise AssertionError("ScriptedLLM: " + "\n".join(self._state.problems))


def llm_settings(llm: ScriptedLLM, **overrides: Any) -> LLMSettings:
    """Settings pointing at the scripted server: the default model, no retries, a 5 s timeout (override any)."""
    values: dict[str, Any] = {
        "base_url": llm.base_url,
        "api_key": "test-key",
        "model": DEFAULT_MODEL,
        "max_retries": 0,
        "timeout_s": 5.0,
    }
    values.update(overrides)
    return LLMSettings(**values)


def _handler_for(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes; without this, Nagle's algorithm adds ~40 ms per reply.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                self._json(404, {"error": {"message": f"no route GET {self.path}", "type": "not_found"}})
                return
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in state.models]
            self._json(200, {"object": "list", "data": data})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            payload = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._json(404, {"error": {"message": f"no route POST {self.path}", "type": "not_found"}})
                return
            try:
                body = json.loads(payload or b"{}")
            except json.JSONDecodeError as exc:
                self._json(400, {"error": {"message": f"request body is not JSON: {exc}"}})
                return
            with state.lock:
                index = len(state.requests)
                state.requests.append(body)
                state.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = self._reply_for(body, index)
            # A client that gave up (a timeout under test) has closed the socket: nothing left to answer.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._answer(body, index, reply)

        def _reply_for(self, body: dict[str, Any], index: int) -> Reply:
            script = state.script
            if callable(script):
                try:
                    return script(body, index)
                except Exception:
                    problem = f"the script raised on request #{index}:\n{traceback.format_exc()}"
            elif index < len(script):
                return script[index]
            else:
                problem = f"script exhausted: request #{index} arrived but only {len(script)} replies were scripted"
            with state.lock:
                state.problems.append(problem)
            return error(500, f"ScriptedLLM: {problem}")

        def _answer(self, body: dict[str, Any], index: int, reply: Reply) -> None:
            if reply.delay and state.stopping.wait(reply.delay):
                return
            if reply.body is not None:
                self._send(reply.status, reply.body, "application/json", reply.headers)
                return
            model = reply.model or body.get("model") or DEFAULT_MODEL
            calls = [
                {"id": f"call_{index}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
                for i, (name, args) in enumerate(reply.calls)
            ]
            finish = reply.finish_reason or ("tool_calls" if calls else "stop")
            usage = None
            if reply.usage:
                prompt = reply.prompt_tokens if reply.prompt_tokens is not None else _words(prompt_text(body))
                produced = reply.completion_tokens
                if produced is None:
                    produced = _words(reply.content or "") + sum(_words(args) for _, args in reply.calls)
                usage = {"prompt_tokens": prompt, "completion_tokens": produced, "total_tokens": prompt + produced}
            if body.get("stream"):
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(reply, f"chatcmpl-{index}", model, calls, finish, usage if include_usage else None)
                return
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if calls:
                message["tool_calls"] = calls
            completion: dict[str, Any] = {
                "id": f"chatcmpl-{index}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            }
            if usage is not None:
                completion["usage"] = usage
            self._json(200, completion, reply.headers)

        def _stream(
            self,
            reply: Reply,
            cid: str,
            model: str,
            calls: list[dict[str, Any]],
            finish: str,
            usage: dict[str, int] | None,
        ) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in reply.headers:
                self.send_header(name, value)
            self.end_headers()

            def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
                data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
                return {**data, "choices": choices, **extra}

            def delta(d: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
                extra = {"usage": None} if usage is not None else {}
                return chunk([{"index": 0, "delta": d, "finish_reason": finish_reason, "logprobs": None}], **extra)

            content = reply.content or ""
            pieces = list(reply.pieces) if reply.pieces is not None else _PIECES.findall(content)
            events: list[tuple[bool, dict[str, Any] | str]] = [(False, delta({"role": "assistant", "content": ""}))]
            events += [(True, delta({"content": p})) for p in pieces]
            for i, call in enumerate(calls):
                args = call["function"]["arguments"]
                head = {"index": i, "id": call["id"], "type": "function"}
                function = {"name": call["function"]["name"], "arguments": ""}
                events.append((False, delta({"tool_calls": [{**head, "function": function}]})))
                for part in (args[: len(args) // 2], args[len(args) // 2 :]):
                    events.append((False, delta({"tool_calls": [{"index": i, "function": {"arguments": part}}]})))
            events.append((False, delta({}, finish)))
            if usage is not None:
                events.append((False, chunk([], usage=usage)))
            events.append((False, "[DONE]"))

            sent = 0  # content deltas so far
            for is_content, event in events:
                if is_content:
                    if reply.cut_after is not None and sent >= reply.cut_after:
                        self._cut()
                        return
                    if reply.stall_after is not None and sent == reply.stall_after and state.stopping.wait(reply.stall):
                        return
                    sent += 1
                data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
                self._chunk(f"data: {data}\n\n".encode())
                if reply.chunk_delay and state.stopping.wait(reply.chunk_delay):
                    return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _cut(self) -> None:
            """Drop the connection mid-body, as a crashed or restarted server does."""
            self.close_connection = True
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)

        def _json(self, status: int, payload: Any, headers: Iterable[tuple[str, str]] = ()) -> None:
            self._send(status, json.dumps(payload, ensure_ascii=False).encode(), "application/json", headers)

        def _send(self, status: int, data: bytes, content_type: str, headers: Iterable[tuple[str, str]]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler
