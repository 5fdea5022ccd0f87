"""The derived indexes' files are mapped with the OS told how they are read: the saved BM25 postings and term
dictionary and the vectors of a large HNSW view page by page (no readahead of megabytes around each page a
search touches), and the view's mapping lives as long as the index that points into it."""

from __future__ import annotations

import gc
import mmap
from pathlib import Path

import numpy as np
import pytest

from agentrag.store import dense, mapping
from tests.store.test_dense_files import docs_for, open_store
from tests.store.test_sqlite import put, unit

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/smaps").exists() or not hasattr(mmap, "MADV_RANDOM"), reason="Linux mappings only"
)


def mappings(folder: Path) -> dict[str, list[set[str]]]:
    """For each file mapped from `folder`: the VmFlags of each of its mappings."""
    out: dict[str, list[set[str]]] = {}
    current = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and not head[0].endswith(":"):
            current = head[5] if len(head) >= 6 and head[5].startswith(str(folder)) else None
        elif current and line.startswith("VmFlags:"):
            out.setdefault(Path(current).name, []).append(set(head[1:]))
    return out


def test_saved_bm25_postings_and_terms_are_mapped_for_scattered_reads(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 1000)
    for i in range(30):
        put(store, f"d{i}", [f"alpha river 北京 word{i}"], seed=i)
    store.optimize()  # the BM25 index saved
    store.close()
    reopened = open_store(path, 1000)
    assert reopened.search_bm25(["alpha", "word3"], 5)
    mapped = mappings(path.parent.resolve())
    for name in ("rows.npy", "tf_title.npy", "tf_body.npy", "term_table.npy", "term_hashes.npy", "terms.bin"):
        assert mapped.get(name), name
        assert all("rr" in flags for flags in mapped[name]), name  # rr: MADV_RANDOM
    reopened.close()


@pytest.mark.parametrize("large", [False, True])
def test_an_hnsw_view_reads_the_vectors_of_a_large_file_page_by_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, large: bool
) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 5)
    for i in range(40):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    expected = docs_for(store, unit(1200), 5)
    store.close()
    if large:  # treat this file as one past the size that is read whole at open
        monkeypatch.setattr(dense, "_READ_WHOLE_MAX", 0)
    reopened = open_store(path, 5)
    assert docs_for(reopened, unit(1200), 5) == expected
    (views,) = [v for k, v in mappings(path.parent.resolve()).items() if k.endswith(".usearch")]
    random_parts = [flags for flags in views if "rr" in flags]
    if large:  # the vectors page by page, the graph after them read ahead as usual
        assert random_parts
        assert len(random_parts) < len(views)
    else:
        assert not random_parts
    reopened.close()


def test_a_view_keeps_its_mapping_while_it_is_searched_and_lets_it_go_after(tmp_path: Path) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = open_store(path, 5)
    for i in range(40):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    expected = docs_for(store, unit(7), 10)
    store.close()
    (saved,) = path.parent.glob("dense-g*.usearch")
    index = dense.UsearchIndex.open(saved, 8)
    gc.collect()
    keys, _ = index.search(unit(7), 10)
    reopened = open_store(path, 5)
    assert [c.doc_id for c in reopened.get_chunks(keys.tolist())] == expected
    reopened.close()
    del index, reopened, store
    gc.collect()
    assert not any(k.endswith(".usearch") for k in mappings(path.parent.resolve()))


class _Recorder:
    def __init__(self) -> None:
        self.data = bytearray()
        self.sizes: list[int] = []

    def write(self, chunk: memoryview) -> int:
        self.sizes.append(len(chunk))
        self.data += chunk
        return len(chunk)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(300_000, dtype=np.int32),
        np.arange(70_000, dtype=np.uint8) % 7,
        np.zeros(0, dtype=np.float64),
        np.arange(24, dtype=np.float32).reshape(4, 6),
    ],
)
def test_a_file_read_scattered_is_np_saves_file_written_a_fault_window_at_a_time(
    tmp_path: Path, array: np.ndarray
) -> None:
    """Written whole, a file sits in the page cache as folios of up to 2 MB, and every scattered page a search
    reads maps its whole folio into the process; written in pieces, no more than the fault's own window."""
    np.save(tmp_path / "numpy.npy", array, allow_pickle=False)
    mapping.save_npy(tmp_path / "ours.npy", array)
    assert (tmp_path / "ours.npy").read_bytes() == (tmp_path / "numpy.npy").read_bytes()
    recorder = _Recorder()
    mapping.write_pieces(recorder, array)  # type: ignore[arg-type]
    assert bytes(recorder.data) == array.tobytes()
    assert all(size <= mapping.WRITE_PIECE for size in recorder.sizes)
    assert len(recorder.sizes) == -(-array.nbytes // mapping.WRITE_PIECE)
