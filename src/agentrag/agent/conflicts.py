"""Conflicting sources: different documents giving different values for the same attribute.

Two units conflict when they come from different documents, state the same thing (the same table row, or a
sentence with mostly the same words) and hold different values of the type the question asks for: "一线城市
500 元/晚" in the 2025 policy against "一线城市 450 元/晚" in the 2024 one. The newer source (its effective or
document date; a title naming a later year) is the one in force and leads; the other is shown beside it
with its date, never silently dropped.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from agentrag.agent.attribution import in_force_from
from agentrag.agent.context import Context
from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Scored
from agentrag.agent.typed import short_answer
from agentrag.agent.units import Unit, unit_tokens
from agentrag.agent.values import names
from agentrag.text.fingerprint import normalize_for_match
from agentrag.types import Chunk, Conflict, ConflictValue
from agentrag.vocab import AnswerType

# How much of their words (numbers aside) two sentences must share to be statements of the same thing.
SAME_STATEMENT = 0.45
CONSIDERED = 10  # top-ranked units compared with the best one
RIVAL_SCORE = 0.75  # another document's answer this close to the best one's score states the same attribute
RIVAL_TARGET = 0.6
# Only values that can be told apart by comparing them; names and lists differ between sources for other reasons.
COMPARABLE = frozenset({AnswerType.NUMBER, AnswerType.DURATION, AnswerType.DATE, AnswerType.LEVEL})
_NUMBER = re.compile(r"\d[\d,.]*")


def _words(unit: Unit) -> set[str]:
    return {t for t in unit.tokens if not _NUMBER.fullmatch(t)}


def same_statement(a: Unit, b: Unit) -> bool:
    if a.kind == "row" and b.kind == "row":
        return normalize_for_match(a.first_cell) == normalize_for_match(b.first_cell) and bool(a.first_cell)
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / max(1, len(wa | wb)) >= SAME_STATEMENT


_PRONOUN_SUBJECT = re.compile(r"^(?:he|she|it|they|his|her|its|their)\b", re.I)


def _own_subjects(a: Unit, chunk_a: Chunk, b: Unit, chunk_b: Chunk) -> bool:
    """Statements about two things, which may hold different values without disagreeing: the pages differ, and each
    sentence names (a name or a number) what only its own page's title names, or calls its page's subject "he"...
    ("State Route 582 is a 16.688 mi highway" on Nevada State Route 582 against "SR 147 is a state highway")."""
    title_a, title_b = unit_tokens(chunk_a.title), unit_tokens(chunk_b.title)
    if title_a == title_b:
        return False

    def own(unit: Unit, title: frozenset[str], other: frozenset[str]) -> bool:
        named = unit_tokens(" ".join(v.text for v in names(unit.text))) | {t for t in unit.tokens if t.isdigit()}
        return bool((title - other) & named) or bool(_PRONOUN_SUBJECT.match(unit.text))

    return own(a, title_a, title_b) and own(b, title_b, title_a)


def _key(value: str) -> str:
    numbers = _NUMBER.findall(value)
    return "|".join(n.replace(",", "") for n in numbers) if numbers else normalize_for_match(value)


@dataclass(frozen=True, slots=True)
class FoundConflict:
    conflict: Conflict
    units: dict[int, Unit]  # the unit behind each value, by its passage number


def find_conflict(part: QuestionPart, ranked: list[Scored], context: Context) -> FoundConflict | None:
    """The best unit's value against what other documents say about the same thing, newest first."""
    if not ranked or part.answer_type not in COMPARABLE:
        return None
    best = ranked[0].unit
    best_value = short_answer(part, best)
    if best_value is None:
        return None
    chunk_of = {b.n: b.evidence.chunk for b in context.blocks}
    sides: dict[str, tuple[str, Unit]] = {chunk_of[best.block].doc_id: (best_value, best)}
    # Rows are compared wherever they rank (a table's row is the same statement as the row with its first cell in
    # another document's table); sentences only among the best ones: the same words, or another answer of the
    # expected kind that scores almost as well (two policies answering "报销单最晚什么时候提交" in their own words).
    candidates = [s.unit for s in ranked[1:] if s.unit.kind == "row"] if best.kind == "row" else []
    rivals = {
        s.unit
        for s in ranked[1:CONSIDERED]
        if s.typed
        and s.met
        and s.score >= RIVAL_SCORE * ranked[0].score
        and s.target >= max(RIVAL_TARGET, ranked[0].target)  # the same subject: every word the best one has
    }
    candidates += [s.unit for s in ranked[1:CONSIDERED] if s.unit.kind != "row"]
    for unit in candidates:
        doc = chunk_of[unit.block].doc_id
        if doc in sides or not (same_statement(best, unit) or unit in rivals):
            continue
        if _own_subjects(best, chunk_of[best.block], unit, chunk_of[unit.block]):
            continue  # "State Route 582 is a 16.688 mi highway" and "State Route 147 is a highway": two things
        value = short_answer(part, unit)
        if value is not None and _key(value) != _key(best_value):
            sides[doc] = (value, unit)
    if len(sides) < 2:
        return None
    entries = []
    for value, unit in sides.values():
        chunk = chunk_of[unit.block]
        entries.append(ConflictValue(value=value, n=unit.block, source=chunk.source, date=in_force_from(chunk)))
    entries.sort(key=lambda e: e.date or dt.date.min, reverse=True)
    dated = [e for e in entries if e.date is not None]
    current = entries[0].value if len(dated) == len(entries) and entries[0].date != entries[1].date else None
    attribute = best.first_cell if best.kind == "row" else part.target
    conflict = Conflict(attribute=attribute or part.text, values=entries, current=current)
    return FoundConflict(conflict, {unit.block: unit for _, unit in sides.values()})
