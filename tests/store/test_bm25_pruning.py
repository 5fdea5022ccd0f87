"""Pruned BM25 top-k (MaxScore) returns exactly what scoring every posting returns: the same keys, order and
scores, on random corpora and queries, with masked rows, a recent-changes segment, filters and ties."""

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from agentrag.store import bm25, bm25_search
from agentrag.store.bm25 import K1, B, Segment
from agentrag.store.bm25_search import Bm25Index


class Unpruned:
    """The scorer before pruning (main's `Bm25Index.search`, verbatim): every posting of every token."""

    def __init__(self, segments: list[Segment], masks: list[Any]) -> None:
        self.segments, self.masks = segments, masks
        self.n_rows = sum(len(s) if m is None else int(m.sum()) for s, m in zip(segments, masks, strict=True))
        total = sum(
            int(s.lengths.sum(dtype=np.int64)) if m is None else int(s.lengths[m].sum(dtype=np.int64))
            for s, m in zip(segments, masks, strict=True)
        )
        self.avgdl = total / self.n_rows if self.n_rows else 0.0
        self._norms = [K1 * (1 - B + B * s.lengths.astype(np.float64) / (self.avgdl or 1.0)) for s in segments]

    def search(self, tokens: list[str], k: int, title_weight: float = 2.0, allowed: Any = None) -> list:
        if not tokens or self.n_rows == 0 or k <= 0:
            return []
        parts = []
        for token, repeats in Counter(tokens).items():
            found, hits = [], 0
            for i, segment in enumerate(self.segments):
                rows, tt, tb = segment.postings(token)
                mask = self.masks[i]
                if mask is not None and len(rows):
                    live = mask[rows]
                    rows, tt, tb = rows[live], tt[live], tb[live]
                hits += len(rows)
                found.append((i, rows, tt, tb))
            if hits == 0:
                continue
            idf = float(np.log((self.n_rows - hits + 0.5) / (hits + 0.5)))
            if idf <= 0.0:
                idf = 1e-6
            for i, rows, tt, tb in found:
                if len(rows):
                    f = title_weight * tt + tb.astype(np.float64)
                    parts.append((i, rows, repeats * idf * f * (K1 + 1) / (f + self._norms[i][rows])))
        all_keys, all_scores = [], []
        for i in sorted({i for i, _, _ in parts}):
            rows = np.concatenate([r for j, r, _ in parts if j == i])
            contrib = np.concatenate([c for j, _, c in parts if j == i])
            size = len(self.segments[i])
            sums = np.bincount(rows, weights=contrib, minlength=size)
            hit = np.flatnonzero(np.bincount(rows, minlength=size))
            all_keys.append(self.segments[i].keys[hit])
            all_scores.append(sums[hit])
        if not all_keys:
            return []
        keys, scores = np.concatenate(all_keys), np.concatenate(all_scores)
        if allowed is not None:
            keep = np.isin(keys, allowed)
            keys, scores = keys[keep], scores[keep]
        order = np.lexsort((keys, -scores))[:k]
        return [(int(a), float(s)) for a, s in zip(keys[order].tolist(), scores[order].tolist(), strict=True)]


def zipf_words(n: int) -> tuple[list[str], list[float]]:
    words = [f"w{i}" for i in range(n)]
    return words, [1.0 / (i + 1) ** 1.1 for i in range(n)]


def text(rng: random.Random, words: list[str], weights: list[float], low: int, high: int) -> str:
    return " ".join(rng.choices(words, weights, k=rng.randint(low, high)))


def rows_of(rng: random.Random, keys: list[int], words: list[str], weights: list[float]) -> list:
    out = []
    for key in keys:
        title = text(rng, words, weights, 0, 4)
        body = text(rng, words, weights, 1, 60)
        out.append((key, title, body))
    return out


def query(rng: random.Random, words: list[str], weights: list[float]) -> list[str]:
    rare = rng.sample(words, rng.randint(0, 3))
    common = rng.choices(words, weights, k=rng.randint(1, 14))
    tokens = rare + common + ["neverseen"] * rng.randint(0, 1)
    rng.shuffle(tokens)
    return tokens + tokens[: rng.randint(0, 2)]  # repeated tokens count once per repetition


@pytest.fixture(autouse=True)
def always_prune(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_search, "PRUNE_MIN", 1)  # prune even these small segments


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the pruned path rescored survivors (so a test knows pruning actually happened)."""
    calls: list[int] = []
    original = Bm25Index._rescore

    def spy(self: Bm25Index, i: int, terms: Any, rows: npt.NDArray[np.int32], tw: float) -> Any:
        calls.append(len(rows))
        return original(self, i, terms, rows, tw)

    monkeypatch.setattr(Bm25Index, "_rescore", spy)
    return calls


@pytest.mark.parametrize("seed", range(4))
def test_pruned_top_k_equals_scoring_every_posting(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    words, weights = zipf_words(rng.choice([60, 400, 3000]))
    segment = Segment.build(rows_of(rng, list(range(0, 3 * 2500, 3)), words, weights))
    pruned, unpruned = Bm25Index([segment], [None]), Unpruned([segment], [None])
    rescored = counting(monkeypatch)
    for _ in range(120):
        tokens = query(rng, words, weights)
        k = rng.choice([1, 3, 10, 50, 200, 100_000])
        tw = rng.choice([2.0, 2.0, 1.0, 0.0, 3.5])
        assert pruned.search(tokens, k, tw) == unpruned.search(tokens, k, tw), (tokens, k, tw)
    assert rescored
    assert min(rescored) < len(segment) // 10


@pytest.mark.parametrize("seed", range(3))
def test_masked_rows_a_recent_segment_and_filters(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(100 + seed)
    words, weights = zipf_words(500)
    keys = list(range(1, 4001))
    main = Segment.build(rows_of(rng, keys, words, weights))
    changed = sorted(rng.sample(keys, rng.choice([3, 40, 900])))
    live = ~np.isin(main.keys, changed)
    rewritten = [key for key in changed if rng.random() < 0.7]  # the others were deleted
    recent = Segment.build(rows_of(rng, rewritten + [5000 + n for n in range(30)], words, weights))
    pruned, unpruned = Bm25Index([main, recent], [live, None]), Unpruned([main, recent], [live, None])
    rescored = counting(monkeypatch)
    for n in range(100):
        tokens = query(rng, words, weights)
        k = rng.choice([1, 10, 50, 5000])
        allowed = None
        if n % 3:
            pool = keys + [5000 + n for n in range(30)]
            allowed = np.asarray(sorted(rng.sample(pool, rng.choice([5, 300, 3000]))), dtype=np.int64)
        got = pruned.search(tokens, k, 2.0, allowed)
        assert got == unpruned.search(tokens, k, 2.0, allowed), (tokens, k)
        assert not set(changed) - set(rewritten) & {key for key, _ in got}  # deleted rows never come back
    assert rescored


def test_ties_at_the_kth_score_are_cut_by_key(monkeypatch: pytest.MonkeyPatch) -> None:
    same = [(key, "", "apple banana cherry") for key in range(0, 600, 2)]
    other = [(key, "date", "apple " + "filler " * (key % 7)) for key in range(1, 3001, 2)]
    segment = Segment.build(same + other)
    pruned, unpruned = Bm25Index([segment], [None]), Unpruned([segment], [None])
    for k in (1, 7, 100, 299, 300, 301, 1000):
        for tokens in (["cherry", "apple", "filler"], ["banana", "cherry", "date", "apple", "apple"]):
            got = pruned.search(tokens, k)
            assert got == unpruned.search(tokens, k)
            assert len(got) == min(k, len({key for key, _, b in same + other if set(tokens) & set(b.split())}))


def test_bounds_hold_for_every_posting_at_other_title_weights_and_lengths() -> None:
    rng = random.Random(7)
    words, weights = zipf_words(200)
    segment = Segment.build(rows_of(rng, list(range(3000)), words, weights))
    longer = Segment.build([(key, "", "w0 " * 400) for key in range(3000, 4000)])
    index = Bm25Index([segment, longer], [None, None])  # a longer mean row length than the segment's
    for tw in (0.0, 1.0, 2.0, 5.0):
        for term in index._terms(words[:50]):
            rows, contrib = index._score(0, term, tw)
            if len(rows):
                assert contrib.max() <= index._bound(0, term, tw) * (1 + 1e-12)


def test_an_index_saved_in_the_old_format_is_rebuilt(tmp_path: Path) -> None:
    from agentrag.store.sqlite import SQLiteStore
    from tests.store.test_sqlite import DIM, put

    store = SQLiteStore(tmp_path / "kb" / "store.sqlite")
    store.bind_embedder("test-model", DIM)
    for d in range(30):
        put(store, f"d{d}", [f"alpha river {'mountain ' * (d % 5)}"])
    want = store.search_bm25(["alpha", "mountain"], 10)
    saved = next(store.path.parent.glob("bm25-g*"))
    store.close()
    meta = json.loads((saved / "meta.json").read_text())
    (saved / "meta.json").write_text(json.dumps({**meta, "format": "agentrag-bm25/1"}))
    (saved / "bounds.npy").unlink()  # format 1 had no bounds
    again = SQLiteStore(store.path)
    assert again.search_bm25(["alpha", "mountain"], 10) == want
    assert json.loads((saved / "meta.json").read_text())["format"] == bm25.FORMAT  # the current one
    assert (saved / "bounds.npy").exists()
    again.close()


@pytest.mark.parametrize("seed", range(3))
def test_scoring_every_posting_in_one_pass_gives_the_same_bits(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_search, "PRUNE_MIN", 10**9)  # every segment scored exhaustively, in one pass
    rng = random.Random(200 + seed)
    words, weights = zipf_words(rng.choice([60, 500]))
    keys = list(range(1, 3001))
    main = Segment.build(rows_of(rng, keys, words, weights))
    live = ~np.isin(main.keys, sorted(rng.sample(keys, 200)))
    recent = Segment.build(rows_of(rng, [4000 + n for n in range(50)], words, weights))
    for segments, masks in (([main], [None]), ([main, recent], [live, None])):
        index, unpruned = Bm25Index(segments, masks), Unpruned(segments, masks)
        for _ in range(80):
            tokens = query(rng, words, weights)
            k = rng.choice([1, 10, 50, 100_000])
            tw = rng.choice([2.0, 1.0, 0.0, 3.5])
            assert index.search(tokens, k, tw) == unpruned.search(tokens, k, tw), (tokens, k, tw)


def served(
    seed: int, vocabulary: int, rows: int, dead_every: int, recent: int
) -> tuple[random.Random, list[str], list[float], Bm25Index, Unpruned]:
    """An index serving queries (a saved segment with every `dead_every`-th row masked, and a segment of recent
    changes), the scorer of every posting over the same segments, and the random words to query them with."""
    rng = random.Random(seed)
    words, weights = zipf_words(vocabulary)
    main = Segment.build(rows_of(rng, list(range(1, rows + 1)), words, weights))
    live = ~np.isin(main.keys, list(range(1, rows + 1, dead_every)))
    changes = Segment.build(rows_of(rng, [rows + 1000 + n for n in range(recent)], words, weights))
    return rng, words, weights, Bm25Index([main, changes], [live, None]), Unpruned([main, changes], [live, None])


def test_the_remembered_query_tokens_stay_bounded_and_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """An index serving many queries remembers each token's idf and postings, at most `_KNOWN_MAX` of them (more
    only while one query alone has more): results stay those of scoring every posting across the restarts."""
    monkeypatch.setattr(bm25_search, "_KNOWN_MAX", 12)
    rng, words, weights, index, unpruned = served(seed=31, vocabulary=400, rows=2000, dead_every=7, recent=40)
    for _ in range(150):
        tokens = query(rng, words, weights)
        assert index.search(tokens, 10) == unpruned.search(tokens, 10), tokens
        assert len(index._known) <= max(12, len(set(tokens)))
    assert index.search(["neverseen"], 10) == []
    assert index._known["neverseen"] is None


@pytest.mark.parametrize("budget", [50, 10**6])
def test_the_remembered_term_scores_stay_bounded_and_exact(budget: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exhaustive pass remembers each term's rows and contributions per title weight, at most `_PARTS_MAX`
    postings of them (more only while one term alone has more): results stay those of scoring every posting, across
    the restarts, masked rows and title weights."""
    monkeypatch.setattr(bm25_search, "PRUNE_MIN", 10**9)
    monkeypatch.setattr(bm25_search, "_PARTS_MAX", budget)
    rng, words, weights, index, unpruned = served(seed=47, vocabulary=300, rows=1500, dead_every=5, recent=30)
    for _ in range(120):
        tokens = query(rng, words, weights)
        tw = rng.choice([2.0, 0.5])
        assert index.search(tokens, 10, tw) == unpruned.search(tokens, 10, tw), (tokens, tw)
        longest = max((hi - lo for term in index._terms(tokens) for _, lo, hi in term.spans), default=0)
        assert index._parts_size <= max(budget, longest)
    assert index._parts  # the memory serves: terms met again are not scored again
