"""Content fingerprints: equal for texts that differ only in case, spacing, punctuation or width."""

from __future__ import annotations

import hashlib
import re
import unicodedata

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_for_match(text: str) -> str:
    """NFKC, lower-case, every run of punctuation and whitespace removed."""
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).lower())


def fingerprint(text: str) -> str:
    return hashlib.sha1(normalize_for_match(text).encode("utf-8")).hexdigest()[:16]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
