"""Multi-hop chains, model-free: from the sentences that state what a question is anchored on (INC-2291) to the
sentence that answers what it asks (who leads the team), through entities that consecutive sentences share.

    "Who leads the team that owns the service that caused INC-2291?"
    INC-2291 was caused by Kestrel.  →  The storage team owns Kestrel.  →  Zhang Wei leads the storage team.
       (anchor: states INC-2291)        (shares "Kestrel")                 (shares "storage"; asks: leads, team)

Two sentences are linked when they share a name, or a word that few sentences of the context use (a rare
word ties two statements about the same thing; "the" ties everything). The question's own words never link.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections import Counter

from agentrag.agent.kind import asked_kind
from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Selector
from agentrag.agent.units import Unit
from agentrag.agent.values import names
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk, tokenize, tokenize_query

MAX_HOPS = 3
RARE = 3  # a word in at most this many units of the context can link two of them
MIN_WORD = 4
ASKING_WORDS = 8  # how far before a question word its clause's verb may be
NAME_LINK, WORD_LINK = 1, 2  # the cost of a hop through a shared name, and through a shared rare word only
# The clause a nested question asks about comes before its first relative pronoun: "Who leads the team | that ...".
_HEAD_EN = re.compile(r"^(.{3,80}?)\s+(?:that|which|who|whom|whose|where)\s", re.I)
_HEAD_ZH = re.compile(r"的([^的，。？?]{1,30})[？?。]?$")


# What the relative clause describes, after a preposition: "the waterfall in | the country | where ...": the
# bridge's kind, not a word of the answer's sentence ("Mira Falls is a waterfall in Veldonia").
_ANTECEDENT_EN = re.compile(
    r"(\s(?:in|on|at|of|for|from|with|by|to|near))\s+(?:the|a|an)\s+\w+(?:\s+\w+)?(?:\s+(?:in|on|at|of|by))?$", re.I
)


_WH_EN = re.compile(r"\b(?:what|which|who|whom|whose|when|where|how)\b", re.I)
_ANTECEDENT_NP = re.compile(r"\b(?:the|a|an)\s+((?:[\w'-]+\s+){0,3}[\w'-]+)$", re.I)
_ASKING_VERB = re.compile(r"\b(?:is|was|are|were|has|have|had)\b", re.I)


def head_clause(part: QuestionPart) -> str:
    """The words of a nested question that ask for the answer, without the description of its subject."""
    if has_cjk(part.text):
        m = _HEAD_ZH.search(part.text)
        return m.group(1) if m else part.text
    m = _HEAD_EN.search(part.text)
    if not m:
        return part.text
    if not _WH_EN.search(m.group(1)) and (wh := _WH_EN.search(part.text, m.end())):
        # The question word comes after the relative clause's start: "X is located in a city that | is the county
        # seat of what county", "The state where Henry Worrall died | has how many districts": it asks from the
        # verb before the question word (ASKING_WORDS back at most), not the anchor's clause.
        before = part.text[m.end() : wh.start()]
        verbs = list(_ASKING_VERB.finditer(before))
        if verbs and len(before[verbs[-1].start() :].split()) <= ASKING_WORDS:
            clause = part.text[m.end() + verbs[-1].start() :]
        elif len(before.split()) <= ASKING_WORDS:  # no verb of its own: "that first launched into orbit in what year"
            clause = part.text[m.end() :]
        else:
            clause = part.text[wh.start() :]
        # What the clause is said of belongs to it: "a mountain | that has an elevation of how many meters".
        antecedent = _ANTECEDENT_NP.search(m.group(1))
        return f"{antecedent.group(1)} {clause}" if antecedent else clause
    return _ANTECEDENT_EN.sub(r"\1", m.group(1))


class Chains:
    def __init__(self, selector: Selector, part: QuestionPart) -> None:
        self.selector = selector
        self.part = part
        asked = set(tokenize(part.text))
        counts: Counter[str] = Counter(t for u in selector.units for t in u.tokens)
        question = normalize_for_match(part.text)
        self._names: dict[Unit, set[str]] = {}  # the unit's names, whole and word by word: what a name link shares
        self._links: dict[Unit, set[str]] = {}
        for unit in selector.units:
            found = [n.text for n in names(unit.text) if len(n.text) > 2]
            whole = {normalize_for_match(n) for n in found}
            rare = {t for t in unit.tokens if counts[t] <= RARE and len(t) >= MIN_WORD and t not in asked}
            self._links[unit] = {k for k in whole | rare if k and k not in question}
            self._names[unit] = whole | {t for n in found for t in tokenize(n)}

    def anchors(self) -> list[Unit]:
        """Units that state every constraint of the part (or whose passage is about it), but for those describing
        the answer itself: in "the second wife of what Australian businessman", Erica Packer's page is the anchor
        and "Australian" is said of the answer."""
        kind = set(asked_kind(self.part.text) or [])
        of_anchor = [c for c in self.part.constraints if not set(c.text.lower().split()) <= kind]
        wanted = of_anchor or self.part.constraints
        return [u for u in self.selector.units if all(self.selector.states(c, u) for c in wanted)]

    def paths(self) -> dict[Unit, tuple[int, list[Unit]]]:
        """For each unit reachable from an anchor: the chain's cost and the units before it (anchor first). A link
        through a shared name costs 1, one through a shared rare word only 2: "southern Africa" and "the Southern
        Interior" share a word, not a subject."""
        found: dict[Unit, tuple[int, list[Unit]]] = {}
        order = {unit: i for i, unit in enumerate(self.selector.units)}
        pushed = itertools.count()  # ties: the earlier unit, then the earlier push; never the units themselves
        heap: list[tuple[int, int, int, Unit, list[Unit]]] = []
        for anchor in self.anchors():
            heapq.heappush(heap, (0, order[anchor], next(pushed), anchor, []))
        while heap:
            cost, _, _, unit, before = heapq.heappop(heap)
            if unit in found:
                continue
            found[unit] = (cost, before)
            if len(before) >= MAX_HOPS:
                continue
            for other in self.selector.units:
                shared = self._links[unit] & self._links[other]
                if other in found or not shared:
                    continue
                step = NAME_LINK if shared & self._names[unit] & self._names[other] else WORD_LINK
                heapq.heappush(heap, (cost + step, order[other], next(pushed), other, [*before, unit]))
        return found

    def head_tokens(self) -> set[str]:
        return set(tokenize_query(head_clause(self.part)))
