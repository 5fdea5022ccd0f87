"""First search after open, step by step: where its time and the process's memory go (issue 14).

    python benchmarks/first_search.py --kb WORK/n100000/home --data ../shared/data --rounds 3
    python benchmarks/first_search.py --kb MAIN_COPY --before /work/main/src --kb-after COPY --after src --more

`--kb` is a home built by `benchmarks/scale.py` (knowledge base `scale`); the queries and their vectors are
scale.py's. Each run is a fresh interpreter (`PYTHONPATH=<src>` with --before/--after, alternating round by
round). Cold runs first drop the page cache of every file of the knowledge base (`posix_fadvise(DONTNEED)` per
file, as `view_cold.py` does: no global drop, which needs root); warm runs read every file once first. Then, in
the child, each step is timed on its own (wall and CPU seconds, major page faults, bytes read from storage,
and the resident memory after it, split into anonymous and file-backed):

    open        KnowledgeBase.open (SQLite connections, schema check)
    bm25 open   the BM25 index brought to the database's generation (saved segment mapped, term dictionary)
    dense open  the dense index (the usearch view, or the mapped exact matrix and its int8 codes)
    bm25 query  the first BM25 search (k=50)
    dense query the first dense search (k=50)
    feedback    the feedback: its vectors read and a second dense search (up to 2026-12-04), or the first pass's
                candidates' vectors read and ranked (since)
    chunks      de-duplication of the fused candidates and the chunks of the first ten distinct ones
    hybrid      one whole hybrid search (everything is open now)
    200 more    the 200 scale queries, hybrid, one after the other

With `--resave` each version first saves the knowledge base's BM25 segment again, as the end of a build writes it
(loaded, its postings taken whole, the term frequencies as uint16 as every build before uint8 counts made them,
then `Segment.of` and `save` of that version): the files as they lie in the page cache
right after a build, which decides how much of them a scattered read maps (store/mapping.py).

With `--whole` the first search is timed as scale.py does (open, then one `KnowledgeBase.search`), no steps.
File-backed resident memory is listed per file of the knowledge base (/proc/self/smaps): clean pages of mapped
files, which the kernel drops under memory pressure, but which count in RSS once touched.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIRST = ("bm25 open", "dense open", "bm25 query", "dense query", "feedback", "chunks")  # one hybrid search


def _files(home: Path) -> list[Path]:
    return [p for p in (home / "kbs" / "scale").rglob("*") if p.is_file()]


def _evict(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)  # dirty pages (a file just written) cannot be dropped
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _warm(path: Path) -> None:
    with path.open("rb") as f:
        while f.read(1 << 24):
            pass


def _status() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def _read_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("read_bytes:"):
            return int(line.split()[1])
    return 0


def _mapped(folder: Path) -> dict[str, float]:
    """Resident MB of each mapped file under `folder` (several mappings of one file summed)."""
    out: dict[str, float] = {}
    current = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            current = head[5] if len(head) >= 6 and head[5].startswith(str(folder)) else None
        elif current and line.startswith("Rss:"):
            name = str(Path(current).relative_to(folder))
            out[name] = out.get(name, 0.0) + int(head[1]) / 1024
    return {k: round(v, 1) for k, v in sorted(out.items()) if v >= 0.1}


class Steps:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def run(self, name: str, call: Any) -> Any:
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
        read, cpu, wall = _read_bytes(), time.process_time(), time.perf_counter()
        result = call()
        row = {
            "step": name,
            "wall_s": round(time.perf_counter() - wall, 4),
            "cpu_s": round(time.process_time() - cpu, 4),
            "major_faults": resource.getrusage(resource.RUSAGE_SELF).ru_majflt - faults,
            "read_mb": round((_read_bytes() - read) / 2**20, 1),
            **_status(),
        }
        self.rows.append(row)
        return result


def child(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    import numpy as np
    import scale

    from agentrag.kb import KnowledgeBase, shared_embedder
    from agentrag.text.tokenize import tokenize_query
    from agentrag.vocab import Channel

    queries = scale._queries(args.data)
    vectors = scale.embed(queries, scale._projection())
    all_tokens = [tokenize_query(q) for q in queries]  # jieba's dictionary is loaded here, not in a step
    settings = scale.settings_for(args.kb, "http://127.0.0.1:9/v1")  # query vectors given: never called
    embedder = shared_embedder(settings.embedder)  # the openai SDK's import (0.5-2 s) is not the store's
    steps = Steps()
    steps.run("imports", lambda: None)  # the baseline: interpreter, numpy, jieba, agentrag, the embedder
    kb = steps.run(
        "open",
        lambda: KnowledgeBase.open("scale", settings=settings, create=False, embedder=embedder, search_cache=False),
    )
    if args.whole:
        steps.run("first search", lambda: kb.search(queries[0], 10, Channel.HYBRID, query_vector=vectors[0]))
    else:
        kb._bind()
        store: Any = kb.store
        retriever = kb.retriever
        tokens = all_tokens[0]

        def bm25_open() -> None:
            if store._text_index is not None:
                with store._read_lock:
                    store._text_index.index(store._read_con)

        def dense_open() -> None:
            with store._lock:
                store._derived.dense()

        steps.run("bm25 open", bm25_open)
        if args.bm25_only:
            steps.run("bm25 query", lambda: store.search_bm25(tokens, 50))
            if args.more:
                steps.run("200 more", lambda: [store.search_bm25(t, 50) for t in all_tokens])
            return {"steps": steps.rows, "mapped_mb": _mapped(kb.path.resolve()), "load": os.getloadavg()}
        steps.run("dense open", dense_open)
        bm25 = steps.run("bm25 query", lambda: store.search_bm25(tokens, 50))
        dense = steps.run("dense query", lambda: store.search_dense(vectors[0], 50))
        channels = {"bm25": bm25, "dense": dense}
        first = retriever.fuse(channels)
        # Since 2026-12-04 the feedback takes the first pass's channels (it ranks their candidates); before, the fusion.
        taken = channels if "dict" in str(inspect.signature(retriever._feedback).parameters["first_pass"]) else first
        steps.run("feedback", lambda: retriever._feedback(vectors[0], taken, 50, None))
        steps.run("chunks", lambda: _distinct_chunks(retriever, store, first))
        steps.run("hybrid", lambda: kb.search(queries[0], 10, Channel.HYBRID, query_vector=vectors[0]))
    if args.more:

        def more() -> None:
            for q, v in zip(queries, vectors, strict=True):
                kb.search(q, 10, Channel.HYBRID, query_vector=v)

        steps.run("200 more", more)
    out = {"steps": steps.rows, "mapped_mb": _mapped(kb.path.resolve()), "load": os.getloadavg()}
    kb.close()
    del np
    return out


def _one(src: Path | None, kb: Path, args: argparse.Namespace, cold: bool) -> dict[str, Any]:
    for path in _files(kb):
        (_evict if cold else _warm)(path)
    cmd = [sys.executable, __file__, "--child", "--kb", str(kb.resolve()), "--data", str(args.data)]
    cmd += ["--whole"] if args.whole else []
    cmd += ["--more"] if args.more else []
    cmd += ["--bm25-only"] if args.bm25_only else []
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def resave(kb: Path) -> None:
    """Save the BM25 segment of `kb`'s knowledge base again with the code on this interpreter's path."""
    import numpy as np

    from agentrag.store.bm25 import Segment

    for folder in sorted((kb / "kbs" / "scale").glob("bm25-g*")):
        if not folder.is_dir() or ".tmp" in folder.name:  # a save in progress
            continue
        saved, generation = Segment.load(folder)
        arrays = {name: np.array(getattr(saved, name)) for name in ("keys", "lengths", "indptr", "rows")}
        # As the builds before uint8 counts made them: each version's `Segment.of` keeps or narrows these.
        arrays |= {name: np.array(getattr(saved, name), dtype=np.uint16) for name in ("tf_title", "tf_body")}
        terms = {term: t for t, term in enumerate(saved.terms)}
        del saved
        Segment.of(terms=terms, **arrays).save(folder, generation)


def _resave(src: Path | None, kb: Path) -> None:
    env = {**os.environ, **({"PYTHONPATH": str(src.resolve())} if src is not None else {})}
    subprocess.run([sys.executable, __file__, "--resave-child", "--kb", str(kb.resolve())], check=True, env=env)


def _print(label: str, result: dict[str, Any]) -> None:
    load = " ".join(f"{x:.1f}" for x in result["load"])
    print(f"== {label} (load {load})")
    print(f"{'step':<12} {'wall s':>8} {'cpu s':>7} {'majflt':>7} {'read MB':>8} {'RSS':>7} {'anon':>7} {'file':>7}")
    for r in result["steps"]:
        print(
            f"{r['step']:<12} {r['wall_s']:>8.3f} {r['cpu_s']:>7.3f} {r['major_faults']:>7} {r['read_mb']:>8.1f} "
            f"{r['VmRSS']:>7.1f} {r['RssAnon']:>7.1f} {r['RssFile']:>7.1f}"
        )
    print("mapped, resident MB: " + ", ".join(f"{k} {v}" for k, v in result["mapped_mb"].items()))
    steps = {r["step"]: r for r in result["steps"]}
    first = [steps[name] for name in FIRST if name in steps]
    if first:
        print(
            f"first search (the steps {FIRST[0]} to {FIRST[-1]}): {sum(r['wall_s'] for r in first):.3f} s wall, "
            f"{sum(r['cpu_s'] for r in first):.3f} s CPU, {sum(r['read_mb'] for r in first):.1f} MB read; "
            f"RSS after it {first[-1]['VmRSS']} MB (anon {first[-1]['RssAnon']}, file {first[-1]['RssFile']})"
        )


def _distinct_chunks(retriever: Any, store: Any, first: list[tuple[int, float]]) -> Any:
    """The chunks of the first 10 distinct hits, as the version of the code at hand reads them (since 2026-12-03
    de-duplication reads them itself; before, it asked for fingerprints and the chunks were read after)."""
    head = getattr(retriever, "_distinct_head", None)
    if head is not None:
        return head(first, 10)[1]
    return store.get_chunks([k for k, _ in retriever._dedupe(first, 10)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, required=True, help="a home built by benchmarks/scale.py")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--before", type=Path, help="src folder of the first version (default: this interpreter's)")
    parser.add_argument("--after", type=Path, help="src folder of the second version")
    parser.add_argument(
        "--kb-after", type=Path, help="a copy of --kb for the second version (when they save different formats)"
    )
    parser.add_argument("--warm-only", action="store_true", help="skip the cold runs")
    parser.add_argument("--cold-only", action="store_true", help="skip the warm runs")
    parser.add_argument("--whole", action="store_true", help="time the first search whole, as scale.py does")
    parser.add_argument("--more", action="store_true", help="then 200 more hybrid searches (RSS after them)")
    parser.add_argument("--json", type=Path, help="write every run's result here")
    parser.add_argument("--bm25-only", action="store_true", help="the BM25 steps only (200 more: BM25 searches)")
    parser.add_argument("--resave", action="store_true", help="save the BM25 segment again first (see above)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--resave-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resave_child:
        resave(args.kb)
        return
    if args.child:
        print(json.dumps(child(args)))
        return
    versions: list[tuple[str, Path | None, Path]] = [("before" if args.after else "this", args.before, args.kb)]
    if args.after:
        versions.append(("after", args.after, args.kb_after or args.kb))
    skip = {"cold"} if args.warm_only else {"warm"} if args.cold_only else set()
    temperatures = [t for t in ("cold", "warm") if t not in skip]
    results = []
    for round_ in range(1, args.rounds + 1):
        order = versions if round_ % 2 else versions[::-1]  # the order flips every round
        for temperature in temperatures:
            for name, src, kb in order:
                if args.resave:
                    _resave(src, kb)
                result = _one(src, kb, args, temperature == "cold")
                label = f"round {round_}, {name} ({src or 'default'}), {temperature}"
                _print(label, result)
                results.append({"round": round_, "version": name, "temperature": temperature, **result})
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
