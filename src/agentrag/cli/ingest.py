"""`agentrag ingest`: files and folders into a knowledge base, with a progress bar."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentrag.cli.common import (
    HomeOption,
    JsonOption,
    KbOption,
    emit_json,
    err,
    friendly_errors,
    open_kb,
    out,
    parse_pairs,
)
from agentrag.ingest.loaders.common import pages_phrase
from agentrag.ingest.pipeline import discover
from agentrag.types import IngestStatus


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
    tags = parse_pairs(tag or [], "--tag")
    knowledge_base = open_kb(home, kb, create=True)
    total = _corpus_units(discover(list(paths)))
    show_bar = not as_json and not verbose and err.is_terminal
    failures: list[IngestStatus] = []
    partial: list[IngestStatus] = []  # stored, but some PDF pages could not be read

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
            elif item.unreadable_pages:
                partial.append(item)
                if not as_json:
                    lost = f"{pages_phrase(item.unreadable_pages)} unreadable"
                    err.print(f"[yellow]![/] {escape(item.path)}: {item.status}, {lost}", soft_wrap=True)
            elif verbose and not as_json:
                print(f"{item.status:9s} {item.path} ({item.chunks} chunks)", flush=True)
            bar.update(task, advance=1, summary=" · ".join(f"{k} {v}" for k, v in counts.items() if v))

        report = knowledge_base.ingest(list(paths), tags, on_item)
    knowledge_base.close()
    if as_json:
        emit_json(
            {
                "kb": kb,
                **report.model_dump(exclude={"items"}),
                "failures": [f.model_dump() for f in failures],
                "unreadable": [p.model_dump() for p in partial],
            }
        )
    else:
        out.print(
            f"[bold]{kb}[/]: added {report.added}, updated {report.updated}, unchanged {report.unchanged}, "
            f"failed {report.failed} · {report.chunks} chunks · {report.seconds:.1f} s"
        )
    if report.failed:
        raise typer.Exit(1)
