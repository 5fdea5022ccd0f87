"""Small helpers shared by tests (fixtures live in conftest.py)."""

from __future__ import annotations

from pathlib import Path


def write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode(encoding))
    return path
