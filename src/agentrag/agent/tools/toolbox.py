"""Runs the agent model's tool calls for one question: validation, the repeat guard, the budget, timeouts.

Search tools return compact results (id, title, heading path, snippet, score) as JSON quoted as data (they are
document text); `read_chunk` expands one. Errors are ours and stand unquoted.
Arguments are validated against the tool's pydantic model, and a bad call is answered with an error the
model can correct, never an exception. A query too close to an earlier one searched the same way (channel and
filter) is refused with advice to change strategy. Independent calls run concurrently, each under a timeout.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from agentrag.agent.budget import BudgetTracker
from agentrag.agent.tools.base import ToolResult, tool_error
from agentrag.agent.tools.registry import registry
from agentrag.errors import AgentragError
from agentrag.retrieve.hybrid import Retriever
from agentrag.text.quoting import quote
from agentrag.text.tokenize import tokenize_query
from agentrag.types import Hit, SearchFilter
from agentrag.vocab import Channel

SNIPPET_CHARS = 240


def _compact(hit: Hit) -> dict[str, Any]:
    c = hit.chunk
    text = " ".join(c.text.split())
    return {
        "id": c.chunk_id,
        "title": c.title,
        "heading": c.heading,
        "date": c.date.isoformat() if c.date else None,
        "snippet": text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…",
        "score": round(hit.score, 3),
    }


# How a search runs, apart from its words: the channel, and the filter as JSON ("" for none).
SearchScope = tuple[Channel, str]


def search_scope(channel: Channel, flt: SearchFilter | None) -> SearchScope:
    """Searches in the same scope can repeat each other; an empty filter is no filter."""
    return channel, flt.model_dump_json() if flt is not None and flt != SearchFilter() else ""


class ToolBox:
    """The tools of one question, bound to its retriever and budget."""

    def __init__(self, retriever: Retriever, tracker: BudgetTracker, read_chunk: Callable[[str], Hit | None]) -> None:
        self.retriever = retriever
        self.tracker = tracker
        self.read_chunk = read_chunk
        self.tools = registry()
        self._past_queries: list[tuple[str, SearchScope, frozenset[str], npt.NDArray[np.float32]]] = []
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agentrag-tool")
        # Query embeddings get their own threads: a search call waiting on one never starves the tool pool.
        self._embed_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agentrag-embed")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._embed_pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------------------------- repeat guard

    def repeat_of(self, query: str, vector: npt.NDArray[np.float32], scope: SearchScope | None = None) -> str | None:
        """An earlier query this one merely repeats, searched the same way (`scope`: channel and filter).

        The same words through another channel or filter are a new search, and the one a refusal advises
        (`keyword_search "E1042"` after a semantic search for "E1042 meaning"). Within a scope, repeats are:
        the same normalised tokens; a cosine above `repeat_cosine` (0.9) with at least half the words
        shared; or a cosine above `repeat_cosine_alone` (0.97). The word condition is there because small
        embedding models crowd related queries together: with multilingual-e5-small, "标准版价格" and
        "企业版价格" (two different plans) are 0.95 apart, "E1042 meaning" and "E1029 meaning" 0.91, while a
        true paraphrase scores 0.95-0.98.
        """
        budget = self.tracker.budget
        scope = scope or self.planned_scope
        tokens = frozenset(tokenize_query(query))
        for earlier, earlier_scope, earlier_tokens, earlier_vector in self._past_queries:
            if earlier_scope != scope:
                continue
            if tokens and tokens == earlier_tokens:
                return earlier
            cosine = float(vector @ earlier_vector)
            shared = len(tokens & earlier_tokens) / max(1, len(tokens | earlier_tokens))
            if cosine > budget.repeat_cosine_alone or (cosine > budget.repeat_cosine and shared >= 0.5):
                return earlier
        return None

    @property
    def planned_scope(self) -> SearchScope:
        """How the planned searches (steps.search) run: the retriever's default channel, unfiltered."""
        return search_scope(self.retriever.settings.channel, None)

    def remember(self, query: str, vector: npt.NDArray[np.float32], scope: SearchScope | None = None) -> None:
        """A query searched in `scope` (by default the way the planned searches run)."""
        self._past_queries.append((query, scope or self.planned_scope, frozenset(tokenize_query(query)), vector))

    # ------------------------------------------------------------------------------------- calls

    def run(self, name: str, raw_arguments: str) -> ToolResult:
        started = time.perf_counter()
        result = self._run(name, raw_arguments)
        result.ms = (time.perf_counter() - started) * 1000
        return result

    def _run(self, name: str, raw_arguments: str) -> ToolResult:
        tool = self.tools.get(name)
        if tool is None:
            return tool_error(name, f"unknown tool {name!r}; available tools: {', '.join(self.tools)}")
        try:
            args = tool.args.model_validate(json.loads(raw_arguments or "{}"))
        except json.JSONDecodeError as exc:
            return tool_error(name, f"arguments are not valid JSON ({exc.msg}); send a JSON object")
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return tool_error(name, f"invalid arguments: {problems}")
        return tool.handler(self, args)

    def search(self, name: str, query: str, k: int, channel: Channel, flt: SearchFilter | None = None) -> ToolResult:
        """A search on behalf of tool `name`: budget, repeat guard, then the retriever under the tool timeout."""
        if not self.tracker.can_retrieve():
            return tool_error(
                name, "retrieval budget spent: no more searches; answer from what you have and say what is missing"
            )
        try:  # the tool timeout covers the query embedding too (a remote embedder can stall)
            vector = self._embed_pool.submit(self.retriever.embed_query, query).result(self.tracker.tool_timeout())
        except FutureTimeout:
            return tool_error(name, f"embedding the query timed out after {self.tracker.tool_timeout():.1f}s")
        scope = search_scope(channel, flt)
        earlier = self.repeat_of(query, vector, scope)
        if earlier is not None:
            return tool_error(
                name,
                f"refused: this query repeats an earlier one ({earlier!r}) searched the same way. Change strategy "
                "(other terms, keyword_search for exact names, a filter, or read_chunk on a promising result) "
                "or answer now.",
            )
        self.remember(query, vector, scope)
        self.tracker.spend_retrieval()
        future = self._pool.submit(self.retriever.search, query, k, channel, flt, vector)
        try:
            hits = future.result(timeout=self.tracker.tool_timeout())
        except FutureTimeout:
            return tool_error(name, f"search timed out after {self.tracker.tool_timeout():.1f}s; try again later")
        except AgentragError as exc:
            return tool_error(name, f"search failed: {exc}")
        payload: dict[str, Any] = {"query": query, "results": [_compact(h) for h in hits]}
        if not hits:
            payload["note"] = "no results; try other words or keyword_search"
        return ToolResult(name=name, content=quote(json.dumps(payload, ensure_ascii=False)), hits=hits, query=query)

    def run_many(self, calls: list[tuple[str, str, str]]) -> list[tuple[str, ToolResult]]:
        """Run the calls (id, name, arguments) of one turn; results in call order.

        Calls of tools marked `concurrent` run side by side in the pool, each under the tool timeout;
        the others run one after another in this thread."""
        if len(calls) == 1:
            call_id, name, arguments = calls[0]
            return [(call_id, self.run(name, arguments))]
        pending: list[tuple[str, str, ToolResult | Future[ToolResult]]] = []
        for call_id, name, arguments in calls:
            tool = self.tools.get(name)
            if tool is None or tool.concurrent:
                pending.append((call_id, name, self._pool.submit(self.run, name, arguments)))
            else:
                pending.append((call_id, name, self.run(name, arguments)))
        out: list[tuple[str, ToolResult]] = []
        for call_id, name, result in pending:
            if isinstance(result, ToolResult):
                out.append((call_id, result))
                continue
            try:
                out.append((call_id, result.result(timeout=self.tracker.tool_timeout() + 1.0)))
            except FutureTimeout:
                out.append((call_id, tool_error(name, "tool call timed out")))
        return out
