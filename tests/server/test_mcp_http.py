"""MCP over Streamable HTTP at /mcp of a running service, driven by the official MCP SDK's client: the same
tools as stdio, under the REST API's keys; a wrong key is refused and another key's knowledge base is not
reachable, by any tool, and looks exactly like one that does not exist."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import MCPError

from agentrag.mcp import PROTOCOL_VERSION
from agentrag.server.app import create_app
from agentrag.settings import Settings, load_settings
from tests.agent.test_agent_llm import ROLES, role_of
from tests.llm_server import Reply, ScriptedLLM, error, llm_settings, text
from tests.mcp_server.clients import error_text, http, mcp_error, result
from tests.server.conftest import Running, serving
from tests.server.test_api import make_kb, upload

SECRETS = {"red": "Red vault code: R-7731. The red team rotates it monthly.", "blue": "Blue vault code: B-4410."}


def _two_teams(running: Running) -> dict[str, str]:
    """Knowledge bases `red` and `blue`, each with one document, and a key for each."""
    keys = {}
    for name, secret in SECRETS.items():
        keys[name] = running.key(name)
        client = make_kb(running, name, keys[name])
        assert upload(client, name, f"{name}.md", f"# {name}\n\n{secret}\n").status_code == 201
    return keys


def test_tools_answer_with_the_keys_knowledge_base_and_report_progress(running: Running) -> None:
    keys = _two_teams(running)

    async def scenario() -> None:
        async with http(running.url, keys["red"]) as client:
            assert client.protocol_version == PROTOCOL_VERSION
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert names == {"search", "ask", "read_chunk", "list_knowledge_bases"}
            listed = result(await client.call_tool("list_knowledge_bases", {}))["knowledge_bases"]
            assert [(k["id"], k["documents"], k["default"]) for k in listed] == [("red", 1, True)]

            hits = result(await client.call_tool("search", {"query": "vault code", "k": 5}))["hits"]
            assert [h["text"].split("\n")[-1] for h in hits] == [SECRETS["red"]]
            chunk = result(await client.call_tool("read_chunk", {"id": hits[0]["chunk_id"], "kb": "red"}))
            assert SECRETS["red"] in chunk["text"]

            progress: list[str | None] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append(message)

            answer = result(
                await client.call_tool(
                    "ask", {"question": "What is the red vault code?"}, progress_callback=on_progress
                )
            )
            assert "R-7731" in answer["answer"]
            assert answer["stop_reason"] == "answered"
            assert answer["citations"][0]["chunk_id"] == hits[0]["chunk_id"]
            assert len(progress) >= 3, progress
            assert all(progress), progress
        # The trace the answer names is the service's, readable with the same key.
        trace = running.client(keys["red"]).get(f"/v1/kb/red/traces/{answer['trace_id']}")
        assert trace.status_code == 200
        assert trace.json()["events"]

    anyio.run(scenario)


def test_another_keys_knowledge_base_is_not_reachable(running: Running) -> None:
    keys = _two_teams(running)

    async def blue_chunk() -> str:
        async with http(running.url, keys["blue"]) as client:
            return str(result(await client.call_tool("search", {"query": "vault code"}))["hits"][0]["chunk_id"])

    async def scenario(chunk_id: str) -> None:
        async with http(running.url, keys["red"]) as client:
            probes = [
                ("search", {"query": "vault code", "kb": "blue"}),
                ("ask", {"question": "What is the blue vault code?", "kb": "blue"}),
                ("read_chunk", {"id": chunk_id, "kb": "blue"}),
            ]
            for tool, arguments in probes:
                refused = await client.call_tool(tool, arguments)
                missing = await client.call_tool(tool, {**arguments, "kb": "nope"})
                assert refused.is_error, tool
                assert missing.is_error, tool
                assert error_text(refused).replace("'blue'", "'nope'") == error_text(missing)
                assert "B-4410" not in error_text(refused)
            # Its own knowledge base does not hold the other's chunk, and its answers never cite it.
            own = await client.call_tool("read_chunk", {"id": chunk_id})
            assert own.is_error
            assert "no chunk" in error_text(own)
            answer = result(await client.call_tool("ask", {"question": "What are the red and blue vault codes?"}))
            assert "B-4410" not in answer["answer"]
            assert all(c["source"].endswith("red.md") for c in answer["citations"])
            refusals = []
            for kb in ("blue", "nope"):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(f"agentrag://{kb}/documents/{chunk_id.split('#')[0]}")
                refusals.append(str(refused.value).replace(f"'{kb}'", "'?'"))
            assert refusals[0] == refusals[1]
            assert "no knowledge base '?'" in refusals[0]

    anyio.run(scenario, anyio.run(blue_chunk))


def test_a_wrong_or_missing_key_is_refused(running: Running) -> None:
    for headers in ({"Authorization": "Bearer ar_not-a-key"}, {}, {"Authorization": f"Basic {running.admin}"}):
        response = httpx.post(
            f"{running.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**headers, "Accept": "application/json, text/event-stream"},
        )
        assert response.status_code == 401, headers
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert "Authorization: Bearer KEY" in response.json()["detail"]
    in_url = httpx.post(f"{running.url}/mcp?key={running.admin}", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert in_url.status_code == 401
    assert in_url.json()["detail"].startswith("an API key in the URL is refused")

    async def connect(key: str) -> None:
        async with http(running.url, key) as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as refused:  # the SDK wraps the failed handshake in its task groups
        anyio.run(connect, "ar_not-a-key")
    assert mcp_error(refused.value)
    anyio.run(connect, running.admin)  # the same client with a real key connects


def test_a_newer_protocol_era_is_told_which_revisions_are_served(running: Running) -> None:
    """The SDK could answer 2026-07-28 requests; the server pins PROTOCOL_VERSION and says so in a -32022 (on
    which a client in mode "auto", the default, falls back to the initialize handshake: the tests above)."""

    async def modern() -> None:
        async with http(running.url, running.admin, mode="2026-07-28") as client:
            await client.list_tools()

    with pytest.raises(ExceptionGroup) as raised:
        anyio.run(modern)
    refused = mcp_error(raised.value).error
    assert refused.code == -32022
    assert refused.data["supported"][-1] == PROTOCOL_VERSION
    assert PROTOCOL_VERSION in refused.message


def test_mcp_requests_count_against_the_keys_rate_limit(tmp_path: Path) -> None:
    with serving(load_settings(tmp_path / "home", server={"requests_per_minute": 3})) as running:
        headers = {"Authorization": f"Bearer {running.admin}", "Accept": "application/json, text/event-stream"}
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        statuses = [httpx.post(f"{running.url}/mcp", json=listing, headers=headers) for _ in range(4)]
    assert [r.status_code for r in statuses] == [200, 200, 200, 429]
    assert "3 requests per minute" in statuses[-1].json()["detail"]
    assert int(statuses[-1].headers["Retry-After"]) >= 1


def test_without_the_sdk_mcp_says_how_to_install_it(server_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp.server.transport_security", None)  # as if `mcp` were not installed
    with TestClient(create_app(server_settings)) as client:
        response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert response.status_code == 503
        assert "pip install 'agentrag[mcp]'" in response.json()["detail"]
        assert client.get("/health").status_code == 200  # the rest of the service runs


def test_a_long_answer_streams_progress_and_never_holds_up_the_service(tmp_path: Path) -> None:
    """The synthesizer's model takes 4 s: progress reaches the client before the answer, and a REST call made
    while the model writes is answered before it (the tools run in worker threads, not on the event loop)."""

    def script(body: dict[str, Any], index: int) -> Reply:
        if role_of(body) == "synthesizer":
            return text("The red vault code is R-7731 [1].", delay=4.0)
        return error(500, "not scripted")  # every other role falls back to its rules

    with ScriptedLLM(script) as llm:
        models = {role: f"m-{role}" for role in ROLES}
        llm_config = llm_settings(llm, role_models=models, timeout_s=60.0)
        settings = load_settings(tmp_path / "home", server={"requests_per_minute": 600}, llm=llm_config)
        with serving(settings) as running:
            keys = _two_teams(running)
            events: list[tuple[str, float]] = []
            writing = anyio.Event()

            async def ask() -> None:
                async def on_progress(done: float, total: float | None, message: str | None) -> None:
                    events.append(("progress", time.monotonic()))
                    if message == "writing the answer":
                        writing.set()

                async with http(running.url, keys["red"]) as client:
                    question = {"question": "What is the red vault code?", "mode": "single"}
                    answer = result(await client.call_tool("ask", question, progress_callback=on_progress))
                events.append(("answer", time.monotonic()))
                assert "R-7731" in answer["answer"]
                assert answer["stop_reason"] == "answered"  # the model's answer, not a fallback

            async def meanwhile() -> None:
                await writing.wait()  # the ask is waiting on its model now
                rest = running.client(keys["red"])
                found = await anyio.to_thread.run_sync(lambda: rest.post("/v1/kb/red/search", json={"query": "vault"}))
                assert found.status_code == 200
                events.append(("rest", time.monotonic()))

            async def both() -> None:
                async with anyio.create_task_group() as group:
                    group.start_soon(ask)
                    group.start_soon(meanwhile)

            anyio.run(both)
    order = [kind for kind, _ in events]
    assert order.index("rest") < order.index("answer"), order
    first_progress, answered = events[0][1], dict(events)["answer"]
    assert answered - first_progress > 3.0, events  # progress came while the model was still writing
