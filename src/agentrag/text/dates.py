"""Find the date a document speaks of: ISO and slashed dates, Chinese dates, English month names."""

from __future__ import annotations

import datetime as dt
import re

_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ]
    )
    for m in names
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))

_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?<!\d)((?:19|20)\d{2})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"), "ymd"),
    (re.compile(r"((?:19|20)\d{2})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"), "ymd"),
    (re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b", re.I), "mdy"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+((?:19|20)\d{{2}})\b", re.I), "dmy"),
]


def _build(kind: str, groups: tuple[str, ...]) -> dt.date | None:
    try:
        if kind == "ymd":
            return dt.date(int(groups[0]), int(groups[1]), int(groups[2]))
        if kind == "mdy":
            return dt.date(int(groups[2]), _MONTHS[groups[0].lower()], int(groups[1]))
        return dt.date(int(groups[2]), _MONTHS[groups[1].lower()], int(groups[0]))
    except (ValueError, KeyError):
        return None


_YEAR = re.compile(r"(?:19|20)\d{2}")  # in every pattern: a text without one has no date (one cheap scan)


def find_date(text: str) -> dt.date | None:
    """The first well-formed full date in `text` (by position), or None."""
    if _YEAR.search(text) is None:
        return None
    best: tuple[int, dt.date] | None = None
    for pattern, kind in _PATTERNS:
        for m in pattern.finditer(text):
            d = _build(kind, m.groups())
            if d is not None:
                if best is None or m.start() < best[0]:
                    best = (m.start(), d)
                break
    return best[1] if best else None


def parse_date(value: str) -> dt.date:
    """Parse a user-given date (YYYY-MM-DD, YYYY-MM or YYYY); raises ValueError naming the value."""
    value = value.strip()
    for fmt in ("%Y-%m-%d", "%Y-%m", "%Y"):
        try:
            return dt.datetime.strptime(value, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"not a date: {value!r} (use YYYY-MM-DD, YYYY-MM or YYYY)")
