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

sys.path.insert(0, str(Path(__file__).resolve().parent))  # scale.py beside this file

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


def _overlap(top_want: list[tuple[int, float]], got: list[int]) -> float:
    return len({key for key, _ in top_want} & set(got)) / len(top_want) if top_want else float(not got)


def peers(path: Path, queries: list[str], k: int) -> dict[str, object]:
    """tantivy and bm25s over the same FTS5 tokens (title counted twice in bm25s; boosted 2x in tantivy):
    top-k agreement with FTS5 and CPU ms per query, the measurement the index's design was chosen by."""
    import tempfile

    import bm25s
    import numpy as np
    import tantivy
    from scale import _tantivy_search

    from agentrag.store.bm25 import fts5_tokens
    from agentrag.store.sqlite.text_index import query_terms

    store = SQLiteStore(path, load_settings().store)
    con = store._read_con
    rows = [
        (int(r), fts5_tokens(t), fts5_tokens(b)) for r, t, b in con.execute("SELECT rowid, title, body FROM chunks_fts")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field("key", stored=True, fast=True)
        builder.add_text_field("title", tokenizer_name="ws", index_option="freq")
        builder.add_text_field("body", tokenizer_name="ws", index_option="freq")
        schema = builder.build()
        index = tantivy.Index(schema, path=tmp)
        index.register_tokenizer("ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
        writer = index.writer(heap_size=128_000_000, num_threads=1)
        for key, title, body in rows:
            writer.add_document(tantivy.Document(key=key, title=" ".join(title), body=" ".join(body)))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        searcher = index.searcher()
        retriever = bm25s.BM25(method="robertson", k1=1.2, b=0.75)
        retriever.index([t + t + b for _, t, b in rows], show_progress=False)
        keys = np.asarray([key for key, _, _ in rows], dtype=np.int64)
        agree: dict[str, list[float]] = {"tantivy": [], "bm25s": []}
        cpu: dict[str, list[float]] = {"tantivy": [], "bm25s": []}
        for query in queries:
            terms = query_terms(tokenize_query(query))
            if not terms:
                continue
            want = search_fts5(con, tokenize_query(query), k, None, 2.0)
            c0 = time.process_time()
            hits = _tantivy_search((index, searcher, schema), terms, k)
            c1 = time.process_time()
            got_t = [searcher.doc(address)["key"][0] for _, address in hits]
            known = [t for t in terms if t in retriever.vocab_dict]
            c2 = time.process_time()
            ids = retriever.retrieve([known], k=k, show_progress=False, n_threads=1)[0][0].tolist() if known else []
            c3 = time.process_time()
            cpu["tantivy"].append((c1 - c0) * 1000)
            cpu["bm25s"].append((c3 - c2) * 1000)
            agree["tantivy"].append(_overlap(want, got_t))
            agree["bm25s"].append(_overlap(want, [int(keys[i]) for i in ids]))
    store.close()
    return {
        name: {"agreement": round(sum(a) / len(a), 4), "cpu_ms_p50_p95": _ms(cpu[name])} for name, a in agree.items()
    }


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
    parser.add_argument("--peers", action="store_true", help="also tantivy and bm25s on the same tokens")
    parser.add_argument("--depth", type=int, default=50, help="hits asked of each (the retriever's candidates)")
    args = parser.parse_args()
    settings = load_settings(args.home)
    for data in args.sets:
        queries = [json.loads(line)["text"] for line in (data / "queries.jsonl").open(encoding="utf-8")]
        row = measure(_kb(args.home, data.name), queries, args.k, args.depth, settings.retrieval.title_weight)
        if args.peers:
            row["peers"] = peers(_kb(args.home, data.name), queries, args.k)
        print(json.dumps({"set": data.name, **row}, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
