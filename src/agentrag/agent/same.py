"""Whether two things share an attribute, model-free: "Are the bands Tiger Please and Black Rebel Motorcycle Club
from the same country?" is answered by reading the attribute off each side's own page and comparing: "a Welsh
rock band" and "an American rock band" differ, so no.

Attributes a page states in a form that can be compared: a nationality or country (the word the page's opening
gives its subject: "is an American actor"), a botanical or zoological family ("in the family Orchidaceae"), a
genus, and a US state (the state named in the page's opening). In English; None when a side's page does not
state the attribute, so that the question is answered side by side as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from agentrag.agent.en_spans import demonym
from agentrag.agent.options import joined_pair
from agentrag.agent.selection import Selector
from agentrag.agent.units import Unit
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk

_ASKS_SAME = re.compile(
    r"\bsame\s+(?P<attr>nationality|country|(?:us\s+|u\.s\.\s+|american\s+)?state|family|genus)\b", re.I
)
_FAMILY = re.compile(r"\bfamily,?\s+(?:of\s+)?[\"“]?(?P<v>[A-Z][a-z]+(?:aceae|idae|inae))\b|(?P<w>[A-Z][a-z]+aceae)\b")
_GENUS = re.compile(r"\bgenus\s+[\"“]?(?P<v>[A-Z][a-z]+)\b")
_US_STATES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho|Illinois|"
    "Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|Missouri|"
    "Montana|Nebraska|Nevada|New Hampshire|New Jersey|New Mexico|New York|North Carolina|North Dakota|Ohio|Oklahoma|"
    "Oregon|Pennsylvania|Rhode Island|South Carolina|South Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|"
    "West Virginia|Wisconsin|Wyoming"
)
_STATE = re.compile(rf"(?<![\w-])(?P<v>{_US_STATES})(?![\w-])")


# The countries most pages name by place ("a band from Cardiff, Wales") rather than by demonym, as demonyms.
_DEMONYMS = {
    "United States": "American",
    "U.S.": "American",
    "USA": "American",
    "England": "English",
    "Wales": "Welsh",
    "Scotland": "Scottish",
    "Ireland": "Irish",
    "Northern Ireland": "Irish",
    "United Kingdom": "British",
    "Canada": "Canadian",
    "Australia": "Australian",
    "New Zealand": "New Zealand",
    "France": "French",
    "Germany": "German",
    "Italy": "Italian",
    "Spain": "Spanish",
    "Portugal": "Portuguese",
    "Japan": "Japanese",
    "China": "Chinese",
    "India": "Indian",
    "Sweden": "Swedish",
    "Norway": "Norwegian",
    "Denmark": "Danish",
    "Finland": "Finnish",
    "Netherlands": "Dutch",
    "Belgium": "Belgian",
    "Russia": "Russian",
    "Poland": "Polish",
    "Mexico": "Mexican",
    "Brazil": "Brazilian",
    "Argentina": "Argentine",
    "Chile": "Chilean",
}
_FROM_PLACE = re.compile(
    r"\bfrom\s+(?:[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)*,\s+)?(?:the\s+)?(?P<country>"
    + "|".join(map(re.escape, _DEMONYMS))
    + r")\b"
)


def _nationality(text: str) -> str | None:
    """The nationality a sentence gives its subject, as a demonym: "an American actor", "a band from Cardiff,
    Wales" (Welsh)."""
    said = demonym(text)
    if said is not None:
        return said
    place = _FROM_PLACE.search(text)
    return _DEMONYMS[place.group("country")] if place else None


class Same(NamedTuple):
    answer: str  # "yes" or "no"
    values: list[tuple[str, str, Unit]]  # each side, the value its page states, and the unit stating it


def _first(pattern: re.Pattern[str]) -> Callable[[str], str | None]:
    def read(text: str) -> str | None:
        m = pattern.search(text)
        return next((g for g in m.groups() if g), None) if m else None

    return read


def _reader(attr: str) -> Callable[[str], str | None]:
    attr = attr.lower()
    if attr in ("nationality", "country"):
        return _nationality
    if attr == "family":
        return _first(_FAMILY)
    if attr == "genus":
        return _first(_GENUS)
    return _first(_STATE)


def _stated(side: str, selector: Selector, read: Callable[[str], str | None]) -> tuple[str, Unit] | None:
    """The attribute as the side's own page states it, from the first of its sentences that does."""
    key = normalize_for_match(side)
    for unit in selector.units:
        if not key or key not in selector.title(unit.block) or unit.kind != "sentence":
            continue
        if value := read(unit.text):
            return value, unit
    return None


def same_attribute(question: str, sides: list[str], selector: Selector) -> Same | None:
    m = _ASKS_SAME.search(question)
    if m is None or has_cjk(question):
        return None
    sides = sides if len(sides) == 2 else joined_pair(question)  # the planner split no sides off the question
    if len(sides) != 2:
        return None
    read = _reader(m.group("attr").split()[-1])
    found = [_stated(side, selector, read) for side in sides]
    if any(f is None for f in found):
        return None
    values = [(side, value, unit) for side, (value, unit) in zip(sides, [f for f in found if f], strict=True)]
    alike = len({normalize_for_match(v) for _, v, _ in values}) == 1
    return Same("yes" if alike else "no", values)
