"""The eval's hybrid search, two versions of the code interleaved query slice by query slice: the in-store latency
`agentrag eval SET --task retrieval` reports, measured side by side on a shared, loaded machine.

    python benchmarks/hybrid_eval_ab.py --before /work/main/src --after src --home HOME --data ../shared/data/hotpotqa
    python benchmarks/hybrid_eval_ab.py --before /work/main/src --after src --scale WORK/n10000/home \
        --data ../shared/data
    (--home-after COPY: the second version searches a copy; --stages: each version also times the search's steps;
    --hybrid-only: no BM25 and dense search of the query before its hybrid one, so the first round is cold)

Each version runs in an interpreter of its own (`PYTHONPATH=<src>`) that stays open for the whole run, on the
knowledge base `agentrag eval SET --home HOME` built (only read). Per query it searches as `run_retrieval` does:
BM25, dense, then hybrid, k = 60, the query vector given; only the hybrid search is timed, by the process's CPU
time (every thread: BM25 may run in a worker beside the vector scan) and by the clock. With `--scale HOME` the
knowledge base is `benchmarks/scale.py`'s synthetic one, with its 200 queries and hashed vectors, k = 10. The
driver hands both versions the same slice of 50 queries in turn (the order swapped at every slice), so a busy
spell of the machine falls on both; a round is every query once. Per round and version: the p50 of the hybrid
search's CPU and wall ms, and with `--stages` the median wall ms of each step (the store's calls and the
retriever's own steps, timed by wrappers that add a little to each).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

SLICE = 50
# (module, class, method): the steps timed with --stages, in the order a hybrid search takes them.
STEPS = [
    ("agentrag.store.sqlite.store", "SQLiteStore", "search_bm25"),
    ("agentrag.store.sqlite.store", "SQLiteStore", "search_dense"),
    ("agentrag.retrieve.hybrid", "Retriever", "fuse"),
    ("agentrag.store.sqlite.store", "SQLiteStore", "get_vectors"),  # the feedback's two vectors
    ("agentrag.store.sqlite.store", "SQLiteStore", "held_vectors"),  # 4c465cc-c9559d2 only (taken back)
    ("agentrag.retrieve.hybrid", "Retriever", "_dedupe"),  # up to 2026-12-03 (fingerprints, then the chunks)
    ("agentrag.retrieve.hybrid", "Retriever", "_distinct_head"),  # since: de-duplication reads the hits' chunks
    ("agentrag.store.sqlite.store", "SQLiteStore", "get_chunks_by_key"),
    ("agentrag.retrieve.hybrid", "Retriever", "_hits"),
]


def _open(args: argparse.Namespace) -> tuple[Any, list[str], np.ndarray]:
    sys.path.insert(0, str(Path(__file__).parent))
    from hybrid_same import open_eval_kb, open_scale_kb

    if args.scale:
        return open_scale_kb(args.scale, args.data)
    return open_eval_kb(args.home, args.data, None, Path(args.vectors))


def _time_steps(spent: dict[str, float]) -> None:
    """Wraps each step of STEPS so that its wall time is added to `spent` (a dense search given `near`, or since
    2026-12-04 a breadth `ef`, is the feedback search; a fusion given a limit is the first pass's)."""
    import importlib

    for module, cls_name, name in STEPS:
        cls = getattr(importlib.import_module(module), cls_name)
        raw = cls.__dict__.get(name)
        if raw is None:  # a step of another version of the code
            continue
        static = isinstance(raw, staticmethod)
        func = raw.__func__ if static else raw

        def timed(*a: Any, _func: Any = func, _name: str = name, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return _func(*a, **kw)
            finally:
                second = kw.get("near") is not None or kw.get("ef") is not None or (_name == "fuse" and len(a) > 2)
                spent[_name + (" (first pass)" if _name == "fuse" and second else " (feedback)" if second else "")] += (
                    time.perf_counter() - started
                )

        functools.update_wrapper(timed, func)
        setattr(cls, name, staticmethod(timed) if static else timed)


def _scale_queries(data: Path) -> int:
    sys.path.insert(0, str(Path(__file__).parent))
    import scale

    return len(scale._queries(data))


def child(args: argparse.Namespace) -> None:
    """One version: answers each slice the driver sends with the hybrid searches' CPU and wall ms (and steps)."""
    from types import SimpleNamespace

    # The channels by name: code older than the vocabulary module (a93f5c2, the code issue 14 measured) takes strings,
    # and a StrEnum member is its string.
    Channel = SimpleNamespace(BM25="bm25", DENSE="dense", HYBRID="hybrid")

    spent: dict[str, float] = defaultdict(float)
    if args.stages:
        _time_steps(spent)
    kb, queries, vectors = _open(args)
    for channel in (Channel.BM25, Channel.DENSE, Channel.HYBRID):  # warm-up, as the eval does
        for i in range(3):
            kb.search(queries[i], args.k, channel, query_vector=vectors[i])
    print("ready", flush=True)
    for line in sys.stdin:
        start, end = map(int, line.split())
        out: dict[str, list[float]] = defaultdict(list)
        for i in range(start, end):
            for channel in () if args.hybrid_only else (Channel.BM25, Channel.DENSE):
                kb.search(queries[i], args.k, channel, query_vector=vectors[i])
            spent.clear()
            wall, cpu = time.perf_counter(), time.process_time()
            kb.search(queries[i], args.k, Channel.HYBRID, query_vector=vectors[i])
            out["cpu"].append((time.process_time() - cpu) * 1000)
            out["wall"].append((time.perf_counter() - wall) * 1000)
            for step, seconds in spent.items():
                out[step].append(seconds * 1000)
        print(json.dumps(out), flush=True)
    kb.close()


def _start(args: argparse.Namespace, src: Path, home: Path, vectors: Path) -> subprocess.Popen[str]:
    where = ["--scale" if args.scale else "--home", str(home)]
    cmd = [sys.executable, __file__, "--child", *where, "--data", str(args.data), "-k", str(args.k)]
    cmd += ["--vectors", str(vectors)] + (["--stages"] if args.stages else [])
    cmd += ["--hybrid-only"] if args.hybrid_only else []
    env = {**os.environ, "PYTHONPATH": str(src.resolve()), "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"{src}: the search process did not start")
    return proc


def _round(procs: dict[str, subprocess.Popen[str]], n: int, flip: int) -> dict[str, dict[str, list[float]]]:
    """Every query once through each version, a slice at a time, the order swapped at each slice."""
    got: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in procs}
    for turn, start in enumerate(range(0, n, SLICE)):
        names = list(procs) if (turn + flip) % 2 == 0 else list(procs)[::-1]
        for name in names:
            proc = procs[name]
            assert proc.stdin is not None
            assert proc.stdout is not None
            proc.stdin.write(f"{start} {min(start + SLICE, n)}\n")
            proc.stdin.flush()
            for key, values in json.loads(proc.stdout.readline()).items():
                got[name][key] += values
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, help="the src folder of the first version")
    parser.add_argument("--after", type=Path, help="the src folder of the second version")
    parser.add_argument("--home", type=Path, help="the --home that `agentrag eval` built the set in")
    parser.add_argument("--scale", type=Path, help="instead: a knowledge base home built by benchmarks/scale.py")
    parser.add_argument("--home-after", type=Path, help="a copy of --home (or --scale) for --after")
    parser.add_argument("--data", type=Path, required=True, help="the dev set's folder (with --scale: all of them)")
    parser.add_argument("-k", type=int, help="hits per search (default: 60, as the eval; 10 with --scale)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stages", action="store_true", help="also time each step of the hybrid search")
    parser.add_argument("--hybrid-only", action="store_true", help="search each query through hybrid only")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if not (args.before and args.after):
        parser.error("give --before and --after")
    if not (args.home or args.scale):
        parser.error("give --home (an eval knowledge base) or --scale (scale.py's)")
    if args.k is None:
        args.k = 10 if args.scale else 60
    home = args.scale or args.home
    with tempfile.TemporaryDirectory() as tmp:
        vectors = Path(tmp) / "q.npy"
        procs = {
            "before": _start(args, args.before, home, vectors),
            "after": _start(args, args.after, args.home_after or home, vectors),
        }
        n = len(np.load(vectors)) if args.home else _scale_queries(args.data)
        p50s: dict[str, list[tuple[float, float]]] = {name: [] for name in procs}
        for round_ in range(args.rounds):
            load = os.getloadavg()[0]
            got = _round(procs, n, round_)
            line = f"round {round_ + 1} (load {load:.2f}-{os.getloadavg()[0]:.2f}):"
            for name, values in got.items():
                cpu, wall = float(np.median(values["cpu"])), float(np.median(values["wall"]))
                p50s[name].append((cpu, wall))
                high = float(np.percentile(values["cpu"], 95))
                line += f"  {name} hybrid p50 CPU {cpu:.3f} wall {wall:.3f} ms (CPU p95 {high:.3f})"
                if args.stages:
                    steps = {k: round(float(np.median(v)), 3) for k, v in values.items() if k not in ("cpu", "wall")}
                    line += f"\n    {name} steps, median wall ms: {steps}"
            print(line, flush=True)
        for name, rows in p50s.items():
            cpu, wall = np.median(np.asarray(rows), axis=0)
            print(f"{name}: median of the rounds' p50, CPU {cpu:.3f} ms, wall {wall:.3f} ms")
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()


if __name__ == "__main__":
    main()
