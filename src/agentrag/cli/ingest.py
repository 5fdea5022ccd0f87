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
from agentrag.ingest.files import discover
from agentrag.types import IngestReport, IngestStatus


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


def _summary(kb: str, report: IngestReport) -> str:
    """The counts, `deleted` and `skipped` only when there were any."""
    counts = [f"added {report.added}", f"updated {report.updated}", f"unchanged {report.unchanged}"]
    counts += [f"{name} {n}" for name, n in (("deleted", report.deleted), ("skipped", report.skipped)) if n]
    counts.append(f"failed {report.failed}")
    return f"[bold]{escape(kb)}[/]: {', '.join(counts)} · {report.chunks} chunks · {report.seconds:.1f} s"


@friendly_errors
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders (txt, md, html, pdf, docx, jsonl corpus).")],
    tag: Annotated[
        list[str] | None,
        typer.Option("--tag", help="Tag every document: KEY=VALUE (repeatable); sets KEY, other tags stay."),
    ] = None,
    sync: Annotated[
        bool,
        typer.Option(
            "--sync", help="Also delete the documents of files gone from each folder given (renamed or deleted)."
        ),
    ] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="One line per document as it is stored.")] = False,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Add files and folders to a knowledge base. Unchanged files are skipped, changed ones replaced.

    A renamed file whose content is unchanged is moved, not embedded again. Nothing is deleted unless --sync.

    Example: agentrag ingest ./handbook ./faq.md --tag team=support
    """
    tags = parse_pairs(tag or [], "--tag")
    knowledge_base = open_kb(home, kb, create=True)
    total = _corpus_units(discover(list(paths)))
    show_bar = not as_json and not verbose and err.is_terminal
    failures: list[IngestStatus] = []
    skips: list[IngestStatus] = []

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
        counts: dict[str, int] = {}

        def on_item(item: IngestStatus) -> None:
            counts[item.status] = counts.get(item.status, 0) + 1
            if item.status == "failed":
                failures.append(item)
                if not as_json:
                    err.print(f"[red]✗[/] {escape(item.path)}: {escape(item.error or 'failed')}", soft_wrap=True)
            elif item.status == "skipped":
                skips.append(item)
                if not as_json:
                    err.print(f"[yellow]-[/] {escape(item.path)}: skipped: {escape(item.error or '')}", soft_wrap=True)
            elif verbose and not as_json:
                print(f"{item.status:9s} {item.path} ({item.chunks} chunks)", flush=True)
            if item.status != "deleted":
                bar.update(task, advance=1)
            bar.update(task, summary=" · ".join(f"{k} {v}" for k, v in counts.items() if v))

        try:
            report = knowledge_base.ingest(list(paths), tags, on_item, sync=sync)
        finally:
            knowledge_base.close()
    if as_json:
        emit_json(
            {
                "kb": kb,
                **report.model_dump(exclude={"items"}),
                "failures": [f.model_dump() for f in failures],
                "skipped_files": [{"path": s.path, "reason": s.error} for s in skips],
            }
        )
    else:
        out.print(_summary(kb, report), highlight=False)
    if report.failed:
        raise typer.Exit(1)
