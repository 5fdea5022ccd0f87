"""`agentrag mcp`: the MCP server over stdin/stdout for a local client (Claude Desktop, an IDE, an agent)."""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

from agentrag.mcp.library import LocalLibrary
from agentrag.mcp.tools import build_server
from agentrag.settings import Settings


def serve_stdio(settings: Settings, default_kb: str = "default") -> None:
    """Serve every knowledge base of `settings.home` until the client closes stdin."""
    library = LocalLibrary(settings, default_kb)
    try:
        # The low-level server under MCPServer, as the SDK's own in-process Client reaches it (no public accessor).
        anyio.run(_serve, build_server(lambda ctx: library)._lowlevel_server)
    finally:
        library.close()


async def _serve(server: Server[Any]) -> None:
    """The handshake-era loop (`MCPServer.run("stdio")` would let a first `server/discover` lock the connection
    into the 2026-07-28 era; this one answers it with the pinned revision's -32022, and the client falls back)."""
    async with stdio_server() as (read, write), server.lifespan(server) as state:
        await serve_loop(server, read, write, lifespan_state=state, init_options=server.create_initialization_options())
