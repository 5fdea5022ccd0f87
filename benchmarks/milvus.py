"""The Milvus backend beside the embedded SQLite store, measured side by side in one run.

    python benchmarks/milvus.py ../shared/data --sets hotpotqa,musique,cmrc2018 --limit 300 --scale 10000,100000

1. Quality: each set's retrieval eval (`run_eval`, the same code as `agentrag eval`) on SQLite, then the same
   knowledge base copied into Milvus (`migrate.copy_store`: the stored vectors, nothing embedded again) and the
   eval again on Milvus. R@10, nDCG@10, AllR@10 and the in-store latency (p50, p95; query embedding excluded)
   of the hybrid channel, side by side.
2. Scale: N synthetic chunks (384-d unit vectors from a seeded normal distribution; 40-word texts drawn from a
   Zipf(1.2) distribution over 20k synthetic words; 100 chunks per document) inserted into each backend (chunks/s),
   then 200 hybrid searches (BM25 on 3 words + dense on a random unit vector, top 100 each) timed: p50/p95.
   One warm-up search first (it builds SQLite's ANN index past 20k chunks), timed and reported on its own.

The engine is a real Milvus Lite 2.5 started from `.venv-milvus` (tests/milvus_engine.py) unless --uri names
a Milvus server. Writes the Markdown (default benchmarks/milvus.md, which `benchmarks/run.py` appends to
BENCHMARKS.md) and the raw JSON beside it in --out.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from agentrag.eval.data import load_dataset  # noqa: E402
from agentrag.eval.runner import eval_kb_name, run_eval  # noqa: E402
from agentrag.kb import shared_embedder  # noqa: E402
from agentrag.migrate import copy_store, open_backend  # noqa: E402
from agentrag.settings import Settings, StoreSettings, load_settings  # noqa: E402
from agentrag.store.base import IndexedChunk, Store, make_store  # noqa: E402
from agentrag.types import Chunk, Document  # noqa: E402
from agentrag.vocab import StoreBackend  # noqa: E402

METRICS = ("recall@10", "ndcg@10", "all_recall@10")


def with_backend(settings: Settings, backend: StoreBackend) -> Settings:
    return settings.model_copy(update={"store": settings.store.model_copy(update={"backend": backend})})


def quality(data: Path, sets: list[str], limit: int | None, settings: Settings) -> list[dict[str, Any]]:
    embedder = shared_embedder(settings.embedder)
    rows = []
    for name in sets:
        sqlite = with_backend(settings, StoreBackend.SQLITE)
        milvus = with_backend(settings, StoreBackend.MILVUS)
        first = run_eval(data / name, sqlite, embedder, limit=limit).result
        dataset = load_dataset(data / name, limit)
        src = open_backend(sqlite, first["details"]["knowledge_base"], StoreBackend.SQLITE)
        dst = open_backend(milvus, eval_kb_name(dataset, milvus, embedder.name), StoreBackend.MILVUS)
        started = time.perf_counter()
        copied = copy_store(src, dst, workers=8)
        copy_s = time.perf_counter() - started
        src.close()
        dst.close()
        second = run_eval(data / name, milvus, embedder, limit=limit).result
        assert second["details"]["ingest_reused"], "the Milvus run must use the copied knowledge base"
        row: dict[str, Any] = {"set": name, "queries": first["queries"], "chunks": first["details"]["chunks"]}
        row["copy"] = {"documents": copied.documents, "chunks": copied.chunks, "seconds": round(copy_s, 1)}
        for label, result in (("sqlite", first), ("milvus", second)):
            hybrid = result["details"]["channels"]["hybrid"]
            row[label] = {m: hybrid[m] for m in METRICS} | {
                "p50": hybrid["latency_ms_p50"],
                "p95": hybrid["latency_ms_p95"],
            }
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def synthetic(n: int, dim: int = 384, seed: int = 0) -> list[tuple[Document, list[IndexedChunk]]]:
    rng = np.random.default_rng(seed)
    words = np.minimum(rng.zipf(1.2, size=(n, 40)), 20000)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    docs = []
    for d in range(n // 100):
        doc = Document(doc_id=f"s{d}", source=f"/syn/{d}.txt", title=f"synthetic {d}", content_hash=f"h{d}")
        chunks = []
        for p in range(100):
            i = d * 100 + p
            tokens = [f"w{w}" for w in words[i]]
            chunk = Chunk(chunk_id=f"s{d}#{p}", doc_id=doc.doc_id, position=p, text=" ".join(tokens))
            chunks.append(IndexedChunk(chunk, vectors[i], ["synthetic", str(d)], tokens))
        docs.append((doc, chunks))
    return docs


def scale_one(store: Store, docs: list[tuple[Document, list[IndexedChunk]]], seed: int = 1) -> dict[str, float]:
    store.bind_embedder("synthetic", 384)
    started = time.perf_counter()
    for doc, chunks in docs:
        store.upsert_document(doc, "syn", chunks)
    store.optimize()
    insert_s = time.perf_counter() - started
    rng = np.random.default_rng(seed)
    queries = [
        ([f"w{w}" for w in np.minimum(rng.zipf(1.2, size=3), 20000)], rng.standard_normal(384).astype(np.float32))
        for _ in range(201)
    ]

    def hybrid(tokens: list[str], vector: np.ndarray) -> float:
        t = time.perf_counter()
        store.search_bm25(tokens, 100)
        store.search_dense(vector / np.linalg.norm(vector), 100)
        return (time.perf_counter() - t) * 1000

    warm = hybrid(*queries[0])
    times = sorted(hybrid(*q) for q in queries[1:])
    return {
        "chunks": sum(len(c) for _, c in docs),
        "insert_s": round(insert_s, 1),
        "chunks_per_s": round(sum(len(c) for _, c in docs) / insert_s),
        "first_search_ms": round(warm, 1),
        "p50": round(statistics.median(times), 2),
        "p95": round(float(np.percentile(times, 95)), 2),
    }


def scale(sizes: list[int], out: Path, uri: str) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        docs = synthetic(n)
        row: dict[str, Any] = {"n": n}
        for backend in (StoreBackend.SQLITE, StoreBackend.MILVUS):
            settings = StoreSettings(backend=backend, uri=uri, collection_prefix=f"bench{n}")
            store = make_store(settings, out / "scale" / f"{backend.value}-{n}-{time.time_ns()}")
            row[backend.value] = scale_one(store, docs)
            store.close()
            print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def markdown(args: argparse.Namespace, quality_rows: list[dict[str, Any]], scale_rows: list[dict[str, Any]]) -> str:
    lines = [
        "## Milvus backend beside SQLite (issue 12)",
        "",
        "Commands (in this order): " + "; ".join(f"`{c}`" for c in args.commands) + f". Machine: {platform.machine()}, "
        f"{__import__('os').cpu_count()} cores shared with other work (load average above 20 during the run: "
        "latencies are noisy; both backends were measured one after the other in the same run). Engine: "
        f"{args.engine}. Dense index: FLAT (exact) on Milvus; SQLite exact below 20k chunks, usearch HNSW above.",
        "",
    ]
    if quality_rows:
        lines += [
            "Hybrid retrieval, the same knowledge base (SQLite's, copied into Milvus with its vectors)"
            + (f"; first {args.limit} queries of each set" if args.limit else "")
            + ". Latency: per query inside the store, query embedding excluded (ms).",
            "",
            "| set | queries | R@10 SQLite | R@10 Milvus | nDCG@10 SQLite | nDCG@10 Milvus | AllR@10 SQLite | "
            "AllR@10 Milvus | p50 SQLite | p50 Milvus | p95 SQLite | p95 Milvus |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in quality_rows:
            s, m = r["sqlite"], r["milvus"]
            cells = [r["set"], r["queries"]]
            for key in (*METRICS, "p50", "p95"):
                cells += [s[key], m[key]]
            lines.append("| " + " | ".join(str(c) for c in cells) + " |")
        lines.append("")
    if scale_rows:
        lines += [
            "Synthetic chunks (see the script's docstring for how they are made): insert throughput, and one hybrid "
            "search (BM25 top 100 + dense top 100, no fusion) in ms over 200 queries after one warm-up.",
            "",
            "| chunks | backend | insert chunks/s | first search ms | hybrid p50 ms | hybrid p95 ms |",
            "|---|---|---|---|---|---|",
        ]
        for r in scale_rows:
            for backend in ("sqlite", "milvus"):
                b = r[backend]
                lines.append(
                    f"| {r['n']:,} | {backend} | {b['chunks_per_s']:,} | {b['first_search_ms']} | {b['p50']} | "
                    f"{b['p95']} |"
                )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="folder holding the benchmark sets (../shared/data)")
    parser.add_argument("--sets", default="hotpotqa,musique,cmrc2018")
    parser.add_argument("--limit", type=int, default=None, help="first N queries of each set")
    parser.add_argument("--scale", default="10000,100000", help="synthetic sizes ('' for none)")
    parser.add_argument("--uri", default=None, help="a Milvus server to measure instead of a local Milvus Lite 2.5")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "milvus")
    parser.add_argument("--write", type=Path, default=ROOT / "benchmarks" / "milvus.md")
    parser.add_argument(
        "--merge", type=Path, nargs="*", default=[], help="add the rows of other runs' milvus.json (run side by side)"
    )
    parser.add_argument(
        "--append", action="store_true", help="keep the rows of an earlier run in --out (a long benchmark in steps)"
    )
    args = parser.parse_args()
    args.commands = [f"python benchmarks/milvus.py {shlex.join(sys.argv[1:])}"]
    from tests.milvus_engine import milvus_engine

    args.out.mkdir(parents=True, exist_ok=True)
    engine = nullcontext(args.uri) if args.uri else milvus_engine(args.out / "engine")
    args.engine = f"Milvus server {args.uri}" if args.uri else "Milvus Lite 2.5.1 (gRPC on localhost)"
    with engine as uri:
        settings = load_settings(args.out / "home")
        settings = settings.model_copy(update={"store": settings.store.model_copy(update={"uri": uri})})
        sets = [s for s in args.sets.split(",") if s]
        quality_rows: list[dict[str, Any]] = []
        scale_rows: list[dict[str, Any]] = []
        if args.append and (args.out / "milvus.json").exists():
            earlier = json.loads((args.out / "milvus.json").read_text())
            quality_rows, scale_rows = earlier["quality"], earlier["scale"]
            args.commands = earlier.get("commands", []) + args.commands
        for path in args.merge:
            other = json.loads(path.read_text())
            quality_rows, scale_rows = quality_rows + other["quality"], scale_rows + other["scale"]
            args.commands += other.get("commands", [])
        for name in sets:  # written after each step, so a long run leaves what it has measured
            quality_rows += quality(args.data, [name], args.limit, settings)
            save(args, quality_rows, scale_rows)
        for n in [int(n) for n in args.scale.split(",") if n]:
            scale_rows += scale([n], args.out, uri)
            save(args, quality_rows, scale_rows)
        save(args, quality_rows, scale_rows)
    print(f"wrote {args.write}")


def save(args: argparse.Namespace, quality_rows: list[dict[str, Any]], scale_rows: list[dict[str, Any]]) -> None:
    payload = {"quality": quality_rows, "scale": scale_rows, "commands": args.commands}
    (args.out / "milvus.json").write_text(json.dumps(payload, indent=2))
    args.write.write_text(markdown(args, quality_rows, scale_rows), encoding="utf-8")


if __name__ == "__main__":
    main()
