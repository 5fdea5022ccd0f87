"""Run a benchmark-format dataset through the real product: build (or reuse) its knowledge base,
search every query through each channel, and report the DESIGN.md eval JSON.

The knowledge base lives in the data directory under a name derived from the corpus hash and every
setting that shapes the index, so a second run (or a run with other query-time settings) reuses it.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agentrag.embed.base import Embedder
from agentrag.eval.data import Dataset, load_dataset
from agentrag.eval.export import AnswerSample
from agentrag.eval.metrics import contains, exact_match, f1, recall_curve, retrieval_metrics
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings
from agentrag.types import Answer, IngestStatus
from agentrag.vocab import Channel, Confidence, Mode, Preset, StopReason

CHANNELS: tuple[Channel, ...] = (Channel.BM25, Channel.DENSE, Channel.HYBRID)
# Chunks requested per query: enough that 20 distinct passages survive the chunk-to-passage mapping.
CHUNK_DEPTH = 60
PASSAGE_DEPTH = 20
INGEST_RECORD = "eval-ingest.json"


@dataclass
class ChannelRun:
    rankings: dict[str, list[str]] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)


@dataclass
class EvalRun:
    dataset: Dataset
    kb_name: str
    result: dict[str, Any]
    channels: dict[str, ChannelRun]
    per_query: list[dict[str, Any]]
    samples: list[AnswerSample] = field(default_factory=list)  # --task answer: what `--export` writes


def eval_kb_name(dataset: Dataset, settings: Settings, embedder_name: str) -> str:
    key = f"{dataset.corpus_hash()}|{settings.index_fingerprint()}|{embedder_name}"
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in dataset.name)[:40] or "dataset"
    return f"eval-{safe}-{hashlib.sha1(key.encode()).hexdigest()[:12]}"


def _percentile(values: list[float], p: float) -> float | None:
    return float(np.percentile(np.asarray(values), p)) if values else None


def _mean_metrics(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = rows[0].keys() if rows else []
    return {k: float(statistics.fmean(r[k] for r in rows)) for k in keys}


def build_or_reuse(
    kb: KnowledgeBase, dataset: Dataset, progress: Callable[[IngestStatus], None] | None = None
) -> dict[str, Any]:
    """Ingest the corpus unless this knowledge base already holds all of it; returns the ingest block."""
    record_path = kb.path / INGEST_RECORD
    passages = dataset.corpus_size()
    if record_path.exists():
        record = json.loads(record_path.read_text())
        if record.get("complete") and kb.stats().documents >= record.get("documents", passages):
            return {**record, "reused": True}
    report = kb.ingest([dataset.corpus_path], progress=progress)
    stored = kb.stats()
    record = {
        "passages": passages,
        "documents": stored.documents,
        "chunks": stored.chunks,
        "seconds": round(report.seconds, 3),
        "passages_per_s": round((report.added + report.updated) / report.seconds, 3) if report.seconds else None,
        "failed": report.failed,
        "complete": report.failed == 0,
    }
    record_path.write_text(json.dumps(record, indent=2))
    return {**record, "reused": False}


def run_retrieval(
    kb: KnowledgeBase,
    dataset: Dataset,
    channels: tuple[Channel, ...] = CHANNELS,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, ChannelRun], dict[str, float | None]]:
    """Search every query through each channel; query embedding is timed apart from retrieval."""
    texts = [q.text for q in dataset.queries]
    t0 = time.perf_counter()
    vectors = kb.embedder.embed_queries(texts) if texts else np.zeros((0, kb.embedder.dim), dtype=np.float32)
    embed_s = time.perf_counter() - t0
    runs: dict[str, ChannelRun] = {c.value: ChannelRun() for c in channels}
    warm = dataset.queries[:3]
    for channel in channels:  # warm caches (SQLite pages, the dense matrix) like any long-running service
        for i, q in enumerate(warm):
            kb.search(q.text, CHUNK_DEPTH, channel, query_vector=vectors[i])
    for i, q in enumerate(dataset.queries):
        for channel in channels:
            started = time.perf_counter()
            hits = kb.search(q.text, CHUNK_DEPTH, channel, query_vector=vectors[i])
            runs[channel.value].latencies_ms.append((time.perf_counter() - started) * 1000)
            runs[channel.value].rankings[q.qid] = list(dict.fromkeys(h.chunk.doc_id for h in hits))[:PASSAGE_DEPTH]
        if progress is not None:
            progress(i + 1)
    embed_stats = {"query_embed_batch_qps": round(len(texts) / embed_s, 1) if embed_s > 0 else None}
    return runs, embed_stats


@dataclass
class AnswerRun:
    rankings: dict[str, list[str]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    samples: list[AnswerSample] = field(default_factory=list)


def run_answers(
    kb: KnowledgeBase,
    dataset: Dataset,
    mode: Mode,
    preset: Preset,
    progress: Callable[[int], None] | None = None,
) -> AnswerRun:
    """Ask every query; the retrieval block is computed from the evidence each answer actually used."""
    run = AnswerRun()
    for i, q in enumerate(dataset.queries):
        answer = kb.ask(q.text, mode=mode, preset=preset)
        ranked = list(dict.fromkeys(e.chunk.doc_id for e in answer.evidence))[:PASSAGE_DEPTH]
        run.rankings[q.qid] = ranked
        row: dict[str, Any] = {
            "qid": q.qid,
            "type": q.type,
            "mode": answer.mode,
            "stop_reason": answer.stop_reason,
            "llm_calls": answer.usage.llm_calls,
            "retrieval_calls": answer.usage.retrieval_calls,
            "tokens": answer.usage.prompt_tokens + answer.usage.completion_tokens,
            "ms": answer.usage.ms,
            "answer": answer.answer,
            "short_answer": answer.short_answer,
            "confidence": answer.confidence,
            "abstained": answer.stop_reason == StopReason.NO_EVIDENCE,
        }
        if q.answers:
            # EM and F1 measure the short answer where there is one (DESIGN.md), the whole answer otherwise.
            short = answer.short_answer or answer.answer
            row.update(
                contains=contains(answer.answer, q.answers),
                em=exact_match(short, q.answers),
                f1=f1(short, q.answers),
            )
        run.rows.append(row)
        run.samples.append(_sample(q.qid, q.text, q.answers, dataset.qrels.get(q.qid, {}), answer))
        if progress is not None:
            progress(i + 1)
    return run


def _sample(qid: str, question: str, answers: list[str], relevant: dict[str, float], answer: Answer) -> AnswerSample:
    """The question as the export formats need it: the passages handed to the synthesizer are its contexts."""
    return AnswerSample(
        qid=qid,
        question=question,
        answer=answer.answer,
        contexts=[e.chunk.text for e in answer.evidence],
        context_ids=[e.chunk.doc_id for e in answer.evidence],
        answers=answers,
        relevant=sorted(relevant, key=lambda doc_id: -relevant[doc_id]),
        confidence=answer.confidence,
        stop_reason=answer.stop_reason,
        prompt_tokens=answer.usage.prompt_tokens,
        completion_tokens=answer.usage.completion_tokens,
    )


def _answer_blocks(run: AnswerRun) -> tuple[dict[str, Any], dict[str, Any]]:
    rows = run.rows
    scored = [r for r in rows if "contains" in r]

    def mean(key: str, items: list[dict[str, Any]]) -> float | None:
        return round(float(statistics.fmean(r[key] for r in items)), 4) if items else None

    answer = {
        "contains": mean("contains", scored),
        "em": mean("em", scored),
        "f1": mean("f1", scored),
        "abstain_rate": mean("abstained", rows),
        "calibration": {
            level.value: {
                "n": sum(1 for r in rows if r["confidence"] == level),
                "contains": mean("contains", [r for r in scored if r["confidence"] == level]),
            }
            for level in Confidence
        }
        if scored
        else None,
    }
    latencies = [float(r["ms"]) for r in rows]
    process = {
        "llm_calls_mean": mean("llm_calls", rows),
        "retrieval_calls_mean": mean("retrieval_calls", rows),
        "tokens_mean": mean("tokens", rows),
        "latency_ms_p50": round(_percentile(latencies, 50) or 0.0, 1) if latencies else None,
        "latency_ms_p95": round(_percentile(latencies, 95) or 0.0, 1) if latencies else None,
    }
    return answer, process


def run_eval(
    dataset_dir: Path | str,
    settings: Settings,
    embedder: Embedder,
    *,
    limit: int | None = None,
    channel: Channel | None = None,
    ingest_progress: Callable[[IngestStatus], None] | None = None,
    query_progress: Callable[[int], None] | None = None,
    task: str = "retrieval",
    mode: Mode = Mode.AUTO,
    preset: Preset = Preset.BALANCED,
) -> EvalRun:
    """Build (or reuse) the dataset's knowledge base in `settings.home` and measure `task` on it.

    The knowledge base is opened without the search cache: every search is measured, never a cache hit.
    """
    dataset = load_dataset(dataset_dir, limit)
    if task != "answer":  # before the corpus is ingested: the error comes at once
        dataset.require_qrels(task)
    kb_name = eval_kb_name(dataset, settings, embedder.name)
    with KnowledgeBase.open(kb_name, settings=settings, embedder=embedder, search_cache=False) as kb:
        ingest = build_or_reuse(kb, dataset, ingest_progress)
        if task == "answer":
            answers = run_answers(kb, dataset, Mode(mode), Preset(preset), query_progress)
            return _answer_result(dataset, kb_name, ingest, answers, settings, Mode(mode), Preset(preset))
        runs, embed_stats = run_retrieval(kb, dataset, CHANNELS, query_progress)
    main_channel = Channel(channel or settings.retrieval.channel).value
    return _retrieval_result(dataset, kb_name, ingest, runs, embed_stats, settings, main_channel)


def _retrieval_result(
    dataset: Dataset,
    kb_name: str,
    ingest: dict[str, Any],
    runs: dict[str, ChannelRun],
    embed_stats: dict[str, float | None],
    settings: Settings,
    main_channel: str,
) -> EvalRun:
    per_channel: dict[str, dict[str, float]] = {}
    per_query: list[dict[str, Any]] = []
    by_type: dict[str, dict[str, list[dict[str, float]]]] = {}
    for name, run in runs.items():
        rows = []
        for q in dataset.queries:
            m = retrieval_metrics(run.rankings[q.qid], dataset.qrels[q.qid])
            rows.append(m)
            if name == main_channel:
                per_query.append({"qid": q.qid, "type": q.type, **m, "ranked": run.rankings[q.qid][:10]})
            if q.type:
                by_type.setdefault(name, {}).setdefault(q.type, []).append(m)
        per_channel[name] = {k: round(v, 4) for k, v in _mean_metrics(rows).items()}
        per_channel[name]["latency_ms_p50"] = round(_percentile(run.latencies_ms, 50) or 0.0, 3)
        per_channel[name]["latency_ms_p95"] = round(_percentile(run.latencies_ms, 95) or 0.0, 3)

    main = per_channel[main_channel]
    result: dict[str, Any] = {
        "dataset": dataset.name,
        "queries": len(dataset.queries),
        "retrieval": {k: main[k] for k in ("recall@5", "recall@10", "recall@20", "all_recall@10", "ndcg@10", "mrr@10")},
        "answer": {"contains": None, "em": None, "f1": None, "abstain_rate": None, "calibration": None},
        "process": {
            "llm_calls_mean": None,
            "retrieval_calls_mean": 1.0,
            "tokens_mean": None,
            "latency_ms_p50": main["latency_ms_p50"],
            "latency_ms_p95": main["latency_ms_p95"],
        },
        "ingest": {k: ingest[k] for k in ("passages", "seconds", "passages_per_s")},
        "details": {
            "task": "retrieval",
            "channel": main_channel,
            "knowledge_base": kb_name,
            "store": settings.store.backend.value,
            "ingest_reused": ingest["reused"],
            "chunks": ingest.get("chunks"),
            "channels": per_channel,
            "by_type": {ch: _by_type(types) for ch, types in by_type.items()},
            "latency_note": "per query, inside the store, query embedding excluded",
            "recall_curves": {name: _recall_curve(dataset, run.rankings) for name, run in runs.items()},
            **embed_stats,
            "settings": settings.retrieval.model_dump(),
            "queries_total_ms": round(sum(runs[main_channel].latencies_ms), 1),
        },
    }
    return EvalRun(dataset=dataset, kb_name=kb_name, result=result, channels=runs, per_query=per_query)


def _by_type(types: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Mean metrics per question type, with how many questions each has."""
    return {t: {k: round(v, 4) for k, v in _mean_metrics(rows).items()} | {"n": len(rows)} for t, rows in types.items()}


def _recall_curve(dataset: Dataset, rankings: dict[str, list[str]]) -> list[float]:
    """Mean Recall@k for k = 1..20 over the dataset's queries (empty without queries)."""
    if not dataset.queries:
        return []
    curves = [recall_curve(rankings[q.qid], dataset.qrels[q.qid]) for q in dataset.queries]
    return [round(v, 4) for v in np.mean(curves, axis=0).tolist()]


def _answer_result(
    dataset: Dataset,
    kb_name: str,
    ingest: dict[str, Any],
    answers: AnswerRun,
    settings: Settings,
    mode: Mode,
    preset: Preset,
) -> EvalRun:
    # Without relevance judgements the answers are measured and the retrieval block is null.
    judged = bool(dataset.qrels)
    rows = [retrieval_metrics(answers.rankings[q.qid], dataset.qrels[q.qid]) for q in dataset.queries] if judged else []
    retrieval = {k: round(v, 4) for k, v in _mean_metrics(rows).items()} if judged else None
    answer, process = _answer_blocks(answers)
    by_type: dict[str, list[dict[str, float]]] = {}
    for q, m in zip(dataset.queries if judged else [], rows, strict=True):
        if q.type:
            by_type.setdefault(q.type, []).append(m)
    modes: dict[str, int] = {}
    stops: dict[str, int] = {}
    for r in answers.rows:
        modes[r["mode"]] = modes.get(r["mode"], 0) + 1
        stops[r["stop_reason"]] = stops.get(r["stop_reason"], 0) + 1
    latencies = [float(r["ms"]) for r in answers.rows]
    result: dict[str, Any] = {
        "dataset": dataset.name,
        "queries": len(dataset.queries),
        "retrieval": retrieval,
        "answer": answer,
        "process": process,
        "ingest": {k: ingest[k] for k in ("passages", "seconds", "passages_per_s")},
        "details": {
            "task": "answer",
            "mode": mode.value,
            "preset": preset.value,
            "llm": settings.llm.model if settings.llm.configured else None,
            "knowledge_base": kb_name,
            "ingest_reused": ingest["reused"],
            "chunks": ingest.get("chunks"),
            "modes_used": modes,
            "stop_reasons": stops,
            "latency_ms_mean": round(statistics.fmean(latencies), 1) if latencies else None,
            "by_type": _by_type(by_type),
            "retrieval_note": "ranked from the evidence handed to the synthesizer, across all rounds",
            "recall_curves": {f"{mode.value} mode evidence": _recall_curve(dataset, answers.rankings)}
            if dataset.queries and judged
            else {},
            "settings": settings.retrieval.model_dump(),
        },
    }
    per_query = [{**r, **m} for r, m in zip(answers.rows, rows, strict=True)] if judged else answers.rows
    return EvalRun(
        dataset=dataset, kb_name=kb_name, result=result, channels={}, per_query=per_query, samples=answers.samples
    )
