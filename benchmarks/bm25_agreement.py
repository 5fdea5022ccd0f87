"""The inverted BM25 index against FTS5's own `bm25()` on the dev sets' knowledge bases: top-k agreement and
per-query time, side by side in one process, on the same query tokens.

    python benchmarks/bm25_agreement.py --home /work/bench/i14 ../shared/data/cmrc2018 ../shared/data/hotpotqa

Each set's knowledge base is the one `agentrag eval` built in --home (kbs/eval-<set>-*); it is opened, not
changed, except that the index is written beside it on the first search. Agreement is |top-k(index) ∩
top-k(FTS5)| / |top-k(FTS5)|, averaged over queries; ties at the k-th score count as agreeing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from agentrag.settings import load_settings
from agentrag.store.sqlite import SQLiteStore
from agentrag.store.sqlite.text_index import search_fts5
from agentrag.text.tokenize import tokenize_query


def _kb(home: Path, name: str) -> Path:
    found = sorted((home / "kbs").glob(f"eval-{name}-*/store.sqlite"))
    if not found:
        sys.exit(f"{home}/kbs: no eval-{name}-* knowledge base; run `agentrag eval --home {home} <set>` first")
    return found[-1]


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"{statistics.median(ordered):.3f} / {ordered[int(0.95 * (len(ordered) - 1))]:.3f}"


def measure(path: Path, queries: list[str], k: int, depth: int, title_weight: float) -> dict[str, object]:
    store = SQLiteStore(path, load_settings().store)
    opened = time.perf_counter()
    store.search_bm25(["warm"], 1)
    first = time.perf_counter() - opened
    agree: list[float] = []
    fts_ms: list[float] = []
    index_ms: list[float] = []
    for query in queries:
        tokens = tokenize_query(query)
        if not tokens:
            continue
        t0 = time.perf_counter()
        want = search_fts5(store._read_con, tokens, depth, None, title_weight)
        t1 = time.perf_counter()
        got = store.search_bm25(tokens, depth, None, title_weight)
        t2 = time.perf_counter()
        fts_ms.append((t1 - t0) * 1000)
        index_ms.append((t2 - t1) * 1000)
        top_want = want[:k]
        if not top_want:
            agree.append(1.0 if not got else 0.0)
            continue
        cut = top_want[-1][1]
        got_keys = {key for key, score in got if score >= cut - 1e-9 * abs(cut)}
        agree.append(len({key for key, _ in top_want} & got_keys) / len(top_want))
    store.close()
    return {
        "queries": len(agree),
        "agreement": sum(agree) / len(agree),
        "fts5_ms_p50_p95": _ms(fts_ms),
        "index_ms_p50_p95": _ms(index_ms),
        "first_search_s": round(first, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", type=Path, help="benchmark-format dataset folders")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--depth", type=int, default=50, help="hits asked of each (the retriever's candidates)")
    args = parser.parse_args()
    settings = load_settings(args.home)
    for data in args.sets:
        queries = [json.loads(line)["text"] for line in (data / "queries.jsonl").open(encoding="utf-8")]
        row = measure(_kb(args.home, data.name), queries, args.k, args.depth, settings.retrieval.title_weight)
        print(json.dumps({"set": data.name, **row}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
