"""The tools the agent model can call: a registry of `Tool` values (one module each here) and the
`ToolBox` that runs one question's calls. See registry.py for how to add a tool."""

from agentrag.agent.tools.base import Tool, ToolArgs, ToolResult
from agentrag.agent.tools.registry import registry, tool_guide, tool_schemas
from agentrag.agent.tools.toolbox import ToolBox

__all__ = ["Tool", "ToolArgs", "ToolBox", "ToolResult", "registry", "tool_guide", "tool_schemas"]
