"""Conversations and long-term memory around `KnowledgeBase.ask`: one object for every interface.

    from agentrag import KnowledgeBase, load_settings
    from agentrag.session import LOCAL_OWNER, Sessions

    settings = load_settings(".agentrag")
    sessions = Sessions(settings)
    with KnowledgeBase.open("default", settings=settings) as kb:
        sessions.ask(kb, "I work on the Enterprise plan billing.", owner=LOCAL_OWNER, conversation_id="c1")
        answer = sessions.ask(kb, "What does it cost?", owner=LOCAL_OWNER, conversation_id="c1")
    sessions.close()

An owner is whoever asks: an API key in the HTTP service, the local user (`LOCAL_OWNER`) in `agentrag chat`.
Each question is scanned for what the owner says about themselves, which is remembered as a fact; the
owner's facts closest to the question go to the synthesizer as context about the user (never as evidence).
A conversation named by id is loaded before the question and saved after it, one question at a time per
(owner, conversation); an in-memory `Conversation` is used as given and never saved.

Conversations live in `Layout.conversations`: a key's as `<key_id>-<conversation_id>.json`, the local
user's under the bare name (`<conversation_id>.json`, as `agentrag chat --conversation` always kept them).
The one-question-at-a-time lock holds across processes (`agentrag.locks`: Redis when `redis_url` is set, a
file lock otherwise), so two workers, or the service and `agentrag chat`, never lose each other's turns.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from agentrag.agent.facts import Fact, FactStore
from agentrag.agent.memory import Conversation, ConversationStore
from agentrag.embed.base import Embedder
from agentrag.errors import ConfigError
from agentrag.kb import KnowledgeBase, shared_embedder
from agentrag.layout import Layout
from agentrag.locks import make_locks
from agentrag.settings import Settings
from agentrag.trace import TraceEvent
from agentrag.types import Answer
from agentrag.vocab import Mode, Preset

# The owner of everything asked on this machine's command line (API key ids are hexadecimal: never this).
LOCAL_OWNER = "local"


class Sessions:
    """Owners' conversations and long-term memory in one data directory; safe to share between threads."""

    def __init__(self, settings: Settings, embedder: Embedder | None = None) -> None:
        layout = Layout(settings.home)
        self._conversations = ConversationStore(layout.conversations)
        self._facts = FactStore(settings.home, embedder or shared_embedder(settings.embedder))
        self.locks = make_locks(settings.redis_url, layout.locks, settings.server.conversation_wait_s)

    # ------------------------------------------------------------------ answers

    def ask(
        self,
        kb: KnowledgeBase,
        question: str,
        *,
        owner: str,
        conversation_id: str | None = None,
        conversation: Conversation | None = None,
        mode: Mode = Mode.AUTO,
        preset: Preset = Preset.BALANCED,
        budget: dict[str, Any] | None = None,
        on_event: Callable[[TraceEvent], None] | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> Answer:
        """Answer with the owner's memory: the stored conversation `conversation_id` (loaded, then saved with
        this turn), or the in-memory `conversation` (updated, not saved), or none."""
        if conversation_id is not None and conversation is not None:
            raise ConfigError("ask: give a conversation_id or a conversation, not both")
        self._facts.remember(owner, question)

        def answer(history: Conversation | None) -> Answer:
            return kb.ask(
                question,
                mode=mode,
                preset=preset,
                budget=budget,
                conversation=history,
                on_event=on_event,
                on_token=on_token,
                user_facts=self._relevant_facts(kb, owner, question),
            )

        if conversation_id is None:
            return answer(conversation)
        with self._conversation_lock(owner, conversation_id):
            stored = self._conversations.load(_file_id(owner, conversation_id))
            result = answer(stored)
            self._conversations.save(stored)
        return result

    def _relevant_facts(self, kb: KnowledgeBase, owner: str, question: str) -> list[str]:
        if not self._facts.has_facts(owner):  # embedding the question costs; most owners have no facts
            return []
        vector = kb.retriever.embed_query(question)
        return [f.text for f in self._facts.relevant(owner, vector)]

    def _conversation_lock(self, owner: str, conversation_id: str) -> AbstractContextManager[None]:
        return self.locks.hold(f"conversation {owner}/{conversation_id}")

    # ------------------------------------------------------------------ conversations

    def conversation(self, owner: str, conversation_id: str) -> Conversation:
        """The stored conversation (empty if there is none yet)."""
        with self._conversation_lock(owner, conversation_id):
            return self._conversations.load(_file_id(owner, conversation_id))

    def reset(self, owner: str, conversation_id: str) -> None:
        """Start the stored conversation over: the next question has no history."""
        with self._conversation_lock(owner, conversation_id):
            self._conversations.save(Conversation(conversation_id=_file_id(owner, conversation_id)))

    # ------------------------------------------------------------------ long-term memory

    def facts(self, owner: str) -> list[Fact]:
        """What the owner said about themselves, oldest first."""
        return self._facts.for_owner(owner)

    def forget(self, owner: str, fact_id: str) -> bool:
        """Delete one of the owner's facts; False if the owner has no such fact."""
        return self._facts.delete(owner, fact_id)

    def close(self) -> None:
        self._facts.close()

    def __enter__(self) -> Sessions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _file_id(owner: str, conversation_id: str) -> str:
    return conversation_id if owner == LOCAL_OWNER else f"{owner}-{conversation_id}"
