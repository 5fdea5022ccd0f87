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

import numpy as np

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


def score_fusion(channels: Mapping[str, ChannelResult], weights: Mapping[str, float]) -> list[tuple[int, float]]:
    """Weighted sum of min-max normalised channel scores; a key missing from a channel gets 0 there.

    Over arrays (it runs twice per hybrid search, on 100-150 candidates): the same float64 operations in the
    same order as a loop over the channels, so the fused scores are bit for bit those of the loop."""
    keys, values, ranks = [], [], []
    for name, results in channels.items():
        if not results:
            continue
        weight = weights.get(name, 1.0)
        channel_keys, scores = zip(*results, strict=True)
        score = np.asarray(scores, dtype=np.float64)
        lo, hi = score.min(), score.max()
        normalised = (score - lo) / (hi - lo) if hi > lo else np.ones(len(score))
        keys.append(np.asarray(channel_keys, dtype=np.int64))
        values.append(weight * normalised)
        ranks.append(np.arange(1, len(score) + 1))
    if not keys:
        return []
    unique, where = np.unique(np.concatenate(keys), return_inverse=True)
    fused = np.bincount(where, weights=np.concatenate(values), minlength=len(unique))  # adds in channel order
    best = np.full(len(unique), np.iinfo(np.int64).max)
    np.minimum.at(best, where, np.concatenate(ranks))
    order = np.lexsort((unique, best, -fused))
    return list(zip(unique[order].tolist(), fused[order].tolist(), strict=True))
