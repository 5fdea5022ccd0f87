"""The search tools: by meaning (hybrid), by exact terms (BM25), and restricted by metadata."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from agentrag.agent.tools.base import Tool, ToolArgs, ToolResult, tool_error
from agentrag.text.dates import parse_date
from agentrag.types import SearchFilter
from agentrag.vocab import Channel

if TYPE_CHECKING:
    from agentrag.agent.tools.toolbox import ToolBox


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=500, description="What to search for, in the documents' language.")
    k: int = Field(5, ge=1, le=10, description="How many results (1-10).")


class FilteredSearchArgs(SearchArgs):
    source: str | None = Field(None, description="Glob on the file path, e.g. '*.pdf' or '*handbook*'.")
    tags: dict[str, str] = Field(default_factory=dict, description="Document tags that must match exactly.")
    after: str | None = Field(None, description="Only documents dated on or after YYYY-MM-DD.")
    before: str | None = Field(None, description="Only documents dated on or before YYYY-MM-DD.")


def _semantic(box: ToolBox, args: SearchArgs) -> ToolResult:
    return box.search(SEMANTIC_SEARCH.name, args.query, args.k, Channel.HYBRID)


def _keyword(box: ToolBox, args: SearchArgs) -> ToolResult:
    return box.search(KEYWORD_SEARCH.name, args.query, args.k, Channel.BM25)


def _filtered(box: ToolBox, args: FilteredSearchArgs) -> ToolResult:
    try:
        flt = SearchFilter(
            sources=[args.source] if args.source else [],
            tags=args.tags,
            date_from=parse_date(args.after) if args.after else None,
            date_to=parse_date(args.before) if args.before else None,
        )
    except ValueError as exc:
        return tool_error(FILTERED_SEARCH.name, f"invalid filter: {exc}")
    return box.search(FILTERED_SEARCH.name, args.query, args.k, Channel.HYBRID, flt)


SEMANTIC_SEARCH = Tool(
    name="semantic_search",
    description="Search the knowledge base by meaning (hybrid of keywords and embeddings). Use it first, for "
    "natural-language questions, paraphrases and concepts.",
    hint="for meaning",
    args=SearchArgs,
    handler=_semantic,
    position=10,
)
KEYWORD_SEARCH = Tool(
    name="keyword_search",
    description="Exact-term search (BM25). Use it for names, model numbers, error codes, version numbers and rare "
    "terms that must appear literally, e.g. 'E1042' or 'INC-2291'.",
    hint="for exact names and codes",
    args=SearchArgs,
    handler=_keyword,
    position=20,
)
FILTERED_SEARCH = Tool(
    name="filtered_search",
    description="Search restricted by metadata: a source path glob, document tags, or a date range. Use it when the "
    "question names a document, a team, or a period.",
    hint="for a document, team or period",
    args=FilteredSearchArgs,
    handler=_filtered,
    position=30,
)

TOOLS = (SEMANTIC_SEARCH, KEYWORD_SEARCH, FILTERED_SEARCH)
