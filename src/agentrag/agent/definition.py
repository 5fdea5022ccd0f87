"""Definitions, model-free: the words that say what a term means, from a table row's meaning cell ("E1042 | 400 |
Query too complex"), a sentence defining it ("E2001 means…", "E2001 是指…") or a gloss in brackets right after it
("E1042（查询过于复杂）报错…").
"""

from __future__ import annotations

import re

from agentrag.agent.gap import slot_span
from agentrag.agent.question import QuestionPart
from agentrag.agent.units import ChunkAt, Unit, block_units, table_header
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk
from agentrag.types import Chunk

_DEFINES = re.compile(
    r"\b(means?|meaning|refers? to|stands? for|is defined as|indicates?)\b|"
    # "E1042 is a ...", but not "E1042 is the most common error": a superlative ranks, it does not define
    r"(?<=\w) (is|are) (a|an|the)\b(?! (most|least|first|last|only|best|worst|\w+est)\b)|"
    r"表示|是指|指的是|意思是|含义|即|是一[种个款]|[：:]",
    re.I,
)
# "E1042（查询过于复杂）", "E1042 (query too complex)": a short gloss in brackets right after the term defines it.
_GLOSS = re.compile(r" ?[（(]([^（()）:：;；=]{2,30})[)）]")  # not "(符号: Kz; ISO货币编号: AOA)", "（英语：…）"
_WORDS = re.compile(r"[^\W\d_]{2}")  # two letters (or CJK characters) in a row: a gloss, not "(2025)" or "(v2)"
_OWNER = re.compile(r"\s*的")  # "X 的 Y": Y is X's, not what X is
_MEANING_HEADERS = re.compile(r"meaning|description|含义|说明|描述|意思|定义", re.I)


def _subjects(part: QuestionPart) -> list[str]:
    """What a definition question asks about: its constraints (the code, the name), else its target words."""
    return [c.text for c in part.constraints] or [part.target]


def defined(part: QuestionPart, unit: Unit) -> str | None:
    """What the unit says the subject is: its `definition`, else (a Chinese question) its `defining_slot`."""
    return definition(part, unit) or defining_slot(part, unit)


def definition(part: QuestionPart, unit: Unit) -> str | None:
    """The defining words: a table row's meaning cell, a gloss in brackets right after the subject, or what follows
    "X means" / "X 是指" in a sentence."""
    subjects = _subjects(part)
    if unit.kind == "row":
        if not any(normalize_for_match(s) in normalize_for_match(unit.first_cell) for s in subjects if s):
            return None
        for header, value in unit.cells[1:]:
            if _MEANING_HEADERS.search(header):
                return value
        # No meaning column: the cell after the term, when it holds words ("Count: 410" says how many, not what)
        second = unit.cells[1][1] if len(unit.cells) > 1 else ""
        return second if _WORDS.search(second) else None
    text = unit.text
    for subject in subjects:
        at = text.find(subject) if subject else -1
        if at < 0:
            continue
        end = at + len(subject)
        gloss = _GLOSS.match(text, end)
        # In the question's own script: "索莫尼（Somoni）" names it in another language, it does not say what it is.
        if gloss and _WORDS.search(gloss.group(1)) and has_cjk(gloss.group(1)) == has_cjk(part.text):
            return gloss.group(1).strip()
        m = _DEFINES.search(text, end)
        if m and m.start() - end <= 12:
            return text[m.end() :].strip(" ，,：:").rstrip("。.；;") or None
    return None


def passage_defines(part: QuestionPart, chunk: Chunk, chunk_at: ChunkAt | None = None) -> bool:
    """A unit of the passage gives the subject's `definition` (a table row read under its header, which may be in the
    chunk before: `chunk_at`)."""
    header = table_header(chunk, chunk_at) if chunk_at is not None else None
    return any(definition(part, unit) for unit in block_units(0, chunk.text, header))


def defining_slot(part: QuestionPart, unit: Unit) -> str | None:
    """For a Chinese definition question ("锣鼓经是什么"), the words standing where its question word stands in a
    Chinese sentence ("fail with E5003, by design" places nothing), unless the sentence names the subject only as the
    owner of something the question does not ask about ("补充 E5003 的排查步骤": its steps, not what it is) or the
    words are one character ("主" of "若以 E5003 为主")."""
    if not has_cjk(part.text):  # (a Chinese question's slot is only ever in a Chinese sentence: slot_span)
        return None
    for subject in filter(None, _subjects(part)):
        asked = part.text.find(subject)
        if asked >= 0 and _OWNER.match(part.text, asked + len(subject)):
            continue  # "齿河盗龙的属名是什么意思": what the subject owns is what is asked
        after = [m.end() for m in re.finditer(re.escape(subject), unit.text)]
        if after and all(_OWNER.match(unit.text, end) for end in after):
            return None
    slot = slot_span(part.text, unit.text)
    return slot if slot is not None and len(slot) > 1 else None
