"""The HTTP service: many knowledge bases in one data directory, API keys, streaming answers, a web page.

Everything under /v1 needs `Authorization: Bearer KEY`. A key sees only its knowledge bases: another
one answers 404 exactly as a missing one does, so names never leak. The routes call the same Python API
as the CLI (`KnowledgeBase`), so the service and the command line cannot drift apart.
"""

import json
import queue
import shutil
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, File, Form, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from agentrag import __version__
from agentrag.agent.facts import FactStore
from agentrag.agent.memory import Conversation, ConversationStore, Turn
from agentrag.errors import AgentragError, ConfigError, DocumentNotFound, LoadError
from agentrag.kb import KnowledgeBase, list_knowledge_bases, shared_cache, shared_embedder, validate_kb_name
from agentrag.server.keys import ApiKey, KeyStore
from agentrag.server.limits import RateLimiter
from agentrag.server.uploads import resolve_upload, upload_path
from agentrag.settings import Settings
from agentrag.text.dates import parse_date
from agentrag.trace import TraceEvent, read_trace
from agentrag.types import Answer, SearchFilter

STATIC = Path(__file__).parent / "static"


# ---------------------------------------------------------------------------------------------- models


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateKB(_Body):
    name: str = Field(description="1-64 letters, digits, '_', '.' or '-'")


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
    channel: Literal["hybrid", "bm25", "dense"] = "hybrid"


class AskBody(_Body):
    question: str = Field(min_length=1, max_length=4000)
    mode: Literal["auto", "direct", "single", "iterative", "agent"] = "auto"
    preset: Literal["fast", "balanced", "thorough"] = "balanced"
    conversation_id: str | None = Field(None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    stream: bool = False


class ChatMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionBody(BaseModel):
    model: str = Field(description="the knowledge base to answer from")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False


# ---------------------------------------------------------------------------------------------- helpers


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _content_text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content or ""


class Service:
    """State shared by the routes: settings, keys, open knowledge bases, conversations, memory."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.home
        self.home.mkdir(parents=True, exist_ok=True)
        self.keys = KeyStore(self.home)
        self.limiter = RateLimiter(settings.server.requests_per_minute)
        self.conversations = ConversationStore(self.home / "conversations")
        self.embedder = shared_embedder(settings.embedder)
        self.facts = FactStore(self.home, self.embedder)
        self._kbs: dict[str, KnowledgeBase] = {}
        self._lock = threading.Lock()
        self._conversation_locks: dict[str, threading.Lock] = {}

    def kb(self, name: str, create: bool = False) -> KnowledgeBase:
        with self._lock:
            if name not in self._kbs:
                self._kbs[name] = KnowledgeBase.open(
                    name, settings=self.settings, create=create, embedder=self.embedder
                )
            return self._kbs[name]

    def drop(self, name: str) -> None:
        with self._lock:
            kb = self._kbs.pop(name, None)
        if kb is None:
            kb = KnowledgeBase.open(name, settings=self.settings, create=False, embedder=self.embedder)
        kb.destroy()

    def conversation_lock(self, owner: str, conversation_id: str) -> threading.Lock:
        with self._lock:
            return self._conversation_locks.setdefault(f"{owner}/{conversation_id}", threading.Lock())

    def close(self) -> None:
        with self._lock:
            for kb in self._kbs.values():
                kb.close()
            self._kbs.clear()
        self.keys.close()
        self.facts.close()


# ---------------------------------------------------------------------------------------------- app


def create_app(settings: Settings) -> FastAPI:
    service = Service(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        service.close()

    app = FastAPI(
        title="agentrag",
        version=__version__,
        description="Agentic RAG over your own documents, Chinese and English: search, cited answers, streaming.",
        lifespan=lifespan,
    )
    app.state.service = service

    @app.exception_handler(AgentragError)
    def _agentrag_error(request: Request, exc: AgentragError) -> JSONResponse:
        status = 404 if isinstance(exc, DocumentNotFound) else 422
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.middleware("http")
    async def _limit_body(request: Request, call_next: Any) -> Response:
        """Refuse oversized requests before reading them (uploads have their own, larger limit)."""
        length = request.headers.get("content-length")
        limit = (
            int(settings.ingest.max_file_mb * 1024 * 1024) + 64 * 1024
            if request.url.path.endswith("/documents")
            else settings.server.max_json_kb * 1024
        )
        if length is not None and length.isdigit() and int(length) > limit:
            return JSONResponse(
                {"detail": f"request too large: {int(length) / 2**20:.1f} MB > limit {limit / 2**20:.1f} MB"},
                status_code=413,
            )
        response: Response = await call_next(request)
        return response

    def current_key(request: Request) -> ApiKey:
        header = request.headers.get("authorization", "")
        scheme, _, secret = header.partition(" ")
        key = service.keys.authenticate(secret.strip()) if scheme.lower() == "bearer" else None
        if key is None:
            raise HTTPException(
                401, "missing or invalid API key (Authorization: Bearer KEY)", headers={"WWW-Authenticate": "Bearer"}
            )
        wait = service.limiter.check(key.key_id)
        if wait > 0:
            raise HTTPException(
                429,
                f"rate limit: {settings.server.requests_per_minute} requests per minute; retry in {wait:.0f}s",
                headers={"Retry-After": str(int(wait) + 1)},
            )
        return key

    Key = Annotated[ApiKey, Depends(current_key)]

    def visible_kb(name: str, key: ApiKey) -> KnowledgeBase:
        """The knowledge base if this key may use it; 404 otherwise, whether or not it exists."""
        try:
            validate_kb_name(name)
        except ConfigError as exc:
            raise HTTPException(404, f"no knowledge base {name!r}") from exc
        if not key.can_use(name) or name not in list_knowledge_bases(service.home):
            raise HTTPException(404, f"no knowledge base {name!r}")
        return service.kb(name)

    # ------------------------------------------------------------------------------------ public

    @app.get("/health", tags=["service"])
    def health() -> dict[str, Any]:
        cache = shared_cache(settings)
        return {
            "status": "ok",
            "version": __version__,
            "knowledge_bases": len(list_knowledge_bases(service.home)),
            "cache": {"backend": cache.name, "hits": cache.hits, "misses": cache.misses} if cache else None,
        }

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # ------------------------------------------------------------------------------------ knowledge bases

    @app.post("/v1/kb", status_code=201, tags=["knowledge bases"])
    def create_kb(body: CreateKB, key: Key) -> dict[str, Any]:
        name = validate_kb_name(body.name)
        exists = name in list_knowledge_bases(service.home)
        if exists and not key.can_use(name):
            raise HTTPException(409, f"the name {name!r} is not available")
        service.kb(name, create=True)
        if not key.admin:
            service.keys.grant(key.key_id, name)
        return {"name": name, "created": not exists}

    @app.get("/v1/kb", tags=["knowledge bases"])
    def list_kbs(key: Key) -> dict[str, Any]:
        out = []
        for name in list_knowledge_bases(service.home):
            if key.can_use(name):
                stats = service.kb(name).store.stats()
                out.append({"name": name, "documents": stats.documents, "chunks": stats.chunks})
        return {"knowledge_bases": out}

    @app.delete("/v1/kb/{kb}", status_code=204, tags=["knowledge bases"])
    def delete_kb(kb: str, key: Key) -> Response:
        """The knowledge base, its uploaded files and its traces are all removed."""
        visible_kb(kb, key)
        service.drop(kb)
        service.keys.revoke_kb(kb)
        shutil.rmtree(service.home / "uploads" / kb, ignore_errors=True)
        shutil.rmtree(service.home / "traces" / kb, ignore_errors=True)
        return Response(status_code=204)

    # ------------------------------------------------------------------------------------ documents

    @app.post("/v1/kb/{kb}/documents", status_code=201, tags=["documents"])
    def upload(
        kb: str,
        key: Key,
        file: Annotated[UploadFile, File(description="txt, md, html, pdf or docx; the type is read from the content")],
        tags: Annotated[str | None, Form(description='JSON object of tags, e.g. {"team": "ops"}')] = None,
    ) -> dict[str, Any]:
        knowledge_base = visible_kb(kb, key)
        limit = int(settings.ingest.max_file_mb * 1024 * 1024)
        data = file.file.read(limit + 1)
        if len(data) > limit:
            raise HTTPException(413, f"file too large: over the {settings.ingest.max_file_mb:g} MB limit")
        parsed_tags: dict[str, str] = {}
        if tags:
            try:
                raw = json.loads(tags)
                assert isinstance(raw, dict)
                parsed_tags = {str(k): str(v) for k, v in raw.items()}
            except (ValueError, AssertionError) as exc:
                raise HTTPException(422, 'tags: expected a JSON object such as {"team": "ops"}') from exc
        try:
            name = resolve_upload(file.filename or "upload", data)
        except LoadError as exc:
            raise HTTPException(415, str(exc)) from exc
        path = upload_path(service.home / "uploads", kb, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.part")
        tmp.write_bytes(data)
        tmp.replace(path)
        report = knowledge_base.ingest([path], parsed_tags, source_root=path.parent)
        item = report.items[0] if report.items else None
        if item is None or item.status == "failed":
            raise HTTPException(422, f"{name}: {item.error if item else 'nothing ingested'}")
        return {"doc_id": item.doc_id, "filename": name, "status": item.status, "chunks": item.chunks}

    @app.get("/v1/kb/{kb}/documents", tags=["documents"])
    def list_documents(kb: str, key: Key) -> dict[str, Any]:
        knowledge_base = visible_kb(kb, key)
        return {"documents": [d.model_dump(mode="json") for d in knowledge_base.documents()]}

    @app.get("/v1/kb/{kb}/documents/{doc_id}", tags=["documents"])
    def get_document(kb: str, doc_id: str, key: Key) -> dict[str, Any]:
        document, chunks = visible_kb(kb, key).document(doc_id)
        return {"document": document.model_dump(mode="json"), "chunks": [c.model_dump(mode="json") for c in chunks]}

    @app.delete("/v1/kb/{kb}/documents/{doc_id}", status_code=204, tags=["documents"])
    def delete_document(kb: str, doc_id: str, key: Key) -> Response:
        """The document, everything indexed from it, and the uploaded file it came from."""
        knowledge_base = visible_kb(kb, key)
        document, _ = knowledge_base.document(doc_id)
        knowledge_base.delete(doc_id)
        folder = (service.home / "uploads" / kb).resolve()
        uploaded = (folder / document.source).resolve()  # uploads are recorded relative to their folder
        if uploaded.is_relative_to(folder) and uploaded != folder:
            uploaded.unlink(missing_ok=True)
        return Response(status_code=204)

    @app.get("/v1/kb/{kb}/chunks/{chunk_id:path}", tags=["documents"])
    def get_chunk(kb: str, chunk_id: str, key: Key) -> dict[str, Any]:
        chunk = visible_kb(kb, key).chunk(chunk_id)
        return chunk.model_dump(mode="json")

    # ------------------------------------------------------------------------------------ search and ask

    @app.post("/v1/kb/{kb}/search", tags=["answers"])
    def search(kb: str, body: SearchBody, key: Key) -> dict[str, Any]:
        knowledge_base = visible_kb(kb, key)
        flt = body.filter.to_filter() if body.filter else None
        hits = knowledge_base.search(body.query, body.k, body.channel, flt)
        return {"query": body.query, "hits": [h.contract() for h in hits]}

    def run_ask(
        knowledge_base: KnowledgeBase, body: AskBody, key: ApiKey, on_event: Any = None, on_token: Any = None
    ) -> Answer:
        """Ask with the key's conversation and long-term memory; conversations are saved after each turn."""
        service.facts.remember(key.key_id, body.question)
        conversation: Conversation | None = None
        lock: threading.Lock | None = None
        if body.conversation_id:
            lock = service.conversation_lock(key.key_id, body.conversation_id)
            lock.acquire()
        try:
            if body.conversation_id:
                conversation = service.conversations.load(f"{key.key_id}-{body.conversation_id}")
            user_facts: list[str] = []
            if service.facts.has_facts(key.key_id):  # embedding the question costs; most keys have no facts
                vector = knowledge_base.retriever.embed_query(body.question)
                user_facts = [f.text for f in service.facts.relevant(key.key_id, vector)]
            answer = knowledge_base.ask(
                body.question,
                body.mode,
                body.preset,
                conversation=conversation,
                on_event=on_event,
                on_token=on_token,
                user_facts=user_facts,
            )
            if conversation is not None:
                service.conversations.save(conversation)
        finally:
            if lock is not None:
                lock.release()
        return answer

    @app.post("/v1/kb/{kb}/ask", tags=["answers"], response_model=None)
    def ask(kb: str, body: AskBody, key: Key) -> dict[str, Any] | StreamingResponse:
        knowledge_base = visible_kb(kb, key)
        if not body.stream:
            return run_ask(knowledge_base, body, key).contract()
        return StreamingResponse(
            stream_answer(knowledge_base, body, key),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    def stream_answer(knowledge_base: KnowledgeBase, body: AskBody, key: ApiKey) -> Iterator[str]:
        """progress and token events as they happen, then the citations, then one `done` with the answer."""
        events: queue.Queue[tuple[str, Any]] = queue.Queue()

        def on_event(event: TraceEvent) -> None:
            if event.message:
                events.put(("progress", {"step": event.step, "round": event.round, "message": event.message}))

        def worker() -> None:
            try:
                answer = run_ask(knowledge_base, body, key, on_event, lambda t: events.put(("token", {"text": t})))
                for citation in answer.citations:
                    events.put(("citation", citation.model_dump()))
                events.put(("done", answer.contract()))
            except Exception as exc:  # the stream must end with an event, whatever happened
                events.put(("error", {"detail": str(exc)}))

        threading.Thread(target=worker, daemon=True, name="agentrag-ask").start()
        while True:
            name, data = events.get()
            yield sse(name, data)
            if name in ("done", "error"):
                return

    @app.get("/v1/kb/{kb}/traces/{trace_id}", tags=["answers"])
    def trace(kb: str, trace_id: str, key: Key) -> dict[str, Any]:
        visible_kb(kb, key)
        if not trace_id.isalnum():
            raise HTTPException(404, "no such trace")
        events = read_trace(service.home / "traces" / kb, trace_id)
        if not events:
            raise HTTPException(404, "no such trace")
        return {"trace_id": trace_id, "events": [e.model_dump() for e in events]}

    # ------------------------------------------------------------------------------------ long-term memory

    @app.get("/v1/memory", tags=["memory"])
    def list_memory(key: Key) -> dict[str, Any]:
        return {"facts": [f.model_dump() for f in service.facts.for_owner(key.key_id)]}

    @app.delete("/v1/memory/{fact_id}", status_code=204, tags=["memory"])
    def delete_memory(fact_id: str, key: Key) -> Response:
        if not service.facts.delete(key.key_id, fact_id):
            raise HTTPException(404, "no such fact")
        return Response(status_code=204)

    # ------------------------------------------------------------------------------------ OpenAI facade

    @app.post("/v1/chat/completions", tags=["OpenAI-compatible"], response_model=None)
    def chat_completions(body: ChatCompletionBody, key: Key) -> dict[str, Any] | StreamingResponse:
        """`model` names the knowledge base; earlier messages become the conversation."""
        knowledge_base = visible_kb(body.model, key)
        user_turns = [m for m in body.messages if m.role == "user"]
        if not user_turns:
            raise HTTPException(422, "messages: at least one user message is required")
        question = _content_text(user_turns[-1].content)
        conversation = Conversation(conversation_id="openai")
        history = [m for m in body.messages[: body.messages.index(user_turns[-1])] if m.role in ("user", "assistant")]
        for q, a in zip(history[::2], history[1::2], strict=False):
            if q.role == "user" and a.role == "assistant":
                conversation.turns.append(Turn(question=_content_text(q.content), answer=_content_text(a.content)))
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        created = int(time.time())

        def with_sources(answer: Answer) -> str:
            if not answer.citations:
                return answer.answer
            lines = [
                f"[{c.n}] {c.title or Path(c.source).name}" + (f" — {c.heading}" if c.heading else "")
                for c in answer.citations
            ]
            return answer.answer + "\n\nSources:\n" + "\n".join(lines)

        if not body.stream:
            answer = knowledge_base.ask(question, conversation=conversation if conversation.turns else None)
            return {
                "id": completion_id,
                "object": "chat.completion",
                "created": created,
                "model": body.model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": with_sources(answer)},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": answer.usage.prompt_tokens,
                    "completion_tokens": answer.usage.completion_tokens,
                    "total_tokens": answer.usage.prompt_tokens + answer.usage.completion_tokens,
                },
                "citations": [c.model_dump() for c in answer.citations],
                "agentrag": answer.contract(),
            }

        def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
            payload = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": body.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
            return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

        def generate() -> Iterator[str]:
            """Tokens as the answer is written; then the sources, a note if the citation check changed
            anything, and a final chunk carrying the checked citations."""
            pieces: queue.Queue[tuple[str, Any]] = queue.Queue()

            def worker() -> None:
                try:
                    answer = knowledge_base.ask(
                        question,
                        conversation=conversation if conversation.turns else None,
                        on_token=lambda t: pieces.put(("token", t)),
                    )
                    pieces.put(("done", answer))
                except Exception as exc:  # the stream must end properly, whatever happened
                    pieces.put(("error", str(exc)))

            threading.Thread(target=worker, daemon=True, name="agentrag-chat").start()
            yield chunk({"role": "assistant", "content": ""})
            streamed: list[str] = []
            while True:
                kind, value = pieces.get()
                if kind == "token":
                    streamed.append(value)
                    yield chunk({"content": value})
                    continue
                if kind == "error":
                    yield chunk({"content": f"Sorry, the answer failed: {value}"}, "stop")
                    break
                answer: Answer = value
                tail = with_sources(answer)[len(answer.answer) :]
                if answer.unsupported:
                    tail = (
                        f"\n\n(Citation check: {len(answer.unsupported)} sentence(s) above are not supported "
                        "by the cited passages.)"
                    ) + tail
                if not streamed:
                    tail = answer.answer + tail
                yield chunk({"content": tail})
                yield chunk(
                    {}, "stop", citations=[c.model_dump() for c in answer.citations], agentrag=answer.contract()
                )
                break
            yield "data: [DONE]\n\n"

        return StreamingResponse(generate(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    return app
