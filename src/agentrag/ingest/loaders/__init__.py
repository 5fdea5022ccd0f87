"""File loaders: bytes of one file in, documents made of structural blocks out.

One function per format, each `(data, path) -> LoadedDocument` (JSONL returns a list, one document per
record), and `load_path`, which checks size and content before dispatching. Loaders keep structure (headings,
paragraphs, lists, tables, code, pages) because the splitter cuts along it; they never return a document
without text: every failure is a `LoadError` that names the file and says why in one line.

Heavy parsers (pypdf, python-docx, trafilatura) are imported on first use, so a plain-text ingest or a CLI
start does not pay for them.

Layout: one module per format (`text`, `markdown`, `html`, `pdf`, `docx`, `jsonl`), shared helpers in
`common`, and here the dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentrag.errors import LoadError
from agentrag.ingest.loaders.common import BINARY_MAGIC, NO_TEXT, LimitError, WorkBudget
from agentrag.ingest.loaders.docx import load_docx
from agentrag.ingest.loaders.html import load_html
from agentrag.ingest.loaders.jsonl import load_jsonl, stream_jsonl
from agentrag.ingest.loaders.markdown import load_markdown
from agentrag.ingest.loaders.pdf import load_pdf
from agentrag.ingest.loaders.text import load_txt
from agentrag.settings import ParseLimits
from agentrag.types import LoadedDocument

__all__ = [
    "LOADER_FORMATS",
    "NO_TEXT",
    "SUPPORTED_SUFFIXES",
    "LimitError",
    "load_docx",
    "load_html",
    "load_jsonl",
    "load_markdown",
    "load_path",
    "load_pdf",
    "load_txt",
    "stream_jsonl",
]

SUPPORTED_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".jsonl")
# Bump a loader's format when what it hands the splitter changes shape: stored files of that kind (only) are
# re-indexed on the next ingest. PDF 2: page breaks inside chunks, heading paths from the outline; PDF 3: heading
# paths from font sizes when there is no outline.
LOADER_FORMATS: dict[str, str] = {".pdf": "pdf3"}

_MB = 1024 * 1024


_Loader = Callable[[bytes, str, WorkBudget], LoadedDocument | list[LoadedDocument]]
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


def _too_large(size: int, max_bytes: int) -> str:
    """Both numbers in one unit ("80.0 MB > limit 64 MB"), so they compare at a glance."""
    unit, scale = ("MB", _MB) if size >= _MB else ("KB", 1024) if size >= 1024 else ("bytes", 1)
    limit = max_bytes / scale
    shown = f"{size / scale:.1f}"
    if unit == "bytes" or float(shown) <= limit:  # 64.02 MB must not read "64.0 MB > limit 64 MB"
        return f"file too large: {size:,} bytes > limit {max_bytes:,} bytes"
    limit_text = f"{limit:.0f}" if limit == int(limit) else f"{limit:.2g}"
    return f"file too large: {shown} {unit} > limit {limit_text} {unit}"


def load_path(path: Path, max_bytes: int, limits: ParseLimits | None = None) -> list[LoadedDocument]:
    """Load one file by its suffix, after refusing what cannot be a document: unknown types, oversized
    (checked before reading), empty, or content that does not match the suffix. Parsing is bounded by
    `limits` (pages, paragraphs, decompressed bytes, wall time): past one, a `LimitError` names it."""
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
        for magic, kind in BINARY_MAGIC:
            if data.startswith(magic):
                raise LoadError(name, f"binary file (not text): content looks like {kind}")
    loaded = loader(data, name, WorkBudget(name, limits))
    return loaded if isinstance(loaded, list) else [loaded]
