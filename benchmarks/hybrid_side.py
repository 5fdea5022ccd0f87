"""Hybrid, BM25 and dense search time of two versions of the code on copies of one scale knowledge base,
alternating round by round, with a check that both return the same results.

    python benchmarks/hybrid_side.py --rounds 4 --data ../shared/data \
        --before /work/main/src:/work/hB/scale/main-home --after src:/work/hB/scale/n100000/home

Each side is `SRC:HOME`: the `src` directory the measuring process imports agentrag from, and the home of a
knowledge base built by `benchmarks/scale.py` (copy the folder for the second side: each code keeps its own
saved index files). Every round runs each side in a fresh process (the order flips each round), which opens
the knowledge base, searches once (not timed) and then, for the 200 queries of `scale.py` (vectors from its
hashed projection, so no embedding endpoint is needed), times per query the BM25 channel (k = 50), the dense
channel (k = 50) and a hybrid search (10 hits, query vector given), twice; the second pass is kept. CPU ms of
the process (every thread), one BLAS thread. Compared: BM25 keys, order and scores, dense keys, hybrid keys.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
UNUSED_URL = "http://127.0.0.1:9/v1"  # the embedder is configured but never called: vectors are given


def _scale() -> Any:
    spec = importlib.util.spec_from_file_location("scale_bench", HERE / "scale.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(home: Path, data: Path) -> dict[str, Any]:
    from agentrag.kb import KnowledgeBase
    from agentrag.text.tokenize import tokenize_query
    from agentrag.vocab import Channel

    scale = _scale()
    queries = scale._queries(data)
    vectors = scale.embed(queries, scale._projection())
    tokens = [tokenize_query(q) for q in queries]
    kb = KnowledgeBase.open("scale", settings=scale.settings_for(home, UNUSED_URL), create=False, search_cache=False)
    kb.search(queries[0], 10, Channel.HYBRID, query_vector=vectors[0])
    store: Any = kb.store
    cpu: dict[str, list[float]] = {"hybrid": [], "bm25": [], "dense": []}
    results: dict[str, list[Any]] = {"hybrid": [], "bm25": [], "dense": []}
    calls = {
        "bm25": lambda q, v, t: store.search_bm25(t, 50),
        "dense": lambda q, v, t: [key for key, _ in store.search_dense(v, 50)],
        "hybrid": lambda q, v, t: [hit.key for hit in kb.search(q, 10, Channel.HYBRID, query_vector=v)],
    }
    for rep in range(2):
        for q, v, t in zip(queries, vectors, tokens, strict=True):
            for name, call in calls.items():
                c0 = time.process_time()
                got = call(q, v, t)
                if rep:
                    cpu[name].append((time.process_time() - c0) * 1000)
                    results[name].append(got)
    kb.close()
    summary = {name: [float(np.percentile(v, 50)), float(np.percentile(v, 95))] for name, v in cpu.items()}
    return {"ms": summary, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="", help="SRC:HOME of the code before")
    parser.add_argument("--after", default="", help="SRC:HOME of the code after")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.data)))
        return
    sides = {name: getattr(args, name).split(":", 1) for name in ("before", "after")}
    answers: dict[str, Any] = {}
    print("| round | code | hybrid p50 / p95 | BM25 p50 / p95 | dense p50 / p95 | load |")
    print("|---|---|---|---|---|---|")
    for r in range(args.rounds):
        for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
            src, home = sides[side]
            env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "OPENBLAS_NUM_THREADS": "1"}
            env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
            cmd = [sys.executable, __file__, "--measure", home, "--data", str(args.data)]
            done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
            out = json.loads(done.stdout.strip().splitlines()[-1])
            answers.setdefault(side, out["results"])
            ms = out["ms"]
            cells = " | ".join(f"{ms[n][0]:.2f} / {ms[n][1]:.2f}" for n in ("hybrid", "bm25", "dense"))
            print(f"| {r + 1} | {side} | {cells} | {os.getloadavg()[0]:.1f} |", flush=True)
    for name in ("bm25", "dense", "hybrid"):
        before, after = answers["before"][name], answers["after"][name]
        same = sum(a == b for a, b in zip(before, after, strict=True))
        print(f"{name}: {same} of {len(after)} queries identical")


if __name__ == "__main__":
    main()
