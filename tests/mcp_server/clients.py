"""The official MCP SDK's client against agentrag, over stdio (a real `agentrag mcp` process) or Streamable HTTP."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

SRC = Path(__file__).resolve().parents[2] / "src"


@asynccontextmanager
async def stdio(home: Path, kb: str = "default") -> AsyncIterator[Client]:
    """`python -m agentrag.cli mcp --home HOME --kb KB` spawned and connected to (mode "auto", the default)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    env.pop("OPENAI_BASE_URL", None)  # model-free, whatever the developer's shell has
    env.pop("OPENAI_API_KEY", None)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "agentrag.cli", "mcp", "--home", str(home), "--kb", kb], env=env
    )
    async with Client(params, read_timeout_seconds=120) as client:
        yield client


@asynccontextmanager
async def http(url: str, key: str | None, mode: str = "auto") -> AsyncIterator[Client]:
    """The service's /mcp, with `Authorization: Bearer KEY` on every request (none without a key)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http_client:
        transport = streamable_http_client(f"{url}/mcp", http_client=http_client)
        async with Client(transport, mode=mode, read_timeout_seconds=120) as client:
            yield client


def result(call: CallToolResult) -> dict[str, Any]:
    """A successful call's structured result (the same JSON is its text content)."""
    assert not call.is_error, error_text(call)
    assert call.structured_content is not None
    text = call.content[0]
    assert isinstance(text, TextContent)
    assert json.loads(text.text) == call.structured_content
    return call.structured_content


def error_text(call: CallToolResult) -> str:
    text = call.content[0]
    assert isinstance(text, TextContent)
    return text.text


def mcp_error(exc: BaseException) -> MCPError:
    """The MCPError inside what the client raised (its task groups wrap it in exception groups)."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            try:
                return mcp_error(inner)
            except LookupError:
                continue
    raise LookupError(f"no MCPError in {exc!r}")
