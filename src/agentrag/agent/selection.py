"""Answer selection, model-free: which unit of the context answers a question part, and the short answer in it.

Units are scored for more than similarity: a unit answers when it holds a value of the type the part asks for
(a number for "how many", a date for "when", a definition for "what does X mean"), names the target attribute,
and meets the part's constraints (the code, version, entity or level asked about), in the unit itself or in
its passage's title and headings. Table rows whose first cell is the constraint ("SEV-2", "一线城市") win over
rows that merely share words. The short answer is the value of the expected type nearest to the target words
in the best unit, or the span of the unit that fills the question's gap ("由 ___ 合作开发").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from agentrag.agent.context import Context
from agentrag.agent.gap import answer_clause, slot_span
from agentrag.agent.question import Constraint, QuestionPart, asked_head
from agentrag.agent.units import Unit, unit_tokens
from agentrag.agent.values import POSSESSIVE, YEAR, Value, looks_like_person, values
from agentrag.agent.zh_values import asked_unit, counted, named_pages, whole_slot
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk, tokenize_query
from agentrag.vocab import AnswerType

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
# Types whose answer is a value a unit can hold; the others (list, steps, reason) are answered by sentences.
VALUE_TYPES = frozenset(
    {
        AnswerType.NUMBER,
        AnswerType.DURATION,
        AnswerType.LEVEL,
        AnswerType.DATE,
        AnswerType.PERSON,
        AnswerType.PLACE,
        AnswerType.ENTITY,
    }
)
_DEFINES = re.compile(
    r"\b(means?|meaning|refers? to|stands? for|is defined as|indicates?)\b|"
    # "E1042 is a ...", but not "E1042 is the most common error": a superlative ranks, it does not define
    r"(?<=\w) (is|are) (a|an|the)\b(?! (most|least|first|last|only|best|worst|\w+est)\b)|"
    r"表示|是指|指的是|意思是|含义|即|是一[种个款]|[：:]",
    re.I,
)
_CHANGE = re.compile(
    r"由\s*[^，。；]{1,20}?\s*(?:缩短|延长|上调|下调|提高|降低|增加|减少|调整|改|变更|放宽|收紧)(?:为|至|到)\s*(?P<new>\S)|"
    r"\bfrom\s+\S[^,;.]{0,30}?\s+to\s+(?P<new_en>\S)",
    re.I,
)
_MEANING_HEADERS = re.compile(r"meaning|description|含义|说明|描述|意思|定义", re.I)
ASKS_YEAR = re.compile(r"\b(what|which) year\b|哪一?年", re.I)
_YEAR = re.compile(rf"{YEAR.pattern}(?:\s?年)?")  # with 年 where the text has it: "1994年"


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
    total = sum(weights.get(t, default) for t in wanted)
    return sum(weights.get(t, 0.0) for t in wanted & tokens) / total if total else 0.0


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
            if not wanted:
                return 0.0
            if wanted <= unit.tokens:
                return 1.0
            if wanted <= self._headings[unit.block]:
                return 0.8
            # Most of a long name ("Rodger Michell" as "Roger Michell", a title missing its subtitle) still names it.
            share = len(wanted & (unit.tokens | self._headings[unit.block])) / len(wanted)
            return 0.6 if len(wanted) >= 2 and share >= 0.5 else 0.0
        key = normalize_for_match(constraint.text)
        if key and key in normalize_for_match(unit.text):
            return 1.0
        return 0.8 if key and key in self._about[unit.block] else 0.0

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
        inside = sum(weight[t] for t in wanted & unit.tokens)
        around = sum(weight[t] for t in (wanted - unit.tokens) & self._headings[unit.block])
        return (inside + 0.5 * around) / sum(weight.values())

    def relevance(self, unit: Unit, wanted: set[str]) -> float:
        """The unit's share of the wanted words; its headings count half (a table row means little without them)."""
        direct = relevance(unit.tokens, wanted, self.idf)
        around = relevance(self._headings[unit.block] - unit.tokens, wanted, self.idf)
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


# ------------------------------------------------------------------------------------------ typed answers


def holds_answer(part: QuestionPart, unit: Unit) -> bool:
    kind = part.answer_type
    if kind == AnswerType.DEFINITION:
        return definition(part, unit) is not None or (
            has_cjk(part.text) and slot_span(part.text, unit.text) is not None
        )
    if kind == AnswerType.ENTITY and has_cjk(part.text):
        # "X 的 Y 是什么" asks for a phrase more often than a name: a unit answers when it fills the gap.
        return slot_span(part.text, unit.text) is not None
    if kind in VALUE_TYPES:
        return bool(_candidates(part, unit))
    return False


def asked(part: QuestionPart, value: str) -> bool:
    """A value the question itself states ("2025-03-14 的周会…"), or the thing a side of it is about, is not its
    answer."""
    key = normalize_for_match(POSSESSIVE.sub("", value))
    stated = [part.text, *(c.text for c in part.constraints if c.kind in ("name", "quoted"))]
    return bool(key) and any(key in normalize_for_match(text) for text in stated)


def _candidates(part: QuestionPart, unit: Unit) -> list[Value]:
    kind = part.answer_type if part.answer_type in VALUE_TYPES else AnswerType.ENTITY
    found = [v for v in values(unit.text, kind) if not asked(part, v.text)]
    if not has_cjk(part.text):  # "named after Ewing’s nickname, “Judy”": the owner is not what is asked
        found = [v for v in found if not POSSESSIVE.search(v.text)] or found
    if kind == AnswerType.PERSON:  # "Desmond Tutu" over "Africa's" and "American" in the same sentence
        found = [v for v in found if looks_like_person(v.text)] or found
    elif kind == AnswerType.ENTITY and not has_cjk(part.text):
        # "held at what sports complex": a name (the StubHub Center), not the date in the same sentence.
        named = [v for v in values(unit.text, AnswerType.PLACE) if len(v.text) >= 3 and not asked(part, v.text)]
        keep = {(v.start, v.end) for v in named}
        found = [v for v in found if (v.start, v.end) in keep] or found
    if kind in (AnswerType.ENTITY, AnswerType.PLACE) and (head := asked_head(part.text)) and not has_cjk(part.text):
        # "in what Nevada county": a name that says it is one (Clark County), over a town or an acronym beside it.
        found = [v for v in found if re.search(rf"\b{re.escape(head)}s?$", v.text, re.I)] or found
    if kind == AnswerType.DATE and ASKS_YEAR.search(part.text):  # "in what year": 1954, not "December 17, 1954"
        found = [
            Value(m.group(0), v.start + m.start(), v.start + m.end()) for v in found if (m := _YEAR.search(v.text))
        ]
    if kind == AnswerType.NUMBER and has_cjk(part.text) and (asked_in := asked_unit(part.text)) is not None:
        # "全长多少公里": the number in kilometres, with its unit; a sentence with numbers in none is no answer
        found = [v for v in counted(unit.text, *asked_in) if not asked(part, v.text)]
    change = _CHANGE.search(unit.text)
    if change is not None:  # "由 60 天缩短为 30 天", "raised from 450 to 500": the value now is the second
        at = change.start("new") if change.group("new") else change.start("new_en")
        found = [v for v in found if v.start >= at] or found
    if unit.kind == "row":
        cells = [v for _, v in _answer_cells(part, unit)]
        found = [v for v in found if any(v.text in cell for cell in cells)]
        if kind == AnswerType.ENTITY:
            found = found or [Value(v, 0, 0) for v in cells if v]
    return found


def _answer_cells(part: QuestionPart, unit: Unit) -> list[tuple[str, str]]:
    """The cells of a table row that can hold the answer: those under a header naming the target, else every
    value cell when the row's own key names a constraint or the target (the SEV-2 row) or its table's caption
    names the target, else none: a row that only mentions the target in a cell ("Meaning: Indexing quota
    exceeded") does not give its value in another column ("HTTP: 429")."""
    cells = [(h, v) for h, v in unit.cells[1:] if not asked(part, v)]
    wanted = set(part.target_tokens)
    named = [(h, v) for h, v in cells if wanted & unit_tokens(h)]
    if named:
        return named
    key = unit_tokens(unit.first_cell)
    in_cells = frozenset().union(*(unit_tokens(h) | unit_tokens(v) for h, v in unit.cells))
    caption = unit.tokens - in_cells  # the table's caption: "住宿费按城市类别和职级设上限" above its rows
    keyed = any(set(unit_tokens(c.text)) & key for c in part.constraints) or bool(wanted & (key | caption))
    return cells if keyed else []


def definition(part: QuestionPart, unit: Unit) -> str | None:
    """The defining words: a table row's meaning cell, or what follows "X means" / "X 是指" in a sentence."""
    subjects = [c.text for c in part.constraints] or [part.target]
    if unit.kind == "row":
        if not any(normalize_for_match(s) in normalize_for_match(unit.first_cell) for s in subjects if s):
            return None
        for header, value in unit.cells[1:]:
            if _MEANING_HEADERS.search(header):
                return value
        return unit.cells[1][1] if len(unit.cells) > 1 else None
    text = unit.text
    for subject in subjects:
        at = text.find(subject) if subject else -1
        if at < 0:
            continue
        m = _DEFINES.search(text, at + len(subject))
        if m and m.start() - (at + len(subject)) <= 12:
            return text[m.end() :].strip(" ，,：:").rstrip("。.；;") or None
    return None


def _near(candidates: list[Value], text: str, anchors: list[str]) -> Value:
    """The candidate closest to where the target words occur in the text."""
    spots = [m.start() for a in anchors if a for m in re.finditer(re.escape(a), text, re.I)]
    if not spots:
        return candidates[0]
    return min(candidates, key=lambda v: min(abs(v.start - s) for s in spots))


def _row_value(part: QuestionPart, unit: Unit) -> str | None:
    """In a table row, the first cell that can hold the answer and holds a value of the asked type."""
    kind = part.answer_type if part.answer_type in VALUE_TYPES else AnswerType.ENTITY
    for _, value in _answer_cells(part, unit):
        if kind == AnswerType.ENTITY or values(value, kind):
            return value
    return None


def short_answer(part: QuestionPart, unit: Unit) -> str | None:
    """The answer in a few words, from the unit; None when the type has no short form or nothing fits."""
    kind = part.answer_type
    if kind == AnswerType.DEFINITION:
        found = definition(part, unit) or (slot_span(part.text, unit.text) if has_cjk(part.text) else None)
        return _clip(found) if found else None
    if kind not in VALUE_TYPES:
        return _clause(part, unit) if has_cjk(part.text) else None
    if unit.kind == "row":
        # A cell or nothing: words around a cell ("Meaning: Indexing") are no answer.
        cell = _row_value(part, unit)
        year = _YEAR.search(cell) if cell and kind == AnswerType.DATE and ASKS_YEAR.search(part.text) else None
        return year.group(0) if year else cell
    if kind == AnswerType.ENTITY and has_cjk(part.text):
        return _clause(part, unit)  # the words filling the gap, not a name that happens to stand in them
    candidates = _candidates(part, unit)
    slot = slot_span(part.text, unit.text)
    if slot is not None:
        inside = [v for v in candidates if v.text in slot]
        if inside and whole_slot(part, slot, inside):
            return slot
        if inside:
            return inside[0].text
        if not candidates and kind not in (AnswerType.PERSON, AnswerType.PLACE):
            # A person or a place is a name: words in the gap that name no one are not the answer; and a name
            # elsewhere in the sentence beats words in the gap that hold none ("held on July 21 at the StubHub Center").
            return slot
    if not candidates:
        return None
    return _near(candidates, unit.text, [*part.target_tokens, *(c.text for c in part.constraints)]).text


def _clause(part: QuestionPart, unit: Unit) -> str | None:
    found = answer_clause(part, unit.text)
    return _clip(found) if found else None


def in_gap(part: QuestionPart, unit: Unit) -> bool:
    """The unit holds a value of the expected type inside the span that fills the question's gap."""
    slot = slot_span(part.text, unit.text)
    if slot is None:
        return False
    if part.answer_type not in VALUE_TYPES:
        return True
    return any(v.text in slot or slot in v.text for v in _candidates(part, unit))


def _clip(text: str, limit: int = 80) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
