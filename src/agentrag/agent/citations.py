"""The citation check, run after every answer (LLM or extractive).

Each `[n]` must point to a passage that was supplied, and each cited sentence must be supported by the
passage it cites: an exact quote or enough overlap of content words first, embedding similarity next.
A sentence that fails keeps its text but loses its `[n]` and gets a visible marker, and is listed in
`unsupported`: it is never shown as sourced. Sentences that only say what is missing need no source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from agentrag.agent.attribution import without_attribution
from agentrag.embed.base import Embedder
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.sentences import split_sentences
from agentrag.text.tokenize import has_cjk, tokenize
from agentrag.types import Chunk, Citation

_MARKER = re.compile(r"\s?[\[【]\s*(\d+(?:\s*[,，、]\s*\d+)*)\s*[\]】]")
_MISSING = re.compile(
    r"(not (in|mentioned|stated|covered|found|say|said)|no information|does(n't| not) (say|mention|state|cover)|"
    r"nothing in the|could(n't| not) find|unknown|没有(找到|提到|说明|记载|相关)|未(提及|找到|说明|记载)|知识库中没有|"
    r"无法确定|不清楚)",
    re.I,
)
# "…end.[1][2]" → "…end[1][2]." so a citation written after the full stop stays with its sentence.
_TRAILING_MARKERS = re.compile(r"([。！？；!?.;])((?:\s?[\[【]\s*\d+(?:\s*[,，、]\s*\d+)*\s*[\]】])+)")
UNVERIFIED_EN = "[unverified]"
UNVERIFIED_ZH = "[未经核实]"


@dataclass(frozen=True, slots=True)
class CheckedAnswer:
    text: str
    citations: list[Citation]
    unsupported: list[str]


def markers(sentence: str) -> list[int]:
    out: list[int] = []
    for m in _MARKER.finditer(sentence):
        out.extend(int(x) for x in re.split(r"[,，、]\s*", m.group(1).strip()))
    return out


def strip_markers(sentence: str) -> str:
    return _MARKER.sub("", sentence).strip()


_CLOSING = re.compile(r"[。！？；!?.;:：]+[\"'”’」』）)】》]*$")


def attach_markers(sentence: str, numbers: list[int]) -> str:
    """Markers go before the sentence's closing punctuation: "… 500 元/晚[1]。", "… per key[1][2]."."""
    marks = "".join(f"[{n}]" for n in numbers)
    m = _CLOSING.search(sentence)
    if m:
        return f"{sentence[: m.start()]}{marks}{sentence[m.start() :]}"
    return f"{sentence}{marks}"


@lru_cache(maxsize=16384)
def _content_tokens(text: str) -> frozenset[str]:
    return frozenset(tokenize(text))


def best_quote(claim: str, passage: str) -> tuple[str, float]:
    """The passage sentence that shares most content words with the claim, and the share."""
    claim_tokens = _content_tokens(claim)
    best, best_share = passage[:200], 0.0
    for sentence in split_sentences(passage) or [passage]:
        share = len(claim_tokens & _content_tokens(sentence)) / max(1, len(claim_tokens))
        if share > best_share:
            best, best_share = sentence, share
    return best, best_share


class CitationChecker:
    def __init__(self, embedder: Embedder | None = None, overlap: float = 0.6, cosine: float = 0.88) -> None:
        self.embedder = embedder
        self.overlap = overlap
        self.cosine = cosine

    def _lexically_supported(self, claim: str, passage: str) -> tuple[bool, str]:
        key = normalize_for_match(claim)
        if key and key in normalize_for_match(passage):
            # Quote the passage's sentence that holds the claim, not the claim's own words (a short answer).
            holding = next((x for x in split_sentences(passage) if key in normalize_for_match(x)), claim)
            return True, holding
        quote, share = best_quote(claim, passage)
        whole = len(_content_tokens(claim) & _content_tokens(passage)) / max(1, len(_content_tokens(claim)))
        return (share >= self.overlap or whole >= self.overlap + 0.15), quote

    def _semantically_supported(self, claims: list[str], passages: list[str]) -> list[tuple[bool, str]]:
        """For claims the overlap check rejected: best cosine against any sentence of its passage."""
        if self.embedder is None or not claims:
            return [(False, "")] * len(claims)
        sentence_lists = [split_sentences(p) or [p] for p in passages]
        flat = [s for sentences in sentence_lists for s in sentences]
        vectors = self.embedder.embed_passages(flat)
        claim_vectors = self.embedder.embed_queries(claims)
        out: list[tuple[bool, str]] = []
        offset = 0
        for claim_vector, sentences in zip(claim_vectors, sentence_lists, strict=True):
            block = vectors[offset : offset + len(sentences)]
            offset += len(sentences)
            scores = block @ claim_vector
            best = int(np.argmax(scores))
            out.append((float(scores[best]) >= self.cosine, sentences[best]))
        return out

    def check(self, answer: str, passages: list[Chunk]) -> CheckedAnswer:
        zh = has_cjk(answer)
        marker = UNVERIFIED_ZH if zh else UNVERIFIED_EN
        answer = _TRAILING_MARKERS.sub(lambda m: m.group(2).strip() + m.group(1), answer)
        lines = answer.split("\n")
        placed = [(line_no, s) for line_no, line in enumerate(lines) for s in split_sentences(line)]
        sentences = [s for _, s in placed]
        # Pass 1: lexical support; collect claims that need the (slower) embedding check.
        verdicts: list[dict[int, tuple[bool, str]]] = []
        pending: list[tuple[int, int, str, str]] = []  # sentence index, n, claim, passage text
        cited = [markers(s) for s in sentences]
        borrowed = [False] * len(sentences)
        for i, sentence in enumerate(sentences):
            claim = strip_markers(sentence)
            verdict: dict[int, tuple[bool, str]] = {}
            numbers = cited[i]
            if not numbers and i + 1 < len(placed) and placed[i + 1][0] == placed[i][0]:
                # "Review: blameless; discussed at the weekly meeting[2]", "Hey Pa! There's a Goat on the Roof[1]":
                # one passage's sentence (or one title) split at ";" or "!", cited once at its end
                numbers, borrowed[i] = cited[i + 1], bool(cited[i + 1])
            for n in dict.fromkeys(numbers):
                if not 1 <= n <= len(passages):
                    verdict[n] = (False, "")
                    continue
                # A sentence attributed to the cited passage's document: the rest of it is the claim on its text.
                said = without_attribution(claim, passages[n - 1]) or claim
                ok, quote = self._lexically_supported(said, passages[n - 1].text)
                verdict[n] = (ok, quote)
                if not ok:
                    pending.append((i, n, said, passages[n - 1].text))
            verdicts.append(verdict)
        for (i, n, _, _), result in zip(
            pending, self._semantically_supported([p[2] for p in pending], [p[3] for p in pending]), strict=True
        ):
            if result[0]:
                verdicts[i][n] = result
        # Pass 2: rebuild the text line by line; unsupported sentences lose their markers and get the visible flag.
        rebuilt: list[list[str]] = [[] for _ in lines]
        citations: dict[int, Citation] = {}
        unsupported: list[str] = []
        for i, ((line_no, sentence), verdict) in enumerate(zip(placed, verdicts, strict=True)):
            line_parts = rebuilt[line_no]
            claim = strip_markers(sentence)
            supported = [n for n, (ok, _) in verdict.items() if ok]
            if borrowed[i] and supported and all(verdicts[i + 1].get(n, (False, ""))[0] for n in supported):
                line_parts.append(claim)  # the rest of it, next, carries the same markers
                continue
            if supported:
                for n in supported:
                    chunk = passages[n - 1]
                    quote = verdict[n][1] or best_quote(claim, chunk.text)[0]
                    citations.setdefault(
                        n,
                        Citation(
                            n=n,
                            doc_id=chunk.doc_id,
                            chunk_id=chunk.chunk_id,
                            source=chunk.source,
                            quote=quote,
                            title=chunk.title,
                            heading=chunk.heading,
                            page=chunk.page_of(quote),  # the quoted sentence's page: a chunk may span two
                        ),
                    )
                line_parts.append(attach_markers(claim, supported))
            elif verdict or self._needs_source(claim):
                unsupported.append(claim)
                line_parts.append(f"{claim} {marker}")
            else:
                line_parts.append(claim)
        text = "\n".join(_join(parts, zh) for parts in rebuilt).strip()
        return CheckedAnswer(text=text, citations=[citations[n] for n in sorted(citations)], unsupported=unsupported)

    @staticmethod
    def _needs_source(claim: str) -> bool:
        """A factual sentence without a citation is unsupported; statements of absence and short links are not."""
        if _MISSING.search(claim):
            return False
        if claim.endswith((":", "：")):
            return False
        return len(_content_tokens(claim)) >= 4


def _join(parts: list[str], zh: bool) -> str:
    """Sentences of one line, joined again: with a space in English; in a Chinese answer without one, except
    between two English sentences (a quoted English line: "Sources disagree; none is known to be newer")."""
    if not zh:
        return " ".join(parts)
    out = ""
    for part in parts:
        if out and out[-1].isascii() and not out[-1].isspace() and part[:1].isascii() and part[:1].isalnum():
            out += " "
        out += part
    return out
