"""DOCX loader: Word headings build heading paths; tables and lists stay whole (python-docx)."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from typing import TYPE_CHECKING, Any

from agentrag.errors import LoadError
from agentrag.ingest.loaders.common import (
    HeadingPath,
    LimitError,
    WorkBudget,
    collapse,
    date_in,
    meaningful_title,
    require_text,
    short_error,
    stem,
)
from agentrag.types import Block, LoadedDocument

if TYPE_CHECKING:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.I)
# python-docx's bundled template carries this creation date; documents it made without setting one have it.
_PYTHON_DOCX_TEMPLATE_DATE = dt.datetime(2013, 12, 23, 23, 15)


def _check_docx(data: bytes, path: str, work: WorkBudget) -> None:
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        raise LoadError(path, "not a DOCX (legacy Word .doc format; save it as .docx)")
    if not data.startswith(b"PK"):
        raise LoadError(path, "not a DOCX (content does not match .docx)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            work.unzipped(archive)  # before python-docx inflates and parses the parts
    except (zipfile.BadZipFile, ValueError) as exc:
        raise LoadError(path, f"corrupt DOCX (broken zip archive: {short_error(exc)})") from None
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


def _docx_table(table: Table, work: WorkBudget) -> str:
    """Rows with cells joined by " | "; a merged cell is written once."""
    rows: list[str] = []
    for row in table.rows:
        work.paragraphs(len(row._tr.tc_lst))
        cells: list[str] = []
        previous: Any = None
        for cell in row.cells:
            if previous is not None and cell._tc is previous:
                continue
            previous = cell._tc
            cells.append(collapse(cell.text.replace("\n", " ")))
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def load_docx(data: bytes, path: str, work: WorkBudget | None = None) -> LoadedDocument:
    """A Word document: Heading N / Title paragraphs build heading paths; tables and lists stay whole."""
    work = work or WorkBudget(path)
    _check_docx(data, path, work)
    import docx
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[Block] = []
        headings = HeadingPath()
        list_items: list[str] = []
        title_paragraph: str | None = None

        def flush_list() -> None:
            if list_items:
                blocks.append(Block(text="\n".join(f"- {item}" for item in list_items), heading_path=headings.path))
                list_items.clear()

        for item in document.iter_inner_content():
            work.paragraphs()  # empty ones too: two million of them fit in 18 KB
            if isinstance(item, Table):
                flush_list()
                text = _docx_table(item, work)
                if text:
                    blocks.append(Block(text=text, heading_path=headings.path))
                continue
            text = item.text.strip()
            level = _docx_heading_level(item)
            if level is not None:
                flush_list()
                if not text:
                    continue
                heading = collapse(text.replace("\n", " "))
                if level == 0 and title_paragraph is None:
                    title_paragraph = heading
                headings.enter(level, heading)
                continue
            if not text:
                continue
            if _docx_is_list(item) and len(text) <= 300:
                list_items.append(text)
                continue
            # Long numbered paragraphs (contract clauses) are paragraphs, not items of one list block.
            flush_list()
            blocks.append(Block(text=text, heading_path=headings.path))
        flush_list()
        props = document.core_properties
        core_title = props.title
        stamps = [props.modified, props.created]
    except LimitError:
        raise
    except Exception as exc:  # python-docx raises KeyError, XMLSyntaxError, ValueError... on broken parts
        raise LoadError(path, f"corrupt DOCX: {short_error(exc)}") from None

    require_text(blocks, path)
    date: dt.date | None = None
    for stamp in stamps:
        if stamp is not None and stamp.replace(tzinfo=None) != _PYTHON_DOCX_TEMPLATE_DATE:
            date = stamp.date()
            break
    title = meaningful_title(core_title) or title_paragraph or stem(path)
    return LoadedDocument(title=title, blocks=blocks, date=date or date_in(blocks))
