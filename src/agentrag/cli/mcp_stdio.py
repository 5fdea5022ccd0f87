"""`agentrag mcp`: the knowledge bases as an MCP server over stdio."""

from __future__ import annotations

from agentrag.cli.common import HomeOption, KbOption, fail, friendly_errors, model_free_notice, settings_for


@friendly_errors
def mcp(home: HomeOption = None, kb: KbOption = "default") -> None:
    """Serve the knowledge bases of --home to an MCP client over stdin/stdout (tools: search, ask, read_chunk,
    list_knowledge_bases; --kb is the one used when a call names none). For HTTP, `agentrag serve` has /mcp.

    Client config: {"command": "agentrag", "args": ["mcp", "--home", "/path/to/home"]}
    """
    try:
        from agentrag.mcp.stdio import serve_stdio
    except ImportError as exc:  # the SDK is an extra
        fail(f"`agentrag mcp` needs the MCP SDK: pip install 'agentrag[mcp]' ({exc})", False)
    settings = settings_for(home)
    model_free_notice(settings, False)  # on stderr: stdout carries the protocol
    serve_stdio(settings, kb)
