"""Knowledge-base names: ids (what URLs and directories use), display names in any script, and the rules that
keep them unambiguous inside one data directory."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from pathlib import Path

from agentrag.errors import ConfigError
from agentrag.layout import Layout

KB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_DISPLAY_NAME = 100
# Display names are URL path segments too (`/v1/kb/{kb}`): no separators, no line breaks or control characters.
_NOT_IN_DISPLAY_NAME = {"Cc", "Cs", "Zl", "Zp"}


def validate_kb_name(name: str) -> str:
    if not KB_NAME.match(name):
        raise ConfigError(
            f"invalid knowledge base name {name!r}: use 1-64 letters, digits, '_', '.' or '-', starting with a "
            f"letter or digit"
        )
    return name


class KnowledgeBaseNameTaken(ConfigError):
    """The display name asked for belongs to another knowledge base, or this one already has another."""


def normal_display_name(value: str, what: str = "knowledge base name") -> str:
    """A display name as stored and compared: NFC, trimmed, 1-100 characters of any script."""
    name = unicodedata.normalize("NFC", value).strip()
    bad = next((c for c in name if unicodedata.category(c) in _NOT_IN_DISPLAY_NAME or c in "/\\"), None)
    if not name or len(name) > MAX_DISPLAY_NAME or bad is not None or name in (".", ".."):
        why = f"the character {bad!r} is not allowed" if bad is not None else f"use 1-{MAX_DISPLAY_NAME} characters"
        raise ConfigError(f"invalid {what} {value!r}: {why} (any script; no '/', '\\' or control characters)")
    return name


def kb_id_for(name: str) -> str:
    """The id a new knowledge base called `name` gets: the name itself when it is a valid id, else `kb-` and a
    short hash of the display name (stable, so a key issued for a name before it exists is for that id)."""
    shown = normal_display_name(name)
    if KB_NAME.match(shown):
        return shown
    return "kb-" + hashlib.sha256(shown.encode("utf-8")).hexdigest()[:12]


def resolve_kb(home: Path | str, name: str) -> str:
    """The id `name` stands for: an existing knowledge base's id or display name, else the id it would get."""
    layout = Layout(Path(home))
    found = layout.find_kb(name) or layout.find_kb(normal_display_name(name))
    return found or kb_id_for(name)


def list_knowledge_bases(home: Path | str) -> list[str]:
    """The ids of the knowledge bases in `home`, sorted."""
    return Layout(Path(home)).knowledge_bases()


def named(layout: Layout) -> list[tuple[str, str | None]]:
    return [(kb, layout.kb_display_name(kb)) for kb in layout.knowledge_bases()]


def claim_display_name(layout: Layout, kb_id: str, wanted: str, explicit: bool) -> None:
    """Record `wanted` as the display name of `kb_id` (new, or without one of its own yet); display names are
    unique in a data directory and never another knowledge base's id, so naming one is never ambiguous."""
    shown = normal_display_name(wanted, "display_name" if explicit else "knowledge base name")
    recorded = layout.kb_display_name(kb_id)
    if recorded == shown:
        return
    if recorded not in (None, kb_id):
        if not explicit:
            return  # the name given resolved to this knowledge base; it keeps its display name
        raise KnowledgeBaseNameTaken(f"display_name: knowledge base {kb_id!r} is already named {recorded!r}")
    owner = layout.find_kb(shown)
    if owner is not None and owner != kb_id:
        raise KnowledgeBaseNameTaken(f"display_name: {shown!r} already names knowledge base {owner!r}")
    layout.set_kb_display_name(kb_id, shown)
