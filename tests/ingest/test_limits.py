"""Parsing is bounded by work, not only by file size: a file over a limit fails with a line naming the limit's
setting, and what is already stored stays. Unreadable PDF pages are reported and logged once."""

from __future__ import annotations

import io
import json
import logging
import re
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.embed.base import Embedder
from agentrag.ingest.loaders import LimitError, load_path
from agentrag.kb import KnowledgeBase
from agentrag.settings import ParseLimits, load_settings

runner = CliRunner()
LIMIT = 64 * 1024 * 1024


def docx_bomb(path: Path, empty_paragraphs: int) -> Path:
    """A real Word file whose body is mostly empty paragraphs: tiny zipped, slow to walk."""
    import docx

    document = docx.Document()
    document.add_paragraph("The only real sentence in this file.")
    buffer = io.BytesIO()
    document.save(buffer)
    out = io.BytesIO()
    with zipfile.ZipFile(buffer) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "word/document.xml":
                data = data.replace(b"<w:sectPr", b"<w:p/>" * empty_paragraphs + b"<w:sectPr", 1)
            dst.writestr(item.filename, data)
    path.write_bytes(out.getvalue())
    return path


def many_pages_pdf(path: Path, pages: int) -> Path:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("helvetica", size=11)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {number} describes pump {number} and its valves.")
    pdf.output(str(path))
    return path


def limit_error(path: Path, limits: ParseLimits) -> LimitError:
    with pytest.raises(LimitError) as info:
        load_path(path, LIMIT, limits)
    assert "\n" not in str(info.value)
    return info.value


def test_a_docx_of_empty_paragraphs_is_refused_at_the_paragraph_limit(tmp_path: Path) -> None:
    path = docx_bomb(tmp_path / "bomb.docx", 5000)
    assert path.stat().st_size < 50_000  # python-docx's own template is most of it
    error = limit_error(path, ParseLimits(max_paragraphs=1000))
    assert error.reason == "too many paragraphs: over 1,000 (setting ingest.limits.max_paragraphs)"
    assert error.limit == "ingest.limits.max_paragraphs"
    (doc,) = load_path(path, LIMIT, ParseLimits(max_paragraphs=10_000))  # under the limit it loads
    assert doc.text == "The only real sentence in this file."


def test_a_docx_that_unpacks_too_large_is_refused_before_parsing(tmp_path: Path) -> None:
    path = docx_bomb(tmp_path / "big.docx", 300_000)  # 1.8 MB more XML, a few KB more zipped
    error = limit_error(path, ParseLimits(max_unzipped_mb=1, max_paragraphs=1_000_000))
    assert re.fullmatch(r"unpacks to 2\.\d MB > 1 MB \(setting ingest\.limits\.max_unzipped_mb\)", error.reason)


def test_a_pdf_over_the_page_limit_is_refused(tmp_path: Path) -> None:
    path = many_pages_pdf(tmp_path / "long.pdf", 30)
    error = limit_error(path, ParseLimits(max_pages=20))
    assert error.reason == "too many pages: 30 > 20 (setting ingest.limits.max_pages)"
    assert len(load_path(path, LIMIT, ParseLimits(max_pages=30))[0].blocks) == 30


def test_parsing_past_the_wall_time_limit_is_refused(tmp_path: Path) -> None:
    path = many_pages_pdf(tmp_path / "slow.pdf", 5)
    error = limit_error(path, ParseLimits(max_parse_seconds=1e-9))
    assert error.reason == "parsing took longer than 1e-09 s (setting ingest.limits.max_parse_seconds)"


def test_the_cli_ingest_report_names_the_limit_and_keeps_what_is_stored(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "agentrag.toml").write_text("[ingest.limits]\nmax_paragraphs = 1000\n")
    good = tmp_path / "good.md"
    good.write_text("# Pumps\n\nPump 7 is serviced every March.\n")
    assert runner.invoke(app, ["ingest", str(good), "--home", str(home)]).exit_code == 0
    bomb = docx_bomb(tmp_path / "bomb.docx", 5000)
    result = runner.invoke(app, ["ingest", str(bomb), "--home", str(home), "--strict"])
    assert result.exit_code == 3  # the batch finished with a failure: --strict says so (plain ingest: 0)
    assert f"{bomb}: too many paragraphs: over 1,000 (setting ingest.limits.max_paragraphs)" in result.output
    result = runner.invoke(app, ["ingest", str(bomb), "--home", str(home), "--json"])
    (failure,) = json.loads(result.output)["failures"]
    assert failure["limit"] == "ingest.limits.max_paragraphs"
    listing = json.loads(runner.invoke(app, ["docs", "list", "--home", str(home), "--json"]).output)
    assert [d["title"] for d in listing["documents"]] == ["Pumps"]


def pdf_with_a_broken_page(path: Path) -> Path:
    """Three pages; page 2's content stream uses a filter no reader knows, so its text cannot be read."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, StreamObject

    source = many_pages_pdf(path.with_name("source.pdf"), 3)
    writer = PdfWriter(clone_from=PdfReader(source))
    stream = StreamObject()
    stream._data = b"not a content stream"
    stream[NameObject("/Filter")] = NameObject("/NoSuchFilter")
    writer.pages[1][NameObject("/Contents")] = writer._add_object(stream)
    with path.open("wb") as out:
        writer.write(out)
    return path


def test_unreadable_pdf_pages_are_in_the_report_and_logged_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    home = str(tmp_path / "home")
    path = pdf_with_a_broken_page(tmp_path / "pumps.pdf")
    with caplog.at_level(logging.WARNING):
        result = runner.invoke(app, ["ingest", str(path), "--home", home])
    assert result.exit_code == 0
    assert "page 2 unreadable" in result.output
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    expected = f"{path}: page 2 unreadable; the other pages are indexed"
    assert [w for w in warnings if "page 2 unreadable" in w] == [expected]
    path.touch()
    result = runner.invoke(app, ["ingest", str(path), "--home", str(tmp_path / "home2"), "--json"])
    report = json.loads(result.output)
    assert report["failed"] == 0
    (item,) = report["unreadable"]
    assert item["unreadable_pages"] == [2]


def test_kb_ingest_reports_unreadable_pages(tmp_path: Path, embedder: Embedder) -> None:
    settings = load_settings(tmp_path / "home")
    with KnowledgeBase.open("kb", settings=settings, embedder=embedder) as kb:
        report = kb.ingest([pdf_with_a_broken_page(tmp_path / "pumps.pdf")])
    (item,) = report.items
    assert (item.status, item.unreadable_pages) == ("added", (2,))
