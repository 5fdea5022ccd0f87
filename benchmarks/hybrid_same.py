"""Two versions of agentrag's search, query by query, on the same knowledge base: same chunks, same order, scores
equal to 1e-6 (the fused score and every channel's rank and score of each hit), for the hybrid, BM25 and dense
channels; and each version's CPU time per search (process time, query embedding excluded, after 3 warm-up
queries), p50 / p95, round by round.

    python benchmarks/hybrid_same.py --before /work/main/src --after src --home HOME --data ../shared/data/hotpotqa
    python benchmarks/hybrid_same.py --before /work/main/src --after src --scale WORK/n10000/home --data ../shared/data
    (--scale-after COPY, --home-after COPY: the second version searches a copy, when the two save their indexes in
    different formats)

With `--data SET_DIR` the knowledge base is the one `agentrag eval SET_DIR --home HOME` built (a copy: this
script only reads it) and the queries are the set's, embedded once with the configured embedder and given to
both versions; `-k 60` as the eval asks. With `--scale HOME` it is `benchmarks/scale.py`'s synthetic knowledge
base and its 200 queries with its hashed vectors, `-k 10`. Each version searches in a fresh interpreter of its
own (`PYTHONPATH=<src>`); the exit status is 1 when any query differs.

With `--agreement` the versions may rank differently within what issue 14 allows: the script reports, per channel,
the top-10 agreement (the share of the first version's ten best chunks that the second also has in its ten, averaged
over the queries, and its minimum) and how many queries are identical, and the exit status is 1 when the mean top-10
agreement of any channel is below 0.99.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

CHANNELS = ("hybrid", "bm25", "dense")
TOLERANCE = 1e-6
AGREEMENT = 0.99  # issue 14: "top-10 agreement >= 0.99 on the dev sets"


def _open(args: argparse.Namespace) -> tuple[Any, list[str], np.ndarray]:
    if args.scale:
        return open_scale_kb(args.scale, args.data)
    return open_eval_kb(args.home, args.data, args.limit, Path(args.vectors))


def _no_search_cache(kb_class: Any) -> dict[str, Any]:
    """`search_cache=False` where the code has a search cache (not a93f5c2, the code issue 14 measured)."""
    return {"search_cache": False} if "search_cache" in inspect.signature(kb_class.open).parameters else {}


def open_scale_kb(home: Path, data: Path) -> tuple[Any, list[str], np.ndarray]:
    """`benchmarks/scale.py`'s knowledge base under `home`, its queries (from the dev sets in `data`) and their
    hashed vectors: the same for every version, no embeddings endpoint needed."""
    sys.path.insert(0, str(Path(__file__).parent))
    import scale

    from agentrag.kb import KnowledgeBase

    queries = scale._queries(data)
    settings = scale.settings_for(home, "http://127.0.0.1:9/v1")  # query vectors given: never called
    kb = KnowledgeBase.open("scale", settings=settings, create=False, **_no_search_cache(KnowledgeBase))
    return kb, queries, scale.embed(queries, scale._projection())


def open_eval_kb(home: str, data: str, limit: int | None, vectors_file: Path) -> tuple[Any, list[str], np.ndarray]:
    """The dataset's eval knowledge base (as `agentrag eval` built it under `home`), its queries, and their vectors,
    embedded once and kept in `vectors_file` so that every version searches with the same ones."""
    from agentrag.eval.data import load_dataset
    from agentrag.eval.runner import eval_kb_name
    from agentrag.kb import KnowledgeBase, shared_embedder
    from agentrag.settings import load_settings

    settings = load_settings(home)
    embedder = shared_embedder(settings.embedder)
    dataset = load_dataset(data, limit)
    queries = [q.text for q in dataset.queries]
    name = eval_kb_name(dataset, settings, embedder.name)
    kb = KnowledgeBase.open(name, settings=settings, embedder=embedder, create=False, **_no_search_cache(KnowledgeBase))
    if vectors_file.exists():
        vectors = np.load(vectors_file)
    else:
        vectors = np.asarray(embedder.embed_queries(queries), dtype=np.float32)
        np.save(vectors_file, vectors)
    return kb, queries, vectors


def search_all(args: argparse.Namespace) -> None:
    """In the version's own interpreter: every query through every channel, written as JSON."""
    from agentrag.vocab import Channel

    kb, queries, vectors = _open(args)
    out: dict[str, Any] = {"cpu_ms": {}}
    for channel in CHANNELS:
        for query, vector in zip(queries[:3], vectors[:3], strict=False):  # warm-up, as the eval does
            kb.search(query, args.k, Channel(channel), query_vector=vector)
        rows, cpu = [], []
        for query, vector in zip(queries, vectors, strict=True):
            started = time.process_time()
            hits = kb.search(query, args.k, Channel(channel), query_vector=vector)
            cpu.append((time.process_time() - started) * 1000)
            rows.append(
                [
                    [h.chunk.chunk_id, h.score, {n: [c.rank, c.score] for n, c in sorted(h.channels.items())}]
                    for h in hits
                ]
            )
        out[channel] = rows
        out["cpu_ms"][channel] = [round(float(np.percentile(cpu, p)), 3) for p in (50, 95)]
    kb.close()
    Path(args.out).write_text(json.dumps(out))


def _differences(before: list[Any], after: list[Any]) -> list[str]:
    """What differs between two hit lists of one query (empty when they agree)."""
    ids_before, ids_after = [h[0] for h in before], [h[0] for h in after]
    if ids_before != ids_after:
        return [f"chunks {ids_before[:5]}... against {ids_after[:5]}..."]
    out = []
    for (cid, score_b, ch_b), (_, score_a, ch_a) in zip(before, after, strict=True):
        if abs(score_b - score_a) > TOLERANCE:
            out.append(f"{cid}: fused {score_b} against {score_a}")
        if ch_b.keys() != ch_a.keys():
            out.append(f"{cid}: channels {sorted(ch_b)} against {sorted(ch_a)}")
            continue
        for name, (rank_b, s_b) in ch_b.items():
            rank_a, s_a = ch_a[name]
            if rank_b != rank_a or abs(s_b - s_a) > TOLERANCE:
                out.append(f"{cid}: {name} rank/score {rank_b}/{s_b} against {rank_a}/{s_a}")
    return out


def top10_agreement(before: list[list[Any]], after: list[list[Any]]) -> tuple[float, float]:
    """Mean and minimum over the queries of |before's ten best & after's ten best| / |before's ten best|."""
    shares = []
    for b, a in zip(before, after, strict=True):
        first, second = {h[0] for h in b[:10]}, {h[0] for h in a[:10]}
        shares.append(len(first & second) / len(first) if first else float(not second))
    return (float(np.mean(shares)), float(np.min(shares))) if shares else (1.0, 1.0)


def _report(results: dict[str, Any], args: argparse.Namespace) -> int:
    """Prints each channel's comparison; returns how many queries differ (with --agreement: how many channels agree
    less than 0.99)."""
    failing = 0
    for channel in CHANNELS:
        before, after = results["before"][channel], results["after"][channel]
        bad = [(i, d) for i, (b, a) in enumerate(zip(before, after, strict=True)) if (d := _differences(b, a))]
        gap = max(
            (
                abs(x - y)
                for b, a in zip(before, after, strict=True)
                if len(b) == len(a)
                for hb, ha in zip(b, a, strict=True)
                for x, y in [(hb[1], ha[1])] + [(hb[2][n][1], ha[2][n][1]) for n in hb[2] if n in ha[2]]
            ),
            default=0.0,
        )
        line = f"{channel}: {len(before) - len(bad)} of {len(before)} queries identical (k={args.k})"
        if args.agreement:
            mean, low = top10_agreement(before, after)
            print(f"{line}; top-10 agreement mean {mean:.4f}, min {low:.2f}")
            failing += int(mean < AGREEMENT)
            continue
        mean, _ = top10_agreement(before, after)
        print(f"{line}; largest score difference {gap:.1e}; top-10 agreement {mean:.4f}")
        failing += len(bad)
        for i, d in bad[:5]:
            print(f"  query {i}: " + "; ".join(d[:3]))
    return failing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="the src folder of the first version")
    parser.add_argument("--after", type=Path, required=True, help="the src folder of the second version")
    parser.add_argument("--data", type=Path, required=True, help="a dev set's folder (or, with --scale, all of them)")
    parser.add_argument("--home", type=Path, help="the --home that `agentrag eval` built the set's knowledge base in")
    parser.add_argument(
        "--home-after", type=Path, help="a copy of --home for --after (when the versions save different formats)"
    )
    parser.add_argument("--scale", type=Path, help="a knowledge base home built by benchmarks/scale.py")
    parser.add_argument(
        "--scale-after", type=Path, help="a copy of --scale for --after (when the versions save different formats)"
    )
    parser.add_argument("-k", type=int, help="hits per search (default: 60, as the eval; 10 with --scale)")
    parser.add_argument("--limit", type=int, help="the first N queries only")
    parser.add_argument("--rounds", type=int, default=1, help="run both versions this many times, alternately")
    parser.add_argument(
        "--agreement", action="store_true", help="compare top-10 agreement (>= 0.99) instead of requiring identity"
    )
    parser.add_argument("--search", action="store_true", help=argparse.SUPPRESS)  # internal: one version's searches
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--vectors", help=argparse.SUPPRESS)
    parser.add_argument("--scale-child", type=Path, help=argparse.SUPPRESS)  # internal: --scale-after's home
    parser.add_argument("--home-child", type=Path, help=argparse.SUPPRESS)  # internal: --home-after's home
    args = parser.parse_args()
    if args.scale_child:
        args.scale = args.scale_child
    if args.home_child:
        args.home = args.home_child
    if args.k is None:
        args.k = 10 if args.scale else 60
    if args.search:
        search_all(args)
        return
    if not (args.home or args.scale):
        parser.error("give --home (an eval knowledge base) or --scale (scale.py's)")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, args.rounds + 1):  # versions alternate, so a busy spell falls on both
            for name, src in (("before", args.before), ("after", args.after)):
                out = Path(tmp) / f"{name}.json"
                cmd = [sys.executable, __file__, "--search", "--out", str(out), "--vectors", str(Path(tmp) / "q.npy")]
                cmd += [a for a in sys.argv[1:] if a != "--search"]
                if name == "after" and args.scale_after:
                    cmd += ["--scale-child", str(args.scale_after)]
                if name == "after" and args.home_after:
                    cmd += ["--home-child", str(args.home_after)]
                env = {**os.environ, "PYTHONPATH": str(src.resolve()), "OPENBLAS_NUM_THREADS": "1"}
                load = " ".join(f"{x:.1f}" for x in os.getloadavg())
                subprocess.run(cmd, check=True, env=env)
                results.setdefault(name, json.loads(out.read_text()))
                cpu = json.loads(out.read_text())["cpu_ms"]
                print(
                    f"round {round_} {name} (load {load}): CPU ms p50 / p95 "
                    + ", ".join(f"{c} {p50} / {p95}" for c, (p50, p95) in cpu.items())
                )
    sys.exit(1 if _report(results, args) else 0)


if __name__ == "__main__":
    main()
