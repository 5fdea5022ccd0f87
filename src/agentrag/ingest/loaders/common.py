"""Helpers shared by the format loaders: wrapped-line joining (CJK-aware), display width, titles, dates,
the no-text check, one-line error messages, the parser-logging guard and the work budget of one parse."""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import threading
import time
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import PurePath

from agentrag.errors import LoadError
from agentrag.settings import ParseLimits
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


def pages_phrase(pages: Sequence[int]) -> str:
    """The words for pages, "page 3" or "pages 3, 7", in the ingest report and the log."""
    return f"page{'s' if len(pages) > 1 else ''} {', '.join(map(str, pages))}"


class HeadingPath:
    """The headings open at the current point of a document, outermost first: a heading of level n closes every
    open heading of level n or deeper (every loader's heading paths: Markdown, HTML, DOCX, wiki-style text)."""

    def __init__(self) -> None:
        self._open: list[tuple[int, str]] = []

    def enter(self, level: int, heading: str) -> None:
        """A heading of `level`; an empty one only closes what it would have closed."""
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
        if heading:
            self._open.append((level, heading))

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(h for _, h in self._open)


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


def _after_fork_in_child() -> None:
    """An ingest worker forked while another thread held the lock would wait for it forever: a new one."""
    global _quiet_lock
    _quiet_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
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


_SETTING = "ingest.limits."


class LimitError(LoadError):
    """A file needs more work to parse than a limit allows; `limit` is the setting that says how much."""

    def __init__(self, path: str, reason: str, limit: str) -> None:
        super().__init__(path, f"{reason} (setting {_SETTING}{limit})")
        self.limit = f"{_SETTING}{limit}"


class WorkBudget:
    """What one parse may still do: paragraphs, pages, decompressed bytes and wall time (`ParseLimits`).

    Loaders count as they go and the first limit passed raises `LimitError`, so a parsing bomb (a small file
    unpacking to millions of paragraphs or thousands of pages) fails in bounded time instead of holding a
    worker. Time is checked at every counted unit; a loader with a long inner loop calls `check_time`."""

    def __init__(self, path: str, limits: ParseLimits | None = None) -> None:
        self.path = path
        self.limits = limits or ParseLimits()
        self.started = time.monotonic()
        self.deadline = self.started + self.limits.max_parse_seconds
        self.paragraphs_seen = 0

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            reason = f"parsing took longer than {self.limits.max_parse_seconds:g} s"
            raise LimitError(self.path, reason, "max_parse_seconds")

    def paragraphs(self, count: int = 1) -> None:
        self.paragraphs_seen += count
        if self.paragraphs_seen > self.limits.max_paragraphs:
            reason = f"too many paragraphs: over {self.limits.max_paragraphs:,}"
            raise LimitError(self.path, reason, "max_paragraphs")
        self.check_time()

    def document(self, blocks: list[Block]) -> None:
        """A document a loader built in one go (text, Markdown, HTML, a corpus record): its blocks, its time."""
        if len(blocks) > self.limits.max_paragraphs:
            reason = f"too many paragraphs: {len(blocks):,} > {self.limits.max_paragraphs:,}"
            raise LimitError(self.path, reason, "max_paragraphs")
        self.check_time()

    def pages(self, count: int) -> None:
        if count > self.limits.max_pages:
            raise LimitError(self.path, f"too many pages: {count:,} > {self.limits.max_pages:,}", "max_pages")

    def unzipped(self, archive: zipfile.ZipFile) -> None:
        """The archive's declared member sizes; zipfile never inflates a member past its declared size."""
        total = sum(info.file_size for info in archive.infolist())
        limit = self.limits.max_unzipped_mb * 1024 * 1024
        if total > limit:
            reason = f"unpacks to {total / 1024 / 1024:,.1f} MB > {self.limits.max_unzipped_mb:g} MB"
            raise LimitError(self.path, reason, "max_unzipped_mb")


# Signatures of binary formats, so a misnamed file gets a hint instead of a bare "binary file".
BINARY_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a zip archive (docx/xlsx/zip)"),
    (b"\xd0\xcf\x11\xe0", "an old Office file (.doc/.xls)"),
    (b"\x1f\x8b", "a gzip archive"),
)
