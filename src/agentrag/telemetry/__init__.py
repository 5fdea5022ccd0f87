"""OpenTelemetry spans for each question's trace (extra `otel`): off unless the standard OTEL_* variables ask.

On when `OTEL_TRACES_EXPORTER` names an exporter other than `none`, or when an OTLP endpoint is set
(`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); `OTEL_SDK_DISABLED=true` turns it off
whatever else is set. In code, `enable(tracer_provider)` sends the spans to a provider of your own. Off, nothing
of opentelemetry is imported: a question costs one look at a cached flag.

The spans follow the OpenTelemetry GenAI semantic conventions (`SEMCONV_VERSION`; see `spans.py`): one
`invoke_agent agentrag` span per question, `retrieval` spans for its searches, `execute_tool` spans for the
agent model's tool calls and `chat` spans with token usage for every model call, built from the trace's events
when the question is done.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentrag.trace import TraceEvent

if TYPE_CHECKING:
    from agentrag.telemetry.spans import SpanWriter

log = logging.getLogger(__name__)

SEMCONV_VERSION = "1.37.0"  # the semantic conventions release whose GenAI span names and attributes we follow

_lock = threading.Lock()
_UNREAD = object()  # the environment not read yet
_writer: object = _UNREAD


def wanted(env: Mapping[str, str]) -> bool:
    """Whether the OTEL_* variables in `env` ask for traces to be exported (never imports opentelemetry)."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = env.get("OTEL_TRACES_EXPORTER", "").strip()
    if exporters:
        return any(name.strip().lower() not in ("", "none") for name in exporters.split(","))
    return bool(env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def writer() -> SpanWriter | None:
    """The span writer in use, set up from the environment on first use; None when telemetry is off.
    A bad OTEL_* variable is a `ConfigError` naming it (raised when an assistant is made, before any question)."""
    global _writer
    with _lock:
        if _writer is _UNREAD:
            _writer = _from_environment(os.environ)
        found = _writer
    return found  # type: ignore[return-value]  # _UNREAD never leaves the lock


def _from_environment(env: Mapping[str, str]) -> SpanWriter | None:
    if not wanted(env):
        return None
    from agentrag.telemetry.setup import provider_from_environment
    from agentrag.telemetry.spans import SpanWriter

    return SpanWriter(provider_from_environment(env))


def enable(tracer_provider: Any = None) -> None:
    """Export every question's spans through `tracer_provider` (an SDK `TracerProvider`; default: the one the
    OTEL_* variables describe, whether or not they ask for it)."""
    global _writer
    if tracer_provider is None:
        from agentrag.telemetry.setup import provider_from_environment

        tracer_provider = provider_from_environment(os.environ)
    from agentrag.telemetry.spans import SpanWriter

    with _lock:
        _writer = SpanWriter(tracer_provider)


def disable() -> None:
    """No more spans (until `enable`); `reset` reads the environment again."""
    global _writer
    with _lock:
        _writer = None


def reset() -> None:
    global _writer
    with _lock:
        _writer = _UNREAD


def export(events: Sequence[TraceEvent], knowledge_base: str) -> None:
    """The spans of one finished question, when telemetry is on; a failure is logged, never raised."""
    found = writer()
    if found is None:
        return
    try:
        found.write(events, knowledge_base)
    except Exception:  # a tracing backend must never break an answer
        log.exception("could not export the trace as OpenTelemetry spans")


__all__ = ["SEMCONV_VERSION", "disable", "enable", "export", "reset", "wanted", "writer"]
