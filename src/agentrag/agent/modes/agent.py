"""`agent`: plan sub-queries, search each, then follow up.

With an LLM, the agent model runs a tool loop (loop.py) over what the plan found; if the model fails, the
fixed pipeline answers from whatever was found. Model-free, the rules plan (comparisons split into one
search per side) and bridge entities named by the best passages become the next round's searches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentrag.agent import planner
from agentrag.agent.loop import ToolLoop
from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.errors import LLMError
from agentrag.vocab import TraceStep

if TYPE_CHECKING:
    from agentrag.llm.client import LLMClient

BRIDGES_PER_ROUND = 3


def answer(run: Run, steps: Steps) -> Draft:
    llm = steps.llm_client(run, reserve=2)
    if llm is None:
        return _model_free(run, steps)
    try:
        return _with_llm(run, steps, llm)
    except LLMError as exc:  # the agent model failed mid-loop: the fixed pipeline answers from what was found
        run.fall_back("fixed pipeline", f"agent failed: {exc}", "the model failed; answering with the fixed pipeline")
        if not run.evidence:
            steps.search(run, run.search_query, 1)
        return steps.synthesize(run, run.evidence.ranked(), use_llm=False)


def _search_plan(run: Run, steps: Steps) -> None:
    run.plan.subqueries = steps.plan(run)
    steps.search_many(run, [sub.query for sub in run.plan.subqueries], 1)  # independent: side by side


def _with_llm(run: Run, steps: Steps, llm: LLMClient) -> Draft:
    _search_plan(run, steps)
    steps.grade_borderline(run, run.question, run.evidence.ranked())
    loop = ToolLoop(run, steps, llm)
    try:
        while loop.step():
            pass
    finally:
        loop.close()
    return steps.synthesize(run, run.evidence.ranked())


def _model_free(run: Run, steps: Steps) -> Draft:
    """Plan by rules, search each sub-query, then follow bridge entities from the best passages."""
    _search_plan(run, steps)
    round_ = 1
    follow_bridges = run.routing.cue in ("bridge", "entities", "")
    while follow_bridges and round_ < run.tracker.budget.max_rounds and run.tracker.can_retrieve():
        round_ += 1
        bridges = planner.bridge_queries(run.search_query, run.evidence.ranked(), limit=BRIDGES_PER_ROUND)
        bridges = [b for b in bridges if b.query not in run.evidence.queries()]
        run.tracer.emit(
            TraceStep.SUFFICIENCY,
            round=round_,
            decision=f"{len(bridges)} bridge queries",
            reason="following entities named by the best passages",
            message=f"following up, round {round_}: " + "; ".join(b.query for b in bridges),
            args={"queries": [b.query for b in bridges]},
        )
        if not bridges:
            break
        steps.search_many(run, [b.query for b in bridges], round_)
        run.plan.followups.extend(bridges)
        if len(run.plan.subqueries) > 1:
            break  # comparisons: one follow-up round is enough
    evidence = run.evidence.ranked()
    subqueries = run.plan.subqueries
    run.plan.missing = [
        s.query
        for s in subqueries
        if len(subqueries) > 1 and not any(e.found_by == s.query and e.grade != "incorrect" for e in evidence)
    ]
    run.outcome.nothing_found = not evidence
    return steps.synthesize(run, evidence)
