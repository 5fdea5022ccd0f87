"""Where an adapter's hits come from: a local knowledge base, or a running service over HTTP.

Both give a hit as the search contract (`Hit.contract()`, the JSON of `search --json` and of
`POST /v1/kb/{kb}/search`), so the metadata the frameworks' documents carry is built once, from one shape.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from typing import Any, Protocol, Self, runtime_checkable

import httpx

from agentrag.errors import AgentragError, ConfigError
from agentrag.kb import KnowledgeBase
from agentrag.types import SearchFilter
from agentrag.vocab import Channel

# The hit fields an adapter's document metadata keeps (the text is the document's content).
METADATA_KEYS = ("chunk_id", "doc_id", "source", "title", "heading", "heading_path", "page", "date", "rank", "score")


class ServiceError(AgentragError):
    """The agentrag service refused or failed a search (a wrong key, an unknown knowledge base, a bad query)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


@runtime_checkable
class HitSource(Protocol):
    """Search hits in the search contract's shape, best first."""

    @property
    def knowledge_base(self) -> str: ...

    def search(self, query: str) -> list[dict[str, Any]]: ...

    async def asearch(self, query: str) -> list[dict[str, Any]]: ...


class FromSources:
    """`from_kb` and `from_service` for a framework's retriever, one signature for every framework; each
    adapter says only how it wraps a `HitSource` (`over`)."""

    @classmethod
    @abstractmethod
    def over(cls, hits: HitSource) -> Self: ...

    @classmethod
    def from_kb(
        cls, kb: KnowledgeBase, k: int = 5, channel: Channel | str = Channel.HYBRID, flt: SearchFilter | None = None
    ) -> Self:
        return cls.over(LocalSource(kb, k, channel, flt))

    @classmethod
    def from_service(
        cls,
        url: str,
        kb: str,
        api_key: str,
        k: int = 5,
        channel: Channel | str = Channel.HYBRID,
        filter: dict[str, Any] | None = None,
    ) -> Self:
        """`filter`: the search endpoint's filter object (`source`, `doc_id`, `tags`, `after`, `before`)."""
        return cls.over(HttpSource(url, kb, api_key, k, channel, filter))


def _checked_channel(channel: Channel | str) -> Channel:
    try:
        return Channel(channel)
    except ValueError:
        raise ConfigError(f"channel: unknown channel {channel!r} (choose one of: {', '.join(Channel)})") from None


def _checked_k(k: int) -> int:
    if not 1 <= k <= 100:
        raise ConfigError(f"k: {k} is out of range (1-100 hits)")
    return k


class LocalSource:
    """Hits from a `KnowledgeBase` in this process (the async path runs the search in a worker thread)."""

    def __init__(
        self, kb: KnowledgeBase, k: int = 5, channel: Channel | str = Channel.HYBRID, flt: SearchFilter | None = None
    ) -> None:
        self.kb = kb
        self.k = _checked_k(k)
        self.channel = _checked_channel(channel)
        self.flt = flt

    @property
    def knowledge_base(self) -> str:
        return self.kb.name

    def search(self, query: str) -> list[dict[str, Any]]:
        return [hit.contract() for hit in self.kb.search(query, self.k, self.channel, self.flt)]

    async def asearch(self, query: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.search, query)


class HttpSource:
    """Hits from a running service's `POST /v1/kb/{kb}/search`, under an API key."""

    def __init__(
        self,
        url: str,
        kb: str,
        api_key: str,
        k: int = 5,
        channel: Channel | str = Channel.HYBRID,
        filter: dict[str, Any] | None = None,
        timeout_s: float = 60.0,
    ) -> None:
        if not api_key:
            raise ConfigError("api_key: an agentrag API key is needed (from `agentrag keys create`)")
        self.url = url.rstrip("/")
        self.kb = kb
        self.k = _checked_k(k)
        self.channel = _checked_channel(channel)
        self.filter = filter
        self.timeout_s = timeout_s
        self._headers = {"Authorization": f"Bearer {api_key}"}

    @property
    def knowledge_base(self) -> str:
        return self.kb

    @property
    def endpoint(self) -> str:
        return f"{self.url}/v1/kb/{self.kb}/search"

    def _body(self, query: str) -> dict[str, Any]:
        body: dict[str, Any] = {"query": query, "k": self.k, "channel": str(self.channel)}
        if self.filter:
            body["filter"] = self.filter
        return body

    def search(self, query: str) -> list[dict[str, Any]]:
        try:
            with httpx.Client(headers=self._headers, timeout=self.timeout_s) as client:
                response = client.post(self.endpoint, json=self._body(query))
        except httpx.HTTPError as exc:
            raise ServiceError(f"agentrag service at {self.url} unreachable: {exc}", 0) from exc
        return self._hits(response)

    async def asearch(self, query: str) -> list[dict[str, Any]]:
        try:
            async with httpx.AsyncClient(headers=self._headers, timeout=self.timeout_s) as client:
                response = await client.post(self.endpoint, json=self._body(query))
        except httpx.HTTPError as exc:
            raise ServiceError(f"agentrag service at {self.url} unreachable: {exc}", 0) from exc
        return self._hits(response)

    def _hits(self, response: httpx.Response) -> list[dict[str, Any]]:
        if response.status_code != 200:
            raise ServiceError(self._refusal(response), response.status_code)
        hits: list[dict[str, Any]] = response.json()["hits"]
        return hits

    def _refusal(self, response: httpx.Response) -> str:
        try:
            detail = response.json().get("detail", response.text)
        except ValueError:
            detail = response.text
        what = {
            401: "refused the API key",
            404: f"has no knowledge base {self.kb!r} this key may use",
            429: "is rate-limiting this key",
        }.get(response.status_code, "failed the search")
        return f"agentrag service at {self.url} {what} (HTTP {response.status_code}): {detail}"


def hit_metadata(hit: dict[str, Any], knowledge_base: str) -> dict[str, Any]:
    """What a framework document carries beside the text: where the passage is (source, title, heading path,
    page, chunk id) and how it was found (the fused score and rank, each channel's score and rank)."""
    meta = {key: hit.get(key) for key in METADATA_KEYS}
    meta["heading_path"] = list(hit.get("heading_path") or ())
    meta["knowledge_base"] = knowledge_base
    channels = {name: dict(scored) for name, scored in (hit.get("channels") or {}).items()}
    meta["channels"] = channels
    for name, scored in channels.items():  # flat too: vector stores and filters want scalar values
        meta[f"{name}_score"] = scored.get("score")
        meta[f"{name}_rank"] = scored.get("rank")
    if hit.get("rerank_score") is not None:
        meta["rerank_score"] = hit["rerank_score"]
    return meta
