"""File loaders: bytes of one file in, documents made of structural blocks out.

One function per format, each `(data, path) -> LoadedDocument` (JSONL returns a list, one document per
record), and `load_path`, which checks size and content before dispatching. Loaders keep structure (headings,
paragraphs, lists, tables, code, pages) because the splitter cuts along it; they never return a document
without text: every failure is a `LoadError` that names the file and says why in one line.

Heavy parsers (pypdf, python-docx, trafilatura) are imported on first use, so a plain-text ingest or a CLI
start does not pay for them.
"""

from __future__ import annotations

import datetime as dt
import html
import io
import json
import logging
import re
import threading
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt

from agentrag.errors import LoadError
from agentrag.ingest.encoding import decode_text
from agentrag.text.dates import find_date
from agentrag.types import Block, LoadedDocument

if TYPE_CHECKING:
    from docx.table import Table
    from docx.text.paragraph import Paragraph
    from lxml.html import HtmlElement
    from markdown_it.token import Token
    from pypdf import PageObject

SUPPORTED_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".jsonl")

NO_TEXT = "no text could be extracted"
_DATE_WINDOW = 2000  # dates that describe a document sit near its top
_MB = 1024 * 1024

# ---------------------------------------------------------------------------------------------- shared text

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
_SENTENCE_END = tuple(".!?。！？:：;；")
_LIST_MARKER = re.compile(
    r"^\s*(?:[-*+•·●○▪■◆]\s|\d{1,3}[.)、]\s?|[a-zA-Z][.)]\s|[（(]?[一二三四五六七八九十]+[)）、.]|[（(]\d{1,3}[)）])"
)
_BLANK_LINES = re.compile(r"\n[ \t\u3000]*\n")
_WHITESPACE = re.compile(r"\s+")


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


def _join_lines(lines: list[str]) -> str:
    out = ""
    for line in lines:
        out = _join_pair(out, line.strip())
    return out


def _width(line: str) -> int:
    """Display columns, CJK counted as two: UTF-8 length is 3 bytes for CJK, 1 for ASCII."""
    return (len(line) + len(line.encode("utf-8"))) // 2


def _stem(path: str) -> str:
    return PurePath(path).stem or PurePath(path).name


def _collapse(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


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


def _meaningful_title(raw: str | None) -> str | None:
    """A metadata title worth showing, or None for tool defaults ("untitled", "Microsoft Word - x.doc")."""
    if not raw:
        return None
    title = _collapse(raw)
    title = re.sub(r"^Microsoft (?:Word|PowerPoint) - ", "", title)
    if len(title) < 2 or title.lower() in _GENERIC_TITLES or _FILENAME_LIKE.search(title):
        return None
    if not any(ch.isalpha() for ch in title):
        return None
    return title


def _require_text(blocks: list[Block], path: str, reason: str = NO_TEXT) -> list[Block]:
    if not any(b.text.strip() for b in blocks):
        raise LoadError(path, reason)
    return blocks


def _date_in(blocks: list[Block]) -> dt.date | None:
    head: list[str] = []
    size = 0
    for block in blocks:
        head.append(block.text)
        size += len(block.text)
        if size >= _DATE_WINDOW:
            break
    return find_date("\n".join(head)[:_DATE_WINDOW])


def _short_error(exc: BaseException) -> str:
    """First line of an exception message, bounded: our error must stay one line."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return msg if len(msg) <= 160 else msg[:157] + "..."


_quiet_lock = threading.Lock()
_quiet_users: dict[str, int] = {}
_quiet_saved: dict[str, int] = {}


@contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
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


# ---------------------------------------------------------------------------------------------- plain text


def _txt_blocks(text: str) -> list[Block]:
    """Blank-line paragraphs; hard-wrapped lines re-joined; long unwrapped lines are paragraphs of their own.

    A file counts as hard-wrapped when its long lines cluster at one width (40-120 columns, the 90th
    percentile). Inside such a file a line is joined to the next when it reaches near that width or does
    not end a sentence, unless the next line starts a list item or an indented paragraph. Lines wider than
    that range were not wrapped by anyone: each is a paragraph (Chinese text often has no blank lines).
    """
    groups = [g for g in _BLANK_LINES.split(text) if g.strip()]
    widths = sorted(_width(line) for line in text.split("\n") if line.strip())
    if not widths:
        return []
    wrap = widths[min(len(widths) - 1, int(len(widths) * 0.9))]
    hard_wrapped = 40 <= wrap <= 120 and len(widths) >= 3
    blocks: list[Block] = []
    for group in groups:
        raw_lines = [line.rstrip() for line in group.split("\n") if line.strip()]
        if not hard_wrapped:
            if any(_width(line) > 120 for line in raw_lines):
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
            near_wrap = _width(line) >= 0.6 * wrap
            continues = near_wrap and not (line.endswith(_SENTENCE_END) and _width(line) < 0.85 * wrap)
            starts_new = _LIST_MARKER.match(nxt) is not None or (nxt[:1] in " \t\u3000" and line[:1] not in " \t\u3000")
            if not continues or starts_new:
                out.append(_join_lines(current))
                current = []
        if current:
            out.append(_join_lines(current))
        blocks.append(Block(text="\n".join(out)))
    return blocks


def load_txt(data: bytes, path: str) -> LoadedDocument:
    """A plain-text file: decoded (UTF-8/16/32, GB18030...), paragraphs as blocks, title from a short first line."""
    text = decode_text(data, path)
    blocks = _require_text(_txt_blocks(text), path)
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    title = first if len(first) <= 80 else _stem(path)
    return LoadedDocument(title=title, blocks=blocks, date=find_date(text[:_DATE_WINDOW]))


# ---------------------------------------------------------------------------------------------- markdown

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
    return "\n".join(c for c in (_collapse(line) for line in text.split("\n")) if c)


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
    return "\n".join(_join_lines(hard.split("\n")) for hard in raw.split("\x00")).strip()


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


def _markdown_blocks(text: str) -> tuple[list[Block], str | None]:
    """Blocks with heading paths, and the first level-1 heading (a title candidate)."""
    tokens = _MD.parse(text)
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    first_h1: str | None = None

    def add(content: str) -> None:
        if content.strip():
            blocks.append(Block(text=content, heading_path=tuple(h for _, h in stack)))

    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if kind == "heading_open":
            level = int(tok.tag[1])
            heading = _EDIT_LINK.sub("", _inline_text(tokens[i + 1]).replace("\n", " "))
            while stack and stack[-1][0] >= level:
                stack.pop()
            if heading:
                stack.append((level, heading))
                if level == 1 and first_h1 is None:
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


def load_markdown(data: bytes, path: str) -> LoadedDocument:
    """Markdown: heading paths from `#` and setext headings, front matter feeding title, date and meta."""
    text = decode_text(data, path)
    front, body = _front_matter(text)
    blocks, first_h1 = _markdown_blocks(body)
    _require_text(blocks, path)
    title = _meaningful_title(front.get("title")) or first_h1 or _stem(path)
    date = find_date(front["date"]) if front.get("date") else None
    meta = {k: v for k, v in front.items() if k not in ("title", "date") and v}
    return LoadedDocument(title=title, blocks=blocks, date=date or _date_in(blocks), meta=meta)


# ---------------------------------------------------------------------------------------------- HTML

_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_DATE_META = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "date",
    "dc.date",
    "dc.date.issued",
    "dcterms.created",
    "dcterms.issued",
    "citation_publication_date",
    "citation_date",
    "pubdate",
    "publishdate",
    "publish_date",
    "publication_date",
    "sailthru.date",
    "article:modified_time",
    "dcterms.modified",
    "last-modified",
)
# Never visible content.
_NEVER_TEXT_TAGS = ("script", "style", "noscript", "template")
# Usually boilerplate; kept when they hold most of the page: broken markup can nest a whole page inside a
# <header> or a <button> (seen in the wild), and ASP.NET pages wrap everything in one <form>.
_CHROME_TAGS = frozenset(
    {"nav", "header", "footer", "aside", "form", "menu", "dialog", "button", "select", "svg", "iframe", "object"}
)
_BOILERPLATE_WORDS = frozenset(
    {
        "cookie",
        "cookies",
        "consent",
        "gdpr",
        "nav",
        "navbar",
        "navigation",
        "menu",
        "breadcrumb",
        "breadcrumbs",
        "sidebar",
        "share",
        "sharing",
        "social",
        "subscribe",
        "newsletter",
        "footer",
        "banner",
        "advert",
        "advertisement",
        "ads",
        "popup",
        "modal",
    }
)
_BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search"})
_CLASS_WORDS = re.compile(r"[\s_-]+")
_HTML_BLOCK_TAGS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "body",
        "blockquote",
        "address",
        "center",
        "figure",
        "figcaption",
        "dl",
        "dt",
        "dd",
        "details",
        "summary",
        "caption",
        "fieldset",
        "hr",
        "li",
        "tr",
    }
)


def _decode_html(data: bytes, path: str) -> str:
    m = _META_CHARSET.search(data[:4096])
    declared = m.group(1).decode("ascii", "ignore") if m else None
    return _XML_DECL.sub("", decode_text(data, path, declared=declared), count=1)


def _html_meta(tree: HtmlElement) -> tuple[str | None, dt.date | None, dict[str, str]]:
    """Title (<title>, og:title, first h1), publication date and author from the page head."""
    title: str | None = None
    for node in tree.iter("title"):
        title = _meaningful_title(node.text_content())
        break
    metas: dict[str, str] = {}
    for node in tree.iter("meta"):
        key = node.get("property") or node.get("name") or node.get("itemprop") or node.get("http-equiv") or ""
        content = node.get("content")
        if key and content and key.lower() not in metas:
            metas[key.lower()] = content.strip()
    title = title or _meaningful_title(metas.get("og:title"))
    if title is None:
        for node in tree.iter("h1"):
            title = _meaningful_title(node.text_content())
            if title:
                break
    date: dt.date | None = None
    for key in _DATE_META:
        if key in metas:
            date = find_date(metas[key])
            if date:
                break
    if date is None:
        for node in tree.iter("time"):
            date = find_date(node.get("datetime") or node.text_content())
            if date:
                break
    meta = {"author": _collapse(metas["author"])} if metas.get("author") else {}
    return title, date, meta


def _text_of(node: HtmlElement) -> str:
    return _WHITESPACE.sub(" ", node.text_content()).strip()


def _is_chrome(node: HtmlElement) -> bool:
    """Navigation, banners, footers and cookie notices, by tag, ARIA role or class/id words."""
    if node.tag in _CHROME_TAGS or (node.get("role") or "").lower() in _BOILERPLATE_ROLES:
        return True
    marker = f"{node.get('id') or ''} {node.get('class') or ''}".lower()
    return any(word in _BOILERPLATE_WORDS for word in _CLASS_WORDS.split(marker) if word)


def _fallback_html_blocks(tree: HtmlElement) -> list[Block]:
    """Plain lxml extraction for pages trafilatura cannot structure (often tiny pages it calls boilerplate)."""
    for node in list(tree.iter(*_NEVER_TEXT_TAGS)):
        node.drop_tree()
    root = tree.find("body")
    if root is None:
        root = tree
    total = len(root.text_content())
    for node in list(root.iter()):
        if not isinstance(node.tag, str) or node is root or node.tag in ("main", "article"):
            continue
        if _is_chrome(node) and len(node.text_content()) <= 0.5 * total:
            node.drop_tree()
    blocks: list[Block] = []
    stack: list[tuple[int, str]] = []
    buffer: list[str] = []

    def flush() -> None:
        # HTML whitespace collapses to one space; only <br> (marked "\x00") makes a line break.
        lines = (_WHITESPACE.sub(" ", part).strip() for part in "".join(buffer).split("\x00"))
        buffer.clear()
        text = "\n".join(line for line in lines if line)
        if text:
            blocks.append(Block(text=text, heading_path=tuple(h for _, h in stack)))

    def add(text: str) -> None:
        if text.strip():
            blocks.append(Block(text=text, heading_path=tuple(h for _, h in stack)))

    def walk(node: HtmlElement) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag and len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            flush()
            level = int(tag[1])
            heading = _text_of(node)
            while stack and stack[-1][0] >= level:
                stack.pop()
            if heading:
                stack.append((level, heading))
        elif tag in ("ul", "ol"):
            flush()
            items = [_text_of(li) for li in node.iterchildren("li")]
            add("\n".join(f"- {item}" for item in items if item))
        elif tag == "table":
            flush()
            rows = []
            for tr in node.iter("tr"):
                cells = [_text_of(c) for c in tr if isinstance(c.tag, str) and c.tag in ("td", "th")]
                if any(cells):
                    rows.append(" | ".join(cells))
            add("\n".join(rows))
        elif tag == "pre":
            flush()
            add(node.text_content().strip("\n"))
        elif tag == "br":
            buffer.append("\x00")
            return
        else:
            block = tag in _HTML_BLOCK_TAGS
            if block:
                flush()
            if tag and node.text:
                buffer.append(node.text)
            for child in node:
                walk(child)
                if child.tail:
                    buffer.append(child.tail)
            if block:
                flush()
            return
        # headings, lists, tables and pre handled their own content; their tail is the caller's

    walk(root)
    flush()
    return blocks


def load_html(data: bytes, path: str) -> LoadedDocument:
    """An HTML page: the main text (trafilatura), without navigation, scripts, footers or cookie banners."""
    import lxml.html
    from lxml.etree import ParserError

    text = _decode_html(data, path)
    if not text.strip():
        raise LoadError(path, NO_TEXT)
    try:
        tree = lxml.html.document_fromstring(text)
    except (ParserError, ValueError) as exc:
        raise LoadError(path, f"{NO_TEXT} (unparsable HTML: {_short_error(exc)})") from None
    title, date, meta = _html_meta(tree)

    import trafilatura

    try:
        with _quiet("trafilatura"):
            markdown = trafilatura.extract(
                text,
                output_format="markdown",
                include_tables=True,
                include_comments=False,
                include_images=False,
                include_links=False,
                include_formatting=True,  # trafilatura writes markdown headings only with formatting on
                deduplicate=False,
            )
    except Exception:  # an extractor bug on one odd page must not lose the page: the lxml walk still runs
        markdown = None
    blocks = _markdown_blocks(markdown)[0] if markdown and markdown.strip() else []
    if not markdown or "\n\n" not in markdown.strip():
        # No blank line means trafilatura gave up on the layout and returned every text node in one run
        # (navigation included). The lxml walk keeps headings and drops chrome; it wins unless it lost
        # most of the text.
        try:
            fallback = _fallback_html_blocks(tree)
        except RecursionError:  # pathologically deep markup
            fallback = []
        extracted = sum(len(b.text) for b in blocks)
        if fallback and sum(len(b.text) for b in fallback) >= 0.5 * extracted:
            blocks = fallback
    _require_text(blocks, path)
    return LoadedDocument(title=title or _stem(path), blocks=blocks, date=date or _date_in(blocks), meta=meta)


# ---------------------------------------------------------------------------------------------- PDF


@dataclass(slots=True)
class _PdfLine:
    text: str
    y: float | None
    size: float


def _pdf_lines(page: PageObject) -> list[_PdfLine]:
    """The page's text lines, each with its baseline height and font size (from pypdf's text visitor)."""
    lines: list[_PdfLine] = []
    parts: list[str] = []
    state: dict[str, Any] = {"y": None, "size": 0.0}

    def end_line() -> None:
        text = "".join(parts).strip()
        if text:
            lines.append(_PdfLine(text, state["y"], state["size"]))
        parts.clear()
        state["y"], state["size"] = None, 0.0

    def visit(text: str, cm: list[float], tm: list[float], font: Any, font_size: float) -> None:
        pieces = text.split("\n")
        for k, piece in enumerate(pieces):
            if k:
                end_line()
            if not piece:
                continue
            if piece.strip():
                a = tm[0] * cm[0] + tm[1] * cm[2]
                b = tm[0] * cm[1] + tm[1] * cm[3]
                c = tm[2] * cm[0] + tm[3] * cm[2]
                d = tm[2] * cm[1] + tm[3] * cm[3]
                size = abs(font_size) * abs(a * d - b * c) ** 0.5
                if state["y"] is None:
                    state["y"] = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
                state["size"] = max(state["size"], size)
            parts.append(piece)

    page.extract_text(visitor_text=visit)
    end_line()
    return lines


def _pdf_paragraphs(lines: list[_PdfLine]) -> list[tuple[str, float]]:
    """Group lines into paragraphs: a larger gap than the usual line spacing, a font-size change, a jump
    upwards (next column) or a short line ending a sentence each start a new one. Returns (text, size)."""
    if not lines:
        return []
    sizes = Counter(round(line.size, 1) for line in lines for _ in range(max(1, len(line.text) // 20)))
    body_size = sizes.most_common(1)[0][0] or 10.0
    gaps = [
        round(prev.y - cur.y, 1)
        for prev, cur in pairwise(lines)
        if prev.y is not None and cur.y is not None and prev.y - cur.y >= 0.6 * body_size
    ]
    spacing: float | None = None
    if gaps:
        value, count = Counter(gaps).most_common(1)[0]
        spacing = value if count >= 2 else min(gaps)
    widest = max(_width(line.text) for line in lines)
    paragraphs: list[tuple[str, float]] = []
    current: list[_PdfLine] = [lines[0]]
    for prev, cur in pairwise(lines):
        brk = False
        if prev.y is not None and cur.y is not None:
            gap = prev.y - cur.y
            if gap < -0.5 * body_size or (spacing is not None and gap > 1.4 * spacing):
                brk = True
        if prev.size and cur.size and abs(prev.size - cur.size) > 0.15 * max(prev.size, cur.size):
            brk = True
        if prev.text.endswith(_SENTENCE_END) and _width(prev.text) < 0.7 * widest:
            brk = True
        if brk:
            paragraphs.append((_join_lines([x.text for x in current]), max(x.size for x in current)))
            current = []
        current.append(cur)
    paragraphs.append((_join_lines([x.text for x in current]), max(x.size for x in current)))
    return [(text, size) for text, size in paragraphs if text]


def _corrupt_pdf(exc: BaseException, data: bytes) -> str:
    if b"%%EOF" not in data[-2048:]:
        return f"corrupt PDF (truncated? no end-of-file marker): {_short_error(exc)}"
    return f"corrupt PDF: {_short_error(exc)}"


def load_pdf(data: bytes, path: str) -> LoadedDocument:
    """A PDF's text layer: one block per paragraph per page, `page` 1-based. No OCR: scanned pages have no text."""
    if b"%PDF-" not in data[:1024]:
        raise LoadError(path, "not a PDF (content does not match .pdf)")
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    with _quiet("pypdf"):
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                try:
                    opened = reader.decrypt("")
                except DependencyError:
                    reason = "encrypted PDF (AES; install the 'cryptography' package to read it)"
                    raise LoadError(path, reason) from None
                if not opened:
                    raise LoadError(path, "encrypted PDF (password required)")
            pages = list(reader.pages)
        except LoadError:
            raise
        except Exception as exc:  # pypdf raises many types (PdfReadError, ValueError, KeyError...) on bad input
            raise LoadError(path, _corrupt_pdf(exc, data)) from None

        blocks: list[Block] = []
        failed: list[int] = []
        heading_candidate: str | None = None
        for number, page in enumerate(pages, start=1):
            try:
                paragraphs = _pdf_paragraphs(_pdf_lines(page))
            except Exception:  # one broken content stream should not lose the other pages
                failed.append(number)
                continue
            if number == 1 and paragraphs:
                # The body size is the one most characters are set in; a short, clearly larger line is the title.
                chars_by_size: Counter[float] = Counter()
                for text, size in paragraphs:
                    chars_by_size[round(size, 1)] += len(text)
                body = chars_by_size.most_common(1)[0][0]
                top = max(paragraphs, key=lambda p: p[1])
                if top[1] >= 1.2 * body and len(top[0]) <= 120:
                    heading_candidate = top[0]
            blocks.extend(Block(text=text, page=number) for text, _ in paragraphs)

        if not pages:
            raise LoadError(path, "PDF has no pages")
        if not blocks:
            if len(failed) == len(pages):
                raise LoadError(path, "corrupt PDF: no page could be read")
            raise LoadError(path, "no extractable text (scanned PDF? OCR is not supported)")

        title: str | None = None
        date: dt.date | None = None
        meta: dict[str, str] = {"pages": str(len(pages))}
        if failed:
            meta["unreadable_pages"] = ", ".join(map(str, failed))
        try:
            info = reader.metadata
        except Exception:
            info = None
        if info is not None:
            title = _meaningful_title(_pdf_field(info, "/Title"))
            author = _pdf_field(info, "/Author")
            if author and author.strip().lower() not in ("anonymous", "unknown", "user", "administrator"):
                meta["author"] = _collapse(author)
            try:
                created = info.creation_date
            except Exception:
                created = None
            if created is not None:
                date = created.date()
    return LoadedDocument(
        title=title or _meaningful_title(heading_candidate) or _stem(path),
        blocks=blocks,
        date=date or _date_in(blocks),
        meta=meta,
    )


def _pdf_field(info: Any, key: str) -> str | None:
    try:
        value = info.get(key)
    except Exception:
        return None
    return str(value) if value else None


# ---------------------------------------------------------------------------------------------- DOCX

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.I)
# python-docx's bundled template carries this creation date; documents it made without setting one have it.
_PYTHON_DOCX_TEMPLATE_DATE = dt.datetime(2013, 12, 23, 23, 15)


def _check_docx(data: bytes, path: str) -> None:
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        raise LoadError(path, "not a DOCX (legacy Word .doc format; save it as .docx)")
    if not data.startswith(b"PK"):
        raise LoadError(path, "not a DOCX (content does not match .docx)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError) as exc:
        raise LoadError(path, f"corrupt DOCX (broken zip archive: {_short_error(exc)})") from None
    if "word/document.xml" not in names:
        raise LoadError(path, "not a DOCX (zip archive without word/document.xml)")


def _docx_heading_level(paragraph: Paragraph) -> int | None:
    """0 for the Title style, N for Heading N (also localized names and styles based on them), else None."""
    style = paragraph.style
    for _ in range(4):
        if style is None:
            return None
        name = (style.name or "").strip()
        if name.lower() in ("title", "标题"):
            return 0
        m = _HEADING_STYLE.match(name)
        if m:
            return int(m.group(1))
        style = style.base_style
    return None


def _docx_is_list(paragraph: Paragraph) -> bool:
    ppr = paragraph._p.pPr
    if ppr is not None and ppr.numPr is not None:
        return True
    name = paragraph.style.name if paragraph.style is not None else ""
    return bool(name) and name.lower().startswith("list")


def _docx_table(table: Table) -> str:
    """Rows with cells joined by " | "; a merged cell is written once."""
    rows: list[str] = []
    for row in table.rows:
        cells: list[str] = []
        previous: Any = None
        for cell in row.cells:
            if previous is not None and cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(_collapse(cell.text.replace("\n", " ")))
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def load_docx(data: bytes, path: str) -> LoadedDocument:
    """A Word document: Heading N / Title paragraphs build heading paths; tables and lists stay whole."""
    _check_docx(data, path)
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[Block] = []
        stack: list[tuple[int, str]] = []
        list_items: list[str] = []
        title_paragraph: str | None = None

        def heading_path() -> tuple[str, ...]:
            return tuple(h for _, h in stack)

        def flush_list() -> None:
            if list_items:
                blocks.append(Block(text="\n".join(f"- {item}" for item in list_items), heading_path=heading_path()))
                list_items.clear()

        for item in document.iter_inner_content():
            if isinstance(item, Table):
                flush_list()
                text = _docx_table(item)
                if text:
                    blocks.append(Block(text=text, heading_path=heading_path()))
                continue
            text = item.text.strip()
            level = _docx_heading_level(item)
            if level is not None:
                flush_list()
                if not text:
                    continue
                heading = _collapse(text.replace("\n", " "))
                if level == 0 and title_paragraph is None:
                    title_paragraph = heading
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, heading))
                continue
            if not text:
                continue
            if _docx_is_list(item) and len(text) <= 300:
                list_items.append(text)
                continue
            # Long numbered paragraphs (contract clauses) are paragraphs, not items of one list block.
            flush_list()
            blocks.append(Block(text=text, heading_path=heading_path()))
        flush_list()
        props = document.core_properties
        core_title = props.title
        stamps = [props.modified, props.created]
    except Exception as exc:  # python-docx raises KeyError, XMLSyntaxError, ValueError... on broken parts
        raise LoadError(path, f"corrupt DOCX: {_short_error(exc)}") from None

    _require_text(blocks, path)
    date: dt.date | None = None
    for stamp in stamps:
        if stamp is not None and stamp.replace(tzinfo=None) != _PYTHON_DOCX_TEMPLATE_DATE:
            date = stamp.date()
            break
    title = _meaningful_title(core_title) or title_paragraph or _stem(path)
    return LoadedDocument(title=title, blocks=blocks, date=date or _date_in(blocks))


# ---------------------------------------------------------------------------------------------- JSONL corpus

_CORE_FIELDS = ("_id", "title", "text")


def load_jsonl(data: bytes, path: str) -> list[LoadedDocument]:
    """A benchmark corpus: one `{"_id", "title", "text"}` record per line, each its own document.

    Records are trusted shapes after the checks below, so models are built without re-validation: a 5,000
    record file loads in tens of milliseconds.
    """
    text = decode_text(data, path)
    documents: list[LoadedDocument] = []
    seen: dict[str, int] = {}
    loads = json.loads
    for number, line in enumerate(text.split("\n"), start=1):
        if not line or line.isspace():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as exc:
            raise LoadError(path, f"line {number}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(record, dict):
            raise LoadError(path, f"line {number}: expected a JSON object, got {type(record).__name__}")
        doc_id = record.get("_id")
        body = record.get("text")
        title = record.get("title", "")
        if doc_id is None:
            raise LoadError(path, f"line {number}: missing field '_id'")
        if body is None:
            raise LoadError(path, f"line {number}: missing field 'text'")
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id:
            raise LoadError(path, f"line {number}: field '_id' must be a non-empty string")
        if not isinstance(body, str):
            raise LoadError(path, f"line {number}: field 'text' must be a string")
        if not isinstance(title, str):
            raise LoadError(path, f"line {number}: field 'title' must be a string")
        if doc_id in seen:
            raise LoadError(path, f"line {number}: duplicate _id '{doc_id}' (first on line {seen[doc_id]})")
        seen[doc_id] = number
        if "\r" in body:
            body = body.replace("\r\n", "\n").replace("\r", "\n")
        body = body.strip()
        title = title.strip()
        if not body:
            if not title:
                raise LoadError(path, f"line {number}: record '{doc_id}' has no text")
            body = title  # a title-only record is still a findable document
        if "\n" in body and _BLANK_LINES.search(body):
            paragraphs = [p.strip() for p in _BLANK_LINES.split(body)]
            blocks = [Block.model_construct(text=p, heading_path=(), page=None) for p in paragraphs if p]
        else:
            blocks = [Block.model_construct(text=body, heading_path=(), page=None)]
        meta = {k: v for k, v in record.items() if k not in _CORE_FIELDS and isinstance(v, str)}
        documents.append(
            LoadedDocument.model_construct(
                title=title, blocks=blocks, date=None, doc_id=doc_id, source=f"{path}#{doc_id}", meta=meta
            )
        )
    if not documents:
        raise LoadError(path, "no records (empty corpus file)")
    return documents


# ---------------------------------------------------------------------------------------------- dispatcher

_Loader = Callable[[bytes, str], LoadedDocument | list[LoadedDocument]]
_LOADERS: dict[str, _Loader] = {
    ".txt": load_txt,
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
    ".docx": load_docx,
    ".jsonl": load_jsonl,
}
# Signatures of binary formats, so a misnamed file gets a hint instead of a bare "binary file".
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"PK\x03\x04", "a zip archive (docx/xlsx/zip)"),
    (b"\xd0\xcf\x11\xe0", "an old Office file (.doc/.xls)"),
    (b"\x1f\x8b", "a gzip archive"),
)


def _too_large(size: int, max_bytes: int) -> str:
    """Both numbers in one unit ("80.0 MB > limit 64 MB"), so they compare at a glance."""
    unit, scale = ("MB", _MB) if size >= _MB else ("KB", 1024) if size >= 1024 else ("bytes", 1)
    limit = max_bytes / scale
    shown = f"{size / scale:.1f}"
    if unit == "bytes" or float(shown) <= limit:  # 64.02 MB must not read "64.0 MB > limit 64 MB"
        return f"file too large: {size:,} bytes > limit {max_bytes:,} bytes"
    limit_text = f"{limit:.0f}" if limit == int(limit) else f"{limit:.2g}"
    return f"file too large: {shown} {unit} > limit {limit_text} {unit}"


def load_path(path: Path, max_bytes: int) -> list[LoadedDocument]:
    """Load one file by its suffix, after refusing what cannot be a document: unknown types, oversized
    (checked before reading), empty, or content that does not match the suffix."""
    path = Path(path)
    name = str(path)
    suffix = path.suffix.lower()
    loader = _LOADERS.get(suffix)
    if loader is None:
        kind = f"'{suffix}'" if suffix else "(no suffix)"
        raise LoadError(name, f"unsupported file type {kind} (supported: {', '.join(SUPPORTED_SUFFIXES)})")
    try:
        if path.is_dir():
            raise LoadError(name, "is a folder, not a file")
        size = path.stat().st_size
        if size > max_bytes:
            raise LoadError(name, _too_large(size, max_bytes))
        if size == 0:
            raise LoadError(name, "empty file")
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)  # the file may have grown since stat()
    except FileNotFoundError:
        raise LoadError(name, "no such file") from None
    except PermissionError:
        raise LoadError(name, "permission denied") from None
    except IsADirectoryError:
        raise LoadError(name, "is a folder, not a file") from None
    except OSError as exc:
        raise LoadError(name, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise LoadError(name, _too_large(len(data), max_bytes))
    if not data.strip():
        raise LoadError(name, "empty file" if not data else "empty file (only whitespace)")
    if suffix in (".txt", ".md", ".markdown", ".html", ".htm", ".jsonl"):
        for magic, kind in _MAGIC:
            if data.startswith(magic):
                raise LoadError(name, f"binary file (not text): content looks like {kind}")
    loaded = loader(data, name)
    return loaded if isinstance(loaded, list) else [loaded]
