"""`agentrag ask`, `agentrag chat` and `agentrag failures`: answers with checked citations, and what went wrong."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from agentrag.cli.common import (
    FILTER_HELP,
    HomeOption,
    JsonOption,
    KbOption,
    emit_json,
    err,
    friendly_errors,
    model_free_notice,
    open_kb,
    out,
    parse_filter,
    parse_pairs,
    question_progress,
    settings_for,
    snippet,
)
from agentrag.errors import ConfigError
from agentrag.layout import Layout
from agentrag.vocab import Confidence, Mode, Preset

if TYPE_CHECKING:  # the agent, the knowledge base and the models load when a question is asked, not for --help
    from agentrag.kb import KnowledgeBase
    from agentrag.session import Sessions
    from agentrag.types import Answer

MODE_HELP = (
    "auto routes; direct: no search; single: search once; iterative: grade and retry; agent: plan, search, follow up."
)

# The budget fields with a flag of their own; `--budget KEY=VALUE` reaches every field of the budget model.
BUDGET_FLAGS = {
    "--max-searches": "max_retrieval_calls",
    "--max-llm-calls": "max_llm_calls",
    "--max-seconds": "max_seconds",
    "-k": "evidence_k",
}
MaxSearches = Annotated[
    int | None, typer.Option("--max-searches", help="At most N searches for this question (overrides the preset).")
]
MaxLLMCalls = Annotated[int | None, typer.Option("--max-llm-calls", help="At most N LLM calls (overrides the preset).")]
MaxSeconds = Annotated[
    float | None, typer.Option("--max-seconds", help="Wall time for the whole question (overrides the preset).")
]
EvidenceK = Annotated[
    int | None, typer.Option("-k", help="At most K passages handed to the answer (the preset's evidence_k).")
]
BudgetPairs = Annotated[
    list[str] | None,
    typer.Option(
        "--budget",
        metavar="KEY=VALUE",
        help="Override any budget field of the preset, e.g. --budget max_tokens=8000 or a nested one, "
        "--budget context_split.history=0.2 (repeatable).",
    ),
]


def budget_overrides(
    max_searches: int | None,
    max_llm_calls: int | None,
    max_seconds: float | None,
    pairs: list[str] | None,
    k: int | None = None,
) -> dict[str, Any] | None:
    """The budget overrides given on the command line, checked against the budget model (errors name the flag)."""
    from agentrag.agent.budget_overrides import check_overrides, nest_dotted

    overrides: dict[str, Any] = nest_dotted(parse_pairs(pairs or [], "--budget"))
    flags = dict(zip(BUDGET_FLAGS, (max_searches, max_llm_calls, max_seconds, k), strict=True))
    for flag, value in flags.items():
        if value is None:
            continue
        key = BUDGET_FLAGS[flag]
        if key in overrides:
            raise ConfigError(f"{flag} and --budget {key}=... both set the budget's {key}: give one")
        overrides[key] = value
    labels = {key: flag for flag, key in BUDGET_FLAGS.items() if flags[flag] is not None}
    return check_overrides(overrides, labels) or None


def print_answer(answer: Answer, streamed: str | None = None) -> None:
    """The short answer on its own line, the answer (unless it was `streamed`: then only what the citation check
    changed), its sources, how sure it is, and the sources that disagree, newest first, the one in force marked."""
    if answer.short_answer:
        out.print(f"[bold]Answer:[/] [bold green]{escape(answer.short_answer)}[/]", highlight=False)
    if streamed is None or not same_text(streamed, answer.answer):
        # Not streamed, or the stream was replaced (it broke off and a fallback answered): the text as checked.
        out.print(("\n" if answer.short_answer else "") + escape(answer.answer), highlight=False)
        streamed = None
    _print_sources(answer)
    if answer.unsupported and streamed is None:
        out.print(
            f"\n[yellow]{len(answer.unsupported)} sentence(s) could not be matched to a source and are marked.[/]"
        )
    elif answer.unsupported:
        # The streamed text cannot be marked after the fact: one line names what the check found unsourced.
        quoted = " · ".join(f"“{s}”" for s in answer.unsupported)
        out.print(
            f"\n[yellow]unverified (no source found, citation removed):[/] {escape(quoted)}",
            highlight=False,
            soft_wrap=True,
        )
    _print_assessment(answer)
    u = answer.usage
    out.print(
        f"\n[dim]{answer.mode} · {answer.stop_reason} · {u.llm_calls} LLM calls · {u.retrieval_calls} searches · "
        f"{u.ms} ms · trace {answer.trace_id}[/]"
    )


def same_text(streamed: str, checked: str) -> bool:
    """Whether the checked answer is the streamed one with only its citation marks changed."""
    from agentrag.agent.citations import UNVERIFIED_EN, UNVERIFIED_ZH, strip_markers

    def bare(text: str) -> str:
        return "".join(strip_markers(text.replace(UNVERIFIED_EN, "").replace(UNVERIFIED_ZH, "")).split())

    return bare(streamed) == bare(checked)


def _print_sources(answer: Answer) -> None:
    if answer.citations:
        out.print("\n[bold]Sources[/]")
        for c in answer.citations:
            where = Path(c.source).name + (f" p.{c.page}" if c.page else "")
            heading = f" · {c.heading}" if c.heading else ""
            out.print(f"  [cyan][{c.n}][/] [bold]{escape(where)}[/][dim]{escape(heading)}[/]", highlight=False)
            out.print(f"      [dim]“{escape(snippet(c.quote, 200))}”[/]", highlight=False)


_CONFIDENCE_STYLE = {Confidence.HIGH: "green", Confidence.PARTIAL: "yellow", Confidence.LOW: "bold yellow"}


def _print_assessment(answer: Answer) -> None:
    from agentrag.server.answer_text import confidence_line, conflict_heading, conflict_rows, shows_confidence

    if shows_confidence(answer):
        style = _CONFIDENCE_STYLE[answer.confidence]
        out.print(f"\n[{style}]{escape(confidence_line(answer.confidence))}[/]", highlight=False)
    for conflict in answer.conflicts:
        out.print(f"\n[bold yellow]{escape(conflict_heading(conflict))}[/]", highlight=False)
        for row in conflict_rows(conflict):
            mark = "  [bold green]in force[/]" if row.in_force else ""
            out.print(f"  [bold]{escape(row.value)}[/]  {escape(row.where)} [cyan][{row.n}][/]{mark}", highlight=False)


@friendly_errors
def ask(
    question: Annotated[str, typer.Argument(help="Your question, in any language.")],
    mode: Annotated[Mode, typer.Option("--mode", help=MODE_HELP)] = Mode.AUTO,
    preset: Annotated[
        Preset, typer.Option("--preset", help="Budget preset: LLM calls, searches, tokens, wall time.")
    ] = Preset.BALANCED,
    stream: Annotated[bool, typer.Option("--stream", help="Show progress as it happens, then the answer.")] = False,
    max_searches: MaxSearches = None,
    max_llm_calls: MaxLLMCalls = None,
    max_seconds: MaxSeconds = None,
    budget: BudgetPairs = None,
    k: EvidenceK = None,
    filter_: Annotated[list[str] | None, typer.Option("--filter", help=FILTER_HELP)] = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Answer a question from the knowledge base, with checked citations.

    Example: agentrag ask "标准版和企业版有什么区别？" --stream --max-searches 4 --filter team=sales
    """
    flt = parse_filter(filter_ or [])
    overrides = budget_overrides(max_searches, max_llm_calls, max_seconds, budget, k)
    model_free_notice(settings_for(home), as_json)
    streamed: list[str] = []

    def on_token(piece: str) -> None:
        streamed.append(piece)
        print(piece, end="", flush=True)

    with open_kb(home, kb) as knowledge_base:
        answer = knowledge_base.ask(
            question,
            mode=mode,
            preset=preset,
            budget=overrides,
            on_event=question_progress(stream),
            on_token=on_token if stream and not as_json else None,
            flt=flt,
        )
    if as_json:
        emit_json(answer.contract())
        return
    if streamed:
        print("\n", flush=True)
        print_answer(answer, streamed="".join(streamed))
        return
    print_answer(answer)


@friendly_errors
def chat(
    mode: Annotated[Mode, typer.Option("--mode", help="Answer mode for every turn.")] = Mode.AUTO,
    preset: Annotated[Preset, typer.Option("--preset", help="Budget preset.")] = Preset.BALANCED,
    conversation_id: Annotated[
        str | None, typer.Option("--conversation", help="Resume (and keep) a named conversation in the data directory.")
    ] = None,
    max_searches: MaxSearches = None,
    max_llm_calls: MaxLLMCalls = None,
    max_seconds: MaxSeconds = None,
    budget: BudgetPairs = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Talk with the knowledge base: follow-up questions are understood in context. /new starts over, /exit quits.

    With --json, one JSON object per turn (JSON lines), read from standard input.
    """
    from agentrag.kb import KnowledgeBase
    from agentrag.session import LOCAL_OWNER, Sessions

    overrides = budget_overrides(max_searches, max_llm_calls, max_seconds, budget)
    settings = settings_for(home)
    model_free_notice(settings, as_json)
    interactive = sys.stdin.isatty() and not as_json
    with KnowledgeBase.open(kb, settings=settings, create=False) as knowledge_base, Sessions(settings) as sessions:
        if conversation_id:
            sessions.conversation(LOCAL_OWNER, conversation_id)  # a bad name fails now, not after a question
        if interactive:
            out.print(f"[bold]{kb}[/]: ask a question (/new to start over, /exit to quit)")
        _chat_loop(sessions, knowledge_base, conversation_id, mode, preset, overrides, interactive, as_json)


def _chat_loop(
    sessions: Sessions,
    knowledge_base: KnowledgeBase,
    conversation_id: str | None,
    mode: Mode,
    preset: Preset,
    budget: dict[str, Any] | None,
    interactive: bool,
    as_json: bool,
) -> None:
    """One answer per line of input; a named conversation is kept in the data directory after every turn."""
    from agentrag.agent.memory import Conversation
    from agentrag.session import LOCAL_OWNER

    conversation = None if conversation_id else Conversation(conversation_id="cli")
    while True:
        try:
            line = input("you> " if interactive else "")
        except EOFError:
            break
        text = line.strip()
        if not text:
            continue
        if text in ("/exit", "/quit"):
            break
        if text == "/new":
            if conversation_id:
                sessions.reset(LOCAL_OWNER, conversation_id)
            else:
                conversation = Conversation(conversation_id="cli")
            err.print("[dim]new conversation[/]")
            continue
        answer = sessions.ask(
            knowledge_base,
            text,
            owner=LOCAL_OWNER,
            conversation_id=conversation_id,
            conversation=conversation,
            mode=mode,
            preset=preset,
            budget=budget,
            on_event=question_progress(interactive),
        )
        if as_json:
            emit_json({**answer.contract(), "question": text, "search_query": answer.search_query})
        else:
            print_answer(answer)


def failures(
    limit: Annotated[int, typer.Option("--limit", help="Show the most recent N.", min=1)] = 20,
    home: HomeOption = None,
    kb: Annotated[str | None, typer.Option("--kb", help="Only this knowledge base \\[default: all].")] = None,
    as_json: JsonOption = False,
) -> None:
    """Questions that ended in fallback, budget or no_evidence: what the knowledge base may be missing.

    Open one with its trace: see <home>/traces/KB/TRACE_ID.jsonl
    """
    from agentrag.failures import FailureLog

    layout = Layout(settings_for(home).home)
    if kb is not None:  # the log records ids: a display name ("财务制度") stands for its knowledge base's id
        from agentrag.kb import resolve_kb

        kb = resolve_kb(layout.home, kb)
    rows = FailureLog(layout.failures).recent(limit, kb)
    if as_json:
        emit_json({"failures": rows})
        return
    if not rows:
        out.print("No failed questions recorded.")
        return
    for row in reversed(rows):
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["ts"]))
        out.print(
            f"[dim]{when}[/] [bold]{escape(row['kb'])}[/] [yellow]{row['stop_reason']}[/] "
            f"{escape(row['question'])}  [dim]trace {row['trace_id']}[/]",
            soft_wrap=True,
        )
