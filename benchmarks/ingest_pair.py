"""Ingest with two versions of the code side by side, each pooled and in-process (issue 14).

    python benchmarks/ingest_pair.py ../shared/data/hotpotqa --before /work/main/src --after src --rounds 5

`speed.py` runs only its own version with workers; this runs both versions both ways (`[ingest] workers` 2 and
1), alternating round by round, through `speed.py`'s ingest worker (free embedder, jieba loaded before timing),
and prints the medians and every round of chunks per wall second, per CPU second of all processes, and per
CPU second of the pipeline's own process, with the 1-minute load average after each round.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--before", type=Path, required=True, help="one version's src folder")
    parser.add_argument("--after", type=Path, required=True, help="the other version's src folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--passages", type=int, default=1000)
    args = parser.parse_args()
    arms = {
        "before_pooled": (args.before, 2),
        "after_pooled": (args.after, 2),
        "before_inline": (args.before, 1),
        "after_inline": (args.after, 1),
    }
    measures = ("ingest_chunks_per_s", "ingest_chunks_per_cpu_s", "ingest_chunks_per_main_cpu_s")
    rounds: dict[str, dict[str, list[float]]] = {a: {m: [] for m in measures} for a in arms}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        lines = (args.dataset / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[: args.passages]
        corpus = Path(tmp) / "corpus.jsonl"
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        for r in range(args.rounds):
            for name, (src, workers) in arms.items():
                speed.ingest(rounds[name], src.resolve(), corpus, Path(tmp) / f"{name}-{r}", workers)
            loads.append(round(os.getloadavg()[0], 1))
            print(
                json.dumps({"round": r, **{a: {k: v[-1] for k, v in m.items()} for a, m in rounds.items()}}),
                file=sys.stderr,
                flush=True,
            )
    medians = {a: {k: statistics.median(v) for k, v in m.items()} for a, m in rounds.items()}
    print(
        json.dumps({"command": " ".join(sys.argv), "median": medians, "rounds": rounds, "load_1min": loads}, indent=1)
    )


if __name__ == "__main__":
    main()
