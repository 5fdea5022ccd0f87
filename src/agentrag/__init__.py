"""agentrag: agentic retrieval-augmented question answering over your own documents, Chinese and English.

The names below load on first use (PEP 562), so `import agentrag.cli` or `agentrag --help` does not pay for
numpy, jieba and the agent before a command needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentrag.kb import KnowledgeBase, list_knowledge_bases
    from agentrag.settings import Settings, load_settings
    from agentrag.types import Chunk, Document, Hit, IngestReport, SearchFilter

__version__ = "0.1.0"

# Each public name and the module defining it.
_LAZY = {
    "KnowledgeBase": "agentrag.kb",
    "list_knowledge_bases": "agentrag.kb",
    "Settings": "agentrag.settings",
    "load_settings": "agentrag.settings",
    "Chunk": "agentrag.types",
    "Document": "agentrag.types",
    "Hit": "agentrag.types",
    "IngestReport": "agentrag.types",
    "SearchFilter": "agentrag.types",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentrag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # found once, then an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "Chunk",
    "Document",
    "Hit",
    "IngestReport",
    "KnowledgeBase",
    "SearchFilter",
    "Settings",
    "__version__",
    "list_knowledge_bases",
    "load_settings",
]
