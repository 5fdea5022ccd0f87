"""Heading paths for PDFs: from the outline (bookmarks) when the file has one, else from font sizes.

The splitter never lets a chunk cross a heading, and a chunk's heading path is shown with its citation, so a
PDF gets the same structure a Markdown or Word file does. A heading paragraph stays in the text (it is on the
page); its own block and those after it carry it in their path until a heading of the same or a higher
level follows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from agentrag.ingest.loaders.common import collapse
from agentrag.types import Block

# A paragraph set this much larger than the body text, and short, is a heading (when there is no outline).
HEADING_SCALE = 1.15
HEADING_MAX_CHARS = 120
_MAX_LEVELS = 6
_SENTENCE_STOPS = (".", "!", "?", "。", "！", "？")  # a paragraph ending so is a sentence, not a heading


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    page: int  # 1-based
    level: int  # 1 for top-level bookmarks
    title: str
    top: float | None = None  # the height on the page it points at, when the destination says


def outline_entries(reader: Any) -> list[OutlineEntry]:
    """The PDF's bookmarks in reading order; [] when it has none or they cannot be read."""
    entries: list[OutlineEntry] = []

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = collapse(str(item.title or ""))
                top = item.top
                top = float(top) if isinstance(top, int | float) else None
            except Exception:  # a dangling destination is skipped, not fatal
                continue
            if title and page is not None and page >= 0:
                entries.append(OutlineEntry(page + 1, level, title, top))

    try:
        walk(list(reader.outline), 1)
    except Exception:  # a damaged outline: fall back to font sizes
        return []
    return entries


def _key(text: str) -> str:
    return collapse(text).casefold()


Paragraph = tuple[str, float, float | None]  # text, font size, height of its first baseline
Pages = list[tuple[int, list[Paragraph]]]  # (page number, its paragraphs)


def _start_of(entry: OutlineEntry, paragraphs: list[Paragraph], cursor: int) -> int:
    """The paragraph a bookmark points at: the one that reads like its title, else the first below the height
    it points at, else the one the previous bookmark started at (the top of the page for the first)."""
    wanted = _key(entry.title)
    for i in range(cursor, len(paragraphs)):
        text = _key(paragraphs[i][0])
        if text == wanted or (text.startswith(wanted) and len(text) <= HEADING_MAX_CHARS):
            return i
    if entry.top is not None:
        for i in range(cursor, len(paragraphs)):
            y = paragraphs[i][2]
            if y is not None and y <= entry.top:
                return i
    return cursor


def _outline_headings(pages: Pages, outline: list[OutlineEntry]) -> dict[tuple[int, int], list[tuple[int, str]]]:
    """(page, paragraph index) -> the outline headings that start there, each as (level, title).

    A bookmark starts at the paragraph on its page that reads like its title, else at the top of the page."""
    by_page: dict[int, list[OutlineEntry]] = {}
    for entry in outline:
        by_page.setdefault(entry.page, []).append(entry)
    starts: dict[tuple[int, int], list[tuple[int, str]]] = {}
    carried: list[OutlineEntry] = []  # bookmarks of pages without text start on the next page with some
    for number, paragraphs in pages:
        entries = [*carried, *by_page.get(number, [])]
        if not paragraphs:
            carried = entries
            continue
        carried = []
        cursor = 0
        for entry in entries:
            at = _start_of(entry, paragraphs, cursor)
            starts.setdefault((number, at), []).append((entry.level, entry.title))
            cursor = at
    return starts


def _size_headings(pages: Pages) -> dict[tuple[int, int], list[tuple[int, str]]]:
    """Short paragraphs set clearly larger than the body text, levelled by size (largest is level 1)."""
    chars: Counter[float] = Counter()
    for _, paragraphs in pages:
        for text, size, _ in paragraphs:
            chars[round(size, 1)] += len(text)
    if not chars:
        return {}
    body = chars.most_common(1)[0][0]
    if body <= 0:
        return {}
    found: list[tuple[int, int, str, float]] = []
    for number, paragraphs in pages:
        for index, (text, size, _) in enumerate(paragraphs):
            title = collapse(text)
            if (
                size >= HEADING_SCALE * body
                and len(title) <= HEADING_MAX_CHARS
                and any(ch.isalpha() for ch in title)
                and not title.endswith(_SENTENCE_STOPS)
            ):
                found.append((number, index, title, round(size * 2) / 2))
    sizes = sorted({size for *_, size in found}, reverse=True)[:_MAX_LEVELS]
    level = {size: i + 1 for i, size in enumerate(sizes)}
    return {(n, i): [(level.get(size, _MAX_LEVELS), title)] for n, i, title, size in found}


def blocks_with_headings(pages: Pages, outline: list[OutlineEntry]) -> list[Block]:
    """One block per paragraph, each with its page and the heading path it sits under."""
    starts = _outline_headings(pages, outline) if outline else _size_headings(pages)
    stack: list[tuple[int, str]] = []
    blocks: list[Block] = []
    for number, paragraphs in pages:
        for index, (text, _, _) in enumerate(paragraphs):
            for level, title in starts.get((number, index), []):
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, title))
            blocks.append(Block(text=text, page=number, heading_path=tuple(t for _, t in stack)))
    return blocks
