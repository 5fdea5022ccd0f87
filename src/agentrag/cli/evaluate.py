"""`agentrag eval`: retrieval or answers measured on a benchmark-format dataset."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agentrag.cli.common import HomeOption, emit_json, err, friendly_errors, out, settings_for
from agentrag.errors import ConfigError
from agentrag.vocab import Channel, ExportFormat, Mode, Preset, StoreBackend

if TYPE_CHECKING:
    from agentrag.eval.runner import EvalRun
    from agentrag.types import IngestStatus


class TaskChoice(StrEnum):
    retrieval = "retrieval"
    answer = "answer"


ExportOption = Annotated[
    tuple[ExportFormat, Path] | None,
    typer.Option(
        "--export",
        metavar="ragas|deepeval OUT",
        help="With --task answer: write each question's input, answer, retrieved contexts and reference to OUT "
        "in the field names Ragas or DeepEval read (JSON Lines; a JSON array when OUT ends in .json).",
    ),
]
StoreOption = Annotated[
    StoreBackend | None, typer.Option("--store", help="Store backend to measure \\[default: settings].")
]


def _check_export(export: tuple[ExportFormat, Path] | None, task: TaskChoice) -> None:
    """Before the corpus is ingested, so a mistake costs nothing."""
    if export is not None and task != TaskChoice.answer:
        raise ConfigError("--export needs --task answer: it writes each question's answer and the passages it used")
    if export is not None and export[1].is_dir():
        raise ConfigError(f"--export: {export[1]} is a folder; name the file to write, e.g. {export[1] / 'out.jsonl'}")


def _export(run: EvalRun, export: tuple[ExportFormat, Path], quiet: bool) -> None:
    from agentrag.eval.export import write_export

    written = write_export(run.samples, export[0], export[1])
    if not quiet:
        out.print(f"{written} questions written for {export[0].value} to {export[1]}", soft_wrap=True)


@friendly_errors
def eval_command(
    dataset_dir: Annotated[
        Path, typer.Argument(help="A folder with corpus.jsonl, queries.jsonl and (for retrieval) qrels.tsv.")
    ],
    task: Annotated[
        TaskChoice,
        typer.Option("--task", help="retrieval: rank passages per channel; answer: ask every question end to end."),
    ] = TaskChoice.retrieval,
    mode: Annotated[Mode, typer.Option("--mode", help="Answer mode for --task answer.")] = Mode.AUTO,
    preset: Annotated[Preset, typer.Option("--preset", help="Budget preset for --task answer.")] = Preset.BALANCED,
    limit: Annotated[
        int | None, typer.Option("--limit", help="Only the first N queries, in file order.", min=1)
    ] = None,
    channel: Annotated[
        Channel | None, typer.Option("--channel", help="Channel for the headline numbers \\[default: settings].")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the result JSON here ('-' for stdout).")
    ] = None,
    report: Annotated[Path | None, typer.Option("--report", help="Write a Markdown report (+ PNG chart) here.")] = None,
    export: ExportOption = None,
    store: StoreOption = None,
    home: HomeOption = None,
) -> None:
    """Measure retrieval or answers on a benchmark-format dataset; the knowledge base is built once and reused.

    Example: agentrag eval ../shared/data/musique --json musique.json --report musique.md
    """
    from agentrag.eval.runner import run_eval
    from agentrag.kb import shared_embedder

    _check_export(export, task)
    settings = settings_for(home)
    if store is not None:
        settings = settings.model_copy(update={"store": settings.store.model_copy(update={"backend": store})})
    embedder = shared_embedder(settings.embedder)
    quiet = json_out is not None and str(json_out) == "-"
    with Progress(
        TextColumn("[bold]{task.description}[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=not (err.is_terminal and not quiet),
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
            settings,
            embedder,
            limit=limit,
            channel=channel,
            ingest_progress=on_ingest,
            query_progress=on_query,
            task=task.value,
            mode=mode,
            preset=preset,
        )
    _write_outputs(run, json_out, report, export, quiet)


def _write_outputs(
    run: EvalRun, json_out: Path | None, report: Path | None, export: tuple[ExportFormat, Path] | None, quiet: bool
) -> None:
    from agentrag.eval.report import write_report

    result = run.result
    if json_out is not None:
        if quiet:
            emit_json(result)
        else:
            json_out.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    if report is not None:
        write_report(result, report)
    if export is not None:
        _export(run, export, quiet)
    if not quiet:
        out.print(_summary(result), soft_wrap=True)


def _summary(result: dict[str, Any]) -> str:
    r, a, p = result["retrieval"], result["answer"], result["process"]
    what = result["details"].get("channel") or f"{result['details'].get('mode')} mode"
    line = f"[bold]{result['dataset']}[/] ({result['queries']} queries, {what}): "
    if r is None:
        line += "no relevance judgements (qrels.tsv), so no retrieval numbers"
    else:
        line += (
            f"R@10 {r['recall@10']:.3f} · AllR@10 {r['all_recall@10']:.3f} · nDCG@10 {r['ndcg@10']:.3f} · "
            f"MRR@10 {r['mrr@10']:.3f}"
        )
    if p["latency_ms_p50"] is not None:
        line += f" · p50 {p['latency_ms_p50']:.2f} ms"
    if a.get("contains") is not None:
        line += (
            f" · contains {a['contains']:.3f} · EM {a['em']:.3f} · F1 {a['f1']:.3f} · abstain {a['abstain_rate']:.3f}"
        )
        high = (a.get("calibration") or {}).get("high") or {}
        if high.get("n"):
            line += f" · high confidence {high['n']} ({high['contains']:.0%} contain an answer)"
    return line
