"""CPU time of the model-free synthesizer alone (assessment + extractive answer) on the contexts an eval run
handed it, so two versions of the answer code can be compared on the same inputs, whatever the machine's load.

    # once: ask the questions and keep what the synthesizer was given (contexts, plans, table-header lookups)
    PYTHONPATH=src .venv/bin/python benchmarks/synth_cpu.py ../shared/data/cmrc2018 --capture cap.pkl --mode auto
    # then, alternating the versions (each in its own process):
    PYTHONPATH=<before>/src .venv/bin/python benchmarks/synth_cpu.py ../shared/data/cmrc2018 --capture cap.pkl
    PYTHONPATH=<after>/src .venv/bin/python benchmarks/synth_cpu.py ../shared/data/cmrc2018 --capture cap.pkl

The eval knowledge base must exist (`agentrag eval DATASET --home HOME` builds it). Prints the CPU milliseconds
(`time.process_time`) per question of a first pass over the captured contexts (the caches of the answer code
cold) and of a second one (warm). The question is analysed again by the code measured.
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path
from typing import Any

import agentrag.agent.synthesizer as synthesizer
from agentrag.agent.assess import assess
from agentrag.agent.extractive import ExtractiveSynthesizer
from agentrag.agent.question import analyze
from agentrag.eval.data import load_dataset
from agentrag.eval.runner import eval_kb_name
from agentrag.kb import KnowledgeBase, shared_embedder
from agentrag.settings import load_settings
from agentrag.vocab import Mode, Preset, StopReason


def capture(dataset: Path, home: Path, mode: str, limit: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    original = synthesizer.Synthesizer.draft

    def draft(self: Any, run: Any, evidence: Any, llm: Any) -> Any:
        seen: dict[tuple[str, int], Any] = {}
        inner = self.chunk_at
        self.chunk_at = lambda doc, pos: seen.setdefault((doc, pos), inner(doc, pos) if inner else None)
        try:
            result = original(self, run, evidence, llm)
        finally:
            self.chunk_at = inner
        if result.context is not None:
            weak = run.outcome.stop_reason == StopReason.NO_EVIDENCE
            records.append(
                {
                    "question": run.question,
                    "plan": run.plan.all_queries(),
                    "context": result.context,
                    "weak": weak,
                    "missing": list(run.plan.missing),
                    "seen": seen,
                }
            )
        return result

    synthesizer.Synthesizer.draft = draft  # type: ignore[method-assign]
    settings = load_settings(home).model_copy(update={"home": home})
    data = load_dataset(dataset, None)
    embedder = shared_embedder(settings.embedder)
    name = eval_kb_name(data, settings, embedder.name)
    with KnowledgeBase.open(name, settings=settings, embedder=embedder, search_cache=False, create=False) as kb:
        for query in data.queries[:limit]:
            kb.ask(query.text, mode=Mode(mode), preset=Preset.BALANCED)
    return records


def one_pass(records: list[dict[str, Any]]) -> float:
    writer = ExtractiveSynthesizer()
    started = time.process_time()
    for r in records:
        found = assess(analyze(r["question"].strip()), r["context"], r["plan"], lambda d, p, s=r["seen"]: s.get((d, p)))
        writer.answer(r["question"], r["plan"], r["context"], r["missing"], weak=r["weak"], assessment=found)
    return (time.process_time() - started) / max(len(records), 1) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--capture", type=Path, required=True, help="pickle of the contexts (written if missing)")
    parser.add_argument("--home", type=Path, default=Path(".agentrag"))
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--limit", type=int, default=600)
    args = parser.parse_args()
    if not args.capture.exists():
        args.capture.write_bytes(pickle.dumps(capture(args.dataset, args.home, args.mode, args.limit)))
    records = pickle.loads(args.capture.read_bytes())
    import jieba

    jieba.initialize()  # the dictionary load is no part of the answer code
    cold, warm = one_pass(records), one_pass(records)
    print(f"{len(records)} contexts: first pass {cold:.2f} ms, second pass {warm:.2f} ms CPU per question")


if __name__ == "__main__":
    main()
