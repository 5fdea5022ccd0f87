"""`agentrag docs list | show | delete`: the documents of a knowledge base."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from agentrag.cli.common import HomeOption, JsonOption, KbOption, emit_json, friendly_errors, open_kb, out

docs_app = typer.Typer(help="List, show and delete the documents of a knowledge base.", no_args_is_help=True)

DocIdArgument = Annotated[str, typer.Argument(help="Document id (see `agentrag docs list`).")]


@docs_app.command("list")
@friendly_errors
def docs_list(
    limit: Annotated[int | None, typer.Option("--limit", help="Show at most this many.")] = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """List documents: id, title, source, chunks, date, tags."""
    with open_kb(home, kb) as knowledge_base:
        documents = knowledge_base.documents(limit)
        stats = knowledge_base.stats()
    if as_json:
        emit_json(
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
    doc_id: DocIdArgument, home: HomeOption = None, kb: KbOption = "default", as_json: JsonOption = False
) -> None:
    """Show one document's metadata and its chunks."""
    with open_kb(home, kb) as knowledge_base:
        document, chunks = knowledge_base.document(doc_id)
    if as_json:
        emit_json({"document": document.model_dump(mode="json"), "chunks": [c.model_dump(mode="json") for c in chunks]})
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
    doc_id: DocIdArgument, home: HomeOption = None, kb: KbOption = "default", as_json: JsonOption = False
) -> None:
    """Delete a document and everything indexed from it."""
    with open_kb(home, kb) as knowledge_base:
        knowledge_base.delete(doc_id)
    if as_json:
        emit_json({"deleted": doc_id, "kb": kb})
    else:
        out.print(f"deleted {doc_id} from [bold]{kb}[/]")
