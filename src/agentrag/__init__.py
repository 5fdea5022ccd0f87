"""agentrag: agentic retrieval-augmented question answering over your own documents, Chinese and English."""

from agentrag.kb import KnowledgeBase, list_knowledge_bases
from agentrag.settings import Settings, load_settings
from agentrag.types import Chunk, Document, Hit, IngestReport, SearchFilter

__version__ = "0.1.0"

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
