"""The LLM layer: one client for any OpenAI-compatible chat endpoint, and token accounting.

`make_llm(settings.llm)` returns None when no endpoint is configured: every role then runs model-free.
The client (and the openai SDK behind it, about a second to import) loads on first use, so commands
that never call a model start fast.
"""

from typing import TYPE_CHECKING, Any

from agentrag.llm.notice import model_free_notice
from agentrag.llm.tokens import TokenMeter, estimate_message_tokens, estimate_tokens, truncate_to_tokens

if TYPE_CHECKING:
    from agentrag.llm.client import (
        ChatResponse,
        LLMClient,
        ToolCall,
        extract_json,
        make_llm,
    )

_CLIENT_NAMES = frozenset({"ChatResponse", "LLMClient", "ToolCall", "extract_json", "make_llm"})


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from agentrag.llm import client

        return getattr(client, name)
    raise AttributeError(f"module 'agentrag.llm' has no attribute {name!r}")


__all__ = [
    "ChatResponse",
    "LLMClient",
    "TokenMeter",
    "ToolCall",
    "estimate_message_tokens",
    "estimate_tokens",
    "extract_json",
    "make_llm",
    "model_free_notice",
    "truncate_to_tokens",
]
