"""What the hybrid search's feedback pass costs: the same search with `retrieval.feedback_docs` at its default and at
0, side by side on a knowledge base built by `benchmarks/scale.py`.

    python benchmarks/feedback_cost.py --scale WORK/n10000/home --data ../shared/data --rounds 4

The feedback pass (the query vector moved toward its best first-pass hits and searched again, BENCHMARKS.md "How
the default retrieval was chosen", item 4) is a second dense search, the first pass's fusion that picks its
documents, their vectors and a third channel in the final fusion. One process opens the knowledge base; the
retriever's settings are switched between the two values for alternating slices of 25 queries (the order swapped
at each slice, so a busy spell of the machine falls on both). Each query is searched by BM25 and dense first, as
`agentrag eval` does, then by the timed hybrid search (k = 10, the query vector given: embedding excluded). Prints
the CPU ms p50 (process time) of each setting.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scale  # the scale benchmark's corpus, queries and vectors

from agentrag.kb import KnowledgeBase
from agentrag.vocab import Channel

SLICE = 25


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=Path, required=True, help="a knowledge base home built by scale.py")
    parser.add_argument("--data", type=Path, required=True, help="the shared data folder (for the queries)")
    parser.add_argument("--rounds", type=int, default=4, help="times over every query")
    args = parser.parse_args()
    queries = scale._queries(args.data)
    vectors = scale.embed(queries, scale._projection())
    settings = scale.settings_for(args.scale, "http://127.0.0.1:9/v1")  # no endpoint needed: vectors are given
    kb = KnowledgeBase.open("scale", settings=settings, create=False, search_cache=False)
    retriever = kb.retriever
    variants = {
        f"feedback_docs={retriever.settings.feedback_docs} (default)": retriever.settings,
        "feedback_docs=0": retriever.settings.model_copy(update={"feedback_docs": 0}),
    }
    for query, vector in zip(queries, vectors, strict=True):  # warm: the indexes loaded, the pages read
        kb.search(query, 10, Channel.HYBRID, query_vector=vector)
    spent: dict[str, list[float]] = {name: [] for name in variants}
    for rnd in range(args.rounds):
        for start in range(0, len(queries), SLICE):
            names = list(variants) if (rnd + start // SLICE) % 2 == 0 else list(variants)[::-1]
            for name in names:
                retriever.settings = variants[name]
                for query, vector in zip(queries[start : start + SLICE], vectors[start : start + SLICE], strict=True):
                    kb.search(query, 10, Channel.BM25)
                    kb.search(query, 10, Channel.DENSE, query_vector=vector)
                    started = time.process_time()
                    kb.search(query, 10, Channel.HYBRID, query_vector=vector)
                    spent[name].append(time.process_time() - started)
    for name, times in spent.items():
        print(f"{name}: hybrid CPU p50 {statistics.median(times) * 1000:.3f} ms over {len(times)} searches")


if __name__ == "__main__":
    main()
