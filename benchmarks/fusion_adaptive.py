"""Query-adaptive fusion against the default score fusion and BM25 alone, on the dev sets' eval knowledge bases.

    python benchmarks/fusion_adaptive.py --home /work/bench/i14 ../shared/data/cmrc2018 ../shared/data/hotpotqa

Every variant runs the real `KnowledgeBase.search` (hybrid, with dense feedback) with only `Retriever.fuse`
swapped; channel results are memoised per query, so each variant costs fusion time only (the feedback search,
which depends on the first fusion, runs live when its vector is new). Metrics are the eval's own, at passage
level, averaged over the set's queries (the same figures `agentrag eval --task retrieval` reports).

Variants:
- language z: CJK queries fuse with dense weight z, others keep the default;
- peak a: each channel's weight is scaled by (1 + a * peak), where peak = (s1 - s2) / (s1 - s_last) of its
  raw scores: a channel whose best hit stands out gets more say for that query.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agentrag.eval.data import load_dataset
from agentrag.eval.metrics import retrieval_metrics
from agentrag.kb import KnowledgeBase
from agentrag.retrieve.fusion import score_fusion
from agentrag.settings import load_settings
from agentrag.store.base import ChannelResult
from agentrag.text.tokenize import has_cjk
from agentrag.vocab import Channel, Ranking

Fuse = Callable[[dict[str, ChannelResult], str], list[tuple[int, float]]]


def _weights(channels: dict[str, ChannelResult], dense_weight: float) -> dict[str, float]:
    dense_parts = [n for n in (Ranking.DENSE, Ranking.FEEDBACK) if n in channels]
    weights = {n: dense_weight / len(dense_parts) for n in dense_parts}
    weights[Ranking.BM25] = 1.0 - dense_weight
    return weights


def _peak(results: ChannelResult) -> float:
    if len(results) < 3:
        return 0.0
    s1, s2, last = results[0][1], results[1][1], results[-1][1]
    return (s1 - s2) / (s1 - last) if s1 > last else 0.0


def variants(dense_weight: float) -> dict[str, Fuse]:
    out: dict[str, Fuse] = {
        "default": lambda ch, q: score_fusion(ch, _weights(ch, dense_weight)),
        "bm25 alone": lambda ch, q: list(ch[Ranking.BM25]),
    }
    for z in (0.5, 0.4, 0.3):
        out[f"language {z}"] = lambda ch, q, z=z: score_fusion(ch, _weights(ch, z if has_cjk(q) else dense_weight))
    for a in (0.5, 1.0, 2.0):

        def peak(ch: dict[str, ChannelResult], q: str, a: float = a) -> list[tuple[int, float]]:
            weights = _weights(ch, dense_weight)
            scaled = {n: w * (1 + a * _peak(ch[n])) for n, w in weights.items()}
            total = sum(scaled.values())
            return score_fusion(ch, {n: w / total for n, w in scaled.items()})

        out[f"peak {a}"] = peak
    return out


def run(data: Path, home: Path) -> dict[str, dict[str, float]]:
    dataset = load_dataset(data)
    settings = load_settings(home)
    name = sorted(p.name for p in (home / "kbs").glob(f"eval-{data.name}-*"))[-1]
    kb = KnowledgeBase.open(name, settings=settings, create=False, search_cache=False)
    cache = home / "fusion" / f"{data.name}-vectors.npy"
    if cache.exists():
        vectors = np.load(cache)
    else:
        vectors = kb.embedder.embed_queries([q.text for q in dataset.queries])
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
    store: Any = kb.store
    bm25, dense = store.search_bm25, store.search_dense
    memo: dict[Any, ChannelResult] = {}

    def search_bm25(tokens: list[str], k: int, flt: Any = None, tw: float = 2.0) -> ChannelResult:
        key = ("b", tuple(tokens), k, tw)
        if key not in memo:
            memo[key] = bm25(tokens, k, flt, tw)
        return memo[key]

    def search_dense(vector: Any, k: int, flt: Any = None, ef: Any = None, near: Any = None) -> ChannelResult:
        key = ("d", np.asarray(vector, dtype=np.float32).tobytes(), k, ef, None if near is None else near.tobytes())
        if key not in memo:
            memo[key] = dense(vector, k, flt, ef, near)
        return memo[key]

    store.search_bm25, store.search_dense = search_bm25, search_dense
    retriever = kb.retriever
    rows: dict[str, dict[str, float]] = {}
    for label, fuse in variants(settings.retrieval.dense_weight).items():
        totals: dict[str, float] = {}
        for i, q in enumerate(dataset.queries):
            # `limit`: the retriever asks for the first few only (the feedback documents)
            retriever.fuse = lambda ch, limit=None, q=q.text, fuse=fuse: fuse(ch, q)[:limit]  # type: ignore[method-assign]
            hits = kb.search(q.text, 60, Channel.HYBRID, query_vector=vectors[i])  # the eval's CHUNK_DEPTH
            ranked = list(dict.fromkeys(h.chunk.doc_id for h in hits))[:20]
            for metric, value in retrieval_metrics(ranked, dataset.qrels[q.qid]).items():
                totals[metric] = totals.get(metric, 0.0) + value
        rows[label] = {m: round(v / len(dataset.queries), 4) for m, v in totals.items()}
        print(json.dumps({"set": data.name, "variant": label, **rows[label]}), flush=True)
    kb.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    args = parser.parse_args()
    for data in args.sets:
        run(data, args.home)


if __name__ == "__main__":
    main()
