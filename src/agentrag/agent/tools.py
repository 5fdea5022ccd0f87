"""The tools the agent model can call, with JSON schemas, validation and guards.

Search tools return compact results (id, title, heading path, snippet, score); `read_chunk` expands one.
Arguments are validated with pydantic, and a bad call is answered with an error the model can correct,
never an exception. A query too close to an earlier one is refused with advice to change strategy.
Independent calls run concurrently, each under a timeout.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentrag.agent.budget import BudgetTracker
from agentrag.errors import AgentragError
from agentrag.retrieve.hybrid import Retriever
from agentrag.text.dates import parse_date
from agentrag.text.tokenize import tokenize_query
from agentrag.types import Channel, Hit, SearchFilter

SNIPPET_CHARS = 240


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchArgs(_Args):
    query: str = Field(min_length=1, max_length=500, description="What to search for, in the documents' language.")
    k: int = Field(5, ge=1, le=10, description="How many results (1-10).")


class FilteredSearchArgs(SearchArgs):
    source: str | None = Field(None, description="Glob on the file path, e.g. '*.pdf' or '*handbook*'.")
    tags: dict[str, str] = Field(default_factory=dict, description="Document tags that must match exactly.")
    after: str | None = Field(None, description="Only documents dated on or after YYYY-MM-DD.")
    before: str | None = Field(None, description="Only documents dated on or before YYYY-MM-DD.")


class ReadChunkArgs(_Args):
    id: str = Field(min_length=1, description="A result id from an earlier search.")


TOOL_DESCRIPTIONS: dict[str, tuple[str, type[_Args]]] = {
    "semantic_search": (
        "Search the knowledge base by meaning (hybrid of keywords and embeddings). Use it first, for "
        "natural-language questions, paraphrases and concepts.",
        SearchArgs,
    ),
    "keyword_search": (
        "Exact-term search (BM25). Use it for names, model numbers, error codes, version numbers and rare "
        "terms that must appear literally, e.g. 'E1042' or 'INC-2291'.",
        SearchArgs,
    ),
    "filtered_search": (
        "Search restricted by metadata: a source path glob, document tags, or a date range. Use it when the "
        "question names a document, a team, or a period.",
        FilteredSearchArgs,
    ),
    "read_chunk": (
        "Read the full text of one search result by its id, when its snippet looks promising but is cut off.",
        ReadChunkArgs,
    ),
}


def tool_schemas() -> list[dict[str, Any]]:
    """OpenAI `tools` parameter for every tool."""
    out = []
    for name, (description, model) in TOOL_DESCRIPTIONS.items():
        schema = model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        out.append({"type": "function", "function": {"name": name, "description": description, "parameters": schema}})
    return out


@dataclass
class ToolResult:
    name: str
    content: str  # what the model reads (JSON text)
    hits: list[Hit] = field(default_factory=list)
    query: str = ""
    ok: bool = True
    ms: float = 0.0


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


class ToolBox:
    """Runs tool calls for one question: validation, repeat guard, budget, timeouts."""

    def __init__(self, retriever: Retriever, tracker: BudgetTracker, read_chunk: Callable[[str], Hit | None]) -> None:
        self.retriever = retriever
        self.tracker = tracker
        self._read_chunk = read_chunk
        self._past_queries: list[tuple[str, frozenset[str], npt.NDArray[np.float32]]] = []
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="agentrag-tool")

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    def repeat_of(self, query: str, vector: npt.NDArray[np.float32]) -> str | None:
        """An earlier query this one merely repeats.

        Repeats are: the same normalised tokens; a cosine above `repeat_cosine` (0.9) with at least half
        the words shared; or a cosine above `repeat_cosine_alone` (0.97). The word condition is there
        because small embedding models crowd related queries together: with multilingual-e5-small,
        "标准版价格" and "企业版价格" (two different plans) are 0.95 apart, "E1042 meaning" and
        "E1029 meaning" 0.91, while a true paraphrase scores 0.95-0.98.
        """
        budget = self.tracker.budget
        tokens = frozenset(tokenize_query(query))
        for earlier, earlier_tokens, earlier_vector in self._past_queries:
            if tokens and tokens == earlier_tokens:
                return earlier
            cosine = float(vector @ earlier_vector)
            shared = len(tokens & earlier_tokens) / max(1, len(tokens | earlier_tokens))
            if cosine > budget.repeat_cosine_alone or (cosine > budget.repeat_cosine and shared >= 0.5):
                return earlier
        return None

    def remember(self, query: str, vector: npt.NDArray[np.float32]) -> None:
        self._past_queries.append((query, frozenset(tokenize_query(query)), vector))

    def run(self, name: str, raw_arguments: str) -> ToolResult:
        started = time.perf_counter()
        result = self._run(name, raw_arguments)
        result.ms = (time.perf_counter() - started) * 1000
        return result

    def _error(self, name: str, message: str) -> ToolResult:
        return ToolResult(name=name, content=json.dumps({"error": message}, ensure_ascii=False), ok=False)

    def _run(self, name: str, raw_arguments: str) -> ToolResult:
        if name not in TOOL_DESCRIPTIONS:
            return self._error(name, f"unknown tool {name!r}; available tools: {', '.join(TOOL_DESCRIPTIONS)}")
        _, model = TOOL_DESCRIPTIONS[name]
        try:
            data = json.loads(raw_arguments or "{}")
            args = model.model_validate(data)
        except json.JSONDecodeError as exc:
            return self._error(name, f"arguments are not valid JSON ({exc.msg}); send a JSON object")
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return self._error(name, f"invalid arguments: {problems}")
        if isinstance(args, ReadChunkArgs):
            hit = self._read_chunk(args.id)
            if hit is None:
                return self._error(name, f"no chunk with id {args.id!r}; use an id from a search result")
            c = hit.chunk
            body = {"id": c.chunk_id, "title": c.title, "heading": c.heading, "source": c.source, "text": c.text}
            return ToolResult(name=name, content=json.dumps(body, ensure_ascii=False), hits=[hit])
        assert isinstance(args, SearchArgs)
        return self._search(name, args)

    def _search(self, name: str, args: SearchArgs) -> ToolResult:
        if not self.tracker.can_retrieve():
            return self._error(
                name, "retrieval budget spent: no more searches; answer from what you have and say what is missing"
            )
        flt: SearchFilter | None = None
        if isinstance(args, FilteredSearchArgs):
            try:
                flt = SearchFilter(
                    sources=[args.source] if args.source else [],
                    tags=args.tags,
                    date_from=parse_date(args.after) if args.after else None,
                    date_to=parse_date(args.before) if args.before else None,
                )
            except ValueError as exc:
                return self._error(name, f"invalid filter: {exc}")
        vector = self.retriever.embed_query(args.query)
        earlier = self.repeat_of(args.query, vector)
        if earlier is not None:
            return self._error(
                name,
                f"refused: this query repeats an earlier one ({earlier!r}). Change strategy (other terms, "
                "keyword_search for exact names, a filter, or read_chunk on a promising result) or answer now.",
            )
        self.remember(args.query, vector)
        channel: Channel = "bm25" if name == "keyword_search" else "hybrid"
        self.tracker.spend_retrieval()
        future = self._pool.submit(self.retriever.search, args.query, args.k, channel, flt, vector)
        try:
            hits = future.result(timeout=self.tracker.tool_timeout())
        except FutureTimeout:
            return self._error(name, f"search timed out after {self.tracker.tool_timeout():.1f}s; try again later")
        except AgentragError as exc:
            return self._error(name, f"search failed: {exc}")
        payload = {"query": args.query, "results": [_compact(h) for h in hits]}
        if not hits:
            payload["note"] = "no results; try other words or keyword_search"
        return ToolResult(name=name, content=json.dumps(payload, ensure_ascii=False), hits=hits, query=args.query)

    def run_many(self, calls: list[tuple[str, str, str]]) -> list[tuple[str, ToolResult]]:
        """Run independent calls (id, name, arguments) concurrently; results in call order."""
        if len(calls) == 1:
            call_id, name, arguments = calls[0]
            return [(call_id, self.run(name, arguments))]
        futures = [(call_id, self._pool.submit(self.run, name, arguments)) for call_id, name, arguments in calls]
        out: list[tuple[str, ToolResult]] = []
        for (call_id, future), (_, name, _) in zip(futures, calls, strict=True):
            try:
                out.append((call_id, future.result(timeout=self.tracker.tool_timeout() + 1.0)))
            except FutureTimeout:
                out.append((call_id, self._error(name, "tool call timed out")))
        return out
