"""Rerankers behind one protocol: none (default), a /v1/rerank endpoint, or a local cross-encoder (extra)."""

from agentrag.rerank.base import Reranker, make_reranker

__all__ = ["Reranker", "make_reranker"]
