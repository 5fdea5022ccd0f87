"""How well the evidence answers the question: per part, the answering unit, its short answer, the chain of
passages that led to it, what is missing, conflicting sources, and an honest confidence.

Both synthesizers use it: the extractive one writes its answer from it, the LLM one gets its conflicts and
gaps in the prompt, and `ask --json` reports its confidence and conflicts either way.

A part is answered when its best unit meets the part's constraints (the code, version or name asked about:
in the unit, in its passage's title or headings, or through a chain: an earlier passage that names both the
constraint and an entity the answering passage is about) and, for a question asking for a value, holds one.
A question none of whose parts is answered is "not found" (stop reason no_evidence), whatever was retrieved.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

from agentrag.agent.chain import NESTED_CONSIDERED, chained
from agentrag.agent.choice import choose, yes_or_no
from agentrag.agent.conflicts import FoundConflict, find_conflict
from agentrag.agent.context import Context
from agentrag.agent.definition import definition
from agentrag.agent.en_spans import kind_named
from agentrag.agent.lifespan import life_event
from agentrag.agent.premise import denied_premise
from agentrag.agent.question import Constraint, QuestionAnalysis, QuestionPart
from agentrag.agent.reasons import past_the_title
from agentrag.agent.router import rule_route
from agentrag.agent.same import Same, same_attribute
from agentrag.agent.selection import Scored, Selector
from agentrag.agent.shared import Shared, shared_kind
from agentrag.agent.subject import SUBJECT_TYPES, is_what_was_asked, page_subject, subject_answer
from agentrag.agent.typed import VALUE_TYPES, asked, holds_answer, short_answer
from agentrag.agent.units import ChunkAt, Unit, context_units, stating
from agentrag.agent.value_choice import said_otherwise, stating_the_bound
from agentrag.agent.values import POSSESSIVE, looks_like_person
from agentrag.text.fingerprint import normalize_for_match
from agentrag.text.tokenize import has_cjk
from agentrag.types import Conflict, SubQuery
from agentrag.vocab import AnswerType, Confidence

# verified: the best unit meets the constraints and holds an answer of the expected kind; unverified: the
# question's subject is in the evidence but no unit could be shown to answer it; not_found: the subject (or, for
# a question without one, the attribute asked about) is in no passage.
Verdict = Literal["verified", "unverified", "not_found"]

# Below this share of the target's words (in the unit or its headings) a unit is about something else.
MIN_TARGET = 0.34
# Below this score a sentence answers a list, procedure or reason question only by accident.
MIN_SENTENCE_SCORE = 0.45
LIST_SPREAD = 10  # best units a list question's several constraints may be spread over
MET_SHARE = 0.6  # a unit meeting the constraints is preferred if it scores at least this share of the best
SURE_TARGET = 0.5  # a sure answer names at least half of the words of what is asked
# Answers that may turn out to be a bridge to the real answer (a name, place, date or number).
BRIDGED_TYPES = frozenset({AnswerType.PERSON, AnswerType.PLACE, AnswerType.DATE, AnswerType.NUMBER, AnswerType.ENTITY})
_VALUE_KINDS = frozenset({AnswerType.DATE, AnswerType.NUMBER, AnswerType.DURATION})


@dataclass
class PartAnswer:
    part: QuestionPart
    best: Scored | None
    ranked: list[Scored]
    short: str | None = None
    chain: list[Unit] = field(default_factory=list)  # earlier hops, in order, before `best`
    met: bool = False  # the constraints are met, directly or through the chain
    verdict: Verdict = "not_found"
    conflict: FoundConflict | None = None
    computed: bool = False  # a choice made by comparing the value each option's own page states
    denial: Unit | None = None  # a passage denying what the question takes for granted (premise.py)

    @property
    def answered(self) -> bool:
        """Something found answers this part, verified or not (the answer leads with it)."""
        return self.verdict != "not_found"

    @property
    def verified(self) -> bool:
        return self.verdict == "verified"

    @property
    def lead(self) -> tuple[str, int] | None:
        """The short answer and the passage it comes from: the source in force when sources disagree."""
        if not self.answered or self.best is None or not self.short:
            return None
        if self.conflict is not None and self.conflict.conflict.current:
            newest = self.conflict.conflict.values[0]
            return newest.value, newest.n
        return self.short, self.best.unit.block


@dataclass
class Assessment:
    analysis: QuestionAnalysis
    parts: list[PartAnswer]
    confidence: Confidence
    units: list[Unit]
    shared: Shared | None = None  # what the sides have in common, for "what sport do both X and Y play"
    same: Same | None = None  # whether the sides share an attribute, for "are X and Y from the same country"

    @property
    def conflicts(self) -> list[Conflict]:
        return [p.conflict.conflict for p in self.parts if p.conflict is not None]

    @property
    def answered(self) -> bool:
        return any(p.answered for p in self.parts) or self.same is not None

    @property
    def short_answer(self) -> str | None:
        if self.shared is not None:
            return self.shared.value
        if self.same is not None:
            return self.same.answer
        shorts = [lead[0] for p in self.parts if (lead := p.lead) is not None]
        if not shorts:
            return None
        sides = [p for p in self.parts if p.part.side]
        if sides and len(sides) == len(self.parts) and sides[0].part.answer_type != AnswerType.LIST:
            # "Were both X and Y actors?", "What sport is played by both X and Y?": one answer for the sides.
            if sides[0].part.answer_type == AnswerType.YES_NO:
                return "yes" if all(s == "yes" for s in shorts) and len(shorts) == len(sides) else "no"
            return max(shorts, key=shorts.count)
        return ("；" if self.analysis.language == "zh" else "; ").join(dict.fromkeys(shorts))

    @property
    def denials(self) -> list[Unit]:
        return [p.denial for p in self.parts if p.denial is not None]

    @property
    def missing(self) -> list[str]:
        return [p.part.text for p in self.parts if not p.answered]


def _bridges(plan: list[SubQuery]) -> list[str]:
    return [s.bridge for s in plan if s.bridge]


class Hop(NamedTuple):
    """An answer reached from the best unit through another passage: the unit, the chain before it, its value."""

    best: Scored
    chain: list[Unit]
    short: str


def _typed_answer(part: QuestionPart, scored: Scored) -> str | None:
    """The unit's short answer when it holds a value of the asked kind and the question does not state it."""
    if not (scored.typed or holds_answer(part, scored.unit)):
        return None
    answer = short_answer(part, scored.unit)
    return answer if answer and not asked(part, answer) else None


def _follow_bridge(part: QuestionPart, selector: Selector, best: Scored, ranked: list[Scored]) -> Hop | None:
    """When the best unit's answer is itself named by another good unit, or is what another passage is about, it
    was a bridge, not the answer: "McFarland was charged ... related to the Fyre Festival" → the Fyre Festival's
    passage: "The festival was scheduled ... on the island of Great Exuma"."""
    if part.answer_type not in BRIDGED_TYPES or has_cjk(part.text):
        return None
    bridge = short_answer(part, best.unit)
    if not bridge or len(bridge) < 4 or bridge[:1].islower():
        return None  # a common word ("film" for "what industry") names no other passage's subject
    if part.answer_type in _VALUE_KINDS and any(ch.isdigit() for ch in bridge):
        return None  # a year or an amount restated elsewhere is the same answer, not a bridge to another
    if kind_named(part, best.unit.text) == bridge:
        return None  # the sentence calls it the kind asked for ("the British rock band Dire Straits"): the answer
    key = normalize_for_match(bridge)
    pages = [b for b in selector.context.blocks if key in selector.about(b.n)]
    if any(is_what_was_asked(part, b.text) for b in pages):
        return None  # its own passage says it is what the question asks for ("which coach": "... is a coach")
    # Across the bridge the question is about the bridge: "the Fyre Festival" is stated there, not the answer.
    across = part.model_copy(update={"constraints": [*part.constraints, Constraint(kind="name", text=bridge)]})
    for scored in ranked[:NESTED_CONSIDERED]:
        unit = scored.unit
        named = key in selector.about(unit.block) or key in normalize_for_match(unit.text)
        if unit.block == best.unit.block or not named or not (answer := _typed_answer(across, scored)):
            continue
        if normalize_for_match(answer) != key and key not in normalize_for_match(answer):
            return Hop(replace(scored, met=True), [best.unit], answer)
    return None


def _answer_part(part: QuestionPart, selector: Selector, earlier: list[str]) -> PartAnswer:
    ranked = selector.ranked(part, earlier)
    if not ranked:
        return PartAnswer(part, None, ranked)
    chain = list[Unit]()
    if part.answer_type == AnswerType.LIST and not part.side and len(part.constraints) > 1:
        # "What changed between Aurora 2.3 and 3.0": the things compared are each met somewhere, not all in one unit.
        best = replace(ranked[0], met=_each_stated(part, selector, ranked) or ranked[0].met)
    else:
        # The constraints are what the question is about: a unit that meets them beats one that merely scores well.
        meeting = next((s for s in ranked if s.met), None)
        best = meeting if meeting is not None and meeting.score >= MET_SHARE * ranked[0].score else ranked[0]
        best = past_the_title(part, selector, best, ranked)
        best = stating_the_bound(part, best, ranked, MET_SHARE)
    if part.answer_type == AnswerType.CHOICE:
        return _choice(part, selector, ranked)
    short: str | None = None
    if (event := life_event(part, selector, best, ranked)) is not None:
        best, chain, short = event
    elif part.nested and part.constraints and (found := chained(part, selector, ranked)) is not None:
        best, chain, short = found.best, found.chain, found.short
    elif (hop := _follow_bridge(part, selector, best, ranked)) is not None:
        best, chain, short = hop
    if short is None:
        yes_no = part.answer_type == AnswerType.YES_NO
        short = yes_or_no(part, best, selector) if yes_no else short_answer(part, best.unit)
        short = _as_named_before(part, chain, short)
    short = page_subject(part, selector, best.unit) or short  # "Agent Carter is an American television series"
    if short is None and not chain and (hop := _linked_value(part, selector, best, ranked)) is not None:
        best, chain, short = hop
    answer = PartAnswer(part, best, ranked, short=short, chain=chain)
    answer.met = best.met
    answer.verdict = _verdict(part, selector, best, ranked)
    subject = None if answer.verified else subject_answer(part, selector, ranked)
    if subject is not None and (subject.linked or answer.short is None or answer.verdict == "not_found"):
        # No unit could be shown to answer, but a passage about the kind of thing asked fits the description (and
        # a passage naming it states the rest, or nothing better was found).
        answer = PartAnswer(part, subject.best, ranked, short=subject.short, chain=subject.chain, met=subject.linked)
        answer.verdict = _verdict(part, selector, subject.best, ranked) if subject.linked else "unverified"
    return answer


def _as_named_before(part: QuestionPart, chain: list[Unit], short: str | None) -> str | None:
    """The answer as a sentence leading to it names it, when that is the same name, shorter: "the second wife of
    Veldonia's richest man, Piet Orsk" leads to his page, which calls him "Piet Arne Orsk"."""
    if not chain or not short or has_cjk(short):
        return short
    words = set(short.split())
    for unit in chain:
        named = short_answer(part, unit)
        if named and set(named.split()) < words:
            return named
    return short


def _linked_value(part: QuestionPart, selector: Selector, best: Scored, ranked: list[Scored]) -> Hop | None:
    """When the best unit holds no value of the asked kind, the value may be in the passage about something it
    names: "The Peak Galleria ... near the summit of Victoria Peak" → Victoria Peak's passage gives its elevation."""
    if part.answer_type not in VALUE_TYPES or part.answer_type == AnswerType.PERSON or has_cjk(part.text):
        return None  # who: a person named a hop away is as often the wrong one (an incident's commander, not its owner)
    here = selector.passage(best.unit.block)
    for scored in ranked[:NESTED_CONSIDERED]:
        unit = scored.unit
        subject = selector.title(unit.block)
        if unit.block == best.unit.block or len(subject) < 4 or subject not in here:
            continue
        if value := _typed_answer(part, scored):
            return Hop(replace(scored, met=best.met), [best.unit], value)
    return None


def _choice(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> PartAnswer:
    chosen = choose(part, selector)
    if chosen is None:  # the options could not both be found: the best sentences, unverified
        return PartAnswer(part, ranked[0], ranked, verdict="unverified", met=ranked[0].met)
    best = next(s for s in ranked if s.unit == chosen.unit)
    return PartAnswer(part, best, ranked, short=chosen.option, verdict="verified", met=True, computed=chosen.computed)


def _spread(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> bool:
    """Each of a question's several constraints is stated by some good unit, though none states them all: "the
    2015 CrossFit Games were held at what complex 14 miles south of Downtown Los Angeles" is about things the
    evidence names, one passage each (the games and where; the complex and its place)."""
    return len(part.constraints) >= 2 and not has_cjk(part.text) and _each_stated(part, selector, ranked)


def _each_stated(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> bool:
    """Every constraint is stated by one of the best units, not necessarily the same one."""
    return all(any(selector.states(c, s.unit) for s in ranked[:LIST_SPREAD]) for c in part.constraints)


def _verdict(part: QuestionPart, selector: Selector, best: Scored, ranked: list[Scored]) -> Verdict:
    if part.answer_type in VALUE_TYPES or part.answer_type == AnswerType.DEFINITION:
        # A level (SEV-2, P1) is specific enough on its own, and so is a definition written right after the term
        # asked about ("E1042（查询过于复杂）"): the target's words ("错误" for "error") may be in another language.
        on_target = (
            best.target >= MIN_TARGET
            or part.answer_type == AnswerType.LEVEL
            or (part.answer_type == AnswerType.DEFINITION and definition(part, best.unit) is not None)
            or said_otherwise(part, best.unit)
        )
        verified = best.met and best.typed and on_target
    else:  # a list, steps, a reason, a choice: answered by passages that are on the question, not by one value
        # A sentence stating the code asked about (E5003) is on the question even when it shares few other words.
        coded = any(
            c.kind == "code" and normalize_for_match(c.text) in normalize_for_match(best.unit.text)
            for c in part.constraints
        )
        verified = best.met and (best.score >= MIN_SENTENCE_SCORE or coded)
    if verified:
        return "verified"
    subject = [s for s in ranked if s.met]
    if not subject:
        # Nothing in the evidence is about what the question asks about, unless its constraints are spread over it.
        return "unverified" if _spread(part, selector, ranked) else "not_found"
    on_subject = any(s.target >= MIN_TARGET for s in subject)
    # Said of something the question does not name at all (Aurora's SLA for Kestrel's), not of something it names
    # part of ("Monticello was the primary plantation of Thomas Jefferson" for "Castle Hill is near what primary
    # residence of Thomas Jefferson": the passage that answers meets one of the two names, as a bridge does).
    elsewhere = [s for s in ranked if not s.met and s.target >= MIN_TARGET]
    only_elsewhere = bool(elsewhere) and not any(s.constraints > 0 for s in elsewhere)
    if not on_subject and (only_elsewhere or not part.constraints) and not part.nested:
        # The attribute is only ever said of other things (Aurora's SLA for "Kestrel 的可用性 SLA"), or, for a
        # question without a subject, said nowhere (no leave policy for "how many days of annual leave").
        return "not_found"
    return "unverified"


def _sure(p: PartAnswer, context: Context) -> bool:
    """A verified part whose answer is plain to see: one hop, the subject stated by the answering unit itself (or
    its passage's headings), the answer of the expected kind, the passage graded correct."""
    if not p.verified or p.best is None or p.chain or p.part.nested:
        return False
    if p.part.answer_type == AnswerType.CHOICE:
        # Sure only when computed: the years or counts compared are each stated on that option's own page.
        # (hotpotqa dev, agent: 27 of the 28 such choices contain the gold answer; a choice by shared words
        # is right about half the time.)
        return p.computed
    if p.part.answer_type == AnswerType.YES_NO:
        return False  # "yes" unless a passage negates: a reasoned guess, never plain to see
    grade = context.blocks[p.best.unit.block - 1].evidence.grade
    if grade != "correct" or p.best.target < SURE_TARGET:
        return False
    if p.part.answer_type == AnswerType.DEFINITION:
        return p.short is not None
    if p.part.answer_type not in VALUE_TYPES:
        return False  # a list, steps or a reason can be on the question and still leave part of it out
    if p.short is None or (p.part.answer_type == AnswerType.PERSON and not looks_like_person(p.short)):
        return False
    if POSSESSIVE.search(p.short):
        return False  # a possessive ("Juliana Horatia Ewing’s") is cut from a longer phrase: not plain to see
    # A value is sure when it stands where the question's gap is, or in the row of the thing asked about.
    return p.best.anchored or p.best.unit.kind == "row"


def _confidence(parts: list[PartAnswer], context: Context) -> Confidence:
    if all(_sure(p, context) for p in parts):
        return Confidence.HIGH
    if any(p.verified for p in parts) and all(p.answered for p in parts):
        return Confidence.PARTIAL
    return Confidence.LOW


def _compared(analysis: QuestionAnalysis, plan: list[SubQuery]) -> list[QuestionPart]:
    """A comparison is answered side by side: one part per thing compared, each constrained to its side."""
    sides = [s for s in plan if s.about]
    if len(analysis.parts) != 1 or len(sides) < 2 or analysis.parts[0].answer_type == AnswerType.CHOICE:
        return analysis.parts  # a choice compares its options (choice.py)
    whole = analysis.parts[0]
    kind = whole.answer_type
    return [
        QuestionPart(
            text=s.query,
            answer_type=kind,
            target=whole.target,
            constraints=[Constraint(kind="name", text=s.about)],
            side=s.about,
            whole=whole.text,
        )
        for s in sides
    ]


def _sides_asked(analysis: QuestionAnalysis, sides: list[PartAnswer]) -> bool:
    """Whether a question split side by side is answered side by side: it compares the sides (or asks yes or no of
    each), or the sides agree on one answer ("What actor portrayed Kick-Ass and Count Vronsky?"). Otherwise the
    pair only describes one answer ("What actor appeared in A and was nominated for B?", "Socialist Thought and
    Practice"), and the question is answered whole."""
    if rule_route(analysis.question).cue == "comparison" or analysis.parts[0].answer_type == AnswerType.YES_NO:
        return True
    shorts = {normalize_for_match(p.short) for p in sides if p.short}
    return len(shorts) == 1 and all(p.short for p in sides)


def assess(
    analysis: QuestionAnalysis, context: Context, plan: list[SubQuery], chunk_at: ChunkAt | None = None
) -> Assessment:
    units = stating(context_units(context, chunk_at), analysis.question)
    bridges = _bridges(plan)
    selector = Selector(context, units, bridges)
    parts: list[PartAnswer] = []
    for part in _compared(analysis, plan):
        earlier = [p.short for p in parts if p.short]
        parts.append(_answer_part(part, selector, earlier))
    if len(parts) > len(analysis.parts) and not _sides_asked(analysis, parts):
        parts = [_answer_part(part, selector, []) for part in analysis.parts]
    for p in parts:
        if p.answered:
            p.conflict = find_conflict(p.part, p.ranked, context)
        if (denial := denied_premise(p.part, selector, p.ranked)) is not None:
            p.denial, p.verdict, p.short = denial, "not_found", None  # nothing answers what did not happen
    sides = [p.part.side for p in parts if p.part.side and p.part.answer_type in SUBJECT_TYPES]
    shared = shared_kind(analysis.question, sides, selector) if len(sides) == len(parts) else None
    named = [p.part.side for p in parts if p.part.side]
    same = same_attribute(analysis.question, named, selector) if len(named) in (0, len(parts)) else None
    return Assessment(analysis, parts, _confidence(parts, context), units, shared, same)
