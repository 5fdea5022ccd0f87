"""A damaged ANN file is rebuilt from the database, and the rebuild is said once, at warning level."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from agentrag.settings import StoreSettings
from agentrag.store.sqlite import SQLiteStore
from tests.store.test_sqlite import DIM, put, unit


def test_a_damaged_ann_file_is_rebuilt_with_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "kb" / "store.sqlite"
    store = SQLiteStore(path, StoreSettings(ann_threshold=5))
    store.bind_embedder("test-model", DIM)
    for i in range(12):
        put(store, f"d{i}", [f"text {i}"], seed=i)
    store.optimize()
    store.close()
    (damaged,) = path.parent.glob("dense-g*.usearch")
    damaged.write_bytes(b"garbage")
    for _ in range(2):  # the second open finds the rebuilt file: nothing to say
        with caplog.at_level(logging.WARNING, logger="agentrag"):
            reopened = SQLiteStore(path, StoreSettings(ann_threshold=5))
            reopened.bind_embedder("test-model", DIM)
            assert reopened.get_chunks([reopened.search_dense(unit(300), 1)[0][0]])[0].doc_id == "d3"
            reopened.close()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].getMessage().startswith(f"{damaged}: damaged ANN index file (")
    assert warnings[0].getMessage().endswith("); rebuilding it from the database")
