"""`auto`: the router decides, before any expensive step, which mode the question deserves."""

from __future__ import annotations

from agentrag.agent import modes
from agentrag.agent.router import Kind, route
from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.vocab import Mode, TraceStep

MODE_FOR: dict[Kind, Mode] = {"none": Mode.DIRECT, "simple": Mode.SINGLE, "complex": Mode.AGENT}


def answer(run: Run, steps: Steps) -> Draft:
    decided = route(run.search_query, steps.llm_call(run, reserve=2))
    mode = MODE_FOR[decided.kind]
    run.routing.reason = f"{decided.kind}: {decided.reason}"
    run.routing.cue = decided.cue
    run.tracer.emit(
        TraceStep.ROUTE,
        decision=mode,
        reason=decided.reason,
        message=f"routing: {mode} ({decided.reason})",
        args={"kind": decided.kind, "by": decided.by},
    )
    return modes.answer(mode, run, steps)
