"""A LlamaIndex retriever over a knowledge base (extra `llamaindex`: llama-index-core).

    from agentrag.integrations.llamaindex import AgentragRetriever
    retriever = AgentragRetriever.from_kb(kb, k=5)                      # a local KnowledgeBase
    retriever = AgentragRetriever.from_service("http://127.0.0.1:8000", "support", api_key="ar_...")
    for found in retriever.retrieve("如何重置密码？"):
        print(found.score, found.node.metadata["source"], found.node.metadata["heading_path"])

Each hit becomes a `NodeWithScore`: a `TextNode` whose id is the chunk id and whose metadata is
`source.hit_metadata`, scored with the fused score. The ids and scores stay out of the text an LLM or an
embedder sees (`excluded_*_metadata_keys`); the source, title, heading path and page go with it.
"""

from __future__ import annotations

from typing import Any

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError('the LlamaIndex retriever needs llama-index-core: pip install "agentrag[llamaindex]"') from exc

from agentrag.integrations.source import FromSources, HitSource, hit_metadata

# Metadata that places a passage for a reader; everything else (ids, scores, ranks) is bookkeeping.
_SHOWN = {"source", "title", "heading", "page", "date"}


class AgentragRetriever(FromSources, BaseRetriever):
    """agentrag's hybrid search as a LlamaIndex retriever (`retrieve`, `aretrieve`, query engines)."""

    def __init__(self, hits: HitSource, callback_manager: CallbackManager | None = None) -> None:
        self.hits = hits
        super().__init__(callback_manager=callback_manager)

    @classmethod
    def over(cls, hits: HitSource) -> AgentragRetriever:
        return cls(hits)

    def _nodes(self, hits: list[dict[str, Any]]) -> list[NodeWithScore]:
        found = []
        for hit in hits:
            metadata = hit_metadata(hit, self.hits.knowledge_base)
            hidden = [key for key in metadata if key not in _SHOWN]
            node = TextNode(
                id_=hit["chunk_id"],
                text=hit["text"],
                metadata=metadata,
                excluded_llm_metadata_keys=hidden,
                excluded_embed_metadata_keys=hidden,
            )
            found.append(NodeWithScore(node=node, score=hit["score"]))
        return found

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(self.hits.search(query_bundle.query_str))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self._nodes(await self.hits.asearch(query_bundle.query_str))
