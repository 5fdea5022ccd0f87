"""Multi-hop chains, model-free: from the sentences that state what a question is anchored on (INC-2291) to the
sentence that answers what it asks (who leads the team), through entities that consecutive sentences share.

    "Who leads the team that owns the service that caused INC-2291?"
    INC-2291 was caused by Kestrel.  →  The storage team owns Kestrel.  →  Zhang Wei leads the storage team.
       (anchor: states INC-2291)        (shares "Kestrel")                 (shares "storage"; asks: leads, team)

Two sentences are linked when they share a name, or a word that few sentences of the context use (a rare
word ties two statements about the same thing; "the" ties everything), or when one names the subject of the
other's page ("owned by William Rockefeller" → William Rockefeller's page: "He was a co-founder of Standard Oil").
The question's own words never link.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections import Counter
from dataclasses import replace
from typing import NamedTuple

from agentrag.agent.kind import asked_kind
from agentrag.agent.question import POSSESSED_RELATIONS, Constraint, QuestionPart
from agentrag.agent.selection import W_EARLIER, W_PRIOR, W_RELEVANCE, W_TARGET, W_TYPE, Scored, Selector
from agentrag.agent.typed import holds_answer, short_answer
from agentrag.agent.units import Unit
from agentrag.agent.values import names
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk, tokenize, tokenize_query

MAX_HOPS = 3
RARE = 3  # a word in at most this many units of the context can link two of them
MIN_WORD = 4
ASKING_WORDS = 8  # how far before a question word its clause's verb may be
NAME_LINK, WORD_LINK = 1, 2  # the cost of a hop through a shared name, and through a shared rare word only
NESTED_CONSIDERED = 30  # best-ranked units a nested question's chains are looked for among
HOP_COST = 0.03  # a longer chain is a weaker one
# A nested question asks about what its anchor leads to: the anchor's own sentence answers it only when nothing a
# hop away fits nearly as well ("won Fame Gurukul along with Ruprekha Banerjee" names the singer, her page says
# where she was born). hotpotqa dev, agent: 0.1 to 0.5 give the same answers within 0.001 F1.
ANCHOR_COST = 0.25
# The clause a nested question asks about comes before its first relative pronoun: "Who leads the team | that ...".
_HEAD_EN = re.compile(r"^(.{3,80}?)\s+(?:that|which|who|whom|whose|where)\s", re.I)
_HEAD_ZH = re.compile(r"的([^的，。？?]{1,30})[？?。]?$")


# What the relative clause describes, after a preposition: "the waterfall in | the country | where ...": the
# bridge's kind, not a word of the answer's sentence ("Mira Falls is a waterfall in Veldonia").
_ANTECEDENT_EN = re.compile(
    r"(\s(?:in|on|at|of|for|from|with|by|to|near))\s+(?:the|a|an)\s+\w+(?:\s+\w+)?(?:\s+(?:in|on|at|of|by))?$", re.I
)

# The same after a copula when the question word has its own noun: "In which county is | the town | in which
# Raymond Robertsen was born", "What party was | the man | who repealed the Black Act", "How long is | the tidal
# estuary | in which Branford is a town": the town, the man and the estuary are the bridge; "Who was the director
# who ..." asks for the director and keeps it.
_COPULA_ANTECEDENT_EN = re.compile(
    r"^((?:\w+\s+)?(?:(?:which|what)\s+(?:\w+\s+){1,2}|how\s+\w+\s+)(?:is|was|are|were))\s+(?:the|a|an)\s+\w+(?:\s+\w+)?"
    r"(?:\s+(?:in|on|at|of|by))?$",
    re.I,
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
    if m and not part.text[m.end(1) + 1].islower():
        m = None  # "The Girl Who Kicked the Hornets' Nest": a title's capitalised word, no relative clause
    if not m:
        return _outside_anchor(part)
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
    # What the question says of the antecedent after its relative clause ends at the anchor: "Who was president
    # when the area | where Intrepid Wind Farm is located | became a state".
    clause = _COPULA_ANTECEDENT_EN.sub(r"\1", m.group(1))
    return _ANTECEDENT_EN.sub(r"\1", clause) + _after_clause(part, m.end())


def _after_clause(part: QuestionPart, start: int) -> str:
    """The words after the relative clause that starts at `start` and ends with the first name it holds."""
    spans = sorted(
        (at, at + len(c.text))
        for c in part.constraints
        if c.kind in ("name", "quoted") and (at := part.text.find(c.text, start)) >= 0
    )
    if not spans or _WH_EN.search(part.text, start, spans[0][0]):
        return ""  # a clause inside the clause: what follows the anchor is said inside it
    end = spans[0][1]
    for at, stop in spans[1:]:
        if at <= end + 2:  # "Johnnycake, West Virginia": one name in two constraints
            end = max(end, stop)
    if (located := _LOCATED.match(part.text, end)) is None:
        return ""  # the clause goes on past the anchor ("a 2006 film where Ron Perkins' character plays ...")
    rest = part.text[located.end() :]
    return " " + rest if tokenize_query(rest) else ""


_DISAMBIGUATION = re.compile(r"\s*(?:\(.*\)|,.*)$")  # "Madonna (book)", "Indianola, Iowa": the subject before it


def _subjects(selector: Selector, question: str) -> dict[int, tuple[str, re.Pattern[str]]]:
    """Each block's subject (its title without a disambiguation), keyed for linking and as a pattern that finds
    it named in a sentence; not subjects the question names itself (the anchor's page is an anchor already)."""
    out: dict[int, tuple[str, re.Pattern[str]]] = {}
    for block in selector.context.blocks:
        subject = _DISAMBIGUATION.sub("", block.evidence.chunk.title).strip()
        key = normalize_for_match(subject)
        if len(key) < MIN_WORD or key in question or has_cjk(subject):
            continue
        out[block.n] = (key, re.compile(rf"(?<!\w){re.escape(subject)}(?!\w)", re.I))
    return out


def _pages_named(unit: Unit, subjects: dict[int, tuple[str, re.Pattern[str]]]) -> set[str]:
    """The subjects of the pages the unit is on or names."""
    own = subjects.get(unit.block)
    named = {key for n, (key, pattern) in subjects.items() if n != unit.block and pattern.search(unit.text)}
    return named | {own[0]} if own else named


_DETERMINER = re.compile(r"\b(?:the|a|an)\s", re.I)
# After a possessive anchor, what is said of it: "Gisvi's | city of birth", "Big Eye's | main director".
_POSSESSED = re.compile(r"['’]s?((?:\s+(?!(?:is|was|are|were|located|born|based)\b)[a-z][\w-]*){1,3})")
# The same, up to the relation it names: "Malott's | alma mater | start issuing degrees" keeps the verb.
_POSSESSED_RELATION = re.compile(rf"['’]s?((?:\s+[a-z][\w-]*){{0,2}}\s+(?:{POSSESSED_RELATIONS}))\b", re.I)
# "X is located in", "X is located", "X was born": the verb that closes a relative clause about the anchor.
_LOCATED = re.compile(
    r"\s+(?:is|was|are|were)\s+(?:located|born|based|situated|found|from|in)(?:\s+(?:in|from|at|of|on)\b)?"
)
NP_WORDS = 5  # how far before an anchor the determiner of its noun phrase may be
MIN_HEAD = 1  # content words a head must keep to ask anything


def _outside_anchor(part: QuestionPart) -> str:
    """The asking words of a nested question with no relative clause: without the noun phrase that names the
    anchor ("What 1996 book was written by | the founder of Media Matters |", "Who is the spouse of | Big Eye's
    main director |"), or, when the question word follows the anchor, the noun phrase it asks of ("Anna Camp had
    a recurring role in | the Fox series created by whom |")."""
    text = part.text
    wh = _WH_EN.search(text)
    spans = sorted(
        (at, at + len(c.text))
        for c in part.constraints
        if c.kind in ("name", "quoted") and (at := text.find(c.text)) >= 0
    )
    if wh is None or not spans:
        return text
    if spans[0][0] < wh.start():  # the anchor comes first: the phrase the question word completes
        near = [
            d
            for d in _DETERMINER.finditer(text, spans[0][1], wh.start())
            if len(text[d.start() : wh.start()].split()) <= NP_WORDS + 3
        ]
        head = text[near[0].start() :] if near else text[spans[0][1] :]
    else:
        start, end = next(((a, b) for a, b in spans if a > wh.end()), spans[-1])
        if (possessed := _POSSESSED_RELATION.match(text, end) or _POSSESSED.match(text, end)) is not None:
            end = possessed.end()
        else:
            if (located := _LOCATED.match(text, end)) is not None:
                end = located.end()
            dets = [d for d in _DETERMINER.finditer(text, wh.end(), start) if d.end() < start]
            if dets and len(text[dets[-1].start() : start].split()) <= NP_WORDS:
                start = dets[-1].start()
        head = text[:start] + text[end:]
    return head if len(tokenize_query(head)) >= MIN_HEAD else text


class Chains:
    def __init__(self, selector: Selector, part: QuestionPart) -> None:
        self.selector = selector
        self.part = part
        asked = set(tokenize(part.text))
        counts: Counter[str] = Counter(t for u in selector.units for t in u.tokens)
        question = normalize_for_match(part.text)
        self._names: dict[Unit, set[str]] = {}  # the unit's names, whole and word by word: what a name link shares
        self._links: dict[Unit, set[str]] = {}
        self._anchors: list[Unit] | None = None
        subjects = _subjects(selector, question)
        for unit in selector.units:
            found = [n.text for n in names(unit.text) if len(n.text) > 2]
            whole = {normalize_for_match(n) for n in found}
            rare = {t for t in unit.tokens if counts[t] <= RARE and len(t) >= MIN_WORD and t not in asked}
            # A page's sentences are about its subject ("He was a co-founder of Standard Oil" on William
            # Rockefeller's page), and a sentence naming that subject leads to them: one hop, as through a name.
            about = _pages_named(unit, subjects)
            self._links[unit] = {k for k in whole | rare if k and k not in question} | about
            self._names[unit] = whole | {t for n in found for t in tokenize(n)} | about

    def anchors(self) -> list[Unit]:
        """Units that state every constraint of the part (or whose passage is about it), but for those describing
        the answer itself: in "the second wife of what Australian businessman", Erica Packer's page is the anchor
        and "Australian" is said of the answer."""
        if self._anchors is None:  # asked by the paths, the bridge's resolution and the chain's pick alike
            kind = set(asked_kind(self.part.text) or [])
            of_anchor = [c for c in self.part.constraints if not set(c.text.lower().split()) <= kind]
            wanted = of_anchor or self.part.constraints
            self._anchors = [u for u in self.selector.units if all(self.selector.states(c, u) for c in wanted)]
        return self._anchors

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

    def antecedent_tokens(self) -> set[str]:
        """The noun a relative clause describes: "Who owns the | service | that caused INC-2291"."""
        m = _HEAD_EN.search(self.part.text)
        if m is None or has_cjk(self.part.text):
            return set()
        words = m.group(1).split()
        return set(tokenize_query(words[-1])) if len(words) > 1 else set()

    def resolved(self, bridges: list[str]) -> str | None:
        """The bridge the relative clause leads to: of the entities the planner followed, the one that the units
        stating the anchor name together with the clause's own words ("was caused by Kestrel"), else the one they
        name most often; None without a relative clause or when no anchor names one."""
        m = _HEAD_EN.search(self.part.text)
        if m is None or not self.antecedent_tokens():
            return None
        anchor = {t for c in self.part.constraints for t in tokenize_query(c.text)}
        clause = set(tokenize_query(self.part.text[m.end(1) :])) - anchor
        anchors = self.anchors()
        ranks: dict[str, tuple[bool, int]] = {}
        for bridge in bridges:
            naming = [u for u in anchors if names_entity(u, bridge)]
            if naming:
                ranks[bridge] = (any(clause & u.tokens for u in naming), len(naming))
        top = sorted(ranks.values(), reverse=True)
        if not top or (len(top) > 1 and top[0] == top[1]):
            return None  # "the area where the wind farm is located": Sac, Buena Vista or Iowa, nothing says which
        return next(b for b, rank in ranks.items() if rank == top[0])


def names_entity(unit: Unit, entity: str) -> bool:
    """The unit names the entity as a whole word or words ("Sac", not the "sac" of "Sacramento")."""
    return bool(entity) and re.search(rf"(?<!\w){re.escape(entity)}(?!\w)", unit.text, re.I) is not None


class Chained(NamedTuple):
    """The unit a chain of shared entities leads to from the anchors, the units before it, and (across a resolved
    bridge) its short answer."""

    fit: float
    best: Scored
    chain: list[Unit]
    short: str | None


def chained(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> Chained | None:
    """For a question that reaches its subject through other entities: the best unit that a chain of shared
    entities connects to the units stating the constraints, scored on the words that ask for the answer.

    When the relative clause resolves to a bridge (`Chains.resolved`), a unit past the anchors naming it is about
    the clause's noun ("the service" is Kestrel), is considered wherever it ranks, and is read with the bridge as
    its constraint: "Team: Data Platform, Owns: Kestrel" answers "who owns" with its key cell."""
    chains = Chains(selector, part)
    paths = chains.paths()
    head = chains.head_tokens()
    bridge = chains.resolved(selector.bridges) if part.constraints else None
    said = chains.antecedent_tokens() if bridge else set()
    anchors = set(chains.anchors()) if bridge else set()
    # Across the bridge the part asks about the bridge: "who owns Kestrel".
    bridged = part.model_copy(update={"constraints": [Constraint(kind="name", text=bridge)]}) if bridge else part

    def across(unit: Unit) -> bool:
        return bridge is not None and unit not in anchors and names_entity(unit, bridge)

    considered = ranked[:NESTED_CONSIDERED] + [s for s in ranked[NESTED_CONSIDERED:] if across(s.unit)]
    best: Chained | None = None
    for scored in considered:
        unit = scored.unit
        if unit not in paths:
            continue
        beyond = across(unit)
        asked_of = bridged if beyond else part
        typed = scored.typed or holds_answer(asked_of, unit)
        known = unit.tokens | (said if beyond else set())
        target = len(head & known) / len(head) if head else scored.target  # of the asking clause
        fit = (
            W_RELEVANCE * selector.relevance(unit, head, said if beyond else set())
            + W_TARGET * target
            + W_TYPE * typed
            + W_PRIOR * selector.prior(unit)
            + (W_EARLIER if beyond else 0.0)
            - HOP_COST * paths[unit][0]
            - (ANCHOR_COST if not paths[unit][1] else 0.0)
        )
        if best is None or fit > best.fit:
            short = short_answer(asked_of, unit) if beyond else None
            best = Chained(fit, replace(scored, typed=typed, met=True, target=target), paths[unit][1], short)
    return best
