"""The `agentrag` command. Thin: it parses arguments and calls the Python API (`agentrag.kb`, `agentrag.session`).

One module per group of commands, all registered here on one `typer.Typer` app, in the order `--help` lists them.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from agentrag.cli import answers, docs, evaluate, info, ingest, kbs, mcp_stdio, search, service
from agentrag.cli.common import err, set_debug

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


def _print_version(value: bool) -> None:
    if value:
        info.version()
        raise typer.Exit()


@app.callback()
def main_options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the traceback of any error (and the debug log) on stderr.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    """Options for every command, given before it: agentrag --debug ingest ./docs"""
    set_debug(debug)


app.add_typer(docs.docs_app, name="docs")
app.add_typer(kbs.kb_app, name="kb")
app.add_typer(service.keys_app, name="keys")
app.command(epilog=ingest.EXIT_CODES_HELP)(ingest.ingest)
app.command()(search.search)
app.command()(answers.ask)
app.command()(answers.chat)
app.command()(answers.failures)
app.command("eval")(evaluate.eval_command)
app.command()(service.serve)
app.command()(mcp_stdio.mcp)
app.command()(info.sample)
app.command()(info.version)


def main() -> None:
    try:
        app(prog_name="agentrag")  # usage lines say `agentrag`, also under `python -m agentrag.cli`
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


__all__ = ["app", "main"]
