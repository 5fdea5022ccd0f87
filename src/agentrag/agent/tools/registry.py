"""The tool registry: every module of this package that lists `TOOLS` contributes them.

Adding a tool is one file: a module here defining a `Tool` (name, description, prompt hint, argument
model, handler) and listing it in `TOOLS`. The JSON schemas sent to the model and the tool list in the
agent's prompt are generated from the registry, so nothing else names a tool.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING

from agentrag.agent.tools.base import Tool

if TYPE_CHECKING:
    from agentrag.llm.types import ToolSpec

_NOT_TOOLS = frozenset({"base", "registry", "toolbox"})


@functools.cache
def registry() -> dict[str, Tool]:
    """Every tool by name, in `position` order."""
    package = importlib.import_module(__package__ or "agentrag.agent.tools")
    found: list[Tool] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name not in _NOT_TOOLS:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            found.extend(getattr(module, "TOOLS", ()))
    return {tool.name: tool for tool in sorted(found, key=lambda tool: tool.position)}


def tool_schemas() -> list[ToolSpec]:
    """The OpenAI `tools` parameter for every tool."""
    return [tool.schema() for tool in registry().values()]


def tool_guide() -> str:
    """The tools in a phrase for the agent prompt: 'semantic_search for meaning, keyword_search for ...'."""
    return ", ".join(f"{tool.name} {tool.hint}" for tool in registry().values())
