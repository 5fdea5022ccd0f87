"""How narrow the feedback search's scan may be: the hybrid search's feedback channel computed over fewer rows than it
scans today, against the channel it has, on a dev set's eval knowledge base (an exact index: below the ANN switch, or
forced there with AGENTRAG_STORE__ANN_THRESHOLD).

    python benchmarks/feedback_shortlist.py --home HOME --data ../shared/data/hotpotqa --vectors WORK/vec-hotpotqa.npy
    AGENTRAG_STORE__ANN_THRESHOLD=100000 python benchmarks/feedback_shortlist.py --home SCIHOME \
        --data ../shared/data/scifact --vectors WORK/vec-scifact.npy --rows 300,400,600,1000 --union

Today the feedback vector (the query moved toward its two best first-pass hits) is searched over the tenth of the rows
whose int8 codes the query scored best (`dense_codes._NEAR_SHARE`), then rescored in float32. Here, per query, the
feedback vector is instead scored in float32 over the M rows the query's codes scored best (with --union: and the rows
of the first pass's BM25 and dense lists), for each M of --rows, and with the first-pass lists alone ("union only",
what "The feedback ranking the first pass" tried). Reported per M, averaged over the queries: the share of today's
feedback top 10 and top k kept, and of the final fused top 10 (the three channels fused as the search fuses them),
and how many queries keep their fused top 10 exactly, in order. The query vectors are embedded once and kept in
--vectors (hybrid_same.py's `open_eval_kb`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from hybrid_same import open_eval_kb

from agentrag.vocab import Channel, Ranking

UNION_ONLY = 0  # the first pass's lists alone


def _restricted(base: Any, approx: np.ndarray, rows: int, first: dict[str, Any], union: bool, depth: int, vector: Any):
    """The feedback channel over the `rows` best code rows of the query (and/or the first pass's rows), best first."""
    picked = np.zeros(0, dtype=np.intp) if rows == UNION_ONLY else np.argpartition(approx, len(approx) - rows)[-rows:]
    if union or rows == UNION_ONLY:
        listed = np.asarray([key for results in first.values() for key, _ in results], dtype=np.int64)
        picked = np.unique(np.concatenate([picked, base._rows(listed)]))
    scores = base._matrix[picked] @ vector
    order = np.lexsort((picked, -scores))[:depth]
    return list(zip(base._keys[picked[order]].tolist(), scores[order].tolist(), strict=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True, help="the --home that `agentrag eval SET` built the set in")
    parser.add_argument("--data", required=True, help="the dev set's folder")
    parser.add_argument("--vectors", type=Path, required=True, help="a .npy file for the query vectors (made once)")
    parser.add_argument("-k", type=int, default=60, help="hits per search (default: 60, as the eval)")
    parser.add_argument("--rows", default="100,200,400,1000", help="comma-separated shortlist lengths M")
    parser.add_argument("--union", action="store_true", help="add the first pass's BM25 and dense rows to each M")
    args = parser.parse_args()
    kb, queries, vectors = open_eval_kb(args.home, args.data, None, args.vectors)
    retriever, store = kb.retriever, kb.store
    depth = max(retriever.settings.candidates, args.k)
    base = store._derived.dense().base
    if base.kind != "exact" or base._codes is None:
        raise SystemExit("needs an exact index with int8 codes (set AGENTRAG_STORE__ANN_THRESHOLD above its size)")
    sizes = [int(x) for x in args.rows.split(",")] + [UNION_ONLY]
    kept: dict[int, dict[str, list[float]]] = {m: {"fb10": [], "fb": [], "fused10": [], "same": []} for m in sizes}
    for query, vector in zip(queries, vectors, strict=True):
        with store.searching():
            channels = retriever.channels(query, Channel.HYBRID, depth, None, vector)
            first = {name: channels[name] for name in (Ranking.BM25, Ranking.DENSE)}
            today = channels.get(Ranking.FEEDBACK, [])
            moved = retriever.feedback_vector(vector, retriever.fuse(first, retriever.settings.feedback_docs))
            if moved is None:  # no first-pass hit to move toward: no feedback channel to compare
                continue
            approx = base._codes._last.scanned[1]  # the query's code scores, from its first-pass scan
            fused_today = [key for key, _ in retriever.fuse(channels)[:10]]
            for m in sizes:
                mine = _restricted(base, approx, m, first, args.union, depth, moved)
                top_today, top_mine = {k for k, _ in today[:10]}, {k for k, _ in mine[:10]}
                kept[m]["fb10"].append(len(top_today & top_mine) / max(len(top_today), 1))
                kept[m]["fb"].append(len({k for k, _ in today} & {k for k, _ in mine}) / max(len(today), 1))
                fused = [key for key, _ in retriever.fuse({**first, Ranking.FEEDBACK: mine})[:10]]
                kept[m]["fused10"].append(len(set(fused_today) & set(fused)) / 10)
                kept[m]["same"].append(float(fused == fused_today))
    print(f"{args.data}: {len(queries)} queries, {len(base)} rows, depth {depth}, union {args.union}")
    print("| rows scanned | feedback top 10 kept | feedback top k kept | fused top 10 kept | fused top 10 identical |")
    print("|---|---|---|---|---|")
    for m in sizes:
        d = kept[m]
        label = "first-pass lists only" if m == UNION_ONLY else str(m)
        print(
            f"| {label} | {np.mean(d['fb10']):.4f} | {np.mean(d['fb']):.4f} | {np.mean(d['fused10']):.4f} | "
            f"{int(sum(d['same']))}/{len(d['same'])} |"
        )


if __name__ == "__main__":
    main()
