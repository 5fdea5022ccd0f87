"""agentrag's own BM25 tokens as Milvus indexes them.

The chunk's tokens (from `text/tokenize.py`) are space-joined into a field analysed by Milvus's `standard`
tokenizer, which leaves such tokens whole (CJK words included), so Milvus's BM25 counts the same terms as the
embedded store's FTS5 `ascii` tokenizer. Title terms are written `TITLE_WEIGHT` times: FTS5's column weight
multiplies title term frequency the same way.
"""

from __future__ import annotations

import re

from agentrag.errors import ConfigError

# The embedded store's default `retrieval.title_weight`; Milvus has no per-field weights inside one BM25 field.
TITLE_WEIGHT = 2.0
MAX_BYTES = 65535  # Milvus's VARCHAR limit
_ASCII_SEPARATORS = re.compile(r"[\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+")


def _split(token: str) -> list[str]:
    """A token as FTS5's `ascii` tokenizer splits it: at ASCII punctuation and spaces, ASCII letters lowered."""
    return [part for part in _ASCII_SEPARATORS.split(token.lower()) if part]


def document_terms(title_tokens: list[str], body_tokens: list[str]) -> str:
    """The text of a chunk's BM25 field (cut at a token boundary to fit Milvus's VARCHAR limit)."""
    title = [p for t in title_tokens for p in _split(t)]
    body = [p for t in body_tokens for p in _split(t)]
    text = " ".join(title * int(TITLE_WEIGHT) + body)
    data = text.encode()
    if len(data) <= MAX_BYTES:
        return text
    return data[:MAX_BYTES].decode(errors="ignore").rsplit(" ", 1)[0]


def query_terms(tokens: list[str], title_weight: float) -> str:
    """The query text for Milvus's BM25 function. A token FTS5 would read as a phrase of several words (`-a:b`)
    matches nothing there unless the words are adjacent; Milvus has no phrase query, so it is left out."""
    if title_weight != TITLE_WEIGHT:
        raise ConfigError(
            f"retrieval.title_weight = {title_weight}: the Milvus backend weights title terms by {TITLE_WEIGHT} "
            f"when it indexes them; set retrieval.title_weight = {TITLE_WEIGHT} (the default)"
        )
    words = []
    for token in tokens:
        parts = _split(token)
        if len(parts) == 1:
            words.append(parts[0])
    return " ".join(words)
