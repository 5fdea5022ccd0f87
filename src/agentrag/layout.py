"""The data directory (`--home`), in one place: where every part of agentrag keeps its files.

    <home>/
      agentrag.toml                 settings
      kbs/<name>/                   one knowledge base; the store keeps its files here (store.sqlite, ...)
      kbs/<name>/kb.json            its instance id, made with it: a knowledge base recreated under the same
                                    name is a new instance, so nothing cached for the old one is served;
                                    and its display name (any script; `<name>` is the safe id)
      traces/<kb>/<trace_id>.jsonl  every step of each answer
      failures.jsonl                questions that ended without a full answer
      conversations/<id>.json       conversations (the CLI's `chat --conversation` and the service's)
      uploads/<kb>/                 files uploaded through the service
      keys.sqlite                   API keys (hashes only)
      memory.sqlite                 long-term memory: what users said about themselves
      locks/<hash>.lock             conversation locks between processes on this host (when no Redis is set)

Nothing else builds these paths.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SETTINGS_FILE = "agentrag.toml"
# The embedded store's database: its presence marks a folder under kbs/ as a knowledge base.
STORE_FILE = "store.sqlite"
INSTANCE_FILE = "kb.json"


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

    def kb_instance_file(self, name: str) -> Path:
        return self.kb_dir(name) / INSTANCE_FILE

    def kb_instance_id(self, name: str) -> str:
        """The id of this knowledge base's instance, created (and stored) on first open, so a knowledge base
        made before ids existed gets one too."""
        path = self.kb_instance_file(name)
        found = _read_instance_id(path)
        if found:
            return found
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = uuid.uuid4().hex
        temp = path.with_name(f".{INSTANCE_FILE}.{fresh}")
        temp.write_text(json.dumps({"instance_id": fresh}), encoding="utf-8")
        try:
            if path.exists():  # unreadable: replace it (a new id only costs cache misses)
                os.replace(temp, path)
                return fresh
            # link, unlike rename, fails when another process wrote its id first: then that id is the one
            os.link(temp, path)
            return fresh
        except FileExistsError:
            return _read_instance_id(path) or fresh
        finally:
            temp.unlink(missing_ok=True)

    def recorded_instance_id(self, name: str) -> str | None:
        """The instance id on disk now, without making one (None for a knowledge base deleted meanwhile)."""
        return _read_instance_id(self.kb_instance_file(name))

    def kb_display_name(self, name: str) -> str | None:
        """The display name recorded for the knowledge base `name` (its id), or None (one made before them)."""
        value = _read_meta(self.kb_instance_file(name)).get("display_name")
        return value if isinstance(value, str) and value else None

    def set_kb_display_name(self, name: str, display_name: str) -> None:
        """Record the display name beside the instance id (which is made first, so it is never lost)."""
        path = self.kb_instance_file(name)
        meta = {**_read_meta(path), "instance_id": self.kb_instance_id(name), "display_name": display_name}
        temp = path.with_name(f".{INSTANCE_FILE}.{uuid.uuid4().hex}")
        temp.write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        os.replace(temp, path)

    def find_kb(self, name: str) -> str | None:
        """The id of the knowledge base whose id, or else whose display name, is exactly `name`; None if none.

        Only existing ids are compared, so no path is ever built from `name`."""
        ids = self.knowledge_bases()
        if name in ids:
            return name
        return next((kb for kb in ids if self.kb_display_name(kb) == name), None)

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

    @property
    def locks(self) -> Path:
        return self.home / "locks"

    def knowledge_bases(self) -> list[str]:
        """Names of the knowledge bases in this data directory, sorted."""
        if not self.kbs.is_dir():
            return []
        return sorted(p.name for p in self.kbs.iterdir() if (p / STORE_FILE).exists())


def _read_meta(path: Path) -> dict[str, Any]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _read_instance_id(path: Path) -> str | None:
    value = _read_meta(path).get("instance_id")
    return value if isinstance(value, str) and value else None
