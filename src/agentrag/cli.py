"""The `agentrag` command. Thin: it parses arguments and calls the Python API (agentrag.kb)."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from enum import Enum
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
from agentrag.kb import KnowledgeBase
from agentrag.settings import Settings, load_settings
from agentrag.text.dates import parse_date
from agentrag.types import Channel, Hit, IngestStatus, SearchFilter

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

out = Console()
err = Console(stderr=True)

HomeOption = Annotated[
    Path | None,
    typer.Option("--home", help="Data directory holding the knowledge bases [default: $AGENTRAG_HOME or ./.agentrag]."),
]
KbOption = Annotated[str, typer.Option("--kb", help="Knowledge base name inside the data directory.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text (for scripts).")]


class ChannelChoice(str, Enum):
    hybrid = "hybrid"
    bm25 = "bm25"
    dense = "dense"


class TaskChoice(str, Enum):
    retrieval = "retrieval"


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


def hit_json(hit: Hit) -> dict[str, Any]:
    c = hit.chunk
    return {
        "rank": hit.rank,
        "score": round(hit.score, 6),
        "chunk_id": c.chunk_id,
        "doc_id": c.doc_id,
        "source": c.source,
        "title": c.title,
        "heading": c.heading,
        "page": c.page,
        "date": c.date.isoformat() if c.date else None,
        "text": c.text,
        "channels": {k: v.model_dump() for k, v in hit.channels.items()},
        "rerank_score": hit.rerank_score,
    }


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
        _emit_json({"query": query, "kb": kb, "channel": channel.value, "hits": [hit_json(h) for h in hits]})
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
    task: Annotated[TaskChoice, typer.Option("--task", help="What to measure.")] = TaskChoice.retrieval,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N queries, in file order.", min=1)
    ] = None,
    channel: Annotated[
        ChannelChoice | None, typer.Option("--channel", help="Channel for the headline numbers [default: settings].")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the result JSON here ('-' for stdout).")
    ] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write a Markdown report (+ PNG chart) here.")] = None,
    home: HomeOption = None,
) -> None:
    """Measure retrieval on a benchmark-format dataset; the knowledge base is built once and reused.

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
        r = result["retrieval"]
        out.print(
            f"[bold]{result['dataset']}[/] ({result['queries']} queries, {result['details']['channel']}): "
            f"R@10 {r['recall@10']:.3f} · AllR@10 {r['all_recall@10']:.3f} · nDCG@10 {r['ndcg@10']:.3f} · "
            f"MRR@10 {r['mrr@10']:.3f} · p50 {result['process']['latency_ms_p50']:.2f} ms"
        )


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
