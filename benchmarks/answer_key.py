"""The sample corpus asked the way a new user asks it, model-free, and judged against its answer key.

    .venv/bin/python benchmarks/answer_key.py                          # the bundled sample and its key
    .venv/bin/python benchmarks/answer_key.py --docs DIR --key KEY.json --modes auto,agent

Each question of the key (`agentrag.eval.key`: the facts a correct answer must state, a conflict to lead with
the policy in force, or "not found") is asked with `KnowledgeBase.ask` in each mode, with no LLM (the
OPENAI_* and AGENTRAG_LLM_* variables are removed first), against a knowledge base built from the documents in
a fresh home. Writes ANSWER-KEY.md and ANSWER-KEY.json to --out: per question the expected facts, the short
answer, the confidence, the stop reason and the verdict with its problems.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _expected(question: Any) -> str:
    if question.not_found:
        return "not found"
    if question.conflict is not None:
        c = question.conflict
        return f"{c.current} (in force), {c.superseded} ({c.superseded_year}) superseded"
    parts = [" / ".join(group[:2]) for group in question.facts]
    if question.some is not None:
        parts.append(f"{question.some.at_least} of {[g[0] for g in question.some.facts]}")
    return "; ".join(parts)


def _cell(text: str | None, limit: int = 70) -> str:
    text = " ".join((text or "").split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def run(docs: Path, key_path: Path | None, modes: list[str]) -> dict[str, list[dict[str, Any]]]:
    for name in list(os.environ):
        if name.startswith(("OPENAI_", "AGENTRAG_LLM")):
            del os.environ[name]
    from agentrag.eval.key import judge, load_key
    from agentrag.kb import KnowledgeBase
    from agentrag.settings import load_settings

    key = load_key(key_path)
    rows: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as home, KnowledgeBase.open("sample", settings=load_settings(Path(home))) as kb:
        report = kb.ingest([docs])
        if report.failed:
            raise SystemExit(f"{report.failed} documents of {docs} failed to ingest")
        for mode in modes:
            rows[mode] = []
            for q in key.questions:
                answer = kb.ask(q.question, mode=mode)
                verdict = judge(q, answer)
                rows[mode].append(
                    {
                        "id": q.id,
                        "question": q.question,
                        "expected": _expected(q),
                        "short_answer": answer.short_answer,
                        "confidence": str(answer.confidence),
                        "stop_reason": str(answer.stop_reason),
                        "correct": verdict.correct,
                        "problems": verdict.problems,
                        "ms": answer.usage.ms,
                    }
                )
    return rows


def markdown(rows: dict[str, list[dict[str, Any]]], command: str) -> str:
    lines = [
        "# The sample corpus against its answer key, model-free",
        "",
        f"Command: `{command}`",
        "",
    ]
    for mode, answers in rows.items():
        correct = sum(r["correct"] for r in answers)
        lines += [
            f"## {mode}: {correct} of {len(answers)} correct",
            "",
            "| # | question | expected | short answer | confidence | stop reason | verdict |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in answers:
            verdict = "correct" if r["correct"] else "wrong: " + "; ".join(r["problems"])
            lines.append(
                f"| {r['id']} | {_cell(r['question'])} | {_cell(r['expected'], 60)} | {_cell(r['short_answer'], 40)} "
                f"| {r['confidence']} | {r['stop_reason']} | {_cell(verdict, 90)} |"
            )
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=Path, default=None, help="documents to ingest (default: the bundled sample)")
    parser.add_argument("--key", type=Path, default=None, help="answer key JSON (default: the sample's own key)")
    parser.add_argument("--modes", default="auto,agent", help="comma-separated modes to ask in")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-out" / "answer-key", help="where to write")
    args = parser.parse_args()
    docs = args.docs or Path(str(files("agentrag") / "sample" / "docs"))
    rows = run(docs, args.key, [m.strip() for m in args.modes.split(",") if m.strip()])
    command = shlex.join(["python", "benchmarks/answer_key.py", *sys.argv[1:]])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ANSWER-KEY.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    report = markdown(rows, command)
    (args.out / "ANSWER-KEY.md").write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
