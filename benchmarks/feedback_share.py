"""How much of the first pass the feedback channel keeps, over an exact index: retrieval metrics per share.

    python benchmarks/feedback_share.py --home HOME --data ../shared/data/hotpotqa --shares 0.25,0.5,0.75,1.0

Below the ANN switch the hybrid search's feedback channel ranks the first pass's candidates (BM25's and dense's
lists) by the query moved toward its best hits, and keeps the best `FEEDBACK_KEPT` share of a channel's depth
(`agentrag.retrieve.hybrid`). This script searches every query of the set as `agentrag eval SET --task retrieval`
does (hybrid, k = 60, the query vector given, passages by first appearance, the eval's own metrics) once per share,
in one process, on the knowledge base that eval built under HOME (only read), and prints the eval's figures for
each share. The query vectors are embedded once and kept in --vectors (default: a file in the temp folder).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True, help="the eval's home (`agentrag eval SET --home HOME` built it)")
    parser.add_argument("--data", required=True, help="the dataset folder")
    parser.add_argument("--shares", default="0.25,0.5,0.75,1.0", help="comma-separated shares of the depth kept")
    parser.add_argument("--vectors", help="where the query vectors are kept (.npy)")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    from hybrid_same import open_eval_kb

    import agentrag.retrieve.hybrid as hybrid
    from agentrag.eval.data import load_dataset
    from agentrag.eval.metrics import retrieval_metrics
    from agentrag.vocab import Channel

    name = Path(args.data).name
    vectors_file = Path(args.vectors or Path(tempfile.gettempdir()) / f"agentrag-feedback-share-{name}.npy")
    kb, queries, vectors = open_eval_kb(args.home, args.data, None, vectors_file)
    dataset = load_dataset(args.data)
    shares = [float(share) for share in args.shares.split(",")]
    totals = {
        share: dict.fromkeys(("recall@5", "recall@10", "recall@20", "all_recall@10", "ndcg@10", "mrr@10"), 0.0)
        for share in shares
    }
    for query, text, vector in zip(dataset.queries, queries, np.asarray(vectors, dtype=np.float32), strict=True):
        for share in shares:
            hybrid.FEEDBACK_KEPT = share
            hits = kb.search(text, 60, Channel.HYBRID, query_vector=vector)
            for metric, value in retrieval_metrics([h.chunk.doc_id for h in hits], dataset.qrels[query.qid]).items():
                totals[share][metric] += value
    for share in shares:
        figures = " · ".join(f"{m} {v / len(queries):.4f}" for m, v in totals[share].items())
        print(f"{name} share {share}: {figures}")


if __name__ == "__main__":
    main()
