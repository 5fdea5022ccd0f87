"""Pages in PDFs: a quote is cited with the page it is on, even when its chunk began on the page before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentrag.cli import app
from agentrag.ingest.loaders import LOADER_FORMATS, load_path
from agentrag.ingest.splitter import Splitter
from agentrag.kb import KnowledgeBase
from agentrag.settings import ChunkingSettings
from agentrag.types import Block

runner = CliRunner()


def two_page_pdf(path: Path) -> Path:
    """A short PDF whose text fits one chunk although it is on two pages."""
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 6, "The plant handbook describes the conveyor belts in the main hall.")
    pdf.add_page()
    pdf.multi_cell(0, 6, "Sprocket replacement is scheduled every 18 months at the Leeds plant.")
    pdf.output(str(path))
    return path


def test_a_chunk_across_pages_records_where_each_page_begins() -> None:
    blocks = [Block(text="First page text.", page=1), Block(text="Second page text.", page=2)]
    (chunk,) = Splitter(ChunkingSettings()).split(blocks)
    assert chunk.page == 1
    assert chunk.page_breaks == ((len("First page text.\n\n"), 2),)


def test_ask_json_cites_the_page_of_the_quoted_sentence(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    pdf = two_page_pdf(tmp_path / "handbook.pdf")
    result = runner.invoke(app, ["ingest", str(pdf), "--home", home])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["ask", "How often is sprocket replacement scheduled?", "--home", home, "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    (citation,) = [c for c in answer["citations"] if "Sprocket" in c["quote"]]
    assert citation["page"] == 2
    result = runner.invoke(app, ["ask", "How often is sprocket replacement scheduled?", "--home", home])
    assert "handbook.pdf p.2" in result.output
    assert "handbook.pdf p.1" not in result.output


def test_page_breaks_survive_the_store(tmp_path: Path, kb: KnowledgeBase) -> None:
    kb.ingest([two_page_pdf(tmp_path / "handbook.pdf")])
    (document,) = kb.documents()
    _, chunks = kb.document(document.doc_id)
    (chunk,) = chunks
    assert chunk.page == 1
    assert chunk.page_of("Sprocket replacement is scheduled every 18 months at the Leeds plant.") == 2
    assert chunk.page_of("The plant handbook describes the conveyor belts in the main hall.") == 1


def test_a_version_1_store_gains_page_breaks_and_keeps_its_chunks(tmp_path: Path, kb: KnowledgeBase) -> None:
    import sqlite3

    from agentrag.store.sqlite import SQLiteStore

    kb.ingest([two_page_pdf(tmp_path / "handbook.pdf")])
    (document,) = kb.documents()
    path = Path(kb.store.path)  # type: ignore[attr-defined]
    kb.close()
    con = sqlite3.connect(path)
    with con:  # the file as agentrag wrote it before pages were kept per sentence
        con.execute("ALTER TABLE chunks DROP COLUMN page_breaks")
        con.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    con.close()
    store = SQLiteStore(path)
    (chunk,) = store.get_document_chunks(document.doc_id)
    assert (chunk.page, chunk.page_breaks) == (1, ())  # cited with its first page until it is ingested again
    assert "Sprocket replacement" in chunk.text
    store.close()


def paths(path: Path) -> list[tuple[str, tuple[str, ...], int | None]]:
    (doc,) = load_path(path, 64 * 1024 * 1024)
    return [(b.text.split(" ")[0], b.heading_path, b.page) for b in doc.blocks]


def test_pdf_bookmarks_give_heading_paths(tmp_path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("helvetica", size=11)  # one size throughout: only the outline tells the structure
    pdf.add_page()
    pdf.start_section("Installation", level=0)
    pdf.multi_cell(0, 6, "Install the package with pip on every server. " * 4)
    pdf.ln(6)
    pdf.start_section("Requirements", level=1)  # not written on the page: it starts where it points
    pdf.multi_cell(0, 6, "Python 3.11 or newer is required on the host. " * 4)
    pdf.add_page()
    pdf.start_section("Configuration", level=0)
    pdf.multi_cell(0, 6, "Settings live in agentrag.toml beside the data. " * 4)
    path = tmp_path / "manual.pdf"
    pdf.output(str(path))
    assert paths(path) == [
        ("Install", ("Installation",), 1),
        ("Python", ("Installation", "Requirements"), 1),
        ("Settings", ("Configuration",), 2),
    ]


def test_a_loader_format_change_reindexes_only_files_of_that_kind(tmp_path: Path, kb: KnowledgeBase) -> None:
    """PDFs stored before pages were kept per sentence are indexed again; a text file next to them is not."""
    import sqlite3

    folder = tmp_path / "docs"
    folder.mkdir()
    two_page_pdf(folder / "handbook.pdf")
    (folder / "notes.txt").write_text("The Leeds plant closes at six on Fridays.", encoding="utf-8")
    first = kb.ingest([folder])
    assert first.added == 2
    path = Path(kb.store.path)  # type: ignore[attr-defined]
    con = sqlite3.connect(path)
    fmt = "/" + LOADER_FORMATS[".pdf"]
    with con:  # as the code before the PDF loader had a format stored it
        con.execute(
            "UPDATE documents SET pipeline = substr(pipeline, 1, instr(pipeline, ?) - 1) WHERE pipeline LIKE ?",
            (fmt, "%" + fmt),
        )
    con.close()
    again = kb.ingest([folder])
    statuses = {Path(item.path).name: item.status for item in again.items}
    assert statuses == {"handbook.pdf": "updated", "notes.txt": "unchanged"}


def test_pdf_without_bookmarks_gets_heading_paths_from_font_sizes(tmp_path: Path) -> None:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.add_page()
    for size, text in [
        (20, "Operations Guide"),
        (14, "Backups"),
        (11, "Backups run every night at two and are kept for thirty days in the vault."),
        (14, "Restores"),
        (11, "A restore needs the approval of the on-call engineer and takes an hour."),
    ]:
        pdf.set_font("helvetica", size=size)
        pdf.multi_cell(0, size * 0.6, text)
        pdf.ln(4)
    path = tmp_path / "guide.pdf"
    pdf.output(str(path))
    assert paths(path) == [
        ("Operations", ("Operations Guide",), 1),
        ("Backups", ("Operations Guide", "Backups"), 1),
        ("Backups", ("Operations Guide", "Backups"), 1),
        ("Restores", ("Operations Guide", "Restores"), 1),
        ("A", ("Operations Guide", "Restores"), 1),
    ]
