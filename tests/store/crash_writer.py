"""Run as a child process by the crash tests: ingest documents d0, d1, ... into a store, printing each id once
its write has returned (committed); optionally kill itself inside the write of `--die-in` (after the chunks are
written, before the document's commit point)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

from agentrag.settings import StoreSettings
from agentrag.store.base import make_store
from tests.store.test_sqlite import put


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("directory", type=Path)
    parser.add_argument("settings")
    parser.add_argument("--die-in", default="")
    args = parser.parse_args()
    store = make_store(StoreSettings.model_validate_json(args.settings), args.directory)
    store.bind_embedder("test-model", 8)
    registry: Any = getattr(store, "_registry", None)
    if args.die_in and registry is not None:
        commit = registry.put

        def put_or_die(doc: Any, gen: int, pipeline: str) -> None:
            if doc.doc_id == args.die_in:
                os.kill(os.getpid(), signal.SIGKILL)
            commit(doc, gen, pipeline)

        registry.put = put_or_die
    for i in range(10_000):
        put(store, f"d{i}", [f"crash test {i} part {j}" for j in range(3)], seed=i)  # type: ignore[arg-type]
        print(f"d{i}", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
