"""Start-up and ingest speed, this code against another checkout side by side (issue 14).

    python benchmarks/speed.py ../shared/data/hotpotqa --before /work/main/src --rounds 5 --out benchmarks/speed.json

Each measurement runs in a fresh interpreter, alternating between the two versions round by round (so a busy
spell of the shared machine hits both), with PYTHONPATH set to each version's `src`:
  help     wall time of `python -m agentrag.cli --help`
  search   wall time of `python -m agentrag.cli search QUESTION` on the bundled sample (model-free), in a
           home each version ingested itself beforehand
  search zh  the same with the README's Chinese quick-start question (jieba's dictionary is loaded for it)
  ingest   chunks per second of `KnowledgeBase.ingest` of the set's first `--passages` passages (JSONL) with
           a free embedder (a vector per text from a hash of it: the pipeline's own cost, no model), after
           jieba's dictionary is loaded (once per process, not part of the throughput); CPU time counts the
           ingest's worker processes too (`[ingest] workers`), "main CPU" only the pipeline's own process
           (what bounds the wall time when the workers have cores of their own)
Wall time and CPU time (user + system of the child) are both recorded: on a shared machine CPU time is the
steadier of the two. Prints one JSON object (medians over rounds, and every round).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
AFTER = HERE.parents[1] / "src"
QUESTION = "What does error E1042 mean?"
QUESTION_ZH = "出差住宿标准是多少？"

# A worker run in the version under test: ingest with a free embedder, print chunks/s.
INGEST_WORKER = r"""
import json, resource, sys, zlib
from pathlib import Path
import numpy as np
from agentrag.kb import KnowledgeBase
from agentrag.settings import load_settings

class FreeEmbedder:
    name, dim = "free/hash-384", 384
    def _encode(self, texts):
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i] = np.random.default_rng(zlib.crc32(t.encode())).standard_normal(384)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
    embed_queries = embed_passages = _encode

corpus, home = Path(sys.argv[1]), Path(sys.argv[2])
from agentrag.text.tokenize import tokenize
tokenize("预热 warm up")  # jieba's dictionary loads once per process: not part of the throughput
def cpu(who=(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)):  # with the workers (reaped at the end)
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, who))

overrides = {"ingest": {"workers": int(sys.argv[3])}} if len(sys.argv) > 3 else {}
with KnowledgeBase.open("bench", settings=load_settings(home, **overrides), embedder=FreeEmbedder()) as kb:
    started, main = cpu(), cpu((resource.RUSAGE_SELF,))
    report = kb.ingest([corpus])
    used, main = cpu() - started, cpu((resource.RUSAGE_SELF,)) - main
print(json.dumps({"chunks": report.chunks, "chunks_per_s": report.chunks / report.seconds,
                  "chunks_per_cpu_s": report.chunks / used, "chunks_per_main_cpu_s": report.chunks / main}))
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(src: Path, args: list[str], env_extra: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTRAG_"))}
    env["PYTHONPATH"] = str(src)
    env.update(env_extra or {})
    started, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=1800)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"{src}: {' '.join(args)} failed:\n{done.stderr[-2000:]}")
    return wall, cpu, done.stdout


def ingest(rounds: dict[str, list[float]], src: Path, corpus: Path, home: Path, workers: int | None = None) -> None:
    _, _, out = run(src, ["-c", INGEST_WORKER, str(corpus), str(home), *([str(workers)] if workers else [])])
    rounds["ingest_chunks_per_s"].append(round(json.loads(out)["chunks_per_s"], 1))
    rounds["ingest_chunks_per_cpu_s"].append(round(json.loads(out)["chunks_per_cpu_s"], 1))
    rounds["ingest_chunks_per_main_cpu_s"].append(round(json.loads(out)["chunks_per_main_cpu_s"], 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--before", type=Path, required=True, help="the other version's src folder")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--passages", type=int, default=3000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--ingest-only", action="store_true", help="skip the start-up measures")
    parser.add_argument("--startup-only", action="store_true", help="skip the ingest measures")
    parser.add_argument(
        "--inline", action="store_true", help="also ingest with this version in-process ([ingest] workers = 1)"
    )
    parser.add_argument(
        "--pooled", type=int, default=None, metavar="N", help="also ingest with this version on N worker processes"
    )
    args = parser.parse_args()
    versions = {"before": args.before.resolve(), "after": AFTER}
    workers = {"after_inline": 1 if args.inline else None, "after_pooled": args.pooled}
    if any(workers.values()) and not args.ingest_only:
        parser.error("--inline and --pooled need --ingest-only")
    versions.update({name: AFTER for name, n in workers.items() if n})
    measures = (
        "help_s",
        "help_cpu_s",
        "search_s",
        "search_cpu_s",
        "search_zh_s",
        "search_zh_cpu_s",
        "ingest_chunks_per_s",
        "ingest_chunks_per_cpu_s",
        "ingest_chunks_per_main_cpu_s",
    )
    rounds: dict[str, dict[str, list[float]]] = {v: {m: [] for m in measures} for v in versions}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lines = (args.dataset / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[: args.passages]
        corpus = root / "corpus.jsonl"
        corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
        _, _, sample = run(AFTER, ["-m", "agentrag.cli", "sample"])
        for name, src in versions.items() if not args.ingest_only else ():  # each version's own sample KB
            run(src, ["-m", "agentrag.cli", "ingest", sample.strip(), "--home", str(root / f"sample-{name}")])
            run(src, ["-m", "agentrag.cli", "search", QUESTION, "--home", str(root / f"sample-{name}")])
        for r in range(args.rounds):
            for name, src in versions.items():
                if args.ingest_only:
                    ingest(rounds[name], src, corpus, root / f"ingest-{name}-{r}", workers.get(name))
                    continue
                wall, cpu, _ = run(src, ["-m", "agentrag.cli", "--help"])
                rounds[name]["help_s"].append(round(wall, 3))
                rounds[name]["help_cpu_s"].append(round(cpu, 3))
                home = str(root / f"sample-{name}")
                wall, cpu, out = run(src, ["-m", "agentrag.cli", "search", QUESTION, "--home", home])
                assert "E1042" in out, out
                rounds[name]["search_s"].append(round(wall, 3))
                rounds[name]["search_cpu_s"].append(round(cpu, 3))
                wall, cpu, out = run(src, ["-m", "agentrag.cli", "search", QUESTION_ZH, "--home", home])
                assert "住宿" in out, out
                rounds[name]["search_zh_s"].append(round(wall, 3))
                rounds[name]["search_zh_cpu_s"].append(round(cpu, 3))
                if not args.startup_only:
                    ingest(rounds[name], src, corpus, root / f"ingest-{name}-{r}")
            print(
                json.dumps({"round": r, **{n: {k: v[-1] for k, v in m.items() if v} for n, m in rounds.items()}}),
                file=sys.stderr,
                flush=True,
            )
    result: dict[str, Any] = {
        "command": " ".join(sys.argv),
        "passages": len(lines),
        "versions": {k: str(v) for k, v in versions.items()},
        "median": {n: {k: statistics.median(v) for k, v in m.items() if v} for n, m in rounds.items()},
        "rounds": rounds,
        "load_average": os.getloadavg(),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
