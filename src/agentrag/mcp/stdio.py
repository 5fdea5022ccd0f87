"""`agentrag mcp`: the MCP server over stdin/stdout for a local client (Claude Desktop, an IDE, an agent)."""

from __future__ import annotations

from agentrag.mcp.library import LocalLibrary
from agentrag.mcp.tools import build_server
from agentrag.settings import Settings


def serve_stdio(settings: Settings, default_kb: str = "default") -> None:
    """Serve every knowledge base of `settings.home` until the client closes stdin."""
    library = LocalLibrary(settings, default_kb)
    try:
        build_server(lambda ctx: library).run("stdio")
    finally:
        library.close()
