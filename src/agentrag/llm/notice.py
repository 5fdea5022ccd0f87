"""The model-free notice, apart from the client: saying that no LLM is configured must not load the SDK."""

from __future__ import annotations

from agentrag.settings import LLMSettings


def model_free_notice(settings: LLMSettings) -> str | None:
    """The one sentence to show (once per process) when no LLM is configured; None when one is."""
    if settings.configured:
        return None
    return (
        "No LLM configured (set OPENAI_BASE_URL or OPENAI_API_KEY, and AGENTRAG_LLM_MODEL): "
        "answering model-free, with extractive answers."
    )
