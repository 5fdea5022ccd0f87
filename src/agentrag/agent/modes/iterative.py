"""`iterative`: corrective RAG. Grade; relax the cut once; ask the LLM about the borderline; rewrite and retry.

Every grade is against the user's question (its standalone search query), never against a rewrite or a
HyDE passage: a made-up passage matches whatever it made up, and would end the loop as answered.

If nothing passes after all that, the answer says so first and then shows the closest passages (the run
records that nothing was found), so the question is logged as something the knowledge base lacks.
"""

from __future__ import annotations

from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.types import Evidence, SubQuery
from agentrag.vocab import TraceStep


def answer(run: Run, steps: Steps) -> Draft:
    run.plan.subqueries = [SubQuery(query=run.search_query, intent="answer the question")]
    return answer_after(run, steps, steps.search(run, run.search_query, 1))


def answer_after(run: Run, steps: Steps, found: list[Evidence]) -> Draft:
    """Carry on from a first search that already ran."""
    run.plan.subqueries = [SubQuery(query=run.search_query, intent="answer the question")]
    if found and not any(e.grade == "correct" for e in found):
        steps.grade(run, run.search_query, found, steps.cut.relaxed())
        run.tracer.emit(
            TraceStep.GRADE,
            round=1,
            decision="relaxed cut",
            reason=f"{sum(e.grade == 'correct' for e in found)} correct after relaxing",
        )
    if not any(e.grade == "correct" for e in found):
        steps.grade_borderline(run, run.question, found)
    round_ = 1
    while not run.evidence.any_correct() and round_ < run.tracker.budget.max_rounds:
        round_ += 1
        queries = steps.rewrites(run)
        if not queries or not run.tracker.can_retrieve():
            break
        # generated text: what they find is graded against what the user asked
        found = [e for hits in steps.search_many(run, queries, round_, graded_against=run.search_query) for e in hits]
        if not run.evidence.any_correct():  # the pool's sightings: a passage seen before keeps its first object
            steps.grade_borderline(run, run.question, run.evidence.pooled(found))
    evidence = run.evidence.ranked()
    run.outcome.nothing_found = not any(e.grade == "correct" for e in evidence)
    return steps.synthesize(run, evidence)
