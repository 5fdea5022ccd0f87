"""What a tool is: one value holding its name, what it is for, its argument model and its handler.

The agent model sees each tool through `schema()` (the OpenAI `tools` entry, generated from the argument
model) and through its line in the agent prompt (`hint`). Arguments are validated against `args` before the
handler runs; a handler answers with a `ToolResult`, never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from agentrag.types import Hit

if TYPE_CHECKING:
    from agentrag.agent.tools.toolbox import ToolBox
    from agentrag.llm.types import ToolSpec


class ToolArgs(BaseModel):
    """Base of every argument model: unknown arguments are errors the model is told about."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class ToolResult:
    name: str
    content: str  # what the model reads (JSON text)
    hits: list[Hit] = field(default_factory=list)
    query: str = ""
    ok: bool = True
    ms: float = 0.0


def tool_error(name: str, message: str) -> ToolResult:
    return ToolResult(name=name, content=json.dumps({"error": message}, ensure_ascii=False), ok=False)


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str  # when to use it, for the model
    hint: str  # its few words in the agent prompt's list: "semantic_search for meaning"
    args: type[ToolArgs]
    handler: Callable[[ToolBox, Any], ToolResult]  # receives a validated instance of `args`
    position: int  # order in the prompt and the schemas
    concurrent: bool = True  # may run beside the other calls of the same turn

    def schema(self) -> ToolSpec:
        """The OpenAI `tools` entry."""
        parameters = self.args.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": parameters},
        }
