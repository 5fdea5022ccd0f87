"""JSONL corpus loader: one `{"_id", "title", "text"}` record per line, each its own document."""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from agentrag.errors import LoadError
from agentrag.ingest.encoding import decode_text
from agentrag.ingest.loaders.common import BINARY_MAGIC, BLANK_LINES, WorkBudget
from agentrag.settings import ParseLimits
from agentrag.types import Block, LoadedDocument

_CORE_FIELDS = ("_id", "title", "text")
KEEP_BYTES = 16 * 1024 * 1024  # a streamed corpus file this small is parsed once and held in memory


def load_jsonl(data: bytes, path: str, work: WorkBudget | None = None) -> list[LoadedDocument]:
    """A benchmark corpus: one `{"_id", "title", "text"}` record per line, each its own document.

    Records are trusted shapes after the checks below, so models are built without re-validation: a 5,000
    record file loads in tens of milliseconds.
    """
    text = decode_text(data, path)
    budget = work or WorkBudget(path)
    documents = list(_records(enumerate(text.split("\n"), start=1), path, lambda: budget))
    if not documents:
        raise LoadError(path, "no records (empty corpus file)")
    return documents


def stream_jsonl(path: Path, limits: ParseLimits | None = None) -> Iterator[LoadedDocument]:
    """The records of a corpus file of any size, read line by line (UTF-8): memory does not grow with the file.

    Every line is checked in a first pass before the first record is handed on, so a bad line still fails the
    whole file with nothing of it stored; each record then has a parse budget of its own. A file of at most
    `KEEP_BYTES` keeps what that pass parsed instead of parsing every line again."""
    name = str(path)
    kept: list[LoadedDocument] | None = None
    try:
        size = path.stat().st_size
        if size == 0:
            raise LoadError(name, "empty file")
        checked = _records(_utf8_lines(path), name, lambda: WorkBudget(name, limits))
        if size <= KEEP_BYTES:
            kept = list(checked)
            found = len(kept)
        else:
            found = sum(1 for _ in checked)
        if found == 0:
            raise LoadError(name, "no records (empty corpus file)")
    except FileNotFoundError:
        raise LoadError(name, "no such file") from None
    except PermissionError:
        raise LoadError(name, "permission denied") from None
    if kept is not None:
        yield from kept
        return
    yield from _records(_utf8_lines(path), name, lambda: WorkBudget(name, limits))


def _utf8_lines(path: Path) -> Iterator[tuple[int, str]]:
    name = str(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                if raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                for magic, kind in BINARY_MAGIC:
                    if raw.startswith(magic):
                        raise LoadError(name, f"binary file (not text): content looks like {kind}")
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                reason = f"line {number}: not UTF-8 text ({exc.reason} at byte {exc.start}); JSONL corpora are UTF-8"
                raise LoadError(name, reason) from None


def _records(
    lines: Iterable[tuple[int, str]], path: str, budget_for: Callable[[], WorkBudget]
) -> Iterator[LoadedDocument]:
    seen: dict[str, int] = {}
    loads = json.loads
    for number, line in lines:
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
        if "\n" in body and BLANK_LINES.search(body):
            paragraphs = [p.strip() for p in BLANK_LINES.split(body)]
            blocks = [Block.model_construct(text=p, heading_path=(), page=None) for p in paragraphs if p]
        else:
            blocks = [Block.model_construct(text=body, heading_path=(), page=None)]
        budget_for().document(blocks)
        meta = {k: v for k, v in record.items() if k not in _CORE_FIELDS and isinstance(v, str)}
        yield LoadedDocument.model_construct(
            title=title, blocks=blocks, date=None, doc_id=doc_id, source=f"{path}#{doc_id}", meta=meta
        )
