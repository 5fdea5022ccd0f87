"""The README's MCP section, run as a user would: its client config launches a working stdio server, and its
Python example, against `agentrag serve`, answers the sample question from the bundled sample's document."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agentrag.embed.base import Embedder
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from tests.mcp_server.clients import SRC, result
from tests.server.conftest import serving

README = Path(__file__).resolve().parents[2] / "README.md"
SAMPLE = SRC / "agentrag" / "sample" / "docs" / "aurora-api-handbook.md"  # the document the example asks about


def _section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Use it from an MCP client")
    return text[start : text.index("\n## ", start + 1)]


def _block(language: str) -> str:
    return re.findall(rf"```{language}\n(.*?)```", _section(), re.S)[0]


@pytest.fixture
def sample_home(tmp_path: Path, embedder: Embedder) -> Path:
    """A home whose `default` knowledge base holds the sample's API handbook (the whole sample takes a minute)."""
    home = tmp_path / "agentrag-sample"
    kb = KnowledgeBase.open("default", settings=load_settings(home), embedder=embedder)
    kb.ingest([SAMPLE])
    kb.close()
    return home


def test_the_client_config_launches_a_working_server(sample_home: Path) -> None:
    server = json.loads(_block("json"))["mcpServers"]["agentrag"]
    assert server["command"] == "agentrag"
    args = list(server["args"])
    args[args.index("--home") + 1] = str(sample_home)  # the README's /home/me/agentrag-sample
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentrag.cli", *args], env={"PYTHONPATH": str(SRC)}
    )

    async def scenario() -> str:
        async with Client(params, read_timeout_seconds=120) as client:
            return str(result(await client.call_tool("ask", {"question": "What does error E1042 mean?"}))["answer"])

    assert "Query too complex" in anyio.run(scenario)


def test_the_python_example_answers_over_http(sample_home: Path) -> None:
    with serving(load_settings(sample_home)) as running:
        code = _block("python").replace("http://127.0.0.1:8000", running.url).replace("ar_...", running.admin)
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, env={"PYTHONPATH": str(SRC)}
        )
    assert done.returncode == 0, done.stderr
    tools, answer = done.stdout.split("\n", 1)
    assert sorted(ast.literal_eval(tools)) == ["ask", "list_knowledge_bases", "read_chunk", "search"]
    assert "Query too complex" in answer
