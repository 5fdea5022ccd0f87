"""Small helpers shared by tests (fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path


# The `ask --json` contract (DESIGN.md), as other tools rely on it: its keys, and the keys of one citation.
ASK_KEYS = {
    "answer",
    "short_answer",
    "confidence",
    "conflicts",
    "citations",
    "mode",
    "stop_reason",
    "usage",
    "unsupported",
    "trace_id",
}
CITATION_KEYS = {"n", "doc_id", "chunk_id", "source", "quote", "page"}
