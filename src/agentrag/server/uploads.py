"""Uploaded files: a safe name inside the data directory, and a type decided by the bytes, not the name.

Each upload lives at `uploads/<kb>/<name_key>/<safe name>`: the folder is a hash of the exact name sent, the
file keeps that name as far as the file system allows, so users see what they uploaded. Two names that
differ in any way (`report (1).txt` and `report [1].txt`, `a/x.txt` and `b/x.txt`, NFC and NFD forms, long
names with a shared prefix) never share a file, and so never replace each other's document; the same name
sent again lands on the same file, which is a replace.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import uuid
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from glob import escape as glob_escape
from pathlib import Path, PurePath

from agentrag.errors import LoadError

# Characters a file name may not hold on the file systems we run on; the rest of the name is kept as sent.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')
TEXT_SUFFIXES = {".txt", ".md", ".markdown", ".html", ".htm"}
MAX_NAME_BYTES = 200  # below the usual 255-byte limit for one path component, leaving room for a suffix


def safe_filename(name: str) -> str:
    """The last path component as sent, minus characters no file system takes; never hidden, never empty,
    at most MAX_NAME_BYTES of UTF-8 (the suffix kept)."""
    base = name.encode("utf-8", "replace").decode("utf-8").replace("\\", "/").rsplit("/", 1)[-1]
    base = _UNSAFE.sub("_", base).strip(". ") or "upload"
    stem, dot, suffix = base.rpartition(".")
    if not (dot and stem and len(suffix) <= 10):
        stem, suffix = base, ""
    suffix = f".{suffix.lower()}" if suffix else ""
    budget = MAX_NAME_BYTES - len(suffix.encode("utf-8"))
    stem = stem.encode("utf-8")[:budget].decode("utf-8", "ignore").rstrip(". ") or "upload"
    return stem + suffix


def name_key(filename: str) -> str:
    """A short hash of the exact name sent: each distinct name gets its own folder, so no two share a file."""
    return hashlib.sha256(filename.encode("utf-8", "surrogatepass")).hexdigest()[:16]


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


def upload_path(folder: Path, filename: str, stored: str) -> Path:
    """Where the upload sent as `filename` and stored as `stored` lives: always inside `folder` (a knowledge
    base's `Layout.uploads`), in the folder of its exact name, whatever the name tried."""
    folder = folder.resolve()
    path = (folder / name_key(filename) / stored).resolve()
    if not path.is_relative_to(folder) or path.parent.parent != folder:
        raise LoadError(filename, "invalid file name")
    return path


def namesakes(path: Path) -> list[Path]:
    """Earlier files of the same sent name stored under another suffix (its content type changed)."""
    if not path.parent.is_dir():
        return []
    return [p for p in path.parent.iterdir() if p.is_file() and p != path and not p.name.startswith(".")]


@contextmanager
def staged(path: Path, data: bytes) -> Iterator[Callable[[], None]]:
    """`data` in place at `path` for the block; yields `keep()`. Unless the block calls it, whatever was at
    `path` before comes back (a failed replace loses nothing) and a new folder goes away."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tag = uuid.uuid4().hex
    tmp, backup = path.with_name(f".{tag}.part"), path.with_name(f".{tag}.bak")
    tmp.write_bytes(data)
    had = path.exists()
    if had:
        os.link(path, backup)  # the old bytes stay reachable until the new ones are indexed
    tmp.replace(path)
    kept = False

    def keep() -> None:
        nonlocal kept
        kept = True

    try:
        yield keep
    finally:
        if kept:
            backup.unlink(missing_ok=True)
        elif had:
            backup.replace(path)
        else:
            path.unlink(missing_ok=True)
            with suppress(OSError):
                path.parent.rmdir()  # only when empty


def uploaded_file(folder: Path, doc_id: str, source: str, id_for: Callable[[Path], str]) -> Path | None:
    """The stored file a document was ingested from (its id is derived from the file's path), or None."""
    folder = folder.resolve()
    legacy = (folder / source).resolve()  # uploads stored flat, before the per-name folders
    candidates = [legacy, *folder.glob(f"*/{glob_escape(PurePath(source).name)}")]
    for path in candidates:
        if path.is_file() and path.is_relative_to(folder) and id_for(path) == doc_id:
            return path
    return None
