"""Finishing a run: the citation check, the `Answer`, the apology when answering failed, the failure log.

Synthesis writes text; finishing decides what of it the user may trust. Every `[n]` of a draft with context
is checked against the passage it cites (citations.py); the stop reason comes from the run's outcome.
"""

from __future__ import annotations

from agentrag.agent.citations import CitationChecker
from agentrag.agent.run import Draft, Run
from agentrag.errors import AgentragError
from agentrag.failures import Failure, FailureLog
from agentrag.text.tokenize import has_cjk
from agentrag.types import Answer, Citation, Evidence
from agentrag.vocab import StopReason, TraceStep


class Finisher:
    def __init__(self, checker: CitationChecker, failures: FailureLog | None, kb_name: str) -> None:
        self.checker = checker
        self.failures = failures
        self.kb_name = kb_name

    def finish(self, run: Run, draft: Draft) -> Answer:
        text = draft.text
        citations: list[Citation] = []
        unsupported: list[str] = []
        if draft.context is not None:
            checked = self.checker.check(text, draft.context.chunks)
            text, citations, unsupported = checked.text, checked.citations, checked.unsupported
            run.tracer.emit(
                TraceStep.CITE,
                decision=f"{len(citations)} citations",
                reason=f"{len(unsupported)} unsupported",
                args={"unsupported": unsupported},
            )
        answer = self._answer(run, text, citations, unsupported, draft.evidence, run.search_query)
        answer.short_answer, answer.confidence, answer.conflicts = draft.short_answer, draft.confidence, draft.conflicts
        return answer

    def apology(self, run: Run, exc: Exception) -> Answer:
        """The honest answer when answering itself failed: what went wrong, and the trace id to look it up."""
        detail = str(exc) if isinstance(exc, AgentragError) else type(exc).__name__
        run.outcome.error = detail
        text = (
            f"抱歉，这个问题没能回答成功（{detail}）。追踪编号：{run.trace_id}。"
            if has_cjk(run.question)
            else f"Sorry, I could not answer this question ({detail}). Trace id: {run.trace_id}."
        )
        return self._answer(run, text, [], [], [], search_query="")

    @staticmethod
    def _answer(
        run: Run,
        text: str,
        citations: list[Citation],
        unsupported: list[str],
        evidence: list[Evidence],
        search_query: str,
    ) -> Answer:
        return Answer(
            answer=text,
            citations=citations,
            mode=run.routing.mode.value,
            stop_reason=run.outcome.stop_reason,
            unsupported=unsupported,
            trace_id=run.trace_id,
            evidence=evidence,
            route_reason=run.routing.reason,
            search_query=search_query,
        )

    def record_failure(self, run: Run, answer: Answer) -> None:
        """Questions that ended without a full answer, kept for review: what the knowledge base lacks."""
        if self.failures is None or answer.stop_reason == StopReason.ANSWERED:
            return
        self.failures.record(
            Failure(
                kb=self.kb_name,
                trace_id=answer.trace_id,
                stop_reason=answer.stop_reason,
                mode=answer.mode,
                question=run.question,
                search_query=run.search_query,
                answer=answer.answer[:300],
            )
        )
