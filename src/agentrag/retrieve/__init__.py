"""Hybrid retrieval: BM25 and dense channels, fusion, filters, de-duplication, optional rerank."""

from agentrag.retrieve.hybrid import Retriever

__all__ = ["Retriever"]
