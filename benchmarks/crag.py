"""CRAG example file: real web pages, ingested by the product's HTML loader, asked model-free.

    .venv/bin/python benchmarks/crag.py ../shared/data/crag-html            # from the repository root
    .venv/bin/python benchmarks/crag.py ../shared/data/crag-html --modes auto --limit 3

The data (10 questions from github.com/facebookresearch/CRAG `example_data/dev_data.jsonl.bz2`, CC BY-NC 4.0,
evaluation only) is read from the path argument at run time and never copied into the repository. Each
question comes with the raw HTML of the 5 pages a search engine returned for it.

What it measures:
  ingest   every non-empty page becomes one `.html` file under `<out>/pages/` and is ingested with
           `KnowledgeBase.ingest` into the knowledge base "crag" under `<out>/home` (re-runs reuse it: unchanged
           files are no-ops; documents the ingest did not report, e.g. pages no longer in the set, are deleted)
  answers  `kb.ask(query, mode=...)` for every question and mode, with no LLM (OPENAI_BASE_URL, OPENAI_API_KEY
           and AGENTRAG_LLM_* are removed from the environment first), scored like `agentrag eval --task
           answer`: contains on the whole answer, EM and F1 on the short answer (the whole answer without one)
  evidence whether a cited passage holds the (normalized) gold, and whether the question's own ingested pages
           hold it at all (the answerable-from-the-pages flag; also checked on the raw visible HTML text)

Questions without a usable answer are scored on abstention: a gold of "invalid question", "i don't know",
"nan" (a missing gold) and the like, or a `question_type` of "false_premise", counts as correct only when
`stop_reason == "no_evidence"`. All other questions count as correct when the answer contains the gold.
Writes `<out>/CRAG.json` (every row) and `<out>/CRAG.md` (summary and table). A smoke test: 10 questions
are far too few to rank anything.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import platform
import re
import shlex
import statistics
import sys
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from agentrag import KnowledgeBase, __version__, load_settings
from agentrag.eval.metrics import contains, exact_match, f1, normalize_answer
from agentrag.types import IngestReport
from agentrag.vocab import Mode

DATA_FILE = "dev_data.jsonl.bz2"
NO_ANSWER_GOLDS = frozenset({"invalid question", "i don't know", "i dont know", "nan", "none", "n/a", "unknown", ""})
LLM_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "AGENTRAG_LLM_MODEL")
Row = dict[str, Any]


# ---------------------------------------------------------------------------------------- data


def load_questions(data: Path, limit: int | None) -> list[Row]:
    """The CRAG rows from a folder holding `dev_data.jsonl.bz2` (or from that file itself)."""
    path = data / DATA_FILE if data.is_dir() else data
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return rows[:limit] if limit is not None else rows


def gold_kind(row: Row) -> str:
    """'answer' (score contains/EM/F1), 'no_answer' (invalid / unknown / missing gold) or 'false_premise'."""
    if normalize_answer(str(row.get("answer", ""))) in {normalize_answer(g) for g in NO_ANSWER_GOLDS}:
        return "no_answer"
    if row.get("question_type") == "false_premise":
        return "false_premise"
    return "answer"


def safe_name(qi: int, ri: int, result: Row) -> str:
    """`q03-r1-<slug of page name or URL>.html`: ASCII, at most ~80 characters, unique per search result."""
    base = str(result.get("page_name") or "") or re.sub(r"^https?://", "", str(result.get("page_url") or ""))
    slug = re.sub(r"[^A-Za-z0-9]+", "-", base).strip("-").lower()[:60].rstrip("-") or "page"
    return f"q{qi:02d}-r{ri}-{slug}.html"


def extract_pages(questions: list[Row], pages_dir: Path) -> dict[int, list[str]]:
    """One `.html` per non-empty search result; files are rewritten only when their bytes change."""
    pages_dir.mkdir(parents=True, exist_ok=True)
    by_question: dict[int, list[str]] = {}
    for qi, row in enumerate(questions):
        names = by_question.setdefault(qi, [])
        for ri, result in enumerate(row.get("search_results") or []):
            html = result.get("page_result") or ""
            if not html.strip():
                continue
            name = safe_name(qi, ri, result)
            target = pages_dir / name
            data = html.encode("utf-8")
            if not target.exists() or target.read_bytes() != data:
                target.write_bytes(data)
            names.append(name)
    wanted = {n for names in by_question.values() for n in names}
    for stale in pages_dir.glob("*.html"):
        if stale.name not in wanted:
            stale.unlink()
    return by_question


class _VisibleText(HTMLParser):
    """The text of a page outside <script>/<style>/<noscript>/<template>: a loader-independent check."""

    SKIP = frozenset({"script", "style", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIP:
            self._skipping += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self._skipping:
            self._skipping -= 1

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    return " ".join(parser.parts)


def holds_gold(text: str, gold: str) -> bool:
    """The normalized gold occurs in the normalized text as whole words (`contains` matches any substring,
    so a gold of "en" would be found in "then"; this check is the stricter one)."""
    norm = normalize_answer(gold)
    return bool(norm) and f" {norm} " in f" {normalize_answer(text)} "


# --------------------------------------------------------------------------------- knowledge base


def model_free_environment() -> list[str]:
    """Remove every variable that would configure an LLM; returns the names removed."""
    names = [n for n in os.environ if n in LLM_ENV or n.startswith("AGENTRAG_LLM")]
    for name in names:
        del os.environ[name]
    return names


def build_kb(out: Path, pages_dir: Path) -> tuple[KnowledgeBase, IngestReport, int, float]:
    """Open (or create) the knowledge base, ingest the folder, then delete every document this ingest did
    not report (pages that left the set, or the same pages under an older absolute path: document ids come
    from the absolute path, sources are recorded relative to the pages folder)."""
    settings = load_settings(out / "home")
    if settings.llm.configured:
        raise SystemExit(f"an LLM is still configured ({settings.llm.base_url}); this benchmark is model-free")
    kb = KnowledgeBase.open("crag", settings=settings, search_cache=False)
    started = time.perf_counter()
    report = kb.ingest([pages_dir], source_root=pages_dir)
    wall = time.perf_counter() - started
    current = {item.doc_id for item in report.items if item.doc_id}
    stale = [doc.doc_id for doc in kb.documents() if doc.doc_id not in current]
    for doc_id in stale:
        kb.delete(doc_id)
    return kb, report, len(stale), wall


def page_evidence(kb: KnowledgeBase, questions: list[Row], pages: dict[int, list[str]]) -> list[Row]:
    """Per question: does any of its own pages hold the gold, in the ingested chunks and in the raw page text?"""
    docs_by_source: dict[str, list[str]] = {}
    for doc in kb.documents():
        docs_by_source.setdefault(doc.source, []).append(doc.doc_id)
    evidence: list[Row] = []
    for qi, row in enumerate(questions):
        gold = str(row.get("answer", ""))
        chunk_text = " ".join(
            chunk.text
            for name in pages.get(qi, [])
            for doc_id in docs_by_source.get(name, [])
            for chunk in kb.document(doc_id)[1]
        )
        raw_text = " ".join(visible_text(r.get("page_result") or "") for r in row.get("search_results") or [])
        evidence.append(
            {
                "gold_in_pages": holds_gold(chunk_text, gold),
                "gold_in_raw_html_text": holds_gold(raw_text, gold),
                "pages": pages.get(qi, []),
                "documents": sum(len(docs_by_source.get(n, [])) for n in pages.get(qi, [])),
            }
        )
    return evidence


# ------------------------------------------------------------------------------------- answers


def ask_one(kb: KnowledgeBase, qi: int, row: Row, mode: str, evidence: Row) -> Row:
    """One question in one mode, scored; the row CRAG.json records."""
    query, gold = str(row["query"]), str(row.get("answer", ""))
    started = time.perf_counter()
    answer = kb.ask(query, mode=mode)
    wall_ms = round((time.perf_counter() - started) * 1000)
    short = answer.short_answer or answer.answer  # as `agentrag eval --task answer` scores EM and F1
    cited_sources: list[str] = []
    cites_gold = False
    for citation in answer.citations:
        cited_sources.append(citation.source)
        cites_gold = cites_gold or holds_gold(kb.chunk(citation.chunk_id).text, gold)
    kind = gold_kind(row)
    abstained = answer.stop_reason == "no_evidence"
    scores = {"contains": contains(answer.answer, [gold]), "em": exact_match(short, [gold]), "f1": f1(short, [gold])}
    return {
        "q": qi,
        "mode": mode,
        "query": query,
        "gold": gold,
        "gold_kind": kind,
        "question_type": row.get("question_type"),
        "domain": row.get("domain"),
        "answer": answer.answer,
        "short_answer": answer.short_answer,
        "confidence": str(answer.confidence),
        "stop_reason": str(answer.stop_reason),
        "answered_mode": answer.mode,
        "route_reason": answer.route_reason,
        **scores,
        "contains_words": holds_gold(answer.answer, gold),
        "abstained": abstained,
        "correct": abstained if kind != "answer" else scores["contains"] == 1.0,
        "cites_gold": cites_gold,
        "cited_sources": list(dict.fromkeys(cited_sources)),
        "ms": answer.usage.ms,
        "wall_ms": wall_ms,
        "retrieval_calls": answer.usage.retrieval_calls,
        "llm_calls": answer.usage.llm_calls,
        **evidence,
    }


def summarize(rows: list[Row]) -> Row:
    """Means over the answerable questions, abstention over the rest, latency and confidence over all."""
    scored = [r for r in rows if r["gold_kind"] == "answer"]
    others = [r for r in rows if r["gold_kind"] != "answer"]
    ms = [float(r["ms"]) for r in rows]

    def mean(key: str, of: list[Row]) -> float | None:
        return round(sum(float(r[key]) for r in of) / len(of), 3) if of else None

    levels = Counter(r["confidence"] for r in rows)
    return {
        "questions": len(rows),
        "answerable": len(scored),
        "contains": mean("contains", scored),
        "em": mean("em", scored),
        "f1": mean("f1", scored),
        "cites_gold": mean("cites_gold", scored),
        "gold_in_pages": mean("gold_in_pages", scored),
        "no_answer_or_false_premise": len(others),
        "abstained_when_should": sum(1 for r in others if r["abstained"]),
        "abstained_total": sum(1 for r in rows if r["abstained"]),
        "correct": sum(1 for r in rows if r["correct"]),
        "mean_ms": round(statistics.mean(ms)) if ms else None,
        "median_ms": round(statistics.median(ms)) if ms else None,
        "confidence": {
            level: {"n": n, "correct": sum(1 for r in rows if r["confidence"] == level and r["correct"])}
            for level, n in sorted(levels.items())
        },
    }


# -------------------------------------------------------------------------------------- report


def cell(value: object, width: int = 70) -> str:
    """One Markdown table cell: one line, `|` escaped, truncated to about `width` characters."""
    text = " ".join(str("" if value is None else value).split())
    if len(text) > width:
        text = text[: width - 1].rstrip() + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|")


def yes(flag: object) -> str:
    return "yes" if flag else "no"


def summary_line(mode: str, s: Row) -> str:
    conf = ", ".join(f"{lvl} {v['n']} ({v['correct']} correct)" for lvl, v in s["confidence"].items())
    return (
        f"**{mode}**: contains {s['contains']}, EM {s['em']}, F1 {s['f1']} (over {s['answerable']} answerable "
        f"questions; gold in their own pages for {s['gold_in_pages']}); answers citing a passage that holds the "
        f"gold {s['cites_gold']}; no-answer/false-premise caught {s['abstained_when_should']}/"
        f"{s['no_answer_or_false_premise']} (no_evidence overall {s['abstained_total']}); correct "
        f"{s['correct']}/{s['questions']}; latency mean {s['mean_ms']} ms, median {s['median_ms']} ms; "
        f"confidence: {conf}"
    )


def table(rows: list[Row]) -> list[str]:
    head = "| # | question | gold | short answer | contains | cites gold | gold in pages | confidence | stop reason |"
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gold = f"{r['gold']} ({r['gold_kind']})" if r["gold_kind"] != "answer" else r["gold"]
        lines.append(
            f"| {r['q']} | {cell(r['query'])} | {cell(gold, 60)} | {cell(r['short_answer'], 60)} | "
            f"{yes(r['contains'])} | {yes(r['cites_gold'])} | {yes(r['gold_in_pages'])} | {r['confidence']} | "
            f"{r['stop_reason']} |"
        )
    return lines


def write_markdown(path: Path, meta: Row, summaries: dict[str, Row], rows: list[Row]) -> None:
    ing = meta["ingest"]
    lines = [
        "# CRAG example file: real web pages, model-free",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Machine: {meta['machine']['cores']} cores, Python {meta['machine']['python']} "
        f"({meta['machine']['platform']}); agentrag {meta['agentrag']}.",
        "",
        f"Pages: {meta['pages']} non-empty HTML pages of {meta['questions']} questions ingested in "
        f"{ing['seconds']} s (wall {ing['wall_seconds']} s): added {ing['added']}, updated {ing['updated']}, "
        f"unchanged {ing['unchanged']}, failed {ing['failed']}, chunks {ing['chunks']}; documents in the "
        f"knowledge base {meta['documents']} (stale documents deleted: {ing['removed_stale']}).",
        "",
        "Scoring: contains on the whole answer, EM and F1 on the short answer (the whole answer without one), "
        "averaged over questions with a real gold. A gold such as 'invalid question', 'i don't know' or 'nan' "
        "(missing), or a false_premise question, is scored correct only when stop_reason is no_evidence. "
        "'cites gold': a cited chunk holds the normalized gold as whole words; 'gold in pages': the question's "
        "own ingested pages do (`contains` itself, as in `agentrag eval`, matches any substring).",
    ]
    for failure in ing["failures"]:
        lines += ["", f"Failed: `{failure['path']}`: {failure['error']}"]
    for mode, summary in summaries.items():
        lines += ["", f"## {mode}", "", summary_line(mode, summary), ""]
        lines += table([r for r in rows if r["mode"] == mode])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, nargs="?", default=Path("../shared/data/crag-html"))
    parser.add_argument("--out", type=Path, default=Path("bench-out/crag"))
    parser.add_argument("--modes", default="auto,agent", help="comma-separated answer modes (auto,agent,...)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N questions")
    return parser.parse_args(argv)


def ingest_block(report: IngestReport, wall: float, removed: int) -> Row:
    return {
        **report.model_dump(include={"added", "updated", "unchanged", "failed", "chunks"}),
        "seconds": round(report.seconds, 2),
        "wall_seconds": round(wall, 2),
        "removed_stale": removed,
        "failures": [{"path": i.path, "error": i.error} for i in report.items if i.status == "failed"],
        "items": [i.model_dump() for i in report.items],
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    modes = [Mode(m.strip()).value for m in args.modes.split(",") if m.strip()]
    cleared = model_free_environment()
    questions = load_questions(args.data, args.limit)
    pages = extract_pages(questions, args.out / "pages")
    n_pages = sum(len(v) for v in pages.values())
    print(f"{len(questions)} questions, {n_pages} pages; ingesting ...", file=sys.stderr, flush=True)
    kb, report, removed, wall = build_kb(args.out, args.out / "pages")
    with kb:
        evidence = page_evidence(kb, questions, pages)
        rows: list[Row] = []
        for mode in modes:
            for qi, row in enumerate(questions):
                rows.append(ask_one(kb, qi, row, mode, evidence[qi]))
                print(f"{mode} q{qi}: {rows[-1]['stop_reason']} {rows[-1]['ms']} ms", file=sys.stderr, flush=True)
        documents = kb.stats().documents
    meta: Row = {
        "command": shlex.join([".venv/bin/python", "benchmarks/crag.py", *(argv or sys.argv[1:])]),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "agentrag": __version__,
        "cleared_env": cleared,
        "questions": len(questions),
        "pages": n_pages,
        "documents": documents,
        "ingest": ingest_block(report, wall, removed),
    }
    summaries = {m: summarize([r for r in rows if r["mode"] == m]) for m in modes}
    result = {**meta, "summaries": summaries, "rows": rows}
    (args.out / "CRAG.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_markdown(args.out / "CRAG.md", meta, summaries, rows)
    for mode, summary in summaries.items():
        print(summary_line(mode, summary))


if __name__ == "__main__":
    main()
