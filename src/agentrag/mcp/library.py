"""Which knowledge bases a caller of the MCP tools may use, and how one opens."""

from __future__ import annotations

import threading
from typing import Protocol

from agentrag.errors import ConfigError, KnowledgeBaseNotFound
from agentrag.kb import KnowledgeBase, list_knowledge_bases, resolve_kb, shared_embedder
from agentrag.settings import Settings


class Library(Protocol):
    """The knowledge bases one caller may use: the whole data directory for stdio, a key's for HTTP."""

    @property
    def settings(self) -> Settings: ...

    @property
    def default_kb(self) -> str:
        """The knowledge base a tool call without `kb` uses."""
        ...

    def visible(self) -> list[str]:
        """The ids of the knowledge bases this caller may use, sorted."""
        ...

    def open(self, name: str) -> KnowledgeBase:
        """The knowledge base `name` (id or display name); KnowledgeBaseNotFound when it is missing or not
        this caller's (the same message either way, so a refusal tells nothing)."""
        ...


def not_found(name: str, hint: str = "") -> KnowledgeBaseNotFound:
    return KnowledgeBaseNotFound(
        f"no knowledge base {name!r} is available; call list_knowledge_bases for the ones you can use{hint}"
    )


class LocalLibrary:
    """Every knowledge base of one data directory (the stdio server runs as the user who owns it)."""

    def __init__(self, settings: Settings, default_kb: str = "default") -> None:
        self._settings = settings
        self._default = default_kb
        self._embedder = shared_embedder(settings.embedder)
        self._open: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def default_kb(self) -> str:
        return self._default

    def visible(self) -> list[str]:
        return list_knowledge_bases(self._settings.home)

    def open(self, name: str) -> KnowledgeBase:
        # The local user owns the data directory: the refusal may say where it looked and how to fill it.
        hint = f" (in {self._settings.home}; `agentrag ingest --home {self._settings.home} --kb NAME FILES` makes one)"
        try:
            kb_id = resolve_kb(self._settings.home, name)
        except ConfigError as exc:
            raise not_found(name, hint) from exc
        with self._lock:
            if kb_id not in self._open:
                if kb_id not in self.visible():
                    raise not_found(name, hint)
                self._open[kb_id] = KnowledgeBase.open(
                    kb_id, settings=self._settings, create=False, embedder=self._embedder
                )
            return self._open[kb_id]

    def close(self) -> None:
        with self._lock:
            for kb in self._open.values():
                kb.close()
            self._open.clear()
