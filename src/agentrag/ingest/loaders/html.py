"""HTML loader: the main text via trafilatura, with a plain lxml walk for pages it cannot structure."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from agentrag.errors import LoadError
from agentrag.ingest.encoding import decode_text
from agentrag.ingest.loaders.common import (
    NO_TEXT,
    WHITESPACE,
    HeadingPath,
    WorkBudget,
    collapse,
    date_in,
    meaningful_title,
    quiet,
    require_text,
    short_error,
    stem,
)
from agentrag.ingest.loaders.markdown import markdown_blocks
from agentrag.text.dates import find_date
from agentrag.types import Block, LoadedDocument

if TYPE_CHECKING:
    from lxml.html import HtmlElement

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
        title = meaningful_title(node.text_content())
        break
    metas: dict[str, str] = {}
    for node in tree.iter("meta"):
        key = node.get("property") or node.get("name") or node.get("itemprop") or node.get("http-equiv") or ""
        content = node.get("content")
        if key and content and key.lower() not in metas:
            metas[key.lower()] = content.strip()
    title = title or meaningful_title(metas.get("og:title"))
    if title is None:
        for node in tree.iter("h1"):
            title = meaningful_title(node.text_content())
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
    meta = {"author": collapse(metas["author"])} if metas.get("author") else {}
    return title, date, meta


def _text_of(node: HtmlElement) -> str:
    return WHITESPACE.sub(" ", node.text_content()).strip()


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
    headings = HeadingPath()
    buffer: list[str] = []

    def flush() -> None:
        # HTML whitespace collapses to one space; only <br> (marked "\x00") makes a line break.
        lines = (WHITESPACE.sub(" ", part).strip() for part in "".join(buffer).split("\x00"))
        buffer.clear()
        text = "\n".join(line for line in lines if line)
        if text:
            blocks.append(Block(text=text, heading_path=headings.path))

    def add(text: str) -> None:
        if text.strip():
            blocks.append(Block(text=text, heading_path=headings.path))

    def walk(node: HtmlElement) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag and len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            flush()
            headings.enter(int(tag[1]), _text_of(node))
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


def load_html(data: bytes, path: str, work: WorkBudget | None = None) -> LoadedDocument:
    """An HTML page: the main text (trafilatura), without navigation, scripts, footers or cookie banners."""
    import lxml.html
    from lxml.etree import ParserError

    text = _decode_html(data, path)
    if not text.strip():
        raise LoadError(path, NO_TEXT)
    try:
        tree = lxml.html.document_fromstring(text)
    except (ParserError, ValueError) as exc:
        raise LoadError(path, f"{NO_TEXT} (unparsable HTML: {short_error(exc)})") from None
    title, date, meta = _html_meta(tree)

    import trafilatura

    try:
        with quiet("trafilatura"):
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
    blocks = markdown_blocks(markdown)[0] if markdown and markdown.strip() else []
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
    require_text(blocks, path)
    (work or WorkBudget(path)).document(blocks)
    return LoadedDocument(title=title or stem(path), blocks=blocks, date=date or date_in(blocks), meta=meta)
