"""The store contract suite runs against every backend: `store` (and `open_store`, for a second store on the
same knowledge base, as another process would open it) are parametrized over SQLite and a real Milvus Lite
2.5 engine started once per session."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentrag.settings import StoreSettings
from agentrag.store.base import Store, make_store
from tests.milvus_engine import milvus_engine

BACKENDS = ["sqlite", "milvus"]
DIM = 8
Opener = Callable[..., Store]


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with milvus_engine(tmp_path_factory.mktemp("milvus")) as uri:
        yield uri


@pytest.fixture(params=BACKENDS)
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """`open_store(kb="kb", **settings)`: a new store object on knowledge base `kb` of this test's backend."""
    opened: list[Store] = []
    if request.param == "milvus":
        base = StoreSettings(
            backend="milvus",
            uri=request.getfixturevalue("milvus_uri"),
            collection_prefix=f"t{uuid.uuid4().hex[:10]}",  # one namespace per test on the shared engine
        )
    else:
        base = StoreSettings()

    def open_(kb: str = "kb", **overrides: object) -> Store:
        store = make_store(base.model_copy(update=overrides), tmp_path / kb)
        opened.append(store)
        return store

    open_.backend = request.param  # type: ignore[attr-defined]
    yield open_
    for store in opened:
        with contextlib.suppress(Exception):  # closed by the test already
            store.close()
    if request.param == "milvus":
        from pymilvus import MilvusClient

        client = MilvusClient(uri=base.uri or "")
        for name in client.list_collections():
            if name.startswith(base.collection_prefix + "_"):
                client.drop_collection(name)
        client.close()


@pytest.fixture
def any_store(open_store: Opener) -> Store:
    store = open_store()
    store.bind_embedder("test-model", DIM)
    return store
