"""Answer selection, model-free: which unit of the context answers a question part.

Units are scored for more than similarity: a unit answers when it holds a value of the type the part asks for
(a number for "how many", a date for "when", a definition for "what does X mean"; `agent.typed`), names the
target attribute, and meets the part's constraints (the code, version, entity or level asked about), in the unit
itself or in its passage's title and headings. Table rows whose first cell is the constraint ("SEV-2", "一线城市")
win over rows that merely share words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from agentrag.agent.context import Context
from agentrag.agent.question import Constraint, QuestionPart
from agentrag.agent.typed import holds_answer, in_gap
from agentrag.agent.units import Unit, unit_tokens
from agentrag.agent.zh_values import named_pages
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import tokenize_query

# Weights of the signals in a unit's score (tuned on the dev sets, see BENCHMARKS.md).
W_RELEVANCE = 0.50
W_TARGET = 0.15
W_TYPE = 0.15
W_CONSTRAINT = 0.10
W_PRIOR = 0.10
W_EARLIER = 0.15  # a unit naming what an earlier part of the question found
W_SUBJECT = 0.20  # Chinese: a unit of the page the question names
W_GAP = 0.20  # a value of the expected type standing in the question's gap
GRADE_PRIOR = {"correct": 1.0, "ambiguous": 0.6, "incorrect": 0.2}
TYPE_CHECKED = 12  # units, by the cheap signals, that are checked for a value of the expected type


@dataclass(frozen=True, slots=True)
class Scored:
    unit: Unit
    score: float
    typed: bool  # holds a value of the expected type (or a definition, for definition questions)
    constraints: float  # share of the part's constraints met by the unit or its passage
    target: float  # share of the target words in the unit or its passage's headings
    met: bool  # every constraint is met (stated, in the passage's title or headings, or through a bridge)
    anchored: bool = False  # the value stands where the question has its gap ("广三铁路于 1903年 筑成")


def idf(units: list[Unit]) -> dict[str, float]:
    df: Counter[str] = Counter()
    for u in units:
        df.update(u.tokens)
    n = len(units)
    return {t: math.log(1 + n / f) for t, f in df.items()}


def relevance(tokens: frozenset[str], wanted: set[str], weights: dict[str, float]) -> float:
    """IDF-weighted share of the wanted tokens that the unit holds."""
    if not wanted:
        return 0.0
    default = math.log(1 + len(weights) or 1)
    # fsum: the same bits whatever order the set is walked in (Python's hash seed), so ties break the same way.
    total = math.fsum(weights.get(t, default) for t in wanted)
    return math.fsum(weights.get(t, 0.0) for t in wanted & tokens) / total if total else 0.0


class Selector:
    """Scores a context's units for one question part.

    A constraint counts as met by a unit when the unit states it, or its passage's title or headings do (the
    passage is about it), or the unit names a bridge entity that another passage links to the constraint
    (INC-2291 → Kestrel: "the service that caused INC-2291" is answered by a passage about Kestrel).
    """

    def __init__(self, context: Context, units: list[Unit], bridges: list[str] | None = None) -> None:
        self.context = context
        self.units = units
        self.idf = idf(units)
        self._unseen = math.log(1 + len(units) or 1)  # the weight of a word no unit holds: the rarest
        self.bridges = [b for b in (bridges or []) if b]
        self._headings: dict[int, frozenset[str]] = {}
        self._about: dict[int, str] = {}  # title and headings, normalised
        self._titles: dict[int, str] = {}
        self._passages: dict[int, str] = {}
        self._block_tokens: dict[int, set[str]] = {}  # every token of a block's units
        for unit in units:
            self._block_tokens.setdefault(unit.block, set()).update(unit.tokens)
        self._named: dict[str, frozenset[str]] = {}  # question -> the page titles it names
        for b in context.blocks:
            chunk = b.evidence.chunk
            self._headings[b.n] = unit_tokens(" ".join([chunk.title, *chunk.heading_path]))
            self._about[b.n] = normalize_for_match(" ".join([chunk.title, chunk.heading]))
            self._titles[b.n] = normalize_for_match(chunk.title)
            self._passages[b.n] = normalize_for_match(" ".join([chunk.title, chunk.heading, b.text]))

    def names_page(self, question: str, block: int) -> bool:
        """A Chinese question names the page the block is from (zh_values.named_pages)."""
        if question not in self._named:
            self._named[question] = named_pages(question, self._titles.values())
        return self._titles[block] in self._named[question]

    def prior(self, unit: Unit) -> float:
        block = self.context.blocks[unit.block - 1]
        rank = 1.0 / (1.0 + 0.35 * (block.n - 1))
        position = 1.0 if unit.position == 0 else 0.85
        return GRADE_PRIOR[block.evidence.grade] * rank * position

    def headings(self, block: int) -> frozenset[str]:
        """Tokens of the block's title and heading path."""
        return self._headings[block]

    def about(self, block: int) -> str:
        """The block's title and heading, normalised for matching: what its passage is about."""
        return self._about[block]

    def title(self, block: int) -> str:
        """The block's document title, normalised for matching."""
        return self._titles[block]

    def passage(self, block: int) -> str:
        """The block's title, headings and text, normalised for matching."""
        return self._passages[block]

    def states(self, constraint: Constraint, unit: Unit) -> float:
        """1 when the unit states the constraint, 0.8 when its passage is about it (title, headings), else 0."""
        if constraint.kind in ("name", "quoted"):
            wanted = set(unit_tokens(constraint.text))
            if not wanted:  # "IT", "US": a name whose only word is a stopword, stated as written or not at all
                return self._as_written(constraint.text, unit)
            if wanted <= unit.tokens:
                return 1.0
            if wanted <= self._headings[unit.block]:
                return 0.8
            # Most of a long name ("Rodger Michell" as "Roger Michell", a title missing its subtitle) still names it,
            # if what it holds is the name's most distinctive word that the context uses, or its passage states the
            # whole name elsewhere ("She was the second wife of James Packer" on Erica Packer's page): "the Kettle
            # River" shares "river" with "the Bubye River" and names something else.
            held = wanted & (unit.tokens | self._headings[unit.block])
            if len(wanted) < 2 or len(held) < len(wanted) / 2:
                return 0.0
            seen = [w for w in wanted if w in self.idf]
            distinctive = max(sorted(seen), key=lambda w: self.idf[w]) if seen else None
            return 0.6 if distinctive in held or wanted <= self._block_tokens[unit.block] else 0.0
        key = normalize_for_match(constraint.text)
        if key and key in normalize_for_match(unit.text):
            return 1.0
        return 0.8 if key and key in self._about[unit.block] else 0.0

    def _as_written(self, name: str, unit: Unit) -> float:
        pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        if pattern.search(unit.text):
            return 1.0
        chunk = self.context.blocks[unit.block - 1].evidence.chunk
        return 0.8 if pattern.search(" ".join([chunk.title, *chunk.heading_path])) else 0.0

    def _bridged(self, constraint: Constraint, unit: Unit) -> bool:
        """The unit names a bridge entity that some other passage names together with the constraint."""
        text = normalize_for_match(unit.text) + self._about[unit.block]
        key = normalize_for_match(constraint.text)
        return any(
            normalize_for_match(b) in text
            and any(normalize_for_match(b) in p and key in p for n, p in self._passages.items() if n != unit.block)
            for b in self.bridges
        )

    def constraint_share(self, part: QuestionPart, unit: Unit) -> tuple[float, bool]:
        """The share of the constraints met, and whether all are."""
        if not part.constraints:
            return 1.0, True
        bridged = part.nested and bool(self.bridges)
        shares = [
            self.states(c, unit) or (0.8 if bridged and self._bridged(c, unit) else 0.0) for c in part.constraints
        ]
        return sum(shares) / len(shares), all(shares)

    def target_share(self, part: QuestionPart, unit: Unit) -> float:
        wanted = set(part.target_tokens)
        if not wanted:
            return 1.0
        # Weighted by rarity: "住宿" says what "出差住宿标准" asks about, "出差" and "标准" are said of everything.
        weight = {t: self.idf.get(t, self._unseen) for t in wanted}
        inside = math.fsum(weight[t] for t in wanted & unit.tokens)
        around = math.fsum(weight[t] for t in (wanted - unit.tokens) & self._headings[unit.block])
        return (inside + 0.5 * around) / math.fsum(weight.values())

    def relevance(self, unit: Unit, wanted: set[str], said: set[str] | None = None) -> float:
        """The unit's share of the wanted words; its headings count half (a table row means little without them).
        `said`: words the unit counts as holding (what a bridge it names stands for)."""
        tokens = unit.tokens | said if said else unit.tokens
        direct = relevance(tokens, wanted, self.idf)
        around = relevance(self._headings[unit.block] - tokens, wanted, self.idf)
        return direct + 0.5 * around

    def _base(
        self, part: QuestionPart, unit: Unit, wanted: set[str], earlier: list[str]
    ) -> tuple[float, float, float, bool]:
        cons, met = self.constraint_share(part, unit)
        target = self.target_share(part, unit)
        value = (
            W_RELEVANCE * self.relevance(unit, wanted)
            + W_TARGET * target
            + W_CONSTRAINT * cons
            + W_PRIOR * self.prior(unit)
        )
        if self.names_page(part.text, unit.block):
            value += W_SUBJECT
        if earlier:  # what earlier parts of the question found (SEV-2) picks the row a later part reads
            keys = [normalize_for_match(e) for e in earlier if e]
            if unit.kind == "row" and any(k == normalize_for_match(unit.first_cell) for k in keys):
                value += 2 * W_EARLIER
            elif any(k in normalize_for_match(unit.text) for k in keys):
                value += W_EARLIER
        return value, cons, target, met

    def ranked(self, part: QuestionPart, earlier: list[str] | None = None) -> list[Scored]:
        """Units best first. The type check (the costly part) runs only on the best of the cheap scores."""
        wanted = set(tokenize_query(part.text))
        base = sorted(((self._base(part, u, wanted, earlier or []), u) for u in self.units), key=lambda x: -x[0][0])
        out: list[Scored] = []
        for i, ((value, cons, target, met), unit) in enumerate(base):
            typed = i < TYPE_CHECKED and holds_answer(part, unit)
            anchored = typed and in_gap(part, unit)
            out.append(Scored(unit, value + W_TYPE * typed + W_GAP * anchored, typed, cons, target, met, anchored))
        return sorted(out, key=lambda s: -s.score)
