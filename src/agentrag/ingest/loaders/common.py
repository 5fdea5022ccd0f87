"""Helpers shared by the format loaders: wrapped-line joining (CJK-aware), display width, titles, dates,
the no-text check, one-line error messages and the parser-logging guard."""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath

from agentrag.errors import LoadError
from agentrag.text.dates import find_date
from agentrag.types import Block

NO_TEXT = "no text could be extracted"
DATE_WINDOW = 2000  # dates that describe a document sit near its top


# CJK ideographs, kana, CJK punctuation, fullwidth forms: scripts written without spaces between words.
_CJK_RANGES = (
    (0x2E80, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
    (0x20000, 0x3FFFF),
)
# Full-width punctuation: never a space next to it when a wrapped line is re-joined.
_CJK_PUNCT = frozenset("，。、；：！？）》」』】〕（《「『【〔")
# Shared by Chinese and English text: no space only when the other side is CJK.
_SHARED_PUNCT = frozenset("“”‘’—…")
SENTENCE_END = tuple(".!?。！？:：;；")
BLANK_LINES = re.compile(r"\n[ \t\u3000]*\n")
WHITESPACE = re.compile(r"\s+")


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _CJK_RANGES)


def _join_pair(left: str, right: str) -> str:
    """Join two pieces of one wrapped line: nothing between CJK characters, a space between words."""
    if not left:
        return right
    if not right:
        return left
    last, first = left[-1], right[0]
    if (_is_cjk(last) and _is_cjk(first)) or last in _CJK_PUNCT or first in _CJK_PUNCT:
        return left + right
    if (last in _SHARED_PUNCT and _is_cjk(first)) or (first in _SHARED_PUNCT and _is_cjk(last)):
        return left + right
    if last == "-" and len(left) > 1 and left[-2].isalpha() and first.islower():
        return left + right  # "well-\nknown" -> "well-known"; the hyphen stays, it may be a real one
    return f"{left} {right}"


def join_lines(lines: list[str]) -> str:
    out = ""
    for line in lines:
        out = _join_pair(out, line.strip())
    return out


def width(line: str) -> int:
    """Display columns, CJK counted as two: UTF-8 length is 3 bytes for CJK, 1 for ASCII."""
    return (len(line) + len(line.encode("utf-8"))) // 2


def stem(path: str) -> str:
    return PurePath(path).stem or PurePath(path).name


def collapse(text: str) -> str:
    return WHITESPACE.sub(" ", text).strip()


_GENERIC_TITLES = frozenset(
    {
        "untitled",
        "untitled document",
        "no title",
        "title",
        "document",
        "word document",
        "microsoft word",
        "powerpoint presentation",
        "slide 1",
        "pdf",
        "new document",
        "无标题",
        "无标题文档",
        "文档",
        "新建文档",
    }
)
_FILENAME_LIKE = re.compile(r"\.(?:docx?|pdf|txt|tex|dvi|ps|rtf|odt|pages|indd|qxd|html?)$", re.I)


def meaningful_title(raw: str | None) -> str | None:
    """A metadata title worth showing, or None for tool defaults ("untitled", "Microsoft Word - x.doc")."""
    if not raw:
        return None
    title = collapse(raw)
    title = re.sub(r"^Microsoft (?:Word|PowerPoint) - ", "", title)
    if len(title) < 2 or title.lower() in _GENERIC_TITLES or _FILENAME_LIKE.search(title):
        return None
    if not any(ch.isalpha() for ch in title):
        return None
    return title


def require_text(blocks: list[Block], path: str, reason: str = NO_TEXT) -> list[Block]:
    if not any(b.text.strip() for b in blocks):
        raise LoadError(path, reason)
    return blocks


def date_in(blocks: list[Block]) -> dt.date | None:
    head: list[str] = []
    size = 0
    for block in blocks:
        head.append(block.text)
        size += len(block.text)
        if size >= DATE_WINDOW:
            break
    return find_date("\n".join(head)[:DATE_WINDOW])


def short_error(exc: BaseException) -> str:
    """First line of an exception message, bounded: our error must stay one line."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return msg if len(msg) <= 160 else msg[:157] + "..."


_quiet_lock = threading.Lock()
_quiet_users: dict[str, int] = {}
_quiet_saved: dict[str, int] = {}


@contextmanager
def quiet(logger_name: str) -> Iterator[None]:
    """Silence a parser's logger while a file loads; thread-safe, the level comes back after the last load.

    pypdf logs a warning for every recoverable defect ("EOF marker not found") and trafilatura for every
    page it finds thin ("discarding data"); over a batch they would drown the one-line errors that matter.
    """
    logger = logging.getLogger(logger_name)
    with _quiet_lock:
        if not _quiet_users.get(logger_name):
            _quiet_saved[logger_name] = logger.level
            logger.setLevel(logging.CRITICAL + 1)
        _quiet_users[logger_name] = _quiet_users.get(logger_name, 0) + 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_users[logger_name] -= 1
            if not _quiet_users[logger_name]:
                logger.setLevel(_quiet_saved.pop(logger_name))
