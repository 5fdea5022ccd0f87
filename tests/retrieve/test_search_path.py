"""The hybrid search's own work: the models it builds per hit, when BM25 runs beside the dense scan, and
de-duplication cut at k."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel

from agentrag.retrieve import hybrid, overlap
from agentrag.retrieve.hybrid import Retriever
from agentrag.settings import RetrievalSettings
from agentrag.store.base import ChannelResult
from agentrag.types import ChannelScore, Chunk, Hit, SearchFilter, new_tuple, trusted
from agentrag.vocab import Channel


def _chunk(key: int, fingerprint: str | None = None) -> Chunk:
    return Chunk(
        chunk_id=f"d{key}#0", doc_id=f"d{key}", position=0, text=f"text {key}", fingerprint=fingerprint or f"fp{key}"
    )


def test_trusted_builds_what_model_construct_builds() -> None:
    values: dict[str, Any] = {
        "chunk_id": "a#1",
        "doc_id": "a",
        "position": 1,
        "text": "Some text.",
        "title": "A",
        "source": "a.md",
        "heading_path": ("A", "B"),
        "page": 2,
        "page_breaks": ((4, 3),),
        "char_start": 10,
        "char_end": 20,
        "date": dt.date(2024, 5, 1),
        "tags": {"team": "x"},
        "fingerprint": "f",
    }
    chunk = trusted(Chunk, dict(values))
    assert chunk == Chunk.model_construct(**values) == Chunk(**values)
    assert chunk.model_dump() == Chunk(**values).model_dump()
    assert chunk.model_fields_set == set(values)
    score = ChannelScore(3, 0.5)
    hit_values: dict[str, Any] = {
        "chunk": chunk,
        "score": 0.7,
        "rank": 1,
        "key": 9,
        "channels": {"bm25": score},
        "rerank_score": None,
    }
    hit = trusted(Hit, dict(hit_values))
    assert hit == Hit(**hit_values)
    assert hit.contract() == Hit(**hit_values).contract()
    hit.rank = 2  # an ordinary mutable model
    assert hit.rank == 2
    assert hit.model_copy().rank == 2


class _Pair(BaseModel):
    rank: int
    score: float


def test_trusted_models_share_a_fields_set_that_assignment_and_copies_leave_alone() -> None:
    first = trusted(_Pair, {"rank": 1, "score": 0.5})
    second = trusted(_Pair, {"rank": 2, "score": 0.25})
    first.rank = 3  # pydantic adds the name to the fields set: it is there already
    assert first.model_fields_set == second.model_fields_set == {"rank", "score"}
    assert (first.rank, second.rank) == (3, 2)
    copied = first.model_copy(update={"score": 0.75})
    assert copied.model_fields_set == {"rank", "score"}
    assert copied.model_fields_set is not first.model_fields_set
    assert first == _Pair.model_construct(rank=3, score=0.5)
    assert trusted(_Pair, {"rank": 1}).model_fields_set == {"rank"}  # not every field: a set of its own
    assert second.model_fields_set == {"rank", "score"}


def test_a_hit_dumps_and_reads_its_channel_scores_as_rank_and_score_objects() -> None:
    chunk = Chunk(chunk_id="d#0", doc_id="d", position=0, text="alpha")
    made = new_tuple(ChannelScore, (2, 0.25))
    assert made == ChannelScore(2, 0.25) == ChannelScore(rank=2, score=0.25)
    assert (made.rank, made.score) == (2, 0.25)
    hit = Hit(chunk=chunk, score=0.5, rank=1, channels={"bm25": made, "dense": {"rank": 4, "score": 0.125}})
    assert hit.channels["dense"] == ChannelScore(4, 0.125)
    objects = {"bm25": {"rank": 2, "score": 0.25}, "dense": {"rank": 4, "score": 0.125}}
    assert hit.model_dump()["channels"] == objects == hit.contract()["channels"]
    assert json.loads(hit.model_dump_json())["channels"] == objects
    assert Hit.model_validate_json(hit.model_dump_json()) == hit


class _Store:
    """A store whose dense scan and BM25 take as long as they are told to, and that records the thread BM25 ran in."""

    def __init__(self, scan: Any, keys: int = 6, duplicates: bool = False, bm25: Any = None, group: int = 2) -> None:
        self.scan = scan
        self.bm25 = bm25 or (lambda: None)
        self.keys = keys
        self.duplicates = duplicates
        self.group = group  # with duplicates: keys share a fingerprint in runs of this many
        self.bm25_threads: list[str] = []
        self.chunks_asked: list[list[int]] = []

    def search_bm25(self, tokens: list[str], k: int, flt: SearchFilter | None, weight: float) -> ChannelResult:
        self.bm25_threads.append(threading.current_thread().name)
        self.bm25()
        return [(key, float(self.keys - key)) for key in range(self.keys)][:k]

    def search_dense(
        self, vector: Any, k: int, flt: SearchFilter | None = None, ef: int | None = None, near: Any = None
    ) -> ChannelResult:
        self.scan()
        return [(key, 1.0 - key / 100) for key in range(self.keys)][:k]

    def _fingerprint(self, key: int) -> str:
        return f"fp{key // self.group if self.duplicates else key}"

    def get_chunks_by_key(self, keys: list[int]) -> dict[int, Chunk]:
        self.chunks_asked.append(list(keys))
        return {key: _chunk(key, self._fingerprint(key)) for key in keys}


def _busy(ms: float) -> Any:
    def scan() -> None:
        until = time.thread_time() + ms / 1000
        while time.thread_time() < until:
            pass

    return scan


def _retriever(store: _Store, **settings: Any) -> Retriever:
    return Retriever(store, embedder=None, settings=RetrievalSettings(feedback_docs=0, **settings))  # type: ignore[arg-type]


def _search(retriever: Retriever, times: int = 8, k: int = 3) -> list[Hit]:
    hits: list[Hit] = []
    for _ in range(times):
        hits = retriever.search("a query", k, Channel.HYBRID, query_vector=np.ones(4, dtype=np.float32))
    return hits


def test_a_scan_that_waits_does_not_hand_bm25_to_another_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # A scan that takes long on the clock but little CPU (a machine busy with other work): the hand-off would
    # only add a wait for a core.
    monkeypatch.setattr(overlap.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(overlap, "_cores", overlap._Cores())
    store = _Store(lambda: time.sleep(0.003))
    _search(_retriever(store))
    assert set(store.bm25_threads) == {threading.current_thread().name}


def test_a_long_scan_overlaps_a_long_bm25_only_while_a_core_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overlap.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(overlap, "_cores", overlap._Cores())
    idle = _Store(_busy(2.0), bm25=_busy(2.0))
    _search(_retriever(idle))
    assert idle.bm25_threads[-1].startswith("agentrag-bm25")

    monkeypatch.setattr(overlap.os, "getloadavg", lambda: (40.0, 40.0, 40.0))
    monkeypatch.setattr(overlap, "_cores", overlap._Cores())
    busy = _Store(_busy(2.0), bm25=_busy(2.0))
    _search(_retriever(busy))
    assert set(busy.bm25_threads) == {threading.current_thread().name}


def test_a_short_bm25_stays_in_the_callers_thread_beside_a_long_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # The overlap saves at most the shorter channel, and the hand-off costs more than a short BM25 (at 10k chunks
    # on 2 idle cores it made the hybrid search slower on the clock and 0.4 ms dearer in CPU).
    monkeypatch.setattr(overlap.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(overlap, "_cores", overlap._Cores())
    store = _Store(_busy(2.0))
    _search(_retriever(store))
    assert set(store.bm25_threads) == {threading.current_thread().name}


def test_dedupe_cut_at_k_returns_the_first_distinct_hits() -> None:
    # Keys 2i and 2i+1 share a fingerprint: the k hits are the better of each pair, in fused order.
    store = _Store(lambda: None, keys=200, duplicates=True)
    retriever = _retriever(store, candidates=200)
    hits = _search(retriever, times=1, k=5)
    assert [h.key for h in hits] == [0, 2, 4, 6, 8]
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    # The chunks decide by their own fingerprints, read only as far as the walk went, once: the store is asked for
    # no chunks again when the hits are built.
    assert sum(len(asked) for asked in store.chunks_asked) < 20
    assert hits[4].chunk.fingerprint == "fp4"


def test_duplicates_past_the_ranked_head_still_leave_k_distinct_hits() -> None:
    # The fused order is ranked only a little past k; runs of 30 keys sharing a fingerprint make de-duplication walk
    # far beyond that, to keys 0, 30, 60 and 90: the whole order is ranked then, and the hits are the same.
    store = _Store(lambda: None, keys=200, duplicates=True, group=30)
    hits = _search(_retriever(store, candidates=200), times=1, k=4)
    assert [h.key for h in hits] == [0, 30, 60, 90]
    assert [h.chunk.fingerprint for h in hits] == ["fp0", "fp1", "fp2", "fp3"]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    # With fewer distinct chunks than k, every distinct one comes back, best first.
    few = _Store(lambda: None, keys=200, duplicates=True, group=80)
    assert [h.key for h in _search(_retriever(few, candidates=200), times=1, k=5)] == [0, 80, 160]


def test_a_search_without_duplicates_reads_exactly_its_k_chunks_once() -> None:
    store = _Store(lambda: None, keys=200)
    hits = _search(_retriever(store, candidates=200), times=1, k=10)
    assert [h.key for h in hits] == list(range(10))
    assert store.chunks_asked == [list(range(10))]
    assert set(hits[0].channels) == {"bm25", "dense"}
    assert hits[0].channels["dense"].rank == 1


class _Reversing:
    """A reranker that prefers the passages the first stage ranked last (scores by the key in the text)."""

    name = "reversing"

    def __init__(self) -> None:
        self.passages: list[list[str]] = []

    def score(self, query: str, passages: list[str]) -> list[float]:
        self.passages.append(passages)
        return [float(text.split()[-1]) for text in passages]


def test_a_reranked_search_reads_each_chunk_once_and_reranks_the_distinct_head() -> None:
    # Keys 2i and 2i+1 share a fingerprint: the head of 6 is the better of each of the first 6 pairs.
    store = _Store(lambda: None, keys=200, duplicates=True)
    reranker = _Reversing()
    retriever = Retriever(
        store,
        embedder=None,  # type: ignore[arg-type]
        settings=RetrievalSettings(feedback_docs=0, candidates=200),
        reranker=reranker,
        rerank_top_n=6,
    )
    hits = _search(retriever, times=1, k=4)
    assert reranker.passages == [[f"text {key}" for key in (0, 2, 4, 6, 8, 10)]]
    assert [h.key for h in hits] == [10, 8, 6, 4]
    assert [h.rerank_score for h in hits] == [10.0, 8.0, 6.0, 4.0]
    asked = [key for keys in store.chunks_asked for key in keys]
    assert len(asked) == len(set(asked)) < 20  # every chunk read once: the reranker's and the hits' are the same


def test_hits_past_the_rerankers_head_come_with_their_chunks() -> None:
    store = _Store(lambda: None, keys=200)
    retriever = Retriever(
        store,
        embedder=None,  # type: ignore[arg-type]
        settings=RetrievalSettings(feedback_docs=0, candidates=200, dedupe=False),
        reranker=_Reversing(),
        rerank_top_n=3,
    )
    hits = _search(retriever, times=1, k=5)
    assert [h.key for h in hits] == [2, 1, 0, 3, 4]
    assert [h.chunk.text for h in hits] == [f"text {key}" for key in (2, 1, 0, 3, 4)]


def test_the_channels_cpu_clock_is_read_in_a_retrievers_first_searches_then_one_of_sixteen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A thread's CPU clock is a system call: the channel times that decide the overlap are read in a retriever's
    first searches, then sampled; the other searches read no clock."""
    reads: list[float] = []

    def clock() -> float:
        reads.append(time.process_time())
        return reads[-1]

    monkeypatch.setattr(hybrid.time, "thread_time", clock)
    retriever = _retriever(_Store(lambda: None))
    _search(retriever, times=hybrid._TIMED_FIRST)
    assert len(reads) == 4 * hybrid._TIMED_FIRST  # BM25 and the scan, each started and ended
    _search(retriever, times=hybrid._TIMED_EVERY - hybrid._TIMED_FIRST)
    assert len(reads) == 4 * hybrid._TIMED_FIRST
    _search(retriever, times=1)  # the sixteenth
    assert len(reads) == 4 * hybrid._TIMED_FIRST + 4
    _search(retriever, times=hybrid._TIMED_EVERY - 1)
    assert len(reads) == 4 * hybrid._TIMED_FIRST + 4


def test_a_first_search_that_builds_an_index_does_not_hold_the_overlap_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first search builds the indexes (seconds at 100k chunks): once the channels are short, BM25 is back in the
    caller's thread within a few sampled searches, though the clock is read in one search of sixteen."""
    monkeypatch.setattr(overlap.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(overlap, "_cores", overlap._Cores())

    def build_first() -> Any:
        calls = [0]

        def channel() -> None:
            calls[0] += 1
            if calls[0] == 1:
                _busy(100.0)()  # the index build

        return channel

    store = _Store(build_first(), bm25=build_first())
    _search(_retriever(store), times=hybrid._TIMED_FIRST + 8 * hybrid._TIMED_EVERY)
    assert store.bm25_threads[-hybrid._TIMED_EVERY :] == [threading.current_thread().name] * hybrid._TIMED_EVERY
