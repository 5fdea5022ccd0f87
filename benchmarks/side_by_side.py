"""Two versions of agentrag on the same data, measured side by side: are the figures the same, is it slower?

    # a checkout of the code before the change, installed in its own venv:
    git worktree add ../before <commit>
    python3 -m venv ../before/.venv && ../before/.venv/bin/pip install -e ../before
    python benchmarks/side_by_side.py ../shared/data --sets musique,cmrc2018 \
        --before ../before/.venv/bin/python --after .venv/bin/python --rounds 3 --answer-limit 600

Each round runs, for both versions in alternating order, the default retrieval eval and the model-free answer
eval in single, agent and auto mode (`agentrag eval ... --json`, each in its own process, one knowledge base per
set shared by both). Quality figures are compared to three decimals; latency is the median over rounds of each
run's p50 and p95, so a noisy moment of the machine does not decide. Writes SIDE-BY-SIDE.md (and .json) to --out;
`benchmarks/run.py` includes the Markdown in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RUNS: list[tuple[str, list[str]]] = [
    ("retrieval", []),
    ("answer single", ["--task", "answer", "--mode", "single"]),
    ("answer agent", ["--task", "answer", "--mode", "agent"]),
    ("answer auto", ["--task", "answer", "--mode", "auto"]),
]
QUALITY = {
    "retrieval": ("recall@5", "recall@10", "recall@20", "all_recall@10", "ndcg@10", "mrr@10"),
    "answer": ("contains", "em", "f1", "abstain_rate"),
}


def run_eval(python: str, data: Path, home: Path, json_path: Path, extra: list[str]) -> dict[str, Any]:
    cmd = [python, "-m", "agentrag.cli", "eval", str(data), "--home", str(home), "--json", str(json_path), *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    result: dict[str, Any] = json.loads(json_path.read_text())
    return result


def quality(result: dict[str, Any]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for block, keys in QUALITY.items():
        for key in keys:
            value = (result.get(block) or {}).get(key)
            out[f"{block}.{key}"] = None if value is None else round(float(value), 3)
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    sides = {"before": args.before, "after": args.after}
    found: dict[str, Any] = {}
    for set_name in [s for s in args.sets.split(",") if s]:
        data = args.data / set_name
        for label, extra in RUNS:
            if label != "retrieval" and args.answer_limit:
                extra = [*extra, "--limit", str(args.answer_limit)]
            entry: dict[str, Any] = {side: {"quality": [], "p50": [], "p95": []} for side in sides}
            for round_ in range(args.rounds):
                order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
                for side in order:
                    tag = f"{set_name}.{label.replace(' ', '-')}.{side}.r{round_}"
                    print(f"{tag} ...", flush=True)
                    result = run_eval(sides[side], data, args.home, args.out / f"{tag}.json", extra)
                    entry[side]["quality"].append(quality(result))
                    entry[side]["p50"].append(result["process"]["latency_ms_p50"])
                    entry[side]["p95"].append(result["process"]["latency_ms_p95"])
            found[f"{set_name} · {label}"] = entry
    return found


def report(found: dict[str, Any], args: argparse.Namespace) -> str:
    lines = [
        "## Side by side: before and after a change",
        "",
        f"`python benchmarks/side_by_side.py {args.data} --sets {args.sets} --rounds {args.rounds}"
        + (f" --answer-limit {args.answer_limit}" if args.answer_limit else "")
        + "` (before: "
        + f"`{args.before_label}`, after: `{args.after_label}`). Quality: every figure of the eval JSON's retrieval "
        "and answer blocks, to three decimals, in every round. Latency: the median over rounds of each run's p50 "
        "and p95 (retrieval: per search inside the store; answers: per question, end to end, model-free).",
        "",
        "| set · run | quality figures | identical? | p50 before → after (ms) | p95 before → after (ms) |",
        "|---|---|---|---|---|",
    ]
    for name, entry in found.items():
        before, after = entry["before"], entry["after"]
        reference = before["quality"][0]
        same = all(q == reference for side in (before, after) for q in side["quality"])
        shown = {k: v for k, v in reference.items() if v is not None}
        figures = ", ".join(f"{k.split('.', 1)[1]} {v:.3f}" for k, v in shown.items())
        if not same:
            changed = [k for k in reference if any(q[k] != reference[k] for q in after["quality"])]
            figures += " · differs: " + ", ".join(f"{k} {reference[k]} → {after['quality'][0][k]}" for k in changed)
        p50 = f"{statistics.median(before['p50']):.2f} → {statistics.median(after['p50']):.2f}"
        p95 = f"{statistics.median(before['p95']):.2f} → {statistics.median(after['p95']):.2f}"
        lines.append(f"| {name} | {figures} | {'yes' if same else 'NO'} | {p50} | {p95} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="folder holding the benchmark sets (e.g. ../shared/data)")
    parser.add_argument("--sets", default="musique,cmrc2018", help="comma-separated set names")
    parser.add_argument("--before", required=True, help="python of the venv with the code before the change")
    parser.add_argument("--after", default=sys.executable, help="python of the venv with the changed code")
    parser.add_argument("--before-label", default="before", help="what 'before' is, for the report (a commit)")
    parser.add_argument("--after-label", default="after", help="what 'after' is, for the report (a commit)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per run")
    parser.add_argument("--answer-limit", type=int, default=600, help="first N queries for the answer runs")
    parser.add_argument("--home", type=Path, default=ROOT / "bench-out" / "home", help="where knowledge bases live")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "side-by-side", help="raw JSON and report")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    found = measure(args)
    (args.out / "SIDE-BY-SIDE.json").write_text(json.dumps(found, indent=2))
    text = report(found, args)
    (args.out / "SIDE-BY-SIDE.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
