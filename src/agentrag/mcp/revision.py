"""Hold every connection to the handshake-era revisions, newest `PROTOCOL_VERSION`, whatever the SDK could speak.

The SDK also answers the per-request 2026-07-28 envelope (`server/discover`); agentrag is built and tested on
2025-11-25. A request in a newer era gets -32022 naming the revisions served, on which the SDK's own client
(and any client following the spec) falls back to the initialize handshake.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from agentrag.mcp import PROTOCOL_VERSION

SERVED = HANDSHAKE_PROTOCOL_VERSIONS[: HANDSHAKE_PROTOCOL_VERSIONS.index(PROTOCOL_VERSION) + 1]


async def pinned_revision(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Refuse `server/discover` and any request made under a revision outside `SERVED`."""
    requested = ctx.protocol_version
    if ctx.method == "server/discover" or (requested is not None and requested not in SERVED):
        data = {"supported": list(SERVED), "requested": requested or ""}
        message = f"this server speaks MCP {PROTOCOL_VERSION} (initialize handshake); supported: {', '.join(SERVED)}"
        raise MCPError(UNSUPPORTED_PROTOCOL_VERSION, message, data)
    return await call_next(ctx)
