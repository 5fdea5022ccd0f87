"""Fusing ranked channels into one ranking.

`rrf` is reciprocal rank fusion (Cormack et al. 2009): each channel adds weight / (k + rank).
`score` is a convex combination of min-max normalised scores (Bruch et al. 2023, "An Analysis of
Fusion Functions for Hybrid Retrieval"): unlike RRF it keeps how far apart the scores are, so a
confident dense match is not pulled level with a BM25 hit that merely shares a rare word.
Both return every candidate with its fused score, best first; ties go to the better single-channel
rank, then to the smaller key, so results are reproducible.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping

from agentrag.store.base import ChannelResult


def _ranked(fused: dict[int, float], best: dict[int, int], limit: int | None) -> list[tuple[int, float]]:
    """Best first (ties: the better single-channel rank, then the smaller key); with `limit`, only the first
    `limit` of that order, which `heapq.nsmallest` finds without sorting the rest (the feedback channel needs 2)."""

    def order(kv: tuple[int, float]) -> tuple[float, int, int]:
        return -kv[1], best[kv[0]], kv[0]

    if limit is not None and limit < len(fused):
        return heapq.nsmallest(limit, fused.items(), key=order)
    return sorted(fused.items(), key=order)


def rrf(
    channels: Mapping[str, ChannelResult], weights: Mapping[str, float], k: int = 60, limit: int | None = None
) -> list[tuple[int, float]]:
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for name, results in channels.items():
        weight = weights.get(name, 1.0)
        for rank, (key, _) in enumerate(results, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
            best[key] = min(best.get(key, rank), rank)
    return _ranked(fused, best, limit)


def score_fusion(
    channels: Mapping[str, ChannelResult], weights: Mapping[str, float], limit: int | None = None
) -> list[tuple[int, float]]:
    """Weighted sum of min-max normalised channel scores; a key missing from a channel gets 0 there.

    A loop over plain floats: it runs twice per hybrid search on 100-150 candidates, where a dozen numpy calls
    cost twice as much (0.14 against 0.07 ms per fusion inside a search at 10k chunks). Each fused score is
    0.0 plus each channel's weight * (score - lo) / (hi - lo) in channel order: the same float64 operations,
    in the same order, as the numpy version had (bincount adds in input order), so the same bits. `limit`: as in
    `_ranked`."""
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for name, results in channels.items():
        if not results:
            continue
        weight = weights.get(name, 1.0)
        scores = [score for _, score in results]
        lo, hi = min(scores), max(scores)
        span = hi - lo
        for rank, (key, score) in enumerate(results, start=1):
            fused[key] = fused.get(key, 0.0) + weight * ((score - lo) / span if hi > lo else 1.0)
            if rank < best.get(key, rank + 1):
                best[key] = rank
    return _ranked(fused, best, limit)
