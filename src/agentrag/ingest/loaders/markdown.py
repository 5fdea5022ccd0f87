"""Markdown loader, and the markdown block parser the HTML loader reuses for trafilatura's output."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from markdown_it import MarkdownIt

from agentrag.ingest.encoding import decode_text
from agentrag.ingest.loaders.common import (
    HeadingPath,
    WorkBudget,
    collapse,
    date_in,
    join_lines,
    meaningful_title,
    require_text,
    stem,
)
from agentrag.text.dates import find_date
from agentrag.types import Block, LoadedDocument

if TYPE_CHECKING:
    from markdown_it.token import Token

_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_FRONT_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")
_TAG = re.compile(r"<[^>]*>")
_HTML_DROP = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
_BR = re.compile(r"<br\s*/?>", re.I)


def _strip_tags(fragment: str) -> str:
    """Text of an HTML fragment inside markdown: no tags, no entities, no script or comments."""
    text = _HTML_DROP.sub("", fragment)
    text = _BR.sub("\n", text)
    text = html.unescape(_TAG.sub(" ", text))
    return "\n".join(c for c in (collapse(line) for line in text.split("\n")) if c)


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """Split YAML front matter (`---` ... `---` at the very top) from the body.

    Only flat `key: value` pairs and lists (`[a, b]` or `- a` lines) are read: that is what title, date and
    tags use. Text that does not look like YAML is left alone (a leading `---` can be a rule).
    """
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, min(len(lines), 400)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    meta: dict[str, str] = {}
    key: str | None = None
    items: list[str] = []
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _FRONT_KEY.match(line)
        if m:
            if key is not None and items:
                meta[key] = ", ".join(items)
            key, value = m.group(1).lower(), m.group(2).strip()
            items = []
            if value.startswith("[") and value.endswith("]"):
                meta[key] = ", ".join(_unquote(v) for v in value[1:-1].split(",") if v.strip())
            elif value and value not in ("|", ">"):
                meta[key] = _unquote(value)
        elif line.lstrip().startswith("- ") and key is not None:
            items.append(_unquote(line.lstrip()[2:]))
        elif not line.startswith((" ", "\t")):
            return {}, text  # not YAML: leave the text as it is
    if key is not None and items:
        meta[key] = ", ".join(items)
    if not meta:
        return {}, text
    return meta, "\n".join(lines[end + 1 :])


def _inline_text(token: Token) -> str:
    """Visible text of an inline token: link text without URLs, code text without backticks, alt text."""
    parts: list[str] = []
    for child in token.children or []:
        kind = child.type
        if kind in ("text", "code_inline", "image"):  # an image's content is its alt text
            parts.append(child.content)
        elif kind == "softbreak":
            parts.append("\n")
        elif kind == "hardbreak" or (kind == "html_inline" and _BR.fullmatch(child.content.strip())):
            parts.append("\x00")
    raw = "".join(parts).replace("\xa0", " ")  # &nbsp; from HTML pages is a plain space for search
    return "\n".join(join_lines(hard.split("\n")) for hard in raw.split("\x00")).strip()


def _closing(tokens: list[Token], start: int) -> int:
    """Index of the token closing the container opened at `start`."""
    depth = 0
    for i in range(start, len(tokens)):
        depth += tokens[i].nesting
        if depth == 0:
            return i
    return len(tokens) - 1


def _md_list(tokens: list[Token]) -> str:
    """A whole list as one block: one line per item, nested items indented, markers kept."""
    lines: list[str] = []
    depth = 0
    marker = ""
    for tok in tokens:
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif tok.type == "list_item_open":
            marker = f"{tok.info}{tok.markup}" if tok.info else "-"
        elif tok.type in ("inline", "fence", "code_block", "html_block"):
            if tok.type == "inline":
                text = _inline_text(tok)
            elif tok.type == "html_block":
                text = _strip_tags(tok.content)
            else:
                text = tok.content.rstrip("\n")
            if not text.strip():
                continue
            indent = "  " * max(depth - 1, 0)
            lead = f"{indent}{marker} " if marker else f"{indent}  "
            marker = ""
            body = text.split("\n")
            lines.append(lead + body[0])
            lines.extend(f"{indent}  {rest}" for rest in body[1:])
    return "\n".join(lines)


_TABLE_RULE = re.compile(r":?-+:?")
# MediaWiki pages keep their section "edit" links in headings.
_EDIT_LINK = re.compile(r"\s*\[(?:edit|编辑|編輯)\]$", re.I)


def _md_table(tokens: list[Token]) -> str:
    rows: list[str] = []
    cells: list[str] = []
    for tok in tokens:
        if tok.type == "tr_open":
            cells = []
        elif tok.type == "inline":
            cells.append(_inline_text(tok).replace("\n", " "))
        elif tok.type == "tr_close":
            while cells and not cells[-1]:
                cells.pop()
            # trafilatura repeats the |---| separator after some rows; it is layout, not content
            if cells and not all(_TABLE_RULE.fullmatch(c) for c in cells):
                rows.append(" | ".join(cells))
    return "\n".join(rows)


def markdown_blocks(text: str) -> tuple[list[Block], str | None]:
    """Blocks with heading paths, and the first level-1 heading (a title candidate)."""
    tokens = _MD.parse(text)
    blocks: list[Block] = []
    headings = HeadingPath()
    first_h1: str | None = None

    def add(content: str) -> None:
        if content.strip():
            blocks.append(Block(text=content, heading_path=headings.path))

    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            level = int(tok.tag[1])
            heading = _EDIT_LINK.sub("", _inline_text(tokens[i + 1]).replace("\n", " "))
            headings.enter(level, heading)
            if heading and level == 1 and first_h1 is None:
                first_h1 = heading
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open", "table_open"):
            end = _closing(tokens, i)
            add(_md_list(tokens[i : end + 1]) if kind != "table_open" else _md_table(tokens[i : end + 1]))
            i = end + 1
            continue
        if kind == "inline":
            add(_inline_text(tok))
        elif kind in ("fence", "code_block"):
            add(tok.content.rstrip("\n"))
        elif kind == "html_block":
            add(_strip_tags(tok.content))
        i += 1
    return blocks, first_h1


def load_markdown(data: bytes, path: str, work: WorkBudget | None = None) -> LoadedDocument:
    """Markdown: heading paths from `#` and setext headings, front matter feeding title, date and meta."""
    text = decode_text(data, path)
    front, body = _front_matter(text)
    blocks, first_h1 = markdown_blocks(body)
    require_text(blocks, path)
    title = meaningful_title(front.get("title")) or first_h1 or stem(path)
    date = find_date(front["date"]) if front.get("date") else None
    meta = {k: v for k, v in front.items() if k not in ("title", "date") and v}
    (work or WorkBudget(path)).document(blocks)
    return LoadedDocument(title=title, blocks=blocks, date=date or date_in(blocks), meta=meta)
