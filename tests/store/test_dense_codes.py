"""The int8 codes beside a large exact dense file: the rows they pick hold the full scan's top k (same keys, same
order, same scores) on every query here, and the file lives and dies with its `.exact` file; a damaged one is
rebuilt."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agentrag.store import dense_codes
from agentrag.store.dense_codes import Int8Codes, codes_path
from agentrag.store.dense_files import MappedExact, write_exact
from agentrag.store.sqlite import SQLiteStore, derived
from agentrag.types import SearchFilter
from tests.store.test_dense_files import files, open_store
from tests.store.test_sqlite import put, unit


def e5_like(rows: int, dim: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around one shared direction, as e5's are (cosines between passages of 0.7-0.9)."""
    rng = np.random.default_rng(seed)
    common = rng.standard_normal(dim)
    matrix = 3 * common / np.linalg.norm(common) + rng.standard_normal((rows, dim)) / np.sqrt(dim)
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def small_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dense_codes, "MIN_ROWS", 20)


def full_scan(keys: np.ndarray, matrix: np.ndarray, query: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
    scores = matrix @ query
    order = np.lexsort((keys, -scores))[:k]  # best first, ties by key: the index's order
    return keys[order].tolist(), scores[order]


@pytest.mark.usefixtures("small_codes")
def test_the_picked_rows_give_the_full_scans_top_k(tmp_path: Path) -> None:
    matrix = e5_like(3000, 64)
    matrix[1500] = matrix[10]  # an exact tie: the smaller key comes first, as in a full scan
    keys = np.arange(1, 3001, dtype=np.int64) * 3
    write_exact(tmp_path / "dense-g1.exact", keys, matrix)
    index = MappedExact.open(tmp_path / "dense-g1.exact", 64)
    assert index._codes is not None
    assert codes_path(tmp_path / "dense-g1.exact").exists()
    index.remove(keys[[4, 77, 2500]])
    alive = np.ones(3000, dtype=bool)
    alive[[4, 77, 2500]] = False
    rng = np.random.default_rng(7)
    near = matrix[:40] + 0.3 * rng.standard_normal((40, 64))
    queries = [matrix[10], matrix[4]] + [q / np.linalg.norm(q) for q in near]
    for query in queries:
        query = query.astype(np.float32)
        for k in (1, 10, 50):
            got_keys, got_scores = index.search(query, k)
            want_keys, want_scores = full_scan(keys[alive], matrix[alive], query, k)
            assert got_keys.tolist() == want_keys
            assert np.allclose(got_scores, want_scores, rtol=1e-6, atol=1e-7)
    first, _ = index.search(matrix[10], 2)
    assert first.tolist() == [keys[10], keys[1500]]
    picked = index._codes.candidates(matrix[10], 50, index._alive)
    assert len(picked) < 1500, "the codes spare most rows the float32 read"


def test_at_384_dimensions_few_rows_are_read_in_float32_and_the_top_k_stays() -> None:
    """The statistical bound (five spreads of a rounding error's inner product, not the worst case) spares more
    rows the float32 read: the worst-case bound of format 1 picked 180-250 of these 5,000 rows for a top 50."""
    matrix = e5_like(5000, 384, seed=5)
    keys = np.arange(5000, dtype=np.int64)
    codes = Int8Codes.build(matrix)
    rng = np.random.default_rng(11)
    near = matrix[:30] + 2.4 * rng.standard_normal((30, 384)) / np.sqrt(384)
    for query in (near / np.linalg.norm(near, axis=1, keepdims=True)).astype(np.float32):
        rows = codes.candidates(query, 50)
        assert len(rows) < 120
        scores = matrix[rows] @ query
        best = rows[np.lexsort((rows, -scores))[:50]]
        assert keys[best].tolist() == full_scan(keys, matrix, query, 50)[0]


def test_more_rows_near_the_kth_than_the_first_look_holds() -> None:
    """400 copies of the best vector tie for the top 10: every copy is a candidate (beyond the 3k rows looked at
    first), and the top 10 are the first copies, as in a full scan."""
    matrix = e5_like(5000, 384, seed=6)
    copies = np.arange(1000, 5000, 10)
    matrix[copies] = matrix[7]
    codes = Int8Codes.build(matrix)
    rows = codes.candidates(matrix[7], 10)
    assert set(copies.tolist()) | {7} <= set(rows.tolist())
    assert rows.tolist() == sorted(rows.tolist())
    scores = matrix[rows] @ matrix[7]
    best = rows[np.lexsort((rows, -scores))[:10]]
    assert best.tolist() == full_scan(np.arange(5000), matrix, matrix[7], 10)[0]


@pytest.mark.usefixtures("small_codes")
def test_a_zero_query_and_more_k_than_rows(tmp_path: Path) -> None:
    matrix = e5_like(2100, 16, seed=3)
    keys = np.arange(2100, dtype=np.int64)
    write_exact(tmp_path / "dense-g2.exact", keys, matrix)
    index = MappedExact.open(tmp_path / "dense-g2.exact", 16)
    got, scores = index.search(np.zeros(16, dtype=np.float32), 5)
    assert got.tolist() == [0, 1, 2, 3, 4]
    assert not scores.any()
    assert len(index.search(matrix[0], 5000)[0]) == 2100


def expected(store: SQLiteStore, query: np.ndarray, k: int) -> list[int]:
    keys, matrix = store._derived.load_vectors()
    return full_scan(keys, matrix, query, k)[0]


def dense_keys(store: SQLiteStore, query: np.ndarray, k: int, flt: SearchFilter | None = None) -> list[int]:
    return [key for key, _ in store.search_dense(query, k, flt)]


def filled(path: Path, n: int = 60) -> SQLiteStore:
    store = open_store(path, 1000)
    for i in range(n):
        put(store, f"d{i}", [f"text {i}", f"more {i}"], seed=i)
    store.optimize()
    return store


@pytest.mark.usefixtures("small_codes")
def test_codes_are_saved_beside_the_exact_file_and_reopened_without_a_write(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path)
    generation = store.generation
    assert set(files(path)) == {f"dense-g{generation}.exact", f"dense-g{generation}.i8"}
    for seed in (300, 1201, 4400):
        assert dense_keys(store, unit(seed), 10) == expected(store, unit(seed), 10)
    store.close()
    before = files(path)
    reopened = open_store(path, 1000)
    assert reopened._derived.dense().base._codes is not None  # type: ignore[attr-defined]
    assert dense_keys(reopened, unit(1201), 10) == expected(reopened, unit(1201), 10)
    assert files(path) == before, "opening wrote nothing"


@pytest.mark.usefixtures("small_codes")
@pytest.mark.parametrize("damage", ["truncated", "garbage", "other keys"])
def test_a_damaged_code_file_is_rebuilt_from_the_dense_file(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path)
    want = expected(store, unit(3300), 10)
    store.close()
    (codes,) = path.parent.glob("dense-g*.i8")
    if damage == "truncated":
        codes.write_bytes(codes.read_bytes()[:-7])
    elif damage == "garbage":
        codes.write_bytes(b"\x00" * codes.stat().st_size)
    else:  # a code file of another knowledge base, same size: the key checksum tells them apart
        other = filled(tmp_path / "other" / "store.sqlite")
        other.close()
        (theirs,) = (tmp_path / "other").glob("dense-g*.i8")
        codes.write_bytes(theirs.read_bytes())
    reopened = open_store(path, 1000)
    assert dense_keys(reopened, unit(3300), 10) == want
    (exact,) = path.parent.glob("dense-g*.exact")
    keys = MappedExact.open(exact, 8)._keys
    assert len(Int8Codes.open(codes, keys, 8)) == 120, "the rebuilt file is whole again"


@pytest.mark.usefixtures("small_codes")
def test_changes_since_the_save_are_replayed_over_the_codes(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path)
    store.close()
    other = open_store(path, 1000)
    other.delete_document("d12")
    put(other, "new", ["fresh"], seed=55)
    put(other, "d3", ["replaced"], seed=77)
    other.close()
    before = files(path)
    reopened = open_store(path, 1000)
    for seed in (1200, 1201, 5500, 7700, 300, 301):
        assert dense_keys(reopened, unit(seed), 20) == expected(reopened, unit(seed), 20)
    found = reopened.get_chunks([key for key, _ in reopened.search_dense(unit(1200), 200)])
    assert "d12" not in {c.doc_id for c in found}
    assert len(found) == 118
    assert files(path) == before


def test_a_small_file_gets_no_codes(tmp_path: Path) -> None:
    matrix = e5_like(300, 16)
    write_exact(tmp_path / "dense-g3.exact", np.arange(300, dtype=np.int64), matrix)
    assert MappedExact.open(tmp_path / "dense-g3.exact", 16)._codes is None
    assert not codes_path(tmp_path / "dense-g3.exact").exists()


@pytest.mark.usefixtures("small_codes")
def test_a_rewrite_replaces_both_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(derived, "_REPLAY_MIN", 5)
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path, 30)
    for i in range(30, 60):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.delete_document("d7")
    store.optimize()
    generation = store.generation
    assert set(files(path)) == {f"dense-g{generation}.exact", f"dense-g{generation}.i8"}
    assert dense_keys(store, unit(4500), 5) == expected(store, unit(4500), 5)


@pytest.mark.usefixtures("small_codes")
def test_filters_still_return_k_hits(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path)
    flt = SearchFilter(doc_ids=[f"d{i}" for i in range(0, 60, 2)])
    got = store.get_chunks(dense_keys(store, unit(100), 10, flt))
    assert len(got) == 10
    assert all(int(c.doc_id[1:]) % 2 == 0 for c in got)
    assert len(dense_keys(store, unit(100), 60, flt)) == 60


def test_threads_picking_rows_at_once_get_what_each_would_alone() -> None:
    import threading

    matrix = e5_like(3000, 32, seed=9)
    codes = Int8Codes.build(matrix)
    queries = [matrix[i] for i in range(0, 3000, 50)]
    alone = [codes.candidates(q, 10).tolist() for q in queries]
    together: dict[int, list[list[int]]] = {}

    def pick(n: int) -> None:
        together[n] = [codes.candidates(q, 10).tolist() for q in queries for _ in range(3)][::3]

    threads = [threading.Thread(target=pick, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(found == alone for found in together.values())


def test_a_variant_of_the_last_query_scores_exactly_the_rows_that_query_scored_best() -> None:
    """The hybrid search's feedback vector (the query moved toward its best hits) is told its query: it is given the
    3% of the rows the query's codes scored best, to score exactly, with no code scan of its own; its top k is that
    of those rows."""
    matrix = e5_like(6000, 384, seed=8)
    keys = np.arange(6000, dtype=np.int64)
    codes = Int8Codes.build(matrix)
    query = matrix[42] + 2.4 * np.random.default_rng(1).standard_normal(384).astype(np.float32) / np.sqrt(384)
    query = (query / np.linalg.norm(query)).astype(np.float32)
    moved = query + matrix[np.argsort(-(matrix @ query))[:2]].mean(axis=0)
    moved = (moved / np.linalg.norm(moved)).astype(np.float32)
    alone = codes.candidates(moved, 20)
    first = codes.candidates(query, 20)
    assert len(first) > 0
    code_scans: list[int] = []
    code_scores = codes._code_scores

    def counted(q8: np.ndarray) -> np.ndarray:
        code_scans.append(len(q8))
        return code_scores(q8)

    codes._code_scores = counted  # type: ignore[method-assign]
    narrowed = codes.candidates(moved, 20, near=query)
    codes._code_scores = code_scores  # type: ignore[method-assign]
    assert code_scans == []
    assert len(narrowed) == 180  # 3% of 6000
    assert narrowed.tolist() == sorted(narrowed.tolist())
    signed = codes.codes.astype(np.float32) - 128
    code_order = np.argsort(-((signed @ np.rint(query / (np.abs(query).max() / 127))) * codes.scale), kind="stable")
    assert len(set(narrowed.tolist()) & set(code_order[:180].tolist())) >= 178  # its best, to float32 rounding
    picked = narrowed[np.lexsort((narrowed, -(matrix[narrowed] @ moved)))[:20]]
    assert keys[picked].tolist() == full_scan(keys, matrix, moved, 20)[0]
    # Another vector than the one scanned last (or another thread's scan): the whole scan, as without `near`.
    assert codes.candidates(moved, 20, near=matrix[7]).tolist() == alone.tolist()
    seen: list[list[int]] = []
    worker = threading.Thread(target=lambda: seen.append(codes.candidates(moved, 20, near=query).tolist()))
    worker.start()
    worker.join()
    assert seen == [alone.tolist()]


def query_and_variant(
    rows: int, seed: int, at: int, toward: int
) -> tuple[np.ndarray, Int8Codes, np.ndarray, np.ndarray]:
    """An e5-like matrix and its codes, a query (row `at`) and its variant moved toward row `toward`, at unit length."""
    matrix = e5_like(rows, 384, seed=seed)
    query = matrix[at]
    moved = query + matrix[toward]
    return matrix, Int8Codes.build(matrix), query, (moved / np.linalg.norm(moved)).astype(np.float32)


def test_a_variant_scores_at_least_five_times_k_rows_where_the_share_would_be_fewer() -> None:
    """3% of a 5,000-row index is 150 rows, fewer than 5 k at k = 60: the variant is given the query's best 300."""
    matrix, codes, query, moved = query_and_variant(5000, seed=21, at=3, toward=11)
    codes.candidates(query, 60)
    narrowed = codes.candidates(moved, 60, near=query)
    assert len(narrowed) == 300
    exact = matrix @ query
    assert set(np.argsort(-exact)[:250].tolist()) <= set(narrowed.tolist())  # the query's best, to code rounding
    codes.candidates(query, 5)
    assert len(codes.candidates(moved, 5, near=query)) == 150  # at k = 5 the share is more


@pytest.mark.usefixtures("small_codes")
def test_the_store_narrows_the_feedback_search_and_keeps_its_hits(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path)
    query = unit(1201)
    store.search_dense(query, 10)
    _, matrix = store._derived.load_vectors()
    moved = query + matrix[np.argsort(-(matrix @ query))[:2]].mean(axis=0)
    moved = (moved / np.linalg.norm(moved)).astype(np.float32)
    assert [k for k, _ in store.search_dense(moved, 10, near=query)] == expected(store, moved, 10)


@pytest.mark.parametrize("packed", [True, False], ids=["numkong-packed", "simsimd-mapped"])
@pytest.mark.parametrize("dim", [384, 7, 1040, 1536])
def test_the_shifted_codes_score_as_the_int8_codes_bit_for_bit(
    dim: int, packed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codes are stored as uint8 (int8 + 128) and scanned with simsimd's uint8 dot; the shift is taken off exactly,
    also where the shifted dots pass float32's exact integers (every code and query entry at +-127). A full scan
    multiplies by a packed int8 copy instead (numkong), up to `_PACK_MAX_ROWS` rows: the same scores, bit for bit,
    also where the int8 products pass float32's exact integers (1536 dimensions) and round."""
    if not packed:
        monkeypatch.setattr(dense_codes, "_PACK_MAX_ROWS", 0)
    matrix = e5_like(500, dim, seed=dim)
    matrix[:4, :] = np.where(np.arange(dim) % 2, 1.0, -1.0).astype(np.float32)  # codes of +-127, after the mean
    codes = Int8Codes.build(matrix)
    assert codes.codes.dtype == np.uint8
    signed = codes.codes.astype(np.int64) - 128
    assert np.array_equal(codes.sums, codes.codes.sum(axis=1))
    rng = np.random.default_rng(dim)
    for q8 in (np.full(dim, 127, np.int8), np.full(dim, -127, np.int8), rng.integers(-127, 128, dim).astype(np.int8)):
        want = (signed @ q8.astype(np.int64)).astype(np.float32) * codes.scale
        got = codes._code_scores(q8)
        assert got.dtype == np.float32
        assert np.array_equal(got, want)
        assert (codes._packed is not None) == packed


@pytest.mark.usefixtures("small_codes")
def test_a_code_file_of_the_int8_format_is_rebuilt(tmp_path: Path) -> None:
    """Format 1 stored the int8 codes as they are and no sums: it is rebuilt in format 2, as a damaged file is."""
    path = tmp_path / "kb" / "store.sqlite"
    store = filled(path)
    want = expected(store, unit(3300), 10)
    store.close()
    (codes,) = path.parent.glob("dense-g*.i8")
    (exact,) = path.parent.glob("dense-g*.exact")
    keys = MappedExact.open(exact, 8)._keys
    current = Int8Codes.open(codes, keys, 8)
    shifted = np.array(current.codes)  # a copy: the file under the mapping is rewritten next
    with codes.open("wb") as out:  # format 1: header, mean, scale, error, norm, int8 codes
        out.write(dense_codes._HEADER.pack(b"AGRI8C01", len(keys), 8, dense_codes._keys_crc(keys)))
        for array in (current.mean, current.scale, current.error, current.norm):
            out.write(array.astype("<f4").tobytes())
        out.write((shifted.astype(np.int16) - 128).astype(np.int8).tobytes())
    del current
    with pytest.raises(ValueError, match="older format"):
        Int8Codes.open(codes, keys, 8)
    reopened = open_store(path, 1000)
    assert dense_keys(reopened, unit(3300), 10) == want
    assert codes.read_bytes()[:8] == b"AGRI8C02"
    assert np.array_equal(Int8Codes.open(codes, keys, 8).codes, shifted)


def test_a_query_and_its_variant_partition_all_rows_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The query's scan partitions its code scores once, for its own pick and for the variant's shortlist (the 3%
    of the rows it scored best); the variant partitions nothing: it is given that shortlist."""
    _, codes, query, moved = query_and_variant(6000, seed=12, at=5, toward=9)
    codes.candidates(query, 20)
    want = codes.candidates(moved, 20, near=query).tolist()
    sizes: list[int] = []

    class Counted(np.ndarray):
        """Code scores that count their partitions."""

        def argpartition(self, kth: Any, *args: Any, **kwargs: Any) -> Any:
            sizes.append(len(self))
            return np.asarray(self).argpartition(kth, *args, **kwargs)

    scores = dense_codes.Int8Codes._code_scores
    monkeypatch.setattr(dense_codes.Int8Codes, "_code_scores", lambda self, q8: scores(self, q8).view(Counted))
    codes.candidates(query, 20)
    assert codes.candidates(moved, 20, near=query).tolist() == want
    assert sizes == [6000], sizes
