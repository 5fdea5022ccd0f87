"""Answer units: the sentences, list items and table rows of the context, each tied to its passage.

A unit never crosses a passage (chunk) boundary, so a cited sentence is always one passage's words. Table
rows are rendered as "header: value" pairs, so a row stands on its own ("等级: SEV-2; 响应时间: 15 分钟内").
Footnote markers that come from the source ("[8]", "[citation needed]") are removed, so they cannot be
taken for our own `[n]` citations.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from agentrag.agent.context import ELLIPSIS, Context
from agentrag.text.sentences import split_sentences
from agentrag.text.tokenize import has_cjk, tokenize
from agentrag.types import Chunk

UnitKind = Literal["sentence", "item", "row", "record"]

# Source footnotes: "[8]", "[12][13]", "[a]", "[note 3]", "[citation needed]", and the full-width forms.
_FOOTNOTE = re.compile(r"\s?[\[【](?:\d{1,3}|[a-z]|note \d+|citation needed|注 ?\d+)[\]】]", re.I)
_CELL_SPLIT = re.compile(r"\s*\|\s*")
FIELD_LINE = re.compile(r"^\s*([^:：|]{1,30}?)\s*[:：]\s+(\S.*)$")  # "Severity:   SEV-2"
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,2}[.)、]|[（(]\d{1,2}[)）])\s+")
MIN_UNIT_CHARS = 8


@dataclass(frozen=True, slots=True)
class Unit:
    block: int  # the context block (= the citation number [n])
    text: str
    kind: UnitKind
    position: int  # order inside the block
    cells: tuple[tuple[str, str], ...] = ()  # table rows: (header, value) pairs, first cell first
    tokens: frozenset[str] = field(default_factory=frozenset)

    @property
    def first_cell(self) -> str:
        return self.cells[0][1] if self.cells else ""


@lru_cache(maxsize=32768)
def unit_tokens(text: str) -> frozenset[str]:
    """A unit's tokens, cached: the same passages come back for question after question."""
    return frozenset(tokenize(text))


def strip_footnotes(text: str) -> str:
    return _FOOTNOTE.sub("", text)


def _cells(line: str) -> list[str]:
    """The cells of a table line, empty ones kept in place (a scraped table's row "| Rory McIlroy |  | Europe |"
    has as many cells as its header)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return _CELL_SPLIT.split(inner.strip())


def _is_table(lines: list[str]) -> bool:
    if len(lines) < 2 or not all("|" in line for line in lines):
        return False
    widths = {len(_cells(line)) for line in lines}
    return len(widths) == 1 and next(iter(widths)) >= 2


def _table_units(block: int, lines: list[str], start: int, caption: str = "") -> list[Unit]:
    """One unit per row. A row's words include its table's caption ("具体标准如下：" and the sentence before it):
    a row of numbers says what it is about only through them."""
    header = _cells(lines[0])
    about = unit_tokens(caption)
    out: list[Unit] = []
    for i, line in enumerate(lines[1:]):
        cells = _cells(line)
        if all(set(c) <= set("-: ") for c in cells):
            continue  # a markdown separator row
        pairs = tuple(zip(header, cells, strict=False))
        # A comma joins the pairs: a row is one statement, and ";" would end a sentence at the citation check.
        # An empty cell says nothing: "Score: , Team: Arsenal" is shown as "Team: Arsenal".
        text = ("，" if has_cjk(line) else ", ").join(f"{h}: {v}" for h, v in pairs if v.strip())
        out.append(Unit(block, text, "row", start + i, pairs, unit_tokens(text) | about))
    return out


def _is_record(lines: list[str]) -> bool:
    """A header block of "Field: value" lines (a postmortem's, an email's): one statement about one thing."""
    return len(lines) >= 3 and sum(bool(FIELD_LINE.match(line)) for line in lines) >= 0.8 * len(lines)


def _record_unit(block: int, lines: list[str], start: int) -> Unit:
    pairs = tuple((m.group(1), " ".join(m.group(2).split())) for line in lines if (m := FIELD_LINE.match(line)))
    text = ("，" if has_cjk(" ".join(lines)) else ", ").join(f"{k}: {v}" for k, v in pairs)
    return Unit(block, text, "record", start, pairs, unit_tokens(text))


def _text_units(block: int, lines: list[str], start: int) -> list[Unit]:
    out: list[Unit] = []
    for line in lines:
        kind: UnitKind = "item" if _BULLET.match(line) else "sentence"
        for sentence in split_sentences(_BULLET.sub("", line), brackets=True) or [line]:
            sentence = " ".join(sentence.split())
            if sentence == ELLIPSIS or len(sentence) < MIN_UNIT_CHARS:
                continue
            out.append(Unit(block, sentence, kind, start + len(out), (), unit_tokens(sentence)))
    return out


def _paragraphs(text: str) -> list[list[str]]:
    out = []
    for paragraph in re.split(r"\n\s*\n", strip_footnotes(text)):
        lines = [line for line in paragraph.split("\n") if line.strip() and line.strip() != ELLIPSIS]
        if lines:
            out.append(lines)
    return out


def block_units(block: int, text: str, header: str | None = None) -> list[Unit]:
    """The units of one passage, in order. `header`: the header row of a table the passage starts inside."""
    out: list[Unit] = []
    caption = ""
    for i, lines in enumerate(_paragraphs(text)):
        if i == 0 and header is not None and _is_table([header, *lines]):
            lines = [header, *lines]
        if _is_table(lines):
            out.extend(_table_units(block, lines, len(out), caption))
            caption = ""
        elif _is_record(lines):
            out.append(_record_unit(block, lines, len(out)))
        else:
            out.extend(_text_units(block, lines, len(out)))
            caption = " ".join(lines)[-200:]
    return out


ChunkAt = Callable[[str, int], Chunk | None]  # (doc_id, position) -> the document's chunk there


def table_header(chunk: Chunk, chunk_at: ChunkAt, max_back: int = 8) -> str | None:
    """The header row of the table a chunk starts inside, found in the chunks before it (a long table is split
    across chunks; only the first holds its header)."""
    first = _paragraphs(chunk.text)[:1]
    if not first or "|" not in first[0][0] or chunk.position == 0:
        return None
    width = len(_cells(first[0][0]))
    current = chunk
    for _ in range(max_back):
        previous = chunk_at(current.doc_id, current.position - 1)
        if previous is None:
            return None
        paragraphs = _paragraphs(previous.text)
        if not paragraphs or not _is_table(paragraphs[-1]) or len(_cells(paragraphs[-1][0])) != width:
            return None
        if len(paragraphs) > 1 or previous.position == 0:
            return paragraphs[-1][0]  # the table starts in this chunk: its first line is the header
        current = previous
    return None


def context_units(context: Context, chunk_at: ChunkAt | None = None) -> list[Unit]:
    units: list[Unit] = []
    for b in context.blocks:
        header = table_header(b.evidence.chunk, chunk_at) if chunk_at is not None else None
        units.extend(block_units(b.n, b.text, header))
    return units


def stating(units: list[Unit], question: str) -> list[Unit]:
    """The units, less a passage's own question that asks only what the user asks (a FAQ's "发票丢失了怎么办？" above
    its answer): it states nothing, so it is neither the answer nor a sentence that supports one."""
    asked = unit_tokens(question)
    return [u for u in units if not (u.text.rstrip().endswith(("?", "？")) and u.tokens and u.tokens <= asked)]
