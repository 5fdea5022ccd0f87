"""`read_chunk`: the full text of one search result, when its snippet looks promising but is cut off."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic import Field

from agentrag.agent.tools.base import Tool, ToolArgs, ToolResult, tool_error
from agentrag.text.quoting import quote

if TYPE_CHECKING:
    from agentrag.agent.tools.toolbox import ToolBox


class ReadChunkArgs(ToolArgs):
    id: str = Field(min_length=1, description="A result id from an earlier search.")


def _read(box: ToolBox, args: ReadChunkArgs) -> ToolResult:
    hit = box.read_chunk(args.id)
    if hit is None:
        return tool_error(READ_CHUNK.name, f"no chunk with id {args.id!r}; use an id from a search result")
    c = hit.chunk
    body = {"id": c.chunk_id, "title": c.title, "heading": c.heading, "source": c.source, "text": c.text}
    return ToolResult(name=READ_CHUNK.name, content=quote(json.dumps(body, ensure_ascii=False)), hits=[hit])


READ_CHUNK = Tool(
    name="read_chunk",
    description="Read the full text of one search result by its id, when its snippet looks promising but is cut off.",
    hint="to read a promising result in full",
    args=ReadChunkArgs,
    handler=_read,
    position=40,
)

TOOLS = (READ_CHUNK,)
