"""Trace events: one per step of answering a question.

The same events drive three things: streaming progress ("searching, round 2: ..."), the JSON-lines trace
file kept under the trace id, and the evaluation's process metrics. A subscriber that raises is dropped,
never allowed to break the answer.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentrag.vocab import TraceStep

log = logging.getLogger(__name__)

PREVIEW_CHARS = 300


class TraceEvent(BaseModel):
    trace_id: str
    seq: int
    ts: float
    step: TraceStep
    round: int = 0
    decision: str = ""
    reason: str = ""
    message: str = Field("", description="One human line for progress displays.")
    args: dict[str, Any] = Field(default_factory=dict)
    preview: str = ""
    tokens: int = 0
    ms: float = 0.0


Subscriber = Callable[[TraceEvent], None]


def new_trace_id() -> str:
    return uuid.uuid4().hex[:16]


class Tracer:
    """Collects a question's events, forwards them to subscribers, and writes them as JSON lines."""

    def __init__(self, trace_id: str | None = None, directory: Path | None = None) -> None:
        self.trace_id = trace_id or new_trace_id()
        self.events: list[TraceEvent] = []
        self._subscribers: list[Subscriber] = []
        self._lock = threading.Lock()
        self._path = directory / f"{self.trace_id}.jsonl" if directory else None
        if self._path is not None:
            self._path.parent.mkdir(parents=True, exist_ok=True)

    @property
    def path(self) -> Path | None:
        return self._path

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def emit(
        self,
        step: TraceStep,
        *,
        round: int = 0,
        decision: str = "",
        reason: str = "",
        message: str = "",
        args: dict[str, Any] | None = None,
        preview: str = "",
        tokens: int = 0,
        ms: float = 0.0,
    ) -> TraceEvent:
        with self._lock:
            event = TraceEvent(
                trace_id=self.trace_id,
                seq=len(self.events) + 1,
                ts=time.time(),
                step=step,
                round=round,
                decision=decision,
                reason=reason,
                message=message,
                args=args or {},
                preview=preview[:PREVIEW_CHARS],
                tokens=tokens,
                ms=round_ms(ms),
            )
            self.events.append(event)
            if self._path is not None:
                with self._path.open("a", encoding="utf-8") as f:
                    f.write(event.model_dump_json() + "\n")
            subscribers = list(self._subscribers)
        for subscriber in subscribers:
            try:
                subscriber(event)
            except Exception:  # a broken progress display must not break the answer
                log.exception("trace subscriber failed; dropping it")
                self._subscribers.remove(subscriber)
        return event


def round_ms(ms: float) -> float:
    return float(f"{ms:.2f}")


def read_trace(directory: Path, trace_id: str) -> list[TraceEvent]:
    path = directory / f"{trace_id}.jsonl"
    if not path.exists():
        return []
    return [TraceEvent(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
