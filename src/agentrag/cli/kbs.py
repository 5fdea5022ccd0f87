"""`agentrag kb copy`: move a knowledge base to another store backend (SQLite to Milvus, say), vectors included."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from agentrag.cli.common import HomeOption, JsonOption, KbOption, emit_json, friendly_errors, out, settings_for
from agentrag.vocab import StoreBackend

kb_app = typer.Typer(help="Manage whole knowledge bases.", no_args_is_help=True)


@kb_app.command("copy")
@friendly_errors
def kb_copy(
    source: Annotated[StoreBackend, typer.Option("--from", help="The backend the knowledge base is in now.")],
    target: Annotated[StoreBackend, typer.Option("--to", help="The backend to copy it into.")],
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Copy every document, chunk and vector of --kb from one backend to another, without embedding again.

    The Milvus side is the one in the settings ([store] uri, token, db_name, or AGENTRAG_STORE__URI ...).
    Documents already in the target with the same content are skipped, so an interrupted copy can be re-run.

    Example: AGENTRAG_STORE__URI=http://milvus:19530 agentrag kb copy --kb docs --from sqlite --to milvus
    """
    from agentrag.kb import resolve_kb
    from agentrag.migrate import copy_knowledge_base

    settings = settings_for(home)
    kb_id = resolve_kb(settings.home, kb)
    report = copy_knowledge_base(settings, kb_id, source, target)
    if as_json:
        emit_json({"kb": kb_id, "from": source.value, "to": target.value, **asdict(report)})
        return
    out.print(
        f"copied {report.documents} documents ({report.chunks} chunks) of {kb_id!r} from {source.value} to "
        f"{target.value}; {report.skipped} already there"
    )
