"""Could one-bit codes pick the rows an exact dense search scores, in place of the int8 codes' full scan?

    python benchmarks/binary_codes.py --scale WORK/n10000/home --data ../shared/data
    python benchmarks/binary_codes.py --home HOME --data ../shared/data/hotpotqa --vectors WORK/vec-hotpotqa.npy

The int8 codes' scan (`store/dense_codes.py`) is the largest step of a hybrid search at 10k chunks: 10k rows of 384
bytes. One bit per dimension (the sign of the centred vector, as the int8 codes centre it) is 48 bytes a row, and
simsimd's Hamming distance scans 10k of them in about a quarter of the time; the int8 codes would then score only the
M rows the bits rank best. That pays only if those M rows hold the exact top k. Per query, this script ranks every row
by the Hamming distance between the query's sign bits and the row's ("hamming"), and by that distance turned into a
cosine times the row's centred length ("length"), and reports, for each M, the share of the exact float32 top k (k:
the search's depth) inside the M best: its mean, the share of queries that keep all of it, and the minimum. The same
for the hybrid search's feedback vector (the query moved toward its two best first-pass hits), which today scans the
rows the query's int8 codes scored best.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import simsimd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hybrid_same import open_eval_kb, open_scale_kb

from agentrag.vocab import Channel, Ranking


def _feedback_vector(kb: Any, query: str, vector: np.ndarray, depth: int) -> np.ndarray:
    retriever, store = kb.retriever, kb.store
    with store.searching():
        channels = retriever.channels(query, Channel.HYBRID, depth, None, vector)
    first = {name: channels[name] for name in (Ranking.BM25, Ranking.DENSE)}
    moved = retriever.feedback_vector(vector, retriever.fuse(first, retriever.settings.feedback_docs))
    return vector if moved is None else moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=Path, help="a knowledge base home built by benchmarks/scale.py")
    parser.add_argument("--home", help="or: the --home that `agentrag eval SET` built the set in")
    parser.add_argument("--data", type=Path, required=True, help="the dev set's folder (with --scale: all of them)")
    parser.add_argument("--vectors", type=Path, help="with --home: a .npy file for the query vectors (made once)")
    parser.add_argument("--rows", default="500,1000,1500,2000", help="comma-separated shortlist lengths M")
    args = parser.parse_args()
    if args.scale:
        kb, queries, vectors = open_scale_kb(args.scale, args.data)
        k = 10
    elif args.home and args.vectors:
        kb, queries, vectors = open_eval_kb(args.home, str(args.data), None, args.vectors)
        k = 60
    else:
        parser.error("give --scale, or --home with --vectors")
    depth = max(kb.retriever.settings.candidates, k)
    _feedback_vector(kb, queries[0], vectors[0], depth)  # opens the dense index
    base = kb.store._derived.dense().base
    if base.kind != "exact" or base._codes is None:
        raise SystemExit("needs an exact index with int8 codes (below the ANN switch, at least 4,096 rows)")
    matrix = np.asarray(base._matrix)
    centred = matrix - base._codes.mean
    bits = np.packbits(centred > 0, axis=1)
    lengths = np.sqrt(np.einsum("ij,ij->i", centred, centred))
    sizes = [int(x) for x in args.rows.split(",")]
    kept: dict[tuple[str, str, int], list[float]] = {}
    for query, vector in zip(queries, vectors, strict=True):
        distance = np.asarray(simsimd.cdist(np.packbits(vector > 0)[None], bits, metric="hamming", dtype="bin8"))[0]
        rankings = {"hamming": -distance, "length": lengths * np.cos(np.pi * distance / matrix.shape[1])}
        for searched, target in (("query", vector), ("feedback", _feedback_vector(kb, query, vector, depth))):
            top = set(np.argpartition(-(matrix @ target), depth)[:depth].tolist())
            for name, estimate in rankings.items():
                for m in sizes:
                    shortlist = set(np.argpartition(-estimate, m)[:m].tolist())
                    kept.setdefault((searched, name, m), []).append(len(top & shortlist) / depth)
    print(f"{args.scale or args.data}: {len(queries)} queries, {len(matrix)} rows, top {depth}")
    print("| vector | ranked by | M | top k kept (mean) | queries keeping all | minimum |")
    print("|---|---|---|---|---|---|")
    for (searched, name, m), shares in kept.items():
        a = np.asarray(shares)
        print(f"| {searched} | {name} | {m} | {a.mean():.4f} | {np.mean(a == 1):.3f} | {a.min():.3f} |")


if __name__ == "__main__":
    main()
