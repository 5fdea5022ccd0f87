"""Embedders behind one protocol; `make_embedder` builds the configured one."""

from agentrag.embed.base import Embedder, make_embedder

__all__ = ["Embedder", "make_embedder"]
