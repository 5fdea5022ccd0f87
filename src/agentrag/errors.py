"""Errors a user can act on. Each names the file, field or argument at fault."""

from __future__ import annotations


class AgentragError(Exception):
    """Base class: anything agentrag raises on purpose."""


class ConfigError(AgentragError):
    """A setting, argument or environment variable is wrong."""


class LoadError(AgentragError):
    """A file could not be turned into a document (binary, corrupt, empty, too large...)."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreError(AgentragError):
    """A knowledge base's files cannot be used as they are (written by a newer agentrag, or damaged)."""


class StoreBusyError(StoreError):
    """Another process held the knowledge base's write lock through every retry."""


class EmbedderMismatchError(AgentragError):
    """The knowledge base was built with another embedding model than the one configured."""


class EmbeddingError(AgentragError):
    """The embedding backend failed (endpoint down, bad response, timeout)."""


class RerankError(AgentragError):
    """The rerank endpoint or model failed."""


class KnowledgeBaseNotFound(AgentragError):
    """No knowledge base with that name in the data directory."""


class DocumentNotFound(AgentragError):
    """No document with that id in the knowledge base."""


class LLMError(AgentragError):
    """The chat endpoint failed or answered unusably; the caller falls back to its model-free role.

    `model` and `endpoint` name what was called; `status` is the HTTP status when the server answered one.
    """

    def __init__(
        self, message: str, *, model: str | None = None, endpoint: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.model = model
        self.endpoint = endpoint
        self.status = status


class LLMTimeout(LLMError):
    """The call did not finish within its time limit (the per-call timeout or the question's remaining time)."""


class LLMUnavailable(LLMError):
    """The endpoint cannot serve: unreachable, rate-limited or failing past the retries, or refusing the key or
    model (401/403/404)."""


class LLMOutputError(LLMError):
    """The model's structured output stayed invalid after one repair attempt."""


class Busy(AgentragError):
    """Another request held the same lock (a conversation, an upload's name) for longer than the wait allowed."""
