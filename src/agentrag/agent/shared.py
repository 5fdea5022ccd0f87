"""What two things have in common, model-free: "What sport is played by both Justin Gimelstob and Angelique
Kerber?" is answered by the words the two pages use to say what each is: "a retired American tennis player"
and "a German professional tennis player" share "tennis player".

Only for a question that asks what kind of thing both sides are or share (a sport, an industry, a profession;
"both what?"), in English; the answer is the shared words of the two descriptions, in the first one's order.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

from agentrag.agent.en_spans import ASKS_NATIONALITY, SORT_OF, demonym
from agentrag.agent.selection import Selector
from agentrag.agent.units import Unit
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk

# "what sport", "what industry", "what profession", "what type of plant", "are both what", "have in common"
_ASKS_KIND = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+){0,2}?(?:sport|industry|profession|occupation|job|field|kind|type|genre|form|"
    r"category|instrument\w*|nationality|role|media|business)s?\b|\bboth\s+(?:what|examples of what)\b|"
    r"\bin common\b|\bshare\b",
    re.I,
)
# "X (born 1977) is a retired American tennis player", "Cranium is a party game created by ..."
_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+", re.I)
_CLAUSE_END = re.compile(
    r"[;.(]|\b(?:who|which|that|best known|known|from|created|designed|founded|born|in|native|located|based)\b", re.I
)
_GENERIC = frozenset(
    "former retired professional famous popular known best also american british english german french italian "
    "current first second other several many one two three four five new old early late".split()
)
_FUNCTION = frozenset("and or of the a an in on at for to by with as its his her their".split())
MAX_WORDS = 3


class Shared(NamedTuple):
    value: str
    units: list[Unit]  # the description of each side, in the sides' order


def asks_shared_kind(question: str) -> bool:
    return not has_cjk(question) and bool(_ASKS_KIND.search(question))


def _description(side: str, selector: Selector) -> tuple[list[str], Unit] | None:
    """The words after "is a" in the first sentence of the side's page that says what it is."""
    key = normalize_for_match(side)
    for unit in selector.units:
        if not key or key not in selector.title(unit.block) or unit.kind != "sentence":
            continue
        m = _COPULA.search(unit.text)
        if m is None or m.start() > 160:
            continue
        rest = unit.text[m.end() :]
        end = _CLAUSE_END.search(rest)
        words = re.findall(r"[A-Za-z][\w-]*", rest[: end.start()] if end else rest)
        kept = [w.lower() for w in words if w[0].islower() and w.lower() not in _GENERIC]
        if kept:
            return kept, unit
    return None


def shared_kind(question: str, sides: list[str], selector: Selector) -> Shared | None:
    if len(sides) < 2 or not asks_shared_kind(question):
        return None
    found = [_description(side, selector) for side in sides]
    if any(f is None for f in found):
        return None
    described = [f for f in found if f is not None]
    if ASKS_NATIONALITY.search(question):  # "what country of origin do X and Y have in common": "American"
        said = {demonym(unit.text) for _, unit in described}
        only = next(iter(said)) if len(said) == 1 else None
        return Shared(only, [unit for _, unit in described]) if only else None
    asked = {w.lower() for w in re.findall(r"\w+", question)}
    common = set(described[0][0]).intersection(*(set(words) for words, _ in described[1:]))
    first = described[0][0]
    runs: list[list[str]] = [[]]
    for i, word in enumerate(first):  # runs of shared words, as they stand in the first description ("tennis player")
        if word in common and word not in asked and word not in _FUNCTION:
            if word not in (w for run in runs for w in run):
                runs[-1].append(word)
        elif word == "and" and runs[-1] and i + 1 < len(first) and first[i + 1] in common:
            runs[-1].append(word)  # "director and producer": both shared, one run
        elif runs[-1]:
            runs.append([])
    runs = [run[:-1] if run and run[-1] == "and" else run for run in runs]
    runs = [run for run in runs if run]
    if (sorted_by := _sorting(question, first, common)) is not None:
        return Shared(sorted_by, [unit for _, unit in described])
    if not runs:
        return None
    longest = max(runs, key=len)
    value = " ".join(longest) if len(longest) > 1 else " and ".join(run[0] for run in runs[:2])
    words = value.split()[: MAX_WORDS + ("and" in longest)]
    while words[-1] == "and":  # "film director and" cut from "film director and producer"
        words.pop()
    return Shared(" ".join(words), [unit for _, unit in described])


def _sorting(question: str, first: list[str], common: set[str]) -> str | None:
    """For "what types of plants": the shared word before the noun asked about ("a genus of flowering plants")."""
    of = SORT_OF.search(question)
    if of is None:
        return None
    noun = of.group(1).lower().rstrip("s")
    for word, following in itertools.pairwise(first):
        if following.rstrip("s") == noun and word in common and word not in _FUNCTION:
            return word
    return None
