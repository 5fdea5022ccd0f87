"""Choices and yes/no questions, model-free: which of the named options the evidence supports.

"Which came to market first, A or B?" compares a property of each option: the years (first, earlier, older),
or the numbers (more, larger, higher) that the passages about each option state. Without a comparative word
the option whose passages best answer the rest of the question is chosen. A yes/no question is answered "yes"
unless the best passage negates what is asked; the sentences shown with it are the evidence either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentrag.agent.kind import DEMONYM_WORD
from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Scored, Selector
from agentrag.agent.units import Unit, unit_tokens
from agentrag.agent.values import YEAR
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import tokenize_query

_EARLIER = re.compile(r"\b(first|earlier|earliest|older|oldest|before|sooner|prior|先|早|更老|最早)\b", re.I)
_LATER = re.compile(
    r"\b(later|latest|last|younger|youngest|newer|newest|(?:more|most) recent(?:ly)?|晚|最近|最新)\b", re.I
)
# "Which author lived longer": the length of each life, from the life span on the option's page.
_LIVED = re.compile(r"\blived (?:longer|the longest)\b|\blonger life\b|\bdied (?:older|at an older age)\b", re.I)
# The kind of thing the options are, after the question word: "Which tennis player | was born first".
_KIND = re.compile(r"\b(?i:which|what)\s+((?:(?!(?:is|are|was|were|did|does|do|has|have|had)\b)[a-z][\w'-]*\s+){1,3})")
# "reached a higher ranking": a rank is better the smaller its number (No. 1).
_RANK = re.compile(r"\brank(?:ing|ed)?\b", re.I)
_MORE = re.compile(
    r"\b(more|most|larger|largest|bigger|biggest|higher|highest|longer|longest|taller|tallest|greater|greatest|"
    r"heavier|wider|deeper|faster|更多|更大|更高|更长)\b",
    re.I,
)
_LESS = re.compile(
    r"\b(fewer|fewest|less|least|smaller|smallest|lower|lowest|shorter|shortest|lighter|narrower|slower|更少|更小|更低)\b",
    re.I,
)
_YES_NO_SCAFFOLD = frozenset(
    tokenize_query(
        "both same also each either all located found nationality country profession occupation kind type genre"
    )
)
_NUMBER = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\d.])\d+(?:\.\d+)?")
_NEGATION = re.compile(r"\b(not|never|no|neither|nor|none)\b|n't|不是|没有|并非|不", re.I)


@dataclass(frozen=True, slots=True)
class Chosen:
    option: str
    unit: Unit  # the passage sentence the choice rests on
    # Decided by comparing a value stated on each option's own page (their years or counts), not by which
    # option's sentences share most words with the question.
    computed: bool = False


def _about(option: str, selector: Selector) -> list[Unit]:
    """Units that name the option (all of its words), best first by their passage's rank."""
    wanted = set(unit_tokens(option))
    return [u for u in selector.units if wanted and wanted <= (u.tokens | selector.headings(u.block))]


# "more than 24 million": the number is 24,000,000, not 24.
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "万": 1e4, "亿": 1e8}
_SCALED = re.compile(r"\s?(thousand|million|billion|trillion|万|亿)", re.I)
_DIED = re.compile(r"\b(died|dies|death|passed away|deceased)\b|去世|逝世", re.I)
# A life span in a page's opening: "(24 July 1895 – 7 December 1985)".
_SPAN = re.compile(r"(?:\(|^)(?:[^()]*?\b)?(1\d{3}|20\d\d)\b[^()]*?[–-][^()]*?\b(1\d{3}|20\d\d)\b[^()]*\)")
_MONTH = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b")
PROPERTY_WINDOW = 60  # characters: a value this close to the property asked about ("born in 1950") is its value


def _in_date(match: re.Match[str], text: str) -> bool:
    """A year, or a day next to a month name ("17 September 1899"): no count."""
    near = text[max(0, match.start() - 10) : match.end() + 10]
    return bool(YEAR.fullmatch(match.group(0)) or _MONTH.search(near))


def _number(match: re.Match[str], text: str) -> float:
    value = float(match.group(0).replace(",", ""))
    scale = _SCALED.match(text, match.end())
    return value * _SCALE[scale.group(1).lower()] if scale else value


def _measure(
    part: QuestionPart, option: str, units: list[Unit], pattern: re.Pattern[str], selector: Selector
) -> tuple[float, Unit, bool] | None:
    """The option's value of the compared property: from its own page first, the value nearest a word of the
    property asked about ("born", "population", "founded"), a death year from a life span for "died first"."""
    question_numbers = set(_NUMBER.findall(part.text))
    own = normalize_for_match(option)
    kind = _KIND.search(part.text)  # "Which band ... was formed first": the band is the kind, formed the property
    prop = {
        t
        for t in set(tokenize_query(part.text))
        - set(unit_tokens(" ".join(part.options)))
        - set(unit_tokens(kind.group(1) if kind else ""))
        if len(t) > 2 and not any(p.search(t) for p in (_EARLIER, _LATER, _MORE, _LESS))
    }
    died = bool(_DIED.search(part.text))
    lived = bool(_LIVED.search(part.text))
    best: tuple[tuple[float, float, float], float, Unit] | None = None
    for rank, unit in enumerate(units):
        on_page = 1.0 if own in selector.title(unit.block) else 0.0
        if (pattern is YEAR or lived) and (span := _SPAN.search(unit.text)):  # born, died, or how long in all
            key = (on_page, float(max(len(prop), 1)), float(-rank))
            born, death = float(span.group(1)), float(span.group(2))
            if best is None or key > best[0]:
                best = (key, death - born if lived else death if died else born, unit)
            continue
        if lived:
            continue  # only a life span tells how long a life was
        spots = {t: [m.start() for m in re.finditer(re.escape(t), unit.text, re.I)] for t in prop}
        for m in pattern.finditer(unit.text):
            if m.group(0) in question_numbers or (pattern is not YEAR and _in_date(m, unit.text)):
                continue  # a day or a year is no count ("17 September 1899")
            distances = [min(abs(m.start() - at) for at in ats) for ats in spots.values() if ats]
            if pattern is not YEAR and min(distances, default=PROPERTY_WINDOW + 1) > PROPERTY_WINDOW:
                continue  # a count must be of the thing compared ("population was 684,360"), not any number
            # The value beside most words of the property ("career-high singles ranking of World No. 19", not "No. 1
            # in doubles"); then a count nearest them, a year first in the passage.
            near = float(sum(d <= PROPERTY_WINDOW for d in distances))
            nearest = min(distances, default=0) / 1000 if pattern is not YEAR else 0.0
            key = (on_page, near, -rank - nearest)
            if best is None or key > best[0]:
                value = float(m.group(0)) if pattern is YEAR else _number(m, unit.text)
                best = (key, value, unit)
    return (best[1], best[2], best[0][0] == 1.0) if best else None


def choose(part: QuestionPart, selector: Selector) -> Chosen | None:
    options = [o for o in part.options if o]
    if len(options) < 2:
        return None
    about = {o: _about(o, selector) for o in options}
    if not any(about.values()):
        return None
    ranked = bool(_RANK.search(part.text))
    for comparative, pattern, pick_max in (
        (_LIVED, YEAR, True),
        (_EARLIER, YEAR, False),
        (_LATER, YEAR, True),
        (_MORE, _NUMBER, not ranked),
        (_LESS, _NUMBER, ranked),
    ):
        if not comparative.search(part.text):
            continue
        if not all(about.values()):
            return None  # a comparison needs the property of every option
        measured = {o: _measure(part, o, us, pattern, selector) for o, us in about.items()}
        if all(measured.values()):
            best = (max if pick_max else min)(options, key=lambda o: measured[o][0])  # type: ignore[index]
            own_pages = all(m[2] for m in measured.values() if m is not None)
            return Chosen(best, measured[best][1], computed=own_pages)  # type: ignore[index]
    # No comparison to compute: the option whose sentences share most of the rest of the question.
    rest = set(tokenize_query(part.text)) - {t for o in options for t in unit_tokens(o)}

    def support(option: str) -> tuple[float, Unit | None]:
        scored = ((len(rest & (u.tokens | selector.headings(u.block))), u) for u in about[option])
        return max(scored, key=lambda x: x[0], default=(0, None))

    best = max(options, key=lambda o: support(o)[0])
    shared, unit = support(best)
    if unit is None or (not all(about.values()) and shared * 2 < len(rest)):
        return None  # only one option is in the evidence, and its sentences are not about the rest of the question
    return Chosen(best, unit)


YES_SHARE = 0.5  # of the attribute's words that the passage must state for a "yes"


def yes_or_no(part: QuestionPart, best: Scored, selector: Selector) -> str:
    """'no' when the best sentence negates, or when the passage about the subject states too few of the words the
    question asks about ("Were both X and Y British?": Y's passage says "Zimbabwean"); else 'yes'."""
    if _NEGATION.search(best.unit.text):
        return "no"
    named = set().union(*(unit_tokens(c.text) for c in part.constraints)) if part.constraints else set()
    # A side of "Are both X and Y British?" is searched as "Y British": what is left of it is the attribute.
    asked = set(tokenize_query(part.text)) if part.side else set(part.target_tokens)
    wanted = asked - named - _YES_NO_SCAFFOLD
    if not wanted:
        return "yes"
    # Checked in the passages about the subject when there are any (its page), else in the best unit's passage.
    subject = normalize_for_match(part.side or (part.constraints[0].text if part.constraints else ""))
    pages = [b.n for b in selector.context.blocks if subject and subject in selector.title(b.n)] or [best.unit.block]
    stated = frozenset().union(
        *(unit_tokens(selector.context.blocks[n - 1].text) | selector.headings(n) for n in pages)
    )
    # A nationality or faith asked of both (American, Christian) is no detail: a page that does not state it says no.
    proper = {t for w in re.findall(rf"(?<=\s){DEMONYM_WORD}\b", part.text) for t in tokenize_query(w)} & wanted
    if proper - stated:
        return "no"
    return "yes" if len(wanted & stated) / len(wanted) >= YES_SHARE else "no"
