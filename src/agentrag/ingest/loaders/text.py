"""Plain-text loader: paragraphs, with hard-wrapped lines re-joined."""

from __future__ import annotations

import re

from agentrag.ingest.encoding import decode_text
from agentrag.ingest.loaders.common import (
    BLANK_LINES,
    DATE_WINDOW,
    SENTENCE_END,
    HeadingPath,
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
            # An indented line after one that ends a sentence opens a paragraph; after one that does not, it carries
            # on a hanging indent ("AI-4  Give the … pool, so" / "      freshness checks survive …").
            indents = nxt[:1] in " \t\u3000" and line[:1] not in " \t\u3000" and line.endswith(SENTENCE_END)
            starts_new = _LIST_MARKER.match(nxt) is not None or indents
            if not continues or starts_new:
                out.append(join_lines(current))
                current = []
        if current:
            out.append(join_lines(current))
        blocks.append(Block(text="\n".join(out)))
    return blocks


# A line that is a heading in wiki markup ("== Root cause =="): its level is the number of equals signs.
_WIKI_HEADING = re.compile(r"^(={1,6})[ \t]*([^=\n]+?)[ \t]*\1$")


def _under_headings(blocks: list[Block]) -> list[Block]:
    """The paragraphs under the wiki-style headings that stand alone between them, each with its heading path (the
    heading lines themselves are structure, not text: "== Root cause ==" was shown as a sentence of an answer)."""
    headings = HeadingPath()
    out: list[Block] = []
    for block in blocks:
        heading = _WIKI_HEADING.match(block.text.strip())
        if heading is None:
            out.append(block.model_copy(update={"heading_path": headings.path}) if headings.path else block)
        else:
            headings.enter(len(heading.group(1)), heading.group(2))
    return out


def load_txt(data: bytes, path: str, work: WorkBudget | None = None) -> LoadedDocument:
    """A plain-text file: decoded (UTF-8/16/32, GB18030...), paragraphs as blocks (under the wiki-style headings it
    has, "== Section =="), title from a short first line."""
    text = decode_text(data, path)
    blocks = require_text(_under_headings(_txt_blocks(text)), path)
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    title = first if len(first) <= 80 else stem(path)
    (work or WorkBudget(path)).document(blocks)
    return LoadedDocument(title=title, blocks=blocks, date=find_date(text[:DATE_WINDOW]))
