"""Search time at 10k, 100k and 1M chunks: agentrag's BM25, dense and hybrid beside tantivy, bm25s, numpy and
usearch on the same data, in one run.

    python benchmarks/scale.py --sizes 10000,100000 --data ../shared/data --work /tmp/scale --out benchmarks/scale.md

For each size the script writes a synthetic corpus (half English, half Chinese; words drawn with the word
frequencies of the dev sets' corpora: hotpotqa, musique and scifact for English, cmrc2018 segmented by jieba
for Chinese; one chunk per passage), starts a local `/v1/embeddings` endpoint (vectors: a fixed random
projection of hashed token counts, so a million passages embed in minutes), ingests the corpus through the
real path (`KnowledgeBase.ingest` of JSONL files, the openai embedder talking to that endpoint), then, in a
fresh process, opens the knowledge base and measures:

- open time, first search after open (a hybrid search: loads the BM25 and dense indexes), RSS, disk;
- per query, side by side (each query through every method in turn, so the machine's noise falls on all
  alike): agentrag BM25 (the inverted index), FTS5's own bm25() (what agentrag ranked with before), agentrag
  dense, agentrag hybrid (`KnowledgeBase.search` with the query vector given: query embedding excluded),
  tantivy and bm25s over the same FTS5 tokens, numpy exact and usearch HNSW over the same vectors. CPU time
  is the process's (every thread), wall time the caller's; p50 and p95 in ms.

Queries: the first 100 hotpotqa and the first 100 cmrc2018 questions. Existing corpora and knowledge bases in
--work are reused (delete the folder to rebuild).
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

DIM = 384
BUCKETS = 1 << 14
PER_FILE = 20_000
_HASH_TOKEN = re.compile(r"[\u4e00-\u9fff]|[^\W\u4e00-\u9fff]+")


# ---------------------------------------------------------------------- embeddings endpoint


def _projection() -> np.ndarray:
    return np.random.default_rng(20260101).standard_normal((BUCKETS, DIM)).astype(np.float32)


def embed(texts: list[str], projection: np.ndarray) -> np.ndarray:
    """Unit vectors: the sum of a fixed random row per hashed token (CJK characters and words)."""
    ids: list[int] = []
    starts: list[int] = []
    for text in texts:
        starts.append(len(ids))
        ids.extend(zlib.crc32(t.encode()) & (BUCKETS - 1) for t in _HASH_TOKEN.findall(text.lower()))
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    if ids:
        rows = projection[np.asarray(ids)]
        bounds = np.asarray([*starts, len(ids)])
        nonempty = np.flatnonzero(np.diff(bounds) > 0)
        out[nonempty] = np.add.reduceat(rows, bounds[nonempty], axis=0)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norms, 1e-9)


def _dumps(value: Any) -> bytes:
    """orjson when installed (it writes numpy floats ten times faster), else the standard library."""
    try:
        import orjson

        return orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY)
    except ImportError:
        return json.dumps(value, default=lambda v: v.tolist()).encode()


def _serve(port_out: Any) -> None:
    projection = _projection()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = embed(texts, projection)
            if body.get("encoding_format") == "base64":
                import base64

                items: list[Any] = [base64.b64encode(v.tobytes()).decode() for v in vectors]
            else:
                items = list(vectors)
            data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(items)]
            usage = {"prompt_tokens": 0, "total_tokens": 0}
            payload = _dumps({"object": "list", "data": data, "model": body.get("model"), "usage": usage})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_out.put(server.server_address[1])
    server.serve_forever()


def start_endpoint() -> tuple[mp.Process, str]:
    ctx = mp.get_context("spawn")
    port: Any = ctx.Queue()
    process = ctx.Process(target=_serve, args=(port,), daemon=True)
    process.start()
    return process, f"http://127.0.0.1:{port.get(timeout=60)}/v1"


def settings_for(home: Path, url: str) -> Any:
    from agentrag.settings import load_settings

    embedder = {"provider": "openai", "base_url": url, "model": "hash-projection", "dimension": DIM, "api_key": "local"}
    return load_settings(home, embedder=embedder)


# ---------------------------------------------------------------------- synthetic corpus


def _frequencies(data: Path) -> tuple[tuple[list[str], np.ndarray], tuple[list[str], np.ndarray]]:
    import jieba

    english: collections.Counter[str] = collections.Counter()
    for name in ("hotpotqa", "musique", "scifact"):
        for line in (data / name / "corpus.jsonl").open(encoding="utf-8"):
            record = json.loads(line)
            english.update(re.findall(r"[A-Za-z0-9][A-Za-z0-9'-]*", record["title"] + " " + record["text"]))
    chinese: collections.Counter[str] = collections.Counter()
    for line in (data / "cmrc2018" / "corpus.jsonl").open(encoding="utf-8"):
        record = json.loads(line)
        chinese.update(w for w in jieba.lcut(record["text"]) if w.strip())

    def table(counts: collections.Counter[str]) -> tuple[list[str], np.ndarray]:
        words, freq = zip(*counts.items(), strict=True)
        cdf = np.cumsum(np.asarray(freq, dtype=np.float64))
        return list(words), cdf / cdf[-1]

    return table(english), table(chinese)


def write_corpus(folder: Path, size: int, data: Path) -> None:
    if folder.exists() and len(list(folder.glob("part-*.jsonl"))) == -(-size // PER_FILE):
        return
    folder.mkdir(parents=True, exist_ok=True)
    (en_words, en_cdf), (zh_words, zh_cdf) = _frequencies(data)
    rng = np.random.default_rng(size)

    def draw(cdf: np.ndarray, n: int) -> np.ndarray:  # inverse-CDF sampling: O(n log V), not O(V), per passage
        return np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), len(cdf) - 1)

    for part, start in enumerate(range(0, size, PER_FILE)):
        lines = []
        for i in range(start, min(size, start + PER_FILE)):
            if i % 2 == 0:
                words = [en_words[j] for j in draw(en_cdf, int(rng.integers(40, 70)))]
                title, text = " ".join(words[:3]), " ".join(words[3:])[:470]
            else:
                words = [zh_words[j] for j in draw(zh_cdf, int(rng.integers(60, 110)))]
                title, text = "".join(words[:3]), "".join(words[3:])[:240]
            lines.append(json.dumps({"_id": f"p{i}", "title": title, "text": text}, ensure_ascii=False))
        (folder / f"part-{part:04d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def ingest(home: Path, corpus: Path, url: str) -> dict[str, float]:
    from agentrag.kb import KnowledgeBase

    kb = KnowledgeBase.open("scale", settings=settings_for(home, url), search_cache=False)
    if kb.stats().chunks:
        kb.close()
        return {}
    started = time.perf_counter()
    kb.ingest([corpus])
    seconds = time.perf_counter() - started
    chunks = kb.stats().chunks
    kb.close()
    return {"ingest_s": round(seconds, 1), "chunks": chunks, "chunks_per_s": round(chunks / seconds, 1)}


# ---------------------------------------------------------------------- measuring (a fresh process)


def _queries(data: Path) -> list[str]:
    out: list[str] = []
    for name in ("hotpotqa", "cmrc2018"):
        with (data / name / "queries.jsonl").open(encoding="utf-8") as f:
            out += [json.loads(line)["text"] for _, line in zip(range(100), f, strict=False)]
    return out


class Timer:
    """CPU (process, every thread) and wall milliseconds of each call, per method."""

    def __init__(self) -> None:
        self.cpu: dict[str, list[float]] = collections.defaultdict(list)
        self.wall: dict[str, list[float]] = collections.defaultdict(list)

    def run(self, name: str, call: Any) -> Any:
        c0, w0 = time.process_time(), time.perf_counter()
        result = call()
        self.cpu[name].append((time.process_time() - c0) * 1000)
        self.wall[name].append((time.perf_counter() - w0) * 1000)
        return result

    def summary(self) -> dict[str, dict[str, float]]:
        def pct(values: list[float], p: float) -> float:
            return round(float(np.percentile(values, p)), 3)

        return {
            name: {
                "cpu_p50": pct(self.cpu[name], 50),
                "cpu_p95": pct(self.cpu[name], 95),
                "wall_p50": pct(self.wall[name], 50),
                "wall_p95": pct(self.wall[name], 95),
            }
            for name in self.cpu
        }


def _rss_mb() -> float:
    """Resident memory of this process: psutil when installed, else /proc (Linux)."""
    try:
        import psutil
    except ImportError:
        status = Path("/proc/self/status").read_text()
        kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return round(kb / 1024, 1)
    return round(psutil.Process().memory_info().rss / 2**20, 1)


def _peers(con: Any, keys: list[int], vectors: np.ndarray, workdir: Path) -> dict[str, Any]:
    """tantivy, bm25s, numpy and usearch built over the same FTS5 tokens and the same vectors."""
    import bm25s
    import tantivy
    from usearch.index import Index

    from agentrag.store.bm25 import fts5_tokens

    rows = [
        (int(k), fts5_tokens(t), fts5_tokens(b)) for k, t, b in con.execute("SELECT rowid, title, body FROM chunks_fts")
    ]
    built: dict[str, Any] = {"build_s": {}}
    started = time.perf_counter()
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("key", stored=True, fast=True)
    builder.add_text_field("title", tokenizer_name="ws", index_option="freq")
    builder.add_text_field("body", tokenizer_name="ws", index_option="freq")
    schema = builder.build()
    index = tantivy.Index(schema, path=str(workdir))
    index.register_tokenizer("ws", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build())
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for key, title, body in rows:
        writer.add_document(tantivy.Document(key=key, title=" ".join(title), body=" ".join(body)))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    built["tantivy"] = (index, index.searcher(), schema)
    built["build_s"]["tantivy"] = round(time.perf_counter() - started, 1)

    started = time.perf_counter()
    retriever = bm25s.BM25(method="robertson", k1=1.2, b=0.75)
    retriever.index([t + t + b for _, t, b in rows], show_progress=False)  # the title counted twice
    built["bm25s"] = retriever
    built["bm25s_keys"] = np.asarray([k for k, _, _ in rows], dtype=np.int64)
    built["build_s"]["bm25s"] = round(time.perf_counter() - started, 1)

    started = time.perf_counter()
    ann = Index(ndim=vectors.shape[1], metric="ip", dtype="f32")
    ann.add(np.asarray(keys, dtype=np.int64), vectors, threads=1)
    built["usearch"] = ann
    built["build_s"]["usearch"] = round(time.perf_counter() - started, 1)
    return built


def _tantivy_search(built: Any, terms: list[str], k: int) -> list[Any]:
    import tantivy

    _, searcher, schema = built
    clauses = []
    for term in dict.fromkeys(terms):
        clauses.append((tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", term)))
        title = tantivy.Query.boost_query(tantivy.Query.term_query(schema, "title", term), 2.0)
        clauses.append((tantivy.Occur.Should, title))
    return searcher.search(tantivy.Query.boolean_query(clauses), k, count=False).hits


def measure(home: Path, data: Path, url: str, peers: bool) -> dict[str, Any]:
    from agentrag.kb import KnowledgeBase
    from agentrag.store.sqlite.text_index import query_terms, search_fts5
    from agentrag.text.tokenize import tokenize_query
    from agentrag.vocab import Channel

    projection = _projection()
    queries = _queries(data)
    vectors = embed(queries, projection)
    tokens = [tokenize_query(q) for q in queries]
    started = time.perf_counter()
    kb = KnowledgeBase.open("scale", settings=settings_for(home, url), create=False, search_cache=False)
    opened = time.perf_counter()
    kb.search(queries[0], 10, Channel.HYBRID, query_vector=vectors[0])
    first = time.perf_counter()
    out: dict[str, Any] = {"open_s": round(opened - started, 3), "first_search_s": round(first - opened, 3)}
    store: Any = kb.store
    timer = Timer()
    for rep in range(2):  # the first pass warms caches and is not kept
        for q, v, toks in zip(queries, vectors, tokens, strict=True):
            timer.run("agentrag BM25", lambda t=toks: store.search_bm25(t, 50))
            timer.run("FTS5 bm25()", lambda t=toks: search_fts5(store._read_con, t, 50, None, 2.0))
            timer.run("agentrag dense", lambda v=v: store.search_dense(v, 50))
            timer.run("agentrag hybrid", lambda q=q, v=v: kb.search(q, 10, Channel.HYBRID, query_vector=v))
        if rep == 0:
            timer = Timer()
    results = timer.summary()
    out["rss_mb"] = _rss_mb()
    out["disk_mb"] = round(sum(p.stat().st_size for p in kb.path.rglob("*") if p.is_file()) / 2**20, 1)
    out["chunks"] = kb.stats().chunks
    if peers:
        keys, matrix = store._derived.load_vectors()
        with tempfile.TemporaryDirectory() as tmp:
            built = _peers(store._read_con, keys.tolist(), matrix, Path(tmp))
            out["peer_build_s"] = built["build_s"]
            vocab = built["bm25s"].vocab_dict
            terms = [query_terms(t) or [] for t in tokens]
            known = [[x for x in t if x in vocab] or [next(iter(vocab))] for t in terms]
            ptimer = Timer()
            for rep in range(2):
                for v, t, kt in zip(vectors, terms, known, strict=True):
                    ptimer.run("tantivy", lambda t=t: _tantivy_search(built["tantivy"], t, 50))
                    ptimer.run(
                        "bm25s", lambda kt=kt: built["bm25s"].retrieve([kt], k=50, show_progress=False, n_threads=1)
                    )
                    ptimer.run("numpy exact", lambda v=v: np.argpartition(-(matrix @ v), 50)[:50])
                    ptimer.run("usearch HNSW", lambda v=v: built["usearch"].search(v, 50))
                if rep == 0:
                    ptimer = Timer()
            results.update(ptimer.summary())
    out["search_ms"] = results
    kb.close()
    return out


# ---------------------------------------------------------------------- report


METHODS = [
    "agentrag hybrid",
    "agentrag BM25",
    "FTS5 bm25()",
    "tantivy",
    "bm25s",
    "agentrag dense",
    "numpy exact",
    "usearch HNSW",
]


def report(rows: list[dict[str, Any]], command: str) -> str:
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    lines = [
        "## Scale: search time from 10k chunks up",
        "",
        f"`{command}` ({machine}; a shared machine, busy with other work during the run: compare within a",
        "row, where every method ran query by query side by side). Synthetic corpora, half English and half",
        "Chinese, word frequencies from the dev sets, one chunk per passage, ingested through the real path",
        "with a local embeddings endpoint (random projection of hashed token counts, 384-d). 200 queries",
        "(100 hotpotqa, 100 cmrc2018), k=50 per channel, hybrid returns 10; query embedding excluded.",
        "CPU ms (process, all threads) p50 / p95; wall p50 in brackets. One BLAS thread in the measuring process.",
        "",
        "| chunks | " + " | ".join(METHODS) + " |",
        "|---" * (len(METHODS) + 1) + "|",
    ]
    for row in rows:
        cells = []
        for method in METHODS:
            m = row["search_ms"].get(method)
            cells.append("-" if m is None else f"{m['cpu_p50']:.2f} / {m['cpu_p95']:.2f} ({m['wall_p50']:.2f})")
        lines.append(f"| {row['chunks']:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "| chunks | ingest chunks/s | open s | first search s | RSS MB (agentrag) | disk MB | peer build s |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        build = ", ".join(f"{k} {v}" for k, v in row.get("peer_build_s", {}).items())
        lines.append(
            f"| {row['chunks']:,} | {row.get('chunks_per_s', '-')} | {row['open_s']} | {row['first_search_s']} | "
            f"{row['rss_mb']} | {row['disk_mb']} | {build} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated chunk counts (1000000 for 1M)")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--work", type=Path, default=Path("bench-out/scale"))
    parser.add_argument("--out", type=Path, help="write the Markdown table here")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads of the measuring process")
    parser.add_argument("--no-peers", action="store_true", help="agentrag only")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # internal: one fresh measuring process
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.data, args.url, not args.no_peers)))
        return
    endpoint, url = start_endpoint()
    rows = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            root = args.work / f"n{size}"
            write_corpus(root / "corpus", size, args.data)
            built = ingest(root / "home", root / "corpus", url)
            record = root / "ingest.json"
            if built:
                record.write_text(json.dumps(built))
            built = json.loads(record.read_text()) if record.exists() else {}
            cmd = [sys.executable, __file__, "--measure", str(root / "home"), "--url", url, "--data", str(args.data)]
            # One BLAS thread in the measuring process, as agentrag sets it where the store starts (issue 14,
            # item 3): on this shared machine a multi-threaded scan of a small matrix spins for milliseconds.
            threads = str(args.blas_threads)
            env = {
                **os.environ,
                "OPENBLAS_NUM_THREADS": threads,
                "OMP_NUM_THREADS": threads,
                "MKL_NUM_THREADS": threads,
            }
            measured = subprocess.run(
                cmd + (["--no-peers"] if args.no_peers else []), capture_output=True, text=True, env=env
            )
            if measured.returncode != 0:  # the measuring process's own error, not only its exit status
                sys.stderr.write(measured.stderr)
                raise SystemExit(f"{root}: the measuring process failed (exit status {measured.returncode})")
            row = {**built, **json.loads(measured.stdout.strip().splitlines()[-1])}
            print(json.dumps(row), flush=True)
            rows.append(row)
    finally:
        endpoint.terminate()
    command = "python benchmarks/scale.py " + " ".join(sys.argv[1:])
    text = report(rows, command)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
