"""Answering a question: start a run, answer in the chosen mode, finish; always a stop reason, never a crash.

    Assistant.ask
      Run (run.py)             the question, its budget and trace, the state the steps fill in
      modes.answer (modes/)    auto routes; direct | single | iterative | agent decide the steps (steps.py)
      Finisher (finish.py)     citation check, the Answer with its derived stop reason, the failure log

Failure never escapes: the agent model falls back to the fixed pipeline, the LLM synthesizer to the
extractive one (both inside the modes and roles); any other failure of a mode (a search, the embedder, the
store) to the fixed pipeline over the evidence found before it (`_answer`), and with nothing found to an
honest apology with the trace id.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentrag import telemetry
from agentrag.agent import modes
from agentrag.agent.budget import BudgetTracker, load_preset
from agentrag.agent.citations import CitationChecker
from agentrag.agent.finish import Finisher
from agentrag.agent.grader import GradeCut
from agentrag.agent.memory import Conversation, Turn
from agentrag.agent.question import analyze
from agentrag.agent.rewriter import strip_filler
from agentrag.agent.run import Draft, Run
from agentrag.agent.steps import Steps
from agentrag.agent.synthesizer import Synthesizer
from agentrag.errors import ConfigError, LLMError
from agentrag.failures import FailureLog
from agentrag.llm.tokens import ModelCall, TokenMeter
from agentrag.retrieve.hybrid import Retriever
from agentrag.trace import TraceEvent, Tracer
from agentrag.types import Answer, Chunk, chunk_id_for
from agentrag.vocab import Mode, Preset, TraceStep

if TYPE_CHECKING:
    from agentrag.llm.client import LLMClient

log = logging.getLogger(__name__)


def _chunk_at(retriever: Retriever, doc_id: str, position: int) -> Chunk | None:
    found = retriever.store.get_chunk_by_id(chunk_id_for(doc_id, position))
    return found[1] if found else None


def model_call_recorder(tracer: Tracer) -> Callable[[ModelCall], None]:
    """Each model call of the question as an `llm` event of its trace (the chat spans of `telemetry`)."""

    def record(call: ModelCall) -> None:
        tracer.emit(
            TraceStep.LLM,
            decision=call.role,
            reason=call.finish_reason or "",
            args={
                "model": call.model,
                "response_model": call.response_model,
                "endpoint": call.endpoint,
                "prompt_tokens": call.prompt_tokens,
                "completion_tokens": call.completion_tokens,
                "stream": call.stream,
                **({"error": call.error} if call.error else {}),
            },
            tokens=call.prompt_tokens + call.completion_tokens,
            ms=call.ms,
        )

    return record


def parse_mode(mode: str) -> Mode:
    try:
        return Mode(mode)
    except ValueError:
        raise ConfigError(f"mode: unknown mode {mode!r} (choose one of: {', '.join(Mode)})") from None


class Assistant:
    def __init__(
        self,
        retriever: Retriever,
        llm: LLMClient | None = None,
        *,
        kb_name: str = "default",
        trace_dir: Path | None = None,
        failures_path: Path | None = None,
        count_documents: Callable[[], int] | None = None,
        grade_cut: GradeCut | None = None,
    ) -> None:
        self.retriever = retriever
        self.llm = llm
        self.kb_name = kb_name
        telemetry.writer()  # a bad OTEL_* variable is named now, not after a question
        self.trace_dir = trace_dir
        self.steps = Steps(
            retriever,
            llm,
            cut=grade_cut or GradeCut(),
            synthesizer=Synthesizer(chunk_at=lambda doc_id, position: _chunk_at(retriever, doc_id, position)),
            kb_name=kb_name,
            count_documents=count_documents or (lambda: 0),
        )
        self.finisher = Finisher(
            CitationChecker(retriever.embedder), FailureLog(failures_path) if failures_path else None, kb_name
        )

    def ask(
        self,
        question: str,
        mode: Mode | str = Mode.AUTO,
        preset: Preset | str = Preset.BALANCED,
        budget_overrides: dict[str, Any] | None = None,
        conversation: Conversation | None = None,
        on_event: Callable[[TraceEvent], None] | None = None,
        on_token: Callable[[str], None] | None = None,
        user_facts: list[str] | None = None,
    ) -> Answer:
        chosen = parse_mode(mode)
        if not question.strip():
            raise ConfigError("question: empty question")
        run = self._start(question, preset, budget_overrides, conversation, on_event, on_token, user_facts)
        try:
            if conversation is not None and conversation.turns:
                run.search_query = self.steps.standalone(run, conversation)
            else:
                run.search_query = strip_filler(run.question)
            answer = self.finisher.finish(run, self._answer(chosen, run))
        except Exception as exc:  # the last line of defence: an honest apology, never a crash
            log.exception("answering failed")
            run.tracer.emit(TraceStep.ERROR, decision="apology", reason=f"{type(exc).__name__}: {exc}")
            answer = self.finisher.apology(run, exc)
        if conversation is not None:  # inside the run: a summary's LLM call is this question's
            turn = Turn(question=question, answer=answer.answer, standalone=answer.search_query)
            self.steps.remember(run, conversation, turn)
        answer.usage = run.usage()
        run.tracer.emit(
            TraceStep.DONE,
            decision=answer.stop_reason,
            reason=answer.route_reason,
            message="done",
            args={"mode": answer.mode, "citations": len(answer.citations), "unsupported": len(answer.unsupported)},
            tokens=run.meter.total,
            ms=answer.usage.ms,
        )
        self.finisher.record_failure(run, answer)
        telemetry.export(run.tracer.events, self.kb_name)
        return answer

    def _answer(self, mode: Mode, run: Run) -> Draft:
        """The mode's draft; if the mode fails (a search, the embedder, the store...), the fixed pipeline
        answers from the evidence found before the failure. With nothing found, the failure propagates to
        the apology."""
        try:
            return modes.answer(mode, run, self.steps)
        except Exception as exc:
            if not run.evidence:
                raise
            log.warning("%s mode failed, answering from what was found: %s", run.routing.mode, exc, exc_info=True)
            run.fall_back(
                "fixed pipeline",
                f"{run.routing.mode} mode failed: {type(exc).__name__}: {exc}",
                "something failed: answering from what was found",
            )
            # The LLM may still write the answer unless it is what failed.
            return self.steps.synthesize(run, run.evidence.ranked(), use_llm=not isinstance(exc, LLMError))

    def _start(
        self,
        question: str,
        preset: str,
        budget_overrides: dict[str, Any] | None,
        conversation: Conversation | None,
        on_event: Callable[[TraceEvent], None] | None,
        on_token: Callable[[str], None] | None,
        user_facts: list[str] | None,
    ) -> Run:
        tracer = Tracer(directory=self.trace_dir)
        tracker = BudgetTracker(load_preset(preset, budget_overrides), TokenMeter(on_call=model_call_recorder(tracer)))
        if on_event is not None:
            tracer.subscribe(on_event)
        budget = tracker.budget
        history = (
            conversation.history_text(int(budget.context_tokens * budget.context_split.history)) if conversation else ""
        )
        run = Run(
            question=question.strip(),
            search_query=question.strip(),
            history=history,
            user_facts=list(user_facts or []),
            analysis=analyze(question.strip()),
            tracer=tracer,
            tracker=tracker,
            on_token=on_token,
        )
        if run.user_facts:
            tracer.emit(
                TraceStep.MEMORY,
                decision=f"{len(run.user_facts)} facts about the user",
                reason="long-term memory",
                message="remembering what you told me",
                args={"facts": run.user_facts},
            )
        return run
