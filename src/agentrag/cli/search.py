"""`agentrag search`: ranked passages with the evidence from each channel."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agentrag.cli.common import (
    FILTER_HELP,
    HomeOption,
    JsonOption,
    KbOption,
    emit_json,
    friendly_errors,
    open_kb,
    out,
    parse_filter,
    snippet,
)
from agentrag.vocab import Channel


@friendly_errors
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in any language.")],
    k: Annotated[int, typer.Option("-k", help="How many hits.", min=1, max=1000)] = 10,
    channel: Annotated[
        Channel, typer.Option("--channel", help="hybrid (BM25 + dense, fused), bm25 alone, or dense alone.")
    ] = Channel.HYBRID,
    filter_: Annotated[list[str] | None, typer.Option("--filter", help=FILTER_HELP)] = None,
    home: HomeOption = None,
    kb: KbOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Search a knowledge base: ranked passages with the evidence from each channel.

    Example: agentrag search "退款需要几天" -k 5 --filter source='*.md'
    """
    flt = parse_filter(filter_ or [])
    with open_kb(home, kb) as knowledge_base:
        hits = knowledge_base.search(query, k, channel, flt)
    if as_json:
        emit_json({"query": query, "kb": kb, "channel": channel.value, "hits": [h.contract() for h in hits]})
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
        out.print("   " + escape(snippet(h.chunk.text, 240)), highlight=False)
