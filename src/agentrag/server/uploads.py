"""Uploaded files: a safe name inside the data directory, and a type decided by the bytes, not the name."""

from __future__ import annotations

import io
import re
import unicodedata
import zipfile
from pathlib import Path

from agentrag.errors import LoadError

_UNSAFE = re.compile(r"[^\w.\-\u4e00-\u9fff]+")
TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".html", ".htm"}


def safe_filename(name: str) -> str:
    """The last path component, reduced to letters, digits, CJK, '.', '-' and '_'; never hidden, never empty."""
    base = unicodedata.normalize("NFKC", name).replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip("._") or "upload"
    stem, dot, suffix = base.rpartition(".")
    if dot and len(suffix) <= 10:
        return f"{stem[:100] or 'upload'}.{suffix.lower()}"
    return base[:100]


def sniff(data: bytes) -> str:
    """'pdf', 'docx', 'html', 'text' or 'binary', from the content alone."""
    head = data[:8192]
    if head.startswith(b"%PDF-"):
        return "pdf"
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                if "word/document.xml" in archive.namelist():
                    return "docx"
        except zipfile.BadZipFile:
            return "binary"
        return "binary"
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary"
    lowered = head.lower()
    if b"<html" in lowered or b"<!doctype html" in lowered:
        return "html"
    return "text"


def resolve_upload(filename: str, data: bytes) -> str:
    """The name to store the upload under, with a suffix that matches its content; LoadError if impossible."""
    name = safe_filename(filename)
    suffix = Path(name).suffix.lower()
    kind = sniff(data)
    if not data:
        raise LoadError(name, "empty file")
    if kind == "binary":
        raise LoadError(name, "binary content: not a PDF, DOCX, HTML, Markdown or text file")
    if kind in ("pdf", "docx"):
        if suffix and suffix != f".{kind}":
            raise LoadError(name, f"content is {kind.upper()}, but the name says {suffix!r}")
        return name if suffix else f"{name}.{kind}"
    if suffix in (".pdf", ".docx"):
        raise LoadError(name, f"content is {kind}, not {suffix[1:].upper()}")
    if suffix in TEXT_SUFFIXES:
        return name
    return f"{name}.{'html' if kind == 'html' else 'txt'}"


def upload_path(folder: Path, filename: str) -> Path:
    """Where an upload lives: always inside `folder` (a knowledge base's `Layout.uploads`), whatever the name tried."""
    folder = folder.resolve()
    path = (folder / filename).resolve()
    if not path.is_relative_to(folder):
        raise LoadError(filename, "invalid file name")
    return path
