"""Sentence boundaries for Chinese and English text.

Chinese ends (。！？；) always end a sentence, with any closing quote or bracket that follows.
English ends (. ! ? ;) end one only before whitespace, and a period does not after a known abbreviation
("Dr.", "e.g.", "U.S."; "a.m." only before a lower-case word) or a single initial ("J. R. R. Tolkien"), nor
inside a number ("3.14").
"""

from __future__ import annotations

import re

_CLOSERS = re.escape("\"'”’」』）)】》〉]")
_CJK_END = re.compile(rf"[。！？；!?][{_CLOSERS}]*|…+[{_CLOSERS}]*")
_EN_END = re.compile(rf"[.!?;][{_CLOSERS}]*(?=\s)")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof sr jr st vs etc e.g i.e al fig figs no nos vol vols pp ed eds approx inc ltd co "
    "corp jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k u.n est dept univ gen gov col lt sgt "
    "cf ca hon rev sen rep capt cmdr adm maj pres mt ft messrs mme mlle".split()
)
# Abbreviations that also end sentences: "from 6 a.m. to 7 p.m. daily" goes on, "opens at 9 a.m. The staff" ends.
_ENDING_ABBREVIATIONS = frozenset({"a.m", "p.m"})
_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_LETTERS_DOTS = _LETTERS | {"."}


def word_before(text: str, stop: int) -> str | None:
    """What `re.search(r"([A-Za-z][A-Za-z.]*)$", text[:stop])` finds, scanning back from `stop` instead of
    forward from 0 (that search is quadratic in a long paragraph: it runs at every period)."""
    end = stop - 1 if stop and text[stop - 1] == "\n" else stop  # `$` also matches before a final newline
    start = end
    while start > 0 and text[start - 1] in _LETTERS_DOTS:
        start -= 1
    while start < end and text[start] not in _LETTERS:  # the word starts at a letter, not a dot
        start += 1
    return text[start:end] if start < end else None


def _is_abbreviation(text: str, end: int) -> bool:
    """True when the period at text[end-1] closes an abbreviation or an initial, not a sentence."""
    found = word_before(text, end - 1)
    if found is None:
        return False
    word = found.lower().rstrip(".")
    if word in _ENDING_ABBREVIATIONS:
        following = text[end:].lstrip()[:1]
        return not following.isupper()
    return len(word) == 1 or word in _ABBREVIATIONS


_BRACKETS = (("(（", ")）"), ("[【", "]】"))
BRACKET_REACH = 200  # characters: a bracket that closes no nearer than this is no bracket around a sentence end


def _inside_brackets(text: str, at: int) -> bool:
    """The position is inside round or square brackets that close soon after it: "Colin Rand Kaepernick (; born
    November 3, 1987) is ..." has no sentence end at its ";" (a pronunciation was dropped from the source)."""
    for opens, closes in _BRACKETS:  # each kind on its own: "(] ; born 1981)" is inside the round one
        depth = 0
        for ch in reversed(text[max(0, at - BRACKET_REACH) : at]):
            depth += (ch in opens) - (ch in closes)
            if depth > 0:
                break
        if depth <= 0:
            continue
        after = text[at : at + BRACKET_REACH]
        closing = next((i for i, ch in enumerate(after) if ch in closes), None)
        opening = next((i for i, ch in enumerate(after) if ch in opens), None)
        if closing is not None and (opening is None or closing < opening):
            return True
    return False


def split_sentences(text: str, brackets: bool = False) -> list[str]:
    """Split into sentences, keeping each sentence's end punctuation and dropping blank pieces. With `brackets`,
    an end inside a bracket that closes soon after it ends nothing (answer units; chunking keeps the plain rule).

    The pieces joined back together give the original text minus the whitespace between sentences.
    """
    ends: set[int] = set()
    for m in _CJK_END.finditer(text):
        ends.add(m.end())
    for m in _EN_END.finditer(text):
        if text[m.start()] == "." and _is_abbreviation(text, m.start() + 1):
            continue
        ends.add(m.end())
    if brackets and ("(" in text or "[" in text or "（" in text):
        ends = {end for end in ends if not _inside_brackets(text, end)}
    ends.add(len(text))
    out: list[str] = []
    start = 0
    for end in sorted(ends):
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    return out


_BREAKS = (re.compile(r"\n"), re.compile(r"(?<=[，、,：:])"), re.compile(r"\s"))


def hard_wrap(text: str, limit: int) -> list[str]:
    """Split an over-long sentence at line breaks, else clause marks, else spaces, else at `limit`."""
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = 0
        for pattern in _BREAKS:
            positions = [m.start() for m in pattern.finditer(window) if limit // 3 <= m.start() <= limit]
            if positions:
                cut = positions[-1]
                break
        if cut == 0:
            cut = limit
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return [p for p in pieces if p]
