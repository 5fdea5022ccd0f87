"""Request bodies of the HTTP service; every closed choice comes from `agentrag.vocab`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import HTTPException
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

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
    k: int = Field(10, ge=1, le=100)
    filter: FilterBody | None = None
    channel: Channel = Channel.HYBRID


class AskBody(_Body):
    question: str = Field(min_length=1, description="at most server.max_question_chars characters")
    mode: Mode = Mode.AUTO
    preset: Preset = Preset.BALANCED
    conversation_id: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    stream: bool = False
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
    stream: bool = False
    stream_options: StreamOptions | None = None
    budget: BudgetOverrides = None  # an extension field: the openai SDK sends it with extra_body={"budget": {...}}
