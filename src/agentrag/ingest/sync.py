"""Keeping a knowledge base in step with its folders: a renamed file is moved (its chunks and vectors kept), and
with `sync` the documents of files gone from a folder are deleted.

A stored document is *gone* when no file found in this run has its id and its source path no longer exists;
only then may it be moved onto a new path or deleted, so nothing whose file is still there is ever lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from agentrag.store.base import Store
from agentrag.types import Chunk, Document, IngestStatus


class SourcePaths:
    """Where a stored source lives on disk, and whether its file is gone."""

    def __init__(self, root: Path | None, present: set[str]) -> None:
        self.root = root  # sources recorded relative to it (the service's uploads), absolute otherwise
        self.present = present  # ids of the documents found in this run, whatever became of them

    def path(self, source: str) -> Path:
        path = Path(source)
        return self.root / path if self.root is not None and not path.is_absolute() else path

    def gone(self, document: Document) -> bool:
        # A relative source was recorded under a root given by its caller (the service's uploads, one folder per
        # name), which may not be this run's: it cannot be looked up, so it is never taken for gone.
        if not Path(document.source).is_absolute():
            return False
        return document.doc_id not in self.present and not os.path.lexists(self.path(document.source))


def moved_from(store: Store, content_hash: str, pipeline: str, doc_id: str, paths: SourcePaths) -> Document | None:
    """A stored document with this content whose file is gone: the file now at `doc_id`'s path was renamed from it."""
    for document in store.documents_with_hash(content_hash, pipeline):
        if document.doc_id != doc_id and paths.gone(document):
            return document
    return None


def same_index(stored: list[Chunk], title: str, chunks: list[Chunk]) -> bool:
    """True when the stored chunks are what this ingest would index (the title too: a title taken from the file
    name changes with it, and it is part of what was embedded), so their vectors can be kept."""

    def shape(c: Chunk) -> tuple[object, ...]:
        return (c.position, c.text, c.heading_path, c.page, c.char_start, c.char_end)

    return (
        len(stored) == len(chunks)
        and all(c.title == title for c in stored)
        and [shape(c) for c in stored] == [shape(c) for c in chunks]
    )


def delete_gone(
    store: Store,
    folders: list[Path],
    paths: SourcePaths,
    emit: Callable[[IngestStatus], None],
    failure: Callable[[BaseException], str],
) -> None:
    """`sync`: delete each stored document whose source lies under one of `folders` and is gone."""
    roots = [folder.resolve() for folder in folders]
    for document in store.list_documents():
        where = paths.path(document.source).absolute()
        if not any(where.is_relative_to(root) for root in roots) or not paths.gone(document):
            continue
        try:
            store.delete_document(document.doc_id)
        except Exception as exc:  # a locked database, after its retries: this document's line, and on
            emit(IngestStatus(path=document.source, doc_id=document.doc_id, status="failed", error=failure(exc)))
        else:
            emit(IngestStatus(path=document.source, doc_id=document.doc_id, status="deleted"))
