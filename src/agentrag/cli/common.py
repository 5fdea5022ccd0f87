"""What every command shares: the common options, readable errors, JSON output and small text helpers."""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from typer.exceptions import TyperException

from agentrag.errors import AgentragError
from agentrag.vocab import TraceStep

# What a command uses loads when it runs, not for --help: the knowledge base (numpy, jieba, the agent), and
# the settings and models (pydantic-settings, pydantic: a third of a second on their own).
if TYPE_CHECKING:
    from agentrag.kb import KnowledgeBase
    from agentrag.settings import Settings
    from agentrag.trace import TraceEvent
    from agentrag.types import SearchFilter

out = Console()
err = Console(stderr=True)

HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home", help="Data directory holding the knowledge bases \\[default: $AGENTRAG_HOME or ./.agentrag]."
    ),
]
KbOption = Annotated[str, typer.Option("--kb", help="Knowledge base name inside the data directory.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text (for scripts).")]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class CliState:
    """Set by the global options (`agentrag --debug COMMAND`)."""

    debug: bool = False


state = CliState()


def set_debug(debug: bool) -> None:
    """`--debug`: tracebacks for every error, and agentrag's debug log (a failed document's traceback) on stderr."""
    state.debug = debug
    if debug:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("agentrag").setLevel(logging.DEBUG)


def fail(message: str, as_json: bool, code: int = 2) -> NoReturn:
    if as_json:
        print(json.dumps({"error": message}, ensure_ascii=False))
    else:
        err.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)


def friendly_errors(func: F) -> F:
    """Errors a user can act on become one readable line (or {"error": ...} with --json), exit code 2; anything
    else is one line too, exit code 1, pointing at --debug, which also prints the traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, TyperException):
            raise  # typer's own: an exit code chosen by the command, a bad parameter
        except (AgentragError, ValueError) as exc:  # ValueError: pydantic validation of settings and arguments
            _show_traceback()
            fail(str(exc), as_json)
        except sqlite3.DatabaseError as exc:  # found past the store's own checks when it opened
            _show_traceback()
            fail(
                f"the knowledge base's database cannot be used ({exc}). If it is damaged, restore it from a "
                f"backup, or delete the knowledge base's folder and ingest again.",
                as_json,
            )
        except OSError as exc:
            _show_traceback()
            where = f"{exc.filename}: " if exc.filename else ""
            fail(f"{where}{exc.strerror or exc}", as_json)
        except Exception as exc:
            _show_traceback()
            hint = "" if state.debug else " (run `agentrag --debug ...` to see the traceback)"
            fail(f"unexpected error: {type(exc).__name__}: {exc}{hint}", as_json, code=1)

    return wrapper  # type: ignore[return-value]


def _show_traceback() -> None:
    if state.debug:
        traceback.print_exc()


def settings_for(home: Path | None) -> Settings:
    from agentrag.settings import load_settings

    return load_settings(home)


def open_kb(home: Path | None, kb: str, create: bool = False) -> KnowledgeBase:
    from agentrag.kb import KnowledgeBase

    return KnowledgeBase.open(kb, settings=settings_for(home), create=create)


def emit_json(payload: Any) -> None:
    print(json.dumps(payload, ensure_ascii=False, default=str))


def parse_pairs(pairs: list[str], option: str) -> dict[str, str]:
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
    from agentrag.text.dates import parse_date
    from agentrag.types import SearchFilter

    if not pairs:
        return None
    flt = SearchFilter()
    for key, value in parse_pairs(pairs, "--filter").items():
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


def snippet(text: str, width: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


_notice_shown = False


def model_free_notice(settings: Settings, as_json: bool) -> None:
    """Say once per process, plainly, that no LLM is configured."""
    global _notice_shown
    from agentrag.llm.notice import model_free_notice as notice_for

    notice = notice_for(settings.llm)
    if notice and not _notice_shown and not as_json:
        err.print(f"[dim]{escape(notice)}[/]", soft_wrap=True)
        _notice_shown = True


def print_progress(event: TraceEvent) -> None:
    if event.message:
        err.print(f"[dim]… {escape(event.message)}[/]", soft_wrap=True, highlight=False)


def question_progress(stream: bool) -> Callable[[TraceEvent], None]:
    """What `ask` and `chat` show on stderr while a question runs: every step with `stream`; always the first
    fallback with the error behind it (the endpoint's: connection refused, a 401, a timeout), once: later
    fallbacks of the question follow from it."""
    named = False

    def on_event(event: TraceEvent) -> None:
        nonlocal named
        if event.step != TraceStep.FALLBACK or named:
            if stream:
                print_progress(event)
            return
        named = True
        line = f"{event.message or 'the model failed'} ({event.reason})"
        if stream:
            err.print(f"[dim]…[/] [yellow]{escape(line)}[/]", soft_wrap=True, highlight=False)
        else:
            err.print(f"[yellow]warning:[/] {escape(line)}", soft_wrap=True, highlight=False)

    return on_event
