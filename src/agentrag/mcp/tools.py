"""The MCP server: four tools and a document resource over the knowledge bases a `Library` lets a caller use.

Every tool runs the knowledge base's blocking work (embedding, the store, the agent) in a worker thread, so one
long `ask` never stalls the other calls sharing the event loop (under `agentrag serve`, the whole service's).
An error the caller can act on (an unknown knowledge base, a bad chunk id, a budget key, a bad filter date, a
question too long) comes back as a tool error whose text says what to change; the calling model reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, TypeVar
from urllib.parse import unquote

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from agentrag import __version__
from agentrag.agent.budget_overrides import KNOWN as BUDGET_KEYS
from agentrag.agent.budget_overrides import check_overrides
from agentrag.errors import AgentragError
from agentrag.kb import KnowledgeBase
from agentrag.mcp.library import Library
from agentrag.mcp.revision import pinned_revision
from agentrag.mcp.schemas import DOCUMENT_URI, KbArg, SearchFilterArg, chunk_result, hit_result
from agentrag.trace import TraceEvent
from agentrag.vocab import Channel, Mode, Preset

T = TypeVar("T")
log = logging.getLogger(__name__)
LibraryFor = Callable[[Context], Library]

INSTRUCTIONS = (
    "agentrag answers questions over a team's own documents (Chinese and English) with checked citations. "
    "Use `ask` for a question you want answered from the documents; use `search` to see the passages "
    "themselves (exact terms, error codes, a filter); `read_chunk` gives a hit's full passage; "
    "`list_knowledge_bases` names the knowledge bases you may pass as `kb`."
)
_CHANNEL_HELP = "hybrid: BM25 and dense fused (the best default); bm25: exact words; dense: meaning."
_MODE_HELP = "auto routes by the question; agent plans sub-queries (comparisons, multi-hop); direct never searches."
_BUDGET_HELP = f"Overrides of the preset's budget, e.g. {{'max_retrieval_calls': 4}}; keys: {', '.join(BUDGET_KEYS)}."
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


_SEARCH_HELP = (
    "Search the documents for passages: ranked hits with their text, source, heading, page and the score from "
    "each channel. Use it to see the evidence itself, for exact terms (error codes, model numbers: channel "
    "'bm25'), or to restrict by file, tag or date; use `ask` for an answer instead."
)
_ASK_HELP = (
    "Answer a question from the documents, with numbered citations that were checked against the passages they "
    "cite. Returns the answer, short_answer (when the question has a short form), confidence (high, partial, "
    "low), citations, unsupported sentences, stop_reason and the trace id. Sends progress notifications while it "
    "works. Use it for any question about the documents' content."
)
_READ_CHUNK_HELP = (
    "The full passage (chunk) with its source, heading and page, by the chunk_id a search hit or a citation "
    "gave. Use it when a snippet is not enough to answer or to quote."
)
_LIST_HELP = (
    "The knowledge bases you may use (id, display name, documents, chunks, and which one is the default). Call "
    "it first when you do not know which `kb` to pass to the other tools."
)
_DOCUMENT_HELP = (
    "A whole document of a knowledge base as text, its passages in order (the document_uri of a search hit or "
    "read_chunk result)."
)


async def _blocking(func: Callable[[], T]) -> T:
    """`func` in a worker thread; an AgentragError becomes a tool error with its message."""
    try:
        return await anyio.to_thread.run_sync(func)
    except AgentragError as exc:
        raise ToolError(str(exc)) from exc


def build_server(library_for: LibraryFor) -> MCPServer:
    """The MCP server; `library_for(ctx)` is the caller's `Library` (a key's knowledge bases, over HTTP)."""
    # MCPServer configures the root logger (logging.basicConfig with a Rich handler); the CLI and the service
    # own logging, so that is undone. (Its tool-error lines are INFO: the caller gets those errors as results.)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server = MCPServer(
        name="agentrag",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        middleware=[pinned_revision],
    )
    root.handlers[:] = handlers
    root.setLevel(level)
    tools = Tools(library_for)
    server.add_tool(tools.search, name="search", description=_SEARCH_HELP, annotations=_READ_ONLY)
    server.add_tool(tools.ask, name="ask", description=_ASK_HELP, annotations=_READ_ONLY)
    server.add_tool(tools.read_chunk, name="read_chunk", description=_READ_CHUNK_HELP, annotations=_READ_ONLY)
    server.add_tool(
        tools.list_knowledge_bases, name="list_knowledge_bases", description=_LIST_HELP, annotations=_READ_ONLY
    )
    server.resource(DOCUMENT_URI, name="document", description=_DOCUMENT_HELP, mime_type="text/plain")(tools.document)
    return server


class Tools:
    """The tools' handlers; each call finds its caller's knowledge bases through `library_for(ctx)`."""

    def __init__(self, library_for: LibraryFor) -> None:
        self.library_for = library_for

    def open_kb(self, ctx: Context, kb: str | None) -> tuple[Library, KnowledgeBase]:
        library = self.library_for(ctx)
        return library, library.open(kb or library.default_kb)

    async def search(
        self,
        query: Annotated[str, Field(min_length=1, max_length=2000, description="What to look for, any language.")],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=100, description="How many hits.")] = 10,
        channel: Annotated[Channel, Field(description=_CHANNEL_HELP)] = Channel.HYBRID,
        filter: Annotated[SearchFilterArg | None, Field(description="Restrict to some documents.")] = None,
        kb: KbArg = None,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            _, knowledge_base = self.open_kb(ctx, kb)
            hits = knowledge_base.search(query, k, channel, filter.to_filter() if filter else None)
            found = [hit_result(knowledge_base.name, h) for h in hits]
            return {"kb": knowledge_base.name, "query": query, "channel": channel.value, "hits": found}

        return await _blocking(run)

    async def ask(
        self,
        question: Annotated[str, Field(min_length=1, description="The question, in any language.")],
        ctx: Context,
        mode: Annotated[Mode, Field(description=_MODE_HELP)] = Mode.AUTO,
        preset: Annotated[Preset, Field(description="The budget: fast, balanced or thorough.")] = Preset.BALANCED,
        budget: Annotated[dict[str, Any] | None, Field(description=_BUDGET_HELP)] = None,
        kb: KbArg = None,
    ) -> dict[str, Any]:
        return await _ask(ctx, self.open_kb, question, mode, preset, budget, kb)

    async def read_chunk(
        self,
        id: Annotated[str, Field(min_length=1, description="A chunk_id from search hits or ask citations.")],
        ctx: Context,
        kb: KbArg = None,
    ) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            _, knowledge_base = self.open_kb(ctx, kb)
            try:
                chunk = knowledge_base.chunk(id)
            except AgentragError as exc:
                raise ToolError(f"{exc}; pass a chunk_id exactly as a search hit or citation gave it") from exc
            return chunk_result(knowledge_base.name, chunk)

        return await _blocking(run)

    async def list_knowledge_bases(self, ctx: Context) -> dict[str, Any]:
        return await _blocking(partial(_listed, self.library_for(ctx)))

    async def document(self, kb: str, doc_id: str, ctx: Context) -> str:
        def run() -> str:
            _, knowledge_base = self.open_kb(ctx, unquote(kb))
            doc, chunks = knowledge_base.document(unquote(doc_id))
            head = f"# {doc.title}\nsource: {doc.source}\n\n" if doc.title else f"source: {doc.source}\n\n"
            return head + "\n\n".join(c.text for c in sorted(chunks, key=lambda c: c.position))

        try:
            return await anyio.to_thread.run_sync(run)
        except AgentragError as exc:
            raise ResourceNotFoundError(str(exc)) from exc


def _listed(library: Library) -> dict[str, Any]:
    out = []
    for kb_id in library.visible():
        kb = library.open(kb_id)
        stats = kb.stats()
        default = library.default_kb in (kb.name, kb.display_name)
        out.append(
            {
                "id": kb.name,
                "display_name": kb.display_name,
                "documents": stats.documents,
                "chunks": stats.chunks,
                "default": default,
            }
        )
    return {"knowledge_bases": out}


async def _ask(
    ctx: Context,
    open_kb: Callable[[Context, str | None], tuple[Library, KnowledgeBase]],
    question: str,
    mode: Mode,
    preset: Preset,
    budget: dict[str, Any] | None,
    kb: str | None,
) -> dict[str, Any]:
    """The answer (the `ask --json` contract and its `kb`), each step of it reported as progress meanwhile."""
    steps = 0

    def on_event(event: TraceEvent) -> None:
        nonlocal steps
        if event.message and steps >= 0:  # the steps a person would follow (the SSE stream's `progress` events)
            steps += 1
            try:
                anyio.from_thread.run(ctx.report_progress, steps, None, event.message)
            except Exception:  # the caller is gone (cancelled, disconnected): the answer still ends and is traced
                log.debug("progress not delivered; no more are sent for this answer", exc_info=True)
                steps = -1

    def run() -> dict[str, Any]:
        library, knowledge_base = open_kb(ctx, kb)
        limit = library.settings.server.max_question_chars
        if len(question) > limit:
            raise ToolError(
                f"question: {len(question)} characters, more than the {limit} allowed (server.max_question_chars); "
                "ask a shorter question"
            )
        overrides = check_overrides(budget) if budget else None
        answer = knowledge_base.ask(question, mode=mode, preset=preset, budget=overrides, on_event=on_event)
        return {"kb": knowledge_base.name, **answer.contract()}

    return await _blocking(run)
