"""The inverted BM25 index ranks as FTS5 does, stays in step with the database, and survives damage."""

import logging
import random
from pathlib import Path

import pytest

from agentrag.settings import StoreSettings
from agentrag.store.bm25 import fts5_tokens
from agentrag.store.sqlite import SQLiteStore
from agentrag.store.sqlite.text_index import query_terms, search_fts5
from agentrag.text.tokenize import tokenize_query
from agentrag.types import SearchFilter
from tests.store.test_sqlite import DIM, put

WORDS = (
    "alpha beta gamma delta epsilon river mountain forest engine server cluster index query token latency "
    "北京 上海 数据库 索引 查询 服务器 延迟 北京大学 中华人民共和国 共和国"
).split()


def fts5(store: SQLiteStore, tokens: list[str], k: int, flt: SearchFilter | None = None, tw: float = 2.0):
    return search_fts5(store._read_con, tokens, k, flt, tw)


def corpus(store: SQLiteStore, n_docs: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    for d in range(n_docs):
        texts = [" ".join(rng.choices(WORDS, k=rng.randint(3, 40))) for _ in range(rng.randint(1, 4))]
        put(store, f"d{d}", texts, tags={"team": "a" if d % 3 else "b"})


def assert_same(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> None:
    assert [k for k, _ in got] == [k for k, _ in want] or sorted(got) == sorted(want)
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "kb" / "store.sqlite")
    s.bind_embedder("test-model", DIM)
    corpus(s, 60)
    return s


def test_scores_and_order_equal_fts5_in_both_languages_and_title_weights(store: SQLiteStore) -> None:
    rng = random.Random(1)
    for _ in range(60):
        tokens = [*rng.sample(WORDS, rng.randint(1, 5)), "unseenword"]
        tokens += tokens[:1]  # a repeated token counts twice, as a repeated FTS5 phrase does
        for tw in (2.0, 1.0, 0.0):
            assert_same(store.search_bm25(tokens, 10, title_weight=tw), fts5(store, tokens, 10, tw=tw))
    chinese = tokenize_query("北京大学的索引")
    assert_same(store.search_bm25(chinese, 10), fts5(store, chinese, 10))
    assert store.search_bm25(["unseenword"], 10) == []


def test_a_filter_still_returns_k_hits_and_matches_fts5(store: SQLiteStore) -> None:
    flt = SearchFilter(tags={"team": "b"})
    got = store.search_bm25(["alpha", "北京"], 5, flt)
    assert len(got) == 5
    assert_same(got, fts5(store, ["alpha", "北京"], 5, flt))
    assert store.search_bm25(["alpha"], 5, SearchFilter(doc_ids=["nope"])) == []


def test_query_syntax_is_text_and_underscore_words_go_to_fts5(store: SQLiteStore) -> None:
    put(store, "syntax", ['he said "near" AND or NOT * foo_bar ^ (x)'])
    for tokens in (['"near"'], ["AND"], ["*"], ["foo_bar"], ["(x)", "near"]):
        assert_same(store.search_bm25(tokens, 5), fts5(store, tokens, 5))
    assert store.search_bm25(["foo_bar"], 5)  # a phrase that FTS5 finds


def test_a_query_token_is_looked_up_as_the_token_fts5_makes_of_it() -> None:
    """Lower-case words and numbers skip the tokenizer; every other token gets exactly FTS5's single token, and a
    token FTS5 splits in two leaves the query to FTS5."""
    single = ["river", "1990", "a1", "River", "RIVER", "x²", "é", "Émile", "北京", "ａｂｃ", "ǅ", "İstanbul", "ß", "Ⅷ"]
    for token in single:
        (want,) = fts5_tokens(token)
        assert query_terms([token]) == [want], token
    assert query_terms(single) == [fts5_tokens(token)[0] for token in single]
    for split in ("foo_bar", "e-mail", "a.b", "10.5"):
        assert query_terms(["river", split]) is None, split


def test_writes_from_another_process_are_seen_at_once(store: SQLiteStore) -> None:
    assert store.search_bm25(["zebra"], 5) == []
    other = SQLiteStore(store.path)
    put(other, "z1", ["zebra crossing alpha"])
    put(other, "d3", ["zebra replaced text"])  # an update: the old chunks of d3 must leave the ranking
    other.delete_document("d4")
    got = store.search_bm25(["zebra", "alpha"], 100)
    assert_same(got, fts5(store, ["zebra", "alpha"], 100))
    assert {store.get_chunks_by_key([k])[k].doc_id for k, _ in got} >= {"z1", "d3"}
    assert "d4" not in {c.doc_id for c in store.get_chunks([k for k, _ in got])}
    other.close()


def test_the_saved_index_is_reused_merged_on_optimize_and_rebuilt_if_damaged(
    store: SQLiteStore, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kb = store.path.parent
    want = fts5(store, ["alpha", "river"], 10)
    assert_same(store.search_bm25(["alpha", "river"], 10), want)
    assert [p.name for p in kb.glob("bm25-g*")] == [f"bm25-g{store.generation}"]
    put(store, "late", ["river river alpha"])
    store.optimize()  # the change is merged into a file at the new generation; the old file goes
    generation = store.generation
    saved = kb / f"bm25-g{generation}"
    assert [p.name for p in kb.glob("bm25-g*")] == [saved.name]
    written = (saved / "rows.npy").stat().st_mtime_ns
    store.close()

    reopened = SQLiteStore(store.path)
    assert_same(reopened.search_bm25(["alpha", "river"], 10), fts5(reopened, ["alpha", "river"], 10))
    assert (saved / "rows.npy").stat().st_mtime_ns == written  # loaded, not rebuilt
    reopened.close()
    (saved / "rows.npy").write_bytes(b"garbage")
    again = SQLiteStore(store.path)
    with caplog.at_level(logging.WARNING):
        assert_same(again.search_bm25(["alpha", "river"], 10), fts5(again, ["alpha", "river"], 10))
    assert "damaged BM25 index" in caplog.text


def test_term_frequencies_take_one_byte_each_unless_one_passes_255(store: SQLiteStore) -> None:
    """Half the postings' bytes on disk and in memory, the same scores: a chunk repeating a word 300 times
    makes the saved frequencies two bytes again, and its score still equals FTS5's."""
    import numpy as np

    kb = store.path.parent
    store.search_bm25(["alpha"], 5)
    saved = kb / f"bm25-g{store.generation}"
    assert np.load(saved / "tf_body.npy").dtype == np.uint8
    assert np.load(saved / "tf_title.npy").dtype == np.uint8
    put(store, "long", [" ".join(["river"] * 300 + ["alpha"])])
    store.optimize()  # merged and saved: one body frequency is 300 now
    saved = kb / f"bm25-g{store.generation}"
    assert np.load(saved / "tf_body.npy").dtype == np.uint16
    assert np.load(saved / "tf_title.npy").dtype == np.uint8
    reopened = SQLiteStore(store.path)
    got = reopened.search_bm25(["river", "alpha"], 100)
    assert_same(got, fts5(reopened, ["river", "alpha"], 100))
    assert "long" in {c.doc_id for c in reopened.get_chunks([k for k, _ in got])}


def test_an_index_saved_with_two_byte_frequencies_is_read_as_it_is(store: SQLiteStore) -> None:
    """Indexes saved before one-byte frequencies keep serving, unchanged on disk, with the same scores."""
    import numpy as np

    store.search_bm25(["alpha"], 5)
    saved = store.path.parent / f"bm25-g{store.generation}"
    for name in ("tf_title.npy", "tf_body.npy"):
        np.save(saved / name, np.load(saved / name).astype(np.uint16), allow_pickle=False)
    written = (saved / "tf_body.npy").stat().st_mtime_ns
    reopened = SQLiteStore(store.path)
    for tokens in (["alpha", "river"], ["北京", "gamma", "gamma"]):
        assert_same(reopened.search_bm25(tokens, 10), fts5(reopened, tokens, 10))
    assert (saved / "tf_body.npy").stat().st_mtime_ns == written
    assert np.load(saved / "tf_body.npy").dtype == np.uint16
    reopened.close()


def test_a_small_change_to_a_large_index_is_replayed_not_rewritten(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentrag.store.sqlite import text_index

    monkeypatch.setattr(text_index, "MERGE_ALWAYS_BELOW", 0)  # treat this index as a large one
    store.search_bm25(["alpha"], 5)
    saved = f"bm25-g{store.generation}"
    store.delete_document("d7")
    put(store, "fresh", ["alpha alpha river"])
    store.optimize()
    kb = store.path.parent
    assert [p.name for p in kb.glob("bm25-g*")] == [saved]  # the saved postings were not rewritten
    reopened = SQLiteStore(store.path)  # a new process replays the two changes from the change log
    got = reopened.search_bm25(["alpha", "river"], 200)
    assert_same(got, fts5(reopened, ["alpha", "river"], 200))
    assert {c.doc_id for c in reopened.get_chunks([k for k, _ in got])} >= {"fresh"}
    assert "d7" not in {c.doc_id for c in reopened.get_chunks([k for k, _ in got])}


def test_an_index_file_ahead_of_the_database_is_ignored(store: SQLiteStore) -> None:
    store.search_bm25(["alpha"], 5)
    kb = store.path.parent
    ahead = kb / f"bm25-g{store.generation + 50}"
    (kb / f"bm25-g{store.generation}").rename(ahead)
    fresh = SQLiteStore(store.path)
    assert_same(fresh.search_bm25(["alpha", "gamma"], 10), fts5(fresh, ["alpha", "gamma"], 10))


def test_fts5_ranks_when_the_index_is_off(tmp_path: Path) -> None:
    s = SQLiteStore(tmp_path / "kb" / "store.sqlite", StoreSettings(bm25_index=False))
    s.bind_embedder("test-model", DIM)
    corpus(s, 10)
    assert_same(s.search_bm25(["alpha"], 5), fts5(s, ["alpha"], 5))
    assert not list(s.path.parent.glob("bm25-g*"))
