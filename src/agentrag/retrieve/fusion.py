"""Fusing ranked channels into one ranking.

`rrf` is reciprocal rank fusion (Cormack et al. 2009): each channel adds weight / (k + rank).
`score` is a convex combination of min-max normalised scores (Bruch et al. 2023, "An Analysis of
Fusion Functions for Hybrid Retrieval"): unlike RRF it keeps how far apart the scores are, so a
confident dense match is not pulled level with a BM25 hit that merely shares a rare word.
Both return every candidate with its fused score, best first; ties go to the better single-channel
rank, then to the smaller key, so results are reproducible.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentrag.store.base import ChannelResult


def rrf(channels: Mapping[str, ChannelResult], weights: Mapping[str, float], k: int = 60) -> list[tuple[int, float]]:
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for name, results in channels.items():
        weight = weights.get(name, 1.0)
        for rank, (key, _) in enumerate(results, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
            best[key] = min(best.get(key, rank), rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))


def _min_max(results: ChannelResult) -> list[tuple[int, float]]:
    if not results:
        return []
    scores = [s for _, s in results]
    lo, hi = min(scores), max(scores)
    if hi <= lo:
        return [(key, 1.0) for key, _ in results]
    return [(key, (s - lo) / (hi - lo)) for key, s in results]


def score_fusion(channels: Mapping[str, ChannelResult], weights: Mapping[str, float]) -> list[tuple[int, float]]:
    """Weighted sum of min-max normalised channel scores; a key missing from a channel gets 0 there."""
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for name, results in channels.items():
        weight = weights.get(name, 1.0)
        for rank, (key, value) in enumerate(_min_max(results), start=1):
            fused[key] = fused.get(key, 0.0) + weight * value
            best[key] = min(best.get(key, rank), rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))
