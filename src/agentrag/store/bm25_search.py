"""Top-k search over the BM25 segments of `store.bm25`, with MaxScore pruning and exact results.

A query token's contribution to a row is at most its upper bound: weight * (k1 + 1) * (the segment's saved
per-term bound of f / (f + norm), scaled for the query's title weight and the index's mean length). Terms are
taken in descending bound order; while the bounds of the terms not yet read sum to at least the current k-th
best score (a lower bound of the final one: the k-th best partial score), the next term's postings are scored
in full (the essential terms). The rest only complete the rows found so far, by binary search in their
postings, and a row is dropped as soon as its partial score plus the bounds still unread falls below the k-th
best. A row never read cannot reach the top k: its score is at most the sum of the bounds of terms it holds.
Within an essential term, a posting whose contribution plus the bounds of all the other terms misses the k-th
best is dropped too (its row cannot reach the top k), which keeps the candidate set small.

The rows that survive are scored again term by term in query order, which is the order today's exhaustive
sum adds in, so every score is bit for bit the exhaustive one; ties at the k-th score are all kept and cut
by key, so the top k is exactly the exhaustive top k. A small segment (the recent changes) and a query
whose bounds leave nothing to prune are scored exhaustively.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agentrag.store.bm25 import BOUND_TITLE_WEIGHT, K1, B, Segment
from agentrag.store.bm25_terms import term_ids
from agentrag.store.select import kth_largest

# Relative slack on every pruning comparison: partial sums added in another order than the final one
# differ from it in the last bits, so a row is dropped only when it misses the k-th score by more than this.
SLACK = 1e-9
# A segment whose query postings number fewer than this is scored exhaustively: measured on the 100k scale
# index (benchmarks/bm25_prune.py), pruning costs more than it saves below about 30-50k postings.
PRUNE_MIN = 32_768
# A saved segment's postings runs up to this long (256 KB of rows) are asked for from storage as soon as the
# query's terms are known, all at once; longer ones only when scored in full (pruning may read a few pages).
PREFETCH_TOGETHER = 65_536
# Query tokens whose idf and spans an index remembers; past it the memory starts again empty.
_KNOWN_MAX = 100_000
# Postings whose contributions an index remembers (`_exhaustive`), 12 bytes each (row and score): 25 MB at most;
# past it the memory starts again empty. hotpotqa's 600 dev queries remember 203k of them.
_PARTS_MAX = 1 << 21

Rows = npt.NDArray[np.int32]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """A distinct query token: its weight (repeats * idf) and, per segment, its term id and postings span. An index
    remembers each token's term at one repeat (weight idf) and hands that same object to every query holding the
    token once: frozen."""

    weight: float
    spans: tuple[tuple[int, int, int], ...]  # (term id or -1, lo, hi) per segment


def _kth(scores: Floats, k: int) -> float:
    """The k-th largest of `scores`, or 0.0 when there are fewer than k (every score is positive)."""
    if len(scores) < k:
        return 0.0
    return kth_largest(scores, k)


def _short(upper: Floats | float, theta: float) -> Any:
    """Where an upper bound cannot reach theta, the k-th best score known so far."""
    return upper * (1 + SLACK) < theta * (1 - SLACK)


class Bm25Index:
    """Segments searched as one index; `masks[i]` marks the live rows of segment i (None: all live)."""

    def __init__(self, segments: list[Segment], masks: list[npt.NDArray[np.bool_] | None]) -> None:
        # An empty segment (no changes since the saved one) holds no row: left out, it costs no lookups per query.
        kept = [(segment, mask) for segment, mask in zip(segments, masks, strict=True) if len(segment)]
        self.segments = [segment for segment, _ in kept]
        self.masks = [mask for _, mask in kept]
        segments, masks = self.segments, self.masks
        self.n_rows = sum(len(s) if m is None else int(m.sum()) for s, m in zip(segments, masks, strict=True))
        total = sum(
            int(s.lengths.sum(dtype=np.int64)) if m is None else int(s.lengths[m].sum(dtype=np.int64))
            for s, m in zip(segments, masks, strict=True)
        )
        self.avgdl = total / self.n_rows if self.n_rows else 0.0
        # Per row: k1 * (1 - b + b * D / avgdl), the length part of the denominator, once per index.
        self._norms = [K1 * (1 - B + B * s.lengths.astype(np.float64) / (self.avgdl or 1.0)) for s in segments]
        # The masked-out rows, ascending, to count a term's live postings without reading them all.
        self._dead = [None if m is None else np.flatnonzero(~m).astype(np.int32) for m in masks]
        # token -> its term at one repeat (weight: the idf; postings spans per segment), None: no live row holds it.
        # Both are fixed for this index's life (one generation); a query's tokens looked up again cost a dict
        # lookup, not a probe of the mapped term table, the postings' bounds and a logarithm each (`_terms`).
        self._known: dict[str, QueryTerm | None] = {}
        # (segment, term id, title weight, term weight) -> the term's live rows in that segment and its contribution
        # to each: what `_score` returns, fixed for this index's life like `_known`.
        self._parts: dict[tuple[int, int, float, float], tuple[Rows, Floats]] = {}
        self._parts_size = 0  # postings held in `_parts`

    def search(
        self,
        tokens: list[str],
        k: int,
        title_weight: float = 2.0,
        allowed: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """The k best (key, score) pairs, best first (ties by key); `allowed` keeps only those keys."""
        if not tokens or self.n_rows == 0 or k <= 0:
            return []
        terms = self._terms(tokens)
        if not terms:
            return []
        all_keys: list[npt.NDArray[np.int64]] = []
        all_scores: list[Floats] = []
        theta = 0.0
        sizes = [sum(t.spans[i][2] - t.spans[i][1] for t in terms) for i in range(len(self.segments))]
        order = [i for i in sorted(range(len(self.segments)), key=lambda i: sizes[i]) if sizes[i]]
        for i in order:  # small first: they seed theta
            if sizes[i] < PRUNE_MIN or title_weight < 0:
                rows, scores = self._exhaustive(i, terms, title_weight)
            else:
                rows, scores = self._pruned(i, terms, title_weight, k, theta, allowed)
            if allowed is not None:  # exact post-filter over every matching row, so k hits survive if k exist
                keep = np.isin(self.segments[i].keys[rows], allowed)
                rows, scores = rows[keep], scores[keep]
            # A segment's rows are numbered in key order, so its k best by row are its k best by key; only their
            # keys are read (a gather of every matching row's key was a tenth of a search at 10k chunks).
            rows, scores = _best(rows, scores, k)
            all_keys.append(self.segments[i].keys[rows])
            all_scores.append(scores)
            if i != order[-1]:  # theta only prunes the segments still to come
                theta = max(theta, _kth(scores, k))
        if not all_keys:
            return []
        if len(all_keys) == 1:  # one segment's k best already
            keys, scores = all_keys[0], all_scores[0]
        else:
            keys, scores = _best(np.concatenate(all_keys), np.concatenate(all_scores), k)
        return list(zip(keys.tolist(), scores.tolist(), strict=True))  # Python ints and floats

    def _terms(self, tokens: list[str]) -> list[QueryTerm]:
        """The query's distinct tokens that match a live row, in order of first appearance."""
        known = self._known
        unknown = [token for token in tokens if token not in known]
        if unknown:
            unknown = list(dict.fromkeys(unknown))
            if len(known) + len(unknown) > _KNOWN_MAX:  # full: starts again with this query's tokens
                known.clear()
                unknown = list(dict.fromkeys(tokens))
            self._learn(unknown)
        if len(set(tokens)) == len(tokens):  # each token once (the retriever's are de-duplicated): the terms known
            return [term for term in map(known.__getitem__, tokens) if term is not None]
        out: list[QueryTerm] = []
        for token, repeats in Counter(tokens).items():
            term = known[token]
            if term is not None:
                out.append(term if repeats == 1 else QueryTerm(repeats * term.weight, term.spans))
        return out

    def _learn(self, tokens: list[str]) -> None:
        """Each token's idf and postings spans (None: no live row holds it) into `_known`; the short runs of those
        that match asked for from storage together, not in turn."""
        ids = [term_ids(segment.terms, tokens) for segment in self.segments]
        learnt: list[tuple[int, int, int]] = []
        for n, token in enumerate(tokens):
            spans: list[tuple[int, int, int]] = []
            hits = 0
            for i, segment in enumerate(self.segments):
                t = ids[i][n]
                if t is None:
                    spans.append((-1, 0, 0))
                    continue
                lo, hi = int(segment.indptr[t]), int(segment.indptr[t + 1])
                spans.append((t, lo, hi))
                hits += self._live_count(i, lo, hi)
            if hits == 0:
                self._known[token] = None
                continue
            idf = float(np.log((self.n_rows - hits + 0.5) / (hits + 0.5)))
            self._known[token] = QueryTerm(1e-6 if idf <= 0.0 else idf, tuple(spans))
            learnt.extend(spans)
        for i, segment in enumerate(self.segments):
            for t, lo, hi in learnt[i :: len(self.segments)]:
                if hi - lo <= PREFETCH_TOGETHER:
                    segment.will_read(t, lo, hi)

    def _live_count(self, i: int, lo: int, hi: int) -> int:
        dead, mask = self._dead[i], self.masks[i]
        if dead is None or mask is None or hi == lo:
            return hi - lo
        rows = self.segments[i].rows[lo:hi]
        if len(dead) * 16 > hi - lo:
            return int(mask[rows].sum())
        at = np.searchsorted(rows, dead)
        inside = at < len(rows)
        return hi - lo - int((rows[at[inside]] == dead[inside]).sum())

    def _score(self, i: int, term: QueryTerm, title_weight: float) -> tuple[Rows, Floats]:
        """The live rows of a term's postings in segment i and the term's contribution to each."""
        segment = self.segments[i]
        t, lo, hi = term.spans[i]
        segment.will_read(t, lo, hi)
        rows, tt, tb = segment.rows[lo:hi], segment.tf_title[lo:hi], segment.tf_body[lo:hi]
        mask = self.masks[i]
        if mask is not None:
            live = mask[rows]
            rows, tt, tb = rows[live], tt[live], tb[live]
        f = title_weight * tt + tb.astype(np.float64)
        return rows, term.weight * f * (K1 + 1) / (f + self._norms[i][rows])

    def _lookup(self, i: int, term: QueryTerm, rows: Rows, title_weight: float) -> tuple[Any, Floats]:
        """Which of `rows` (ascending, live) hold the term in segment i, and its contribution to those."""
        segment = self.segments[i]
        t, lo, hi = term.spans[i]
        if len(rows) * 8 > hi - lo:  # binary searches of this many rows touch most pages of the run
            segment.will_read(t, lo, hi)
        posted = segment.rows[lo:hi]
        at = np.minimum(np.searchsorted(posted, rows), max(hi - lo - 1, 0))
        found = posted[at] == rows if hi > lo else np.zeros(len(rows), dtype=np.bool_)
        at = at[found] + lo
        f = title_weight * segment.tf_title[at] + segment.tf_body[at].astype(np.float64)
        return found, term.weight * f * (K1 + 1) / (f + self._norms[i][rows[found]])

    def _exhaustive(self, i: int, terms: list[QueryTerm], title_weight: float) -> tuple[Rows, Floats]:
        """Every term's postings in one pass: each term's rows and contributions (`_score`), concatenated in term
        order, so `_sum` adds exactly what it added term by term.

        A term's part is remembered for the index's life (bounded by `_PARTS_MAX`): a query holding a token met
        before concatenates two arrays per term instead of scoring its postings again (gathering three of their
        arrays and the row norms, and half a dozen passes over them), which was a third of BM25's time on hotpotqa."""
        parts: list[tuple[Rows, Floats]] = []
        remembered = self._parts
        for term in terms:
            t, lo, hi = term.spans[i]
            if hi <= lo:
                continue
            key = (i, t, title_weight, term.weight)
            part = remembered.get(key)
            if part is None:
                part = self._score(i, term, title_weight)
                if self._parts_size + (hi - lo) > _PARTS_MAX:  # full: starts again empty
                    remembered.clear()
                    self._parts_size = 0
                remembered[key] = part
                self._parts_size += hi - lo
            parts.append(part)
        # With a positive title weight every contribution is positive (weights and f are), so a row's sum is
        # nonzero exactly where it has a posting.
        positive = title_weight > 0
        if len(parts) > 1:
            parts = [(np.concatenate([rows for rows, _ in parts]), np.concatenate([scores for _, scores in parts]))]
        return _sum(parts, len(self.segments[i]), positive)

    def _bound(self, i: int, term: QueryTerm, title_weight: float) -> float:
        """An upper bound of the term's contribution to any row of segment i."""
        segment = self.segments[i]
        sat = float(segment.bounds[term.spans[i][0]])
        if title_weight > BOUND_TITLE_WEIGHT:  # f grows at most by the ratio, and f / (f + n) with it
            sat *= title_weight / BOUND_TITLE_WEIGHT
        avgdl = self.avgdl or 1.0
        if avgdl > segment.bound_avgdl:  # a longer mean shrinks every norm by at most this ratio
            sat *= avgdl / segment.bound_avgdl
        return term.weight * (K1 + 1) * min(sat, 1.0)

    def _pruned(
        self,
        i: int,
        terms: list[QueryTerm],
        title_weight: float,
        k: int,
        theta: float,
        allowed: npt.NDArray[np.int64] | None,
    ) -> tuple[Rows, Floats]:
        present = [t for t in terms if t.spans[i][2] > t.spans[i][1]]
        bounds = {id(t): self._bound(i, t, title_weight) for t in present}
        by_bound = sorted(present, key=lambda t: -bounds[id(t)])
        suffix = [*np.cumsum([bounds[id(t)] for t in reversed(by_bound)])[::-1].tolist(), 0.0]
        read: list[tuple[QueryTerm, Rows, Floats]] = []
        total, dropped, j = suffix[0], False, 0
        while j < len(by_bound) and not _short(suffix[j], theta):
            rows, contrib = self._score(i, by_bound[j], title_weight)
            if allowed is None:
                theta = max(theta, _kth(contrib, k))
            if theta > 0:  # a row whose contribution here plus every other term's bound misses theta is out
                keep = ~_short(contrib + (total - bounds[id(by_bound[j])]), theta)
                if not keep.all():
                    rows, contrib, dropped = rows[keep], contrib[keep], True
            read.append((by_bound[j], rows, contrib))
            j += 1
            if j < len(by_bound) and not _short(suffix[j], theta):
                volume = sum(len(r) for _, r, _ in read)
                if by_bound[j].spans[i][2] - by_bound[j].spans[i][1] > volume:  # worth a better theta first
                    rows, partial = self._partial(i, terms, read, allowed)
                    theta = max(theta, _kth(partial, k))
        rows, partial = self._partial(i, terms, read, allowed)
        if j == len(by_bound) and not dropped:  # nothing pruned: these sums were added in query order
            return rows, partial
        theta = max(theta, _kth(partial, k))
        for n in range(j, len(by_bound)):
            keep = ~_short(partial + suffix[n], theta)
            rows, partial = rows[keep], partial[keep]
            found, contrib = self._lookup(i, by_bound[n], rows, title_weight)
            partial[found] += contrib
            theta = max(theta, _kth(partial, k))
        keep = ~_short(partial, theta)
        return self._rescore(i, terms, rows[keep], title_weight)

    def _partial(
        self,
        i: int,
        terms: list[QueryTerm],
        read: list[tuple[QueryTerm, Rows, Floats]],
        allowed: npt.NDArray[np.int64] | None,
    ) -> tuple[Rows, Floats]:
        """The rows holding any term read so far (allowed ones only) and their sums, added in query order."""
        order = {id(t): n for n, t in enumerate(terms)}
        parts = [(r, c) for _, r, c in sorted(read, key=lambda x: order[id(x[0])])]
        rows, sums = _sum(parts, len(self.segments[i]))
        if allowed is not None:
            keep = np.isin(self.segments[i].keys[rows], allowed)
            rows, sums = rows[keep], sums[keep]
        return rows, sums

    def _rescore(self, i: int, terms: list[QueryTerm], rows: Rows, title_weight: float) -> tuple[Rows, Floats]:
        """The exact scores of `rows`: each term's contribution added in query order, as `_sum` adds them."""
        scores = np.zeros(len(rows), dtype=np.float64)
        for term in terms:
            if term.spans[i][2] > term.spans[i][1] and len(rows):
                found, contrib = self._lookup(i, term, rows, title_weight)
                scores[found] += contrib
        return rows, scores


def _sum(parts: list[tuple[Rows, Floats]], size: int, positive: bool = False) -> tuple[Rows, Floats]:
    """Distinct rows (ascending) of the parts and the sum of their contributions, added in parts order.
    `positive`: every contribution is above 0, so the rows with a nonzero sum are the rows posted."""
    if not parts:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64)
    rows = np.concatenate([r for r, _ in parts]) if len(parts) > 1 else parts[0][0]
    contrib = np.concatenate([c for _, c in parts]) if len(parts) > 1 else parts[0][1]
    if len(rows) * 16 < size:  # few postings: sum per distinct row without a corpus-sized array
        distinct, inverse = np.unique(rows, return_inverse=True)
        return distinct.astype(np.int32), np.asarray(np.bincount(inverse, weights=contrib), dtype=np.float64)
    sums = np.asarray(np.bincount(rows, weights=contrib, minlength=size), dtype=np.float64)
    if positive:  # every contribution above 0: the rows posted are the rows with a nonzero sum
        # (of a bool array: numpy's nonzero of float64 is 5-10x slower at 100k rows, the same indices)
        hit = (sums != 0).nonzero()[0].astype(np.int32)
    else:
        seen = np.zeros(size, dtype=np.bool_)  # a row can sum to 0 (title weight 0), so not flatnonzero(sums)
        seen[rows] = True
        hit = np.flatnonzero(seen).astype(np.int32)
    return hit, sums[hit]


def _best(ids: npt.NDArray[Any], scores: Floats, k: int) -> tuple[npt.NDArray[Any], Floats]:
    """The k best ids (keys, or a segment's rows) and their scores, best first, ties by id."""
    if len(ids) > k:
        # Every id tied with the k-th score is taken, then ordered and cut. The k-th score by a partition of
        # the scores (an argpartition of their negation was a third slower at 30-60k rows).
        best = (scores >= _kth(scores, k)).nonzero()[0]
        ids, scores = ids[best], scores[best]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order]
