"""Multi-hop chains, model-free: from the sentences that state what a question is anchored on (INC-2291) to the
sentence that answers what it asks (who leads the team), through entities that consecutive sentences share.

    "Who leads the team that owns the service that caused INC-2291?"
    INC-2291 was caused by Kestrel.  →  The storage team owns Kestrel.  →  Zhang Wei leads the storage team.
       (anchor: states INC-2291)        (shares "Kestrel")                 (shares "storage"; asks: leads, team)

Two sentences are linked when they share a name, or a word that few sentences of the context use (a rare
word ties two statements about the same thing; "the" ties everything). The question's own words never link.
"""

from __future__ import annotations

import re
from collections import Counter, deque

from agentrag.agent.question import QuestionPart
from agentrag.agent.selection import Selector
from agentrag.agent.units import Unit
from agentrag.agent.values import names
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import tokenize, tokenize_query

MAX_HOPS = 3
RARE = 3  # a word in at most this many units of the context can link two of them
MIN_WORD = 4
# The clause a nested question asks about comes before its first relative pronoun: "Who leads the team | that ...".
_HEAD_EN = re.compile(r"^(.{3,80}?)\s+(?:that|which|who|whom|whose|where)\s", re.I)
_HEAD_ZH = re.compile(r"的([^的，。？?]{1,30})[？?。]?$")


def head_clause(part: QuestionPart) -> str:
    """The words of a nested question that ask for the answer, without the description of its subject."""
    m = (_HEAD_ZH if re.search(r"[\u4e00-\u9fff]", part.text) else _HEAD_EN).search(part.text)
    return m.group(1) if m else part.text


class Chains:
    def __init__(self, selector: Selector, part: QuestionPart) -> None:
        self.selector = selector
        self.part = part
        asked = set(tokenize(part.text))
        counts: Counter[str] = Counter(t for u in selector.units for t in u.tokens)
        self._links: dict[Unit, set[str]] = {}
        for unit in selector.units:
            keys = {normalize_for_match(n.text) for n in names(unit.text) if len(n.text) > 2}
            keys |= {t for t in unit.tokens if counts[t] <= RARE and len(t) >= MIN_WORD and t not in asked}
            self._links[unit] = {k for k in keys if k and k not in normalize_for_match(part.text)}

    def anchors(self) -> list[Unit]:
        """Units that state every constraint of the part (or whose passage is about it)."""
        return [u for u in self.selector.units if all(self.selector.states(c, u) for c in self.part.constraints)]

    def paths(self) -> dict[Unit, list[Unit]]:
        """For each unit reachable from an anchor, the units before it on the shortest chain (anchor first)."""
        found: dict[Unit, list[Unit]] = {}
        queue: deque[tuple[Unit, list[Unit]]] = deque()
        for anchor in self.anchors():
            found[anchor] = []
            queue.append((anchor, []))
        while queue:
            unit, before = queue.popleft()
            if len(before) >= MAX_HOPS:
                continue
            for other in self.selector.units:
                if other not in found and self._links[unit] & self._links[other]:
                    found[other] = [*before, unit]
                    queue.append((other, found[other]))
        return found

    def head_tokens(self) -> set[str]:
        return set(tokenize_query(head_clause(self.part)))
