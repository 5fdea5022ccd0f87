"""`agentrag mcp` over stdio, driven by the official MCP SDK's client: the tools and their schemas, each tool's
results, progress while an answer is written, and tool errors a calling model can act on."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from urllib.parse import quote

import anyio
import pytest
from mcp.types import TextResourceContents
from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.mcp import PROTOCOL_VERSION
from agentrag.settings import load_settings
from agentrag.vocab import Channel, Mode, Preset
from tests.helpers import write
from tests.mcp_server.clients import error_text, result, stdio

RUNBOOK = """# Kestrel runbook

## Error E7731

Error E7731 means the embedding queue is full. Restart the kestrel-worker pods, then check queue depth.

## Escalation

Page the data platform team in #kestrel-oncall after 15 minutes.
"""
EXPENSES = "# Expenses\n\nHotel limit in tier-one cities: 500 yuan per night.\n"


@pytest.fixture
def home(tmp_path: Path, embedder: Embedder) -> Path:
    """A data directory with two knowledge bases: `ops` (the runbook) and `finance` (the expense policy)."""
    home = tmp_path / "home"
    settings = load_settings(home)
    for name, filename, text in (("ops", "runbook.md", RUNBOOK), ("finance", "expenses.md", EXPENSES)):
        kb = KnowledgeBase.open(name, settings=settings, embedder=embedder)
        kb.ingest([write(tmp_path / name / filename, text)])
        kb.close()
    return home


def test_tools_schemas_search_read_chunk_list_and_documents(home: Path) -> None:
    async def scenario() -> None:
        async with stdio(home, kb="ops") as client:
            assert client.protocol_version == PROTOCOL_VERSION
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"search", "ask", "read_chunk", "list_knowledge_bases"}
            assert all(len(tool.description or "") > 80 for tool in tools.values())  # says when to use it
            search_schema, ask_schema = tools["search"].input_schema, tools["ask"].input_schema
            assert search_schema["required"] == ["query"]
            assert search_schema["$defs"]["Channel"]["enum"] == [c.value for c in Channel]
            assert ask_schema["$defs"]["Mode"]["enum"] == [m.value for m in Mode]
            assert ask_schema["$defs"]["Preset"]["enum"] == [p.value for p in Preset]
            assert tools["read_chunk"].input_schema["required"] == ["id"]

            listed = result(await client.call_tool("list_knowledge_bases", {}))["knowledge_bases"]
            assert [(k["id"], k["documents"], k["default"]) for k in listed] == [
                ("finance", 1, False),
                ("ops", 1, True),
            ]

            found = result(await client.call_tool("search", {"query": "E7731", "k": 3, "channel": "bm25"}))
            assert found["kb"] == "ops"
            assert found["channel"] == "bm25"
            top = found["hits"][0]
            assert "embedding queue is full" in top["text"]
            assert top["heading"].endswith("Error E7731")
            assert set(top["channels"]) == {"bm25"}
            # The other knowledge base by name, and a filter that leaves nothing.
            hotel = result(await client.call_tool("search", {"query": "hotel limit", "kb": "finance"}))
            assert "500 yuan" in hotel["hits"][0]["text"]
            filtered = {"query": "E7731", "filter": {"source": "*.pdf"}}
            assert result(await client.call_tool("search", filtered))["hits"] == []

            chunk = result(await client.call_tool("read_chunk", {"id": top["chunk_id"]}))
            assert chunk["chunk_id"] == top["chunk_id"]
            assert chunk["source"].endswith("runbook.md")
            assert "Restart the kestrel-worker pods" in chunk["text"]

            assert top["document_uri"] == f"agentrag://ops/documents/{quote(top['doc_id'], safe='')}"
            document = (await client.read_resource(top["document_uri"])).contents[0]
            assert isinstance(document, TextResourceContents)
            assert "# Kestrel runbook" in document.text
            assert "#kestrel-oncall" in document.text

    anyio.run(scenario)


def test_ask_reports_progress_and_errors_name_what_to_change(home: Path) -> None:
    async def scenario() -> None:
        async with stdio(home, kb="ops") as client:
            progress: list[tuple[float, str | None]] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append((done, message))

            call = await client.call_tool(
                "ask", {"question": "What does error E7731 mean?"}, progress_callback=on_progress
            )
            answer = result(call)
            assert "embedding queue is full" in answer["answer"]
            assert answer["stop_reason"] == "answered"
            assert answer["confidence"] in ("high", "partial")
            assert len(answer["trace_id"]) == 16
            assert answer["kb"] == "ops"
            cited = answer["citations"][0]
            assert cited["source"].endswith("runbook.md")
            assert "E7731" in result(await client.call_tool("read_chunk", {"id": cited["chunk_id"]}))["text"]
            # Progress arrived while the answer was written: numbered in order, each step in words.
            assert len(progress) >= 3, progress
            assert [done for done, _ in progress] == sorted({done for done, _ in progress})
            assert any("search" in (message or "") for _, message in progress), progress

            errors = {
                "no knowledge base 'nope' is available; call list_knowledge_bases for the ones you can use (in ": (
                    "search",
                    {"query": "x", "kb": "nope"},
                ),
                "--kb NAME FILES` makes one)": ("search", {"query": "x", "kb": "nope"}),
                "no chunk 'ops.md#99'": ("read_chunk", {"id": "ops.md#99"}),
                "budget: unknown key 'max_searches' (did you mean": (
                    "ask",
                    {"question": "E7731?", "budget": {"max_searches": 2}},
                ),
                "filter.after": ("search", {"query": "x", "filter": {"after": "last tuesday"}}),
                "more than the 4000 allowed (server.max_question_chars)": ("ask", {"question": "why? " * 1000}),
                "less than or equal to 100": ("search", {"query": "x", "k": 500}),
                "'auto', 'direct', 'single', 'iterative' or 'agent'": ("ask", {"question": "x", "mode": "deep"}),
            }
            for expected, (tool, arguments) in errors.items():
                call = await client.call_tool(tool, arguments)
                assert call.is_error, (tool, arguments)
                assert expected in error_text(call), error_text(call)
            # The server is still serving after every error.
            assert result(await client.call_tool("search", {"query": "E7731"}))["hits"]

    anyio.run(scenario)


def test_without_the_sdk_the_command_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "agentrag.mcp.stdio", None)  # as if `mcp` were not installed
    done = CliRunner().invoke(app, ["mcp", "--home", str(tmp_path)])
    assert done.exit_code == 2
    assert "pip install 'agentrag[mcp]'" in done.output


def test_building_the_server_leaves_the_processes_logging_alone() -> None:
    """The SDK's MCPServer sets up the root logger; the service's and the CLI's log output must not change."""
    from agentrag.mcp.tools import build_server

    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    build_server(lambda ctx: None)  # type: ignore[arg-type,return-value]
    assert (list(root.handlers), root.level) == before
