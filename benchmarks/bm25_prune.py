"""BM25 from the inverted index with and without MaxScore pruning, side by side, at 100k and 1M rows.

    python benchmarks/bm25_prune.py --kb /work/hB/scale/n100000/home/kbs/scale --rows 1000000 \
        --work /tmp/bm25prune --before /work/main/src --after src --rounds 3

The 1M index is synthetic postings, not a knowledge base (a 1M knowledge base takes two hours to build):
the saved BM25 index of the scale benchmark's knowledge base (`benchmarks/scale.py`, whose corpus draws every
word of a passage independently with the dev sets' frequencies) gives, per language (ASCII or not), the
collection frequency of every term in titles and in bodies and the rows' title and body lengths; new rows
take a length pair from a random row of that language and draw their words with those frequencies. The same
files are written in both index formats (1: main's, 2: with per-term bounds), and each code (`--before`,
`--after`: a `src` directory each) is timed in its own fresh process on the same postings, the two
alternating round by round. Queries: the first 100 hotpotqa and 100 cmrc2018 questions through the query
tokenizer, k = 50, the default title weight; CPU ms per search (one BLAS thread), first pass not kept.
The script checks that both codes return the same keys, order and scores for every query.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np


def _load_arrays(directory: Path) -> dict[str, Any]:
    names = ("keys", "lengths", "indptr", "rows", "tf_title", "tf_body")
    arrays: dict[str, Any] = {n: np.load(directory / f"{n}.npy", mmap_mode="r") for n in names}
    arrays["vocabulary"] = (directory / "terms.txt").read_text(encoding="utf-8").split("\n")
    return arrays


def synthesise(source: Path, n_rows: int, seed: int = 20261201) -> dict[str, Any]:
    """Postings of `n_rows` rows drawn like the source's rows (see the module docstring)."""
    src = _load_arrays(source)
    vocab = src["vocabulary"]
    n_terms = len(vocab)
    term_of = np.repeat(np.arange(n_terms), np.diff(src["indptr"]))
    rows = np.asarray(src["rows"], dtype=np.int64)
    tt, tb = np.asarray(src["tf_title"], dtype=np.int64), np.asarray(src["tf_body"], dtype=np.int64)
    ascii_term = np.asarray([t.isascii() for t in vocab])
    n_src = len(src["keys"])
    title_len = np.bincount(rows, weights=tt, minlength=n_src).astype(np.int64)
    body_len = np.bincount(rows, weights=tb, minlength=n_src).astype(np.int64)
    english_row = np.bincount(rows, weights=ascii_term[term_of], minlength=n_src) * 2 > np.bincount(
        rows, minlength=n_src
    )
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, n_src, n_rows)
    pairs: list[np.ndarray] = []
    for field, lengths, tf in (("title", title_len, tt), ("body", body_len, tb)):
        for english in (True, False):
            lang_terms = ascii_term if english else ~ascii_term
            ctf = np.bincount(term_of, weights=tf * lang_terms[term_of], minlength=n_terms)
            new_rows = np.flatnonzero(english_row[pick] == english)
            counts = lengths[pick[new_rows]]
            if ctf.sum() == 0 or counts.sum() == 0:
                continue
            draws = rng.choice(n_terms, size=int(counts.sum()), p=ctf / ctf.sum())
            owner = np.repeat(new_rows, counts)
            code = draws.astype(np.int64) * n_rows + owner
            pairs.append(code * 2 + (field == "body"))
    codes = np.unique(np.concatenate(pairs), return_counts=True)
    return _postings(codes[0], codes[1], n_rows, vocab)


def _postings(codes: np.ndarray, counts: np.ndarray, n_rows: int, vocab: list[str]) -> dict[str, Any]:
    """Sorted (term, row, field) codes with their counts as index arrays: one posting per (term, row)."""
    body = (codes & 1).astype(bool)
    pair = codes >> 1
    starts = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    first = pair[starts]
    tf_title = np.zeros(len(starts), dtype=np.int64)
    tf_body = np.zeros(len(starts), dtype=np.int64)
    which = np.cumsum(np.r_[True, pair[1:] != pair[:-1]]) - 1
    np.add.at(tf_title, which[~body], counts[~body])
    np.add.at(tf_body, which[body], counts[body])
    terms, rows = first // n_rows, first % n_rows
    lengths = np.bincount(rows, weights=tf_title + tf_body, minlength=n_rows).astype(np.int32)
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(terms, minlength=len(vocab)), out=indptr[1:])
    return {
        "keys": np.arange(1, n_rows + 1, dtype=np.int64),
        "lengths": lengths,
        "indptr": indptr,
        "rows": rows.astype(np.int32),
        "tf_title": np.minimum(tf_title, 65535).astype(np.uint16),
        "tf_body": np.minimum(tf_body, 65535).astype(np.uint16),
        "vocabulary": vocab,
    }


def write_both(arrays: dict[str, Any], work: Path, bounds: np.ndarray, avgdl: float) -> None:
    """The same postings as format 1 (`v1/`) and format 2 (`v2/`, with the bounds) index directories."""
    for version in (1, 2):
        out = work / f"v{version}"
        out.mkdir(parents=True, exist_ok=True)
        for name in ("keys", "lengths", "indptr", "rows", "tf_title", "tf_body"):
            np.save(out / f"{name}.npy", np.asarray(arrays[name]), allow_pickle=False)
        (out / "terms.txt").write_text("\n".join(arrays["vocabulary"]), encoding="utf-8")
        meta: dict[str, Any] = {"format": f"agentrag-bm25/{version}", "generation": 1}
        meta.update(rows=len(arrays["keys"]), terms=len(arrays["vocabulary"]))
        if version == 2:
            np.save(out / "bounds.npy", bounds, allow_pickle=False)
            meta["bound_avgdl"] = avgdl
        (out / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _source_index(kb: Path, work: Path) -> Path:
    """The knowledge base's saved BM25 index, or one built from its `chunks_fts` into `work/source`."""
    import sqlite3

    from agentrag.store.bm25 import Segment

    saved = [p for p in kb.glob("bm25-g*") if p.is_dir()]
    if saved:
        return max(saved, key=lambda p: int(p.name[6:]))
    target = work / "source"
    if not (target / "meta.json").exists():
        con = sqlite3.connect(f"file:{kb / 'store.sqlite'}?mode=ro", uri=True)
        Segment.build(con.execute("SELECT rowid, title, body FROM chunks_fts")).save(target, 1)
        con.close()
    return target


def build(kb: Path, n_rows: int, work: Path) -> None:
    """Write `work/n<rows>/v1` and `v2`: the knowledge base's own index, or synthetic postings."""
    from agentrag.store.bm25 import term_bounds

    target = work / f"n{n_rows}"
    if (target / "v2" / "meta.json").exists():
        return
    started = time.perf_counter()
    source = _source_index(kb, work)
    arrays = _load_arrays(source) if n_rows <= 0 else synthesise(source, n_rows)
    lengths = np.asarray(arrays["lengths"])
    avgdl = float(lengths.mean(dtype=np.float64)) or 1.0
    args = (arrays["indptr"], arrays["rows"], arrays["tf_title"], arrays["tf_body"], lengths, avgdl)
    write_both(arrays, target, term_bounds(*args), avgdl)
    print(f"built {target} ({len(lengths):,} rows) in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def measure(directory: Path, data: Path) -> dict[str, Any]:
    """In this process's code: open the index in `directory`, search every query twice, time the second."""
    from agentrag.store import bm25
    from agentrag.store.sqlite.text_index import query_terms
    from agentrag.text.tokenize import tokenize_query

    index_class = getattr(bm25, "Bm25Index", None)
    if index_class is None:
        from agentrag.store.bm25_search import Bm25Index as index_class
    segment, _ = bm25.Segment.load(directory)
    index = index_class([segment, bm25.Segment.build([])], [None, None])
    queries: list[str] = []
    for name in ("hotpotqa", "cmrc2018"):
        with (data / name / "queries.jsonl").open(encoding="utf-8") as f:
            queries += [json.loads(line)["text"] for _, line in zip(range(100), f, strict=False)]
    terms = [query_terms(tokenize_query(q)) or [] for q in queries]
    cpu: list[float] = []
    results = []
    for rep in range(2):
        for t in terms:
            c0 = time.process_time()
            got = index.search(t, 50)
            if rep:
                cpu.append((time.process_time() - c0) * 1000)
                results.append(got)
    return {"p50": float(np.percentile(cpu, 50)), "p95": float(np.percentile(cpu, 95)), "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kb", type=Path, help="the scale benchmark's knowledge base folder (holds bm25-g*)")
    parser.add_argument("--rows", default="0,1000000", help="row counts; 0 = the knowledge base's own index")
    parser.add_argument("--work", type=Path, default=Path("bench-out/bm25prune"))
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    parser.add_argument("--before", type=Path, default=Path("/work/main/src"), help="src of the code before")
    parser.add_argument("--after", type=Path, default=Path("src"), help="src of the code after")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.data)))
        return
    sides = {"before": (args.before, 1), "after": (args.after, 2)}
    for n in [int(r) for r in args.rows.split(",")]:
        build(args.kb, n, args.work)
        target = args.work / f"n{n}"
        answers: dict[str, Any] = {}
        for r in range(args.rounds):
            for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
                src, version = sides[side]
                env = {**os.environ, "PYTHONPATH": str(src.resolve()), "OPENBLAS_NUM_THREADS": "1"}
                cmd = [sys.executable, __file__, "--measure", str(target / f"v{version}"), "--data", str(args.data)]
                out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout)
                answers.setdefault(side, out["results"])
                load = os.getloadavg()[0]
                print(f"| {n or 'kb'} | {r + 1} | {side} | {out['p50']:.3f} | {out['p95']:.3f} | {load:.1f} |")
        same = answers["before"] == answers["after"]
        print(f"rows {n or 'kb'}: identical keys, order and scores for all {len(answers['after'])} queries: {same}")


if __name__ == "__main__":
    main()
