"""The state of answering one question, and the one place its stop reason is decided.

A `Run` holds what was asked, the budget and trace it runs under, and four kinds of state that the steps
fill in: the evidence pool, the plan, the routing decision, and the outcome. Modes never assign a stop
reason: they record what happened (`Outcome`), and `Outcome.stop_reason` derives it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agentrag.agent.budget import BudgetTracker
from agentrag.agent.context import Context
from agentrag.agent.evidence import EvidencePool
from agentrag.agent.question import QuestionAnalysis
from agentrag.agent.router import Cue
from agentrag.llm.tokens import TokenMeter
from agentrag.trace import Tracer
from agentrag.types import Conflict, Evidence, SubQuery, Usage
from agentrag.vocab import Confidence, Mode, StopReason, TraceStep


@dataclass
class Plan:
    """What the run searches for: the planned sub-queries, later follow-ups, and what stayed missing."""

    subqueries: list[SubQuery] = field(default_factory=list)
    followups: list[SubQuery] = field(default_factory=list)  # bridge searches of later rounds
    missing: list[str] = field(default_factory=list)  # said in the answer: "nothing in the knowledge base says ..."

    def all_queries(self) -> list[SubQuery]:
        return self.subqueries + self.followups


@dataclass
class Routing:
    mode: Mode = Mode.SINGLE
    reason: str = ""  # set when the router chose the mode (`auto`); empty for a mode the caller asked for
    cue: Cue = "bridge"  # why the question is complex; an explicit `--mode agent` assumes multi-hop

    @property
    def routed(self) -> bool:
        return self.reason != ""


@dataclass
class Outcome:
    """What happened, as facts; the stop reason is derived from them, most serious first."""

    error: str | None = None  # answering failed: the apology is the answer
    fell_back: bool = False  # an LLM role failed and its model-free stand-in wrote the result
    budget_spent: bool = False  # the agent loop stopped because a budget ran out
    nothing_found: bool = False  # the mode judged that no usable evidence was found

    @property
    def stop_reason(self) -> StopReason:
        if self.error is not None:
            return StopReason.ERROR
        if self.fell_back:
            return StopReason.FALLBACK
        if self.budget_spent:
            return StopReason.BUDGET
        if self.nothing_found:
            return StopReason.NO_EVIDENCE
        return StopReason.ANSWERED


@dataclass(frozen=True, slots=True)
class Draft:
    """What a mode produces before finishing: the text, and the passages it cites (None: nothing to check)."""

    text: str
    context: Context | None = None
    evidence: list[Evidence] = field(default_factory=list)
    short_answer: str | None = None
    confidence: Confidence = Confidence.LOW
    conflicts: list[Conflict] = field(default_factory=list)


@dataclass
class Run:
    question: str  # the user's words: what the answer answers
    search_query: str  # the standalone query searched (a follow-up resolved, filler stripped)
    history: str  # the conversation so far, within its share of the context budget
    user_facts: list[str]  # what the user said about themselves earlier: context, never evidence
    analysis: QuestionAnalysis  # what kind of answer the question wants, about what (question.py)
    tracer: Tracer
    tracker: BudgetTracker
    on_token: Callable[[str], None] | None = None
    evidence: EvidencePool = field(default_factory=EvidencePool)
    plan: Plan = field(default_factory=Plan)
    routing: Routing = field(default_factory=Routing)
    outcome: Outcome = field(default_factory=Outcome)
    vectors: dict[str, npt.NDArray[np.float32]] = field(default_factory=dict)  # query -> embedding, this run

    def fall_back(self, decision: str, reason: str, message: str) -> None:
        """An LLM role failed and its model-free stand-in takes over: recorded as a fact and a trace event."""
        self.outcome.fell_back = True
        self.tracer.emit(TraceStep.FALLBACK, decision=decision, reason=reason, message=message)

    @property
    def meter(self) -> TokenMeter:
        return self.tracker.meter

    @property
    def trace_id(self) -> str:
        return self.tracer.trace_id

    def usage(self) -> Usage:
        return Usage(
            llm_calls=self.meter.calls,
            retrieval_calls=self.tracker.retrieval_calls,
            prompt_tokens=self.meter.prompt_tokens,
            completion_tokens=self.meter.completion_tokens,
            ms=int(self.tracker.elapsed_s() * 1000),
        )
