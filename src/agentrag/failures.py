"""The failure log: questions that ended without a full answer, kept for review (what the knowledge base lacks).

One JSON line per question whose stop reason is not "answered", in `<home>/failures.jsonl`. The assistant
writes it; `agentrag failures` reads it.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentrag.vocab import StopReason

_write_lock = threading.Lock()


class Failure(BaseModel):
    ts: float = Field(default_factory=time.time)
    kb: str
    trace_id: str
    stop_reason: StopReason
    mode: str
    question: str
    search_query: str
    answer: str


class FailureLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, failure: Failure) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(failure.model_dump(mode="json"), ensure_ascii=False) + "\n"
        with _write_lock, self.path.open("a", encoding="utf-8") as f:
            f.write(line)

    def recent(self, limit: int, kb: str | None = None) -> list[dict[str, Any]]:
        """The last `limit` entries (of one knowledge base, or all), oldest first, as recorded."""
        if not self.path.exists():
            return []
        rows: list[dict[str, Any]] = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if kb is None or row.get("kb") == kb:
                    rows.append(row)
        return rows[-limit:]
