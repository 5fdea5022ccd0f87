"""`agentrag ingest`: files and folders into a knowledge base, with a progress display.

The display counts files, and chunks as they are embedded (a large file moves the bar before it is stored),
with the chunk rate, the current file and a time estimate. Its exit codes are `EXIT_CODES_HELP` (the epilog
of `ingest --help`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

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

if TYPE_CHECKING:  # the loaders (HTML, Markdown parsers) and the models load when files are ingested
    from agentrag.ingest.pipeline import ChunkProgress
    from agentrag.types import IngestReport, IngestStatus

EXIT_STRICT = 3  # `--strict`: the batch finished, and some file failed

EXIT_CODES_HELP = (
    "Exit codes: 0 the batch finished (files that failed are named, and counted in the summary); "
    f"{EXIT_STRICT} with --strict when any file failed; 2 a usage or input error (a bad option, argument or "
    "setting; an unknown or damaged knowledge base): nothing was ingested; 1 an unexpected error stopped it."
)


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
    rate = f" ({report.chunks / report.seconds:.1f} chunks/s)" if report.chunks and report.seconds else ""
    return f"[bold]{escape(kb)}[/]: {', '.join(counts)} · {report.chunks} chunks · {report.seconds:.1f} s{rate}"


class IngestDisplay:
    """The progress bar and the lines printed beside it, fed by the knowledge base's two progress callbacks."""

    def __init__(self, bar: Progress, total: int, unsupported: set[str], verbose: bool, as_json: bool) -> None:
        self.bar, self.verbose, self.as_json = bar, verbose, as_json
        self.task = bar.add_task("ingest", total=total or None, chunks=0, rate="", current="", summary="")
        self.unsupported = unsupported  # files of the folders whose type is not ingested: not in the bar's total
        self.counts: dict[str, int] = {}
        self.stored = 0  # files ended (stored, unchanged, failed, special files skipped)
        self.in_flight: dict[str, float] = {}  # the share of each file's chunks embedded, until it ends
        self.failures: list[IngestStatus] = []
        self.skips: list[IngestStatus] = []
        self.partial: list[IngestStatus] = []  # stored, but some PDF pages could not be read

    def on_item(self, item: IngestStatus) -> None:
        self.counts[item.status] = self.counts.get(item.status, 0) + 1
        if item.status == "failed":
            self.failures.append(item)
            self._note(f"[red]✗[/] {escape(item.path)}: {escape(item.error or 'failed')}")
        elif item.status == "skipped":
            self.skips.append(item)
            if item.path not in self.unsupported or self.verbose:  # unsupported types: counted, named with -v
                self._note(f"[yellow]-[/] {escape(item.path)}: skipped: {escape(item.error or '')}")
        elif item.unreadable_pages:
            self.partial.append(item)
            from agentrag.ingest.loaders.common import pages_phrase

            pages = pages_phrase(item.unreadable_pages)
            self._note(f"[yellow]![/] {escape(item.path)}: {item.status}, {pages} unreadable")
        elif self.verbose and not self.as_json:
            print(f"{item.status:9s} {item.path} ({item.chunks} chunks)", flush=True)
        if item.status != "deleted" and item.path not in self.unsupported:
            self.stored += 1
            self.in_flight.pop(item.path, None)
        summary = " · ".join(f"{k} {v}" for k, v in self.counts.items() if v)
        self.bar.update(self.task, completed=self._completed(), summary=summary)

    def on_chunks(self, progress: ChunkProgress) -> None:
        self.in_flight[progress.path] = progress.done / progress.of
        rate = f"{progress.chunks / progress.seconds:.1f} chunks/s" if progress.seconds > 0 else ""
        self.bar.update(
            self.task,
            completed=self._completed(),
            chunks=progress.chunks,
            rate=rate,
            current=escape(Path(progress.path).name),
        )

    def _completed(self) -> float:
        return self.stored + sum(self.in_flight.values())

    def _note(self, line: str) -> None:
        if not self.as_json:
            err.print(line, soft_wrap=True)


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]ingest[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("files · {task.fields[chunks]} chunks · {task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[current]}"),
        console=err,
        disable=not enabled,
        transient=True,
    )


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
    strict: Annotated[
        bool, typer.Option("--strict", help=f"Exit with code {EXIT_STRICT} when any file failed.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("-v", "--verbose", help="One line per document as it is stored, and each file skipped."),
    ] = False,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Add files and folders to a knowledge base. Unchanged files are skipped, changed ones replaced.

    A renamed file whose content is unchanged is moved, not embedded again. Nothing is deleted unless --sync.
    Files of a folder whose type is not ingested (.epub, .png, no suffix) are counted as skipped.

    Example: agentrag ingest ./handbook ./faq.md --tag team=support
    """
    tags = parse_pairs(tag or [], "--tag")
    knowledge_base = open_kb(home, kb, create=True)
    unsupported: list[Path] = []
    from agentrag.ingest.files import discover, display

    total = _corpus_units(discover(list(paths), unsupported))
    with _progress(not as_json and not verbose and err.is_terminal) as bar:
        shown = IngestDisplay(bar, total, {display(p) for p in unsupported}, verbose, as_json)
        try:
            report = knowledge_base.ingest(list(paths), tags, shown.on_item, sync=sync, on_chunks=shown.on_chunks)
        finally:
            knowledge_base.close()
    if as_json:
        emit_json(
            {
                "kb": kb,
                **report.model_dump(exclude={"items"}),
                "failures": [f.model_dump() for f in shown.failures],
                "skipped_files": [{"path": s.path, "reason": s.error} for s in shown.skips],
                "unreadable": [p.model_dump() for p in shown.partial],
            }
        )
    else:
        out.print(_summary(kb, report), highlight=False)
        hidden = sum(1 for s in shown.skips if s.path in shown.unsupported) if not verbose else 0
        if hidden:
            err.print(f"[dim]{hidden} file(s) of types that are not ingested were skipped; -v names them[/]")
    if strict and report.failed:
        raise typer.Exit(EXIT_STRICT)
