"""`agentrag serve` and `agentrag keys create | list | revoke`: the HTTP service and its API keys."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from agentrag import __version__
from agentrag.cli.common import (
    HomeOption,
    JsonOption,
    emit_json,
    err,
    fail,
    friendly_errors,
    model_free_notice,
    out,
    settings_for,
)

if TYPE_CHECKING:
    from agentrag.server.keys import KeyStore

keys_app = typer.Typer(help="API keys for the HTTP service (`agentrag serve`).", no_args_is_help=True)


@friendly_errors
def serve(
    host: Annotated[str | None, typer.Option("--host", help="Interface to listen on \\[default: 127.0.0.1].")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port \\[default: 8000].", min=1, max=65535)] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Worker processes on one port \\[default: server.workers, 1]; more than 1 needs Redis (redis_url).",
        ),
    ] = None,
    home: HomeOption = None,
) -> None:
    """Run the HTTP service: REST API, streaming answers, OpenAI-compatible chat, and the web page at /.

    Create a key first: agentrag keys create --admin
    """
    from agentrag.server.workers import check_workers, run

    settings = settings_for(home)
    host = host or settings.server.host
    port = port or settings.server.port
    workers = workers or settings.server.workers
    check_workers(settings, workers)
    processes = f", {workers} workers sharing Redis" if workers > 1 else ""
    err.print(
        f"agentrag {__version__} serving {settings.home} on http://{host}:{port}{processes} "
        "(web page at /, API docs at /docs)"
    )
    model_free_notice(settings, False)
    if (hint := key_hint(home)) is not None:
        err.print(hint)
    run(settings, host, port, workers)


def key_hint(home: Path | None) -> str | None:
    """What to do first when the service has no key yet: the web page and the API show nothing without one."""
    with _keys(home) as store:
        if store.list():
            return None
    return (
        "No API key yet: the web page and the API need one. Create it with `agentrag keys create --admin` "
        "(it is printed once) and paste it into the page."
    )


def _keys(home: Path | None) -> KeyStore:
    """The key store of the data directory, to use in a `with` block (closed at its end)."""
    from agentrag.server.keys import KeyStore

    return KeyStore(settings_for(home).home)


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
    with _keys(home) as store:
        key, secret = store.create(kb or [], admin=admin, label=label)
    if as_json:
        emit_json({"key": secret, "key_id": key.key_id, "kbs": sorted(key.kbs), "admin": key.admin})
        return
    scope = "every knowledge base" if admin else (", ".join(sorted(key.kbs)) or "knowledge bases it creates")
    print(secret, flush=True)  # alone on stdout: KEY=$(agentrag keys create --admin)
    err.print(f"[dim]key {key.key_id} for {escape(scope)}; shown once, store it now[/]", soft_wrap=True)


@keys_app.command("list")
@friendly_errors
def keys_list(home: HomeOption = None, as_json: JsonOption = False) -> None:
    """The API keys of this data directory: id, knowledge bases, label, created (secrets are never shown)."""
    with _keys(home) as store:
        keys = store.list()
    rows: list[dict[str, Any]] = [
        {"key_id": k.key_id, "kbs": sorted(k.kbs), "admin": k.admin, "label": k.label, "created_at": created}
        for k, created in keys
    ]
    if as_json:
        emit_json({"keys": rows})
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
    with _keys(home) as store:
        found = store.revoke(key_id)
    if not found:
        fail(f"no API key with id {key_id!r} (see `agentrag keys list`)", as_json)
    if as_json:
        emit_json({"revoked": key_id})
    else:
        out.print(f"Revoked key {key_id}.")
