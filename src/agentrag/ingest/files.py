"""The file system side of ingest: which files a folder holds, a document's id and display name for a path,
and one bounded read of a regular file.

Paths are whatever the file system holds: a name that is not UTF-8 arrives as a str with surrogate escapes
(PEP 383). Ids hash the real bytes (so such a file keeps its id); what is shown or stored uses `display`,
which spells the odd bytes as `\\xNN` instead of failing to encode.
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
from pathlib import Path

from agentrag.errors import AgentragError, LoadError
from agentrag.ingest.loaders import SUPPORTED_SUFFIXES

log = logging.getLogger(__name__)

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFile(Exception):
    """A path that names something other than a file's bytes (a device, a FIFO, a socket): skipped, never read."""

    def __init__(self, path: Path, mode: int) -> None:
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        self.reason = f"not a regular file ({kind})"
        super().__init__(f"{display(path)}: {self.reason}")


def display(text: str | Path) -> str:
    """`text` safe to print, store and serialise: bytes that are not UTF-8 become `\\xNN`."""
    raw = str(text)
    try:
        return raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no file system produced
        return raw.encode("utf-8", "backslashreplace").decode("utf-8")


def document_id_for_path(path: Path) -> str:
    """Stable id for a file: derived from its absolute path (its bytes), so re-ingesting it replaces it."""
    return hashlib.sha1(os.fsencode(path.resolve())).hexdigest()[:16]


def unsupported_type(path: Path) -> str:
    """Why a file in a folder is not ingested: its type (the reason a skipped file is reported with)."""
    return f"unsupported file type ({path.suffix.lower() or 'no suffix'})"


def discover(paths: list[Path], skipped: list[Path] | None = None) -> list[Path]:
    """Files to ingest, in a stable order; folders are walked, hidden entries left out, and files of unknown
    types left out too (appended to `skipped` when given, so they can be counted and named)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    candidate = Path(root) / name
                    if name.startswith("."):
                        continue
                    if candidate.suffix.lower() in SUPPORTED_SUFFIXES:
                        found.append(candidate)
                    elif skipped is not None:
                        skipped.append(candidate)
        else:
            found.append(path)  # named explicitly: an unsupported type is reported, not skipped
    return list(dict.fromkeys(found))


def regular_file(path: Path) -> os.stat_result:
    """The file's status, after making sure it is a regular file (links followed); raises `NotRegularFile`."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise LoadError(display(path), "no such file or folder") from None
    if not stat.S_ISREG(status.st_mode):
        raise NotRegularFile(path, status.st_mode)
    return status


def read_bounded(path: Path, max_bytes: int) -> tuple[bytes, os.stat_result]:
    """At most `max_bytes` of a regular file, and its status, from one open file.

    Opened non-blocking and checked on the open descriptor, so a path swapped for a FIFO or a device after a
    check can neither hang nor stream forever; the limit counts bytes read, not what st_size claims (a /proc
    file says 0)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(path, status.st_mode)
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        limit = f"{max_bytes:,} bytes" if max_bytes < 1024 * 1024 else f"{max_bytes / (1024 * 1024):g} MB"
        raise LoadError(display(path), f"file too large: more than the {limit} limit")
    return data, status


def failure_reason(exc: BaseException) -> str:
    """One line for a document that failed. Errors that are not agentrag's keep their type (and their traceback
    goes to the debug log), so a bug in a parser or an embedder is told apart from a bad file."""
    if isinstance(exc, LoadError):
        return exc.reason
    if isinstance(exc, AgentragError):
        return display(str(exc))
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    log.debug("ingest: unexpected error", exc_info=exc)
    return display(f"{type(exc).__name__}: {exc}")
