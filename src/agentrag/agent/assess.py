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
from typing import Literal

from agentrag.agent.chain import Chains
from agentrag.agent.conflicts import FoundConflict, find_conflict
from agentrag.agent.context import Context
from agentrag.agent.question import Constraint, QuestionAnalysis, QuestionPart
from agentrag.agent.selection import (
    VALUE_TYPES,
    W_PRIOR,
    W_RELEVANCE,
    W_TARGET,
    W_TYPE,
    Scored,
    Selector,
    holds_answer,
    short_answer,
)
from agentrag.agent.units import ChunkAt, Unit, context_units
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
SURE_TARGET = 0.5  # a sure answer names at least half of the words of what is asked
NESTED_CONSIDERED = 30  # best-ranked units a nested question's chains are looked for among
HOP_COST = 0.03  # a longer chain is a weaker one


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

    @property
    def conflicts(self) -> list[Conflict]:
        return [p.conflict.conflict for p in self.parts if p.conflict is not None]

    @property
    def answered(self) -> bool:
        return any(p.answered for p in self.parts)

    @property
    def short_answer(self) -> str | None:
        shorts = [lead[0] for p in self.parts if (lead := p.lead) is not None]
        if not shorts:
            return None
        return ("；" if self.analysis.language == "zh" else "; ").join(dict.fromkeys(shorts))

    @property
    def missing(self) -> list[str]:
        return [p.part.text for p in self.parts if not p.answered]


def _bridges(plan: list[SubQuery]) -> list[str]:
    return [s.bridge for s in plan if s.bridge]


def _nested(part: QuestionPart, selector: Selector, ranked: list[Scored]) -> tuple[Scored, list[Unit]] | None:
    """For a question that reaches its subject through other entities: the best unit that a chain of shared
    entities connects to the units stating the constraints, scored on the words that ask for the answer."""
    chains = Chains(selector, part)
    paths = chains.paths()
    head = chains.head_tokens()
    best: tuple[float, Scored] | None = None
    for scored in ranked[:NESTED_CONSIDERED]:
        if scored.unit not in paths:
            continue
        typed = scored.typed or holds_answer(part, scored.unit)
        target = len(head & scored.unit.tokens) / len(head) if head else scored.target  # of the asking clause
        fit = (
            W_RELEVANCE * selector.relevance(scored.unit, head)
            + W_TARGET * target
            + W_TYPE * typed
            + W_PRIOR * selector.prior(scored.unit)
            - HOP_COST * len(paths[scored.unit])
        )
        if best is None or fit > best[0]:
            best = (fit, replace(scored, typed=typed, met=True, target=target))
    return (best[1], paths[best[1].unit]) if best else None


def _answer_part(part: QuestionPart, selector: Selector, earlier: list[str]) -> PartAnswer:
    ranked = selector.ranked(part, earlier)
    if not ranked:
        return PartAnswer(part, None, ranked)
    best, chain = ranked[0], list[Unit]()
    if part.nested and part.constraints and (found := _nested(part, selector, ranked)) is not None:
        best, chain = found
    answer = PartAnswer(part, best, ranked, short=short_answer(part, best.unit), chain=chain)
    answer.met = best.met
    answer.verdict = _verdict(part, best, ranked)
    return answer


def _verdict(part: QuestionPart, best: Scored, ranked: list[Scored]) -> Verdict:
    if part.answer_type in VALUE_TYPES or part.answer_type == AnswerType.DEFINITION:
        # A level (SEV-2, P1) is specific enough on its own: the target's words may be in another language.
        on_target = best.target >= MIN_TARGET or part.answer_type == AnswerType.LEVEL
        verified = best.met and best.typed and on_target
    else:  # a list, steps, a reason, a choice: answered by passages that are on the question, not by one value
        verified = best.met and best.score >= MIN_SENTENCE_SCORE
    if verified:
        return "verified"
    subject = [s for s in ranked if s.met]
    if not subject:
        return "not_found"  # nothing in the evidence is about what the question asks about
    on_subject = any(s.target >= MIN_TARGET for s in subject)
    elsewhere = any(s.target >= MIN_TARGET for s in ranked if not s.met)
    if not on_subject and (elsewhere or not part.constraints) and not part.nested:
        # The attribute is only ever said of other things (Aurora's SLA for "Kestrel 的可用性 SLA"), or, for a
        # question without a subject, said nowhere (no leave policy for "how many days of annual leave").
        return "not_found"
    return "unverified"


def _sure(p: PartAnswer, context: Context) -> bool:
    """A verified part whose answer is plain to see: one hop, the subject stated by the answering unit itself (or
    its passage's headings), the answer of the expected kind, the passage graded correct."""
    if not p.verified or p.best is None or p.chain or p.part.nested:
        return False
    grade = context.blocks[p.best.unit.block - 1].evidence.grade
    if grade != "correct" or p.best.target < SURE_TARGET:
        return False
    if p.part.answer_type not in VALUE_TYPES:
        return True
    # A value is sure when it stands where the question's gap is, or in the row of the thing asked about.
    return p.short is not None and (p.best.anchored or p.best.unit.kind == "row")


def _confidence(parts: list[PartAnswer], context: Context) -> Confidence:
    if all(_sure(p, context) for p in parts):
        return Confidence.HIGH
    if any(p.verified for p in parts) and all(p.answered for p in parts):
        return Confidence.PARTIAL
    return Confidence.LOW


def _compared(analysis: QuestionAnalysis, plan: list[SubQuery]) -> list[QuestionPart]:
    """A comparison is answered side by side: one part per thing compared, each constrained to its side."""
    sides = [s for s in plan if s.about]
    if len(analysis.parts) != 1 or len(sides) < 2:
        return analysis.parts
    whole = analysis.parts[0]
    kind = whole.answer_type if whole.answer_type != AnswerType.CHOICE else AnswerType.LIST
    return [
        QuestionPart(
            text=s.query,
            answer_type=kind,
            target=whole.target,
            constraints=[Constraint(kind="name", text=s.about)],
        )
        for s in sides
    ]


def assess(
    analysis: QuestionAnalysis, context: Context, plan: list[SubQuery], chunk_at: ChunkAt | None = None
) -> Assessment:
    units = context_units(context, chunk_at)
    bridges = _bridges(plan)
    selector = Selector(context, units, bridges)
    parts: list[PartAnswer] = []
    for part in _compared(analysis, plan):
        earlier = [p.short for p in parts if p.short]
        parts.append(_answer_part(part, selector, earlier))
    for p in parts:
        if p.answered:
            p.conflict = find_conflict(p.part, p.ranked, context)
    return Assessment(analysis, parts, _confidence(parts, context), units)
