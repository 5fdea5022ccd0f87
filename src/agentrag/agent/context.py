"""The synthesizer's context: numbered passages under a token budget.

Passages that do not fit whole are compressed to their most relevant sentences (marked with "[…]"), never
cut mid-sentence, and the least relevant are dropped last; both are recorded in the trace. Each block is
shown to the model with a header naming its source, heading path, page and date.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentrag.llm.tokens import estimate_tokens
from agentrag.text.sentences import split_sentences
from agentrag.text.tokenize import has_cjk, tokenize, tokenize_query
from agentrag.types import Chunk, Evidence

ELLIPSIS = "[…]"


@dataclass(frozen=True, slots=True)
class ContextBlock:
    n: int
    evidence: Evidence
    text: str  # possibly compressed
    compressed: bool


@dataclass(frozen=True, slots=True)
class Context:
    blocks: list[ContextBlock]
    dropped: int
    tokens: int

    @property
    def chunks(self) -> list[Chunk]:
        return [b.evidence.chunk for b in self.blocks]


def block_header(n: int, chunk: Chunk) -> str:
    """`[n] title · heading · p.N · date · file`: how a passage is introduced to the model."""
    parts = [chunk.title or chunk.source.rsplit("/", 1)[-1]]
    if chunk.heading and chunk.heading != chunk.title:
        parts.append(chunk.heading)
    if chunk.page:
        parts.append(f"p.{chunk.page}")
    if chunk.date:
        parts.append(chunk.date.isoformat())
    parts.append(chunk.source.rsplit("/", 1)[-1])
    return f"[{n}] " + " · ".join(parts)


def compress(text: str, query: str, max_tokens: int) -> str:
    """Keep the sentences most relevant to the query, in their original order, joined by "[…]" gaps."""
    sentences = split_sentences(text)
    if not sentences:
        return text
    wanted = set(tokenize_query(query))
    ranked = sorted(range(len(sentences)), key=lambda i: -len(wanted & set(tokenize(sentences[i]))))
    keep: set[int] = set()
    used = 0
    for i in ranked:
        cost = estimate_tokens(sentences[i])
        if used + cost > max_tokens and keep:
            continue
        keep.add(i)
        used += cost
    out: list[str] = []
    for i in range(len(sentences)):
        if i in keep:
            out.append(sentences[i])
        elif out and out[-1] != ELLIPSIS:
            out.append(ELLIPSIS)
    joiner = "" if has_cjk(text) else " "
    return joiner.join(out)


def build_context(evidence: list[Evidence], question: str, max_tokens: int, max_passages: int) -> Context:
    """Numbered blocks under a token budget: whole passages first, then compressed, then dropped."""
    blocks: list[ContextBlock] = []
    used = 0
    candidates = evidence[:max_passages]
    for i, item in enumerate(candidates):
        text = item.chunk.text
        cost = estimate_tokens(text) + 20
        compressed = False
        if used + cost > max_tokens:
            room = max_tokens - used - 20
            if room < 60:
                return Context(blocks, dropped=len(candidates) - i, tokens=used)
            text = compress(text, f"{question} {item.found_by}", room)
            cost = estimate_tokens(text) + 20
            compressed = True
        blocks.append(ContextBlock(n=len(blocks) + 1, evidence=item, text=text, compressed=compressed))
        used += cost
    return Context(blocks, dropped=0, tokens=used)
