"""The `agentrag` command. Thin: it parses arguments and calls the Python API (agentrag.kb)."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentrag import __version__
from agentrag.errors import AgentragError
from agentrag.ingest.pipeline import discover
from agentrag.kb import FAILURES_FILE, KnowledgeBase
from agentrag.settings import Settings, load_settings
from agentrag.text.dates import parse_date
from agentrag.trace import TraceEvent
from agentrag.types import Answer, Channel, IngestStatus, SearchFilter

app = typer.Typer(
    name="agentrag",
    help=(
        "Agentic RAG over your own documents, Chinese and English.\n\n"
        'Start with:  agentrag ingest ./docs   then   agentrag search "your question"\n\n'
        "Data lives in --home (default $AGENTRAG_HOME, else ./.agentrag); one home holds many knowledge "
        "bases, picked with --kb (default 'default')."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)
docs_app = typer.Typer(help="List, show and delete the documents of a knowledge base.", no_args_is_help=True)
app.add_typer(docs_app, name="docs")
keys_app = typer.Typer(help="API keys for the HTTP service (`agentrag serve`).", no_args_is_help=True)
app.add_typer(keys_app, name="keys")

out = Console()
err = Console(stderr=True)

HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home", help="Data directory holding the knowledge bases \\[default: $AGENTRAG_HOME or ./.agentrag]."
    ),
]
KbOption = Annotated[str, typer.Option("--kb", help="Knowledge base name inside the data directory.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text (for scripts).")]


class ChannelChoice(StrEnum):
    hybrid = "hybrid"
    bm25 = "bm25"
    dense = "dense"


class ModeChoice(StrEnum):
    auto = "auto"
    direct = "direct"
    single = "single"
    iterative = "iterative"
    agent = "agent"


class PresetChoice(StrEnum):
    fast = "fast"
    balanced = "balanced"
    thorough = "thorough"


class TaskChoice(StrEnum):
    retrieval = "retrieval"
    answer = "answer"


F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str, as_json: bool, code: int = 2) -> NoReturn:
    if as_json:
        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


def friendly_errors(func: F) -> F:
    """Errors a user can act on become one readable line (or {"error": ...} with --json), exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AgentragError as exc:
            _fail(str(exc), bool(kwargs.get("as_json")))
        except ValueError as exc:  # pydantic validation of settings and arguments
            _fail(str(exc), bool(kwargs.get("as_json")))

    return wrapper  # type: ignore[return-value]


def _settings(home: Path | None) -> Settings:
    return load_settings(home)


def _open(home: Path | None, kb: str, create: bool = False) -> KnowledgeBase:
    return KnowledgeBase.open(kb, settings=_settings(home), create=create)


def _emit_json(payload: Any) -> None:
    print(json.dumps(payload, ensure_ascii=False, default=str))


def _parse_pairs(pairs: list[str], option: str) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=option)
        parsed[key.strip()] = value.strip()
    return parsed


FILTER_HELP = (
    "Restrict results: source=GLOB (e.g. source='*.pdf'), doc=ID, after=YYYY-MM-DD, before=YYYY-MM-DD; "
    "any other KEY=VALUE matches a document tag. Repeatable."
)


def parse_filter(pairs: list[str]) -> SearchFilter | None:
    if not pairs:
        return None
    flt = SearchFilter()
    for key, value in _parse_pairs(pairs, "--filter").items():
        try:
            if key == "source":
                flt.sources.append(value if any(c in value for c in "*?[") else f"*{value}*")
            elif key in ("doc", "doc_id"):
                flt.doc_ids.append(value)
            elif key in ("after", "from", "date_from"):
                flt.date_from = parse_date(value)
            elif key in ("before", "to", "date_to"):
                flt.date_to = parse_date(value)
            else:
                flt.tags[key.removeprefix("tag.")] = value
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--filter") from exc
    return flt


def _corpus_units(files: list[Path]) -> int:
    """How many documents the files hold (a JSONL corpus holds one per line), for the progress bar."""
    total = 0
    for path in files:
        if path.suffix.lower() == ".jsonl" and path.is_file():
            with path.open("rb") as f:
                total += sum(1 for line in f if line.strip())
        else:
            total += 1
    return total


# ---------------------------------------------------------------------------------------------- ingest


@app.command()
@friendly_errors
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (txt, md, html, pdf, docx, jsonl corpus).")],
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Tag every document: KEY=VALUE (repeatable).")] = None,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="One line per document as it is stored.")] = False,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Add files and folders to a knowledge base. Unchanged files are skipped, changed ones replaced.

    Example: agentrag ingest ./handbook ./faq.md --tag team=support
    """
    tags = _parse_pairs(tag or [], "--tag")
    knowledge_base = _open(home, kb, create=True)
    total = _corpus_units(discover(list(paths)))
    show_bar = not as_json and not verbose and err.is_terminal
    failures: list[IngestStatus] = []

    with Progress(
        TextColumn("[bold]ingest[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[summary]}"),
        TimeElapsedColumn(),
        console=err,
        disable=not show_bar,
        transient=True,
    ) as bar:
        task = bar.add_task("ingest", total=total or None, summary="")
        counts = {"added": 0, "updated": 0, "unchanged": 0, "failed": 0}

        def on_item(item: IngestStatus) -> None:
            counts[item.status] += 1
            if item.status == "failed":
                failures.append(item)
                if not as_json:
                    err.print(f"[red]✗[/] {escape(item.path)}: {escape(item.error or 'failed')}", soft_wrap=True)
            elif verbose and not as_json:
                print(f"{item.status:9s} {item.path} ({item.chunks} chunks)", flush=True)
            bar.update(task, advance=1, summary=" · ".join(f"{k} {v}" for k, v in counts.items() if v))

        report = knowledge_base.ingest(list(paths), tags, on_item)
    knowledge_base.close()
    if as_json:
        _emit_json({"kb": kb, **report.model_dump(exclude={"items"}), "failures": [f.model_dump() for f in failures]})
    else:
        out.print(
            f"[bold]{kb}[/]: added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
            f"failed {report.failed} · {report.chunks} chunks · {report.seconds:.1f} s"
        )
    if report.failed:
        raise typer.Exit(1)


# ---------------------------------------------------------------------------------------------- search


def _snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@app.command()
@friendly_errors
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in any language.")],
    k: Annotated[int, typer.Option("-k", help="How many hits.", min=1, max=1000)] = 10,
    channel: Annotated[
        ChannelChoice, typer.Option("--channel", help="hybrid (BM25 + dense, fused), bm25 alone, or dense alone.")
    ] = ChannelChoice.hybrid,
    filter_: Annotated[list[str] | None, typer.Option("--filter", help=FILTER_HELP)] = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Search a knowledge base: ranked passages with the evidence from each channel.

    Example: agentrag search "退款需要几天" -k 5 --filter source='*.md'
    """
    flt = parse_filter(filter_ or [])
    with _open(home, kb) as knowledge_base:
        chosen: Channel = channel.value
        hits = knowledge_base.search(query, k, chosen, flt)
    if as_json:
        _emit_json({"query": query, "kb": kb, "channel": channel.value, "hits": [h.contract() for h in hits]})
        return
    if not hits:
        out.print(f"No results in [bold]{kb}[/] for {escape(query)!r}.")
        return
    for h in hits:
        why = ", ".join(f"{name} #{cs.rank}" for name, cs in h.channels.items())
        where = Path(h.chunk.source).name + (f" p.{h.chunk.page}" if h.chunk.page else "")
        heading = f" · {h.chunk.heading}" if h.chunk.heading else ""
        out.print(
            f"[bold cyan]{h.rank}.[/] [bold]{escape(where)}[/][dim]{escape(heading)}[/]  "
            f"[green]{h.score:.3f}[/] [dim]({why})[/]"
        )
        out.print("   " + escape(_snippet(h.chunk.text, 240)), highlight=False)


# ---------------------------------------------------------------------------------------------- ask


_notice_shown = False


def _model_free_notice(settings: Settings, as_json: bool) -> None:
    """Say once per process, plainly, that no LLM is configured."""
    global _notice_shown
    from agentrag.llm.client import model_free_notice

    notice = model_free_notice(settings.llm)
    if notice and not _notice_shown and not as_json:
        err.print(f"[dim]{escape(notice)}[/]", soft_wrap=True)
        _notice_shown = True


def _progress_printer(event: TraceEvent) -> None:
    if event.message:
        err.print(f"[dim]… {escape(event.message)}[/]", soft_wrap=True, highlight=False)


def print_answer(answer: Answer) -> None:
    out.print(escape(answer.answer), highlight=False)
    if answer.citations:
        out.print("\n[bold]Sources[/]")
        for c in answer.citations:
            where = Path(c.source).name + (f" p.{c.page}" if c.page else "")
            heading = f" · {c.heading}" if c.heading else ""
            out.print(f"  [cyan][{c.n}][/] [bold]{escape(where)}[/][dim]{escape(heading)}[/]", highlight=False)
            out.print(f"      [dim]“{escape(_snippet(c.quote, 200))}”[/]", highlight=False)
    if answer.unsupported:
        out.print(
            f"\n[yellow]{len(answer.unsupported)} sentence(s) could not be matched to a source and are marked.[/]"
        )
    u = answer.usage
    out.print(
        f"\n[dim]{answer.mode} · {answer.stop_reason} · {u.llm_calls} LLM calls · {u.retrieval_calls} searches · "
        f"{u.ms} ms · trace {answer.trace_id}[/]"
    )


@app.command()
@friendly_errors
def ask(
    question: Annotated[str, typer.Argument(help="Your question, in any language.")],
    mode: Annotated[
        ModeChoice,
        typer.Option(
            "--mode",
            help="auto routes; direct: no search; single: search once; iterative: grade and "
            "retry; agent: plan, search, follow up.",
        ),
    ] = ModeChoice.auto,
    preset: Annotated[
        PresetChoice, typer.Option("--preset", help="Budget preset: LLM calls, searches, tokens, wall time.")
    ] = PresetChoice.balanced,
    stream: Annotated[bool, typer.Option("--stream", help="Show progress as it happens, then the answer.")] = False,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Answer a question from the knowledge base, with checked citations.

    Example: agentrag ask "标准版和企业版有什么区别？" --stream
    """
    settings = _settings(home)
    _model_free_notice(settings, as_json)
    streamed: list[str] = []

    def on_token(piece: str) -> None:
        streamed.append(piece)
        print(piece, end="", flush=True)

    with _open(home, kb) as knowledge_base:
        answer = knowledge_base.ask(
            question,
            mode=mode.value,
            preset=preset.value,
            on_event=_progress_printer if stream else None,
            on_token=on_token if stream and not as_json else None,
        )
    if as_json:
        _emit_json(answer.contract())
        return
    if streamed:
        print("\n")
        if "".join(streamed).strip() != answer.answer.strip():
            out.print("[dim]After the citation check:[/]")
            print_answer(answer)
            return
        answer = answer.model_copy(update={"answer": ""})
    print_answer(answer)


@app.command()
@friendly_errors
def chat(
    mode: Annotated[ModeChoice, typer.Option("--mode", help="Answer mode for every turn.")] = ModeChoice.auto,
    preset: Annotated[PresetChoice, typer.Option("--preset", help="Budget preset.")] = PresetChoice.balanced,
    conversation_id: Annotated[
        str | None, typer.Option("--conversation", help="Resume (and keep) a named conversation in the data directory.")
    ] = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Talk with the knowledge base: follow-up questions are understood in context. /new starts over, /exit quits.

    With --json, one JSON object per turn (JSON lines), read from standard input.
    """
    from agentrag.agent.memory import Conversation, ConversationStore

    settings = _settings(home)
    _model_free_notice(settings, as_json)
    store = ConversationStore(settings.home / "conversations")
    conversation = store.load(conversation_id) if conversation_id else Conversation(conversation_id="cli")
    interactive = sys.stdin.isatty() and not as_json
    with _open(home, kb) as knowledge_base:
        if interactive:
            out.print(f"[bold]{kb}[/]: ask a question (/new to start over, /exit to quit)")
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
                conversation = Conversation(conversation_id=conversation.conversation_id)
                out.print("[dim]new conversation[/]")
                continue
            answer = knowledge_base.ask(
                text,
                mode=mode.value,
                preset=preset.value,
                conversation=conversation,
                on_event=_progress_printer if interactive else None,
            )
            if conversation_id:
                store.save(conversation)
            if as_json:
                _emit_json({**answer.contract(), "question": text, "search_query": answer.search_query})
            else:
                print_answer(answer)


@app.command()
@friendly_errors
def failures(
    limit: Annotated[int, typer.Option("--limit", help="Show the most recent N.", min=1)] = 20,
    home: HomeOption = None,
    kb: Annotated[str | None, typer.Option("--kb", help="Only this knowledge base \\[default: all].")] = None,
    as_json: JsonOption = False,
) -> None:
    """Questions that ended in fallback, budget or no_evidence: what the knowledge base may be missing.

    Open one with its trace: see <home>/traces/KB/TRACE_ID.jsonl
    """
    settings = _settings(home)
    path = settings.home / FAILURES_FILE
    rows: list[dict[str, Any]] = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if kb is None or row.get("kb") == kb:
                    rows.append(row)
    rows = rows[-limit:]
    if as_json:
        _emit_json({"failures": rows})
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


# ---------------------------------------------------------------------------------------------- docs


@docs_app.command("list")
@friendly_errors
def docs_list(
    limit: Annotated[int | None, typer.Option("--limit", help="Show at most this many.")] = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """List documents: id, title, source, chunks, date, tags."""
    with _open(home, kb) as knowledge_base:
        documents = knowledge_base.documents(limit)
        stats = knowledge_base.store.stats()
    if as_json:
        _emit_json(
            {
                "kb": kb,
                "total": stats.documents,
                "chunks": stats.chunks,
                "documents": [d.model_dump(mode="json") for d in documents],
            }
        )
        return
    table = Table(expand=True)
    for col in ("doc_id", "title", "source", "chunks", "date", "tags"):
        table.add_column(col, overflow="fold")
    for d in documents:
        table.add_row(
            d.doc_id,
            escape(d.title),
            escape(d.source),
            str(d.n_chunks),
            d.date.isoformat() if d.date else "",
            escape(", ".join(f"{k}={v}" for k, v in d.tags.items())),
        )
    out.print(table)
    out.print(f"{stats.documents} documents, {stats.chunks} chunks in [bold]{kb}[/] ({stats.embedder})")


@docs_app.command("show")
@friendly_errors
def docs_show(
    doc_id: Annotated[str, typer.Argument(help="Document id (see `agentrag docs list`).")],
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Show one document's metadata and its chunks."""
    with _open(home, kb) as knowledge_base:
        document, chunks = knowledge_base.document(doc_id)
    if as_json:
        _emit_json(
            {"document": document.model_dump(mode="json"), "chunks": [c.model_dump(mode="json") for c in chunks]}
        )
        return
    out.print(f"[bold]{escape(document.title)}[/]  ({document.doc_id})")
    out.print(f"source: {escape(document.source)}")
    out.print(f"date: {document.date or '-'} · chunks: {document.n_chunks} · characters: {document.chars}")
    if document.tags:
        out.print("tags: " + escape(", ".join(f"{k}={v}" for k, v in document.tags.items())))
    for c in chunks:
        where = " · ".join(x for x in (c.heading, f"p.{c.page}" if c.page else "") if x)
        out.print(f"\n[cyan]#{c.position}[/] [dim]{escape(where)}[/]")
        out.print(escape(c.text))


@docs_app.command("delete")
@friendly_errors
def docs_delete(
    doc_id: Annotated[str, typer.Argument(help="Document id (see `agentrag docs list`).")],
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Delete a document and everything indexed from it."""
    with _open(home, kb) as knowledge_base:
        knowledge_base.delete(doc_id)
    if as_json:
        _emit_json({"deleted": doc_id, "kb": kb})
    else:
        out.print(f"deleted {doc_id} from [bold]{kb}[/]")


# ---------------------------------------------------------------------------------------------- eval


@app.command("eval")
@friendly_errors
def eval_command(
    dataset_dir: Annotated[Path, typer.Argument(help="A folder with corpus.jsonl, queries.jsonl and qrels.tsv.")],
    task: Annotated[
        TaskChoice,
        typer.Option("--task", help="retrieval: rank passages per channel; answer: ask every question end to end."),
    ] = TaskChoice.retrieval,
    mode: Annotated[ModeChoice, typer.Option("--mode", help="Answer mode for --task answer.")] = ModeChoice.auto,
    preset: Annotated[
        PresetChoice, typer.Option("--preset", help="Budget preset for --task answer.")
    ] = PresetChoice.balanced,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N queries, in file order.", min=1)
    ] = None,
    channel: Annotated[
        ChannelChoice | None, typer.Option("--channel", help="Channel for the headline numbers \\[default: settings].")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the result JSON here ('-' for stdout).")
    ] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write a Markdown report (+ PNG chart) here.")] = None,
    home: HomeOption = None,
) -> None:
    """Measure retrieval or answers on a benchmark-format dataset; the knowledge base is built once and reused.

    Example: agentrag eval ../shared/data/musique --json musique.json --report musique.md
    """
    from agentrag.eval.report import write_report
    from agentrag.eval.runner import run_eval
    from agentrag.kb import shared_embedder

    settings = _settings(home)
    embedder = shared_embedder(settings.embedder)
    quiet = json_out is not None and str(json_out) == "-"
    show_bar = err.is_terminal and not quiet
    with Progress(
        TextColumn("[bold]{task.description}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not show_bar,
        transient=True,
    ) as bar:
        ingest_task = bar.add_task("ingest", total=None)
        query_task = bar.add_task("queries", total=None, visible=False)

        def on_ingest(item: IngestStatus) -> None:
            bar.update(ingest_task, advance=1)

        def on_query(done: int) -> None:
            bar.update(query_task, completed=done, visible=True)

        run = run_eval(
            dataset_dir,
            lambda name: KnowledgeBase.open(name, settings=settings, embedder=embedder),
            settings,
            embedder.name,
            limit=limit,
            channel=channel.value if channel else None,
            ingest_progress=on_ingest,
            query_progress=on_query,
            task=task.value,
            mode=mode.value,
            preset=preset.value,
        )
    result = run.result
    if json_out is not None:
        if str(json_out) == "-":
            _emit_json(result)
        else:
            json_out.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    if report is not None:
        write_report(result, report)
    if not quiet:
        r, a, p = result["retrieval"], result["answer"], result["process"]
        what = result["details"].get("channel") or f"{result['details'].get('mode')} mode"
        line = (
            f"[bold]{result['dataset']}[/] ({result['queries']} queries, {what}): R@10 {r['recall@10']:.3f} · "
            f"AllR@10 {r['all_recall@10']:.3f} · nDCG@10 {r['ndcg@10']:.3f} · MRR@10 {r['mrr@10']:.3f} · "
            f"p50 {p['latency_ms_p50']:.2f} ms"
        )
        if a.get("contains") is not None:
            line += f" · contains {a['contains']:.3f} · F1 {a['f1']:.3f} · abstain {a['abstain_rate']:.3f}"
        out.print(line, soft_wrap=True)


# ---------------------------------------------------------------------------------------------- service


@app.command()
@friendly_errors
def serve(
    host: Annotated[str | None, typer.Option("--host", help="Interface to listen on \\[default: 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port \\[default: 8000].", min=1, max=65535)] = None,
    home: HomeOption = None,
) -> None:
    """Run the HTTP service: REST API, streaming answers, OpenAI-compatible chat, and the web page at /.

    Create a key first: agentrag keys create --admin
    """
    import uvicorn

    from agentrag.server.app import create_app

    settings = _settings(home)
    host = host or settings.server.host
    port = port or settings.server.port
    err.print(
        f"agentrag {__version__} serving {settings.home} on http://{host}:{port} (web page at /, API docs at /docs)"
    )
    _model_free_notice(settings, False)
    uvicorn.run(create_app(settings), host=host, port=port, log_level="info")


@keys_app.command("create")
@friendly_errors
def keys_create(
    kb: Annotated[
        list[str] | None, typer.Option("--kb", help="A knowledge base this key may use (repeatable).")
    ] = None,
    admin: Annotated[bool, typer.Option("--admin", help="Every knowledge base, present and future.")] = False,
    label: Annotated[str, typer.Option("--label", help="A note to recognise the key by.")] = "",
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Create an API key and print it once (only its hash is stored).

    Example: agentrag keys create --kb support --kb sales
    """
    from agentrag.server.keys import KeyStore

    store = KeyStore(_settings(home).home)
    key, secret = store.create(kb or [], admin=admin, label=label)
    store.close()
    if as_json:
        _emit_json({"key": secret, "key_id": key.key_id, "kbs": sorted(key.kbs), "admin": key.admin})
        return
    scope = "every knowledge base" if admin else (", ".join(sorted(key.kbs)) or "knowledge bases it creates")
    out.print(f"{secret}\n[dim]key {key.key_id} for {escape(scope)}; shown once, store it now[/]")


@keys_app.command("list")
@friendly_errors
def keys_list(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The API keys of this data directory: id, knowledge bases, label, created (secrets are never shown)."""
    from agentrag.server.keys import KeyStore

    store = KeyStore(_settings(home).home)
    keys = store.list()
    store.close()
    rows: list[dict[str, Any]] = [
        {"key_id": k.key_id, "kbs": sorted(k.kbs), "admin": k.admin, "label": k.label, "created_at": created}
        for k, created in keys
    ]
    if as_json:
        _emit_json({"keys": rows})
        return
    if not rows:
        out.print("No API keys yet. Create one: agentrag keys create --admin")
        return
    for row in rows:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(row["created_at"]))
        scope = "admin (every knowledge base)" if row["admin"] else (", ".join(row["kbs"]) or "(none yet)")
        label = f"  [dim]{escape(row['label'])}[/]" if row["label"] else ""
        out.print(f"{row['key_id']}  {when}  {escape(scope)}{label}", soft_wrap=True)


@keys_app.command("revoke")
@friendly_errors
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id, as `agentrag keys list` shows it (not the secret).")],
    home: HomeOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke an API key: every request made with it gets 401 from now on.

    Example: agentrag keys revoke 3f9a1c2b7d4e
    """
    from agentrag.server.keys import KeyStore

    store = KeyStore(_settings(home).home)
    found = store.revoke(key_id)
    store.close()
    if not found:
        _fail(f"no API key with id {key_id!r} (see `agentrag keys list`)", as_json)
    if as_json:
        _emit_json({"revoked": key_id})
    else:
        out.print(f"Revoked key {key_id}.")


@app.command()
def sample(
    copy_to: Annotated[
        Path | None, typer.Option("--copy", help="Copy the sample documents into this folder instead.")
    ] = None,
) -> None:
    """Print the folder of the bundled sample corpus (Chinese and English documents of a fictional team).

    Example: agentrag ingest "$(agentrag sample)" && agentrag search "出差住宿标准是多少？"
    """
    import shutil
    from importlib.resources import files

    source = Path(str(files("agentrag") / "sample" / "docs"))
    if copy_to is None:
        print(source)
        return
    shutil.copytree(source, copy_to, dirs_exist_ok=True)
    print(copy_to)


@app.command()
def version() -> None:
    """Print the version."""
    print(__version__)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
