"""Doors into agentrag from other frameworks: retrievers for LangChain and LlamaIndex.

Each adapter is an optional extra (`pip install "agentrag[langchain]"`, `"agentrag[llamaindex]"`) and reads
hits from a `HitSource`: a local `KnowledgeBase` or a running service's search endpoint (`source.py`). Nothing
here is imported by the rest of agentrag, so the frameworks are never loaded unless a user imports an adapter.
"""
