"""The data directory (`--home`), in one place: where every part of agentrag keeps its files.

    <home>/
      agentrag.toml                 settings
      kbs/<name>/                   one knowledge base; the store keeps its files here (store.sqlite, ...)
      traces/<kb>/<trace_id>.jsonl  every step of each answer
      failures.jsonl                questions that ended without a full answer
      conversations/<id>.json       conversations (the CLI's `chat --conversation` and the service's)
      uploads/<kb>/                 files uploaded through the service
      keys.sqlite                   API keys (hashes only)
      memory.sqlite                 long-term memory: what users said about themselves

Nothing else builds these paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SETTINGS_FILE = "agentrag.toml"
# The embedded store's database: its presence marks a folder under kbs/ as a knowledge base.
STORE_FILE = "store.sqlite"


@dataclass(frozen=True, slots=True)
class Layout:
    home: Path

    @property
    def settings_file(self) -> Path:
        return self.home / SETTINGS_FILE

    @property
    def kbs(self) -> Path:
        return self.home / "kbs"

    def kb_dir(self, name: str) -> Path:
        return self.kbs / name

    def store_file(self, name: str) -> Path:
        return self.kb_dir(name) / STORE_FILE

    def traces(self, kb: str) -> Path:
        return self.home / "traces" / kb

    @property
    def failures(self) -> Path:
        return self.home / "failures.jsonl"

    @property
    def conversations(self) -> Path:
        return self.home / "conversations"

    @property
    def uploads_root(self) -> Path:
        return self.home / "uploads"

    def uploads(self, kb: str) -> Path:
        return self.uploads_root / kb

    @property
    def keys_db(self) -> Path:
        return self.home / "keys.sqlite"

    @property
    def memory_db(self) -> Path:
        return self.home / "memory.sqlite"

    def knowledge_bases(self) -> list[str]:
        """Names of the knowledge bases in this data directory, sorted."""
        if not self.kbs.is_dir():
            return []
        return sorted(p.name for p in self.kbs.iterdir() if (p / STORE_FILE).exists())
