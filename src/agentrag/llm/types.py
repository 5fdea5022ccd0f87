"""What the LLM layer exchanges with its callers: chat messages and tool specs in, `ChatResponse` out.

Messages and tool specs are `TypedDict`s: callers write them as the dict literals of the OpenAI chat API
(`{"role": "user", "content": "..."}`), the type checker knows each role's fields, and they go to the server
as they are. This module loads pydantic only, never the openai SDK, so agent modules can import the message
types at module level while the SDK loads when a model is first called.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from pydantic import BaseModel, ConfigDict, Field

# ------------------------------------------------------------------------------------------- messages


class TextPart(TypedDict):
    """A piece of text in a user turn made of parts."""

    type: Literal["text"]
    text: str


class ImageURL(TypedDict):
    url: str  # an https URL or a data: URL
    detail: NotRequired[Literal["auto", "low", "high"]]


class ImagePart(TypedDict):
    """An image in a user turn made of parts (for servers that accept images; its tokens are not estimated)."""

    type: Literal["image_url"]
    image_url: ImageURL


ContentPart = TextPart | ImagePart


class SystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class UserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[ContentPart]


class FunctionCall(TypedDict):
    name: str
    arguments: str  # the raw JSON text the model wrote


class AssistantToolCall(TypedDict):
    """A tool call as it is sent back inside an assistant turn."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class AssistantMessage(TypedDict):
    role: Literal["assistant"]
    content: str | None  # None (or "") when the turn is only tool calls
    tool_calls: NotRequired[list[AssistantToolCall]]


class ToolMessage(TypedDict):
    """A tool's result, answering the assistant's call with the same id."""

    role: Literal["tool"]
    tool_call_id: str
    content: str


ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage

# ------------------------------------------------------------------------------------------- tools


class FunctionSpec(TypedDict):
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]  # a JSON schema of the arguments
    strict: NotRequired[bool]


class ToolSpec(TypedDict):
    """One entry of the `tools` parameter."""

    type: Literal["function"]
    function: FunctionSpec


# ------------------------------------------------------------------------------------------- replies


class ToolCall(BaseModel):
    """A function call the model asked for; `arguments` is the raw JSON text, validated by the tool."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    arguments: str


class ChatResponse(BaseModel):
    """One completion: text, tool calls, why it stopped, and its tokens (reported, or estimated if not)."""

    model_config = ConfigDict(frozen=True)

    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str
    cached: bool = False  # served from the cache: no tokens were spent

    def as_message(self) -> AssistantMessage:
        """The assistant turn to append to the conversation before sending the tool results back."""
        message: AssistantMessage = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        return message
