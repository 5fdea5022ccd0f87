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
