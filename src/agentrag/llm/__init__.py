"""The LLM layer: one client for any OpenAI-compatible chat endpoint, and token accounting.

`make_llm(settings.llm)` returns None when no endpoint is configured: every role then runs model-free.
"""

from agentrag.llm.client import (
    ChatResponse,
    LLMClient,
    ToolCall,
    extract_json,
    make_llm,
    model_free_notice,
)
from agentrag.llm.tokens import TokenMeter, estimate_message_tokens, estimate_tokens, truncate_to_tokens

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
