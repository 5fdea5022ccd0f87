"""The steps every mode composes: search, grade, plan, rewrite, synthesize.

Each step spends from the run's budget (the LLM only while `can_call_llm` leaves the calls it must keep
back), updates the run's state, and records one trace event saying what it decided and why. The roles
behind them (planner, grader, rewriter, synthesizer) choose between their LLM and model-free versions
themselves (`roles.llm_or_rules`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from agentrag.agent import planner, rewriter
from agentrag.agent.budget import StepTimeout
from agentrag.agent.definition import passage_defines
from agentrag.agent.grader import GradeCut, grade_borderline, grade_by_score
from agentrag.agent.memory import Conversation, Turn
from agentrag.agent.question import QuestionPart
from agentrag.agent.roles import LLMCall
from agentrag.agent.run import Draft, Run
from agentrag.agent.synthesizer import Synthesizer
from agentrag.agent.units import ChunkAt
from agentrag.errors import AgentragError
from agentrag.retrieve.hybrid import Retriever
from agentrag.types import Evidence, Hit, SubQuery
from agentrag.vocab import AnswerType, TraceStep

if TYPE_CHECKING:
    from agentrag.llm.client import LLMClient

RETRIEVE_K = 20  # hits per search; the evidence handed on is ranked over all of them
LOOKUP_K = 60  # hits of the search for a subject's definition (`look_up_definitions`), of which one is kept
BORDERLINE_K = 8  # passages the LLM grader looks at


class Steps:
    def __init__(
        self,
        retriever: Retriever,
        llm: LLMClient | None,
        *,
        cut: GradeCut,
        synthesizer: Synthesizer,
        kb_name: str,
        count_documents: Callable[[], int],
    ) -> None:
        self.retriever = retriever
        self.llm = llm
        self.cut = cut
        self.synthesizer = synthesizer
        self.kb_name = kb_name
        self.count_documents = count_documents

    # ------------------------------------------------------------------------------------------ the LLM

    def llm_client(self, run: Run, reserve: int = 1) -> LLMClient | None:
        """The LLM, if one is configured and the budget allows one more call beyond `reserve`."""
        if self.llm is not None and run.tracker.can_call_llm(reserve=reserve):
            return self.llm
        return None

    def llm_call(self, run: Run, reserve: int = 1) -> LLMCall | None:
        """One role call's worth of LLM, or None (then the role's rules decide)."""
        client = self.llm_client(run, reserve)
        return LLMCall(client, run.tracker.llm_timeout(), run.meter) if client is not None else None

    # ------------------------------------------------------------------------------------------ retrieval

    def embed(self, run: Run, query: str) -> npt.NDArray[np.float32]:
        if query not in run.vectors:
            run.vectors[query] = self.retriever.embed_query(query)
        return run.vectors[query]

    def grade(self, run: Run, query: str, found: list[Evidence], cut: GradeCut | None = None) -> None:
        """Grade by score (in place) against the query that found the passages."""
        if not found:
            return
        vectors = self.retriever.store.get_vectors([e.hit.key for e in found])
        if len(vectors) == len(found):
            grade_by_score(query, self.embed(run, query), found, vectors, cut or self.cut)

    def search(self, run: Run, query: str, round_: int, graded_against: str | None = None) -> list[Evidence]:
        """One retrieval call: graded evidence added to the pool (nothing when the budget is spent)."""
        return self.search_many(run, [query], round_, graded_against)[0]

    def search_many(
        self,
        run: Run,
        queries: list[str],
        round_: int,
        graded_against: str | None = None,
        keep: Callable[[Hit], bool] | None = None,
        depth: int = RETRIEVE_K,
    ) -> list[list[Evidence]]:
        """Independent retrieval calls, side by side (`parallel_searches` at most), each with its query
        embedding under the tool timeout; graded evidence per query (empty past the retrieval budget).

        Passages are graded against `graded_against` (the question or planned sub-query a generated query
        serves: a rewrite, a HyDE passage), else against the query itself. A made-up passage matches what
        it made up, so grading against it would pass whatever it found.

        Only the embedding and the search run in worker threads: grading, merging into the pool and the
        trace happen here, in the order given, so the evidence and its order are those of searching one
        query after another. A search that fails or times out raises after the others are merged, so the
        caller's fallback answers from everything that was found. `keep`: only the hits it keeps (of `depth`) are
        graded and pooled."""
        allowed: list[str] = []
        for query in queries:  # the budget decides up front, in order, which queries are searched
            if not run.tracker.can_retrieve():
                break
            run.tracker.spend_retrieval()
            allowed.append(query)
        results: list[list[Evidence]] = [[] for _ in queries]
        if not allowed:
            return results
        workers = min(run.tracker.budget.parallel_searches, len(allowed))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="agentrag-search")
        futures = [pool.submit(self._retrieve, query, run.vectors.get(query), depth) for query in allowed]
        pool.shutdown(wait=False)  # a stalled search is abandoned to its thread, never waited for
        failure: Exception | None = None
        for i, (query, future) in enumerate(zip(allowed, futures, strict=True)):
            limit = run.tracker.tool_timeout()
            try:
                vector, hits, ms = future.result(timeout=limit)
            except FutureTimeout:
                failure = failure or StepTimeout(f"search {query!r} timed out after {limit:g}s (tool_timeout_s)")
                continue
            except Exception as exc:  # raised below, once every search that worked is in the pool
                failure = failure or exc
                continue
            run.vectors[query] = vector
            kept = hits if keep is None else [hit for hit in hits if keep(hit)]
            results[i] = self._record(run, query, kept, round_, ms, graded_against)
        if failure is not None:
            raise failure
        return results

    def _retrieve(
        self, query: str, vector: npt.NDArray[np.float32] | None, depth: int = RETRIEVE_K
    ) -> tuple[npt.NDArray[np.float32], list[Hit], float]:
        """In a worker thread: the query's embedding (unless known) and its hits, and how long they took."""
        started = time.perf_counter()
        if vector is None:
            vector = self.retriever.embed_query(query)
        hits = self.retriever.search(query, depth, query_vector=vector)
        return vector, hits, (time.perf_counter() - started) * 1000

    def _record(
        self, run: Run, query: str, hits: list[Hit], round_: int, ms: float, graded_against: str | None
    ) -> list[Evidence]:
        found = self.absorb(run, hits, query, round_, graded_against)
        counts = {g: sum(1 for e in found if e.grade == g) for g in ("correct", "ambiguous", "incorrect")}
        run.tracer.emit(
            TraceStep.SEARCH,
            round=round_,
            decision=f"{len(found)} hits",
            reason=f"graded {counts}",
            message=f"searching, round {round_}: {query}",
            args={"query": query, "hits": len(found)},
            preview=" | ".join(e.chunk.title for e in found[:5]),
            ms=ms,
        )
        return found

    def absorb(
        self, run: Run, hits: list[Hit], query: str, round_: int, graded_against: str | None = None
    ) -> list[Evidence]:
        """Hits of a search (ours or the agent model's tool call), graded and merged into the pool."""
        found = [Evidence(hit=h, found_by=query, round=round_) for h in hits]
        self.grade(run, graded_against or query, found)
        run.evidence.absorb(found)
        return found

    def read_chunk(self, chunk_id: str) -> Hit | None:
        found = self.retriever.store.get_chunk_by_id(chunk_id)
        if found is None:
            return None
        key, chunk = found
        return Hit(chunk=chunk, score=0.0, rank=1, key=key)

    # ------------------------------------------------------------------------------------------ roles

    def grade_borderline(self, run: Run, question: str, evidence: list[Evidence]) -> None:
        """The LLM's judgement on the passages the score cut left ambiguous, when there are any."""
        head = evidence[:BORDERLINE_K]
        call = self.llm_call(run, reserve=1)
        if call is None or not any(e.grade == "ambiguous" for e in head):
            return
        started = time.perf_counter()
        decided = grade_borderline(question, head, call)
        graded = decided.by == "llm"
        run.tracer.emit(
            TraceStep.GRADE,
            decision="llm" if graded else "kept score grades",
            reason="borderline passages sent to the LLM" if graded else "LLM grading failed",
            message="checking borderline passages",
            ms=(time.perf_counter() - started) * 1000,
        )

    def plan(self, run: Run) -> list[SubQuery]:
        decided = planner.plan(run.search_query, self.llm_call(run, reserve=2), run.tracker.budget.max_subqueries)
        by = "llm" if decided.by == "llm" else "rules (LLM plan failed)" if decided.llm_failed else "rules"
        run.tracer.emit(
            TraceStep.PLAN,
            decision=f"{len(decided.value)} sub-queries",
            reason=f"planned by {by}",
            message="planning: " + "; ".join(s.query for s in decided.value),
            args={"subqueries": [s.model_dump() for s in decided.value]},
        )
        return decided.value

    def rewrites(self, run: Run) -> list[str]:
        """New queries after a search that found nothing good (never one already tried)."""
        tried = run.evidence.queries() | {run.search_query}
        decided = rewriter.expand(run.search_query, self.llm_call(run, reserve=1))
        queries = [q for q in decided.value if q not in tried][:3]
        run.tracer.emit(
            TraceStep.REWRITE,
            decision=f"{len(queries)} new queries",
            reason="no passage passed the grader",
            message="rewriting the query",
            args={"queries": queries},
        )
        return queries

    def standalone(self, run: Run, conversation: Conversation) -> str:
        """The follow-up question as a standalone search query."""
        decided = rewriter.standalone(
            run.question, run.history, conversation.previous_questions(), self.llm_call(run, reserve=2)
        )
        run.tracer.emit(
            TraceStep.REWRITE,
            decision="standalone",
            reason=f"follow-up resolved by {decided.by}",
            message=f"rewriting the follow-up: {decided.value}",
            args={"query": decided.value},
        )
        return decided.value

    def remember(self, run: Run, conversation: Conversation, turn: Turn) -> None:
        """The answered turn into the conversation. Folding older turns into the summary is part of this
        question: the LLM writes it only while the budget allows a call (else the rules do), its tokens go
        on the question's meter, and the trace says which did and why."""
        folding = conversation.folds_next()
        call = self.llm_call(run, reserve=0) if folding else None
        before, started = run.meter.total, time.perf_counter()
        decided = conversation.add(turn, call)
        if decided is None:
            return
        if decided.by == "llm":
            reason = "older turns summarised by the LLM"
        elif self.llm is not None and call is None:
            reason = f"budget spent ({run.tracker.exhausted() or 'calls kept back'}): folded by rules"
        else:
            reason = f"folded by rules ({decided.failure or 'model-free'})"
        run.tracer.emit(
            TraceStep.MEMORY,
            decision="summarised" if decided.by == "llm" else "folded",
            reason=reason,
            message="updating the conversation summary",
            tokens=run.meter.total - before,
            ms=(time.perf_counter() - started) * 1000,
        )

    def synthesize(self, run: Run, evidence: list[Evidence], use_llm: bool = True) -> Draft:
        evidence = self.look_up_definitions(run, evidence)
        return self.synthesizer.draft(run, evidence, self.llm_client(run, reserve=0) if use_llm else None)

    def look_up_definitions(self, run: Run, evidence: list[Evidence]) -> list[Evidence]:
        """The evidence, and for a definition question of a named subject that none of it defines ("E5003 是什么？"
        against an English error table that ranks 30th for it), a passage that does from one search for the subject
        alone: only such a passage is pooled (the rest of that search would reorder the evidence)."""
        chunk_at = self.synthesizer.chunk_at
        missing = [
            part
            for part in run.analysis.parts
            if part.answer_type == AnswerType.DEFINITION
            and part.constraints
            and not any(passage_defines(part, e.chunk, chunk_at) for e in evidence)
        ]
        if not evidence or not missing:
            return evidence
        round_ = 1 + max(e.round for e in evidence)
        found: list[Evidence] = []
        for part in missing:
            subject = " ".join(c.text for c in part.constraints)
            defines = partial(_defines, part, chunk_at)
            try:
                searched = self.search_many(run, [subject], round_, run.question, keep=defines, depth=LOOKUP_K)
            except AgentragError as exc:  # the answer stands on the evidence found before
                run.fall_back("the evidence found", f"definition lookup failed: {exc}", "answering without it")
                break
            found += searched[0][:1]
        return [*evidence, *run.evidence.pooled(found)]


def _defines(part: QuestionPart, chunk_at: ChunkAt | None, hit: Hit) -> bool:
    return passage_defines(part, hit.chunk, chunk_at)
