"""When someone reached through the question was born or died, model-free: read from that person's page.

"'One Less Set of Footsteps' is a song written and performed by a singer born in which year?": the song's
passage names Jim Croce, and the page about him opens "James Joseph Croce (January 10, 1943 – September 20,
1973) was an American singer". The year is the birth (or, for "died / passed away", the death) in the life
span of the page of a person the answering passage names; the passage naming him is the chain.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Scored, Selector
from agentrag.agent.subject import LEAD_CHARS, opening_subject, title_core
from agentrag.agent.typed import ASKS_YEAR, asked
from agentrag.agent.units import Unit
from agentrag.agent.values import YEAR
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk
from agentrag.vocab import AnswerType

_BORN = re.compile(r"\bborn\b|\bbirth", re.I)
_DIED = re.compile(r"\b(died|die|dies|death|passed away|deceased)\b", re.I)
# "(January 10, 1943 – September 20, 1973)", "(born 15 July 1954 in Bell Ville)", "(1770–1827)"
_LIFE = re.compile(
    r"\((?P<born>[^()–-]*?\b(?:1\d{3}|20\d\d))\b[^()–-]*?(?:\s?[–-]\s?(?P<died>[^()]*?\b(?:1\d{3}|20\d\d))\b)?[^()]*\)"
)
NAMED_AMONG = 12  # best units a bridged person may be named in


class LifeEvent(NamedTuple):
    best: Scored
    chain: list[Unit]
    short: str


def asks_life_event(part: QuestionPart) -> str | None:
    """'born' or 'died' when an English question asks when someone was born or died, else None."""
    if part.answer_type != AnswerType.DATE or has_cjk(part.text):
        return None
    if _DIED.search(part.text):
        return "died"
    return "born" if _BORN.search(part.text) else None


def _event(lead: str, event: str) -> str | None:
    m = _LIFE.search(lead)
    if m is None or not (m.group("died") or _BORN.search(m.group("born"))):
        return None  # a year in brackets that is no life span: "(2005)" after an album's name
    if event == "died" and not m.group("died"):
        return None
    return re.sub(r"^\W*(?:born\s)?", "", m.group(event)).strip(" ,;")


def life_event(part: QuestionPart, selector: Selector, best: Scored, ranked: list[Scored]) -> LifeEvent | None:
    """The birth or death of the person whose page the best units name, from that page's opening."""
    event = asks_life_event(part)
    if event is None:
        return None
    pages: list[tuple[Unit, set[str], str]] = []  # a unit of the page, the names it goes by, the date
    for block in selector.context.blocks:
        units = [u for u in selector.units if u.block == block.n]
        date = _event(block.text[:LEAD_CHARS], event) if units else None
        if date is None:
            continue
        title = title_core(block.evidence.chunk.title)
        subject = opening_subject(units[0], block.evidence.chunk.title) or title
        if asked(part, subject) or asked(part, title):
            return None  # the question names the person: their own page answers, no bridge
        names = {n for n in (normalize_for_match(subject), normalize_for_match(title)) if len(n) >= 4}
        pages.append((units[0], names, date))
    if not pages:
        return None
    naming = [best, *(s for s in ranked[:NAMED_AMONG] if s is not best)]
    for scored in naming:
        text = normalize_for_match(scored.unit.text)
        for unit, names, date in pages:
            if unit.block == scored.unit.block or not any(n in text for n in names):
                continue
            year = YEAR.search(date)
            short = year.group(0) if year and ASKS_YEAR.search(part.text) else date
            page = next((s for s in ranked if s.unit == unit), None)
            found = replace(page, met=True, typed=True) if page else replace(scored, unit=unit, met=True, typed=True)
            return LifeEvent(found, [scored.unit], short)
    return None
