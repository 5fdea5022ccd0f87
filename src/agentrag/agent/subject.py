"""Answers that are what a passage is about, model-free.

"Which retired Argentine footballer who played as a forward was a main player for Valencia CF?" is answered by
the passage that opens "Claudio Javier López (born 17 July 1974) is a retired Argentine footballer who played as
a forward": its subject is the kind of thing asked for and fits the description, and the constraint it does not
state ("Valencia CF") is stated by another passage that names him ("...the main players included ... Claudio
López"). The answer is the passage's subject, and the linking passage is the chain the answer cites.

Encyclopaedic pages, product pages and profiles open this way ("X is a ..."); the rule never applies to a
question that names its subject itself, or asks for a value (a date, a number).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from agentrag.agent.kind import asked_head, asked_kind
from agentrag.agent.question import Constraint, QuestionPart
from agentrag.agent.selection import Scored, Selector
from agentrag.agent.typed import asked
from agentrag.agent.units import Unit
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk
from agentrag.vocab import AnswerType

SUBJECT_TYPES = frozenset({AnswerType.PERSON, AnswerType.ENTITY, AnswerType.PLACE})
MIN_FIT = 0.5  # share of the question's description (its target words, by rarity) the opening must state
# "Claudio Javier López (born 17 July 1974) is a", "The Fyre Festival was a", "Arrowhead, also known as X, is an"
_OPENING = re.compile(
    r"^(?:The\s)?(?P<name>[A-Z0-9][^()\[\],;:.]{1,70}?)\s*(?:\([^)]*\)\s*)?,?\s*(?:[^,]{0,60},\s)?"
    r"(?:is|was|are|were)\s+(?:an?|the|one|two|three|four|five|six|seven|eight|nine|ten)\b"
)
_TITLE_NOTE = re.compile(r"\s*\([^)]*\)\s*$")  # "Claudio López (footballer)": the note is not the name
_PERSON_PAGE = re.compile(r"\bborn\b|\(\s*\d{1,2}?\s*\w*\s*\d{4}\s*[-–]|\b(he|she|his|her)\b", re.I)
_LIFE = re.compile(r"\(\s*(?:born\b|[^()]*\d{4}\s*[-–])")  # "(born 1976", "(1766 – 1822)"
_PRONOUN_SUBJECT = re.compile(r"^(?:He|She|It|They)\s+(?:was|is|were|are|had|has|won|received|starred|appeared)\b")
LEAD_CHARS = 300  # a passage's opening, where a page says what its subject is
_DESCRIPTION_END = re.compile(
    r"[;.]|\s(?:in|of|on|at|from|under|with|by|for|to|as|after|before|during|since|between|about|into|located|"
    r"based|near|that|which|who|whose|where|created|founded|written|directed|produced|known)\s"
)


_CONJUNCTS = re.compile(r",\s*|\s+(?:and|or)\s+")
# Nouns that name a medium after the kind of thing it is: "romantic comedy film", "drama series".
_MEDIUM = frozenset("film films movie series show programme program novel book game album song single".split())


class Subject(NamedTuple):
    best: Scored
    chain: list[Unit]
    short: str
    linked: bool  # every constraint is stated by the passage or by one that names its subject


def _description(lead: str) -> str | None:
    """What an opening says its subject is: "is an unincorporated town in Clark County" → "unincorporated town"."""
    m = _OPENING.match(lead)
    if m is None:
        return None
    rest = lead[m.end() :]
    end = _DESCRIPTION_END.search(rest)
    return rest[: end.start()] if end else rest[:LEAD_CHARS]


def is_what_was_asked(part: QuestionPart, passage: str) -> bool:
    """Whether a passage's opening says its subject is the kind of thing asked for: "which coach" and "Anthony
    Lynn is an American football coach" (but not "what county" and "Paradise is a town in Clark County"); for
    "who", a page about a person."""
    lead = passage[:LEAD_CHARS]
    head = asked_head(part.text)
    if head:
        if head.endswith("s") and not head.endswith("ss") and len(head) > 4:
            head = head[:-1]  # "which American actors": an actor
        said = _description(lead)
        if said is None:
            return bool(re.search(rf"\b{re.escape(head)}", lead, re.I))
        # The kind heads the description (or one of its conjuncts): "an American actor and comedian" is an actor,
        # "the county seat of Alachua County" is no county.
        for conjunct in _CONJUNCTS.split(said):
            words = [w.lower() for w in re.findall(r"[\w'-]+", conjunct)]
            while words:
                if words[-1].startswith(head.lower()):
                    return True
                if words.pop() not in _MEDIUM:  # "a romantic drama film" is a drama (and a film)
                    break
        return False
    if part.answer_type == AnswerType.PERSON:
        return bool(_PERSON_PAGE.search(lead))
    return False


def opening_subject(unit: Unit, title: str) -> str | None:
    """The name an opening sentence is about, when it says what that is ("X (...) is a ..."), and it is the
    passage's title (or shares a word with it)."""
    if unit.position != 0 or unit.kind != "sentence":
        return None
    m = _OPENING.match(unit.text)
    if m is None:
        return None
    name = m.group("name").strip()
    core = title_core(title)
    if not core or not _words(core) & _words(name):
        return None
    # "Marvel's Agent Carter" on the page "Agent Carter (TV series)": the name the page goes by.
    return core if name.endswith(f" {core}") and len(core.split()) >= 2 else name


def page_title(selector: Selector, block: int) -> str:
    """The document title of a context block, as written."""
    return selector.context.blocks[block - 1].evidence.chunk.title


def title_core(title: str) -> str:
    """A page title without its disambiguating note: "Claudio López (footballer)" → "Claudio López"."""
    return _TITLE_NOTE.sub("", title).strip()


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 2}


def _linked(constraint: Constraint, names_of: list[str], selector: Selector, block: int) -> Unit | None:
    """A unit of another passage that states the constraint and names the subject."""
    keys = [k for k in (normalize_for_match(n) for n in names_of) if len(k) >= 4]
    for unit in selector.units:
        if unit.block == block or not selector.states(constraint, unit):
            continue
        text = normalize_for_match(unit.text)
        if any(k in text for k in keys):
            return unit
    # The constraint may be the linking passage's subject (its title) and the subject named in another sentence.
    for unit in selector.units:
        if unit.block == block:
            continue
        if selector.states(constraint, unit) and any(k in selector.passage(unit.block) for k in keys):
            return unit
    return None


def subject_answer(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> Subject | None:
    """The subject of the best opening sentence that is what was asked and fits the description, with every
    constraint stated in its passage or in a passage that names the subject; failing that (the linking passage
    was not retrieved), one whose missing constraints are at least stated somewhere in the evidence."""
    if part.answer_type not in SUBJECT_TYPES or has_cjk(part.text):
        return None
    if asked_kind(part.text) is None and part.answer_type != AnswerType.PERSON:
        return None  # "what is ...": no kind of thing to recognise a page by
    best: tuple[tuple[bool, float], Subject] | None = None
    for scored in ranked:
        unit = scored.unit
        title = page_title(selector, unit.block)
        name = opening_subject(unit, title)
        if name is None or asked(part, name) or scored.target < MIN_FIT or not is_what_was_asked(part, unit.text):
            continue
        names_of = [name, title_core(title)]
        chain: list[Unit] = []
        linked = True
        for constraint in part.constraints:
            if any(selector.states(constraint, u) for u in selector.units if u.block == unit.block):
                continue
            link = _linked(constraint, names_of, selector, unit.block)
            if link is not None:
                chain.append(link)
            elif any(selector.states(constraint, u) for u in selector.units):
                linked = False
            else:
                break  # a constraint nothing in the evidence states: not this question's subject
        else:
            rank = (linked, scored.target + 0.1 * scored.score)
            if best is None or rank > best[0]:
                found = Subject(replace(scored, met=True, typed=True), list(dict.fromkeys(chain)), name, linked)
                best = (rank, found)
    return best[1] if best else None


def page_subject(part: QuestionPart, selector: Selector, unit: Unit) -> str | None:
    """When the answering sentence opens a page and says its subject is the kind of thing asked for, the subject
    is the answer, not another name in it: "Agent Carter is an American television series created for ABC by
    Christopher Markus & Stephen McFeely" for "What ABC television series ...?"."""
    if part.answer_type not in SUBJECT_TYPES or has_cjk(part.text):
        return None
    if unit.position != 0 and _PRONOUN_SUBJECT.match(unit.text):
        # "He was nominated for the Academy Award ... for The Heartbreak Kid": the page's subject did it, and the
        # page's opening names him ("Edward Albert Heimberger ... was an American actor").
        unit = next((u for u in selector.units if u.block == unit.block and u.position == 0), unit)
    if not asked_kind(part.text) and (part.answer_type != AnswerType.PERSON or not _LIFE.search(unit.text)):
        return None  # "who ...": a page opening with its subject's life ("Brady John Haran (born 18 June 1976)")
    name = opening_subject(unit, page_title(selector, unit.block))
    if name is None or asked(part, name) or not is_what_was_asked(part, unit.text):
        return None
    return name
