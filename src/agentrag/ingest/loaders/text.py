"""Plain-text loader: paragraphs, with hard-wrapped lines re-joined."""

from __future__ import annotations

import re

from agentrag.ingest.encoding import decode_text
from agentrag.ingest.loaders.common import (
    BLANK_LINES,
    DATE_WINDOW,
    SENTENCE_END,
    WorkBudget,
    join_lines,
    require_text,
    stem,
    width,
)
from agentrag.text.dates import find_date
from agentrag.types import Block, LoadedDocument

_LIST_MARKER = re.compile(
    r"^\s*(?:[-*+•·●○▪■◆]\s|\d{1,3}[.)、]\s?|[a-zA-Z][.)]\s|[（(]?[一二三四五六七八九十]+[)）、.]|[（(]\d{1,3}[)）])"
)


def _txt_blocks(text: str) -> list[Block]:
    """Blank-line paragraphs; hard-wrapped lines re-joined; long unwrapped lines are paragraphs of their own.

    A file counts as hard-wrapped when its long lines cluster at one width (40-120 columns, the 90th
    percentile). Inside such a file a line is joined to the next when it reaches near that width or does
    not end a sentence, unless the next line starts a list item or an indented paragraph. Lines wider than
    that range were not wrapped by anyone: each is a paragraph (Chinese text often has no blank lines).
    """
    groups = [g for g in BLANK_LINES.split(text) if g.strip()]
    widths = sorted(width(line) for line in text.split("\n") if line.strip())
    if not widths:
        return []
    wrap = widths[min(len(widths) - 1, int(len(widths) * 0.9))]
    hard_wrapped = 40 <= wrap <= 120 and len(widths) >= 3
    blocks: list[Block] = []
    for group in groups:
        raw_lines = [line.rstrip() for line in group.split("\n") if line.strip()]
        if not hard_wrapped:
            if any(width(line) > 120 for line in raw_lines):
                blocks.extend(Block(text=line.strip()) for line in raw_lines)
            else:
                blocks.append(Block(text="\n".join(line.strip() for line in raw_lines)))
            continue
        out: list[str] = []
        current: list[str] = []
        for i, line in enumerate(raw_lines):
            current.append(line)
            nxt = raw_lines[i + 1] if i + 1 < len(raw_lines) else None
            if nxt is None:
                break
            near_wrap = width(line) >= 0.6 * wrap
            continues = near_wrap and not (line.endswith(SENTENCE_END) and width(line) < 0.85 * wrap)
            starts_new = _LIST_MARKER.match(nxt) is not None or (nxt[:1] in " \t\u3000" and line[:1] not in " \t\u3000")
            if not continues or starts_new:
                out.append(join_lines(current))
                current = []
        if current:
            out.append(join_lines(current))
        blocks.append(Block(text="\n".join(out)))
    return blocks


def load_txt(data: bytes, path: str, work: WorkBudget | None = None) -> LoadedDocument:
    """A plain-text file: decoded (UTF-8/16/32, GB18030...), paragraphs as blocks, title from a short first line."""
    text = decode_text(data, path)
    blocks = require_text(_txt_blocks(text), path)
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    title = first if len(first) <= 80 else stem(path)
    (work or WorkBudget(path)).document(blocks)
    return LoadedDocument(title=title, blocks=blocks, date=find_date(text[:DATE_WINDOW]))
