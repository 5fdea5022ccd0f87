"""English short answers, model-free: which of a sentence's names answers the question, by how it relates to the
question's own words in that sentence.

A sentence that answers usually holds several names; the answer is the one the question's words point at:
- the relation words of the question (its words that name neither its subject nor the question word) stand
  just before the answer: "3 Days to Kill is a 2014 film directed by McG and written by Luc Besson" for "...
  directed by whom" gives McG, "near Monticello and the city of Charlottesville" for "near what residence";
- a name that only qualifies the next one is none: "current NBA player Terrence Jones" gives Terrence Jones;
- the kind of thing asked for names what follows it: "the British rock band Dire Straits" for "what British rock
  band", "a security guard named David Dunn" for "what is the name of ... character";
- a question asking for a sort of thing (a sport, an industry, a type of literature) is answered by the word that
  sorts the kind in the sentence: "writer of devotional literature" for "what type of literature", "the American
  film industry" for "what industry";
- "how many seasons" is answered by the count of seasons ("canceled after one season"), in words or digits;
- "of what nationality" is answered by the word that says it where the sentence says what its subject is: "was a
  Palestinian political leader".
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentrag.agent.kind import CONTAINERS, asked_head
from agentrag.agent.question import QuestionPart
from agentrag.agent.units import unit_tokens
from agentrag.agent.values import Value, names
from agentrag.text.tokenize import tokenize_query

_WORD = re.compile(r"[\w'’-]+")
ADJACENT_WORDS = 3  # a relation word this many words before a name points at it
NEAR_CHARS = 200  # beyond this a relation word says nothing about a name
# Question words that say what relation the answer has, and the words a sentence says it with.
_SAID_AS = {"name": ("named", "called", "titled", "known as", "nicknamed")}
# Nouns whose kinds are said by a common word before them: "devotional literature", "the film industry".
_SORTS = frozenset(
    "sport sports industry genre genres style styles literature music instrument language cuisine field discipline "
    "profession occupation business media medium art religion dance".split()
)
SORT_OF = re.compile(
    r"\b(?:what|which)\s+(?:\w+\s+)?(?:type|types|kind|kinds|form|forms|sort|sorts)\s+of\s+([a-z]+)", re.I
)
_NOT_A_SORT = frozenset(
    "the a an of and or in on at to for by with from its his her their this that these those such other same "
    "first last new old own many several various major main famous popular notable well-known".split()
)
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred".split()
)
# "how many": a count is asked, and the noun after it (an adjective between: "how many different species") is
# what is counted.
HOW_MANY = re.compile(r"\bhow\s+many\b(?:\s+(?:\w+\s+)??([a-z]+))?", re.I)
_COUNT = re.compile(
    rf"\b(?:\d[\d,.]*|{'|'.join(_NUMBER_WORDS)})(?:[\s-]+(?:{'|'.join(_NUMBER_WORDS)}))?"
    r"(?:\s+(?:thousand|million|billion|trillion))?\b",
    re.I,
)


@lru_cache(maxsize=65536)
def _stem(word: str) -> str | None:
    tokens = tokenize_query(word)
    return tokens[0] if tokens else None


def _relation_words(part: QuestionPart) -> frozenset[str]:
    """The question's words that relate its subject to the answer: neither the subject's names nor scaffolding."""
    named: set[str] = set()
    for c in part.constraints:
        named |= unit_tokens(c.text)
    return frozenset(t for t in tokenize_query(part.text) if t not in named)


def _said_as_spots(part: QuestionPart, text: str) -> list[tuple[int, int]]:
    asked = {w.lower() for w in _WORD.findall(part.asked_as)}
    out: list[tuple[int, int]] = []
    for word, phrases in _SAID_AS.items():
        if word in asked:
            for phrase in phrases:
                out += [(m.start(), m.end()) for m in re.finditer(rf"\b{phrase}\b", text)]
    return out


def pick(part: QuestionPart, text: str, candidates: list[Value]) -> Value:
    """The candidate the question's relation words point at; the first one when none does."""
    # A name inside another ("Gräsler" in "Dr. Gräsler, Badearzt") is part of it, not another answer.
    candidates = [
        v for v in candidates if not any(o.start <= v.start and v.end <= o.end and o != v for o in candidates)
    ] or candidates
    relation = _relation_words(part)
    head = _stem(asked_head(part.asked_as) or "")
    said_as = _said_as_spots(part, text)
    spots = [(m.start(), m.end()) for m in _WORD.finditer(text) if _related(_stem(m.group(0)), relation)] + said_as

    def score(v: Value) -> float:
        before = _content_before(text, v.start)
        after = _stem(next(iter(_WORD.findall(text[v.end : v.end + 30])), ""))
        kind = head is not None and (head in before or after == head)  # "the singer Rihanna", "the X series"
        adjacent = any(_related(w, relation) for w in before) or any(0 <= v.start - e <= 12 for _, e in said_as)
        shares = any(_related(_stem(w), relation) for w in _WORD.findall(v.text))  # "Ford Falcon" for "Ford car"
        distance = min((min(abs(v.start - e), abs(s - v.end)) for s, e in spots), default=NEAR_CHARS)
        aside = text.count("(", 0, v.start) > text.count(")", 0, v.start)  # "(French: Trèves)": an aside
        qualifies = not kind and _qualifies(v, text)
        return 1.5 * kind + 2.0 * adjacent + shares - min(distance, NEAR_CHARS) / NEAR_CHARS - 1.5 * qualifies - aside

    return max(candidates, key=lambda v: (score(v), -v.start))


_ARTICLES = frozenset({"the", "a", "an"})


def _content_before(text: str, at: int) -> list[str]:
    """The stems of the words just before a position, articles skipped ("conflict known as the Troubles")."""
    words = [m.group(0) for m in _WORD.finditer(text, max(0, at - 60), at) if m.group(0).lower() not in _ARTICLES]
    return [s for s in (_stem(w) for w in words[-ADJACENT_WORDS:]) if s]


def _related(stem: str | None, relation: frozenset[str]) -> bool:
    """The stem is one of the relation words, or shares its beginning with one ("editor" and "edit")."""
    if not stem:
        return False
    return stem in relation or any(len(r) >= 4 and (stem.startswith(r) or r.startswith(stem)) for r in relation)


# Words that may follow a name that is a noun of its own: "Dire Straits from their", "Rihanna is".
_LINKING = frozenset(
    "the a an of and or in on at to for by with from as than then also but nor so yet into onto upon over under "
    "who which that whose where when while after before during since until is was were are be been being has had "
    "have does did do said says can could will would may might shall should must its his her their".split()
)


def _qualifies(v: Value, text: str) -> bool:
    """A name that only qualifies what follows: "NBA player Terrence Jones", "Manhattan federal court"."""
    nxt = re.match(r" ([a-z][\w-]*)", text[v.end :])
    if nxt is None:
        return False
    word = nxt.group(1)
    return word not in _LINKING and not word.endswith(("ed", "ing", "en"))


def kind_named(part: QuestionPart, text: str) -> str | None:
    """The name right after the kind asked for ("the British rock band Dire Straits"), or after "named"."""
    head = asked_head(part.asked_as)
    said_as = _said_as_spots(part, text)  # "a security guard named David Dunn" for "what is the name of ..."
    found = names(text)
    for v in found:
        if any(0 <= v.start - e <= 2 for _, e in said_as):
            return v.text
    if not head or head.lower() in _SORTS:
        return None
    connector = r"(?:(?:named|called|titled|known as)\s+(?:the\s+)?)?"
    # "the band, Dire Straits" names the band; "Finnmark county, Norway" names what holds the county.
    comma = "" if head.lower() in CONTAINERS else ",?"
    for m in re.finditer(rf"\b{re.escape(head.lower())}s?{comma}\s+{connector}[\"“]?(?=[A-Z])", text):
        after = next((v for v in found if v.start in (m.end(), m.end() - 1)), None)
        if after is not None:
            return after.text
    return None


def sort_word(part: QuestionPart, text: str) -> str | None:
    """The word that sorts the kind asked for: "devotional" in "writer of devotional literature" for "what type of
    literature", "film" in "the American film industry" for "what industry"."""
    of = SORT_OF.search(part.asked_as)
    head = of.group(1).lower() if of else (asked_head(part.asked_as) or "").lower()
    if not head or (not of and head not in _SORTS):
        return None
    asked = {w.lower() for w in _WORD.findall(part.asked_as)}
    pattern = rf"\b([a-z][\w-]*)\s+{re.escape(head.rstrip('s'))}s?\b"
    for m in re.finditer(pattern, text):
        word = m.group(1)
        if word.lower() not in _NOT_A_SORT and word.lower() not in asked and not word.endswith("ly"):
            return word
    return None


def counted(part: QuestionPart, text: str) -> str | None:
    """For "how many seasons": the count standing before the asked noun in the text ("after one season")."""
    m = HOW_MANY.search(part.asked_as)
    if m is None or m.group(1) is None:
        return None
    noun = _stem(m.group(1))
    if noun is None:
        return None
    for c in _COUNT.finditer(text):
        following = [w.group(0) for w in _WORD.finditer(text, c.end())][:2]
        if any(_stem(w) == noun for w in following) and not re.fullmatch(r"(1[5-9]|20)\d\d", c.group(0)):
            return c.group(0)
    return None


ASKS_NATIONALITY = re.compile(r"\bnationality\b|\bcountry of origin\b", re.I)
# "X (born 1979) is an American actor", "42 is a 2013 American biographical film", "was a Palestinian leader"
_DEMONYM = re.compile(
    r"\b(?:is|was|are|were)\s+(?:an?|the)\s+(?:(?:\d{4}|former|retired|late|naturali[sz]ed)\s+)*"
    r"(?P<word>[A-Z][a-z]+(?:[-–][A-Z][a-z]+)?)\s+[a-z]"
)


def demonym(text: str) -> str | None:
    """The nationality a sentence gives its subject: the capitalised word opening what it says the subject is."""
    m = _DEMONYM.search(text)
    return m.group("word") if m else None
