"""The saved BM25 term dictionary: looked up in mapped files, exact under hash collisions, and an index saved
with its term list as text (format 2) is saved again in the current format with the same results."""

import json
import random
import zlib
from pathlib import Path

import numpy as np
import pytest

from agentrag.store import bm25, bm25_terms
from agentrag.store.bm25 import Segment
from agentrag.store.bm25_terms import TermTable


def _words(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789北京上海数据库索引查询é"
    return list(dict.fromkeys("".join(rng.choices(alphabet, k=rng.randint(1, 12))) for _ in range(n)))


def test_every_term_is_found_and_nothing_else(tmp_path: Path) -> None:
    words = _words(5000)
    TermTable.write(tmp_path, words)
    table = TermTable.load(tmp_path)
    assert len(table) == len(words)
    assert table.ids(words) == list(range(len(words)))
    assert table.ids(["", "notaterm-xyz", "北京北京北京北京北京北京北京"]) == [None, None, None]
    assert table.get(words[17]) == 17
    assert words[3] in table
    assert "zzzzzzzzzzzzzzzz" not in table
    with pytest.raises(KeyError):
        table["zzzzzzzzzzzzzzzz"]
    assert table.vocabulary() == words
    assert list(table) == words


def test_terms_sharing_a_hash_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bm25_terms, "_hash", lambda data: zlib.crc32(data) % 7)  # collisions everywhere
    words = _words(300, seed=1)
    TermTable.write(tmp_path, words)
    table = TermTable.load(tmp_path)
    assert table.ids(words[::-1]) == list(range(len(words)))[::-1]
    assert table.ids(["notaterm-xyz"]) == [None]


def test_a_saved_segment_maps_its_terms_and_searches_as_when_built(tmp_path: Path) -> None:
    rng = random.Random(2)
    words = _words(400, seed=2)
    rows = [(k, " ".join(rng.choices(words, k=3)), " ".join(rng.choices(words, k=40))) for k in range(500)]
    built = Segment.build(rows)
    built.save(tmp_path / "seg", 7)
    assert not (tmp_path / "seg" / "terms.txt").exists()
    loaded, generation = Segment.load(tmp_path / "seg")
    assert generation == 7
    assert isinstance(loaded.terms, TermTable)
    for word in words[:100]:
        got, want = loaded.postings(word), built.postings(word)
        assert all(np.array_equal(a, b) for a, b in zip(got, want, strict=True))
    merged = bm25.merge(loaded, None, Segment.build([(1000, "fresh", words[0] + " fresh")]))
    assert merged.terms["fresh"] == len(words)
    assert merged.postings(words[0])[0][-1] == len(merged) - 1


def _as_format_2(saved: Path) -> None:
    """Rewrite a saved segment as format 2 wrote it: the same arrays, the term list as text."""
    table = TermTable.load(saved)
    (saved / "terms.txt").write_text("\n".join(table.vocabulary()), encoding="utf-8")
    for name in bm25_terms.FILES:
        (saved / name).unlink()
    meta = json.loads((saved / "meta.json").read_text())
    (saved / "meta.json").write_text(json.dumps({**meta, "format": "agentrag-bm25/2"}))


def test_an_index_saved_in_format_2_is_saved_again_without_reading_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentrag.store.sqlite import SQLiteStore, text_index
    from tests.store.test_sqlite import DIM, put

    store = SQLiteStore(tmp_path / "kb" / "store.sqlite")
    store.bind_embedder("test-model", DIM)
    for d in range(30):
        put(store, f"d{d}", [f"alpha river 北京 {'mountain ' * (d % 5)}"])
    want = store.search_bm25(["alpha", "mountain", "北京"], 10)
    saved = next(store.path.parent.glob("bm25-g*"))
    store.close()
    _as_format_2(saved)

    def read_segment(con: object, keys: list[int] | None) -> Segment:
        if keys is None:
            raise AssertionError("the postings were rebuilt from chunks_fts")
        return Segment.build([])

    monkeypatch.setattr(text_index, "_read_segment", read_segment)
    again = SQLiteStore(store.path)
    assert again.search_bm25(["alpha", "mountain", "北京"], 10) == want
    assert json.loads((saved / "meta.json").read_text())["format"] == bm25.FORMAT
    assert not (saved / "terms.txt").exists()
    assert (saved / "terms.bin").exists()
    again.close()
    reopened = SQLiteStore(store.path)
    assert reopened.search_bm25(["alpha", "mountain", "北京"], 10) == want
    reopened.close()
