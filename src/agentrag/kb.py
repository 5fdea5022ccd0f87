"""The Python API: a named knowledge base inside a data directory.

    from agentrag import KnowledgeBase
    kb = KnowledgeBase.open("default", home=".agentrag")
    kb.ingest(["docs/"], tags={"team": "infra"})
    for hit in kb.search("如何重置密码", k=5):
        print(hit.rank, hit.chunk.source, hit.chunk.text[:80])

The CLI and the HTTP service call exactly this.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from agentrag.cache import Cache, make_cache
from agentrag.embed.base import Embedder, make_embedder
from agentrag.errors import ConfigError, DocumentNotFound, KnowledgeBaseNotFound, StoreBusyError
from agentrag.kb_names import (
    KB_NAME,
    MAX_DISPLAY_NAME,
    KnowledgeBaseNameTaken,
    claim_display_name,
    kb_id_for,
    list_knowledge_bases,
    named,
    normal_display_name,
    resolve_kb,
    validate_kb_name,
)
from agentrag.layout import Layout
from agentrag.rerank.base import make_reranker
from agentrag.retrieve.hybrid import Retriever
from agentrag.settings import EmbedderSettings, Settings, load_settings
from agentrag.store.base import DocumentPage, DocumentQuery, Store, StoreStats, make_store
from agentrag.types import Answer, Channel, Chunk, Document, Hit, IngestReport, SearchFilter
from agentrag.vocab import Mode, Preset

if TYPE_CHECKING:  # the agent and the ingest pipeline load when a question is asked or files are ingested
    from agentrag.agent.assistant import Assistant
    from agentrag.agent.memory import Conversation
    from agentrag.ingest.pipeline import ChunkProgressCallback, ProgressCallback
    from agentrag.llm.client import LLMClient
    from agentrag.trace import TraceEvent

__all__ = [  # the naming rules live in kb_names; callers of the Python API find them here too
    "KB_NAME",
    "MAX_DISPLAY_NAME",
    "KnowledgeBase",
    "KnowledgeBaseNameTaken",
    "claim_display_name",
    "kb_id_for",
    "list_knowledge_bases",
    "normal_display_name",
    "resolve_kb",
    "shared_cache",
    "shared_embedder",
    "validate_kb_name",
]

log = logging.getLogger(__name__)

_embedders: dict[str, Embedder] = {}
_embedders_lock = threading.Lock()


def shared_embedder(settings: EmbedderSettings) -> Embedder:
    """One embedder per configuration per process: the local model takes memory and a moment to load."""
    key = settings.model_dump_json()
    with _embedders_lock:
        if key not in _embedders:
            _embedders[key] = make_embedder(settings)
        return _embedders[key]


_caches: dict[str, Cache] = {}


def shared_cache(settings: Settings) -> Cache | None:
    """One cache per process (per Redis URL), shared by every knowledge base; None when disabled."""
    if not settings.cache.enabled:
        return None
    key = settings.redis_url or "memory"
    with _embedders_lock:
        if key not in _caches:
            _caches[key] = make_cache(settings.redis_url, settings.cache.max_entries, settings.cache.ttl_s)
        return _caches[key]


def narrowed(scope: SearchFilter, flt: SearchFilter | None) -> SearchFilter:
    """`flt` kept inside `scope`: what the scope restricts stays restricted (its sources, documents and tags
    win; dates take the tighter bound), and `flt` can only narrow what the scope leaves open."""
    if flt is None:
        return scope
    starts = [d for d in (scope.date_from, flt.date_from) if d is not None]
    ends = [d for d in (scope.date_to, flt.date_to) if d is not None]
    return SearchFilter(
        sources=scope.sources or flt.sources,
        doc_ids=scope.doc_ids or flt.doc_ids,
        tags={**flt.tags, **scope.tags},
        date_from=max(starts) if starts else None,
        date_to=min(ends) if ends else None,
    )


class ScopedRetriever(Retriever):
    """The knowledge base's retriever with every search kept inside one filter (`ask --filter`)."""

    def __init__(self, base: Retriever, scope: SearchFilter) -> None:
        super().__init__(
            base.store, base.embedder, base.settings, base.reranker, base.rerank_top_n, base.cache, base.namespace
        )
        self.scope = scope

    def search(
        self,
        query: str,
        k: int | None = None,
        channel: Channel | None = None,
        flt: SearchFilter | None = None,
        query_vector: npt.NDArray[np.float32] | None = None,
    ) -> list[Hit]:
        return super().search(query, k, channel, narrowed(self.scope, flt), query_vector)


class KnowledgeBase:
    def __init__(
        self, name: str, settings: Settings, embedder: Embedder | None = None, *, search_cache: bool = True
    ) -> None:
        self.name = validate_kb_name(name)
        self.settings = settings
        self.path = Layout(settings.home).kb_dir(name)
        self.store: Store = make_store(settings.store, Layout(settings.home).kb_dir(name))
        self.instance_id = Layout(settings.home).kb_instance_id(name)
        # Cache keys name the instance, not only the folder: a recreated knowledge base starts over.
        self._cache_namespace = f"{self.path.resolve()}#{self.instance_id}"
        if settings.store.backend != "sqlite":  # the same name in another backend is another knowledge base
            store = settings.store
            self._cache_namespace += f"#{store.backend}:{store.uri}:{store.db_name}:{store.collection_prefix}"
        self.embedder = embedder or shared_embedder(settings.embedder)
        self._bound = False
        self._assistant: Assistant | None = None
        self.retriever = Retriever(
            self.store,
            self.embedder,
            settings.retrieval,
            make_reranker(settings.rerank),
            settings.rerank.top_n,
            cache=shared_cache(settings) if search_cache else None,
            namespace=self._cache_namespace,
        )

    @classmethod
    def open(
        cls,
        name: str = "default",
        home: Path | str | None = None,
        settings: Settings | None = None,
        create: bool = True,
        embedder: Embedder | None = None,
        search_cache: bool = True,
        display_name: str | None = None,
    ) -> KnowledgeBase:
        """`name`: the id or the display name (any script) of the knowledge base; a new one named with something
        other than a valid id gets a derived id (`kb_id_for`) and keeps `name` as its display name.
        `display_name`: the one to give a new knowledge base (default: `name`).
        `search_cache=False`: searches never come from (or go into) the shared cache, as when measuring."""
        settings = settings or load_settings(home)
        if home is not None and Path(home) != settings.home:
            settings = settings.model_copy(update={"home": Path(home)})
        layout = Layout(settings.home)
        kb_id = resolve_kb(settings.home, name)
        local = settings.store.backend == "sqlite"  # another backend's knowledge bases live in its engine
        if not create and local and not layout.store_file(kb_id).exists():
            known = [f"{kb} ({shown})" if shown and shown != kb else kb for kb, shown in named(layout)]
            hint = f" (known: {', '.join(known)})" if known else " (run `agentrag ingest` first)"
            raise KnowledgeBaseNotFound(f"no knowledge base {name!r} in {settings.home}{hint}")
        if create:
            claim_display_name(layout, kb_id, display_name or name, explicit=display_name is not None)
        knowledge_base = cls(kb_id, settings, embedder, search_cache=search_cache)
        if not create and not local and knowledge_base.store.stats().embedder is None:
            knowledge_base.close()
            raise KnowledgeBaseNotFound(f"no knowledge base {name!r} in {settings.store.backend} (run ingest first)")
        return knowledge_base

    @property
    def display_name(self) -> str:
        """The name people see (any script); the id when none was given."""
        return Layout(self.settings.home).kb_display_name(self.name) or self.name

    def _bind(self) -> None:
        """Check (or record) the embedding model before anything touches vectors."""
        if not self._bound:
            self.store.bind_embedder(self.embedder.name, self.embedder.dim)
            self._bound = True

    # ------------------------------------------------------------------ writes

    def ingest(
        self,
        paths: list[Path | str],
        tags: dict[str, str] | None = None,
        progress: ProgressCallback | None = None,
        source_root: Path | None = None,
        sync: bool = False,
        on_chunks: ChunkProgressCallback | None = None,
    ) -> IngestReport:
        """Add, update or skip each file (by content hash); `source_root` records sources relative to it.

        A file renamed with its content unchanged is moved (its chunks and vectors kept); nothing else is
        deleted unless `sync`: then the documents of files gone from each folder in `paths` are.
        `progress` hears of each file as it ends (files of a folder with a type that is not ingested: skipped);
        `on_chunks` of the chunks embedded so far, after each embedding call (`ChunkProgress`)."""
        self._bind()
        from agentrag.ingest.pipeline import IngestPipeline

        pipeline = IngestPipeline(self.store, self.embedder, self.settings)
        report = pipeline.ingest([Path(p) for p in paths], tags, progress, source_root, sync=sync, on_chunks=on_chunks)
        try:
            self.store.optimize()
        except StoreBusyError as exc:  # everything is committed; compaction waits for the next write
            log.warning("knowledge base %r: index compaction skipped: %s", self.name, exc)
        return report

    def delete(self, doc_id: str) -> None:
        if not self.store.delete_document(doc_id):
            raise DocumentNotFound(f"no document {doc_id!r} in knowledge base {self.name!r}")
        self.store.optimize()

    # ------------------------------------------------------------------ reads

    def search(
        self,
        query: str,
        k: int | None = None,
        channel: Channel | None = None,
        flt: SearchFilter | None = None,
        query_vector: npt.NDArray[np.float32] | None = None,
    ) -> list[Hit]:
        if not query.strip():
            raise ConfigError("query: empty query")
        self._bind()
        return self.retriever.search(query, k, channel, flt, query_vector)

    def documents(self, limit: int | None = None, offset: int = 0) -> list[Document]:
        return self.store.list_documents(limit, offset)

    def find_documents(
        self, text: str = "", tags: dict[str, str] | None = None, offset: int = 0, limit: int | None = None
    ) -> DocumentPage:
        """Documents whose title or source contains `text` (any case, any script) with every tag in `tags`,
        newest ingest first; `total` counts them all, the page holds `limit` from `offset`."""
        return self.store.find_documents(DocumentQuery(text=text, tags=tags or {}, offset=offset, limit=limit))

    def document(self, doc_id: str) -> tuple[Document, list[Chunk]]:
        doc = self.store.get_document(doc_id)
        if doc is None:
            raise DocumentNotFound(f"no document {doc_id!r} in knowledge base {self.name!r}")
        return doc, self.store.get_document_chunks(doc_id)

    def chunk(self, chunk_id: str) -> Chunk:
        found = self.store.get_chunk_by_id(chunk_id)
        if found is None:
            raise DocumentNotFound(f"no chunk {chunk_id!r} in knowledge base {self.name!r}")
        return found[1]

    def stats(self) -> StoreStats:
        """Documents, chunks, index generation, embedding model and size of this knowledge base."""
        return self.store.stats()

    # ------------------------------------------------------------------ answers

    @property
    def assistant(self) -> Assistant:
        """The question-answering agent over this knowledge base (model-free unless an LLM is configured)."""
        if self._assistant is None:
            self._bind()
            self._assistant = self._make_assistant(self.retriever, self._llm())
        return self._assistant

    def _make_assistant(self, retriever: Retriever, llm: LLMClient | None) -> Assistant:
        layout = Layout(self.settings.home)
        from agentrag.agent.assistant import Assistant

        return Assistant(
            retriever,
            llm,
            kb_name=self.name,
            trace_dir=layout.traces(self.name),
            failures_path=layout.failures,
            count_documents=lambda: self.store.stats().documents,
        )

    def _llm(self) -> LLMClient | None:
        """The configured endpoint's client; model-free (None) never imports the openai SDK."""
        if not self.settings.llm.configured:
            return None
        from agentrag.llm.client import make_llm

        return make_llm(
            self.settings.llm,
            cache=shared_cache(self.settings),
            cache_scope=lambda: f"{self._cache_namespace}@{self.store.generation}",
        )

    def ask(
        self,
        question: str,
        mode: Mode | str = Mode.AUTO,
        preset: Preset | str = Preset.BALANCED,
        budget: dict[str, Any] | None = None,
        conversation: Conversation | None = None,
        on_event: Callable[[TraceEvent], None] | None = None,
        on_token: Callable[[str], None] | None = None,
        user_facts: list[str] | None = None,
        flt: SearchFilter | None = None,
    ) -> Answer:
        """Answer a question with cited sources; see `Answer.contract()` for the `ask --json` shape.

        `user_facts`: what the asker said about themselves earlier (long-term memory), given to the
        synthesizer as context about the user, never as evidence. `conversation` gains this turn (older
        turns folded into its summary within this question's budget). `flt`: every search of this question
        (planned, rewritten or a tool's) stays inside it, as `search` with the same filter would.
        """
        assistant = self.assistant
        if flt is not None and not flt.is_empty():
            assistant = self._make_assistant(ScopedRetriever(self.retriever, flt), assistant.llm)
        return assistant.ask(question, mode, preset, budget, conversation, on_event, on_token, user_facts)

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        self.store.close()

    def destroy(self) -> None:
        """Delete this knowledge base and every file in its folder."""
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
