from agentrag.retrieve.fusion import rrf, score_fusion


def test_rrf_sums_reciprocal_ranks() -> None:
    fused = rrf({"bm25": [(1, 9.0), (2, 5.0), (3, 1.0)], "dense": [(3, 0.9), (1, 0.8)]}, {}, k=60)
    scores = dict(fused)
    assert scores[1] == 1 / 61 + 1 / 62
    assert scores[3] == 1 / 63 + 1 / 61
    assert [key for key, _ in fused] == [1, 3, 2]


def test_rrf_ties_go_to_the_better_single_rank_then_the_key() -> None:
    # 5 is #1 in bm25 and #2 in dense; 7 is #2 in bm25 and #1 in dense: equal sums, equal best rank.
    fused = rrf({"bm25": [(5, 1.0), (7, 0.5)], "dense": [(7, 0.9), (5, 0.8)]}, {})
    assert [key for key, _ in fused] == [5, 7]
    fused = rrf({"bm25": [(9, 1.0)], "dense": [(4, 1.0), (9, 0.5)]}, {})
    assert [key for key, _ in fused] == [9, 4]


def test_weighted_rrf_lets_the_stronger_channel_lead() -> None:
    channels = {"bm25": [(1, 3.0), (2, 2.0)], "dense": [(2, 0.9), (1, 0.1)]}
    assert rrf(channels, {"bm25": 0.3, "dense": 0.7})[0][0] == 2
    assert rrf(channels, {"bm25": 0.7, "dense": 0.3})[0][0] == 1


def test_score_fusion_keeps_score_gaps_that_rrf_throws_away() -> None:
    # Dense is very sure about 1; BM25 barely prefers 2 over 1. RRF calls it a tie-break, score fusion does not.
    channels = {"bm25": [(2, 10.0), (1, 9.9), (3, 0.0)], "dense": [(1, 0.95), (2, 0.40), (3, 0.39)]}
    assert score_fusion(channels, {"bm25": 0.5, "dense": 0.5})[0][0] == 1


def test_score_fusion_of_a_missing_key_counts_zero_for_that_channel() -> None:
    fused = dict(
        score_fusion({"bm25": [(1, 2.0), (2, 1.0)], "dense": [(3, 0.9), (1, 0.1)]}, {"bm25": 0.5, "dense": 0.5})
    )
    assert fused[2] == 0.0
    assert fused[3] == 0.5


def _loop_fusion(channels: dict[str, list[tuple[int, float]]], weights: dict[str, float]) -> list[tuple[int, float]]:
    """The loop score fusion was before it ran over arrays: the arrays must give these results bit for bit."""
    fused: dict[int, float] = {}
    best: dict[int, int] = {}
    for name, results in channels.items():
        if not results:
            continue
        lo, hi = min(s for _, s in results), max(s for _, s in results)
        for rank, (key, s) in enumerate(results, start=1):
            value = (s - lo) / (hi - lo) if hi > lo else 1.0
            fused[key] = fused.get(key, 0.0) + weights.get(name, 1.0) * value
            best[key] = min(best.get(key, rank), rank)
    return sorted(fused.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))


def test_score_fusion_over_arrays_equals_the_loop_bit_for_bit() -> None:
    import random

    rng = random.Random(5)
    for trial in range(300):
        pool = list(range(1, 80))
        channels = {
            name: [(key, rng.choice([rng.random() * 20, 0.5, 1.0])) for key in rng.sample(pool, rng.randint(0, 50))]
            for name in ("bm25", "dense", "feedback")
        }
        for results in channels.values():
            results.sort(key=lambda kv: -kv[1])
        if trial % 7 == 0:
            channels["dense"] = channels["dense"][:1]
        weights = {"bm25": 0.4, "dense": 0.3, "feedback": 0.3}
        assert score_fusion(channels, weights) == _loop_fusion(channels, weights)
    assert score_fusion({"bm25": [], "dense": []}, weights) == []


def test_a_limit_gives_the_first_of_the_full_order() -> None:
    import random

    rng = random.Random(11)
    for _ in range(200):
        channels = {
            name: sorted(
                [(key, rng.choice([rng.random(), 0.5])) for key in rng.sample(range(60), rng.randint(0, 30))],
                key=lambda kv: -kv[1],
            )
            for name in ("bm25", "dense", "feedback")
        }
        weights = {"bm25": 0.4, "dense": 0.3, "feedback": 0.3}
        for limit in (0, 1, 2, 5, 100):
            assert score_fusion(channels, weights, limit) == score_fusion(channels, weights)[:limit]
            assert rrf(channels, weights, 60, limit) == rrf(channels, weights, 60)[:limit]


def test_a_short_limit_walked_down_the_channels_is_the_head_of_the_full_order() -> None:
    """The first pass asks for its best two: found by walking the channels down, which must stop neither early
    (a key further down still fuses higher) nor late, and keep the full order's ties (rank, then key)."""
    import random

    rng = random.Random(23)
    for trial in range(400):
        pool = range(40)
        channels = {
            name: sorted(
                [(key, rng.choice([rng.random(), 0.5, 0.25])) for key in rng.sample(pool, rng.randint(1, 30))],
                key=lambda kv: -kv[1],
            )
            for name in ("bm25", "dense")
        }
        if trial % 5 == 0:  # equal scores in a channel (its normalised scores all 1.0)
            channels["dense"] = [(key, 0.7) for key, _ in channels["dense"]]
        weights = {"bm25": rng.choice([0.4, 0.5, 0.0]), "dense": 0.6}
        whole = score_fusion(channels, weights)
        for limit in (1, 2, 3, 4):
            assert score_fusion(channels, weights, limit) == whole[:limit]
    # A key deep in both channels that fuses highest: found although neither channel ranks it near the top.
    bm25 = [(1, 10.0), (2, 9.0), (3, 8.9), (4, 8.8), (9, 8.7), (5, 0.0)]
    dense = [(6, 0.9), (7, 0.89), (8, 0.88), (10, 0.87), (9, 0.86), (5, 0.1)]
    channels = {"bm25": bm25, "dense": dense}
    best = score_fusion(channels, {"bm25": 0.5, "dense": 0.5}, 1)
    assert best == score_fusion(channels, {"bm25": 0.5, "dense": 0.5})[:1]
    assert best[0][0] == 9
