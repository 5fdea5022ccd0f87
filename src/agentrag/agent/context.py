"""The synthesizer's context: numbered passages under a token budget.

Passages that do not fit whole are compressed to their most relevant sentences (marked with "[…]"), never
cut mid-sentence, and the least relevant are dropped last; both are recorded in the trace. Each block is
shown to the model as `passage_block`: its number, page and date, then its title, heading path, file and text
quoted as data.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentrag.llm.tokens import estimate_tokens
from agentrag.text.quoting import quote_fields
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


def passage_block(n: int, chunk: Chunk, text: str) -> str:
    """How a passage is shown to a model: `[n] p.N · date`, then its title, heading, file and text, quoted.

    Only the number, page and date (values we parsed) stand outside the quote: a title, a heading or a file
    name is document text and could carry instructions, so it is quoted with the passage."""
    header = [f"[{n}]"]
    if chunk.page:
        header.append(f"p.{chunk.page}")
    if chunk.date:
        header.append(chunk.date.isoformat())
    title = chunk.title or chunk.source.rsplit("/", 1)[-1]
    heading = chunk.heading if chunk.heading and chunk.heading != chunk.title else ""
    fields = [("title", title), ("heading", heading), ("file", chunk.source.rsplit("/", 1)[-1])]
    return " · ".join(header) + "\n" + quote_fields(fields, text)


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
