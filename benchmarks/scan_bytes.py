"""Could the exact dense scan read fewer bytes? Three ways, measured on real e5 vectors (issue 14).

    python benchmarks/scan_bytes.py --home HOME --data ../shared/data/hotpotqa

The int8 codes (store/dense_codes.py) are 384 bytes a row: at hotpotqa's 9,400 chunks, 3.6 MB streamed per query,
which costs its own time and about as much again in the caches the rest of the search then finds empty
(BENCHMARKS.md, issue 14). A way to read fewer bytes has to keep the scan exact (within the codes' statistical
bound): it must say, before scoring a row in full, that the row cannot reach the k-th best. For each way, this
prints how many rows it would leave to score in full, per query (median and p90):

- 4-bit codes (what numkong packs as `i4`): the rows whose 4-bit code score is within the same five-spread band of
  the k-th best (store/dense_codes.py's bound, with 4-bit rounding errors), beside the int8 codes' band;
- clusters with an exact bound: k-means clusters of the vectors; a cluster is skipped when its centroid's score
  plus |q| times its radius is below the exact k-th best score; the share of rows in clusters not skipped;
- a PCA head with an exact bound on the tail: the first d principal components scored, the rest bounded by
  |q_tail| * |x_tail| (Cauchy-Schwarz); the share of rows whose upper bound reaches the best lower bound of the k-th.

The vectors are those of the set's eval knowledge base (`agentrag eval SET --home HOME` builds it); the queries are
embedded with the knowledge base's embedder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentrag.store.select import kth_largest

K = 60  # the eval's depth
SPREADS = 5.0  # as store/dense_codes.py

Matrix = npt.NDArray[np.float64]


def _load(home: Path, data: Path) -> tuple[Matrix, Matrix]:
    """The eval knowledge base's vectors (its dense file) and the set's query vectors."""
    from agentrag.eval.data import load_dataset
    from agentrag.eval.runner import eval_kb_name
    from agentrag.kb import shared_embedder
    from agentrag.layout import Layout
    from agentrag.settings import load_settings
    from agentrag.store.dense_files import MappedExact

    settings = load_settings(home)
    embedder = shared_embedder(settings.embedder)
    dataset = load_dataset(data, None)
    folder = Layout(settings.home).kb_dir(eval_kb_name(dataset, settings, embedder.name))
    files = sorted(folder.glob("dense-g*.exact"), key=lambda p: p.stat().st_mtime)
    if not files:
        raise SystemExit(f"{folder}: no dense file; run `agentrag eval {data} --home {home}` first")
    vectors = np.asarray(MappedExact.open(files[-1], embedder.dim).all_vectors()[1], dtype=np.float64)
    queries = np.asarray(embedder.embed_queries([q.text for q in dataset.queries]), dtype=np.float64)
    return vectors, queries


def _summary(values: list[float], digits: int = 0) -> str:
    return f"median {np.median(values):.{digits}f}, p90 {np.percentile(values, 90):.{digits}f}"


def code_bands(vectors: Matrix, queries: Matrix) -> None:
    """Rows within the band of the k-th best code score: int8 and 4-bit codes of the centred vectors."""
    centred = vectors - vectors.mean(axis=0)
    dim = vectors.shape[1]
    for levels, query_levels, name in ((127, 127, "int8"), (7, 127, "4-bit rows, int8 query"), (7, 7, "4-bit both")):
        scale = np.abs(centred).max(axis=1) / levels
        codes = np.clip(np.rint(centred / scale[:, None]), -levels, levels)
        restored = codes * scale[:, None]
        error = float(np.linalg.norm(centred - restored, axis=1).max())
        norm = float(np.linalg.norm(restored, axis=1).max())
        counts: list[float] = []
        for query in queries:
            step = float(np.abs(query).max()) / query_levels
            rounded = np.rint(query / step)
            rest = float(np.linalg.norm(query - rounded * step))
            band = 2 * SPREADS * (float(np.linalg.norm(query)) * error + rest * norm) / np.sqrt(dim)
            approx = (codes @ rounded) * scale * step
            counts.append(float((approx >= kth_largest(approx, K) - band).sum()))
        print(f"{name} codes: rows in the band of the {K}th, {_summary(counts)} (of {len(vectors)})")


def clusters(vectors: Matrix, queries: Matrix, sizes: tuple[int, ...] = (32, 128, 512)) -> None:
    """The share of rows in clusters whose exact bound reaches the k-th best score."""
    rng = np.random.default_rng(0)
    for n in sizes:
        centroids = vectors[rng.choice(len(vectors), n, replace=False)].copy()
        for _ in range(15):  # k-means on inner products (unit vectors)
            member = (vectors @ centroids.T).argmax(axis=1)
            for j in range(n):
                if (member == j).any():
                    centroids[j] = vectors[member == j].mean(axis=0)
        member = (vectors @ centroids.T).argmax(axis=1)
        radius = np.array(
            [
                np.linalg.norm(vectors[member == j] - centroids[j], axis=1).max() if (member == j).any() else 0.0
                for j in range(n)
            ]
        )
        counts = np.bincount(member, minlength=n)
        shares = []
        for query in queries:
            reach = centroids @ query + np.linalg.norm(query) * radius
            shares.append(float(counts[reach >= kth_largest(vectors @ query, K)].sum()) / len(vectors))
        print(f"{n} clusters (mean radius {radius.mean():.3f}): share of rows scanned, {_summary(shares, 2)}")


def pca_head(vectors: Matrix, queries: Matrix, heads: tuple[int, ...] = (96, 128, 192)) -> None:
    """The share of rows whose bound from a PCA head and the tail's norms reaches the k-th best."""
    centred = vectors - vectors.mean(axis=0)
    _, singular, basis = np.linalg.svd(centred, full_matrices=False)
    explained = np.cumsum(singular**2) / (singular**2).sum()
    rotated = centred @ basis.T
    for head in heads:
        tail = np.linalg.norm(rotated[:, head:], axis=1)
        shares = []
        for query in queries:
            turned = basis @ query  # the mean's share, q . mean, is common to all rows
            partial = rotated[:, :head] @ turned[:head]
            spread = float(np.linalg.norm(turned[head:])) * tail
            shares.append(float((partial + spread >= kth_largest(partial - spread, K)).mean()))
        print(
            f"PCA head of {head} ({explained[head - 1]:.0%} of the variance): share of rows kept, {_summary(shares, 2)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, required=True, help="the --home that `agentrag eval` built the set in")
    parser.add_argument("--data", type=Path, required=True, help="the dev set's folder")
    args = parser.parse_args()
    vectors, queries = _load(args.home, args.data)
    print(f"{len(vectors)} vectors, {len(queries)} queries, k = {K}", file=sys.stderr)
    code_bands(vectors, queries)
    clusters(vectors, queries)
    pca_head(vectors, queries)


if __name__ == "__main__":
    main()
