"""The CPU-bound work on one document, with no store and no embedder: load, split, tokenize, fingerprint.

These are plain functions over picklable data so that `ingest.workers` can run them in worker processes as
well as in the pipeline's own thread: both give the same `Analysis`, byte for byte. A failure is returned as
a `Failure` (its one-line reason computed where it happened), never raised across a process boundary: a
loader's exception need not survive pickling (`LimitError` does not), and one bad file must stay one line.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from agentrag.ingest.files import display, failure_reason
from agentrag.ingest.loaders import LimitError, load_path
from agentrag.ingest.splitter import ChunkDraft, Splitter
from agentrag.settings import ChunkingSettings, ParseLimits
from agentrag.text.dates import find_date
from agentrag.text.fingerprint import fingerprint
from agentrag.text.tokenize import tokenize
from agentrag.types import LoadedDocument

DATE_SCAN_CHARS = 2000  # a document's date is looked for near its start (a letterhead, a byline)


@dataclass(frozen=True, slots=True)
class Analysis:
    """One loaded document, split and tokenized: everything its chunks need but the ids and the vectors."""

    title: str  # safe to store (a title from a file name that is not UTF-8 is escaped)
    date: dt.date | None  # the loader's, else the first date near the start; None: the caller's fallback
    meta: dict[str, str]
    chars: int
    unreadable_pages: tuple[int, ...]
    drafts: list[ChunkDraft]
    fingerprints: list[str]
    texts: list[str]  # what the embedder sees (`embedding_text`)
    title_tokens: list[list[str]]
    body_tokens: list[list[str]]


@dataclass(frozen=True, slots=True)
class Failure:
    """Why a file or a record could not be analysed: the line its failure report carries."""

    reason: str
    limit: str | None = None


def embedding_text(title: str, heading_path: tuple[str, ...], text: str) -> str:
    """What the dense channel sees: the chunk under its title and heading path (context for short chunks)."""
    header = " > ".join([title, *[h for h in heading_path if h != title]] if title else heading_path)
    return f"{header}\n{text}" if header else text


_splitters: dict[str, Splitter] = {}


def _splitter(settings: ChunkingSettings) -> Splitter:
    """One splitter per chunking per process (settings are not hashable: keyed by their JSON)."""
    key = settings.model_dump_json()
    splitter = _splitters.get(key)
    if splitter is None:
        splitter = _splitters[key] = Splitter(settings)
    return splitter


def analyse(loaded: LoadedDocument, chunking: ChunkingSettings) -> Analysis:
    """Split and tokenize one loaded document (no drafts: nothing could be extracted; the caller says so)."""
    drafts = _splitter(chunking).split(loaded.blocks)
    title = display(loaded.title)
    date = loaded.date or (find_date(loaded.text[:DATE_SCAN_CHARS]) if drafts else None)
    # Chunks under one heading share their title tokens: tokenize each heading path once per document.
    heading_tokens: dict[tuple[str, ...], list[str]] = {}
    title_tokens: list[list[str]] = []
    for draft in drafts:
        tokens = heading_tokens.get(draft.heading_path)
        if tokens is None:
            tokens = heading_tokens[draft.heading_path] = tokenize(" ".join([title, *draft.heading_path]))
        title_tokens.append(list(tokens))
    return Analysis(
        title=title,
        date=date,
        meta=loaded.meta,
        chars=sum(len(b.text) for b in loaded.blocks),
        unreadable_pages=loaded.unreadable_pages,
        drafts=drafts,
        fingerprints=[fingerprint(d.text) for d in drafts],
        texts=[embedding_text(title, d.heading_path, d.text) for d in drafts],
        title_tokens=title_tokens,
        body_tokens=[tokenize(d.text) for d in drafts],
    )


def _failure(exc: Exception) -> Failure:
    return Failure(failure_reason(exc), exc.limit if isinstance(exc, LimitError) else None)


def analyse_records(records: list[LoadedDocument], chunking: ChunkingSettings) -> list[Analysis | Failure]:
    """Records of a corpus file, each alone: one that fails is its own failure."""
    out: list[Analysis | Failure] = []
    for loaded in records:
        try:
            out.append(analyse(loaded, chunking))
        except Exception as exc:  # one bad record is one failure line, whatever raised
            out.append(_failure(exc))
    return out


def analyse_file(
    path: Path, max_bytes: int, limits: ParseLimits, chunking: ChunkingSettings
) -> list[Analysis | Failure]:
    """Load a file (its loader by suffix, bounded by `limits`) and analyse what it holds; all or nothing: a
    file that fails is `[Failure]`."""
    try:
        return [analyse(loaded, chunking) for loaded in load_path(path, max_bytes, limits)]
    except Exception as exc:  # one bad file is one failure line, whatever raised
        return [_failure(exc)]
