"""`single`: retrieve once, answer. When the router chose it and the search was weak, it escalates to
`iterative` (corrective retrieval) instead of answering from weak passages."""

from __future__ import annotations

from agentrag.agent.modes import iterative
from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.types import SubQuery
from agentrag.vocab import Mode, TraceStep


def answer(run: Run, steps: Steps) -> Draft:
    run.plan.subqueries = [SubQuery(query=run.search_query, intent="answer the question")]
    found = steps.search(run, run.search_query, 1)
    if run.routing.routed and not any(e.grade == "correct" for e in found[:5]):
        run.tracer.emit(
            TraceStep.ROUTE,
            decision=Mode.ITERATIVE,
            reason="no passage passed the grader on the first search",
            message="first search was weak: trying harder",
        )
        run.routing.mode = Mode.ITERATIVE
        return iterative.answer_after(run, steps, found)
    evidence = run.evidence.ranked()
    run.outcome.nothing_found = not evidence
    return steps.synthesize(run, evidence)
