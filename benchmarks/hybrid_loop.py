"""Hybrid search CPU time on `benchmarks/scale.py`'s knowledge base, hybrid searches only, two versions of the code
alternately: each round runs each version in a fresh interpreter (`PYTHONPATH=<src>`), which searches the 200
queries once to warm up and then `--passes` times, and reports the p50 of each pass (process CPU, query embedding
excluded: the vectors are given).

    python benchmarks/hybrid_loop.py --before /work/main/src --after src --scale WORK/n10000/home --data ../shared/data
    (--scale-after COPY: the second version searches a copy, when the two save their indexes in different formats,
    so that neither rebuilds the other's files)

Unlike `scale.py`'s measuring step, no other method runs between two hybrid searches; unlike `hybrid_same.py`,
every query has been seen before (warm memories), as in a service answering popular questions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def _passes(args: argparse.Namespace) -> list[float]:
    sys.path.insert(0, str(Path(__file__).parent))
    import scale

    from agentrag.kb import KnowledgeBase
    from agentrag.vocab import Channel

    queries = scale._queries(args.data)
    vectors = scale.embed(queries, scale._projection())
    settings = scale.settings_for(args.scale, "http://127.0.0.1:9/v1")  # query vectors given: never called
    kb = KnowledgeBase.open("scale", settings=settings, create=False, search_cache=False)
    p50s = []
    for n in range(args.passes + 1):
        cpu = []
        for query, vector in zip(queries, vectors, strict=True):
            started = time.process_time()
            kb.search(query, args.k, Channel.HYBRID, query_vector=vector)
            cpu.append((time.process_time() - started) * 1000)
        if n:  # the first pass warms up
            p50s.append(round(float(np.percentile(cpu, 50)), 3))
    kb.close()
    return p50s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the src folder of the first version")
    parser.add_argument("--after", type=Path, required=True, help="the src folder of the second version")
    parser.add_argument("--scale", type=Path, required=True, help="a knowledge base home built by benchmarks/scale.py")
    parser.add_argument(
        "--scale-after", type=Path, help="a copy of --scale for --after (when the versions save different formats)"
    )
    parser.add_argument("--data", type=Path, required=True, help="the dev sets' folder (for scale.py's queries)")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--run", action="store_true", help=argparse.SUPPRESS)  # internal: one version's passes
    args = parser.parse_args()
    if args.run:
        print(json.dumps(_passes(args)))
        return
    medians: dict[str, list[float]] = {"before": [], "after": []}
    for round_ in range(1, args.rounds + 1):
        for name, src in (("before", args.before), ("after", args.after)):
            env = {**os.environ, "PYTHONPATH": str(src.resolve()), "OPENBLAS_NUM_THREADS": "1"}
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            cmd = [sys.executable, __file__, "--run", *sys.argv[1:]]
            if name == "after" and args.scale_after:
                cmd += ["--scale", str(args.scale_after)]  # the last --scale given wins
            out = subprocess.run(cmd, env=env, check=True, text=True, capture_output=True).stdout
            p50s = json.loads(out.strip().splitlines()[-1])
            medians[name].append(float(np.median(p50s)))
            print(f"round {round_} {name} (load {load}): hybrid CPU ms p50 per pass {p50s}", flush=True)
    for name, values in medians.items():
        print(f"{name}: median of the rounds' medians {np.median(values):.3f} ms (rounds {values})")


if __name__ == "__main__":
    main()
