"""agentrag as an MCP server: its knowledge bases as tools (`search`, `ask`, `read_chunk`,
`list_knowledge_bases`) and its documents as resources, for any MCP client.

Two transports share one server definition (`agentrag.mcp.tools.build_server`): stdio (`agentrag mcp`, the
local user's whole data directory) and Streamable HTTP at `/mcp` under `agentrag serve`
(`agentrag.server.mcp_mount`, where each API key sees only its knowledge bases). Who may use which knowledge
base is a `Library` (`agentrag.mcp.library`), so the tools never know which transport called them.

Needs the `mcp` extra (`pip install 'agentrag[mcp]'`), the official MCP Python SDK.
"""

from __future__ import annotations

# The protocol revision implemented and tested: what clients negotiate in the initialize handshake.
PROTOCOL_VERSION = "2025-11-25"
