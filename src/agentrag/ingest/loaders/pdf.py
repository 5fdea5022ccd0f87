"""PDF loader: the text layer (pypdf), one block per paragraph per page."""

from __future__ import annotations

import datetime as dt
import io
import logging
from collections import Counter
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from agentrag.errors import LoadError
from agentrag.ingest.loaders.common import (
    SENTENCE_END,
    LimitError,
    WorkBudget,
    collapse,
    date_in,
    join_lines,
    meaningful_title,
    pages_phrase,
    quiet,
    short_error,
    stem,
    width,
)
from agentrag.ingest.loaders.pdf_headings import Pages, Paragraph, blocks_with_headings, outline_entries
from agentrag.types import LoadedDocument

log = logging.getLogger(__name__)


if TYPE_CHECKING:
    from pypdf import PageObject


@dataclass(slots=True)
class _PdfLine:
    text: str
    y: float | None
    size: float


def _pdf_lines(page: PageObject, work: WorkBudget) -> list[_PdfLine]:
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
        work.check_time()  # one page can hold millions of text operations
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


def _pdf_paragraphs(lines: list[_PdfLine]) -> list[Paragraph]:
    """Group lines into paragraphs: a larger gap than the usual line spacing, a font-size change, a jump
    upwards (next column) or a short line ending a sentence each start a new one. Returns (text, size, y of
    the first baseline)."""
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
    widest = max(width(line.text) for line in lines)
    paragraphs: list[Paragraph] = []
    current: list[_PdfLine] = [lines[0]]
    for prev, cur in pairwise(lines):
        brk = False
        if prev.y is not None and cur.y is not None:
            gap = prev.y - cur.y
            if gap < -0.5 * body_size or (spacing is not None and gap > 1.4 * spacing):
                brk = True
        if prev.size and cur.size and abs(prev.size - cur.size) > 0.15 * max(prev.size, cur.size):
            brk = True
        if prev.text.endswith(SENTENCE_END) and width(prev.text) < 0.7 * widest:
            brk = True
        if brk:
            paragraphs.append(_paragraph(current))
            current = []
        current.append(cur)
    paragraphs.append(_paragraph(current))
    return [p for p in paragraphs if p[0]]


def _paragraph(lines: list[_PdfLine]) -> Paragraph:
    return join_lines([x.text for x in lines]), max(x.size for x in lines), lines[0].y


def _corrupt_pdf(exc: BaseException, data: bytes) -> str:
    if b"%%EOF" not in data[-2048:]:
        return f"corrupt PDF (truncated? no end-of-file marker): {short_error(exc)}"
    return f"corrupt PDF: {short_error(exc)}"


def load_pdf(data: bytes, path: str, work: WorkBudget | None = None) -> LoadedDocument:
    """A PDF's text layer: one block per paragraph per page, `page` 1-based. No OCR: scanned pages have no text."""
    if b"%PDF-" not in data[:1024]:
        raise LoadError(path, "not a PDF (content does not match .pdf)")
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    work = work or WorkBudget(path)

    with quiet("pypdf"):
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
            count = len(reader.pages)
            work.pages(count)  # before any page is parsed: counting reads only the page tree
            pages = list(reader.pages)
        except LoadError:
            raise
        except Exception as exc:  # pypdf raises many types (PdfReadError, ValueError, KeyError...) on bad input
            raise LoadError(path, _corrupt_pdf(exc, data)) from None

        pages_text: Pages = []
        failed: list[int] = []
        heading_candidate: str | None = None
        for number, page in enumerate(pages, start=1):
            work.check_time()
            try:
                paragraphs = _pdf_paragraphs(_pdf_lines(page, work))
            except LimitError:
                raise
            except Exception:  # one broken content stream should not lose the other pages
                failed.append(number)
                continue
            if number == 1 and paragraphs:
                # The body size is the one most characters are set in; a short, clearly larger line is the title.
                chars_by_size: Counter[float] = Counter()
                for text, size, _ in paragraphs:
                    chars_by_size[round(size, 1)] += len(text)
                body = chars_by_size.most_common(1)[0][0]
                top = max(paragraphs, key=lambda p: p[1])
                if top[1] >= 1.2 * body and len(top[0]) <= 120:
                    heading_candidate = top[0]
            work.paragraphs(len(paragraphs))
            pages_text.append((number, paragraphs))
        blocks = blocks_with_headings(pages_text, outline_entries(reader))

        if not pages:
            raise LoadError(path, "PDF has no pages")
        if not blocks:
            if len(failed) == len(pages):
                raise LoadError(path, "corrupt PDF: no page could be read")
            raise LoadError(path, "no extractable text (scanned PDF? OCR is not supported)")

        meta: dict[str, str] = {"pages": str(len(pages))}
        if failed:
            meta["unreadable_pages"] = ", ".join(map(str, failed))
            log.warning("%s: %s unreadable; the other pages are indexed", path, pages_phrase(failed))
        title, date = _pdf_info(reader, meta)
    return LoadedDocument(
        title=title or meaningful_title(heading_candidate) or stem(path),
        blocks=blocks,
        date=date or date_in(blocks),
        meta=meta,
        unreadable_pages=tuple(failed),
    )


def _pdf_info(reader: Any, meta: dict[str, str]) -> tuple[str | None, dt.date | None]:
    """Title and creation date from the document information; the author goes into `meta`."""
    try:
        info = reader.metadata
    except Exception:
        return None, None
    if info is None:
        return None, None
    title = meaningful_title(_pdf_field(info, "/Title"))
    author = _pdf_field(info, "/Author")
    if author and author.strip().lower() not in ("anonymous", "unknown", "user", "administrator"):
        meta["author"] = collapse(author)
    try:
        created = info.creation_date
    except Exception:
        created = None
    return title, created.date() if created is not None else None


def _pdf_field(info: Any, key: str) -> str | None:
    try:
        value = info.get(key)
    except Exception:
        return None
    return str(value) if value else None
