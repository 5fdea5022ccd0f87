"""Structure-first splitting: sections (heading paths), then paragraphs, then sentences.

A chunk never crosses a heading: a section is packed paragraph by paragraph up to `chunk_size`
characters; a paragraph too long on its own is packed sentence by sentence (Chinese and English
sentence ends); a sentence too long on its own is wrapped at clause marks. A new chunk inside a
section starts with the previous chunk's last sentences, up to `chunk_overlap` characters (one
sentence may take twice that), never half a sentence. A section tail shorter than `min_chunk_size`
joins the chunk before it.

Every chunk is an exact span of the document text (blocks joined by blank lines), so its character
offsets point at what was indexed.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentrag.settings import ChunkingSettings
from agentrag.text.sentences import hard_wrap, split_sentences
from agentrag.types import Block

BLOCK_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Span:
    start: int
    end: int
    page: int | None


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    text: str
    heading_path: tuple[str, ...]
    page: int | None
    char_start: int
    char_end: int
    # (offset in `text`, page) where each later page begins: a quote is cited with its own page, not the first.
    page_breaks: tuple[tuple[int, int], ...] = ()


def _page_breaks(group: list[Span]) -> tuple[tuple[int, int], ...]:
    breaks: list[tuple[int, int]] = []
    page = group[0].page
    for span in group[1:]:
        if span.page is not None and span.page != page:
            breaks.append((span.start - group[0].start, span.page))
            page = span.page
    return tuple(breaks)


def document_text(blocks: list[Block]) -> str:
    return BLOCK_SEPARATOR.join(b.text for b in blocks)


def _sentence_spans(text: str, offset: int, page: int | None, limit: int) -> list[Span]:
    """Spans of the sentences of `text` (wrapped below `limit`), located in the original string."""
    spans: list[Span] = []
    cursor = 0
    for sentence in split_sentences(text):
        for piece in hard_wrap(sentence, limit):
            at = text.find(piece, cursor)
            if at < 0:  # cannot happen for pieces cut from `text`; keep going rather than lose text
                continue
            spans.append(Span(offset + at, offset + at + len(piece), page))
            cursor = at + len(piece)
    return spans


class Splitter:
    def __init__(self, settings: ChunkingSettings) -> None:
        self.size = settings.chunk_size
        self.overlap = settings.chunk_overlap
        self.min_size = settings.min_chunk_size

    def split(self, blocks: list[Block]) -> list[ChunkDraft]:
        text = document_text(blocks)
        drafts: list[ChunkDraft] = []
        offset = 0
        section: list[tuple[Block, int]] = []
        for block in blocks:
            if section and block.heading_path != section[0][0].heading_path:
                drafts.extend(self._split_section(text, section))
                section = []
            if block.text.strip():
                section.append((block, offset))
            offset += len(block.text) + len(BLOCK_SEPARATOR)
        if section:
            drafts.extend(self._split_section(text, section))
        return drafts

    def _units(self, section: list[tuple[Block, int]]) -> list[Span]:
        """Paragraph spans, or sentence spans for paragraphs that do not fit a chunk."""
        units: list[Span] = []
        for block, offset in section:
            stripped = block.text.strip()
            lead = len(block.text) - len(block.text.lstrip())
            if len(stripped) <= self.size:
                units.append(Span(offset + lead, offset + lead + len(stripped), block.page))
            else:
                units.extend(_sentence_spans(block.text, offset, block.page, self.size))
        return units

    def _overlap_start(self, text: str, chunk: list[Span]) -> list[Span]:
        """The trailing sentences of a chunk that fit in the overlap budget."""
        if self.overlap <= 0:
            return []
        last = chunk[-1]
        tail = _sentence_spans(text[last.start : last.end], last.start, last.page, self.size)
        carried: list[Span] = []
        used = 0
        for span in reversed(tail):
            length = span.end - span.start
            # One sentence may take up to twice the budget: English sentences are often longer than it.
            limit = self.overlap * 2 if not carried else self.overlap
            if used + length > limit:
                break
            carried.insert(0, span)
            used += length
        # Carrying the whole chunk again would not move the window forward.
        if carried and carried[0].start <= chunk[0].start:
            return []
        return carried

    def _split_section(self, text: str, section: list[tuple[Block, int]]) -> list[ChunkDraft]:
        heading = section[0][0].heading_path
        groups: list[list[Span]] = []
        current: list[Span] = []
        fresh = 0  # units in `current` that are not overlap carried from the previous chunk
        for unit in self._units(section):
            if current and fresh and unit.end - current[0].start > self.size:
                groups.append(current)
                current = self._overlap_start(text, current)
                fresh = 0
                # Overlap must not push the new unit past the size limit on its own.
                while current and unit.end - current[0].start > self.size:
                    current.pop(0)
            current.append(unit)
            fresh += 1
        if current and fresh:
            groups.append(current)
        if len(groups) > 1:
            prev, tail = groups[-2], groups[-1]
            new_spans = [s for s in tail if s.start >= prev[-1].end]
            if new_spans and new_spans[-1].end - new_spans[0].start < self.min_size:
                groups[-2:] = [prev + new_spans]
        return [
            ChunkDraft(
                text=text[g[0].start : g[-1].end],
                heading_path=heading,
                page=g[0].page,
                char_start=g[0].start,
                char_end=g[-1].end,
                page_breaks=_page_breaks(g),
            )
            for g in groups
        ]
