"""What OpenTelemetry costs a model-free answer: off (the default) against on (spans to the SDK's in-memory
exporter), interleaved question by question in one process so the machine's noise falls on both alike.

    .venv/bin/python benchmarks/telemetry.py                    # the bundled sample, 5 rounds of its questions
    .venv/bin/python benchmarks/telemetry.py --rounds 10 --mode agent

The knowledge base is built from the sample in a fresh home, with the search cache off (each ask searches).
Prints a Markdown table: per condition the p50 and mean answer time, and the time `telemetry.export` itself
takes per question (off: the check that telemetry is off; on: turning the trace into spans).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from importlib.resources import files
from pathlib import Path

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentrag import telemetry
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings


def questions() -> list[str]:
    text = (Path(str(files("agentrag") / "sample")) / "QUESTIONS.md").read_text(encoding="utf-8")
    return [m.group(1).strip() for m in re.finditer(r"^\| \d+ \| (.*?) \|", text, re.M)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mode", default="single")
    args = parser.parse_args()
    for name in [k for k in os.environ if k.startswith(("OTEL_", "OPENAI_", "AGENTRAG_LLM"))]:
        del os.environ[name]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    asked = questions()
    times: dict[str, list[float]] = {"off": [], "on": []}
    export: dict[str, list[float]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(Path(tmp) / "home")
        with KnowledgeBase.open("sample", settings=settings, search_cache=False) as kb:
            kb.ingest([Path(str(files("agentrag") / "sample" / "docs"))])
            kb.ask(asked[0], mode=args.mode)  # warm up: models loaded, first-call costs paid
            for _ in range(args.rounds):
                for question in asked:
                    for condition in ("off", "on"):
                        if condition == "on":
                            telemetry.enable(provider)
                        else:
                            telemetry.disable()
                        events: list[object] = []
                        started = time.perf_counter()
                        kb.ask(question, mode=args.mode, on_event=events.append)
                        times[condition].append((time.perf_counter() - started) * 1000)
                        started = time.perf_counter()
                        telemetry.export(events, "sample")  # type: ignore[arg-type]  # TraceEvents; "on": a second export of the same trace
                        export[condition].append((time.perf_counter() - started) * 1000)
    spans = len(exporter.get_finished_spans())
    print(f"{len(asked)} questions x {args.rounds} rounds, mode {args.mode}, {spans} spans exported\n")
    print("| telemetry | answers | p50 ms | mean ms | export per question, p50 ms |")
    print("|---|---|---|---|---|")
    for condition in ("off", "on"):
        t, e = times[condition], export[condition]
        print(
            f"| {condition} | {len(t)} | {statistics.median(t):.1f} | {statistics.fmean(t):.1f} | "
            f"{statistics.median(e):.4f} |"
        )


if __name__ == "__main__":
    main()
