"""The LangChain and LlamaIndex retrievers return agentrag's hits, with where each passage is and how it was
found, from a local knowledge base and from a running service; sync and async; a refused key is named."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, NodeWithScore

from agentrag.integrations import langchain as lc
from agentrag.integrations import llamaindex as li
from agentrag.integrations.source import ServiceError
from agentrag.kb import KnowledgeBase
from agentrag.types import Hit
from tests.server.conftest import Running

QUESTION = "What does error E1042 mean?"
PDF_QUESTION = "Enterprise SLA service credits for monthly availability"


def assert_carries(metadata: dict[str, Any], hit: Hit) -> None:
    """The metadata of a framework document is the hit's: source, title, heading path, page, ids, scores."""
    chunk = hit.chunk
    assert metadata["chunk_id"] == chunk.chunk_id
    assert metadata["doc_id"] == chunk.doc_id
    assert metadata["source"] == chunk.source
    assert metadata["title"] == chunk.title
    assert metadata["heading_path"] == list(chunk.heading_path)
    assert metadata["heading"] == chunk.heading
    assert metadata["page"] == chunk.page
    assert metadata["rank"] == hit.rank
    assert metadata["score"] == pytest.approx(hit.score, abs=1e-6)
    assert metadata["knowledge_base"] == "default"
    assert set(metadata["channels"]) == set(hit.channels)
    for name, scored in hit.channels.items():
        assert metadata["channels"][name] == {"rank": scored.rank, "score": scored.score}
        assert metadata[f"{name}_rank"] == scored.rank
        assert metadata[f"{name}_score"] == scored.score


def assert_documents(docs: list[Document], hits: list[Hit]) -> None:
    assert [d.id for d in docs] == [h.chunk.chunk_id for h in hits]
    for doc, hit in zip(docs, hits, strict=True):
        assert doc.page_content == hit.chunk.text
        assert_carries(doc.metadata, hit)


def assert_nodes(found: list[NodeWithScore], hits: list[Hit]) -> None:
    assert [n.node.node_id for n in found] == [h.chunk.chunk_id for h in hits]
    for node, hit in zip(found, hits, strict=True):
        assert node.score == pytest.approx(hit.score, abs=1e-6)
        assert node.node.get_content() == hit.chunk.text
        assert_carries(node.node.metadata, hit)


def test_langchain_retriever_over_a_local_kb(sample_kb: KnowledgeBase) -> None:
    hits = sample_kb.search(QUESTION, k=4)
    retriever = lc.AgentragRetriever.from_kb(sample_kb, k=4)
    docs = retriever.invoke(QUESTION)
    assert_documents(docs, hits)
    assert docs[0].metadata["source"].endswith("aurora-api-handbook.md")
    assert "E1042" in docs[0].page_content
    assert {"bm25", "dense"} <= set(docs[0].metadata["channels"])
    assert_documents(asyncio.run(retriever.ainvoke(QUESTION)), hits)


def test_langchain_retriever_carries_the_page_of_a_pdf(sample_kb: KnowledgeBase) -> None:
    docs = lc.AgentragRetriever.from_kb(sample_kb, k=5).invoke(PDF_QUESTION)
    pdf = [d for d in docs if d.metadata["source"].endswith(".pdf")]
    assert pdf, [d.metadata["source"] for d in docs]
    assert all(isinstance(d.metadata["page"], int) and d.metadata["page"] >= 1 for d in pdf)


def test_langchain_retriever_over_the_service(sample_kb: KnowledgeBase, service: Running, sample_key: str) -> None:
    hits = sample_kb.search(QUESTION, k=3)
    retriever = lc.AgentragRetriever.from_service(service.url, "default", api_key=sample_key, k=3)
    assert_documents(retriever.invoke(QUESTION), hits)
    assert_documents(asyncio.run(retriever.ainvoke(QUESTION)), hits)


def test_a_filter_and_a_channel_reach_the_service(service: Running, sample_key: str) -> None:
    only_pdf = lc.AgentragRetriever.from_service(
        service.url, "default", api_key=sample_key, k=5, channel="bm25", filter={"source": "*.pdf"}
    )
    docs = only_pdf.invoke(PDF_QUESTION)
    assert docs
    assert all(d.metadata["source"].endswith(".pdf") for d in docs)
    assert all(set(d.metadata["channels"]) == {"bm25"} for d in docs)


def test_llamaindex_retriever_over_a_local_kb(sample_kb: KnowledgeBase) -> None:
    hits = sample_kb.search(QUESTION, k=4)
    retriever = li.AgentragRetriever.from_kb(sample_kb, k=4)
    found = retriever.retrieve(QUESTION)
    assert_nodes(found, hits)
    assert_nodes(asyncio.run(retriever.aretrieve(QUESTION)), hits)
    # What an LLM is shown places the passage; ids and scores stay out of it.
    shown = found[0].node.get_content(MetadataMode.LLM)
    assert hits[0].chunk.source in shown
    assert hits[0].chunk.chunk_id not in shown
    assert "bm25_score" not in shown


def test_llamaindex_retriever_over_the_service(sample_kb: KnowledgeBase, service: Running, sample_key: str) -> None:
    hits = sample_kb.search(QUESTION, k=3)
    retriever = li.AgentragRetriever.from_service(service.url, "default", api_key=sample_key, k=3)
    assert_nodes(retriever.retrieve(QUESTION), hits)
    assert_nodes(asyncio.run(retriever.aretrieve(QUESTION)), hits)


@pytest.mark.parametrize("make", [lc.AgentragRetriever.from_service, li.AgentragRetriever.from_service])
def test_a_wrong_key_is_named(service: Running, make: Any) -> None:
    retriever = make(service.url, "default", api_key="ar_not-a-key", k=3)
    search = retriever.invoke if isinstance(retriever, lc.AgentragRetriever) else retriever.retrieve
    with pytest.raises(ServiceError, match="refused the API key") as refused:
        search(QUESTION)
    assert refused.value.status == 401
    asearch = retriever.ainvoke if isinstance(retriever, lc.AgentragRetriever) else retriever.aretrieve
    with pytest.raises(ServiceError, match="refused the API key"):
        asyncio.run(asearch(QUESTION))


def test_another_knowledge_base_is_not_reachable(service: Running) -> None:
    other_key = service.key("other")
    retriever = lc.AgentragRetriever.from_service(service.url, "default", api_key=other_key)
    with pytest.raises(ServiceError, match="no knowledge base 'default' this key may use") as refused:
        retriever.invoke(QUESTION)
    assert refused.value.status == 404


def test_bad_arguments_are_named(sample_kb: KnowledgeBase) -> None:
    from agentrag.errors import ConfigError

    with pytest.raises(ConfigError, match="k: 0"):
        lc.AgentragRetriever.from_kb(sample_kb, k=0)
    with pytest.raises(ConfigError, match="channel: unknown channel 'vector'"):
        li.AgentragRetriever.from_kb(sample_kb, channel="vector")
    with pytest.raises(ConfigError, match="api_key"):
        li.AgentragRetriever.from_service("http://127.0.0.1:1", "default", api_key="")
