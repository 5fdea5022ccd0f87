"""Whether BM25 should run in a worker thread beside the vector scan: hybrid search with the overlap forced on
and forced off, interleaved, on a knowledge base built by `benchmarks/scale.py` (issue 14; `retrieve/overlap.py`).

    python benchmarks/overlap_gate.py --scale WORK/n10000/home --data ../shared/data --rounds 3

Both arms run in one interpreter on the same open knowledge base, 20 queries at a time, the order of the arms
swapped at every slice: "overlap" always hands BM25 to the worker (as if both channels were long and a core
free), "inline" never does. The default policy (`overlap.worth_it`) picks one of the two per search; this
measures what each costs. Per arm: the hybrid search's wall and process CPU ms (every thread), p50 and p95,
k = 10, query embedding excluded (scale.py's hashed vectors).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

SLICE = 20


class _AlwaysIdle:
    def idle(self) -> bool:
        return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=Path, required=True, help="a knowledge base home built by scale.py")
    parser.add_argument("--data", type=Path, required=True, help="the dev sets' folder (scale.py's queries)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from hybrid_same import open_scale_kb

    from agentrag.retrieve import overlap
    from agentrag.vocab import Channel

    kb, queries, vectors = open_scale_kb(args.scale, args.data)
    for query, vector in zip(queries[:SLICE], vectors[:SLICE], strict=True):  # warm-up
        kb.search(query, 10, Channel.HYBRID, query_vector=vector)
    overlap._cores = _AlwaysIdle()  # type: ignore[assignment]
    arms = {"overlap": 0.0, "inline": float("inf")}  # overlap.MIN_MS of each arm
    spent: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in arms}
    for round_ in range(args.rounds):
        for turn, start in enumerate(range(0, len(queries), SLICE)):
            names = list(arms) if (turn + round_) % 2 == 0 else list(arms)[::-1]
            for name in names:
                overlap.MIN_MS = arms[name]
                for query, vector in zip(queries[start : start + SLICE], vectors[start : start + SLICE], strict=True):
                    wall, cpu = time.perf_counter(), time.process_time()
                    kb.search(query, 10, Channel.HYBRID, query_vector=vector)
                    spent[name][0].append((time.perf_counter() - wall) * 1000)
                    spent[name][1].append((time.process_time() - cpu) * 1000)
    print(f"{args.scale} ({len(queries)} queries x {args.rounds} rounds, load {os.getloadavg()[0]:.2f})")
    for name, (wall_ms, cpu_ms) in spent.items():
        print(
            f"  {name:8s} wall p50 {np.median(wall_ms):.3f} p95 {np.percentile(wall_ms, 95):.3f} ms"
            f"   CPU p50 {np.median(cpu_ms):.3f} p95 {np.percentile(cpu_ms, 95):.3f} ms"
        )
    kb.close()


if __name__ == "__main__":
    main()
