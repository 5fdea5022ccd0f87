"""The nouns every part of agentrag shares: documents, blocks, chunks, filters and hits.

These are the boundary types (they appear in the Python API and in `--json` output), so they are
pydantic models. Hot loops inside the store and the retriever work on plain ids and numpy arrays and
only build these for the few hits that are returned.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_serializer

# Re-exported, so the nouns and the vocabularies they use come from one import.
from agentrag.vocab import Channel as Channel
from agentrag.vocab import Confidence as Confidence
from agentrag.vocab import Grade as Grade
from agentrag.vocab import StopReason as StopReason


class Block(BaseModel):
    """A structural unit a loader found: a paragraph (or list, table, code block) under a heading path."""

    model_config = ConfigDict(frozen=True)

    text: str
    heading_path: tuple[str, ...] = ()
    page: int | None = None


class LoadedDocument(BaseModel):
    """What a loader returns: the document's structure and whatever metadata the format carries."""

    title: str
    blocks: list[Block]
    date: dt.date | None = None
    doc_id: str | None = None  # only formats that carry their own ids (the benchmark JSONL corpus)
    source: str | None = None  # overrides the file path, e.g. "corpus.jsonl#doc-17"
    meta: dict[str, str] = Field(default_factory=dict)
    # A plain default, not a factory: model_construct (the JSONL corpus's fast path) would inspect a factory per record.
    unreadable_pages: tuple[int, ...] = Field((), description="Pages whose text could not be read.")

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


class Document(BaseModel):
    """A document as the knowledge base records it."""

    doc_id: str
    source: str
    title: str
    content_hash: str
    mtime: float | None = None
    date: dt.date | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    meta: dict[str, str] = Field(default_factory=dict)
    n_chunks: int = 0
    chars: int = 0
    ingested_at: float = 0.0


def chunk_id_for(doc_id: str, position: int) -> str:
    """The id of a document's chunk at a position: stable across re-ingests of unchanged content."""
    return f"{doc_id}#{position}"


class Chunk(BaseModel):
    """A retrievable piece of a document with everything needed to cite it."""

    chunk_id: str
    doc_id: str
    position: int
    text: str
    title: str = ""
    source: str = ""
    heading_path: tuple[str, ...] = ()
    page: int | None = None
    page_breaks: tuple[tuple[int, int], ...] = Field(
        (), description="For a chunk that spans pages: (offset in `text`, page) where each later page begins."
    )
    char_start: int = 0
    char_end: int = 0
    date: dt.date | None = None
    tags: dict[str, str] = Field(default_factory=dict)
    fingerprint: str = ""

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    def page_at(self, offset: int) -> int | None:
        """The page the character at `offset` of `text` is on (`page` is only where the chunk starts)."""
        page = self.page
        for start, number in self.page_breaks:
            if start > offset:
                break
            page = number
        return page

    def page_of(self, quote: str) -> int | None:
        """The page a quoted sentence of this chunk is on; the chunk's first page when it is not found."""
        at = self.text.find(quote) if quote and self.page_breaks else -1
        return self.page if at < 0 else self.page_at(at)


class SearchFilter(BaseModel):
    """Metadata restrictions applied inside every channel (not after it, so top-k stays full)."""

    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(default_factory=list, description="glob patterns on the source path")
    doc_ids: list[str] = Field(default_factory=list)
    tags: dict[str, str] = Field(default_factory=dict)
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    def is_empty(self) -> bool:
        return not (self.sources or self.doc_ids or self.tags or self.date_from or self.date_to)


class ChannelScore(NamedTuple):
    """A hit's rank (1-based) and score in one channel. A named tuple, not a model: a hybrid search at k = 60 makes
    some 130 of them, and a model (an object, its `__dict__` and slots) cost 0.065 of its 1.09 ms on hotpotqa,
    side by side (BENCHMARKS.md, issue 14). `Hit` dumps them as `{"rank", "score"}` objects, as before."""

    rank: int
    score: float


class Hit(BaseModel):
    """One retrieved chunk with its fused score and the evidence from each channel."""

    chunk: Chunk
    score: float
    rank: int
    key: int = Field(-1, description="The store's key for the chunk (for vector lookups); -1 when unknown.")
    channels: dict[str, ChannelScore] = Field(default_factory=dict)
    rerank_score: float | None = None

    @field_serializer("channels")
    def _channels_as_objects(self, channels: dict[str, ChannelScore]) -> dict[str, dict[str, Any]]:
        return {name: c._asdict() for name, c in channels.items()}

    def contract(self) -> dict[str, Any]:
        """One hit of `search --json` and of the service's search endpoint."""
        c = self.chunk
        return {
            "rank": self.rank,
            "score": round(self.score, 6),
            "chunk_id": c.chunk_id,
            "doc_id": c.doc_id,
            "source": c.source,
            "title": c.title,
            "heading": c.heading,
            "heading_path": list(c.heading_path),
            "page": c.page,
            "date": c.date.isoformat() if c.date else None,
            "text": c.text,
            "channels": self._channels_as_objects(self.channels),
            "rerank_score": self.rerank_score,
        }


class IngestStatus(BaseModel):
    path: str
    doc_id: str | None = None
    status: Literal["added", "updated", "unchanged", "skipped", "deleted", "failed"]
    chunks: int = 0
    error: str | None = None  # why it failed, or why it was skipped
    limit: str | None = Field(None, description="For a file refused as too much work: the setting it passed.")
    unreadable_pages: tuple[int, ...] = Field((), description="PDF pages stored without their text.")


class IngestReport(BaseModel):
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    chunks: int = 0
    seconds: float = 0.0
    skipped: int = 0  # never read: not regular files (devices, FIFOs, sockets), types not ingested (.epub)
    deleted: int = 0  # `sync`: documents whose file is gone from the folder
    items: list[IngestStatus] = Field(default_factory=list)

    def record(self, item: IngestStatus) -> None:
        self.items.append(item)
        setattr(self, item.status, getattr(self, item.status) + 1)
        self.chunks += item.chunks


# ------------------------------------------------------------------------------------------ answers


class SubQuery(BaseModel):
    """One focused search the planner asks for; `intent` says what it should establish."""

    query: str
    intent: str = ""
    bridge: str = Field("", description="For a follow-up: the entity named by an earlier passage that it looks up.")
    about: str = Field("", description="For one side of a comparison: the thing compared.")


class Evidence(BaseModel):
    """A passage the answer may use: the hit, the sub-query that found it, and its grade."""

    hit: Hit
    found_by: str = ""
    grade: Grade = "ambiguous"
    grade_reason: str = ""
    round: int = 1

    @property
    def chunk(self) -> Chunk:
        return self.hit.chunk


class Citation(BaseModel):
    n: int
    doc_id: str
    chunk_id: str
    source: str
    quote: str
    title: str = ""
    heading: str = ""
    page: int | None = None


class ConflictValue(BaseModel):
    """One source's value for a conflicting attribute."""

    value: str
    n: int = Field(description="The passage number ([n]) that states it.")
    source: str
    date: dt.date | None = Field(None, description="The date the source is in force from, or else its document date.")


class Conflict(BaseModel):
    """Sources that give different values for the same attribute, side by side, newest first."""

    attribute: str
    values: list[ConflictValue]
    current: str | None = Field(None, description="The value in force (the newer source), when one can be told.")


class Usage(BaseModel):
    llm_calls: int = 0
    retrieval_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ms: int = 0


class Answer(BaseModel):
    """The result of one question. `contract()` is the exact `ask --json` shape other tools rely on."""

    answer: str
    short_answer: str | None = Field(None, description="The answer in a few words; None when it has no short form.")
    confidence: Confidence = Confidence.LOW
    conflicts: list[Conflict] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    mode: str
    stop_reason: StopReason
    usage: Usage = Field(default_factory=Usage)
    unsupported: list[str] = Field(default_factory=list)
    trace_id: str
    evidence: list[Evidence] = Field(default_factory=list, description="Passages given to the synthesizer, best first.")
    route_reason: str = ""
    search_query: str = Field(
        "", description="The standalone query searched (the user's question is what is answered)."
    )

    def contract(self) -> dict[str, object]:
        return {
            "answer": self.answer,
            "short_answer": self.short_answer,
            "confidence": self.confidence,
            "conflicts": [c.model_dump(mode="json") for c in self.conflicts],
            "citations": [
                c.model_dump(include={"n", "doc_id", "chunk_id", "source", "quote", "page"}) for c in self.citations
            ],
            "mode": self.mode,
            "stop_reason": self.stop_reason,
            "usage": self.usage.model_dump(),
            "unsupported": self.unsupported,
            "trace_id": self.trace_id,
        }


_Model = TypeVar("_Model", bound=BaseModel)
# BaseModel's slots (and its `__dict__`), set through their descriptors: half the time of object.__setattr__ by name.
_SET_DICT = BaseModel.__dict__["__dict__"].__set__
_SET_FIELDS = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__
_NEW = object.__new__  # looked up once: a search makes some 120 models
# `new_tuple(ChannelScore, (rank, score))`: a named tuple made by tuple's own constructor, without the Python function
# NamedTuple wraps it in (a search makes some 130).
new_tuple = tuple.__new__


_EVERY_FIELD: dict[type[BaseModel], set[str]] = {}  # per model class: the names of all its fields


def trusted(cls: type[_Model], values: dict[str, Any]) -> _Model:
    """`cls.model_construct(**values)` for `values` that name every field of `cls` (no defaults to fill) and are
    already valid: what the store and the retriever build per hit. The same instance (`__dict__`, fields set),
    without model_construct's walk over every field and its aliases, which was a fifth of a hybrid search.
    Only for the models here with no validators, private attributes or `model_post_init`.

    Its fields-set is one set per class, shared by the instances made here: it names every field, and pydantic
    only ever adds a field's name to it (on assignment) or copies it (`model_copy`), so it never changes. A set
    per instance was a third of the objects a hybrid search at k = 60 left for the garbage collector to scan."""
    model = _NEW(cls)
    _SET_DICT(model, values)
    every = _EVERY_FIELD.get(cls)
    if every is None:
        every = _EVERY_FIELD.setdefault(cls, set(cls.model_fields))
    _SET_FIELDS(model, every if len(values) == len(every) else set(values))
    _SET_EXTRA(model, None)
    _SET_PRIVATE(model, None)
    return model
