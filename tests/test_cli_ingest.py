"""`agentrag ingest` as a person meets it on a real folder: files it does not ingest are counted (and named
with -v), the summary gives the chunk rate, and the exit codes say what `ingest && ask` needs to know."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agentrag.cli import app
from tests.helpers import write

runner = CliRunner()


def folder(root: Path) -> Path:
    write(root / "faq.md", "# FAQ\n\nError E1042 means the quota is exhausted.\n")
    write(root / "books" / "novel.epub", "PK not really a book")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write(root / "README", "a suffix-less readme")
    return root


def test_files_of_types_not_ingested_are_counted_and_named_with_verbose(tmp_path: Path) -> None:
    d, home = folder(tmp_path / "d"), str(tmp_path / "home")
    result = runner.invoke(app, ["ingest", str(d), "--home", home])
    assert result.exit_code == 0, result.output
    assert "added 1, updated 0, unchanged 0, skipped 3, failed 0" in result.stdout
    assert "chunks/s" in result.stdout
    assert "novel.epub" not in result.output  # counted, not listed without -v
    assert "3 file(s) of types that are not ingested were skipped; -v names them" in result.stderr

    result = runner.invoke(app, ["ingest", str(d), "--home", home, "-v"])
    assert result.exit_code == 0, result.output
    for name, kind in (("novel.epub", ".epub"), ("photo.png", ".png"), ("README", "no suffix")):
        assert f"{name}: skipped: unsupported file type ({kind})" in result.stderr
    assert "unchanged" in result.stdout

    result = runner.invoke(app, ["ingest", str(d), "--home", home, "--json"])
    report = json.loads(result.stdout)
    assert (report["unchanged"], report["skipped"]) == (1, 3)
    assert {Path(s["path"]).name for s in report["skipped_files"]} == {"novel.epub", "photo.png", "README"}


def test_exit_codes_finished_strict_usage_and_a_missing_path(tmp_path: Path) -> None:
    d, home = folder(tmp_path / "d"), str(tmp_path / "home")
    write(d / "empty.txt", "")
    assert runner.invoke(app, ["ingest", str(d), "--home", home]).exit_code == 0
    assert runner.invoke(app, ["ingest", str(d), "--home", home, "--strict"]).exit_code == 3
    assert runner.invoke(app, ["ingest", str(d), "--home", home, "--tag", "novalue"]).exit_code == 2
    assert runner.invoke(app, ["ingest", "--home", home]).exit_code == 2  # no PATH: a usage error
    (d / "empty.txt").unlink()
    assert runner.invoke(app, ["ingest", str(d), "--home", home, "--strict"]).exit_code == 0
    # A path that does not exist is a failure of that file, reported; the batch finished.
    missing = runner.invoke(app, ["ingest", str(tmp_path / "nope.md"), "--home", home])
    assert missing.exit_code == 0
    assert "nope.md: no such file or folder" in missing.stderr
    assert runner.invoke(app, ["ingest", str(tmp_path / "nope.md"), "--home", home, "--strict"]).exit_code == 3
