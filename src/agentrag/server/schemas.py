"""Request bodies and error answers of the HTTP service; every closed choice comes from `agentrag.vocab`.

The error models and `error_responses` are what the OpenAPI document says a route can answer besides its
success; each route declares the statuses it really sends, so a client (or schemathesis) can hold it to them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import HTTPException
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictFloat, StrictStr

from agentrag.agent.budget_overrides import KNOWN as BUDGET_KEYS
from agentrag.agent.budget_overrides import check_overrides
from agentrag.errors import ConfigError
from agentrag.text.dates import parse_date
from agentrag.types import SearchFilter
from agentrag.vocab import Channel, Mode, Preset


def _checked_budget(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Overrides checked against the budget model; the 422 names the key at fault."""
    if value is None:
        return None
    try:
        return check_overrides(value)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


_BUDGET_HELP = f"Overrides of the preset's budget, e.g. {{'max_retrieval_calls': 4}}; keys: {', '.join(BUDGET_KEYS)}."
BudgetOverrides = Annotated[dict[str, Any] | None, AfterValidator(_checked_budget), Field(description=_BUDGET_HELP)]


def _json_integer(value: Any) -> Any:
    """A JSON integer (10 or 10.0), not a string or a boolean that pydantic's lax mode would turn into one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError("expected a JSON integer")
    return value


# The document says `integer` and `boolean`: "10" or 0 is a 422, not quietly taken for 10 or false. (Not
# model-wide strict mode: that would refuse enum values sent as strings.)
JsonInteger = Annotated[int, BeforeValidator(_json_integer)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateKB(_Body):
    name: str = Field(
        max_length=200,
        description="An id (1-64 letters, digits, '_', '.' or '-'), or a display name in any script (up to 100 "
        "characters, no '/', '\\' or control characters), which then gets a derived id",
    )
    display_name: str | None = Field(None, max_length=200, description="What people see; default: `name`")


class FilterBody(_Body):
    source: str | None = Field(None, description="glob on the source path, e.g. '*.pdf'")
    doc_id: str | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    after: str | None = Field(None, description="YYYY-MM-DD")
    before: str | None = Field(None, description="YYYY-MM-DD")

    def to_filter(self) -> SearchFilter:
        try:
            return SearchFilter(
                sources=[self.source] if self.source else [],
                doc_ids=[self.doc_id] if self.doc_id else [],
                tags=self.tags,
                date_from=parse_date(self.after) if self.after else None,
                date_to=parse_date(self.before) if self.before else None,
            )
        except ValueError as exc:
            raise HTTPException(422, f"filter: {exc}") from exc


class SearchBody(_Body):
    query: str = Field(min_length=1, max_length=2000)
    k: JsonInteger = Field(10, ge=1, le=100)
    filter: FilterBody | None = None
    channel: Channel = Channel.HYBRID


class AskBody(_Body):
    question: str = Field(min_length=1, description="at most server.max_question_chars characters")
    mode: Mode = Mode.AUTO
    preset: Preset = Preset.BALANCED
    conversation_id: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    stream: StrictBool = False
    budget: BudgetOverrides = None


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message's text, whether sent as a string or as a list of content parts."""
        if isinstance(self.content, list):
            return " ".join(str(part.get("text", "")) for part in self.content if isinstance(part, dict))
        return self.content or ""


class StreamOptions(BaseModel):
    include_usage: bool = False


class ChatCompletionBody(BaseModel):
    model: str = Field(description="the knowledge base to answer from (its id or display name)")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: StrictBool = False
    stream_options: StreamOptions | None = None
    budget: BudgetOverrides = None  # an extension field: the openai SDK sends it with extra_body={"budget": {...}}


class ErrorBody(BaseModel):
    """Every error answer but a validation 422: one sentence naming the field, file, name or setting at fault."""

    detail: str


class ValidationIssue(BaseModel):
    """One problem request validation found, in FastAPI's shape (`input` echoes at most 200 characters)."""

    loc: list[str | int]
    msg: str
    type: str
    input: Any = None
    ctx: dict[str, Any] | None = None


class ValidationErrorBody(BaseModel):
    """422: the list of issues when a request does not fit its schema, or one sentence from the service's own
    checks (a knowledge base name, a length limit, a budget key, a filter date, a file that failed to parse)."""

    detail: list[ValidationIssue] | str


def _header(description: str) -> dict[str, Any]:
    return {"description": description, "required": True, "schema": {"type": "string"}}


_ERRORS: dict[int, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "The multipart form cannot be parsed."},
    401: {
        "model": ErrorBody,
        "description": "No valid API key (send `Authorization: Bearer KEY`; a key in the URL is refused).",
        "headers": {"WWW-Authenticate": _header("`Bearer`")},
    },
    403: {"model": ErrorBody, "description": "The key was not issued for this knowledge base name."},
    404: {
        "model": ErrorBody,
        "description": "No such knowledge base for this key (one it may not use answers the same), or no such "
        "document, chunk, trace or fact.",
    },
    413: {
        "model": ErrorBody,
        "description": "The body is over `server.max_json_kb`, or the upload over `ingest.max_file_mb` or another "
        "limit of the `ingest` settings (named in `detail`).",
    },
    415: {"model": ErrorBody, "description": "The file's content is not a supported type or contradicts its name."},
    422: {"model": ValidationErrorBody, "description": "The request is invalid; `detail` says where."},
    429: {
        "model": ErrorBody,
        "description": "Over `server.requests_per_minute` for this key.",
        "headers": {"Retry-After": _header("seconds until a request may go ahead")},
    },
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """The `responses=` of a route: these error statuses, each with the shared model and its headers."""
    return {status: _ERRORS[status] for status in statuses}


# Every route behind an API key can answer these (`deps.current_key`).
KEYED = (401, 429)
# A route under /v1/kb/{kb}: the knowledge base may not exist for the key; its work may refuse the input.
IN_KB = (*KEYED, 404, 422)
# A route with a JSON body: over its size limit, or not valid JSON or not the schema.
WITH_BODY = (413, 422)


class ServerSentEvent(BaseModel):
    """One event of a streamed answer (OpenAPI 3.1: the `text/event-stream` schema describes each event)."""

    event: str | None = Field(
        None, description="ask: progress, token, citation, done or error; the OpenAI facade names none"
    )
    data: str = Field(description="JSON text; the OpenAI facade ends with `[DONE]`")


# Answers that can stream: JSON, or server-sent events when `stream` is true.
STREAMING: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {"schema": ServerSentEvent.model_json_schema()}}}
}


# ---------------------------------------------------------------- OpenAI's models list and vector-store search
# Shapes as the `openai` SDK reads them (openai/types/model.py, vector_store_search_{params,response}.py).


class ModelObject(BaseModel):
    """A knowledge base as an OpenAI model: `id` is what `/v1/chat/completions` takes as `model`."""

    id: str = Field(description="The knowledge base's id: send it as `model` to /v1/chat/completions")
    object: Literal["model"] = "model"
    created: int = Field(description="When the knowledge base was created (Unix seconds)")
    owned_by: str = "agentrag"
    display_name: str = Field(description="What people see (an extension field; `id` unless it was named otherwise)")


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelObject]


_FILTER_HELP = (
    "key `source` (glob on the source path) or `filename` (eq, in), `file_id` (eq, in), `date` (YYYY-MM-DD or "
    "Unix seconds: eq, gt, gte, lt, lte); any other key is a tag (eq). Others answer 422 naming them."
)


class ComparisonFilter(_Body):
    key: str = Field(min_length=1, max_length=64, description=_FILTER_HELP)
    type: Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"]
    value: StrictStr | StrictBool | StrictFloat | list[StrictStr | StrictFloat]


class CompoundFilter(_Body):
    type: Literal["and", "or"]
    filters: list[ComparisonFilter | CompoundFilter] = Field(min_length=1, max_length=50)


class RankingOptions(_Body):
    ranker: Literal["none", "auto", "default-2024-11-15"] = Field(
        "auto", description="none: the fused hybrid order; auto: the configured reranker's, when there is one"
    )
    score_threshold: StrictFloat = Field(0.0, ge=0, le=1, description="Results scoring below this are left out")


class VectorStoreSearchBody(_Body):
    query: (
        Annotated[str, Field(min_length=1, max_length=2000)]
        | Annotated[list[Annotated[str, Field(min_length=1, max_length=2000)]], Field(min_length=1, max_length=20)]
    ) = Field(description="One query, or several whose results are merged (each passage once, at its best score)")
    max_num_results: JsonInteger = Field(10, ge=1, le=50)
    filters: ComparisonFilter | CompoundFilter | None = None
    ranking_options: RankingOptions | None = None
    rewrite_query: StrictBool = Field(False, description="Search with the query stripped of filler ('请问', 'please')")

    def queries(self) -> list[str]:
        return [self.query] if isinstance(self.query, str) else list(self.query)


class TextContent(BaseModel):
    type: Literal["text"] = "text"
    text: str


class VectorStoreSearchResult(BaseModel):
    file_id: str = Field(description="The document's id (`doc_id`)")
    filename: str
    score: float
    attributes: dict[str, StrictStr | StrictBool | int | float] = Field(
        description="source, chunk_id, title, heading, page, date and the document's tags"
    )
    content: list[TextContent]


class VectorStoreSearchPage(BaseModel):
    object: Literal["vector_store.search_results.page"] = "vector_store.search_results.page"
    search_query: list[str] = Field(description="The queries searched (rewritten when `rewrite_query` was true)")
    data: list[VectorStoreSearchResult]
    has_more: bool = False
    next_page: str | None = None
