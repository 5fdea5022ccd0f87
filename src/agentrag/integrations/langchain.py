"""A LangChain retriever over a knowledge base (extra `langchain`: langchain-core).

    from agentrag.integrations.langchain import AgentragRetriever
    retriever = AgentragRetriever.from_kb(kb, k=5)                      # a local KnowledgeBase
    retriever = AgentragRetriever.from_service("http://127.0.0.1:8000", "support", api_key="ar_...")
    for doc in retriever.invoke("如何重置密码？"):
        print(doc.metadata["source"], doc.metadata["heading_path"], doc.metadata["channels"])

Each hit becomes a `Document` whose `id` is the chunk id and whose metadata is `source.hit_metadata`.
"""

from __future__ import annotations

from typing import Any

try:
    from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError('the LangChain retriever needs langchain-core: pip install "agentrag[langchain]"') from exc
from pydantic import ConfigDict

from agentrag.integrations.source import FromSources, HitSource, hit_metadata


class AgentragRetriever(FromSources, BaseRetriever):
    """agentrag's hybrid search as a LangChain retriever (`invoke`, `ainvoke`, `batch`, chains)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    hits: HitSource

    @classmethod
    def over(cls, hits: HitSource) -> AgentragRetriever:
        return cls(hits=hits)

    def _documents(self, hits: list[dict[str, Any]]) -> list[Document]:
        kb = self.hits.knowledge_base
        return [Document(page_content=h["text"], metadata=hit_metadata(h, kb), id=h["chunk_id"]) for h in hits]

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return self._documents(self.hits.search(query))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._documents(await self.hits.asearch(query))
